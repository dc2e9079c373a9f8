"""A controller that keeps a floating-base legged robot standing: joint posture plus base pose tracking through
contact-consistent inverse dynamics (contact_inverse_dynamics; no ROS import).

Each update sets the desired acceleration (task-space PD on the whole configuration, as in computed-torque control)

    a_des = a_ref + kp difference(q, q_ref) + kd (v_ref - v)                                              (1)

where q_ref is the reference joint positions (a hold or a TrajectoryReference) with a base reference:

  - x, y and yaw held where the base was at the first update (``reset``),
  - roll and pitch zero,
  - the height at which the lowest foot point touches the ground with the reference joint positions
    (forward kinematics with the base upright at z = 0; the base is then shifted so that point is at
    ``ground_height``),

and the base's v_ref, a_ref zero. contact_inverse_dynamics then finds the torques whose accelerations come
closest to a_des with the feet in contact held still, within friction cones and effort limits.

Contact set: the candidate feet (the ``feet`` links; default: the leaf links among the contact points, i.e. the
feet) whose lowest sphere point is within CONTACT_TOLERANCE of the ground *in the controller's own kinematics of
the measured q* (a foot that is measured off the ground by more than the tolerance is swinging), or, where the
caller says which feet touch (``update(..., feet_in_contact=...)``: force sensors, the simulator's contact topics),
those. The bodies' poses come from the simulator's contact kinematics (PointKinematics), once per update, for the
feet's heights and for the contact program, whose solver is kept from update to update (ContactInverseDynamics).
In mode 'gravity_compensation' a_des = 0: the robot holds its current posture (what it drifts from is not
corrected).
"""
from collections.abc import Sequence
import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import fast
from ..algorithms.backends import compiled, njit
from ..algorithms.spatial_kernels import quaternion_rotation
from ..model.collision import ContactPoint, leaf_links
from ..model.model import Model
from ..spatial import pose_from_plucker
from .contact_inverse_dynamics import ContactForceError, ContactInverseDynamics
from .governor import ReferenceGovernor
from .references import TrajectoryReference

CONTACT_TOLERANCE = 2e-3   # m: a foot point this close to the ground (by the measured q) is in contact
FOOT_FLATNESS = 2e-4       # m: of a foot's points in contact, those this close to its lowest bear the load (a flat
                           # sole's corners; of a round foot's hull vertices, the lowest alone)
MODES = ('stand', 'gravity_compensation')


def yaw_of(quaternion: ArrayLike) -> float:
    """The yaw (rotation about the world z, Z-Y-X convention) of a quaternion (x, y, z, w)."""
    x, y, z, w = quaternion
    return float(np.arctan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z)))


