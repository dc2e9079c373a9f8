"""Cartesian control of one link frame of a fixed-base arm: impedance and operational-space laws (no ROS import).

Task coordinates are those of ``frame_jacobian(..., 'local_world_aligned')``: rows [angular; linear], the angular
velocity and the velocity of the frame's origin, both in the root (robot base) frame; a wrench is [torque; force]
at the frame's origin in the same axes, so that tau = J^T w.

- 'impedance':          tau = J^T (K e + D e_dot + w_ff) + g(q) + N^T tau_0
- 'operational_space':  tau = J^T (Lambda (xdd_ref + Kd e_dot + Kp e - Jdot qd) + w_ff) + h(q, qd) + N^T tau_0
  (Khatib 1987, eq. 51; h = C qd + g from RNEA with qdd = 0), which makes the task acceleration xdd_ref + Kd e_dot
  + Kp e (the same stiffness values, then in 1/s^2, for every robot).

e = [log(R_ref R^T); p_ref - p]: the orientation error is the rotation vector that turns the frame onto the target
(on SO(3), not a difference of angles), in root axes. Lambda = (J M^-1 J^T)^-1 from the U D U^T factorisation of M
(Saha; Jain's innovations factorisation; ``algorithms/operational_space.py`` gives the same Lambda by Jain's Omega
scatter): W = D^-1/2 U^-1 J^T, J M^-1 J^T = W^T W. Near a singularity it is damped: when the least singular value
sigma of J (its linear rows divided by the arm's reach: unit-free) falls below SINGULAR_THRESHOLD, Lambda = (J M^-1
J^T + mu^2 S)^-1 with mu^2 = SINGULAR_THRESHOLD^2 - sigma^2 (a variable damping, continuous in q, as Nakamura's) and
S diagonal, the mean diagonal of J M^-1 J^T's rotation and translation blocks (each row damped in its own units).
Impedance damping is critical through Lambda: D = 2 zeta K^1/2 sqrtm(K^-1/2 Lambda K^-1/2) K^1/2
(each mode of Lambda x'' + D x' + K x = 0 then has the ratio zeta). The nullspace torque tau_0 = Kn (q_posture - q)
- 2 zeta sqrt(Kn M_ii) qd acts through the dynamically consistent projector N^T = I - J^T Lambda J M^-1 (Khatib,
eq. 39), so it adds no task force.

On a model with coupled mimic joints (``model/mimic.py``) every quantity is on its independent coordinates: the
frame's kinematics and M run on the tree at q_tree = Gq q + q_offset, qd_tree = G qd, and are projected with the
joint map G: J = J_tree G, Jdot qd = Jdot_tree qd_tree (G is constant), M = G^T M_tree G (factored as U D U^T by
``dense_udut``: the reduced M is no tree's), h = G^T h_tree.
"""
import math

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import fast, spatial
from ..algorithms.backends import compiled, njit
from ..algorithms.cholesky import cholesky_factor
from ..algorithms.crba import crba_kernel
from ..algorithms.dense_udut import dense_udut
from ..algorithms.inverse_mass import inverse_mass_times, unit_upper_sweep
from ..algorithms.packing import packed
from ..algorithms.point_acceleration import frame_motion
from ..algorithms.point_kinematics import PointKinematics, body_poses
from ..algorithms.udut import udut_kernel
from ..fast.control_kernel import FRICTION_SMOOTHING_VELOCITY, coupling_arrays, reduced_rnea
from ..model.model import PRISMATIC, REVOLUTE, Model

LAWS = ('impedance', 'operational_space')
SINGULAR_THRESHOLD = 0.01      # least singular value of J (linear rows per reach) below which Lambda is damped
QUATERNION_TOLERANCE = 1e-3    # | |q| - 1 | above this: a target orientation is refused, not normalised
MAX_TARGET_GAP = 0.5           # s; consecutive targets further apart are steps: no reference velocity from them
TARGET_BUFFER = 1000           # target poses kept ahead of the controller's time
# Joint speeds beyond a guard are braked at qdd = -JOINT_SPEED_BRAKING / T (qd - clip(qd)), T the joint-state period:
# the excess x follows x_k+1 = (1 - c) x_k with each command held over the period after its state (c = this value),
# and x_k+1 = x_k - c x_k-1 with a command acting a period late, whose roots z^2 - z + c = 0 are a double 0.5 at
# c = 0.25: the fastest decay without oscillation there, and stable in both.
JOINT_SPEED_BRAKING = 0.25
JOINT_SPEED_FADE = 1.2   # the task's authority fades out between a guard speed and this many times it


@njit(cache=True)
def rotation_vector(R: NDArray) -> NDArray:
    """log(R) as a rotation vector (axis times angle in [0, pi]), accurate near 0 and near pi."""
    cos = min(max(0.5 * (R[0, 0] + R[1, 1] + R[2, 2] - 1.0), -1.0), 1.0)
    angle = math.acos(cos)
    w = np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]])
    if angle < 1e-6:
        return 0.5 * w
    if angle < math.pi - 1e-4:
        return w * (0.5 * angle / math.sin(angle))
    # near pi the skew part vanishes: the axis from the symmetric part, (R + R^T) / 2 - cos I = (1 - cos) a a^T
    B = 0.5 * (R + R.T) - cos * np.eye(3)
    k = int(np.argmax(np.diag(B)))
    axis = B[k] / math.sqrt(np.dot(B[k], B[k]))   # row k is (1 - cos) a_k a
    if np.dot(axis, w) < 0:
        axis = -axis
    return axis * angle


def rotation_matrix(w: NDArray) -> NDArray:
    """exp(skew(w)) by Rodrigues' formula."""
    angle = math.sqrt(w @ w)
    if angle < 1e-12:
        return np.eye(3) + spatial.skew(w)
    return spatial.rotation_about_axis(w / angle, angle)


