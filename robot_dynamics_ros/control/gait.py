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
from the model: the leg length (thigh plus shank) sets the period, the swing height and the velocity limits.
"""
from collections.abc import Sequence
import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import fast
from ..algorithms.backends import compiled, njit
from ..model.collision import ContactPoint
from ..model.model import FREE_FLYER, Model
from .standing import StandingController, yaw_of

GRAVITY = 9.81
DUTY = 0.6                 # stance share of a period: both pairs down for 0.1 period at each switch
PERIOD_PER_PENDULUM = 2.0  # period / sqrt(leg length / g): at 2.5 Go1 and Go2 rolled and drifted walking sideways
SWING_HEIGHT = 0.15        # of the leg length
STEP_LENGTH = 0.5          # largest step (stance travel) forward, of the leg length; sideways and turning half
REFERENCE_LEAD = 0.05      # m (and rad for yaw): the base reference's largest lead on the measured base
LANDING_REACH = 0.3        # of the leg length: the landing point's largest distance from the stance position
MAX_STEP = 0.1             # s: the longest time the gait moves on between two updates
IK_DAMPING = 1e-4          # m^2: damped least squares of each leg's inverse kinematics
# m, StandingController's foot_flatness: a stance foot bears on its lowest point alone (it rolls); several points of a
# coarse mesh foot lock its orientation, which three joints cannot hold as the base moves (Solo12's contact program
# became infeasible walking sideways)
ROLLING_FOOT = 1e-9


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


@njit()
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
        self.foot_flatness = ROLLING_FOOT
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
        self.last_t, self.dt = None, 0.0   # the last update's clock and the time since the one before, s
        self.base_pose = None         # the base reference (x, y, yaw)
        self.nominal = None           # (4, 3) the tracked points at the stance, base frame
        self.targets = None           # (4, 3) the tracked points' targets (world)
        self.lift_off = np.zeros((4, 3))
        self.stance_feet = np.ones(4, dtype=bool)
        self.touching_down, self.lifting_off = np.zeros(4, dtype=bool), np.zeros(4, dtype=bool)

    @staticmethod
    def _bound(name, values):
        values = np.asarray(values, dtype=float)
        if values.shape != (3,) or not np.all(np.isfinite(values)) or np.any(values < 0.0):
            raise ValueError(f"{name} needs three finite non-negative values (x, y, yaw), got {values.tolist()}")
        return values

    def _legs(self, model):
        """Per foot link (self.foot_links order): its tracked point (the centre of its lowest contact sphere in the
        neutral configuration), its leg's joints (hip, thigh, knee from the base), the hip in the base frame; the leg
        length: thigh plus shank, second joint to knee and knee to the foot's point (the leg stretched)."""
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
            hips.append(p[chain[2]])
            knee, foot = p[chain[0]], p[body] + R[body] @ self.point_offset[leg]
            lengths.append(np.linalg.norm(knee - p[chain[1]]) + np.linalg.norm(foot - knee))
        self.leg_joints = np.array(self.leg_joints, dtype=np.int64)
        self.leg_columns = np.asarray(self.joints_v, dtype=np.int64)[self.leg_joints]
        self.lower, self.upper = model.lower[self.joints_q], model.upper[self.joints_q]
        self.rest = self.ground_height + self.point_radius
        self._no_velocity = np.zeros(model.nv)
        self._references = compiled(leg_references) if fast.BACKEND == 'numba' else leg_references
        hips = np.array(hips)
        self.leg_length = float(np.mean(lengths))
        self.hip_radius = float(np.mean(np.hypot(hips[:, 0], hips[:, 1])))
        front = hips[:, 0] > np.mean(hips[:, 0])
        left = hips[:, 1] > np.mean(hips[:, 1])
        if front.sum() != 2 or left.sum() != 2 or (front & left).sum() != 1:
            raise ValueError(f"cannot tell the front, hind, left and right feet of {self.foot_links}")
        self.pair = np.where(front == left, 0, 1)   # front left with hind right, front right with hind left
        # the schedule's feet per (pairs down before, pairs down now): (stance, touching down, lifting off, the stance
        # feet's links), made once
        self.schedules = {}
        for before in ((False, False), (False, True), (True, False), (True, True)):
            for now in ((False, False), (False, True), (True, False), (True, True)):
                down_before, down = np.array(before)[self.pair], np.array(now)[self.pair]
                feet = down, down & ~down_before, ~down & down_before
                for array in feet:
                    array.flags.writeable = False
                self.schedules[before, now] = (*feet, {link for link, d in zip(self.foot_links, down) if d})
        self.pairs_down = (True, True)
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
        ``feet_in_contact`` where the caller gives it); the gait's clock is the state's time ``now`` (default t)."""
        clock = t if now is None else now
        self.dt = 0.0 if self.last_t is None else min(max(clock - self.last_t, 0.0), MAX_STEP)
        self.last_t = clock
        stance = self._schedule(self.dt)
        if feet_in_contact is not None:
            stance = stance & set(feet_in_contact)
        return super().update(q, v, t, stance, now)

    def _schedule(self, dt):
        """The followed velocity and the gait's phase, dt s on; returns the stance feet's links."""
        velocity, command, moving = self.velocity, self.command, False
        for i in range(3):
            step = self.max_acceleration[i] * dt
            velocity[i] += min(max(command[i] - velocity[i], -step), step)
            moving = moving or velocity[i] != 0.0 or command[i] != 0.0
        gait = self.gait
        if self.walking:
            phase = (self.phase + dt / gait.period) % 1.0
            if not moving and gait.in_stance(phase, 0) and gait.in_stance(phase, 1):
                self.walking, phase = False, 0.0
            self.phase = phase
        elif moving:
            self.walking, self.phase = True, 0.0
        down = (not self.walking or gait.in_stance(self.phase, 0), not self.walking or gait.in_stance(self.phase, 1))
        self.stance_feet, self.touching_down, self.lifting_off, stance = self.schedules[self.pairs_down, down]
        self.pairs_down = down
        return stance

    def desired_acceleration(self, q, v, t, now):
        """(1) of StandingController at the gait's references (the module docstring)."""
        R, p = self.inverse_dynamics.R, self.inverse_dynamics.p   # the poses at q (update's)
        if self.base_pose is None:
            self.base_pose = np.array([q[0], q[1], yaw_of(q[3:7])])
            self.targets = p[self.point_body] + np.einsum('kij,kj->ki', R[self.point_body], self.point_offset)
            self.targets[:, 2] = self.rest
            self.nominal = self._feet_in_base(self.reference.positions[0])
        dt = self.dt
        vx, vy, wz = self.velocity
        x, y, yaw = self.base_pose
        c, s = math.cos(yaw), math.sin(yaw)
        x, y, yaw = x + dt * (c * vx - s * vy), y + dt * (s * vx + c * vy), yaw + dt * wz
        measured_yaw = yaw_of(q[3:7])   # the reference leads the measured base by REFERENCE_LEAD at most
        yaw = measured_yaw + min(max((yaw - measured_yaw + math.pi) % (2.0 * math.pi) - math.pi, -REFERENCE_LEAD),
                                 REFERENCE_LEAD)
        x, y = q[0] + min(max(x - q[0], -REFERENCE_LEAD), REFERENCE_LEAD), \
            q[1] + min(max(y - q[1], -REFERENCE_LEAD), REFERENCE_LEAD)
        self.base_pose[:] = x, y, yaw
        height = self.standing_height(self.reference.positions[0])
        progress = np.where(self.pair == 0, self.gait.swing_progress(self.phase, 0),
                            self.gait.swing_progress(self.phase, 1))
        joints = (self.reference.positions[0] if self.joint_reference is None else self.joint_reference[0]).copy()
        self.fk_q[self.joints_q] = joints
        solver = self.inverse_dynamics
        solver._body_poses(*self.kinematics.tree, self.fk_q, self.fk_R, self.fk_p)
        solver._point_motion(*self.kinematics.column_constants, self.fk_R, self.fk_p, self._no_velocity,
                             self.point_body, self.point_offset, *self.fk_C, self.fk_x, self.fk_J, self.fk_bias)
        joint_velocities, joint_accelerations = np.zeros(len(joints)), np.zeros(len(joints))
        self._references(self.stance_feet, self.touching_down, self.lifting_off, progress, R, p, self.point_body,
                         self.point_offset, self.rest, self.nominal, np.array([x, y, height, yaw]), self.velocity,
                         R[0] @ v[:3], self.gait.stance_time, self.gait.swing_time, self.swing_height,
                         LANDING_REACH * self.leg_length, GRAVITY, self.lift_off, self.targets, self.fk_x, self.fk_J,
                         self.leg_columns, self.leg_joints, IK_DAMPING, joints, joint_velocities, joint_accelerations)
        np.clip(joints, self.lower, self.upper, out=joints)
        q_ref = np.empty(self.model.nq)
        q_ref[:3] = x, y, height
        q_ref[3:7] = 0.0, 0.0, math.sin(yaw / 2.0), math.cos(yaw / 2.0)
        q_ref[self.joints_q] = joints
        c, s = math.cos(yaw), math.sin(yaw)
        velocity_error = -v
        velocity_error[:3] += R[0].T @ np.array((c * vx - s * vy, s * vx + c * vy, 0.0))
        velocity_error[3:6] += wz * R[0][2]   # R[0].T @ (0, 0, wz)
        velocity_error[self.joints_v] += joint_velocities
        desired = self.kp * self.error(q, q_ref) + self.kd * velocity_error
        desired[self.joints_v] += joint_accelerations
        self.joint_reference = (joints, joint_velocities, joint_accelerations)
        return desired

    def _feet_in_base(self, joints):
        """(4, 3) the tracked points in the base frame at these joint positions."""
        self.fk_q[self.joints_q] = joints
        self.inverse_dynamics._body_poses(*self.kinematics.tree, self.fk_q, self.fk_R, self.fk_p)
        return self.fk_p[self.point_body] + np.einsum('kij,kj->ki', self.fk_R[self.point_body], self.point_offset)


