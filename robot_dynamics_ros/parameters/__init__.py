"""Base inertial parameters (numeric QR and Gautier-Khalil closed form) and identification."""
from .base import BaseParameters
from .base_closed_form import closed_form_base_parameters
from .base_numeric import numeric_base_parameters

__all__ = ['BaseParameters', 'numeric_base_parameters', 'closed_form_base_parameters']
