"""Velocity Jacobians J and velocity-product accelerations Jdot v of points and frames fixed on bodies, exactly (no
finite difference): the one copy the simulator (point_kinematics.py), the legged controller (points) and the
Cartesian controller (a frame: ``frame_motion``) share.

PointKinematics gives, in world coordinates, the columns C_k = [c_ang; c_lin] of the motion subspace: the spatial
motion (Featherstone's, referred to the world origin) that qd_k gives its body. Then

    V_b = sum_{k moves b} C_k qd_k                                   body b's spatial velocity [omega_b; v_O,b]
    A_b = sum_{k moves b} V_{body(k)} x C_k qd_k                     its spatial acceleration when qdd = 0     (1)

(a column fixed in its body's frame changes as dC_k/dt = V_{body(k)} x C_k; the terms are Featherstone's
velocity-product accelerations c_i = v_i x S_i qd_i, summed base to tips as in RNEA's forward pass). A point x
(world coordinates) fixed on body b, with velocity v_x = v_O + omega x x, has the classical acceleration

    a_x = a_O + alpha x x + omega x v_x        (A_b = [alpha; a_O])                                           (2)

which with qdd = 0 is Jdot v; J is PointKinematics.jacobians. A frame's angular rows are alpha and the columns
c_ang; its linear rows are (2) at its origin. Written as loops (``body_motion``, ``point_rows``), compiled by numba
where the callers compile them.
"""
import numpy as np

from .backends import njit
from .point_kinematics import world_columns


def point_motion(kinematics, q, v, bodies, offsets, poses=None):
    """(x, J, Jdot_v) of k points: x (k, 3) their world positions, J (3k, nv) their world velocity Jacobians and
    Jdot_v (3k,) their accelerations with qdd = 0, the points at ``offsets`` (k, 3) in the frames of ``bodies`` (k,).
    kinematics: PointKinematics of the model; poses: its ``poses(q)`` where the caller has them
    (``point_motion_kernel`` run as plain Python; the controllers call it compiled)."""
    R, p = kinematics.poses(q) if poses is None else poses
    bodies = np.ascontiguousarray(bodies, dtype=np.int64)
    offsets = np.ascontiguousarray(offsets, dtype=float).reshape(-1, 3)
    nv, k = kinematics.model.nv, len(bodies)
    x, J, bias = np.empty((k, 3)), np.empty((3 * k, nv)), np.empty(3 * k)
    point_motion_kernel(*kinematics.column_constants, np.ascontiguousarray(R), np.ascontiguousarray(p),
                        np.asarray(v, dtype=float), bodies, offsets, np.empty((3, nv)), np.empty((3, nv)), x, J, bias)
    return x, J, bias


@njit()
def body_motion(column_body, moves, C_ang, C_lin, v, V, A):
    """V (nb, 6): each body's spatial velocity [omega_b; v_O,b]; A (nb, 6): its acceleration [alpha_b; a_O,b] with
    qdd = 0, eq. (1), from the world columns C_ang, C_lin (3, nv)."""
    nb, nv = moves.shape
    V[:, :] = 0.0
    A[:, :] = 0.0
    for b in range(nb):
        for c in range(nv):
            if moves[b, c]:
                for a in range(3):
                    V[b, a] += C_ang[a, c] * v[c]
                    V[b, 3 + a] += C_lin[a, c] * v[c]
    for c in range(nv):   # V_body(c) x C_c v_c: [omega x m_ang; omega x m_lin + v_O x m_ang], into each body c moves
        j = column_body[c]
        w0, w1, w2, u0, u1, u2 = V[j, 0], V[j, 1], V[j, 2], V[j, 3], V[j, 4], V[j, 5]
        m0, m1, m2 = C_ang[0, c] * v[c], C_ang[1, c] * v[c], C_ang[2, c] * v[c]
        l0, l1, l2 = C_lin[0, c] * v[c], C_lin[1, c] * v[c], C_lin[2, c] * v[c]
        p0, p1, p2 = w1 * m2 - w2 * m1, w2 * m0 - w0 * m2, w0 * m1 - w1 * m0
        p3 = w1 * l2 - w2 * l1 + u1 * m2 - u2 * m1
        p4 = w2 * l0 - w0 * l2 + u2 * m0 - u0 * m2
        p5 = w0 * l1 - w1 * l0 + u0 * m1 - u1 * m0
        for b in range(nb):
            if moves[b, c]:
                A[b, 0] += p0
                A[b, 1] += p1
                A[b, 2] += p2
                A[b, 3] += p3
                A[b, 4] += p4
                A[b, 5] += p5