@njit(cache=True)
def frame_state(parent, joint_type, idx_q, axis, E_T, r, column_body, S_ang, S_lin, moves, body, R_tip, p_tip, q, qd,
                R, p, J, bias, R_bodies, p_bodies, C_ang, C_lin, V, A):
    """Pose (R, p), Jacobian J (6 x n, [angular; linear], root axes, at the frame origin) and Jdot qd (``bias``) of a
    frame fixed on ``body`` at (R_tip, p_tip) in it: the bodies' poses by the scatter base to tips (Jain Lemma 2,
    ``point_kinematics.body_poses``), then the frame's motion on the world columns (``point_acceleration.
    frame_motion``, the contact points' J and Jdot v too). R_bodies .. A: scratch (``EndEffector``)."""
    body_poses(parent, joint_type, idx_q, axis, E_T, r, q, R_bodies, p_bodies)
    frame_motion(column_body, S_ang, S_lin, moves, R_bodies, p_bodies, qd, body, R_tip, p_tip, C_ang, C_lin, V, A, R,
                 p, J, bias)


class EndEffector:
    """Kinematics of one link frame of a fixed-base model with revolute and prismatic joints: ``update(q, qd)`` fills
    R, p (pose in the ``base`` link's frame, by default the root's), J (6 x n, as ``frame_jacobian(...,
    'local_world_aligned')``, in base axes), Jdot_qd (6,), in one compiled call where numba is installed. With coupled
    mimic joints, on the tree (``tree_J``: 6 x tree.nv) projected onto the model's coordinates (module docstring);
    ``moving``: the coordinates that move the frame."""

    def __init__(self, model: Model, link: str, base: str | None = None) -> None:
        if not model.fixed_base or np.any((model.joint_type != REVOLUTE) & (model.joint_type != PRISMATIC)):
            raise ValueError(f"Cartesian control needs a fixed-base robot with revolute and prismatic joints; "
                             f"{model.name!r} has others")
        if link not in model.frames:
            raise ValueError(f"no link {link!r} in {model.name!r}; links: {sorted(model.frames)}")
        frame = model.frames[link]
        if frame.body < 0:
            raise ValueError(f"link {link!r} is fixed to the root of {model.name!r}: no joint moves it")
        base = model.root_link if base is None else base
        if base not in model.frames or model.frames[base].body >= 0:
            raise ValueError(f"robot base link {base!r} must be a link of {model.name!r} that no joint moves")
        n, tree = model.nv, model.tree   # the kinematics run on the tree: a body per joint, mimic joints too
        nt = tree.nv
        self.link, self.base = link, base
        R_base, p_base = spatial.pose_from_plucker(model.frames[base].X_body)   # the base link in the root frame
        kinematics = PointKinematics(tree)
        R_tip, p_tip = spatial.pose_from_plucker(frame.X_body)
        self._constants = (*kinematics.tree, *kinematics.column_constants, int(frame.body), np.ascontiguousarray(R_tip),
                           np.ascontiguousarray(p_tip), np.ascontiguousarray(R_base), np.ascontiguousarray(p_base))
        self.coupling = model.coupling
        ancestors = kinematics.moves[frame.body]   # the tree's coordinates that move the frame
        self.moving = ancestors if model.coupling is None else np.any(model.coupling.G[ancestors] != 0, axis=0)
        self.R, self.p, self.J, self.Jdot_qd = np.eye(3), np.zeros(3), np.zeros((6, n)), np.zeros(6)
        self.tree_J = self.J if model.coupling is None else np.zeros((6, nt))
        nb = tree.nb   # frame_state's scratch: the bodies' poses, the world columns, the bodies' V and A
        self.scratch = (np.zeros((nb, 3, 3)), np.zeros((nb, 3)), np.zeros((3, nt)), np.zeros((3, nt)),
                        np.zeros((nb, 6)), np.zeros((nb, 6)))
        self.row_scale = np.array([1.0, 1.0, 1.0] + [1.0 / reach(model)] * 3)   # J unit-free: radians, reaches
        self._kernel = compiled(frame_state) if fast.BACKEND == 'numba' else frame_state

    def update(self, q: NDArray, qd: NDArray) -> None:
        *constants, R_base, p_base = self._constants
        c = self.coupling
        if c is not None:
            q, qd = c.tree_positions(q), c.tree_velocities(qd)
        self._kernel(*constants, q, qd, self.R, self.p, self.tree_J, self.Jdot_qd, *self.scratch)
        if c is not None:
            self.J[:] = self.tree_J @ c.G
        # root frame -> base link frame: p_b = R_b^T (p - p_b), rows rotated by R_b^T
        self.R[:], self.p[:] = R_base.T @ self.R, R_base.T @ (self.p - p_base)
        for rows in (slice(0, 3), slice(3, 6)):
            self.J[rows] = R_base.T @ self.J[rows]
            self.Jdot_qd[rows] = R_base.T @ self.Jdot_qd[rows]


@njit(cache=True)
def segment_velocity(R0, p0, R1, p1, gap, velocity):
    """velocity = [R0 log(R0^T R1); p1 - p0] / gap (root axes): the constant velocity from (R0, p0) to (R1, p1)."""
    velocity[:3] = R0 @ rotation_vector(R0.T @ R1) / gap
    velocity[3:] = (p1 - p0) / gap


@njit(cache=True)
def advance(R0, p0, velocity, dt, R, p):
    """R = exp(skew(w dt)) R0 (Rodrigues), p = p0 + v dt, for velocity = [w; v]."""
    w0, w1, w2 = velocity[0] * dt, velocity[1] * dt, velocity[2] * dt
    angle = math.sqrt(w0 * w0 + w1 * w1 + w2 * w2)
    s, c1 = (math.sin(angle) / angle, (1.0 - math.cos(angle)) / angle**2) if angle > 1e-12 else (1.0, 0.5)
    E = np.array([[1.0 - c1 * (w1 * w1 + w2 * w2), -s * w2 + c1 * w0 * w1, s * w1 + c1 * w0 * w2],
                  [s * w2 + c1 * w0 * w1, 1.0 - c1 * (w0 * w0 + w2 * w2), -s * w0 + c1 * w1 * w2],
                  [-s * w1 + c1 * w0 * w2, s * w0 + c1 * w1 * w2, 1.0 - c1 * (w0 * w0 + w1 * w1)]])
    R[:, :] = E @ R0
    for k in range(3):
        p[k] = p0[k] + velocity[3 + k] * dt


