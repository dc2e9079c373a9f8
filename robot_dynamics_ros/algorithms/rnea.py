"""Recursive Newton-Euler inverse dynamics, O(n) on trees (Jain Alg. 3.1; Featherstone RBDA Table 5.1).

Jain's base-to-tips scatter (Lemma 2, eq. 8) and tips-to-base gather (Lemma 1, eq. 5) in Featherstone's symbols:
Jain's V(k), alpha(k), H^*(k), phi^*(k+1, k) and a(k) are v_i, a_i, S_i, Xup_i and v_i x S_i qd_i here, and
a_0 = -[0; g] stands in for gravity. ``rnea_kernel`` is the one recursion (``backends.py``); ``rnea`` runs it as
plain Python.
"""
import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..model.configuration import check_quaternions
from ..model.model import Model, check_state
from .backends import njit
from .packing import MASS, PARENT, RNEA, STANDARD_GRAVITY, as_float_arrays, packed  # noqa: F401 (re-exported)
from .spatial_kernels import (add_transposed_force, configuration_size, cross_force_add, cross_motion_add, inertia_times,
                              joint_motion, keep_incoming_velocity, parent_transform, project_on_joint,
                              transform_motion)

SIGNATURE = 'void(f8[:, ::1], f8[:, ::1], f8[::1], f8[:, ::1], f8[::1], f8[::1], f8[::1], f8[::1])'
# Work fields (row slices of a C-contiguous array stay contiguous for the compiler): Xup, v, a, S qd, S qdd, I v, f,
# and the velocity a joint's first row receives from its parent (``packing``).
X_, V_, A_, VJ_, AJ_, IV_, F_ = RNEA['X'], RNEA['v'], RNEA['a'], RNEA['vJ'], RNEA['aJ'], RNEA['Iv'], RNEA['f']
VIN_ = RNEA['vin']


@njit()
def kinematic_scatter(P, W, q, qd, qdd, a0):
    """Base to tips (Jain Lemma 2, eq. 8; Alg. 3.1, eq. 10): Xup_i and the velocity v_i and acceleration a_i of
    every row into the work fields X, v, a, vJ (= S qd) of W. Shared by RNEA and the regressor."""
    for i in range(P.shape[0]):
        p = int(P[i, PARENT])
        X, v, a, vJ, aJ = W[i, X_:X_ + 12], W[i, V_:V_ + 6], W[i, A_:A_ + 6], W[i, VJ_:VJ_ + 6], W[i, AJ_:AJ_ + 6]
        parent_transform(P, i, q, X)
        joint_motion(P, i, qd[i], vJ)
        if p >= 0:
            transform_motion(X, W[p, V_:V_ + 6], v)
            transform_motion(X, W[p, A_:A_ + 6], a)
        else:
            v[:] = 0.0
            transform_motion(X, a0, a)
        keep_incoming_velocity(P, W, i, p, VIN_, v)
        for k in range(6):
            v[k] += vJ[k]                          # v_i = Xup_i v_p + S_i qd_i       V(k) = phi^* V(k+1) + H^* qd(k)
        joint_motion(P, i, qdd[i], aJ)
        for k in range(6):
            a[k] += aJ[k]                          # a_i = Xup_i a_p + S_i qdd_i      alpha(k) = phi^* alpha(k+1)
        cross_motion_add(W[i, VIN_:VIN_ + 6], vJ, a)   # + v_i x S_i qd_i             + H^* qdd(k) + a(k)


@njit(SIGNATURE)
def rnea_kernel(P, W, a0, f_ext, q, qd, qdd, tau):
    """tau = M qdd + h - sum J^T f_ext; P is PackedModel.table, W its Data.work (overwritten), a0 the base
    acceleration -[0; g]."""
    n = P.shape[0]
    if q.shape[0] != configuration_size(P) or qd.shape[0] != n or qdd.shape[0] != n or tau.shape[0] != n \
            or f_ext.shape[0] != n or f_ext.shape[1] != 6 or a0.shape[0] != 6:
        raise ValueError('rnea: q needs length nq, qd, qdd, out length nv and f_ext shape (nv, 6)')
    kinematic_scatter(P, W, q, qd, qdd, a0)
    # The net force on each body, Jain's M(k) alpha(k) + b(k) (Alg. 3.1, eq. 10), b(k) = v x* I v.
    for i in range(n):
        v, Iv, f = W[i, V_:V_ + 6], W[i, IV_:IV_ + 6], W[i, F_:F_ + 6]
        inertia_times(P, i, MASS, W[i, A_:A_ + 6], f)
        inertia_times(P, i, MASS, v, Iv)
        cross_force_add(v, Iv, f)                  # f_i = I_i a_i + v_i x* I_i v_i - f_ext,i
        for k in range(6):
            f[k] -= f_ext[i, k]
    # Gather, tips to base (Lemma 1, eq. 5): joint forces and the force each body passes to its parent.
    for i in range(n - 1, -1, -1):
        tau[i] = project_on_joint(P, i, W[i, F_:F_ + 6])       # tau_i = S_i^T f_i         T(k) = H(k) f(k)
        p = int(P[i, PARENT])
        if p >= 0:
            add_transposed_force(W[i, X_:X_ + 12], W[i, F_:F_ + 6], W[p, F_:F_ + 6])   # f_p += Xup_i^T f_i


def rnea(model: Model, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike, gravity: ArrayLike | None = None,
         f_ext: ArrayLike | None = None) -> NDArray[np.float64]:
    """Joint forces tau = M(q) qdd + C(q, qd) qd + g(q) - sum J^T f_ext.

    gravity: 3-vector in the root frame (default 9.81 m/s^2 along -z).
    f_ext: optional (nb, 6) spatial forces [moment; force] acting on each body, in the body's frame.
    """
    check_state(model, q=q, qd=qd, qdd=qdd, f_ext=f_ext)
    check_quaternions(model, q)
    if model.coupling is not None:   # mimic joints: the tree's forces at the coupled motion, G^T tau_tree
        c = model.coupling
        return c.reduce_forces(rnea(model.tree, c.tree_positions(q), c.tree_velocities(qd), c.tree_velocities(qdd),
                                    gravity, f_ext))
    pack, tau = packed(model), np.empty(model.nv)
    f_ext, q, qd, qdd = as_float_arrays(pack.external_force(f_ext), q, qd, qdd)
    rnea_kernel(pack.table, pack.work(), pack.base_acceleration(gravity), f_ext, q, qd, qdd, tau)
    return tau


def gravity_torques(model: Model, q: ArrayLike, gravity: ArrayLike | None = None) -> NDArray[np.float64]:
    """g(q): the joint forces that hold the robot still."""
    zero = np.zeros(model.nv)
    return rnea(model, q, zero, zero, gravity)


def bias_torques(model: Model, q: ArrayLike, qd: ArrayLike, gravity: ArrayLike | None = None) -> NDArray[np.float64]:
    """h(q, qd) = C(q, qd) qd + g(q): Coriolis, centrifugal and gravity forces."""
    return rnea(model, q, qd, np.zeros(model.nv), gravity)
