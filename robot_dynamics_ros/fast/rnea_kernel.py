"""Compiled recursive Newton-Euler inverse dynamics (Jain Alg. 3.1; Featherstone Table 5.1), same maths as
``algorithms/rnea.py``."""
from numba import njit

from .packing import MASS, PARENT, WORK
from .spatial_kernels import (add_transposed_force, cross_force_add, cross_motion_add, inertia_times, joint_motion,
                              parent_transform, project_on_joint, transform_motion)

SIGNATURE = 'void(f8[:, ::1], f8[::1], f8[::1], f8[::1], f8[::1], f8[:, ::1], f8[::1])'


@njit(cache=True)
def kinematic_scatter(P, q, qd, qdd, a0):
    """Base to tips: Xup_i, v_i = X v_p + S qd, a_i = X a_p + S qdd + v_i x S qd into the work columns
    X (12), v (6), a (6), vJ = S qd (6), starting at WORK."""
    X, v, a = P[:, WORK:WORK + 12], P[:, WORK + 12:WORK + 18], P[:, WORK + 18:WORK + 24]
    vJ, aJ = P[:, WORK + 24:WORK + 30], P[:, WORK + 30:WORK + 36]
    for i in range(P.shape[0]):
        p = int(P[i, PARENT])
        parent_transform(P, i, q[i], X[i])
        joint_motion(P, i, qd[i], vJ[i])
        if p >= 0:
            transform_motion(X[i], v[p], v[i])
            transform_motion(X[i], a[p], a[i])
        else:
            v[i, :] = 0.0
            transform_motion(X[i], a0, a[i])
        for k in range(6):
            v[i, k] += vJ[i, k]                                        # v_i = X v_p + S qd
        joint_motion(P, i, qdd[i], aJ[i])
        for k in range(6):
            a[i, k] += aJ[i, k]
        cross_motion_add(v[i], vJ[i], a[i])                            # a_i = X a_p + S qdd + v_i x S qd


@njit(SIGNATURE, cache=True)
def rnea_kernel(P, q, qd, qdd, a0, f_ext, tau):
    """tau = M qdd + h - sum J^T f_ext; P is PackedModel.table (its work columns are overwritten), a0 the base
    acceleration -[0; g]."""
    n = P.shape[0]
    if q.shape[0] != n or qd.shape[0] != n or qdd.shape[0] != n or tau.shape[0] != n or f_ext.shape[0] != n \
            or f_ext.shape[1] != 6 or a0.shape[0] != 6:
        raise ValueError('rnea: q, qd, qdd, out need length nv and f_ext shape (nv, 6)')
    kinematic_scatter(P, q, qd, qdd, a0)
    X, v, a = P[:, WORK:WORK + 12], P[:, WORK + 12:WORK + 18], P[:, WORK + 18:WORK + 24]
    Iv, f = P[:, WORK + 36:WORK + 42], P[:, WORK + 42:WORK + 48]
    # The net force on each body.
    for i in range(n):
        inertia_times(P, i, MASS, a[i], f[i])
        inertia_times(P, i, MASS, v[i], Iv[i])
        cross_force_add(v[i], Iv[i], f[i])                             # f_i = I a_i + v_i x* I v_i - f_ext,i
        for k in range(6):
            f[i, k] -= f_ext[i, k]
    # Gather, tips to base: joint forces and the force each body passes to its parent.
    for i in range(n - 1, -1, -1):
        tau[i] = project_on_joint(P, i, f[i])                          # tau_i = S^T f_i
        p = int(P[i, PARENT])
        if p >= 0:
            add_transposed_force(X[i], f[i], f[p])                      # f_p += X^T f_i