class StandingController:
    """Torques that hold a floating-base robot on its feet at a joint reference (see the module docstring).

    model: floating root (load_urdf(..., root_joint='floating')); contact_points: ContactPoint list (e.g.
    contact_points_from_urdf); feet: the candidate links (default: the contact points' leaf links); kp (1/s^2),
    kd (1/s): the gains of (1) for every coordinate, base and joints."""

    def __init__(self, model: Model, contact_points: Sequence[ContactPoint], ground_height: float = 0.0,
                 friction: float = 0.6, kp: float = 400.0, kd: float = 40.0, feet: Sequence[str] | None = None,
                 gravity: ArrayLike | None = None, mode: str = 'stand') -> None:
        if model.fixed_base or model.nq != model.nv + 1:
            raise ValueError(f"robot {model.name!r}: the standing controller needs a floating base "
                             "(root_joint='floating')")
        candidates = set(leaf_links(model)) if feet is None else set(feet)
        unknown = candidates - set(model.frames)
        if unknown:
            raise ValueError(f"feet {sorted(unknown)} are not links of {model.name!r}")
        linked = candidates & {p.link for p in contact_points}
        bodies = {model.frames[link].body for link in candidates - linked}   # feet without points of their own (a
        self.feet = [p for p in contact_points                               # sole frame): those of their body
                     if p.link in linked or model.frames[p.link].body in bodies]
        if not self.feet:
            raise ValueError(f"no contact points on the feet links {sorted(candidates)}")
        self.model = model
        self.ground_height = float(ground_height)
        self.inverse_dynamics = ContactInverseDynamics(model, friction, gravity)
        self.kinematics = self.inverse_dynamics.kinematics
        placements = [pose_from_plucker(model.frames[p.link].X_body) for p in self.feet]   # link frames in bodies
        self.foot_body = np.array([model.frames[p.link].body for p in self.feet], dtype=int)
        self.foot_R = np.array([R for R, _ in placements]).reshape(-1, 3, 3)
        self.foot_p = np.array([p for _, p in placements]).reshape(-1, 3)
        self.foot_offset = np.array([p.offset for p in self.feet], dtype=float).reshape(-1, 3)
        self.foot_radius = np.array([p.radius for p in self.feet], dtype=float)
        self.foot_links = sorted({p.link for p in self.feet})                    # each point's link, numbered
        self.foot_link = np.array([self.foot_links.index(p.link) for p in self.feet], dtype=np.int64)
        self._standing_height = (None, 0.0)   # (joint positions' bytes, standing_height of them)
        self.foot_flatness = FOOT_FLATNESS
        self.kp, self.kd = float(kp), float(kd)
        kernels = (configuration_error, lowest_points, bearing_points)
        self._error, self._lowest, self._bearing = (compiled(k) if fast.BACKEND == 'numba' else k for k in kernels)
        self.set_mode(mode)
        self.joints_v = np.asarray(model.joint_v_index)
        self.joints_q = np.asarray(model.joint_q_index)
        self.reference = None           # TrajectoryReference of the joints (model.joint_names order)
        self.governor = ReferenceGovernor(model, self.joints_q, self.joints_v)   # into the joint limits
        self.joint_reference = None     # the governed (positions, velocities, accelerations) of the last update
        self.start_pose = None          # (x, y, yaw) of the base at the first update
        self.contacts = []              # the (link, offset) pairs of the last update
        self.forces = np.zeros((0, 3))  # their contact forces (world coordinates), N

    @property
    def friction(self) -> float:
        return self.inverse_dynamics.friction

    @property
    def gravity(self):
        return self.inverse_dynamics.gravity

    def set_mode(self, mode: str) -> None:
        if mode not in MODES:
            raise ValueError(f"mode must be one of {list(MODES)}, got {mode!r}")
        self.mode = mode

    def set_joint_reference(self, positions: ArrayLike) -> None:
        """Hold the joints at ``positions`` (model.joint_names order)."""
        self.set_trajectory(TrajectoryReference.hold(self._joint_vector(positions)))

    def set_trajectory(self, reference: TrajectoryReference) -> None:
        """Follow ``reference`` (joint positions in model.joint_names order), sampled at update's t."""
        if reference.positions.shape[1] != len(self.joints_v):
            raise ValueError(f"a joint reference needs {len(self.joints_v)} positions, got "
                             f"{reference.positions.shape[1]}")
        self.reference = reference

    def reset(self, q: ArrayLike) -> None:
        """Take the base's x, y and yaw at q as the ones to hold."""
        q = np.asarray(q, dtype=float)
        self.start_pose = (q[0], q[1], yaw_of(q[3:7]))

    def feet_points(self, q: ArrayLike, poses=None) -> tuple[NDArray[np.float64], list[tuple[str, NDArray]]]:
        """(heights above the ground of the feet's lowest points, [(link, that point in the link frame)]); poses:
        PointKinematics.poses(q) where the caller has them."""
        heights, lowest_in_link, _ = self._lowest_points(q, poses)
        return heights, [(foot.link, point) for foot, point in zip(self.feet, lowest_in_link)]

    def _lowest_points(self, q, poses=None):
        """(heights above the ground, (k, 3) points in the link frames, the same in the bodies' frames) of the
        feet's lowest points."""
        R, p = self.kinematics.poses(np.asarray(q, dtype=float)) if poses is None else poses
        k = len(self.feet)
        heights, lowest_in_link, in_body = np.empty(k), np.empty((k, 3)), np.empty((k, 3))
        self._lowest(R, p, self.foot_body, self.foot_R, self.foot_p, self.foot_offset, self.foot_radius,
                     self.ground_height, heights, lowest_in_link, in_body)
        return heights, lowest_in_link, in_body

    def standing_height(self, joint_positions: ArrayLike) -> float:
        """The base height at which, upright with these joint positions, the lowest foot point is on the ground (kept
        for the last joint positions asked: a held reference asks for the same every update)."""
        joint_positions = np.asarray(joint_positions, dtype=float)
        key = (self.ground_height, joint_positions.tobytes())
        if self._standing_height[0] != key:
            q = self.model.neutral()
            q[self.joints_q] = joint_positions
            heights, _ = self.feet_points(q)
            self._standing_height = (key, -float(np.min(heights)))   # heights: above the ground, base at z = 0
        return self._standing_height[1]

    def base_reference(self, joint_positions: ArrayLike) -> NDArray[np.float64]:
        """The whole reference configuration: the held x, y, yaw, no roll or pitch, the standing height."""
        x, y, yaw = self.start_pose
        q_ref = np.zeros(self.model.nq)
        q_ref[:3] = x, y, self.standing_height(joint_positions)
        q_ref[3:7] = 0.0, 0.0, np.sin(yaw / 2.0), np.cos(yaw / 2.0)
        q_ref[self.joints_q] = joint_positions
        return q_ref

    def update(self, q: ArrayLike, v: ArrayLike, t: float = 0.0,
               feet_in_contact: set[str] | None = None, now: float | None = None) -> NDArray[np.float64]:
        """Torques for model.joint_names at the measured (q, v) and reference time t (s), with the feet whose links
        are in ``feet_in_contact`` in contact (None: those within CONTACT_TOLERANCE of the ground by the measured
        q). The joint reference is governed into the joint position and velocity limits (``ReferenceGovernor``),
        ``now`` (s, default t) being the state's time. The first call takes the base's x, y, yaw and, without a
        reference set, the joint positions as the ones to hold. Raises ValueError for a non-finite state and
        ContactForceError when no torques hold the robot (then also for a non-finite result, which it never
        returns)."""
        q, v = np.asarray(q, dtype=float), np.asarray(v, dtype=float)
        if q.shape != (self.model.nq,) or v.shape != (self.model.nv,):
            raise ValueError(f"state of shape {q.shape}, {v.shape}; the model has nq {self.model.nq}, "
                             f"nv {self.model.nv}")
        if not (np.isfinite(q).all() and np.isfinite(v).all()):
            raise ValueError("non-finite state")
        q = q.copy()
        q[3:7] /= math.sqrt(q[3:7] @ q[3:7])   # (np.linalg.norm's arithmetic, without its checks)
        if self.start_pose is None:
            self.reset(q)
        if self.reference is None:
            self.set_joint_reference(q[self.joints_q])
        poses = self.inverse_dynamics.poses(q)
        heights, in_link, in_body = self._lowest_points(q, poses)
        touching = (heights < CONTACT_TOLERANCE if feet_in_contact is None
                    else np.array([link in feet_in_contact for link in self.foot_links], dtype=bool)[self.foot_link])
        bearing = np.empty(len(self.feet), dtype=np.int64)
        bearing = bearing[:self._bearing(heights, touching, self.foot_link, len(self.foot_links), self.foot_flatness,
                                         bearing)]
        self.contacts = [(self.feet[i].link, in_link[i]) for i in bearing]
        desired = (np.zeros(self.model.nv) if self.mode == 'gravity_compensation'
                   else self.desired_acceleration(q, v, t, now))
        tau, _, self.forces = self.inverse_dynamics(q, v, desired, self.contacts, poses,
                                                    (self.foot_body[bearing], in_body[bearing]))
        if not np.isfinite(tau).all():
            raise ContactForceError(f"the contact program gave non-finite torques {tau.tolist()}")
        return tau

    def desired_acceleration(self, q: NDArray[np.float64], v: NDArray[np.float64], t: float,
                             now: float | None) -> NDArray[np.float64]:
        """a_des of (1) at the normalised state (q, v), reference time t and state time now (update's)."""
        self.joint_reference = self.governor(t if now is None else now, q[self.joints_q], v[self.joints_v],
                                             *self.reference.sample(t))
        joints, joint_velocities, joint_accelerations = self.joint_reference
        desired = self.kp * self.error(q, self.base_reference(joints))   # (1): a_ref and v_ref are the joints'
        desired[self.joints_v] += joint_accelerations
        velocity_error = -v
        velocity_error[self.joints_v] += joint_velocities
        desired += self.kd * velocity_error
        return desired

    def error(self, q: ArrayLike, q_ref: ArrayLike) -> NDArray[np.float64]:
        """configuration.difference(model, q, q_ref) for this model, a free-flying base (q[:7], v[:6]) and 1-DOF
        joints (q[7:], v[6:]), without its generic per-joint loop and checks (q is normalised by update)."""
        error = np.empty(self.model.nv)
        self._error(np.asarray(q, dtype=float), np.asarray(q_ref, dtype=float), error)
        return error

    def _joint_vector(self, positions):
        positions = np.asarray(positions, dtype=float)
        if positions.shape != (len(self.joints_v),) or not np.all(np.isfinite(positions)):
            raise ValueError(f"a joint reference needs {len(self.joints_v)} finite positions, got "
                             f"{positions.tolist()}")
        return positions


