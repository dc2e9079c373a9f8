"""Articulated-body forward dynamics, O(n) on trees (Featherstone RBDA Table 7.1; Jain Alg. 6.1).

Featherstone's passes in Jain's terms: the articulated-body inertias IA_i are the Riccati solution P(k) (Lemma 7,
eq. 33, gathered by ``udut.articulated_inertia_gather``), U_i / D_i the Kalman gain G(k), u_i the innovations
epsilon(k), pA_i the residual force z(k). ``aba_kernel`` is the one recursion (``backends.py``); ``aba`` runs it
as plain Python.
"""
import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..model.configuration import check_quaternions
from ..model.model import Model, check_state
from .backends import njit
from .embedded_aba import embedded_aba
from .packing import ABA, MASS, PARENT, SPATIAL_INERTIA, as_float_arrays, packed
from .spatial_kernels import add_transposed_force, configuration_size, cross_force_add, cross_motion_add, inertia_times, joint_motion, \
    keep_incoming_velocity, parent_transform, project_on_joint, transform_motion
from .udut import articulated_inertia_gather, run_with_pivots

SIGNATURE = 'void(f8[:, ::1], f8[:, ::1], f8[::1], f8[:, ::1], f8[::1], f8[::1], f8[::1], f8[::1])'
X_, V_, C_, PA_, IA_, U_, D_, u_ = ABA['X'], ABA['v'], ABA['c'], ABA['pA'], ABA['IA'], ABA['U'], ABA['D'], ABA['u']
A_, VJ_, IV_, PA_CHILD_, VIN_ = ABA['a'], ABA['vJ'], ABA['Iv'], ABA['pa'], ABA['vin']


@njit(SIGNATURE)
def aba_kernel(P, W, a0, f_ext, q, qd, tau, qdd):
    """qdd = M^-1 (tau - h + sum J^T f_ext); P is PackedModel.table, W its Data.work (overwritten), a0 the base
    acceleration -[0; g]."""
    n = P.shape[0]
    if q.shape[0] != configuration_size(P) or qd.shape[0] != n or tau.shape[0] != n or qdd.shape[0] != n \
            or f_ext.shape[0] != n or f_ext.shape[1] != 6 or a0.shape[0] != 6:
        raise ValueError('aba: q needs length nq, qd, tau, out length nv and f_ext shape (nv, 6)')
    X, v, c, pA = W[:, X_:X_ + 12], W[:, V_:V_ + 6], W[:, C_:C_ + 6], W[:, PA_:PA_ + 6]
    IA, U, D, u = W[:, IA_:IA_ + 36], W[:, U_:U_ + 6], W[:, D_], W[:, u_]
    a, vJ, Iv, pa = W[:, A_:A_ + 6], W[:, VJ_:VJ_ + 6], W[:, IV_:IV_ + 6], W[:, PA_CHILD_:PA_CHILD_ + 6]
    # Scatter, base to tips (pass 1): velocities, velocity-product accelerations and bias forces.
    for i in range(n):
        p = int(P[i, PARENT])
        parent_transform(P, i, q, X[i])
        joint_motion(P, i, qd[i], vJ[i])
        if p >= 0:
            transform_motion(X[i], v[p], v[i])
        else:
            v[i, :] = 0.0
        keep_incoming_velocity(P, W, i, p, VIN_, v[i])
        for k in range(6):
            v[i, k] += vJ[i, k]                                        # v_i = Xup_i v_p + S_i qd_i
        c[i, :] = 0.0
        cross_motion_add(W[i, VIN_:VIN_ + 6], vJ[i], c[i])            # c_i = v_i x S_i qd_i
        inertia_times(P, i, MASS, v[i], Iv[i])
        for k in range(6):
            pA[i, k] = -f_ext[i, k]
        cross_force_add(v[i], Iv[i], pA[i])                            # pA_i = v_i x* I_i v_i - f_ext,i
        IA[i, :] = P[i, SPATIAL_INERTIA.start:SPATIAL_INERTIA.stop]    # IA_i = I_i
    # Gather, tips to base (pass 2): articulated-body inertias (Riccati recursion, Jain Lemma 7) and bias forces.
    for i in range(n - 1, -1, -1):
        D[i] = articulated_inertia_gather(P, i, X, IA, U)              # U_i, D_i; Ia_i; IA_p += Xup^T Ia_i Xup
        u[i] = tau[i] - project_on_joint(P, i, pA[i])                  # u_i = tau_i - S_i^T pA_i
        p = int(P[i, PARENT])
        if p >= 0:
            inv_D = 1.0 / D[i]
            for row in range(6):                                       # pa_i = pA_i + Ia_i c_i + U_i u_i / D_i
                pa[i, row] = pA[i, row] + U[i, row] * (u[i] * inv_D)
                for col in range(6):
                    pa[i, row] += IA[i, 6 * row + col] * c[i, col]
            add_transposed_force(X[i], pa[i], pA[p])                   # pA_p += Xup_i^T pa_i
    # Scatter, base to tips (pass 3): accelerations.
    for i in range(n):
        p = int(P[i, PARENT])
        transform_motion(X[i], a[p] if p >= 0 else a0, a[i])
        for k in range(6):
            a[i, k] += c[i, k]                                         # a'_i = Xup_i a_p + c_i
        qdd[i] = (u[i] - (U[i, 0] * a[i, 0] + U[i, 1] * a[i, 1] + U[i, 2] * a[i, 2] + U[i, 3] * a[i, 3]
                          + U[i, 4] * a[i, 4] + U[i, 5] * a[i, 5])) / D[i]   # qdd_i = (u_i - U_i^T a'_i) / D_i
        joint_motion(P, i, qdd[i], vJ[i])
        for k in range(6):
            a[i, k] += vJ[i, k]                                        # a_i = a'_i + S_i qdd_i


def aba(model: Model, q: ArrayLike, qd: ArrayLike, tau: ArrayLike, gravity: ArrayLike | None = None,
        f_ext: ArrayLike | None = None) -> NDArray[np.float64]:
    """Joint accelerations qdd = M(q)^{-1} (tau - h(q, qd) + sum J^T f_ext). Arguments as in ``rnea``."""
    check_state(model, q=q, qd=qd, tau=tau, f_ext=f_ext)
    check_quaternions(model, q)
    if model.coupling is not None:   # mimic joints: O(n) by constraint embedding
        return embedded_aba(model, q, qd, tau, gravity, f_ext)
    pack, qdd = packed(model), np.empty(model.nv)
    W, a0 = pack.work(), pack.base_acceleration(gravity)
    f_ext, q, qd, tau = as_float_arrays(pack.external_force(f_ext), q, qd, tau)
    run_with_pivots(model, aba_kernel, (pack.table, W, a0, f_ext, q, qd, tau, qdd), W[:, D_])
    return qdd
