"""World poses of the bodies and the velocity Jacobians of points fixed on them (Jain Lemma 2: base-to-tips scatter).

The same kinematics as ``kinematics.py`` (body_transforms, frame_jacobian), written with 3x3 rotations instead of
6x6 Plücker transforms because the simulator's ground contact needs it for many points every step:

    R_i = R_p E_i^T R_J(q_i),   p_i = p_p + R_p (r_i + E_i^T p_J(q_i))      (X_tree[i] = plucker(E_i, r_i))

and a point x fixed on body b moves with  xdot = sum_{j in ancestors(b)} (c_lin_j + c_ang_j x) qd_j, where
column k of joint j has c_ang = R_j s_ang (angular velocity in world) and c_lin = R_j s_lin - c_ang x p_j (the
velocity of the world origin carried by the column), s = the column of the motion subspace in the body frame.

J-dot qd of points and frames, from the same columns with qdd = 0, is ``point_acceleration.py``'s (one copy, for the
simulator, the legged and the Cartesian controllers).
"""
import numpy as np

from .. import spatial
from ..model.model import FREE_FLYER, PLANAR, PRISMATIC, REVOLUTE
from .backends import njit
from .spatial_kernels import quaternion_rotation


class PointKinematics:
    """Per-model constants (E_i^T, r_i, ancestor masks) and ``poses`` / ``jacobian`` at a configuration."""

    def __init__(self, model):
        self.model = model
        self.E_T = np.array([X[:3, :3].T for X in model.X_tree]).reshape(model.nb, 3, 3)
        self.r = np.array([spatial.pose_from_plucker(X)[1] for X in model.X_tree]).reshape(model.nb, 3)
        S = model.motion_subspace   # (nv, 6) [angular; linear] columns in the body frames
        self.S_ang, self.S_lin = S[:, :3], S[:, 3:]
        self.column_body = np.repeat(np.arange(model.nb), np.diff(np.append(model.idx_v, model.nv)))
        self.revolute = np.flatnonzero(model.joint_type == REVOLUTE)
        self.prismatic = np.flatnonzero(model.joint_type == PRISMATIC)
        self.other = np.flatnonzero((model.joint_type == FREE_FLYER) | (model.joint_type == PLANAR))
        self.K = np.array([spatial.skew(a) for a in model.axis[self.revolute]]).reshape(-1, 3, 3)
        self.K2 = self.K @ self.K
        depth = np.zeros(model.nb, dtype=int)
        for i in range(model.nb):
            depth[i] = depth[model.parent[i]] + 1 if model.parent[i] >= 0 else 0
        self.levels = [np.flatnonzero(depth == d) for d in range(depth.max(initial=0) + 1)]
        # moves[b, k]: column k belongs to a joint between body b and the root (b's ancestors and b itself)
        self.moves = np.zeros((model.nb, model.nv), dtype=bool)
        for b in range(model.nb):
            j = b
            while j >= 0:
                self.moves[b, self.column_body == j] = True
                j = model.parent[j]
        # the arguments of the loop kernels (``body_poses``, point_acceleration.point_motion_kernel), contiguous
        self.tree = (np.ascontiguousarray(model.parent, dtype=np.int64),
                     np.ascontiguousarray(model.joint_type, dtype=np.int64),
                     np.ascontiguousarray(model.idx_q, dtype=np.int64), np.ascontiguousarray(model.axis, dtype=float),
                     np.ascontiguousarray(self.E_T), np.ascontiguousarray(self.r))
        self.column_constants = (np.ascontiguousarray(self.column_body, dtype=np.int64),
                                 np.ascontiguousarray(self.S_ang), np.ascontiguousarray(self.S_lin), self.moves)

    def poses(self, q):
        """(R, p): (nb, 3, 3) body orientations and (nb, 3) origins in the world (root) frame. The scatter from base to
        tips runs one tree level at a time (all bodies of a depth at once: their parents are done)."""
        m = self.model
        R_J, p_J = self._joint_poses(q)
        A = self.E_T @ R_J                                           # body i in its parent's frame: (A_i, t_i)
        t = self.r + np.einsum('kij,kj->ki', self.E_T, p_J)
        R, p = np.empty((m.nb, 3, 3)), np.empty((m.nb, 3))
        R[self.levels[0]], p[self.levels[0]] = A[self.levels[0]], t[self.levels[0]]
        for bodies in self.levels[1:]:
            parents = m.parent[bodies]
            R[bodies] = R[parents] @ A[bodies]
            p[bodies] = p[parents] + np.einsum('kij,kj->ki', R[parents], t[bodies])
        return R, p

    def _joint_poses(self, q):
        """(R_J, p_J) of every body: the pose of its frame in its joint frame at q = 0 (X_J = plucker_from_pose(R_J,
        p_J)); revolute joints by Rodrigues' formula R_J = I + sin(q) K + (1 - cos(q)) K^2, K = skew(axis)."""
        m = self.model
        R_J, p_J = np.tile(np.eye(3), (m.nb, 1, 1)), np.zeros((m.nb, 3))
        angle = q[m.idx_q[self.revolute]]
        R_J[self.revolute] += np.sin(angle)[:, None, None] * self.K + (1.0 - np.cos(angle))[:, None, None] * self.K2
        p_J[self.prismatic] = m.axis[self.prismatic] * q[m.idx_q[self.prismatic]][:, None]
        for i in self.other:
            k = m.idx_q[i]
            if m.joint_type[i] == FREE_FLYER:
                R_J[i], p_J[i] = spatial.quaternion_to_matrix(q[k + 3:k + 7]), q[k:k + 3]
            else:   # PLANAR
                c, s = q[k + 2], q[k + 3]
                R_J[i], p_J[i] = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]), np.array([q[k], q[k + 1], 0.0])
        return R_J, p_J

    def columns(self, R, p):
        """(C_ang, C_lin): (3, nv) each; column k is what qd_k adds to the angular velocity and to the velocity of
        the world origin point, were it fixed on the moving body."""
        b = self.column_body
        C_ang = np.einsum('kij,kj->ik', R[b], self.S_ang)
        C_lin = np.einsum('kij,kj->ik', R[b], self.S_lin) - _cross(C_ang, p[b].T)
        return C_ang, C_lin

    def jacobians(self, C_ang, C_lin, bodies, x):
        """(k, 3, nv) world velocity Jacobians of the points x (k, 3) (world coordinates) fixed on ``bodies`` (k,):
        xdot = (C_lin + C_ang x x) qd over the columns that move the body."""
        J = C_lin[None] + _cross(C_ang[None], x[:, :, None])
        return J * self.moves[bodies][:, None, :]


    def vertical_rows(self, C_ang, C_lin, bodies, x):
        """(k, nv): the z rows of ``jacobians`` alone, (C_lin + C_ang x x)_z, for many points at once."""
        return (C_lin[2] + C_ang[0] * x[:, 1:2] - C_ang[1] * x[:, 0:1]) * self.moves[bodies]


