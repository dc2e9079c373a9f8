"""The spatial operations the recursions are written with, on the packed model: Plücker transforms as rotation
E + translation r, spatial cross products and rigid-body inertia products written with 3D cross products
(Featherstone, RBDA Sec. 2.8 and Table A.3). Motion vectors are [angular; linear], force vectors [moment; force],
as in ``spatial.py``.
"""
import numpy as np

from .. import spatial
from .backends import njit
from .packing import AXIS, AXIS_INDEX, CONTINUED, E_TREE, FIRST_MOMENT, IBAR, JOINT_TYPE, Q_END, Q_INDEX, R_TREE, \
    TRANSFORM

AXIS0, E0, R0, H0, IBAR0 = AXIS.start, E_TREE.start, R_TREE.start, FIRST_MOMENT.start, IBAR.start

REVOLUTE, PRISMATIC, FREE_FLYER, PLANAR = 0, 1, 2, 3   # as model.model

quaternion_rotation = njit()(spatial.quaternion_rotation)   # compiled code imports it from here, marked


@njit()
def parent_transform(P, i, q, X):
    """Xup_i = X_J(q) X_tree,i of row i into X = [E (9, row-major); r (3)]: E rotates parent coordinates into body
    coordinates, r is the body origin in the parent frame. plucker(E1, r1) plucker(E2, r2) =
    plucker(E1 E2, r2 + E2^T r1). The row's joint coordinates are q[Q_INDEX:Q_END]."""
    kind = P[i, TRANSFORM]
    k = int(P[i, AXIS_INDEX])
    t = E0
    if kind == REVOLUTE and k >= 0:
        # about +-e_k: R^T keeps row k of E_tree and turns rows k1, k2 by the angle +-q_i
        qi = q[int(P[i, Q_INDEX])]
        c, s = np.cos(qi), P[i, AXIS0 + k] * np.sin(qi)
        k1, k2 = (k + 1) % 3, (k + 2) % 3
        for col in range(3):
            e1, e2 = P[i, t + 3 * k1 + col], P[i, t + 3 * k2 + col]
            X[3 * k + col] = P[i, t + 3 * k + col]
            X[3 * k1 + col] = c * e1 + s * e2
            X[3 * k2 + col] = c * e2 - s * e1
        for k3 in range(3):
            X[9 + k3] = P[i, R0 + k3]
    elif kind == REVOLUTE:
        # X_J = plucker(R^T, 0), R = c 1 + s [a]x + (1 - c) a a^T (Rodrigues)
        qi = q[int(P[i, Q_INDEX])]
        ax, ay, az = P[i, AXIS0], P[i, AXIS0 + 1], P[i, AXIS0 + 2]
        c, s = np.cos(qi), np.sin(qi)
        k = 1.0 - c
        joint_pose_transform(P, i, c + k * ax * ax, -s * az + k * ax * ay, s * ay + k * ax * az,
                             s * az + k * ay * ax, c + k * ay * ay, -s * ax + k * ay * az,
                             -s * ay + k * az * ax, s * ax + k * az * ay, c + k * az * az, 0.0, 0.0, 0.0, X)
    elif kind == PRISMATIC:
        # X_J = plucker(1, a q): r = r_tree + E_tree^T a q
        qi = q[int(P[i, Q_INDEX])]
        ax, ay, az = P[i, AXIS0], P[i, AXIS0 + 1], P[i, AXIS0 + 2]
        for k9 in range(9):
            X[k9] = P[i, t + k9]
        for k3 in range(3):
            X[9 + k3] = P[i, R0 + k3] + qi * (P[i, t + k3] * ax + P[i, t + 3 + k3] * ay
                                                         + P[i, t + 6 + k3] * az)
    elif kind == FREE_FLYER:
        # X_J = plucker(R^T, p), R from the unit quaternion [x y z w] at q[Q_INDEX + 3]
        j = int(P[i, Q_INDEX])
        x, y, z, w = q[j + 3], q[j + 4], q[j + 5], q[j + 6]
        R00, R01, R02, R10, R11, R12, R20, R21, R22 = quaternion_rotation(x, y, z, w)
        joint_pose_transform(P, i, R00, R01, R02, R10, R11, R12, R20, R21, R22, q[j], q[j + 1], q[j + 2], X)
    elif kind == PLANAR:
        # X_J = plucker(Rz^T, [x y 0]), q = [x y cos sin]
        j = int(P[i, Q_INDEX])
        c, s = q[j + 2], q[j + 3]
        joint_pose_transform(P, i, c, -s, 0.0, s, c, 0.0, 0.0, 0.0, 1.0, q[j], q[j + 1], 0.0, X)
    else:
        # CONTINUED: the rows after the first of a multi-DOF joint share its frame (X = 1)
        for k9 in range(9):
            X[k9] = P[i, t + k9]
        for k3 in range(3):
            X[9 + k3] = P[i, R0 + k3]