@njit()
def configuration_error(q, q_ref, error):
    """error (nv,): StandingController.error, as loops for numba: the base block [linear; angular] is
    configuration._log6(R^T R_ref, R^T (p_ref - p)), the twist whose exponential takes the base to its reference
    (angle in [0, pi]; linear part V(w)^-1 of the translation, V the left Jacobian of SO(3),
    configuration._V), and the joints' q_ref - q."""
    R, R_ref = _rotation(q[3:7]), _rotation(q_ref[3:7])
    D, d = np.zeros((3, 3)), np.zeros(3)   # R^T R_ref, R^T (p_ref - p)
    for a in range(3):
        for b in range(3):
            d[a] += R[b, a] * (q_ref[b] - q[b])
            for c in range(3):
                D[a, b] += R[c, a] * R_ref[c, b]
    angle = math.acos(min(max((D[0, 0] + D[1, 1] + D[2, 2] - 1.0) / 2.0, -1.0), 1.0))
    w = np.array([D[2, 1] - D[1, 2], D[0, 2] - D[2, 0], D[1, 0] - D[0, 1]]) / 2.0   # axis sin(angle)
    if angle < 1e-8:
        pass
    elif angle > math.pi - 1e-6:   # near pi: the axis from the symmetric part, R + 1 = 2 a a^T
        i = np.argmax(np.array([D[0, 0], D[1, 1], D[2, 2]]))
        axis = np.array([D[0, i], D[1, i], D[2, i]])
        axis[i] += 1.0
        axis *= angle / math.sqrt(axis[0] ** 2 + axis[1] ** 2 + axis[2] ** 2)
        w = axis if axis[0] * w[0] + axis[1] * w[1] + axis[2] * w[2] >= 0.0 else -axis
    else:
        w *= angle / math.sin(angle)
    theta = math.sqrt(w[0] ** 2 + w[1] ** 2 + w[2] ** 2)
    if theta < 1e-4:   # configuration._V's Taylor series
        s1, s2 = 0.5, 1.0 / 6.0
    else:
        s1, s2 = (1.0 - math.cos(theta)) / theta ** 2, (theta - math.sin(theta)) / theta ** 3
    W = np.array([[0.0, -w[2], w[1]], [w[2], 0.0, -w[0]], [-w[1], w[0], 0.0]])
    V = np.eye(3) + s1 * W + s2 * (W @ W)
    # V u = d by Cramer's rule: u_i = d . (c_j x c_k) / det V, (i, j, k) cyclic over V's columns c
    det = 0.0
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        c0 = V[1, j] * V[2, k] - V[2, j] * V[1, k]
        c1 = V[2, j] * V[0, k] - V[0, j] * V[2, k]
        c2 = V[0, j] * V[1, k] - V[1, j] * V[0, k]
        error[i] = d[0] * c0 + d[1] * c1 + d[2] * c2
        if i == 0:
            det = V[0, 0] * c0 + V[1, 0] * c1 + V[2, 0] * c2
    for i in range(3):
        error[i] /= det
        error[3 + i] = w[i]
    for i in range(7, q.shape[0]):
        error[i - 1] = q_ref[i] - q[i]


