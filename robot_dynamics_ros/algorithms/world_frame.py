"""The rows of the packed model (``packing``) in one frame for the whole tree: world-aligned, at the root's origin.

RNEA and U D U^T in body coordinates (``rnea.py``, ``udut.py``) carry every velocity, force and articulated inertia
across each joint with its transform Xup_i: a rotation and a cross product per body and a 6x6 congruence
X^T IA X per body in the gather. Their recursions hold in any one frame (Jain's spatial operators name no frame):
in a frame shared by every body each Xup_i is the identity, and what the body frames gave for free, a constant S_i
and inertia I_i, is computed once per step instead: S_i as the joint's world column and I_i rotated and shifted
into the frame (RBDA eq. 2.66). ``world_rnea`` and ``world_udut`` are the recursions in that frame. The frame is
aligned with the world and sits at the root body's origin, not at the world's, so that a robot far from the origin
keeps the lever arms, and the rounding, of a robot at it (Pinocchio's LOCAL_WORLD_ALIGNED). A simulator's contact
stage has the bodies' world poses and world columns anyway (``point_kinematics``): those are this frame's inputs.
"""
from .backends import njit
from .packing import FIRST_MOMENT, IBAR, MASS, WORLD

S_, I_ = WORLD['S'], WORLD['I']


@njit()
def world_rows(P, W, column_body, R, p, C_ang, C_lin):
    """Each row's motion column S_i and rigid-body inertia I_i ([mass, h, Ibar], as ``packing`` stores it) in the
    world-aligned frame at the root's origin p[0], into the work fields S and I of W, from the bodies' world poses R,
    p and their world columns C_ang, C_lin at the world origin (``point_kinematics.world_columns``); row i's body is
    column_body[i]."""
    rx, ry, rz = p[0, 0], p[0, 1], p[0, 2]
    for i in range(P.shape[0]):
        S, I = W[i, S_:S_ + 6], W[i, I_:I_ + 13]
        wx, wy, wz = C_ang[0, i], C_ang[1, i], C_ang[2, i]
        S[0], S[1], S[2] = wx, wy, wz
        S[3] = C_lin[0, i] + wy * rz - wz * ry               # the velocity at the root's origin: v_O + w x p_0
        S[4] = C_lin[1, i] + wz * rx - wx * rz
        S[5] = C_lin[2, i] + wx * ry - wy * rx
        mass = P[i, MASS]
        I[0] = mass
        b = column_body[i]
        h = P[i, FIRST_MOMENT.start:FIRST_MOMENT.stop]
        Ibar = P[i, IBAR.start:IBAR.stop]
        d = (p[b, 0] - rx, p[b, 1] - ry, p[b, 2] - rz)      # the body's origin from the frame's
        a = (R[b, 0, 0] * h[0] + R[b, 0, 1] * h[1] + R[b, 0, 2] * h[2],   # a = R h
             R[b, 1, 0] * h[0] + R[b, 1, 1] * h[1] + R[b, 1, 2] * h[2],
             R[b, 2, 0] * h[0] + R[b, 2, 1] * h[1] + R[b, 2, 2] * h[2])
        c = (a[0] + mass * d[0], a[1] + mass * d[1], a[2] + mass * d[2])   # h in the frame: R h + mass d
        I[1], I[2], I[3] = c[0], c[1], c[2]
        # Ibar in the frame: R Ibar R^T + (d.a + d.c) 1 - a d^T - d c^T (RBDA eq. 2.66, E = R^T, r = d)
        dd = d[0] * (a[0] + c[0]) + d[1] * (a[1] + c[1]) + d[2] * (a[2] + c[2])
        for row in range(3):
            t0 = R[b, row, 0] * Ibar[0] + R[b, row, 1] * Ibar[3] + R[b, row, 2] * Ibar[6]
            t1 = R[b, row, 0] * Ibar[1] + R[b, row, 1] * Ibar[4] + R[b, row, 2] * Ibar[7]
            t2 = R[b, row, 0] * Ibar[2] + R[b, row, 1] * Ibar[5] + R[b, row, 2] * Ibar[8]
            for col in range(3):
                I[4 + 3 * row + col] = t0 * R[b, col, 0] + t1 * R[b, col, 1] + t2 * R[b, col, 2] \
                    - a[row] * d[col] - d[row] * c[col] + (dd if row == col else 0.0)
