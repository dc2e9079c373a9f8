"""Rigid-body dynamics for ROS 2: URDF tree model, inverse and forward dynamics, controller and simulator."""
from .fast import aba, bias_torques, crba, gravity_torques, rnea  # compiled when numba imports, else plain Python
from .algorithms import (SingularTaskError, forward_dynamics_udut, frame_jacobian, frame_placement,
                         frame_placements, kinetic_energy, mass_matrix_inverse, mass_matrix_log_det,
                         operational_space_inertia, potential_energy, udut)
from .errors import RobotDynamicsError, SingularMassMatrixError, URDFError, URDFWarning
from .model import Model, difference, integrate, load_urdf, neutral, normalize, random_configuration
from .model.mdh import MDHError

__all__ = ['load_urdf', 'Model', 'integrate', 'difference', 'neutral', 'random_configuration', 'normalize', 'RobotDynamicsError', 'URDFError', 'URDFWarning', 'SingularMassMatrixError',
           'MDHError', 'SingularTaskError',
           'rnea', 'gravity_torques', 'bias_torques', 'crba', 'aba',
           'udut', 'forward_dynamics_udut', 'mass_matrix_inverse', 'mass_matrix_log_det',
           'operational_space_inertia', 'frame_placements', 'frame_placement',
           'frame_jacobian', 'kinetic_energy', 'potential_energy']
