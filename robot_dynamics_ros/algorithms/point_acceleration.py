"""Velocity Jacobians J and velocity-product accelerations Jdot v of points fixed on bodies, exactly (no finite
difference): the contact kinematics the legged controller shares with the simulator (point_kinematics.py).

PointKinematics gives, in world coordinates, the columns C_k = [c_ang; c_lin] of the motion subspace: the spatial
motion (Featherstone's, referred to the world origin) that qd_k gives its body. Then

    V_b = sum_{k moves b} C_k qd_k                                   body b's spatial velocity [omega_b; v_O,b]
    A_b = sum_{k moves b} V_{body(k)} x C_k qd_k                     its spatial acceleration when qdd = 0     (1)

(a column fixed in its body's frame changes as dC_k/dt = V_{body(k)} x C_k; the terms are Featherstone's
velocity-product accelerations c_i = v_i x S_i qd_i, summed base to tips as in RNEA's forward pass). A point x
(world coordinates) fixed on body b, with velocity v_x = v_O + omega x x, has the classical acceleration

    a_x = a_O + alpha x x + omega x v_x        (A_b = [alpha; a_O])                                           (2)

which with qdd = 0 is Jdot v; J is PointKinematics.jacobians.
"""
import numpy as np

from .backends import njit
from .point_kinematics import world_columns


def point_motion(kinematics, q, v, bodies, offsets, poses=None):
    """(x, J, Jdot_v) of k points: x (k, 3) their world positions, J (3k, nv) their world velocity Jacobians and
    Jdot_v (3k,) their accelerations with qdd = 0, the points at ``offsets`` (k, 3) in the frames of ``bodies`` (k,).
    kinematics: PointKinematics of the model; poses: its ``poses(q)`` where the caller has them."""
    R, p = kinematics.poses(q) if poses is None else poses
    bodies = np.asarray(bodies, dtype=int)
    x = p[bodies] + np.einsum('kij,kj->ki', R[bodies], np.asarray(offsets, dtype=float).reshape(-1, 3))
    C_ang, C_lin = kinematics.columns(R, p)
    J = kinematics.jacobians(C_ang, C_lin, bodies, x).reshape(-1, kinematics.model.nv)
    return x, J, velocity_product_accelerations(kinematics, C_ang, C_lin, v, bodies, x)


def velocity_product_accelerations(kinematics, C_ang, C_lin, v, bodies, x):
    """(3k,) Jdot v of the points x (k, 3) (world coordinates) fixed on ``bodies``: (1) then (2)."""
    moving = kinematics.moves * np.asarray(v, dtype=float)          # (nb, nv): the columns that move each body, x qd
    omega, v_origin = moving @ C_ang.T, moving @ C_lin.T             # (nb, 3) each: V_b
    column = kinematics.column_body
    m_ang, m_lin = C_ang.T * v[:, None], C_lin.T * v[:, None]        # (nv, 3): C_k qd_k
    product_ang = _cross(omega[column], m_ang)                       # V_body(k) x C_k qd_k (motion cross product)
    product_lin = _cross(omega[column], m_lin) + _cross(v_origin[column], m_ang)
    alpha, a_origin = kinematics.moves[bodies] @ product_ang, kinematics.moves[bodies] @ product_lin   # (1)
    w = omega[bodies]
    v_x = v_origin[bodies] + _cross(w, x)
    return (a_origin + _cross(alpha, x) + _cross(w, v_x)).ravel()                                      # (2)


def _cross(a, b):
    """Row-wise a x b of (k, 3) arrays (np.cross is slow on small arrays)."""
    return np.stack([a[:, 1] * b[:, 2] - a[:, 2] * b[:, 1],
                     a[:, 2] * b[:, 0] - a[:, 0] * b[:, 2],
                     a[:, 0] * b[:, 1] - a[:, 1] * b[:, 0]], axis=1)