@njit()
def _rotation(quaternion):
    """spatial.quaternion_to_matrix of (x, y, z, w)."""
    R = np.empty((3, 3))
    R[0, 0], R[0, 1], R[0, 2], R[1, 0], R[1, 1], R[1, 2], R[2, 0], R[2, 1], R[2, 2] = quaternion_rotation(
        quaternion[0], quaternion[1], quaternion[2], quaternion[3])
    return R


@njit()
def lowest_points(R, p, foot_body, foot_R, foot_p, foot_offset, foot_radius, ground_height, heights, in_link,
                  in_body):
    """Each foot point's lowest point (its sphere's: the centre minus radius times the world z in the link frame,
    the third row of the link's world orientation R_body foot_R): in_link (k, 3), in_body (k, 3) in the body's
    frame, and heights (k,) above the ground."""
    for i in range(foot_body.shape[0]):
        b = foot_body[i]
        for a in range(3):
            up = R[b, 2, 0] * foot_R[i, 0, a] + R[b, 2, 1] * foot_R[i, 1, a] + R[b, 2, 2] * foot_R[i, 2, a]
            in_link[i, a] = foot_offset[i, a] - foot_radius[i] * up
        for a in range(3):
            in_body[i, a] = (foot_p[i, a] + foot_R[i, a, 0] * in_link[i, 0] + foot_R[i, a, 1] * in_link[i, 1]
                             + foot_R[i, a, 2] * in_link[i, 2])
        heights[i] = (p[b, 2] + R[b, 2, 0] * in_body[i, 0] + R[b, 2, 1] * in_body[i, 1] + R[b, 2, 2] * in_body[i, 2]
                      - ground_height)


@njit()
def bearing_points(heights, touching, foot_link, links, flatness, bearing):
    """The number n of foot points that bear the load, their indices in bearing[:n]: those touching within
    ``flatness`` of the lowest touching point of their link (foot_link: each point's link, numbered < links)."""
    lowest = np.full(links, np.inf)
    for i in range(heights.shape[0]):
        if touching[i]:
            lowest[foot_link[i]] = min(lowest[foot_link[i]], heights[i])
    n = 0
    for i in range(heights.shape[0]):
        if touching[i] and heights[i] < lowest[foot_link[i]] + flatness:
            bearing[n] = i
            n += 1
    return n
