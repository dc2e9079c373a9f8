"""Compiled articulated-body forward dynamics (Jain Alg. 6.1; Featherstone Table 7.1), same maths as
``algorithms/aba.py``."""
import numpy as np
from numba import njit

from .packing import JOINT_TYPE, MASS, PARENT
from .spatial_kernels import REVOLUTE, add_congruence, add_transposed_force, cross_force_add, cross_motion_add, \
    inertia_times, joint_motion, parent_transform, project_on_joint, spatial_inertia_matrix, transform_motion

SIGNATURE = 'void(f8[:, ::1], f8[::1], f8[::1], f8[::1], f8[::1], f8[:, ::1], f8[::1])'

@njit(SIGNATURE, cache=True)
def aba_kernel(P, q, qd, tau, a0, f_ext, qdd):
    """qdd = M^-1 (tau - h + sum J^T f_ext); P is PackedModel.table, a0 the base acceleration -[0; g]."""
    n = P.shape[0]
    if q.shape[0] != n or qd.shape[0] != n or tau.shape[0] != n or qdd.shape[0] != n or f_ext.shape[0] != n \
            or f_ext.shape[1] != 6 or a0.shape[0] != 6:
        raise ValueError('aba: q, qd, tau, out need length nv and f_ext shape (nv, 6)')
    X = np.empty((n, 12))
    v = np.empty((n, 6))
    c = np.empty((n, 6))
    pA = np.empty((n, 6))
    IA = np.empty((n, 6, 6))
    U = np.empty((n, 6))
    D = np.empty(n)
    u = np.empty(n)
    a = np.empty((n, 6))
    vJ = np.empty(6)
    Iv = np.empty(6)
    pa = np.empty(6)
    scratch = np.empty((4, 3, 3))
    # Scatter, base to tips: velocities, velocity-product accelerations and bias forces.
    for i in range(n):
        p = int(P[i, PARENT])
        parent_transform(P, i, q[i], X[i])
        joint_motion(P, i, qd[i], vJ)
        if p >= 0:
            transform_motion(X[i], v[p], v[i])
        else:
            v[i, :] = 0.0
        for k in range(6):
            v[i, k] += vJ[k]                                           # v_i = X v_p + S qd
        c[i, :] = 0.0
        cross_motion_add(v[i], vJ, c[i])                               # c_i = v_i x S qd
        inertia_times(P, i, MASS, v[i], Iv)
        for k in range(6):
            pA[i, k] = -f_ext[i, k]
        cross_force_add(v[i], Iv, pA[i])                               # pA_i = v_i x* I v_i - f_ext,i
        spatial_inertia_matrix(P, i, MASS, IA[i])
    # Gather, tips to base: articulated-body inertias (Riccati recursion, Jain Lemma 7).
    for i in range(n - 1, -1, -1):
        lin = 0 if P[i, JOINT_TYPE] == REVOLUTE else 3
        for k in range(6):                                             # U_i = IA_i S_i
            U[i, k] = IA[i, k, lin] * P[i, 2] + IA[i, k, lin + 1] * P[i, 3] + IA[i, k, lin + 2] * P[i, 4]
        D[i] = project_on_joint(P, i, U[i])                            # D_i = S^T U_i
        u[i] = tau[i] - project_on_joint(P, i, pA[i])                  # u_i = tau_i - S^T pA_i
        p = int(P[i, PARENT])
        if p >= 0:
            for row in range(6):                                       # Ia = IA - U U^T / D (in place)
                for col in range(6):
                    IA[i, row, col] -= U[i, row] * U[i, col] / D[i]
            for row in range(6):                                       # pa = pA + Ia c + U u / D
                pa[row] = pA[i, row] + U[i, row] * (u[i] / D[i])
                for col in range(6):
                    pa[row] += IA[i, row, col] * c[i, col]
            add_congruence(X[i], IA[i], IA[p], scratch)                # IA_p += X^T Ia X
            add_transposed_force(X[i], pa, pA[p])                      # pA_p += X^T pa
    # Scatter, base to tips: accelerations.
    for i in range(n):
        p = int(P[i, PARENT])
        transform_motion(X[i], a[p] if p >= 0 else a0, a[i])
        for k in range(6):
            a[i, k] += c[i, k]                                         # a' = X a_p + c_i
        qdd[i] = (u[i] - (U[i, 0] * a[i, 0] + U[i, 1] * a[i, 1] + U[i, 2] * a[i, 2] + U[i, 3] * a[i, 3]
                          + U[i, 4] * a[i, 4] + U[i, 5] * a[i, 5])) / D[i]
        joint_motion(P, i, qdd[i], vJ)
        for k in range(6):
            a[i, k] += vJ[k]                                           # a_i = a' + S qdd

