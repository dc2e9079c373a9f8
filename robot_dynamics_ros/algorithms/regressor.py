"""Inertial-parameter regressor: tau = Y(q, qd, qdd) @ pi, linear in the standard parameters.

Standard parameters of body i (Gautier-Khalil eq. 1), about the origin of body i's frame (its joint frame):
XX, XY, XZ, YY, YZ, ZZ (rotational inertia about the origin), MX, MY, MZ (first moments m c), M (mass).
After the 10 n body columns come the optional per-joint columns, grouped per joint in the order
Ia (rotor inertia, Y = qdd_j), Fv (viscous, qd_j), Fc (Coulomb, sign qd_j), off (offset, 1).
"""
import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..model.model import Model, check_state
from ..spatial import skew
from .rnea import kinematic_scatter, spatial_gravity

BODY_PARAMETERS = ('XX', 'XY', 'XZ', 'YY', 'YZ', 'ZZ', 'MX', 'MY', 'MZ', 'M')
JOINT_PARAMETERS = ('Ia', 'Fv', 'Fc', 'off')


def inertia_parameters(I):
    """The 10 standard parameters of a 6x6 spatial inertia about its frame's origin."""
    h = np.array([I[2, 4], I[0, 5], I[1, 3]])   # I[:3, 3:] = skew(h), h = m c
    return np.array([I[0, 0], I[0, 1], I[0, 2], I[1, 1], I[1, 2], I[2, 2], *h, I[5, 5]])


def rotational_inertia_map(w):
    """3x6 L(w) with Ibar @ w == L(w) @ [XX, XY, XZ, YY, YZ, ZZ]."""
    return np.array([[w[0], w[1], w[2], 0.0, 0.0, 0.0],
                     [0.0, w[0], 0.0, w[1], w[2], 0.0],
                     [0.0, 0.0, w[0], 0.0, w[1], w[2]]])


def body_wrench_regressor(v, a):
    """6x10 A(v, a) with I a + v x* I v == A @ pi_body (Newton-Euler equations of one body, linear in pi).

    moment = Ibar alpha + omega x Ibar omega - skew(a_lin + omega x v_lin) h
    force  = m (a_lin + omega x v_lin) + (skew(alpha) + skew(omega)^2) h
    """
    omega, v_lin, alpha, a_lin = v[:3], v[3:], a[:3], a[3:]
    a_origin = a_lin + np.cross(omega, v_lin)        # classical acceleration of the frame's origin
    W = skew(omega)
    A = np.zeros((6, 10))
    A[:3, :6] = rotational_inertia_map(alpha) + W @ rotational_inertia_map(omega)
    A[:3, 6:9] = -skew(a_origin)
    A[3:, 6:9] = skew(alpha) + W @ W
    A[3:, 9] = a_origin
    return A


def _extra_flags(rotor_inertia, viscous, coulomb, offset):
    return [bool(x is not None and x is not False) for x in (rotor_inertia, viscous, coulomb, offset)]


def regressor(model: Model, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike, gravity: ArrayLike | None = None,
              rotor_inertia: bool = False, viscous: bool = False, coulomb: bool = False,
              offset: bool = False) -> NDArray[np.float64]:
    """(n, 10 n + k n) joint-torque regressor Y with tau = Y @ pi (pi from ``standard_parameters``).

    Same sweeps as RNEA: body velocities and accelerations base to tips, then each body's wrench
    regressor A_i is carried to every ancestor j, Y[j, body i] = S_j^T X_{j<-i}^T A_i (O(n^2) blocks).
    """
    check_state(model, q=q, qd=qd, qdd=qdd)
    n = model.nv
    S = model.motion_subspace
    Xup = model.parent_transforms(q)
    v, a = kinematic_scatter(model, Xup, qd, qdd, spatial_gravity(gravity))
    flags = _extra_flags(rotor_inertia, viscous, coulomb, offset)
    Y = np.zeros((n, (10 + sum(flags)) * n))
    for i in range(n):
        F = body_wrench_regressor(v[i], a[i])                                # f_i = A_i pi_i
        j = i
        while j >= 0:
            Y[j, 10 * i:10 * i + 10] = S[j] @ F                              # tau_j += S_j^T f_i carried to j
            F = Xup[j].T @ F                                                 # f_p += X^T f_j
            j = model.parent[j]
    return joint_columns(Y, flags, np.asarray(qd, dtype=float), np.asarray(qdd, dtype=float))


def joint_columns(Y, flags, qd, qdd):
    """Y (one state, or rows of states) with its per-joint columns after the 10 n body columns filled: Ia
    (qdd_j), Fv (qd_j), Fc (sign qd_j), off (1), those enabled in ``flags``, grouped per joint."""
    n = qd.shape[-1]
    columns = [c for c, on in zip((qdd, qd, np.sign(qd), np.ones_like(qd)), flags) if on]
    joints = np.arange(n)
    for k, column in enumerate(columns):
        Y[..., joints, 10 * n + len(columns) * joints + k] = column
    return Y


def standard_parameters(model, rotor_inertia=None, viscous=None, coulomb=None, offset=None):
    """pi matching ``regressor``: 10 per body from ``model.inertia``, then the enabled per-joint extras.

    Each extra is None/False (no column), True (value from the model: damping for Fv, friction for Fc,
    zero for Ia and off) or an array of n values.
    """
    n = model.nv
    body = np.concatenate([inertia_parameters(I) for I in model.inertia]) if n else np.zeros(0)
    defaults = (np.zeros(n), model.damping, model.friction, np.zeros(n))
    extras = [np.broadcast_to(np.asarray(d if x is True else x, dtype=float), (n,))
              for x, d in zip((rotor_inertia, viscous, coulomb, offset), defaults) if x is not None and x is not False]
    if not extras:
        return body
    return np.concatenate([body, np.column_stack(extras).ravel()])


def parameter_names(model, rotor_inertia=False, viscous=False, coulomb=False, offset=False):
    """Names of the columns of ``regressor``: 'XX1', ..., 'M1', 'XX2', ..., then 'Ia1', 'Fv1', ... (1-based)."""
    return chain_parameter_names(model.nv, rotor_inertia, viscous, coulomb, offset)


def chain_parameter_names(n, rotor_inertia=False, viscous=False, coulomb=False, offset=False):
    """``parameter_names`` for n joints."""
    flags = _extra_flags(rotor_inertia, viscous, coulomb, offset)
    enabled = [name for name, on in zip(JOINT_PARAMETERS, flags) if on]
    names = [f'{p}{i + 1}' for i in range(n) for p in BODY_PARAMETERS]
    return names + [f'{p}{j + 1}' for j in range(n) for p in enabled]
