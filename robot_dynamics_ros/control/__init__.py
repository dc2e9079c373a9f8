"""Control laws (no ROS import): computed torque (computed_torque.py), joint references (references.py) kept within
the limits by the governor (governor.py), joint states by name (joint_states.py); Cartesian impedance and
operational-space control (cartesian.py); contact-consistent inverse dynamics (contact_inverse_dynamics.py) and the
standing controller of a legged robot (standing.py) and its trot on a velocity command (gait.py)."""
from .computed_torque import CONTROL_MODES, ComputedTorqueController, ControlStep, check_gains
from .governor import ReferenceGovernor, model_acceleration_limits
from .joint_states import JointStateMapper
from .references import TrajectoryReference, sinusoid_reference

__all__ = ['CONTROL_MODES', 'ComputedTorqueController', 'ControlStep', 'check_gains', 'ReferenceGovernor',
           'model_acceleration_limits', 'JointStateMapper', 'TrajectoryReference', 'sinusoid_reference']