@njit(cache=True)
def sample_target(t, stamps, poses, ring, R, p, velocity):
    """CartesianTarget.sample on its ring buffer: stamps, poses (rows R | p) and ring [first, count]; the targets
    done are dropped from the ring, the reference written into R, p and velocity [angular; linear]."""
    size = len(stamps)
    first, count = ring[0], ring[1]
    while count > 2 and stamps[(first + 1) % size] <= t:   # targets before the segment around t (or the last) are done
        first, count = (first + 1) % size, count - 1
    ring[0], ring[1] = first, count
    second = (first + 1) % size
    velocity[:] = 0.0
    held = first
    if count > 1 and t >= stamps[first]:
        gap, dt = stamps[second] - stamps[first], t - stamps[first]
        if gap <= MAX_TARGET_GAP and dt <= gap + MAX_TARGET_GAP:
            segment_velocity(poses[first, :3], poses[first, 3], poses[second, :3], poses[second, 3], gap, velocity)
            advance(poses[first, :3], poses[first, 3], velocity, dt, R, p)
            return
        if dt >= gap:
            held = second
    R[:, :] = poses[held, :3]
    p[:] = poses[held, 3]


class CartesianTarget:
    """The target poses of the controller, each to be reached at its stamp, and the reference between them.

    ``set(position, quaternion xyzw, stamp)``: ValueError for non-finite values or a quaternion whose norm is not 1
    (within QUATERNION_TOLERANCE). Targets are kept in stamp order (up to TARGET_BUFFER; one stamped at or before
    the last replaces them all: a new plan). ``sample(t)`` interpolates between the two targets around t when they
    are at most MAX_TARGET_GAP apart (the position linearly, the rotation on SO(3), the velocity their difference
    over the gap), so a stream stamped ahead of time (as the demo's) rides out late messages; after the last target
    it extrapolates with the last segment's velocity up to MAX_TARGET_GAP (a stream stamped now), then holds the
    last target at rest. Before the first target, or across a longer gap, the earlier target is held. The targets
    are a ring buffer of arrays (``sample_target``, which the compiled ``cartesian_step.CartesianStep`` runs too).
    """

    def __init__(self, R: ArrayLike, p: ArrayLike, stamp: float = 0.0) -> None:
        self.stamps, self.poses = np.zeros(TARGET_BUFFER), np.zeros((TARGET_BUFFER, 4, 3))   # poses: rows R | p
        self.ring = np.zeros(2, dtype=np.int64)   # [first, count]
        self._append(float(stamp), np.asarray(R, dtype=float), np.asarray(p, dtype=float))
        self.R_ref, self.p_ref, self.velocity_ref = np.eye(3), np.zeros(3), np.zeros(6)   # what sample writes
        self._sample = compiled(sample_target) if fast.BACKEND == 'numba' else sample_target

    def _last(self) -> int:
        return (self.ring[0] + self.ring[1] - 1) % TARGET_BUFFER

    @property
    def R(self) -> NDArray:
        return self.poses[self._last(), :3]

    @property
    def p(self) -> NDArray:
        return self.poses[self._last(), 3]

    @staticmethod
    def checked(position: ArrayLike, quaternion: ArrayLike) -> tuple[NDArray, NDArray]:
        """(R, p) of a target, or ValueError saying what is wrong with it."""
        p, quat = np.asarray(position, dtype=float), np.asarray(quaternion, dtype=float)
        if not (np.all(np.isfinite(p)) and np.all(np.isfinite(quat))):
            raise ValueError(f"target pose is not finite: position {p.tolist()}, orientation {quat.tolist()}")
        norm = math.sqrt(quat @ quat)
        if abs(norm - 1.0) > QUATERNION_TOLERANCE:
            raise ValueError(f"target orientation is not a unit quaternion (norm {norm:.6g}): {quat.tolist()}")
        return spatial.quaternion_to_matrix(quat / norm), p

    def set(self, position: ArrayLike, quaternion: ArrayLike, stamp: float) -> None:
        R, p = self.checked(position, quaternion)
        if stamp <= self.stamps[self._last()]:
            self.ring[:] = 0
        self._append(float(stamp), R, p)

    def _append(self, stamp, R, p):
        first, count = self.ring
        if count == TARGET_BUFFER:   # full: the oldest goes
            first, count = (first + 1) % TARGET_BUFFER, count - 1
        k = (first + count) % TARGET_BUFFER
        self.stamps[k], self.poses[k, :3], self.poses[k, 3] = stamp, R, p
        self.ring[:] = first, count + 1

    def sample(self, t: float) -> tuple[NDArray, NDArray, NDArray]:
        """(R_ref, p_ref, velocity_ref [angular; linear]) at time t; arrays of this object, valid until the next
        call."""
        self._sample(float(t), self.stamps, self.poses, self.ring, self.R_ref, self.p_ref, self.velocity_ref)
        return self.R_ref, self.p_ref, self.velocity_ref


@njit(cache=True)
def udut_diagonal(U, D):
    """diag(M) from M = U diag(D) U^T: M_ii = sum_k U_ik^2 D_k."""
    n = len(D)
    diagonal = np.zeros(n)
    for i in range(n):
        for k in range(i, n):
            diagonal[i] += U[i, k] * U[i, k] * D[k]
    return diagonal


@njit(cache=True)
def above_floor(A, floor):
    """Whether the symmetric A's least eigenvalue exceeds ``floor``: A - floor I is positive definite, which its
    Cholesky factorisation finds with every pivot positive (a tenth of the cost of the eigenvalues)."""
    n = A.shape[0]
    return cholesky_factor(A, np.arange(n), np.zeros((n, n)), n, floor, 0.0)


