"""A trotting gait on a velocity command for a quadruped: the standing controller's contact-consistent inverse
dynamics with the stance feet only (no ROS import).

The command (vx, vy, wz) is in the base's heading frame (m/s, m/s, rad/s), bounded by ``max_velocity`` and reached
at most at ``max_acceleration``. Each update:

  - the base reference integrates the command: x, y and yaw move with it (kept within REFERENCE_LEAD of the
    measured base, so a robot held back does not wind up its reference), height and attitude are the stance's
    (StandingController.standing_height, roll and pitch zero);
  - the trot scheduler (``Trot``): the diagonal pairs alternate, each in stance for ``duty`` of the ``period``;
  - each foot has a target: a stance foot stays where it touched down; a swing foot goes from where it lifted off to
    its landing point along a smooth curve ``swing_height`` high. The landing point is the Raibert heuristic, the
    foot's stance position under the hip at touchdown plus half the stance's travel, with the capture-point
    correction sqrt(h / g) (v - v_command) for the measured velocity's error;
  - the joint references follow from the targets, in the base reference's frame, by inverse kinematics of each leg
    (a damped Newton step per update from the last solution), their velocities and accelerations by the legs'
    Jacobians;
  - StandingController's law (1) on the whole configuration (base and joints, kp and kd, the references'
    accelerations fed forward) gives the desired accelerations, and the contact program the torques with the stance
    feet in contact: computed torque for the swing legs, contact forces for the stance.

A zero command brings the robot to a stand: the gait runs until every foot is down, then stops. Every default comes
from the model: the leg length (hip to foot with the leg stretched) sets the period, the swing height and the
velocity limits.
"""
from collections.abc import Sequence
import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..model.collision import ContactPoint
from ..model.model import FREE_FLYER, Model
from .standing import StandingController, yaw_of

GRAVITY = 9.81
DUTY = 0.6                 # stance share of a period: both pairs down for 0.1 period at each switch
PERIOD_PER_PENDULUM = 2.5  # period / sqrt(leg length / g)
SWING_HEIGHT = 0.15        # of the leg length
STEP_LENGTH = 0.5          # largest step (stance travel) forward, of the leg length; sideways and turning half
REFERENCE_LEAD = 0.05      # m (and rad for yaw): the base reference's largest lead on the measured base
LANDING_REACH = 0.3        # of the leg length: the landing point's largest distance from the stance position
IK_DAMPING = 1e-4          # m^2: damped least squares of each leg's inverse kinematics


class Trot:
    """Diagonal pairs alternating: pair 0 in stance for phase in [0, duty), pair 1 for phase in [0.5, 0.5 + duty)
    (mod 1). Phase 0 has all feet down."""

    def __init__(self, period: float, duty: float) -> None:
        if not (period > 0.0 and math.isfinite(period)):
            raise ValueError(f"the gait period must be positive, got {period}")
        if not 0.5 < duty < 1.0:
            raise ValueError(f"a trot's duty factor must be in (0.5, 1), got {duty}")
        self.period, self.duty = float(period), float(duty)

    def leg_phase(self, phase: float, pair: int) -> float:
        return (phase - 0.5 * pair) % 1.0

    def in_stance(self, phase: float, pair: int) -> bool:
        return self.leg_phase(phase, pair) < self.duty

    def swing_progress(self, phase: float, pair: int) -> float:
        """In [0, 1) through the swing (0 while in stance)."""
        return max(0.0, (self.leg_phase(phase, pair) - self.duty) / (1.0 - self.duty))

    @property
    def swing_time(self) -> float:
        return (1.0 - self.duty) * self.period

    @property
    def stance_time(self) -> float:
        return self.duty * self.period


def swing_curve(s: float):
    """(b, b', b''): the horizontal share of the way at progress s (minimum jerk, 10 s^3 - 15 s^4 + 6 s^5) and its
    derivatives; (h, h', h''): the height in units of the swing height, 16 s^2 (1 - s)^2 (1 at s = 1/2)."""
    b = s ** 3 * (10.0 - 15.0 * s + 6.0 * s * s)
    db = 30.0 * s * s * (1.0 - s) ** 2
    ddb = 60.0 * s * (1.0 - s) * (1.0 - 2.0 * s)
    h = 16.0 * s * s * (1.0 - s) ** 2
    dh = 32.0 * s * (1.0 - s) * (1.0 - 2.0 * s)
    ddh = 32.0 * (1.0 - 6.0 * s + 6.0 * s * s)
    return (b, db, ddb), (h, dh, ddh)


def _yaw_rotation(yaw):
    c, s = math.cos(yaw), math.sin(yaw)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


