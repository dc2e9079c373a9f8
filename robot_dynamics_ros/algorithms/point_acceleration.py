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
