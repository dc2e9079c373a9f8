"""Compiled inertial-parameter regressor tau = Y pi (body columns), same maths and parameter order as
``algorithms/regressor.py``: kinematics as in RNEA, then each body's 6x10 wrench regressor A_i is carried to
every ancestor j, Y[j, body i] = S_j^T X_{j<-i}^T A_i."""
from numba import njit

from .packing import PARENT, REGRESSOR
from .rnea_kernel import kinematic_scatter
from .spatial_kernels import add_transposed_force, project_on_joint

SIGNATURE = 'void(f8[:, ::1], f8[:, ::1], f8[::1], f8[::1], f8[::1], f8[::1], f8[:, ::1])'
X_, V_, A_ = REGRESSOR['X'], REGRESSOR['v'], REGRESSOR['a']
WRENCH_, CARRIED_ = REGRESSOR['A'], REGRESSOR['carried']   # A_i column-major: column c (a force) at 6 c


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
        A, carried = W[i, WRENCH_:WRENCH_ + 60], W[i, CARRIED_:CARRIED_ + 60]
        body_wrench_regressor(v[i], a[i], A)                           # f_i = A_i pi_i
        j = i
        while True:
            for c in range(10):
                Y[j, 10 * i + c] = project_on_joint(P, j, A[6 * c:6 * c + 6])   # tau_j += S_j^T f_i
            if P[j, PARENT] < 0:
                break
            carried[:] = 0.0
            for c in range(10):
                add_transposed_force(X[j], A[6 * c:6 * c + 6], carried[6 * c:6 * c + 6])  # f_p += X^T f_j
            A, carried = carried, A
            j = int(P[j, PARENT])
