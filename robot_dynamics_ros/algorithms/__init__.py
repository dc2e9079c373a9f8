from .aba import aba
from .crba import crba
from .rnea import bias_torques, gravity_torques, rnea

__all__ = ['rnea', 'gravity_torques', 'bias_torques', 'crba', 'aba']