@njit()
def joint_pose_transform(P, i, R00, R01, R02, R10, R11, R12, R20, R21, R22, p0, p1, p2, X):
    """X = plucker(R^T, p) X_tree,i = plucker(R^T E_tree, r_tree + E_tree^T p) for the joint pose (R row-major, p)
    of the body in the joint frame."""
    t = E0
    for col in range(3):
        e0, e1, e2 = P[i, t + col], P[i, t + 3 + col], P[i, t + 6 + col]
        X[col] = R00 * e0 + R10 * e1 + R20 * e2
        X[3 + col] = R01 * e0 + R11 * e1 + R21 * e2
        X[6 + col] = R02 * e0 + R12 * e1 + R22 * e2
    for k3 in range(3):
        X[9 + k3] = P[i, R0 + k3] + P[i, t + k3] * p0 + P[i, t + 3 + k3] * p1 + P[i, t + 6 + k3] * p2


@njit('b1(f8[:, ::1], f8[::1], f8)')
def unit_quaternions(P, q, tolerance):
    """Whether every floating joint's quaternion in q has unit norm within ``tolerance`` (False for a q of the wrong
    length). Called by the dispatcher before a table kernel (the generated code checks in its own preamble)."""
    if q.shape[0] != configuration_size(P):
        return False
    for i in range(P.shape[0]):
        if P[i, TRANSFORM] == FREE_FLYER:
            k = int(P[i, Q_INDEX]) + 3
            norm = np.sqrt(q[k] * q[k] + q[k + 1] * q[k + 1] + q[k + 2] * q[k + 2] + q[k + 3] * q[k + 3])
            if not abs(norm - 1.0) <= tolerance:
                return False
    return True


@njit()
def configuration_size(P):
    """nq of the packed model: where the last row's joint coordinates end."""
    return int(P[P.shape[0] - 1, Q_END]) if P.shape[0] > 0 else 0


@njit()
def keep_incoming_velocity(P, W, i, p, VIN, v):
    """Work field VIN of row i = v_in,i, the velocity the first row of its joint receives from the parent (v, before
    S_i qd_i is added), shared by the rows that continue the joint; the velocity-product term of the row is then
    v_in,i x S_i qd_i (see ``packing``)."""
    if P[i, TRANSFORM] == CONTINUED:
        for k in range(6):
            W[i, VIN + k] = W[p, VIN + k]
    else:
        for k in range(6):
            W[i, VIN + k] = v[k]


@njit()
def transform_motion(X, m, out):
    """out = X m: angular E w, linear E (v - r x w)."""
    wx, wy, wz = m[0], m[1], m[2]
    ux = m[3] - (X[10] * wz - X[11] * wy)
    uy = m[4] - (X[11] * wx - X[9] * wz)
    uz = m[5] - (X[9] * wy - X[10] * wx)
    for row in range(3):
        e0, e1, e2 = X[3 * row], X[3 * row + 1], X[3 * row + 2]
        out[row] = e0 * wx + e1 * wy + e2 * wz
        out[3 + row] = e0 * ux + e1 * uy + e2 * uz


@njit()
def transposed_force(X, f):
    """X^T f as a 6-tuple (values, kept in registers): force E^T f_lin, moment E^T n + r x (E^T f_lin)."""
    nx = X[0] * f[0] + X[3] * f[1] + X[6] * f[2]
    ny = X[1] * f[0] + X[4] * f[1] + X[7] * f[2]
    nz = X[2] * f[0] + X[5] * f[1] + X[8] * f[2]
    fx = X[0] * f[3] + X[3] * f[4] + X[6] * f[5]
    fy = X[1] * f[3] + X[4] * f[4] + X[7] * f[5]
    fz = X[2] * f[3] + X[5] * f[4] + X[8] * f[5]
    rx, ry, rz = X[9], X[10], X[11]
    return nx + ry * fz - rz * fy, ny + rz * fx - rx * fz, nz + rx * fy - ry * fx, fx, fy, fz


@njit()
def add_transposed_force(X, f, out):
    """out += X^T f."""
    carried = transposed_force(X, f)
    for k in range(6):
        out[k] += carried[k]


