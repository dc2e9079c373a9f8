"""The scene a simulator node runs, without ROS: the Simulator for a model, its initial posture, its ground and
force/torque sensors, from the node's settings (named as its parameters).

The initial joint positions are `initial_positions` where given, else the SRDF's stance, else the middle of the
joint limits. A floating robot takes the stance's base pose where the SRDF gives one, lowered onto the ground, or
`initial_base_pose`, or else spawns upright with its lowest contact point on the ground. A floating robot that
spawns resting on a link that is not a foot (the SRDF's end effectors, else the leaf links) is warned about. One
zero-effort step from the spawn pose gives the contact forces of the robot at rest, then the simulator is reset.
"""
from dataclasses import dataclass, field

import numpy as np

from ..errors import RobotDynamicsError
from ..model.collision import contact_points_from_urdf, leaf_links
from ..model.model import FREE_FLYER
from ..model.srdf import SRDFError, stance_configuration
from .force_torque import ForceTorqueSensors
from .simulator import Simulator

RESTING = 1e-3   # m: a contact point this close to the ground at spawn rests on it


class SceneError(ValueError):
    """A model the settings cannot run, with the reason."""


@dataclass
class SceneSettings:
    """The simulator node's parameters that shape its scene (see nodes/simulator.py for each)."""
    rate: float = 1000.0
    integrator: str = 'semi_implicit_euler'
    gravity: np.ndarray | None = None            # None: standard gravity
    initial_positions: np.ndarray | None = None  # model joint order; None: the stance, else mid-limits
    initial_base_pose: np.ndarray | None = None  # x y z qx qy qz qw, floating root only
    apply_damping: bool = True
    apply_friction: bool = True
    limit_velocity: bool = True
    command_timeout: float | None = None
    on_command_timeout: str = 'brake'
    ground: str = 'auto'                          # 'auto' (a moving root), 'on' or 'off'
    ground_height: float = 0.0
    ground_friction: float = 0.8
    contact_points: list | None = None            # ContactPoints; None: from the URDF's <collision> geometry
    ft_sensors: list = field(default_factory=list)


@dataclass
class Scene:
    sim: Simulator
    ft_sensors: ForceTorqueSensors | None
    resting_forces: np.ndarray   # the contact forces of the robot at rest at spawn
    notes: list                  # what the node logs at info level
    warnings: list               # and at warning level


def build_scene(model, urdf, settings: SceneSettings, srdf=None) -> Scene:
    """The Scene of ``model`` (its URDF XML ``urdf``, its SRDF ``srdf`` or None), or SceneError."""
    notes, warnings = [], []
    try:
        posture = None if srdf is None else stance_configuration(model, srdf)
    except SRDFError as e:
        raise SceneError(str(e)) from None
    initial = settings.initial_positions
    if initial is None and posture is not None:
        notes.append(f"initial posture: the SRDF's group_state {posture[0]!r}")
        initial = posture[1][model.joint_q_index]
    elif initial is None:
        initial = model.middle_of_limits()[model.joint_q_index]
    srdf_pose = (posture is not None and posture[2] and model.joint_type[0] == FREE_FLYER
                 and settings.initial_base_pose is None)   # the stance's base pose, lowered onto the ground below
    try:
        ground = _ground(model, urdf, settings)
        configuration = (np.concatenate([posture[1][:7], initial]) if srdf_pose
                         else _initial_configuration(model, initial, settings.initial_base_pose))
        sim = Simulator(model, 1.0 / settings.rate, integrator=settings.integrator, gravity=settings.gravity,
                        initial_positions=configuration, apply_damping=settings.apply_damping,
                        apply_friction=settings.apply_friction, command_timeout=settings.command_timeout,
                        limit_velocity=settings.limit_velocity, on_command_timeout=settings.on_command_timeout,
                        **ground)
    except (ValueError, KeyError, ImportError, RobotDynamicsError) as e:
        raise SceneError(str(e).strip('"')) from None
    if srdf_pose and sim.contact is not None:
        sim.initial_positions[2] -= sim.contact.lowest_height(sim.initial_positions)   # onto the ground
        sim.reset()
    if sim.contact is not None and not model.fixed_base:
        warnings += _resting_on_links(model, sim, srdf)
    try:
        ft_sensors = ForceTorqueSensors(sim, settings.ft_sensors) if len(settings.ft_sensors) else None
    except ValueError as e:
        raise SceneError(f"parameter 'ft_sensors': {e}") from None
    try:
        sim.step()    # warm-up (compiles fast paths), so that the first real-time steps are not late
    except ValueError as e:   # e.g. ground_contact.ContactSolverError at the spawn pose
        raise SceneError(f"the first simulation step failed: {e}") from None
    resting_forces = sim.contact_forces.copy()
    sim.reset()
    sim.contact_forces[:] = resting_forces
    return Scene(sim, ft_sensors, resting_forces, notes, warnings)


def _ground(model, urdf, settings):
    """The Simulator's ground arguments: {} without a ground."""
    if settings.ground == 'off' or (settings.ground == 'auto' and model.fixed_base):
        return {}
    from .ground_contact import Ground  # clarabel: the 'legged' extra
    points = settings.contact_points or contact_points_from_urdf(urdf)
    if not points:
        raise SceneError(f"robot {model.name!r} has no contact points for the ground: give <collision> "
                         "spheres, boxes or cylinders in its URDF, or the parameter contact_points")
    return {'ground': Ground(settings.ground_height, settings.ground_friction), 'contact_points': points}


def _initial_configuration(model, joints, base_pose):
    """Simulator initial_positions: the joint positions, with the base pose before them when one is given."""
    if base_pose is None:
        return joints
    if model.joint_type[0] != FREE_FLYER:
        raise SceneError("parameter 'initial_base_pose' is for a floating root_joint")
    q = model.neutral()
    q[:7] = base_pose
    q[model.joint_q_index] = joints
    return q


def _resting_on_links(model, sim, srdf):
    """The warning about the links other than feet on which a floating robot rests at spawn (it lies on its
    trunk), as a list of none or one."""
    feet = srdf.feet if srdf is not None and srdf.feet else leaf_links(model)
    foot_bodies = {model.frames[link].body for link in feet}
    heights = sim.contact.points(sim.q)[0]
    resting = sorted({link for link, height in zip(sim.contact.links, heights)
                      if height < RESTING and model.frames[link].body not in foot_bodies})
    if not resting:
        return []
    return [f"{model.name!r} spawns resting on {resting}, not on its feet {sorted(feet)}: give a standing posture "
            "(an SRDF group_state, or initial_positions)"]
