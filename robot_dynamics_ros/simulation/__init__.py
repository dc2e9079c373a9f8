"""The stand-in robot (no ROS import): ``Simulator`` (simulator.py) steps forward dynamics with joint friction and
stops (joint_friction.py) and, for a floating base, ground contact (ground_contact.py, solved on a certified
pattern by contact_active_set.py; needs the 'legged' extra)."""
from .simulator import INTEGRATORS, TIMEOUT_BEHAVIOURS, SimulationDiverged, Simulator

__all__ = ['Simulator', 'SimulationDiverged', 'INTEGRATORS', 'TIMEOUT_BEHAVIOURS']
