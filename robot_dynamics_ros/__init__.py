"""Rigid-body dynamics for ROS 2: URDF tree model, inverse and forward dynamics, controller and simulator."""
from .algorithms import aba, bias_torques, crba, gravity_torques, rnea
from .model import Model, URDFError, load_urdf

__all__ = ['load_urdf', 'Model', 'URDFError', 'rnea', 'gravity_torques', 'bias_torques', 'crba', 'aba']