@njit(cache=True)
def task_inertia(J, row_scale, U, D):
    """(Lambda, damped): Lambda = (J M^-1 J^T)^-1 from M = U diag(D) U^T, damped near a singularity (module
    docstring)."""
    W = np.ascontiguousarray(J.T)
    unit_upper_sweep(U, W, W.shape[1])   # U^-1 J^T
    for k in range(len(D)):
        W[k] /= math.sqrt(D[k])
    compliance = W.T @ W
    scaled = J * row_scale.reshape(6, 1)
    gram = scaled @ scaled.T
    if above_floor(gram, SINGULAR_THRESHOLD**2):   # sigma above the threshold: the eigenvalues are not needed
        return np.linalg.inv(compliance), False
    sigma = math.sqrt(max(np.linalg.eigvalsh(gram)[0], 0.0))   # least singular value of the scaled J
    if sigma >= SINGULAR_THRESHOLD:
        return np.linalg.inv(compliance), False
    mu2 = SINGULAR_THRESHOLD**2 - sigma**2
    scale = np.empty(6)   # per row, the mean diagonal of its block (rotation or translation): never zero
    scale[:3], scale[3:] = np.trace(compliance[:3, :3]) / 3.0, np.trace(compliance[3:, 3:]) / 3.0
    return np.linalg.inv(compliance + mu2 * np.diag(scale)), True


@njit(cache=True)
def norm_scale(x, limit):
    """min(1, limit / |x|) for x (3,), without overflow (x may be 1e300)."""
    m = max(abs(x[0]), abs(x[1]), abs(x[2]))
    if m == 0.0:
        return 1.0
    size = math.sqrt((x[0] / m)**2 + (x[1] / m)**2 + (x[2] / m)**2)   # |x| / m
    return 1.0 if size * m <= limit else limit / m / size


@njit(cache=True)
def speed_scale(twist, magnitude, limits):
    """min(1, limit / (magnitude |part|)) over the angular and linear parts of a twist [angular; linear], limits
    (max angular, max linear speed): the factor that keeps magnitude * twist within both (magnitude may be 1e300)."""
    scale = 1.0
    for part in range(2):
        size = math.sqrt(twist[3 * part]**2 + twist[3 * part + 1]**2 + twist[3 * part + 2]**2)
        if size * magnitude > limits[part]:
            scale = min(scale, limits[part] / magnitude / size)
    return scale


@njit(cache=True)
def cartesian_law(P, Wk, a0, f_ext, G, Gq, q_offset, T, M_tree, parent, joint_type, idx_q, axis, E_T, r, column_body,
                  S_ang, S_lin, moves, body, R_tip, p_tip, base_R, base_p, law, gains, posture, effort_limit,
                  speed_limit, damping, friction, row_scale, q, qd, refs, R, p, J, Jdot_qd, R_bodies, p_bodies, C_ang,
                  C_lin, V, A, J_tree, work, error, tau):
    """One update of ``CartesianController``: the frame's kinematics (``frame_state``, in base axes), U D U^T and
    h or g from the table kernels on the packed model (P, Wk, a0, f_ext), then the law of the module docstring with
    the guards of the class; returns whether Lambda was damped. refs rows: p_ref | v_ref | R_ref (3 rows) | xdd_ref |
    wrench; gains: stiffness (6), zeta, Kn, max_force, max_torque, friction compensation (0 or 1), max angular speed,
    max linear speed, joint-speed damping rate; work rows: M (n, with coupled mimic joints only) | U (n) | D | h |
    zero; without them M is not formed (the law needs its factors only). ``error`` is the pose error
    e as measured, before the speed saturation. With coupled mimic joints (G has rows; P the tree's) the kinematics
    and M run on the tree (J_tree, M_tree, T: ``reduced_rnea``'s work rows) and are projected (module docstring)."""
    n = len(q)
    M, U, D, h, zero = work[:n], work[n:2 * n], work[2 * n], work[2 * n + 1], work[2 * n + 2]
    zero[:] = 0.0
    if G.shape[0] == 0:
        frame_state(parent, joint_type, idx_q, axis, E_T, r, column_body, S_ang, S_lin, moves, body, R_tip, p_tip, q,
                    qd, R, p, J, Jdot_qd, R_bodies, p_bodies, C_ang, C_lin, V, A)
        udut_kernel(P, Wk, q, U, D)   # M itself is not needed: its diagonal and products come from U D U^T
    else:   # on the tree at q_tree = Gq q + q_offset, qd_tree = G qd; Jdot_tree qd_tree is Jdot qd
        q_tree, qd_tree = Gq @ q + q_offset, G @ qd
        frame_state(parent, joint_type, idx_q, axis, E_T, r, column_body, S_ang, S_lin, moves, body, R_tip, p_tip,
                    q_tree, qd_tree, R, p, J_tree, Jdot_qd, R_bodies, p_bodies, C_ang, C_lin, V, A)
        J[:, :] = J_tree @ G
        crba_kernel(P, Wk, q_tree, M_tree)
        M[:, :] = G.T @ (M_tree @ G)
        dense_udut(M, U, D)
    R[:, :] = base_R.T @ R   # root -> base link axes (identity for the root link)
    p[:] = base_R.T @ (p - base_p)
    R_T = np.ascontiguousarray(base_R.T)
    J[:3] = R_T @ np.ascontiguousarray(J[:3])
    J[3:] = R_T @ np.ascontiguousarray(J[3:])
    Jdot_qd[:3] = R_T @ Jdot_qd[:3]
    Jdot_qd[3:] = R_T @ Jdot_qd[3:]
    Lambda, singular = task_inertia(J, row_scale, U, D)
    error[:3] = rotation_vector(np.ascontiguousarray(refs[2:5, :3]) @ R.T)
    error[3:] = refs[0, :3] - p
    stiffness, zeta = gains[:6], gains[6]
    rate = np.zeros((6, 6))   # D^-1 K: the twist per error the law settles at (no damping: 0, not saturated)
    task_damping = np.zeros((6, 6))
    if law == 0:   # impedance: D = 2 zeta K^1/2 sqrtm(K^-1/2 Lambda K^-1/2) K^1/2
        s = np.sqrt(stiffness)
        s_inverse = np.zeros(6)
        for k in range(6):
            if s[k] > 0:
                s_inverse[k] = 1.0 / s[k]
        a, Q = np.linalg.eigh(s_inverse.reshape(6, 1) * Lambda * s_inverse.reshape(1, 6))
        root = np.sqrt(np.maximum(a, 0.0))
        task_damping = (2.0 * zeta) * s.reshape(6, 1) * ((Q * root) @ Q.T) * s.reshape(1, 6)
        if zeta > 0:   # D^-1 K = K^-1/2 sqrtm(K^-1/2 Lambda K^-1/2)^-1 K^1/2 / (2 zeta), on the stiff axes
            root_inverse = np.zeros(6)
            for k in range(6):
                if root[k] > 1e-12 * root[5]:
                    root_inverse[k] = 1.0 / root[k]
            rate = s_inverse.reshape(6, 1) * ((Q * root_inverse) @ Q.T) * s.reshape(1, 6) / (2.0 * zeta)
    elif zeta > 0:   # operational space: Kd^-1 Kp
        for k in range(6):
            rate[k, k] = math.sqrt(stiffness[k]) / (2.0 * zeta)
    # speed saturation (Khatib 1987's velocity limit, crisp_controllers' error clip): the twist the law drives the
    # frame towards, v_ref + D^-1 K e, kept within the max angular and linear speeds by scaling e (first alone) and
    # v_ref, each as a whole (the direction kept)
    e, v_ref, limits = error.copy(), np.concatenate((refs[0, 3:], refs[1, 3:])), gains[11:13]
    for x, twist in ((e, rate), (v_ref, np.eye(6))):
        m = np.max(np.abs(x))
        if m > 0:
            x *= speed_scale(twist @ (x / m), m, limits)
    scale = speed_scale(v_ref + rate @ e, 1.0, limits)
    e *= scale
    v_ref *= scale
    e_dot = v_ref - J @ qd
    if law == 0:
        force = stiffness * e + task_damping @ e_dot
        reduced_rnea(P, Wk, a0, f_ext, G, Gq, q_offset, T, q, zero, zero, h)   # g(q)
    else:          # operational space: Lambda (xdd_ref + Kd e_dot + Kp e - Jdot qd)
        force = Lambda @ (refs[5] + stiffness * e + (2.0 * zeta) * np.sqrt(stiffness) * e_dot - Jdot_qd)
        reduced_rnea(P, Wk, a0, f_ext, G, Gq, q_offset, T, q, qd, zero, h)     # h(q, qd) = C qd + g
    wrench = refs[6]
    for rows, limit in ((0, gains[9]), (3, gains[8])):   # torque, force norms: the feed-forward, then the total
        block = slice(rows, rows + 3)
        force[block] += norm_scale(wrench[block], limit) * wrench[block]
        force[block] *= norm_scale(force[block], limit)
    excess = qd - np.minimum(np.maximum(qd, -speed_limit), speed_limit)   # joint speed beyond the guard's
    authority = 1.0   # of the task and nullspace terms: 1 up to the guard speed, 0 from JOINT_SPEED_FADE times it
    for k in range(n):
        if excess[k] != 0.0:
            authority = min(authority, max(0.0, 1.0 - abs(excess[k]) / ((JOINT_SPEED_FADE - 1.0) * speed_limit[k])))
    tau[:] = authority * (J.T @ force) + h
    kn = gains[7]
    if kn > 0:   # N^T tau0 = tau0 - J^T Lambda J M^-1 tau0
        tau0 = kn * (posture - q) - 2.0 * zeta * np.sqrt(kn * udut_diagonal(U, D)) * qd
        tau += authority * (tau0 - J.T @ (Lambda @ (J @ inverse_mass_times(U, D, tau0))))
    if gains[10] > 0:   # friction feed-forward at qd_ref = qd + M^-1 J^T Lambda (v_ref - J qd + lambda e) (class doc)
        sliding = e_dot.copy()
        if law == 1:   # lambda = Kp / Kd per axis
            sliding += rate @ e
        qd_ref = qd + inverse_mass_times(U, D, J.T @ (Lambda @ sliding))
        tau += damping * qd_ref + friction * np.tanh(qd_ref / FRICTION_SMOOTHING_VELOCITY)
    if authority < 1.0:   # brake the excess at the rate gains[13]: qdd = -rate excess
        tau -= gains[13] * (U @ (D * (U.T @ excess)))   # M excess
    for k in range(n):
        tau[k] = min(max(tau[k], -effort_limit[k]), effort_limit[k])
    return singular