@njit()
def joint_motion(P, i, qi, out):
    """out = S_i q_i: [a q; 0] for a revolute joint, [0; a q] for a prismatic one."""
    lin = 0 if P[i, JOINT_TYPE] == REVOLUTE else 3
    for k in range(6):
        out[k] = 0.0
    k = int(P[i, AXIS_INDEX])
    if k >= 0:
        out[lin + k] = P[i, AXIS0 + k] * qi
    else:
        for k in range(3):
            out[lin + k] = P[i, AXIS0 + k] * qi


@njit()
def project_on_joint(P, i, f):
    """S_i^T f."""
    lin = 0 if P[i, JOINT_TYPE] == REVOLUTE else 3
    k = int(P[i, AXIS_INDEX])
    if k >= 0:
        return P[i, AXIS0 + k] * f[lin + k]
    return P[i, AXIS0] * f[lin] + P[i, AXIS0 + 1] * f[lin + 1] + P[i, AXIS0 + 2] * f[lin + 2]


@njit()
def cross_motion_add(v, m, out):
    """out += v x m = [w x m_ang; w x m_lin + v_lin x m_ang]."""
    out[0] += v[1] * m[2] - v[2] * m[1]
    out[1] += v[2] * m[0] - v[0] * m[2]
    out[2] += v[0] * m[1] - v[1] * m[0]
    out[3] += v[1] * m[5] - v[2] * m[4] + v[4] * m[2] - v[5] * m[1]
    out[4] += v[2] * m[3] - v[0] * m[5] + v[5] * m[0] - v[3] * m[2]
    out[5] += v[0] * m[4] - v[1] * m[3] + v[3] * m[1] - v[4] * m[0]


@njit()
def cross_force_add(v, f, out):
    """out += v x* f = [w x n + v_lin x f_lin; w x f_lin]."""
    out[0] += v[1] * f[2] - v[2] * f[1] + v[4] * f[5] - v[5] * f[4]
    out[1] += v[2] * f[0] - v[0] * f[2] + v[5] * f[3] - v[3] * f[5]
    out[2] += v[0] * f[1] - v[1] * f[0] + v[3] * f[4] - v[4] * f[3]
    out[3] += v[1] * f[5] - v[2] * f[4]
    out[4] += v[2] * f[3] - v[0] * f[5]
    out[5] += v[0] * f[4] - v[1] * f[3]


@njit()
def inertia_times(I, i, c0, m, out):
    """out = I_i m = [Ibar w + h x v_lin; mass v_lin - h x w] for the rigid-body inertia stored in row i of I
    from column c0 on as [mass, h (3), Ibar (9, row-major)]."""
    mass, hx, hy, hz = I[i, c0], I[i, c0 + 1], I[i, c0 + 2], I[i, c0 + 3]
    b = c0 + 4
    for row in range(3):
        out[row] = I[i, b + 3 * row] * m[0] + I[i, b + 3 * row + 1] * m[1] + I[i, b + 3 * row + 2] * m[2]
    out[0] += hy * m[5] - hz * m[4]
    out[1] += hz * m[3] - hx * m[5]
    out[2] += hx * m[4] - hy * m[3]
    out[3] = mass * m[3] - (hy * m[2] - hz * m[1])
    out[4] = mass * m[4] - (hz * m[0] - hx * m[2])
    out[5] = mass * m[5] - (hx * m[1] - hy * m[0])


@njit()
def rotated(X, Y, y0, stride, symmetric):
    """E^T Y E for the 3x3 block of Y at y0 (row stride ``stride``), as a row-major 9-tuple (values, not a buffer:
    the compiler keeps them in registers). Of a symmetric block the upper triangle is computed, then mirrored."""
    e0, e1, e2, e3, e4, e5, e6, e7, e8 = X[0], X[1], X[2], X[3], X[4], X[5], X[6], X[7], X[8]
    y00, y01, y02 = Y[y0], Y[y0 + 1], Y[y0 + 2]
    y10, y11, y12 = Y[y0 + stride], Y[y0 + stride + 1], Y[y0 + stride + 2]
    y20, y21, y22 = Y[y0 + 2 * stride], Y[y0 + 2 * stride + 1], Y[y0 + 2 * stride + 2]
    t00, t01, t02 = y00 * e0 + y01 * e3 + y02 * e6, y00 * e1 + y01 * e4 + y02 * e7, y00 * e2 + y01 * e5 + y02 * e8
    t10, t11, t12 = y10 * e0 + y11 * e3 + y12 * e6, y10 * e1 + y11 * e4 + y12 * e7, y10 * e2 + y11 * e5 + y12 * e8
    t20, t21, t22 = y20 * e0 + y21 * e3 + y22 * e6, y20 * e1 + y21 * e4 + y22 * e7, y20 * e2 + y21 * e5 + y22 * e8
    o00, o01, o02 = e0 * t00 + e3 * t10 + e6 * t20, e0 * t01 + e3 * t11 + e6 * t21, e0 * t02 + e3 * t12 + e6 * t22
    o11, o12, o22 = e1 * t01 + e4 * t11 + e7 * t21, e1 * t02 + e4 * t12 + e7 * t22, e2 * t02 + e5 * t12 + e8 * t22
    if symmetric:
        return o00, o01, o02, o01, o11, o12, o02, o12, o22
    return (o00, o01, o02, e1 * t00 + e4 * t10 + e7 * t20, o11, o12, e2 * t00 + e5 * t10 + e8 * t20,
            e2 * t01 + e5 * t11 + e8 * t21, o22)


