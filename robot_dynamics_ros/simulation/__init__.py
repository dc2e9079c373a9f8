"""The stand-in robot (no ROS import): ``Simulator`` (simulator.py) steps forward dynamics with joint friction and
stops (joint_friction.py) and, for a floating base, ground contact (ground_contact.py; needs the 'legged' extra). The
contact step runs as stages over one data object (step_data.py): contact kinematics and rows (contact_rows.py), the
Delassus matrix (delassus.py), the solve on a certified pattern (contact_active_set.py) and the fixed point over
such patterns (pattern_fixed_point.py), the rows' solve (row_solve.py), integration (integrate_step.py), all in one
compiled call (contact_step.py); roles.py holds the role codes the joint and contact solvers share."""
from .simulator import INTEGRATORS, TIMEOUT_BEHAVIOURS, SimulationDiverged, Simulator

__all__ = ['Simulator', 'SimulationDiverged', 'INTEGRATORS', 'TIMEOUT_BEHAVIOURS']