class CartesianController:
    """The two laws of the module docstring on one link frame.

    stiffness: 6 values [rot_x, rot_y, rot_z, trans_x, trans_y, trans_z] in root axes: N m/rad and N/m for
    'impedance', accelerations per error (1/s^2) for 'operational_space'. damping_ratio zeta: 1 is critical.
    nullspace_stiffness Kn (N m/rad per joint) pulls the joints to ``posture`` without a task force. max_force,
    max_torque bound the commanded task wrench (norms of its force and torque); efforts are clamped to the URDF
    effort limits (or the lower ``effort_limit``). gravity: in the root frame (None: standard). base: a link fixed to
    the root in whose frame poses, velocities and wrenches are given (None: the root link). friction_compensation:
    add the URDF joint damping and friction as feed-forward, damping qd_ref + friction tanh(qd_ref / 0.01), at the
    joint velocity that has the reference's task velocity and the measured nullspace velocity: qd_ref = qd + J#
    (v_ref + lambda e - J qd), J# = M^-1 J^T Lambda (J qd_ref = v_ref + lambda e, and qd_ref - qd has no nullspace
    part). With J# v_ref alone, the velocity the arm gathers in the nullspace (the dynamically consistent inverse is
    not integrable: a 7-DOF arm drifts in its self-motion while the task tracks) met its URDF damping uncompensated,
    a task force: xArm7's 10 N m s/rad took the circle 4.7 mm and 9.9 deg off. The measured velocity enters through
    the nullspace only: a square J (6 DOF) gives qd_ref = J^-1 (v_ref + lambda e), no velocity feedback (which on
    damping stiff for its link is unstable once a command is held). lambda e (Slotine and Li's reference velocity,
    lambda = Kp / Kd per axis, operational_space only; 0 for impedance, whose compliance is the point): a joint
    whose reference velocity crosses zero while its error asks to move gets its Coulomb friction compensated in the
    direction of the error, not left to a feedback whose stiffness is Lambda Kp (small on a light wrist): xArm7's 1 N
    m per joint left 0.67 deg on the circle without it (in process, lockstep).

    Guards, so that a far or unreachable target, or a huge feed-forward, moves the arm at a bounded speed:
    - speed saturation (Khatib 1987's velocity limit; the error clip of crisp_controllers): the twist the law drives
      the frame towards at rest, v_ref + D^-1 K e (Kd^-1 Kp for 'operational_space'), is kept within
      ``max_angular_speed`` (rad/s) and ``max_linear_speed`` (m/s) by scaling e and v_ref as a whole: the error is
      clipped, so a target 10 m away pulls as one at the max speed's distance does (and a disturbance at rest is
      held with K times the clipped error at most);
    - the feed-forward wrench is clipped to max_force, max_torque before it is added, and then the total: a
      1e30 N feed-forward acts as max_force, and the spring and damper still answer it;
    - joint speeds beyond ``joint_speed_limit`` (per joint) are braked, tau -= c M (qd - clip(qd)), a deceleration
      at c = JOINT_SPEED_BRAKING / period (``period``: the joint-state period), and the task's and nullspace's
      efforts fade out as the excess grows to (JOINT_SPEED_FADE - 1) times the limit (a singular posture can ask
      a light wrist for any speed);
    - efforts are clamped to the effort limits.
    Defaults: no guard (the law alone); ``speed_limits`` gives the node's, from the URDF velocity limits.
    ``check_gains`` says whether the gains keep the sampled loop stable.
    ``update(q, qd, R_ref, p_ref, velocity_ref, acceleration_ref, wrench)`` returns tau; ``singular``
    says whether Lambda was damped at the last update, ``error`` is its e.
    """

    def __init__(self, model: Model, end_effector: str, law: str = 'impedance',
                 stiffness: ArrayLike = (50.0, 50.0, 50.0, 500.0, 500.0, 500.0), damping_ratio: float = 1.0,
                 nullspace_stiffness: float = 0.0, posture: ArrayLike | None = None, max_force: float = math.inf,
                 max_torque: float = math.inf, gravity: ArrayLike | None = None,
                 effort_limit: ArrayLike | None = None, base: str | None = None,
                 friction_compensation: bool = False, max_angular_speed: float = math.inf,
                 max_linear_speed: float = math.inf, joint_speed_limit: ArrayLike | None = None,
                 period: float = 1e-3) -> None:
        if law not in LAWS:
            raise ValueError(f"unknown Cartesian control law {law!r}; expected one of {LAWS}")
        self.model, self.law, self.ee = model, law, EndEffector(model, end_effector, base)
        self.gravity = gravity
        self.effort_limit = np.array(model.effort_limit if effort_limit is None else np.minimum(
            model.effort_limit, np.abs(np.asarray(effort_limit, dtype=float))))
        self.stiffness = np.asarray(stiffness, dtype=float).reshape(6)
        if not (np.all(np.isfinite(self.stiffness)) and np.all(self.stiffness >= 0)):
            raise ValueError(f"stiffness must be 6 finite non-negative values, got {self.stiffness.tolist()}")
        for name, value in (('damping_ratio', damping_ratio), ('nullspace_stiffness', nullspace_stiffness),
                            ('max_force', max_force), ('max_torque', max_torque),
                            ('max_angular_speed', max_angular_speed), ('max_linear_speed', max_linear_speed)):
            if not value >= 0:
                raise ValueError(f"{name} must be non-negative, got {value}")
        if not (math.isfinite(period) and period > 0):
            raise ValueError(f"period must be positive and finite, got {period}")
        self.zeta, self.nullspace_stiffness = float(damping_ratio), float(nullspace_stiffness)
        self.max_force, self.max_torque = float(max_force), float(max_torque)
        self._posture = (model.neutral() if posture is None else
                         np.array(posture, dtype=float).reshape(model.nv))   # written in place: the kernel holds it
        self._law = LAWS.index(law)
        self.joint_speed_limit = np.full(model.nv, np.inf) if joint_speed_limit is None else np.abs(
            np.asarray(joint_speed_limit, dtype=float).reshape(model.nv))
        self._gains = np.concatenate([self.stiffness, [self.zeta, self.nullspace_stiffness, self.max_force,
                                                       self.max_torque, float(friction_compensation),
                                                       float(max_angular_speed), float(max_linear_speed),
                                                       JOINT_SPEED_BRAKING / period]])
        self._friction = np.array(model.damping), np.array(model.friction)
        pack = packed(model.tree)   # (with coupled mimic joints the law projects the tree's dynamics)
        self._model_arrays = (pack.table, np.zeros_like(pack.data.work), pack.base_acceleration(gravity),
                              pack.no_external_force, *coupling_arrays(model), np.zeros((model.tree.nv,) * 2))
        n = model.nv
        self._references = np.zeros((7, 6))   # rows: p_ref | v_ref ([angular; linear]) | R_ref | xdd_ref | wrench
        self._work = np.zeros((2 * n + 3, n))  # rows: M | U | D | h | zero (``cartesian_law``)
        self.tau = np.zeros(n)
        self.singular = False
        self.error = np.zeros(6)   # e = [rotation vector; position] of the last update
        self._kernel = compiled(cartesian_law) if fast.BACKEND == 'numba' else cartesian_law
        ee = self.ee   # cartesian_law's arguments before (q, qd) and after them
        self.law_constants = (*self._model_arrays, *ee._constants, self._law, self._gains, self._posture,
                              self.effort_limit, self.joint_speed_limit, *self._friction, ee.row_scale)
        self.law_outputs = (self._references, ee.R, ee.p, ee.J, ee.Jdot_qd, *ee.scratch, ee.tree_J, self._work,
                            self.error, self.tau)

    @property
    def posture(self) -> NDArray:
        """The nullspace posture (model order); setting it copies the values in."""
        return self._posture

    @posture.setter
    def posture(self, values: ArrayLike) -> None:
        self._posture[:] = values

    def task_inertia(self, q: NDArray) -> tuple[NDArray, bool]:
        """(Lambda, damped) at q (``task_inertia``, as the law computes it)."""
        q = np.asarray(q, dtype=float)
        self.ee.update(q, np.zeros_like(q))
        U, d = fast.udut(self.model, q)
        return task_inertia(self.ee.J, self.ee.row_scale, U, d)

    def update(self, q: ArrayLike, qd: ArrayLike, R_ref: NDArray, p_ref: NDArray, velocity_ref: NDArray,
               acceleration_ref: NDArray | None = None, wrench: NDArray | None = None) -> NDArray:
        """Joint efforts of the law at (q, qd) for the reference pose, velocity ([angular; linear]), acceleration
        (operational_space only) and feed-forward wrench [torque; force] at the frame's origin, base axes; one
        compiled call (``cartesian_law``) where numba is installed. ``ee`` holds the frame's pose and Jacobian."""
        q, qd = np.ascontiguousarray(q, dtype=float), np.ascontiguousarray(qd, dtype=float)
        ee, r = self.ee, self._references
        r[0, :3], r[1, :3], r[2:5, :3] = p_ref, 0.0, R_ref
        r[0, 3:], r[1, 3:] = velocity_ref[:3], velocity_ref[3:]
        r[5] = 0.0 if acceleration_ref is None else acceleration_ref
        r[6] = 0.0 if wrench is None else wrench
        if not np.all(np.isfinite(r[6])):
            raise ValueError(f"feed-forward wrench is not finite: {r[6].tolist()}")
        self.singular = self._kernel(*self.law_constants, q, qd, *self.law_outputs)
        return self.tau.copy()


