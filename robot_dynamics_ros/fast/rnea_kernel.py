"""Compiled recursive Newton-Euler inverse dynamics (Jain Alg. 3.1; Featherstone Table 5.1), same maths as
``algorithms/rnea.py``."""
from numba import njit

from .packing import MASS, PARENT, RNEA
from .spatial_kernels import (add_transposed_force, cross_force_add, cross_motion_add, inertia_times, joint_motion,
                              parent_transform, project_on_joint, transform_motion)

SIGNATURE = 'void(f8[:, ::1], f8[:, ::1], f8[::1], f8[:, ::1], f8[::1], f8[::1], f8[::1], f8[::1])'


# Work fields (row slices of a C-contiguous array stay contiguous for the compiler): Xup, v, a, S qd, S qdd, I v, f.
X_, V_, A_, VJ_, AJ_, IV_, F_ = RNEA['X'], RNEA['v'], RNEA['a'], RNEA['vJ'], RNEA['aJ'], RNEA['Iv'], RNEA['f']


@njit(cache=True)
def kinematic_scatter(P, W, q, qd, qdd, a0):
    """Base to tips: Xup_i, v_i = X v_p + S qd, a_i = X a_p + S qdd + v_i x S qd into the work fields
    X, v, a, vJ (= S qd) of W."""
    for i in range(P.shape[0]):
        p = int(P[i, PARENT])
        X, v, a, vJ, aJ = W[i, X_:X_ + 12], W[i, V_:V_ + 6], W[i, A_:A_ + 6], W[i, VJ_:VJ_ + 6], W[i, AJ_:AJ_ + 6]
        parent_transform(P, i, q[i], X)
        joint_motion(P, i, qd[i], vJ)
        if p >= 0:
            transform_motion(X, W[p, V_:V_ + 6], v)
            transform_motion(X, W[p, A_:A_ + 6], a)
        else:
            v[:] = 0.0
            transform_motion(X, a0, a)
        for k in range(6):
            v[k] += vJ[k]                                              # v_i = X v_p + S qd
        joint_motion(P, i, qdd[i], aJ)
        for k in range(6):
            a[k] += aJ[k]
        cross_motion_add(v, vJ, a)                                     # a_i = X a_p + S qdd + v_i x S qd


@njit(SIGNATURE, cache=True)
def rnea_kernel(P, W, a0, f_ext, q, qd, qdd, tau):
    """tau = M qdd + h - sum J^T f_ext; P is PackedModel.table, W its Data.work (overwritten), a0 the base
    acceleration -[0; g]."""
    n = P.shape[0]
    if q.shape[0] != n or qd.shape[0] != n or qdd.shape[0] != n or tau.shape[0] != n or f_ext.shape[0] != n \
            or f_ext.shape[1] != 6 or a0.shape[0] != 6:
        raise ValueError('rnea: q, qd, qdd, out need length nv and f_ext shape (nv, 6)')
    kinematic_scatter(P, W, q, qd, qdd, a0)
    # The net force on each body.
    for i in range(n):
        v, Iv, f = W[i, V_:V_ + 6], W[i, IV_:IV_ + 6], W[i, F_:F_ + 6]
        inertia_times(P, i, MASS, W[i, A_:A_ + 6], f)
        inertia_times(P, i, MASS, v, Iv)
        cross_force_add(v, Iv, f)                                      # f_i = I a_i + v_i x* I v_i - f_ext,i
        for k in range(6):
            f[k] -= f_ext[i, k]
    # Gather, tips to base: joint forces and the force each body passes to its parent.
    for i in range(n - 1, -1, -1):
        tau[i] = project_on_joint(P, i, W[i, F_:F_ + 6])               # tau_i = S^T f_i
        p = int(P[i, PARENT])
        if p >= 0:
            add_transposed_force(W[i, X_:X_ + 12], W[i, F_:F_ + 6], W[p, F_:F_ + 6])   # f_p += X^T f_i
