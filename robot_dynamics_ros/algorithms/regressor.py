"""Inertial-parameter regressor: tau = Y(q, qd, qdd) @ pi, linear in the standard parameters.

Rows: the velocity coordinates (for a floating base, its first six rows are the base wrench [force; moment], which
is what makes floating-base identification work without joint torques). Standard parameters of body i
(Gautier-Khalil eq. 1), about the origin of body i's frame (its joint frame):
XX, XY, XZ, YY, YZ, ZZ (rotational inertia about the origin), MX, MY, MZ (first moments m c), M (mass).
After the 10 n body columns come the optional per-joint columns, grouped per joint in the order
Ia (rotor inertia, Y = qdd_j), Fv (viscous, qd_j), Fc (Coulomb, sign qd_j), off (offset, 1).
``regressor_kernel`` is the one recursion (``backends.py``); ``regressor`` runs it as plain Python.
"""
import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..model.configuration import check_quaternions
from ..model.model import Model, check_state
from .backends import njit
from .packing import PARENT, REGRESSOR, as_float_arrays, packed
from .rnea import kinematic_scatter
from .spatial_kernels import configuration_size, joint_motion, transform_motion

BODY_PARAMETERS = ('XX', 'XY', 'XZ', 'YY', 'YZ', 'ZZ', 'MX', 'MY', 'MZ', 'M')
JOINT_PARAMETERS = ('Ia', 'Fv', 'Fc', 'off')


def inertia_parameters(I):
    """The 10 standard parameters of a 6x6 spatial inertia about its frame's origin."""
    h = np.array([I[2, 4], I[0, 5], I[1, 3]])   # I[:3, 3:] = skew(h), h = m c
    return np.array([I[0, 0], I[0, 1], I[0, 2], I[1, 1], I[1, 2], I[2, 2], *h, I[5, 5]])


SIGNATURE = 'void(f8[:, ::1], f8[:, ::1], f8[::1], f8[::1], f8[::1], f8[::1], f8[:, ::1])'
X_, V_, A_ = REGRESSOR['X'], REGRESSOR['v'], REGRESSOR['a']
WRENCH_ = REGRESSOR['A']   # A_i column-major: column c (a force) at 6 c
X_I_J_, COMPOSED_, S_J_, S_J_IN_I_ = REGRESSOR['X_i_from_j'], REGRESSOR['composed'], REGRESSOR['S_j'], REGRESSOR['S_j_in_i']


@njit()
def cross(x0, x1, x2, y0, y1, y2):
    return x1 * y2 - x2 * y1, x2 * y0 - x0 * y2, x0 * y1 - x1 * y0


@njit()
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


@njit()
def body_wrench_regressor(v, a, A):
    """A (60, column-major 6x10) with I a + v x* I v = A pi_body, the Newton-Euler equations of one body, linear
    in its parameters: moment = Ibar alpha + omega x Ibar omega - a_o x h, force = m a_o + (alpha x + omega x
    omega x) h, a_o = a_lin + omega x v_lin the classical acceleration of the origin. Column by column:
    moment = L(alpha) + [omega]x L(omega) | -[a_o]x | 0,  force = 0 | [alpha]x + [omega]x^2 | a_o."""
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


@njit()
def compose(X1, X2, out):
    """out = X1 X2 for Plücker transforms [E (9, row-major); r (3)]: plucker(E1 E2, r2 + E2^T r1)."""
    for row in range(3):
        for col in range(3):
            out[3 * row + col] = X1[3 * row] * X2[col] + X1[3 * row + 1] * X2[3 + col] + X1[3 * row + 2] * X2[6 + col]
    for k in range(3):
        out[9 + k] = X2[9 + k] + X2[k] * X1[9] + X2[3 + k] * X1[10] + X2[6 + k] * X1[11]


@njit(SIGNATURE)
def regressor_kernel(P, W, a0, q, qd, qdd, Y):
    """Y[:, :10 n] = the body columns of the joint-torque regressor (other columns are left as they are). The
    sweeps of RNEA: body velocities and accelerations base to tips, then each body's wrench regressor A_i
    (f_i = A_i pi_i) reaches every ancestor j, Y[j, body i] = S_j^T X_{j<-i}^* A_i = (X_{i<-j} S_j)^T A_i
    (O(n^2) blocks): joint j's axis is carried down to body i, one motion transform per ancestor, instead of
    the ten columns of A_i carried up."""
    n = P.shape[0]
    if q.shape[0] != configuration_size(P) or qd.shape[0] != n or qdd.shape[0] != n or Y.shape[0] != n \
            or Y.shape[1] < 10 * n or a0.shape[0] != 6:
        raise ValueError('regressor: q needs length nq, qd, qdd length nv and out shape (nv, >= 10 nv)')
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
            joint_motion(P, j, 1.0, S_j)
            transform_motion(X_i_from_j, S_j, S_j_in_i)                # X_{i<-j} S_j
            for c in range(10):                                        # tau_j += S_j^T X_{j<-i}^* f_i
                Y[j, 10 * i + c] = S_j_in_i[0] * A[6 * c] + S_j_in_i[1] * A[6 * c + 1] + S_j_in_i[2] * A[6 * c + 2] \
                    + S_j_in_i[3] * A[6 * c + 3] + S_j_in_i[4] * A[6 * c + 4] + S_j_in_i[5] * A[6 * c + 5]
            if P[j, PARENT] < 0:
                break
            compose(X_i_from_j, X[j], composed)                        # X_{i<-parent(j)} = X_{i<-j} Xup_j
            X_i_from_j, composed = composed, X_i_from_j
            j = int(P[j, PARENT])