@njit()
def leg_references(stance, touching_down, lifting_off, progress, R, p, point_body, point_offset, rest, nominal, base,
                   velocity, base_velocity, stance_time, swing_time, swing_height, reach, gravity, lift_off, targets,
                   x, J, leg_columns, leg_joints, damping, joints, joint_velocities, joint_accelerations):
    """The feet's targets and the legs' joint references (GaitController.desired_acceleration), for numba.

    stance, touching_down, lifting_off (4,): the feet's schedule; progress (4,): through their swings; R, p: the
    bodies' poses at the measured q, point_body, point_offset (4,), (4, 3): the tracked points' bodies and offsets
    (the points, measured, are where a foot touches down or lifts off); rest (4,): their height on the ground;
    nominal (4, 3): at the stance in the base frame; base: the reference (x, y, height, yaw); velocity: the command
    followed (vx, vy, wz); base_velocity: measured (world); lift_off, targets (4, 3): kept from update to update
    (world; stance feet's targets are where they touched down); x (4, 3), J (12, nv): the points and their Jacobians
    at ``joints`` with the base at the origin; leg_columns, leg_joints (4, 3): each leg's columns of J and entries
    of the joint vectors: joints is moved by a damped Newton step towards the targets, the velocities and
    accelerations are the targets' relative to the base reference through each leg's damped inverse Jacobian."""
    c, s = math.cos(base[3]), math.sin(base[3])
    vx_world, vy_world, wz = c * velocity[0] - s * velocity[1], s * velocity[0] + c * velocity[1], velocity[2]
    relative, relative_velocity, acceleration = np.zeros(3), np.zeros(3), np.zeros(3)
    for leg in range(4):
        if touching_down[leg] or lifting_off[leg]:
            body = point_body[leg]
            foot = p[body] + R[body] @ point_offset[leg]
            if touching_down[leg]:
                targets[leg, 0], targets[leg, 1], targets[leg, 2] = foot[0], foot[1], rest[leg]
            else:
                lift_off[leg, 0], lift_off[leg, 1], lift_off[leg, 2] = foot[0], foot[1], rest[leg]
        velocity_world = np.zeros(3)
        acceleration[:] = 0.0
        if not stance[leg]:
            # Raibert: the stance position at touchdown (base moved on by the command), half the stance's travel
            # of the hip, and the capture-point correction sqrt(h / g) (v - v_command)
            remaining = (1.0 - progress[leg]) * swing_time
            yaw = base[3] + wz * remaining
            cl, sl = math.cos(yaw), math.sin(yaw)
            hx = cl * nominal[leg, 0] - sl * nominal[leg, 1]
            hy = sl * nominal[leg, 0] + cl * nominal[leg, 1]
            capture = math.sqrt(base[2] / gravity)
            ox = 0.5 * stance_time * (vx_world - wz * hy) + capture * (base_velocity[0] - vx_world)
            oy = 0.5 * stance_time * (vy_world + wz * hx) + capture * (base_velocity[1] - vy_world)
            distance = math.sqrt(ox * ox + oy * oy)
            if distance > reach:
                ox, oy = ox * reach / distance, oy * reach / distance
            landing_x = base[0] + hx + vx_world * remaining + ox
            landing_y = base[1] + hy + vy_world * remaining + oy
            (b, db, ddb), (h, dh, ddh) = swing_curve(progress[leg])
            wx, wy = landing_x - lift_off[leg, 0], landing_y - lift_off[leg, 1]
            targets[leg, 0], targets[leg, 1] = lift_off[leg, 0] + b * wx, lift_off[leg, 1] + b * wy
            targets[leg, 2] = rest[leg] + swing_height * h
            velocity_world[0], velocity_world[1] = db / swing_time * wx, db / swing_time * wy
            velocity_world[2] = swing_height * dh / swing_time
            acceleration[0], acceleration[1] = ddb / swing_time ** 2 * wx, ddb / swing_time ** 2 * wy
            acceleration[2] = swing_height * ddh / swing_time ** 2
        # relative to the base reference (moving at the command), in its frame
        dx, dy, dz = targets[leg, 0] - base[0], targets[leg, 1] - base[1], targets[leg, 2] - base[2]
        ux, uy = velocity_world[0] - vx_world + wz * dy, velocity_world[1] - vy_world - wz * dx
        relative[0], relative[1], relative[2] = c * dx + s * dy - x[leg, 0], -s * dx + c * dy - x[leg, 1], \
            dz - x[leg, 2]
        relative_velocity[0], relative_velocity[1], relative_velocity[2] = c * ux + s * uy, -s * ux + c * uy, \
            velocity_world[2]
        ax, ay = acceleration[0], acceleration[1]
        acceleration[0], acceleration[1] = c * ax + s * ay, -s * ax + c * ay
        # damped inverse of the leg's 3 x 3 Jacobian: J^T (J J^T + damping)^-1
        A = np.empty((3, 3))
        for i in range(3):
            for k in range(3):
                A[i, k] = 0.0
                for a in range(3):
                    A[i, k] += J[3 * leg + i, leg_columns[leg, a]] * J[3 * leg + k, leg_columns[leg, a]]
            A[i, i] += damping
        A_inv = np.linalg.inv(A)
        step, rate, acceleration_w = A_inv @ relative, A_inv @ relative_velocity, A_inv @ acceleration
        for a in range(3):
            column, joint = leg_columns[leg, a], leg_joints[leg, a]
            joints[joint] += J[3 * leg, column] * step[0] + J[3 * leg + 1, column] * step[1] \
                + J[3 * leg + 2, column] * step[2]
            joint_velocities[joint] = J[3 * leg, column] * rate[0] + J[3 * leg + 1, column] * rate[1] \
                + J[3 * leg + 2, column] * rate[2]
            joint_accelerations[joint] = J[3 * leg, column] * acceleration_w[0] \
                + J[3 * leg + 1, column] * acceleration_w[1] + J[3 * leg + 2, column] * acceleration_w[2]