# ``speed_limits``' task speeds, as fractions of what the slowest joint at its velocity limit gives the frame: turning
# it, and moving it at the arm's reach. UR5 at a quarter of that linear speed (0.86 m/s) had its base joint at 72 %
# of its limit in the open workspace; at a tenth (0.35 m/s) its joints stay below the guard until the arm stretches.
ANGULAR_SPEED_FRACTION = 0.25
LINEAR_SPEED_FRACTION = 0.1
JOINT_SPEED_GUARD = 0.7     # of each URDF velocity limit: joint speeds beyond are braked (``speed_limits``)


def speed_limits(model: Model, link: str) -> tuple[float, float, NDArray]:
    """(max_angular_speed rad/s, max_linear_speed m/s, joint_speed_limit) for the guards of ``CartesianController``
    on this link, from the URDF velocity limits of the joints that move it: ANGULAR_SPEED_FRACTION of the slowest
    revolute joint's limit, LINEAR_SPEED_FRACTION of that speed at the arm's ``reach`` (or of a prismatic joint's
    limit), and JOINT_SPEED_GUARD of every joint's limit (inf where the URDF gives none). The fractions leave room
    for the postures where the task needs several joints, or one close to the frame, to move it."""
    ee = EndEffector(model, link)
    limit = np.where((model.velocity_limit > 0) & np.isfinite(model.velocity_limit), model.velocity_limit, np.inf)
    kind = model.joint_type[model.coordinate_bodies]   # of each coordinate (a coupled mimic joint has none)
    revolute, prismatic = ee.moving & (kind == REVOLUTE), ee.moving & (kind == PRISMATIC)
    turning = np.min(limit[revolute], initial=np.inf)
    linear = min(turning * reach(model), np.min(limit[prismatic], initial=np.inf))
    return ANGULAR_SPEED_FRACTION * turning, LINEAR_SPEED_FRACTION * linear, JOINT_SPEED_GUARD * limit


