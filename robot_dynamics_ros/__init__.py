"""Rigid-body dynamics for ROS 2: URDF tree model, inverse and forward dynamics, controller and simulator.

The names below load on first use (PEP 562), so that importing a part of the package (a node's entry point,
the command line) does not first import numpy, scipy and the compiled kernels.
"""
import importlib
from typing import TYPE_CHECKING

# exported name -> module that defines it
_EXPORTS = {
    **dict.fromkeys(['aba', 'bias_torques', 'crba', 'gravity_torques', 'rnea'], 'fast'),  # compiled if numba imports
    **dict.fromkeys(['SingularTaskError', 'forward_dynamics_udut', 'frame_jacobian', 'frame_placement',
                     'frame_placements', 'kinetic_energy', 'mass_matrix_inverse', 'mass_matrix_log_det',
                     'operational_space_inertia', 'potential_energy', 'udut'], 'algorithms'),
    **dict.fromkeys(['RobotDynamicsError', 'SingularMassMatrixError', 'SRDFError', 'URDFError', 'URDFWarning'],
                    'errors'),
    **dict.fromkeys(['Model', 'difference', 'integrate', 'load_urdf', 'neutral', 'normalize',
                     'random_configuration'], 'model'),
    'MDHError': 'model.mdh',
    'load_srdf': 'model.srdf',
}

__all__ = ['load_urdf', 'load_srdf', 'Model', 'integrate', 'difference', 'neutral', 'random_configuration', 'normalize',
           'RobotDynamicsError', 'URDFError', 'SRDFError', 'URDFWarning', 'SingularMassMatrixError',
           'MDHError', 'SingularTaskError',
           'rnea', 'gravity_torques', 'bias_torques', 'crba', 'aba',
           'udut', 'forward_dynamics_udut', 'mass_matrix_inverse', 'mass_matrix_log_det',
           'operational_space_inertia', 'frame_placements', 'frame_placement',
           'frame_jacobian', 'kinetic_energy', 'potential_energy']

if TYPE_CHECKING:
    from .algorithms import (SingularTaskError, forward_dynamics_udut, frame_jacobian, frame_placement,
                             frame_placements, kinetic_energy, mass_matrix_inverse, mass_matrix_log_det,
                             operational_space_inertia, potential_energy, udut)
    from .errors import RobotDynamicsError, SingularMassMatrixError, SRDFError, URDFError, URDFWarning
    from .fast import aba, bias_torques, crba, gravity_torques, rnea
    from .model import Model, difference, integrate, load_urdf, neutral, normalize, random_configuration
    from .model.mdh import MDHError
    from .model.srdf import load_srdf


def __getattr__(name):
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f'{__name__}.{_EXPORTS[name]}'), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(__all__))