@njit()
def point_motion_kernel(column_body, S_ang, S_lin, moves, R, p, v, bodies, offsets, C_ang, C_lin, x, J, bias):
    """``point_motion`` as loops, for numba, into the given arrays: C_ang, C_lin (3, nv) the world columns
    (PointKinematics.columns), x (k, 3), J (3k, nv), bias (3k,) = Jdot v by (1) and (2); the arguments after moves
    as point_motion's, the poses (R, p) given."""
    nb, nv = moves.shape
    world_columns(column_body, S_ang, S_lin, R, p, C_ang, C_lin)   # c_ang = R_j s_ang, c_lin = R_j s_lin - c_ang x p_j
    V = np.zeros((nb, 6))   # V_b = [omega_b; v_O,b]
    for b in range(nb):
        for c in range(nv):
            if moves[b, c]:
                for a in range(3):
                    V[b, a] += C_ang[a, c] * v[c]
                    V[b, 3 + a] += C_lin[a, c] * v[c]
    P = np.empty((nv, 6))   # V_body(c) x C_c v_c: [omega x m_ang; omega x m_lin + v_O x m_ang]
    for c in range(nv):
        j = column_body[c]
        w0, w1, w2, u0, u1, u2 = V[j, 0], V[j, 1], V[j, 2], V[j, 3], V[j, 4], V[j, 5]
        m0, m1, m2 = C_ang[0, c] * v[c], C_ang[1, c] * v[c], C_ang[2, c] * v[c]
        l0, l1, l2 = C_lin[0, c] * v[c], C_lin[1, c] * v[c], C_lin[2, c] * v[c]
        P[c, 0], P[c, 1], P[c, 2] = w1 * m2 - w2 * m1, w2 * m0 - w0 * m2, w0 * m1 - w1 * m0
        P[c, 3] = w1 * l2 - w2 * l1 + u1 * m2 - u2 * m1
        P[c, 4] = w2 * l0 - w0 * l2 + u2 * m0 - u0 * m2
        P[c, 5] = w0 * l1 - w1 * l0 + u0 * m1 - u1 * m0
    for i in range(bodies.shape[0]):
        b = bodies[i]
        for a in range(3):
            x[i, a] = p[b, a] + R[b, a, 0] * offsets[i, 0] + R[b, a, 1] * offsets[i, 1] + R[b, a, 2] * offsets[i, 2]
        x0, x1, x2 = x[i, 0], x[i, 1], x[i, 2]
        for c in range(nv):   # xdot = (c_lin + c_ang x x) qd over the columns that move b
            if moves[b, c]:
                J[3 * i, c] = C_lin[0, c] + C_ang[1, c] * x2 - C_ang[2, c] * x1
                J[3 * i + 1, c] = C_lin[1, c] + C_ang[2, c] * x0 - C_ang[0, c] * x2
                J[3 * i + 2, c] = C_lin[2, c] + C_ang[0, c] * x1 - C_ang[1, c] * x0
            else:
                J[3 * i, c] = J[3 * i + 1, c] = J[3 * i + 2, c] = 0.0
        A = np.zeros(6)   # (1): A_b = [alpha; a_O]
        for c in range(nv):
            if moves[b, c]:
                for a in range(6):
                    A[a] += P[c, a]
        w0, w1, w2 = V[b, 0], V[b, 1], V[b, 2]
        y0 = V[b, 3] + w1 * x2 - w2 * x1   # v_x = v_O + omega x x
        y1 = V[b, 4] + w2 * x0 - w0 * x2
        y2 = V[b, 5] + w0 * x1 - w1 * x0
        bias[3 * i] = A[3] + A[1] * x2 - A[2] * x1 + w1 * y2 - w2 * y1                                   # (2)
        bias[3 * i + 1] = A[4] + A[2] * x0 - A[0] * x2 + w2 * y0 - w0 * y2
        bias[3 * i + 2] = A[5] + A[0] * x1 - A[1] * x0 + w0 * y1 - w1 * y0
