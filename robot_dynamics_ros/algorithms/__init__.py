from .aba import aba
from .centroidal import center_of_mass, center_of_mass_jacobian, centroidal_momentum, centroidal_momentum_matrix
from .crba import crba
from .energy import kinetic_energy, potential_energy
from .joint_wrenches import joint_wrenches
from .kinematics import frame_jacobian, frame_placement, frame_placements
from .operational_space import SingularTaskError, operational_space_inertia
from .operators import mass_matrix_inverse, mass_matrix_log_det
from .regressor import parameter_names, regressor, standard_parameters
from .rnea import bias_torques, gravity_torques, rnea
from .udut import forward_dynamics_udut, udut

__all__ = ['rnea', 'gravity_torques', 'bias_torques', 'crba', 'aba',
           'udut', 'forward_dynamics_udut', 'mass_matrix_inverse', 'mass_matrix_log_det',
           'operational_space_inertia', 'SingularTaskError', 'frame_placements', 'frame_placement',
           'frame_jacobian', 'kinetic_energy', 'potential_energy', 'joint_wrenches',
           'regressor', 'standard_parameters', 'parameter_names',
           'center_of_mass', 'center_of_mass_jacobian', 'centroidal_momentum', 'centroidal_momentum_matrix']
