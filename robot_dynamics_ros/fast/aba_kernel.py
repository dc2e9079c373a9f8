"""Compiled articulated-body forward dynamics (Jain Alg. 6.1; Featherstone Table 7.1), same maths as
``algorithms/aba.py``."""
from numba import njit

from .packing import ABA, AXIS, AXIS_INDEX, JOINT_TYPE, MASS, PARENT, SPATIAL_INERTIA
from .spatial_kernels import REVOLUTE, add_congruence, add_transposed_force, cross_force_add, cross_motion_add, \
    inertia_times, joint_motion, parent_transform, project_on_joint, transform_motion

SIGNATURE = 'void(f8[:, ::1], f8[:, ::1], f8[::1], f8[:, ::1], f8[::1], f8[::1], f8[::1], f8[::1])'
X_, V_, C_, PA_, IA_, U_, D_, u_ = ABA['X'], ABA['v'], ABA['c'], ABA['pA'], ABA['IA'], ABA['U'], ABA['D'], ABA['u']
A_, VJ_, IV_, PA_CHILD_, SCRATCH_ = ABA['a'], ABA['vJ'], ABA['Iv'], ABA['pa'], ABA['scratch']


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


@njit(cache=True)
def articulated_inertia_gather(P, i, X, IA, U, scratch):
    """One step of the Riccati gather (Jain Lemma 7; Saha eqs. 25, 27), shared by ABA and U D U^T: U_i = IA_i S_i,
    D_i = S_i^T U_i, and for a body with a parent Ia_i = IA_i - U_i U_i^T / D_i (in place of IA_i) and
    IA_p += X_i^T Ia_i X_i. Returns D_i."""
    D = articulated_inertia_on_joint(P, i, IA[i], U[i])
    p = int(P[i, PARENT])
    if p >= 0:
        inv_D = 1.0 / D
        for row in range(6):
            for col in range(row, 6):
                IA[i, 6 * row + col] -= U[i, row] * U[i, col] * inv_D
                IA[i, 6 * col + row] = IA[i, 6 * row + col]
        add_congruence(X[i], IA[i], IA[p], scratch[i])
    return D


@njit(SIGNATURE, cache=True)
def aba_kernel(P, W, a0, f_ext, q, qd, tau, qdd):
    """qdd = M^-1 (tau - h + sum J^T f_ext); P is PackedModel.table, W its Data.work (overwritten), a0 the base
    acceleration -[0; g]."""
    n = P.shape[0]
    if q.shape[0] != n or qd.shape[0] != n or tau.shape[0] != n or qdd.shape[0] != n or f_ext.shape[0] != n \
            or f_ext.shape[1] != 6 or a0.shape[0] != 6:
        raise ValueError('aba: q, qd, tau, out need length nv and f_ext shape (nv, 6)')
    X, v, c, pA = W[:, X_:X_ + 12], W[:, V_:V_ + 6], W[:, C_:C_ + 6], W[:, PA_:PA_ + 6]
    IA, U, D, u = W[:, IA_:IA_ + 36], W[:, U_:U_ + 6], W[:, D_], W[:, u_]
    a, vJ, Iv, pa = W[:, A_:A_ + 6], W[:, VJ_:VJ_ + 6], W[:, IV_:IV_ + 6], W[:, PA_CHILD_:PA_CHILD_ + 6]
    scratch = W[:, SCRATCH_:SCRATCH_ + 45]
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
        IA[i, :] = P[i, SPATIAL_INERTIA.start:SPATIAL_INERTIA.stop]
    # Gather, tips to base: articulated-body inertias (Riccati recursion, Jain Lemma 7) and bias forces.
    for i in range(n - 1, -1, -1):
        D[i] = articulated_inertia_gather(P, i, X, IA, U, scratch)     # U, D; IA_i -> Ia_i; IA_p += X^T Ia X
        u[i] = tau[i] - project_on_joint(P, i, pA[i])                  # u_i = tau_i - S^T pA_i
        p = int(P[i, PARENT])
        if p >= 0:
            inv_D = 1.0 / D[i]
            for row in range(6):                                       # pa = pA + Ia c + U u / D
                pa[i, row] = pA[i, row] + U[i, row] * (u[i] * inv_D)
                for col in range(6):
                    pa[i, row] += IA[i, 6 * row + col] * c[i, col]
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