def extra_flags(rotor_inertia, viscous, coulomb, offset):
    return [bool(x is not None and x is not False) for x in (rotor_inertia, viscous, coulomb, offset)]


def regressor(model: Model, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike, gravity: ArrayLike | None = None,
              rotor_inertia: bool = False, viscous: bool = False, coulomb: bool = False,
              offset: bool = False) -> NDArray[np.float64]:
    """(n, 10 n + k n) joint-torque regressor Y with tau = Y @ pi (pi from ``standard_parameters``)."""
    check_state(model, q=q, qd=qd, qdd=qdd)
    check_quaternions(model, q)
    flags = extra_flags(rotor_inertia, viscous, coulomb, offset)
    if model.coupling is not None:   # mimic joints: the tree's body columns projected, G^T Y_tree
        c, n = model.coupling, model.nv
        Y_tree = regressor(model.tree, c.tree_positions(q), c.tree_velocities(qd), c.tree_velocities(qdd), gravity)
        Y = np.concatenate([c.G.T @ Y_tree, np.zeros((n, sum(flags) * n))], axis=1)
        return joint_columns(Y, flags, *as_float_arrays(qd, qdd))
    pack, n = packed(model), model.nv
    q, qd, qdd = as_float_arrays(q, qd, qdd)
    Y = np.zeros((n, 10 * n + sum(flags) * n))
    regressor_kernel(pack.table, pack.work(), pack.base_acceleration(gravity), q, qd, qdd, Y)
    return joint_columns(body_columns(pack, Y, flags), flags, qd, qdd)


def body_columns(pack, Y, flags):
    """Y (rows: velocity coordinates; 10 columns per row of the packed model, then room for the per-joint columns)
    with 10 columns per body: the rows that continue a multi-DOF joint carry no inertia (``packing``), so their
    columns are left out; Y itself where every row is a body."""
    if pack.rows_are_bodies:
        return Y
    n = pack.nv
    columns = (10 * pack.body_row[:, None] + np.arange(10)).ravel()
    return np.concatenate([Y[..., columns], np.zeros(Y.shape[:-1] + (sum(flags) * n,))], axis=-1)


def joint_columns(Y, flags, qd, qdd):
    """Y (one state, or rows of states) with its per-joint columns after the 10 nb body columns filled: Ia
    (qdd_j), Fv (qd_j), Fc (sign qd_j), off (1), those enabled in ``flags``, grouped per velocity coordinate."""
    n = qd.shape[-1]
    start = Y.shape[-1] - sum(flags) * n
    columns = [c for c, on in zip((qdd, qd, np.sign(qd), np.ones_like(qd)), flags) if on]
    joints = np.arange(n)
    for k, column in enumerate(columns):
        Y[..., joints, start + len(columns) * joints + k] = column
    return Y


def standard_parameters(model, rotor_inertia=None, viscous=None, coulomb=None, offset=None):
    """pi matching ``regressor``: 10 per body from ``model.inertia``, then the enabled per-joint extras.

    Each extra is None/False (no column), True (value from the model: damping for Fv, friction for Fc,
    zero for Ia and off) or an array of n values.
    """
    n = model.nv
    body = np.concatenate([inertia_parameters(I) for I in model.inertia]) if model.nb else np.zeros(0)
    defaults = (np.zeros(n), model.damping, model.friction, np.zeros(n))
    extras = [np.broadcast_to(np.asarray(d if x is True else x, dtype=float), (n,))
              for x, d in zip((rotor_inertia, viscous, coulomb, offset), defaults) if x is not None and x is not False]
    if not extras:
        return body
    return np.concatenate([body, np.column_stack(extras).ravel()])


def parameter_names(model, rotor_inertia=False, viscous=False, coulomb=False, offset=False):
    """Names of the columns of ``regressor``: 'XX1', ..., 'M1', 'XX2', ..., then 'Ia1', 'Fv1', ... (1-based: bodies,
    then velocity coordinates)."""
    return chain_parameter_names(model.nb, rotor_inertia, viscous, coulomb, offset, model.nv)


def chain_parameter_names(n, rotor_inertia=False, viscous=False, coulomb=False, offset=False, nv=None):
    """``parameter_names`` for n bodies and nv (default n) velocity coordinates."""
    flags = extra_flags(rotor_inertia, viscous, coulomb, offset)
    enabled = [name for name, on in zip(JOINT_PARAMETERS, flags) if on]
    names = [f'{p}{i + 1}' for i in range(n) for p in BODY_PARAMETERS]
    return names + [f'{p}{j + 1}' for j in range(n if nv is None else nv) for p in enabled]
