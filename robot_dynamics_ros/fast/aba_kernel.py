"""Compiled articulated-body forward dynamics (Jain Alg. 6.1; Featherstone Table 7.1), same maths as
``algorithms/aba.py``."""
from numba import njit

from .packing import AXIS, AXIS_INDEX, JOINT_TYPE, MASS, PARENT, WORK
from .spatial_kernels import REVOLUTE, add_congruence, add_transposed_force, cross_force_add, cross_motion_add, \
    inertia_times, joint_motion, parent_transform, project_on_joint, spatial_inertia_matrix, transform_motion

SIGNATURE = 'void(f8[:, ::1], f8[::1], f8[::1], f8[::1], f8[::1], f8[:, ::1], f8[::1])'


@njit(cache=True)
def articulated_inertia_on_joint(P, i, IA_i, U_i):
    """U_i = IA_i S_i (IA_i row-major 6x6, symmetric); returns D_i = S_i^T U_i."""
    lin = 0 if P[i, JOINT_TYPE] == REVOLUTE else 3
    k = int(P[i, AXIS_INDEX])
    for row in range(6):
        if k >= 0:
            U_i[row] = IA_i[6 * row + lin + k] * P[i, AXIS.start + k]
        else:
            U_i[row] = IA_i[6 * row + lin] * P[i, AXIS.start] + IA_i[6 * row + lin + 1] * P[i, AXIS.start + 1] \
                + IA_i[6 * row + lin + 2] * P[i, AXIS.start + 2]
    return project_on_joint(P, i, U_i)


@njit(SIGNATURE, cache=True)
def aba_kernel(P, q, qd, tau, a0, f_ext, qdd):
    """qdd = M^-1 (tau - h + sum J^T f_ext); P is PackedModel.table (its work columns are overwritten), a0 the
    base acceleration -[0; g]."""
    n = P.shape[0]
    if q.shape[0] != n or qd.shape[0] != n or tau.shape[0] != n or qdd.shape[0] != n or f_ext.shape[0] != n \
            or f_ext.shape[1] != 6 or a0.shape[0] != 6:
        raise ValueError('aba: q, qd, tau, out need length nv and f_ext shape (nv, 6)')
    X, v, c, pA = P[:, WORK:WORK + 12], P[:, WORK + 12:WORK + 18], P[:, WORK + 18:WORK + 24], P[:, WORK + 24:WORK + 30]
    IA, U, D, u = P[:, WORK + 30:WORK + 66], P[:, WORK + 66:WORK + 72], P[:, WORK + 72], P[:, WORK + 73]
    a, vJ, Iv, pa = P[:, WORK + 74:WORK + 80], P[:, WORK + 80:WORK + 86], P[:, WORK + 86:WORK + 92], P[:, WORK + 92:WORK + 98]
    scratch = P[:, WORK + 98:WORK + 143]
    # Scatter, base to tips: velocities, velocity-product accelerations and bias forces.
    for i in range(n):
        p = int(P[i, PARENT])
        parent_transform(P, i, q[i], X[i])
        joint_motion(P, i, qd[i], vJ[i])
        if p >= 0:
            transform_motion(X[i], v[p], v[i])
        else:
            v[i, :] = 0.0
        for k in range(6):
            v[i, k] += vJ[i, k]                                        # v_i = X v_p + S qd
        c[i, :] = 0.0
        cross_motion_add(v[i], vJ[i], c[i])                            # c_i = v_i x S qd
        inertia_times(P, i, MASS, v[i], Iv[i])
        for k in range(6):
            pA[i, k] = -f_ext[i, k]
        cross_force_add(v[i], Iv[i], pA[i])                            # pA_i = v_i x* I v_i - f_ext,i
        spatial_inertia_matrix(P, i, MASS, IA[i])
    # Gather, tips to base: articulated-body inertias (Riccati recursion, Jain Lemma 7).
    for i in range(n - 1, -1, -1):
        D[i] = articulated_inertia_on_joint(P, i, IA[i], U[i])         # U_i = IA_i S_i, D_i = S^T U_i
        u[i] = tau[i] - project_on_joint(P, i, pA[i])                  # u_i = tau_i - S^T pA_i
        p = int(P[i, PARENT])
        if p >= 0:
            inv_D = 1.0 / D[i]
            for row in range(6):                                       # Ia = IA - U U^T / D (in place, symmetric)
                for col in range(row, 6):
                    IA[i, 6 * row + col] -= U[i, row] * U[i, col] * inv_D
                    IA[i, 6 * col + row] = IA[i, 6 * row + col]
            for row in range(6):                                       # pa = pA + Ia c + U u / D
                pa[i, row] = pA[i, row] + U[i, row] * (u[i] * inv_D)
                for col in range(6):
                    pa[i, row] += IA[i, 6 * row + col] * c[i, col]
            add_congruence(X[i], IA[i], IA[p], scratch[i])             # IA_p += X^T Ia X
            add_transposed_force(X[i], pa[i], pA[p])                   # pA_p += X^T pa
    # Scatter, base to tips: accelerations.
    for i in range(n):
        p = int(P[i, PARENT])
        transform_motion(X[i], a[p] if p >= 0 else a0, a[i])
        for k in range(6):
            a[i, k] += c[i, k]                                         # a' = X a_p + c_i
        qdd[i] = (u[i] - (U[i, 0] * a[i, 0] + U[i, 1] * a[i, 1] + U[i, 2] * a[i, 2] + U[i, 3] * a[i, 3]
                          + U[i, 4] * a[i, 4] + U[i, 5] * a[i, 5])) / D[i]
        joint_motion(P, i, qdd[i], vJ[i])
        for k in range(6):
            a[i, k] += vJ[i, k]                                        # a_i = a' + S qdd