def _cross(a, b):
    """a x b over axis -2 (the 3 components), broadcast over the others (np.cross is slow on small arrays)."""
    return np.stack([a[..., 1, :] * b[..., 2, :] - a[..., 2, :] * b[..., 1, :],
                     a[..., 2, :] * b[..., 0, :] - a[..., 0, :] * b[..., 2, :],
                     a[..., 0, :] * b[..., 1, :] - a[..., 1, :] * b[..., 0, :]], axis=-2)


@njit()
def body_poses(parent, kind, idx_q, axis, E_T, r, q, R, p):
    """R (nb, 3, 3), p (nb, 3): ``PointKinematics.poses`` as loops (bodies in tree order, parents first), for numba:
    R_i = R_p E_i^T R_J(q_i), p_i = p_p + R_p (r_i + E_i^T p_J(q_i)) (the module's docstring)."""
    for i in range(parent.shape[0]):
        R_J, p_J = joint_pose(kind[i], axis[i], q, idx_q[i])
        E = E_T[i]
        # body i in its parent's frame: A = E^T R_J, t = r + E^T p_J
        A = (E[0, 0] * R_J[0] + E[0, 1] * R_J[3] + E[0, 2] * R_J[6],
             E[0, 0] * R_J[1] + E[0, 1] * R_J[4] + E[0, 2] * R_J[7],
             E[0, 0] * R_J[2] + E[0, 1] * R_J[5] + E[0, 2] * R_J[8],
             E[1, 0] * R_J[0] + E[1, 1] * R_J[3] + E[1, 2] * R_J[6],
             E[1, 0] * R_J[1] + E[1, 1] * R_J[4] + E[1, 2] * R_J[7],
             E[1, 0] * R_J[2] + E[1, 1] * R_J[5] + E[1, 2] * R_J[8],
             E[2, 0] * R_J[0] + E[2, 1] * R_J[3] + E[2, 2] * R_J[6],
             E[2, 0] * R_J[1] + E[2, 1] * R_J[4] + E[2, 2] * R_J[7],
             E[2, 0] * R_J[2] + E[2, 1] * R_J[5] + E[2, 2] * R_J[8])
        t = (r[i, 0] + E[0, 0] * p_J[0] + E[0, 1] * p_J[1] + E[0, 2] * p_J[2],
             r[i, 1] + E[1, 0] * p_J[0] + E[1, 1] * p_J[1] + E[1, 2] * p_J[2],
             r[i, 2] + E[2, 0] * p_J[0] + E[2, 1] * p_J[1] + E[2, 2] * p_J[2])
        j = parent[i]
        for a in range(3):
            if j < 0:
                p[i, a] = t[a]
                for b in range(3):
                    R[i, a, b] = A[3 * a + b]
            else:
                p[i, a] = p[j, a] + R[j, a, 0] * t[0] + R[j, a, 1] * t[1] + R[j, a, 2] * t[2]
                for b in range(3):
                    R[i, a, b] = R[j, a, 0] * A[b] + R[j, a, 1] * A[3 + b] + R[j, a, 2] * A[6 + b]