GAIN_SAMPLES = 50   # configurations (fixed seed) besides the middle of the limits over which ``check_gains`` holds


def _gain_samples(model: Model, link: str, base: str | None) -> list[tuple[NDArray, NDArray, NDArray]]:
    """(Lambda^-1 as the law damps it, diag M, 1 / diag M^-1) at the middle of the limits and GAIN_SAMPLES random
    configurations; cached on the model."""
    key = ('cartesian_gain_samples', link, base)
    if key not in model._cache:
        ee, rng, samples = EndEffector(model, link, base), np.random.default_rng(0), []
        for k in range(GAIN_SAMPLES + 1):
            q = model.random_configuration(rng) if k else model.middle_of_limits()
            ee.update(q, np.zeros(model.nv))
            U, d = fast.udut(model, q)
            Lambda, _ = task_inertia(ee.J, ee.row_scale, U, d)
            U_inverse = np.linalg.inv(U)
            M_inverse = U_inverse.T @ (U_inverse / d[:, None])   # M = U D U^T
            samples.append((np.linalg.inv(Lambda), np.diag(np.linalg.inv(M_inverse)), 1.0 / np.diag(M_inverse)))
        model._cache[key] = samples
    return model._cache[key]


def held_loop_is_stable(kp: float, kd: float, period: float) -> bool:
    """Whether e'' = -(kp e + kd e') stays stable when each command, computed from the state at the start of a
    period, is held over that period (zero-order hold, as the lockstep simulator and an in-process loop apply it):
    the spectral radius of the sampled map on (e, e') is below 1. (The computed-torque check also delays each
    command by a period; with that delay the node's default 50 N m/rad would be refused on UR5's wrist, a mode of
    615 rad/s: w T = 0.62 at 1 kHz, beyond that model's 0.43 and within this one's 1.)"""
    T = period
    A = np.array([[1.0 - 0.5 * T * T * kp, T - 0.5 * T * T * kd],
                  [-T * kp, 1.0 - T * kd]])
    return bool(np.max(np.abs(np.linalg.eigvals(A))) < 1.0)