@njit()
def point_rows(moves_b, C_ang, C_lin, V_b, A_b, x, J, bias):
    """J (3, nv): the world velocity Jacobian of the point x (world coordinates) on a body whose moving columns are
    moves_b, xdot = (c_lin + c_ang x x) qd; bias (3,): its acceleration with qdd = 0, eq. (2), from the body's V_b
    and A_b (``body_motion``)."""
    x0, x1, x2 = x[0], x[1], x[2]
    for c in range(J.shape[1]):
        if moves_b[c]:
            J[0, c] = C_lin[0, c] + C_ang[1, c] * x2 - C_ang[2, c] * x1
            J[1, c] = C_lin[1, c] + C_ang[2, c] * x0 - C_ang[0, c] * x2
            J[2, c] = C_lin[2, c] + C_ang[0, c] * x1 - C_ang[1, c] * x0
        else:
            J[0, c] = J[1, c] = J[2, c] = 0.0
    w0, w1, w2 = V_b[0], V_b[1], V_b[2]
    y0 = V_b[3] + w1 * x2 - w2 * x1   # v_x = v_O + omega x x
    y1 = V_b[4] + w2 * x0 - w0 * x2
    y2 = V_b[5] + w0 * x1 - w1 * x0
    bias[0] = A_b[3] + A_b[1] * x2 - A_b[2] * x1 + w1 * y2 - w2 * y1                                     # (2)
    bias[1] = A_b[4] + A_b[2] * x0 - A_b[0] * x2 + w2 * y0 - w0 * y2
    bias[2] = A_b[5] + A_b[0] * x1 - A_b[1] * x0 + w0 * y1 - w1 * y0


@njit()
def point_motion_kernel(column_body, S_ang, S_lin, moves, R, p, v, bodies, offsets, C_ang, C_lin, x, J, bias):
    """``point_motion`` as loops, for numba, into the given arrays: C_ang, C_lin (3, nv) the world columns
    (PointKinematics.columns), x (k, 3), J (3k, nv), bias (3k,) = Jdot v by (1) and (2); the arguments after moves
    as point_motion's, the poses (R, p) given."""
    world_columns(column_body, S_ang, S_lin, R, p, C_ang, C_lin)   # c_ang = R_j s_ang, c_lin = R_j s_lin - c_ang x p_j
    V, A = np.empty((moves.shape[0], 6)), np.empty((moves.shape[0], 6))
    body_motion(column_body, moves, C_ang, C_lin, v, V, A)
    for i in range(bodies.shape[0]):
        b = bodies[i]
        for a in range(3):
            x[i, a] = p[b, a] + R[b, a, 0] * offsets[i, 0] + R[b, a, 1] * offsets[i, 1] + R[b, a, 2] * offsets[i, 2]
        point_rows(moves[b], C_ang, C_lin, V[b], A[b], x[i], J[3 * i:3 * i + 3], bias[3 * i:3 * i + 3])


@njit()
def frame_motion(column_body, S_ang, S_lin, moves, R, p, v, body, R_tip, p_tip, C_ang, C_lin, V, A, R_frame,
                 p_frame, J, bias):
    """The pose (R_frame, p_frame), Jacobian J (6 x nv, [angular; linear] at the frame origin, world axes) and
    Jdot v (``bias``: [alpha; the origin's acceleration] with qdd = 0, (1) and (2)) of a frame fixed on ``body`` at
    (R_tip, p_tip) in its frame, on the body poses R, p; C_ang, C_lin (3, nv), V, A (nb, 6): scratch."""
    world_columns(column_body, S_ang, S_lin, R, p, C_ang, C_lin)
    body_motion(column_body, moves, C_ang, C_lin, v, V, A)
    for a in range(3):
        for col in range(3):
            R_frame[a, col] = R[body, a, 0] * R_tip[0, col] + R[body, a, 1] * R_tip[1, col] + \
                R[body, a, 2] * R_tip[2, col]
        p_frame[a] = p[body, a] + R[body, a, 0] * p_tip[0] + R[body, a, 1] * p_tip[1] + R[body, a, 2] * p_tip[2]
    for c in range(J.shape[1]):   # omega = sum c_ang qd over the columns that move the body
        for a in range(3):
            J[a, c] = C_ang[a, c] if moves[body, c] else 0.0
    for a in range(3):
        bias[a] = A[body, a]
    point_rows(moves[body], C_ang, C_lin, V[body], A[body], p_frame, J[3:], bias[3:])