@njit()
def add_transformed_rigid_inertia(X, Ic_i, Ic_p):
    """Ic_p += X^T Ic_i X for rigid-body inertias stored as [mass, h, Ibar] (Featherstone RBDA eq. 2.66):
    mass adds, h_p += E^T h + mass r, Ibar_p += E^T Ibar E + (r.a + r.b) 1 - a r^T - r b^T,
    with a = E^T h and b = a + mass r (from [u]x[w]x = w u^T - (u.w) 1)."""
    mass = Ic_i[0]
    r0, r1, r2 = X[9], X[10], X[11]
    a0 = X[0] * Ic_i[1] + X[3] * Ic_i[2] + X[6] * Ic_i[3]
    a1 = X[1] * Ic_i[1] + X[4] * Ic_i[2] + X[7] * Ic_i[3]
    a2 = X[2] * Ic_i[1] + X[5] * Ic_i[2] + X[8] * Ic_i[3]
    b0, b1, b2 = a0 + mass * r0, a1 + mass * r1, a2 + mass * r2
    Ic_p[0] += mass
    Ic_p[1] += b0
    Ic_p[2] += b1
    Ic_p[3] += b2
    ra_rb = r0 * (a0 + b0) + r1 * (a1 + b1) + r2 * (a2 + b2)
    a = (a0, a1, a2)
    b = (b0, b1, b2)
    r = (r0, r1, r2)
    rotated_Ibar = rotated(X, Ic_i, 4, 3, True)
    for row in range(3):
        for col in range(3):
            Ic_p[4 + 3 * row + col] += rotated_Ibar[3 * row + col] - a[row] * r[col] - r[row] * b[col] \
                + (ra_rb if row == col else 0.0)


@njit()
def add_congruence(X, IA, out):
    """out += X^T IA X for a symmetric 6x6 IA = [[A, B], [B^T, C]] (row-major, 36) and X = plucker(E, r): with
    A', B', C' the blocks rotated by E, the result is [[A' + [r]x B'^T - B'' [r]x, B''], [B''^T, C']],
    B'' = B' + [r]x C'."""
    A, B, C = rotated(X, IA, 0, 6, True), rotated(X, IA, 3, 6, False), rotated(X, IA, 21, 6, True)
    r = (X[9], X[10], X[11])
    B2 = (B[0] + r[1] * C[6] - r[2] * C[3], B[1] + r[1] * C[7] - r[2] * C[4], B[2] + r[1] * C[8] - r[2] * C[5],
          B[3] + r[2] * C[0] - r[0] * C[6], B[4] + r[2] * C[1] - r[0] * C[7], B[5] + r[2] * C[2] - r[0] * C[8],
          B[6] + r[0] * C[3] - r[1] * C[0], B[7] + r[0] * C[4] - r[1] * C[1], B[8] + r[0] * C[5] - r[1] * C[2])
    for row in range(3):
        for col in range(3):
            c1, c2 = (col + 1) % 3, (col + 2) % 3
            r1, r2 = (row + 1) % 3, (row + 2) % 3
            # [r]x B'^T: column col is r x (row col of B'); -B'' [r]x: row `row` is r x (row `row` of B'')
            out[6 * row + col] += A[3 * row + col] + (r[r1] * B[3 * col + r2] - r[r2] * B[3 * col + r1]) \
                + (r[c1] * B2[3 * row + c2] - r[c2] * B2[3 * row + c1])
            out[6 * row + 3 + col] += B2[3 * row + col]
            out[6 * (3 + col) + row] += B2[3 * row + col]
            out[6 * (3 + row) + 3 + col] += C[3 * row + col]
