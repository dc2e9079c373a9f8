"""The robot in the browser (viser, the ``view`` extra): ``geometry`` reads what the URDF looks like, ``scene``
draws it placed by our forward kinematics; ``robot-dynamics view`` and the ``viewer`` node use them."""
from ..errors import RobotDynamicsError


def require():
    """The modules (viser, trimesh), or RobotDynamicsError saying which extra to install."""
    try:
        import trimesh
        import viser
    except ImportError as e:
        raise RobotDynamicsError(f"the 3D view needs the Python package {e.name or str(e)!r}: "
                                 "pip install 'robot_dynamics_ros[view]'") from None
    return viser, trimesh