class GaitController(StandingController):
    """A trot on a velocity command (see the module docstring). Arguments as StandingController's, the feet being
    four legs' end links (e.g. the SRDF's end effectors); stance: the joint positions to stand at (default: those
    at the first update); period (s), duty, swing_height (m), max_velocity (vx, vy, wz) and max_acceleration
    (same units per second): None for the model's defaults."""

    def __init__(self, model: Model, contact_points: Sequence[ContactPoint], ground_height: float = 0.0,
                 friction: float = 0.6, kp: float = 400.0, kd: float = 40.0, feet: Sequence[str] | None = None,
                 gravity: ArrayLike | None = None, stance: ArrayLike | None = None, period: float | None = None,
                 duty: float | None = None, swing_height: float | None = None,
                 max_velocity: ArrayLike | None = None, max_acceleration: ArrayLike | None = None) -> None:
        super().__init__(model, contact_points, ground_height, friction, kp, kd, feet, gravity)
        if len(self.foot_links) != 4:
            raise ValueError(f"a trot needs four feet, got {self.foot_links}")
        self._legs(model)
        length = self.leg_length
        self.gait = Trot(PERIOD_PER_PENDULUM * math.sqrt(length / GRAVITY) if period is None else period,
                         DUTY if duty is None else duty)
        self.swing_height = SWING_HEIGHT * length if swing_height is None else float(swing_height)
        step = STEP_LENGTH * length / self.gait.stance_time
        self.max_velocity = (np.array([step, 0.5 * step, 0.5 * step / self.hip_radius]) if max_velocity is None
                             else self._bound('max_velocity', max_velocity))
        self.max_acceleration = (self.max_velocity / self.gait.period if max_acceleration is None
                                 else self._bound('max_acceleration', max_acceleration))
        if stance is not None:
            self.set_joint_reference(stance)
        self.command = np.zeros(3)    # the latest command (vx, vy, wz), within max_velocity
        self.velocity = np.zeros(3)   # the command followed: it reaches `command` within max_acceleration
        self.walking = False
        self.phase = 0.0
        self.last_t = None
        self.base_pose = None         # the base reference (x, y, yaw)
        self.targets = None           # (4, 3) the feet's targets (their contact spheres' centres), world
        self.lift_off = np.zeros((4, 3))
        self.stance_feet = np.ones(4, dtype=bool)

    @staticmethod
    def _bound(name, values):
        values = np.asarray(values, dtype=float)
        if values.shape != (3,) or not np.all(np.isfinite(values)) or np.any(values < 0.0):
            raise ValueError(f"{name} needs three finite non-negative values (x, y, yaw), got {values.tolist()}")
        return values

    def _legs(self, model):
        """Per foot link (self.foot_links order): its tracked point (the centre of its lowest contact sphere with the
        legs stretched), its leg's joints, the hip (the leg's first joint) in the base frame; the leg length."""
        q = model.neutral()
        heights, _ = self.feet_points(q)
        kinematics = self.kinematics
        R, p = kinematics.poses(q)
        joint_of_v = {v: j for j, v in enumerate(model.joint_v_index)}
        self.point_body = np.empty(4, dtype=np.int64)
        self.point_offset = np.empty((4, 3))
        self.point_radius = np.empty(4)
        self.leg_joints, hips, lengths = [], [], []
        for leg, link in enumerate(self.foot_links):
            points = [i for i, foot in enumerate(self.feet) if foot.link == link]
            lowest = min(points, key=lambda i: heights[i])
            body = self.foot_body[lowest]
            self.point_body[leg] = body
            self.point_offset[leg] = self.foot_p[lowest] + self.foot_R[lowest] @ self.foot_offset[lowest]
            self.point_radius[leg] = self.foot_radius[lowest]
            chain = []
            b = body
            while model.joint_type[b] != FREE_FLYER:
                if model.idx_v[b] in joint_of_v:
                    chain.append(b)
                b = model.parent[b]
                if b < 0:
                    raise ValueError(f"foot {link!r} does not hang from the floating base")
            if len(chain) != 3:
                raise ValueError(f"the trot needs three joints per leg; foot {link!r} has {len(chain)}")
            self.leg_joints.append(np.array([joint_of_v[model.idx_v[b]] for b in reversed(chain)]))
            hip = p[chain[-1]]
            hips.append(hip)
            lengths.append(np.linalg.norm(p[body] + R[body] @ self.point_offset[leg] - hip))
        self.leg_joints = np.array(self.leg_joints)
        hips = np.array(hips)
        self.leg_length = float(np.mean(lengths))
        self.hip_radius = float(np.mean(np.hypot(hips[:, 0], hips[:, 1])))
        front = hips[:, 0] > np.mean(hips[:, 0])
        left = hips[:, 1] > np.mean(hips[:, 1])
        if front.sum() != 2 or left.sum() != 2 or (front & left).sum() != 1:
            raise ValueError(f"cannot tell the front, hind, left and right feet of {self.foot_links}")
        self.pair = np.where(front == left, 0, 1)   # front left with hind right, front right with hind left
        self.fk_q = model.neutral()                  # the legs' kinematics with the base at the origin
        self.fk_R, self.fk_p = np.empty_like(R), np.empty_like(p)
        self.fk_C = (np.zeros((3, model.nv)), np.zeros((3, model.nv)))
        self.fk_x, self.fk_J, self.fk_bias = np.empty((4, 3)), np.empty((12, model.nv)), np.empty(12)

    def set_command(self, vx: float, vy: float, wz: float) -> None:
        """The velocity to walk at, in the base's heading frame (m/s, m/s, rad/s), clipped to max_velocity;
        ValueError (the command kept) for a non-finite one."""
        command = np.array([vx, vy, wz], dtype=float)
        if not np.all(np.isfinite(command)):
            raise ValueError(f"a velocity command must be finite, got {command.tolist()}")
        self.command = np.clip(command, -self.max_velocity, self.max_velocity)

    def update(self, q: ArrayLike, v: ArrayLike, t: float = 0.0, feet_in_contact: set[str] | None = None,
               now: float | None = None) -> NDArray[np.float64]:
        """StandingController.update with the scheduled stance feet in contact (those of them in
        ``feet_in_contact`` where the caller gives it)."""
        q = np.asarray(q, dtype=float)
        dt = 0.0 if self.last_t is None else min(max(t - self.last_t, 0.0), 0.1)
        self.last_t = t
        self._schedule(dt)
        stance = {link for link, down in zip(self.foot_links, self.stance_feet) if down}
        if feet_in_contact is not None:
            stance &= set(feet_in_contact)
        return super().update(q, v, t, stance, now)

    def _schedule(self, dt):
        """The followed velocity and the gait's phase, dt s on."""
        step = self.max_acceleration * dt
        self.velocity += np.clip(self.command - self.velocity, -step, step)
        moving = np.any(self.velocity != 0.0) or np.any(self.command != 0.0)
        if self.walking:
            phase = (self.phase + dt / self.gait.period) % 1.0
            if not moving and all(self.gait.in_stance(phase, pair) for pair in (0, 1)):
                self.walking, phase = False, 0.0
            self.phase = phase
        elif moving:
            self.walking, self.phase = True, 0.0
        stance_before = self.stance_feet
        self.stance_feet = np.array([not self.walking or self.gait.in_stance(self.phase, pair)
                                     for pair in self.pair])
        self.touching_down = self.stance_feet & ~stance_before
        self.lifting_off = ~self.stance_feet & stance_before

    def desired_acceleration(self, q, v, t, now):
        """(1) of StandingController at the gait's references (the module docstring)."""
        R, p = self.inverse_dynamics.R, self.inverse_dynamics.p   # the poses at q (update's)
        feet = p[self.point_body] + np.einsum('kij,kj->ki', R[self.point_body], self.point_offset)
        rest = self.ground_height + self.point_radius
        if self.base_pose is None:
            self.base_pose = np.array([q[0], q[1], yaw_of(q[3:7])])
            self.targets = feet.copy()
            self.targets[:, 2] = rest
        dt = 0.0 if self._last_reference_t is None else min(max(t - self._last_reference_t, 0.0), 0.1)
        self._last_reference_t = t
        vx, vy, wz = self.velocity
        yaw = self.base_pose[2]
        heading = _yaw_rotation(yaw)
        velocity_world = heading @ np.array([vx, vy, 0.0])
        self.base_pose += dt * np.array([velocity_world[0], velocity_world[1], wz])
        measured = np.array([q[0], q[1], yaw_of(q[3:7])])
        lead = self.base_pose - measured
        lead[2] = (lead[2] + math.pi) % (2.0 * math.pi) - math.pi
        self.base_pose = measured + np.clip(lead, -REFERENCE_LEAD, REFERENCE_LEAD)
        x, y, yaw = self.base_pose
        heading = _yaw_rotation(yaw)
        stance_joints = self.reference.positions[0]
        height = self.standing_height(stance_joints)
        base_position = np.array([x, y, height])
        # feet: where stance feet touched down (measured), swing feet on their curves
        self.lift_off[self.lifting_off] = feet[self.lifting_off]
        self.lift_off[self.lifting_off, 2] = rest[self.lifting_off]
        self.targets[self.touching_down] = feet[self.touching_down]
        self.targets[self.touching_down, 2] = rest[self.touching_down]
        if self.nominal is None:
            self.nominal = self._feet_in_base(stance_joints)
        target_velocity, target_acceleration = np.zeros((4, 3)), np.zeros((4, 3))
        omega = np.array([0.0, 0.0, wz])
        swing_time = self.gait.swing_time
        base_velocity_world = R[0] @ v[:3]
        for leg in np.flatnonzero(~self.stance_feet):
            pair = self.pair[leg]
            s = self.gait.swing_progress(self.phase, pair)
            remaining = (1.0 - s) * swing_time
            nominal = self.nominal[leg].copy()
            nominal[2] = 0.0
            landing_heading = _yaw_rotation(yaw + wz * remaining)
            under_hip = base_position + landing_heading @ nominal + velocity_world * remaining
            hip_velocity = velocity_world + np.cross(omega, landing_heading @ nominal)
            correction = math.sqrt(height / GRAVITY) * (base_velocity_world - velocity_world)
            offset = 0.5 * self.gait.stance_time * hip_velocity + correction
            offset[2] = 0.0
            reach = LANDING_REACH * self.leg_length
            distance = np.linalg.norm(offset)
            if distance > reach:
                offset *= reach / distance
            landing = under_hip + offset
            landing[2] = rest[leg]
            (b, db, ddb), (h, dh, ddh) = swing_curve(s)
            way = landing - self.lift_off[leg]
            self.targets[leg] = self.lift_off[leg] + b * way
            self.targets[leg, 2] = rest[leg] + self.swing_height * h
            target_velocity[leg] = db / swing_time * way
            target_velocity[leg, 2] = self.swing_height * dh / swing_time
            target_acceleration[leg] = ddb / swing_time ** 2 * way
            target_acceleration[leg, 2] = self.swing_height * ddh / swing_time ** 2
        # the targets relative to the base reference, in its frame
        relative = self.targets - base_position
        relative_velocity = target_velocity - velocity_world - np.cross(omega, relative)
        in_base = relative @ heading
        joints, joint_velocities, joint_accelerations = self._inverse_kinematics(
            in_base, relative_velocity @ heading, target_acceleration @ heading)
        q_ref = np.empty(self.model.nq)
        q_ref[:3] = base_position
        q_ref[3:7] = 0.0, 0.0, math.sin(yaw / 2.0), math.cos(yaw / 2.0)
        q_ref[self.joints_q] = joints
        velocity_error = -v.copy()
        velocity_error[:3] += R[0].T @ velocity_world
        velocity_error[3:6] += R[0].T @ omega
        velocity_error[self.joints_v] += joint_velocities
        desired = self.kp * self.error(q, q_ref) + self.kd * velocity_error
        desired[self.joints_v] += joint_accelerations
        self.joint_reference = (joints, joint_velocities, joint_accelerations)
        return desired

    _last_reference_t = None
    nominal = None
    touching_down = lifting_off = np.zeros(4, dtype=bool)

    def _feet_in_base(self, joints):
        """(4, 3) the tracked points in the base frame at these joint positions."""
        self.fk_q[self.joints_q] = joints
        self.inverse_dynamics._body_poses(*self.kinematics.tree, self.fk_q, self.fk_R, self.fk_p)
        return self.fk_p[self.point_body] + np.einsum('kij,kj->ki', self.fk_R[self.point_body], self.point_offset)

    def _inverse_kinematics(self, targets, velocities, accelerations):
        """Joint positions (model.joint_names order) that put the legs' points at targets (4, 3) in the base frame, by
        one damped Newton step from the last solution (the stance at first), and the joint velocities and
        accelerations of those points' velocities and accelerations (the Jacobian's rate neglected)."""
        joints = (self.reference.positions[0] if self.joint_reference is None else self.joint_reference[0]).copy()
        self.fk_q[self.joints_q] = joints
        id_ = self.inverse_dynamics
        id_._body_poses(*self.kinematics.tree, self.fk_q, self.fk_R, self.fk_p)
        id_._point_motion(*self.kinematics.column_constants, self.fk_R, self.fk_p, np.zeros(self.model.nv),
                          self.point_body, self.point_offset, *self.fk_C, self.fk_x, self.fk_J, self.fk_bias)
        joint_velocities, joint_accelerations = np.zeros(len(joints)), np.zeros(len(joints))
        for leg, leg_joints in enumerate(self.leg_joints):
            J = self.fk_J[3 * leg:3 * leg + 3][:, self.joints_v[leg_joints]]
            damped = J.T @ np.linalg.inv(J @ J.T + IK_DAMPING * np.eye(3))
            joints[leg_joints] += damped @ (targets[leg] - self.fk_x[leg])
            joint_velocities[leg_joints] = damped @ velocities[leg]
            joint_accelerations[leg_joints] = damped @ accelerations[leg]
        lower, upper = self.model.lower[self.joints_q], self.model.upper[self.joints_q]
        return np.clip(joints, lower, upper), joint_velocities, joint_accelerations
