"""Compiled inertial-parameter regressor tau = Y pi (body columns), same maths and parameter order as
``algorithms/regressor.py``: kinematics as in RNEA, then each body's 6x10 wrench regressor A_i is carried to
every ancestor j, Y[j, body i] = S_j^T X_{j<-i}^* A_i = (X_{i<-j} S_j)^T A_i."""
from numba import njit

from .packing import PARENT, REGRESSOR
from .rnea_kernel import kinematic_scatter
from .spatial_kernels import joint_motion, transform_motion

SIGNATURE = 'void(f8[:, ::1], f8[:, ::1], f8[::1], f8[::1], f8[::1], f8[::1], f8[:, ::1])'
X_, V_, A_ = REGRESSOR['X'], REGRESSOR['v'], REGRESSOR['a']
WRENCH_ = REGRESSOR['A']   # A_i column-major: column c (a force) at 6 c
X_I_J_, COMPOSED_, S_J_, S_J_IN_I_ = REGRESSOR['X_i_from_j'], REGRESSOR['composed'], REGRESSOR['S_j'], REGRESSOR['S_j_in_i']


@njit(cache=True)
def cross(x0, x1, x2, y0, y1, y2):
    return x1 * y2 - x2 * y1, x2 * y0 - x0 * y2, x0 * y1 - x1 * y0


@njit(cache=True)
def rotational_map_column(w, c):
    """Column c of L(w), the 3x6 map with Ibar w = L(w) [XX, XY, XZ, YY, YZ, ZZ]."""
    if c == 0:
        return w[0], 0.0, 0.0
    if c == 1:
        return w[1], w[0], 0.0
    if c == 2:
        return w[2], 0.0, w[0]
    if c == 3:
        return 0.0, w[1], 0.0
    if c == 4:
        return 0.0, w[2], w[1]
    return 0.0, 0.0, w[2]


@njit(cache=True)
def body_wrench_regressor(v, a, A):
    """A (60, column-major 6x10) with I a + v x* I v = A pi_body:
    moment = L(alpha) + [omega]x L(omega) | -[a_o]x | 0,  force = 0 | [alpha]x + [omega]x^2 | a_o,
    a_o = a_lin + omega x v_lin the classical acceleration of the origin."""
    ao = cross(v[0], v[1], v[2], v[3], v[4], v[5])
    ao0, ao1, ao2 = a[3] + ao[0], a[4] + ao[1], a[5] + ao[2]
    for k in range(60):
        A[k] = 0.0
    for c in range(6):
        la = rotational_map_column(a, c)
        lw = rotational_map_column(v, c)
        wl = cross(v[0], v[1], v[2], lw[0], lw[1], lw[2])
        for k in range(3):
            A[6 * c + k] = la[k] + wl[k]
    for c in range(3):
        e = (1.0 if c == 0 else 0.0, 1.0 if c == 1 else 0.0, 1.0 if c == 2 else 0.0)
        moment = cross(ao0, ao1, ao2, e[0], e[1], e[2])
        we = cross(v[0], v[1], v[2], e[0], e[1], e[2])
        wwe = cross(v[0], v[1], v[2], we[0], we[1], we[2])
        ae = cross(a[0], a[1], a[2], e[0], e[1], e[2])
        for k in range(3):
            A[6 * (6 + c) + k] = -moment[k]
            A[6 * (6 + c) + 3 + k] = ae[k] + wwe[k]
    A[57], A[58], A[59] = ao0, ao1, ao2


@njit(cache=True)
def compose(X1, X2, out):
    """out = X1 X2 for Plücker transforms [E (9, row-major); r (3)]: plucker(E1 E2, r2 + E2^T r1)."""
    for row in range(3):
        for col in range(3):
            out[3 * row + col] = X1[3 * row] * X2[col] + X1[3 * row + 1] * X2[3 + col] + X1[3 * row + 2] * X2[6 + col]
    for k in range(3):
        out[9 + k] = X2[9 + k] + X2[k] * X1[9] + X2[3 + k] * X1[10] + X2[6 + k] * X1[11]


@njit(SIGNATURE, cache=True)
def regressor_kernel(P, W, a0, q, qd, qdd, Y):
    """Y[:, :10 n] = the body columns of the joint-torque regressor (other columns are left as they are)."""
    n = P.shape[0]
    if q.shape[0] != n or qd.shape[0] != n or qdd.shape[0] != n or Y.shape[0] != n or Y.shape[1] < 10 * n \
            or a0.shape[0] != 6:
        raise ValueError('regressor: q, qd, qdd need length nv and out shape (nv, >= 10 nv)')
    kinematic_scatter(P, W, q, qd, qdd, a0)
    X, v, a = W[:, X_:X_ + 12], W[:, V_:V_ + 6], W[:, A_:A_ + 6]
    for j in range(n):
        for col in range(10 * n):
            Y[j, col] = 0.0
    for i in range(n):
        A, S_j, S_j_in_i = W[i, WRENCH_:WRENCH_ + 60], W[i, S_J_:S_J_ + 6], W[i, S_J_IN_I_:S_J_IN_I_ + 6]
        X_i_from_j, composed = W[i, X_I_J_:X_I_J_ + 12], W[i, COMPOSED_:COMPOSED_ + 12]
        body_wrench_regressor(v[i], a[i], A)                           # f_i = A_i pi_i
        for k in range(12):
            X_i_from_j[k] = 1.0 if k in (0, 4, 8) else 0.0             # X_{i<-i} = 1
        j = i
        while True:
            # tau_j += S_j^T X_{j<-i}^* f_i = (X_{i<-j} S_j)^T A_i pi_i: the joint's axis carried down to body i
            # (one motion transform per ancestor, instead of the ten columns of A_i carried up)
            joint_motion(P, j, 1.0, S_j)
            transform_motion(X_i_from_j, S_j, S_j_in_i)
            for c in range(10):
                Y[j, 10 * i + c] = S_j_in_i[0] * A[6 * c] + S_j_in_i[1] * A[6 * c + 1] + S_j_in_i[2] * A[6 * c + 2] \
                    + S_j_in_i[3] * A[6 * c + 3] + S_j_in_i[4] * A[6 * c + 4] + S_j_in_i[5] * A[6 * c + 5]
            if P[j, PARENT] < 0:
                break
            compose(X_i_from_j, X[j], composed)                        # X_{i<-parent(j)} = X_{i<-j} Xup_j
            X_i_from_j, composed = composed, X_i_from_j
            j = int(P[j, PARENT])