def check_gains(model: Model, link: str, law: str, stiffness: ArrayLike, damping_ratio: float,
                nullspace_stiffness: float, period: float, base: str | None = None) -> None:
    """ValueError unless the gains keep the sampled loop stable at the joint-state period (``held_loop_is_stable``:
    at damping ratio 1, w T < 1; zeta w T < 1 for larger ratios; no damping is never stable), mode by mode:
    - 'operational_space' makes each task axis e'' = -(Kp e + 2 zeta sqrt(Kp) e'), whatever the posture;
    - 'impedance' makes Lambda x'' + D x' + K x = 0, whose modes K v = w^2 Lambda v each have the ratio zeta: e'' =
      -(w^2 e + 2 zeta w e'), w^2 the eigenvalues of K^1/2 Lambda^-1 K^1/2; Lambda depends on the posture (a light
      wrist has a small one: a fast mode), so they are checked at the middle of the limits and GAIN_SAMPLES seeded
      random configurations (``_gain_samples``);
    - the nullspace term, per joint on the smallest inertia it can meet there, 1 / (M^-1)_ii (the others free):
      e'' = -(Kn e + 2 zeta sqrt(Kn M_ii) e') / m.
    Axes with zero stiffness have no feedback to destabilise. No damping (zeta = 0) is unstable with any stiffness."""
    stiffness = np.asarray(stiffness, dtype=float).reshape(6)
    zeta, kn = float(damping_ratio), float(nullspace_stiffness)
    rate = f"{1.0 / period:g} joint states per second (each command held over the period after its state)"
    samples = _gain_samples(model, link, base) if law == 'impedance' or kn > 0 else []
    if law == 'operational_space':
        modes = stiffness[stiffness > 0]
    else:
        root = np.sqrt(stiffness)
        modes = np.concatenate([np.linalg.eigvalsh(root[:, None] * compliance * root[None, :])
                                for compliance, _, _ in samples])
        modes = modes[modes > 0]
    for w2 in np.unique(modes):
        if not held_loop_is_stable(w2, 2.0 * zeta * math.sqrt(w2), period):
            raise ValueError(f"stiffness and damping_ratio make the {law} loop unstable at {rate}: a task mode of "
                             f"{math.sqrt(w2):.4g} rad/s with damping ratio {zeta:g} (the sampled loop needs a ratio "
                             f"above 0, w T below 1 at ratio 1 and ratio w T below 1); lower them")
    if kn > 0:
        for _, diagonal, smallest in samples:
            for M_ii, m in zip(diagonal, smallest):
                if not held_loop_is_stable(kn / m, 2.0 * zeta * math.sqrt(kn * M_ii) / m, period):
                    raise ValueError(f"nullspace.stiffness {kn:g} with damping_ratio {zeta:g} makes the nullspace "
                                     f"loop unstable at {rate} on a joint of inertia {m:.3g}; lower it")


def reach(model: Model) -> float:
    """The sum of the distances between consecutive joint frames (m): the length that makes J's rows unit-free."""
    return float(sum(np.linalg.norm(spatial.pose_from_plucker(X)[1]) for X in model.X_tree)) or 1.0


def default_end_effector(model: Model, srdf=None) -> str:
    """The link a Cartesian controller moves by default: the parent link of the SRDF's first end effector, when an
    SRDF with one is given; else the tip of the longest chain: of the links on the body with the most joints to the
    root, the last in URDF order (a tool or flange link fixed to the last body, where the URDF has one), unless
    that chain ends in a gripper, joints coupled by <mimic>: then the link the gripper's joints hang from (Panda's
    panda_hand: the fingers' limits would stop a task given to a finger)."""
    if srdf is not None and srdf.end_effectors:
        return srdf.end_effectors[0].parent_link
    depth = np.zeros(model.nb, dtype=int)
    for i in range(model.nb):
        depth[i] = depth[model.parent[i]] + 1 if model.parent[i] >= 0 else 1
    deepest = int(np.argmax(depth)) if model.nb else -1
    coupled = set(model.mimic) | {master for master, _, _ in model.mimic.values()}
    body, finger = deepest, None
    while body >= 0 and model.body_joint_names[body] in coupled:   # up through the gripper's joints
        finger, body = body, model.parent[body]
    if finger is not None:
        return model.frames[model.body_names[finger]].parent_link
    return [name for name, frame in model.frames.items() if frame.body == deepest][-1]


POSTURE_SAMPLES = 200   # configurations (fixed seed) ``dexterous_posture`` chooses from
LIMIT_MARGIN = 0.5      # rad (m): the distance from every joint limit a start posture keeps, where the range allows


def manipulability(ee: EndEffector, q: NDArray) -> float:
    """The least singular value of the frame's Jacobian at q, its linear rows divided by the arm's reach."""
    ee.update(q, np.zeros_like(q))
    return float(np.linalg.svd(ee.J * ee.row_scale[:, None], compute_uv=False)[-1])


def dexterous_posture(model: Model, link: str) -> NDArray:
    """A start posture far from singularities and from the joint limits for Cartesian control (URDF zero poses are
    often stretched or have wrist axes aligned): of the middle of the limits and POSTURE_SAMPLES seeded random
    configurations within them (revolute joints within +-pi of the middle), the one whose frame is above the base
    (z > 0) with the largest ``manipulability``, among those that keep every joint LIMIT_MARGIN from its limits (a
    quarter of the range where that is less): a task that moves the frame around the start must not run a joint into
    its stop (Z1's joint 4, 0.18 rad from its limit at the most manipulable sample, stopped the 5 cm demo circle)."""
    ee = EndEffector(model, link)
    middle = model.middle_of_limits()
    low, high = np.maximum(model.lower, middle - np.pi), np.minimum(model.upper, middle + np.pi)
    margin = np.minimum(LIMIT_MARGIN, 0.25 * (model.upper - model.lower))
    rng = np.random.default_rng(0)
    best, best_value = middle, (False, -1.0)
    for k in range(POSTURE_SAMPLES + 1):
        q = middle if k == 0 else rng.uniform(low, high)
        value = (bool(np.all(np.minimum(q - model.lower, model.upper - q) >= margin)), manipulability(ee, q))
        if ee.p[2] > 0 and value > best_value:
            best, best_value = q, value
    return best


PLANES = {'xy': (0, 1), 'yz': (1, 2), 'xz': (0, 2)}   # axes of the circle's plane


def smoothstep(s: float) -> float:
    """10 s^3 - 15 s^4 + 6 s^5 on [0, 1], 0 before, 1 after."""
    s = min(max(s, 0.0), 1.0)
    return s**3 * (10.0 - 15.0 * s + 6.0 * s * s)


def circle_offset(t, radius, period, ramp_time, plane):
    """The target's offset from the start pose at time t (s) after the start: a circle through the start point,
    r(t) (cos(w t) - 1, sin(w t)) in ``plane``, r growing from 0 to ``radius`` over ``ramp_time``."""
    offset = np.zeros(3)
    angle = 2.0 * np.pi * t / period
    r = radius * smoothstep(t / ramp_time)
    i, j = PLANES[plane]
    offset[i], offset[j] = r * (np.cos(angle) - 1.0), r * np.sin(angle)
    return offset