@njit()
def joint_pose(kind, axis, q, k):
    """(R_J, p_J): ``PointKinematics._joint_poses`` of one body with joint coordinates q[k:], as values (R_J row-major)
    (revolute by Rodrigues' formula with K^2 = a a^T - |a|^2 I; free flyer [x y z qx qy qz qw]; planar
    [x y cos sin])."""
    if kind == REVOLUTE:
        s, c1 = np.sin(q[k]), 1.0 - np.cos(q[k])
        x, y, z = axis[0], axis[1], axis[2]
        n = x * x + y * y + z * z
        return (1.0 + c1 * (x * x - n), -s * z + c1 * x * y, s * y + c1 * x * z,
                s * z + c1 * x * y, 1.0 + c1 * (y * y - n), -s * x + c1 * y * z,
                -s * y + c1 * x * z, s * x + c1 * y * z, 1.0 + c1 * (z * z - n)), (0.0, 0.0, 0.0)
    if kind == PRISMATIC:
        return (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0), (axis[0] * q[k], axis[1] * q[k], axis[2] * q[k])
    if kind == FREE_FLYER:
        return quaternion_rotation(q[k + 3], q[k + 4], q[k + 5], q[k + 6]), (q[k], q[k + 1], q[k + 2])
    if kind == PLANAR:
        c, s = q[k + 2], q[k + 3]
        return (c, -s, 0.0, s, c, 0.0, 0.0, 0.0, 1.0), (q[k], q[k + 1], 0.0)
    return (1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0), (0.0, 0.0, 0.0)


@njit()
def world_columns(column_body, S_ang, S_lin, R, p, C_ang, C_lin):
    """C_ang, C_lin (3, nv): what qd_k adds to the angular velocity and to the velocity of the world origin (``columns``)."""
    for k in range(column_body.shape[0]):
        b = column_body[k]
        for a in range(3):
            C_ang[a, k] = R[b, a, 0] * S_ang[k, 0] + R[b, a, 1] * S_ang[k, 1] + R[b, a, 2] * S_ang[k, 2]
            C_lin[a, k] = R[b, a, 0] * S_lin[k, 0] + R[b, a, 1] * S_lin[k, 1] + R[b, a, 2] * S_lin[k, 2]
        C_lin[0, k] -= C_ang[1, k] * p[b, 2] - C_ang[2, k] * p[b, 1]
        C_lin[1, k] -= C_ang[2, k] * p[b, 0] - C_ang[0, k] * p[b, 2]
        C_lin[2, k] -= C_ang[0, k] * p[b, 1] - C_ang[1, k] * p[b, 0]
