"""Articulated-body forward dynamics, O(n) on trees (Jain Alg. 6.1; Featherstone Table 7.1)."""
import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..model.model import Model, check_state
from ..spatial import cross_force, cross_motion
from .rnea import spatial_gravity
from .udut import singular_mass_matrix


def aba(model: Model, q: ArrayLike, qd: ArrayLike, tau: ArrayLike, gravity: ArrayLike | None = None,
        f_ext: ArrayLike | None = None) -> NDArray[np.float64]:
    """Joint accelerations qdd = M(q)^{-1} (tau - h(q, qd) + sum J^T f_ext). Arguments as in ``rnea``."""
    check_state(model, q=q, qd=qd, tau=tau, f_ext=f_ext)
    n = model.nv
    S = model.motion_subspace
    Xup = model.parent_transforms(q)
    a0 = spatial_gravity(gravity)
    v = np.zeros((n, 6))
    c = np.zeros((n, 6))
    IA = model.inertia.copy()
    pA = np.zeros((n, 6))
    # Scatter, base to tips: velocities, velocity-product accelerations and bias forces.
    for i in range(n):
        p = model.parent[i]
        vJ = S[i] * qd[i]
        v[i] = (Xup[i] @ v[p] if p >= 0 else 0.0) + vJ
        c[i] = cross_motion(v[i]) @ vJ
        pA[i] = cross_force(v[i]) @ (model.inertia[i] @ v[i])
        if f_ext is not None:
            pA[i] -= f_ext[i]
    # Gather, tips to base: articulated-body inertias (Riccati recursion, Jain Lemma 7).
    U = np.zeros((n, 6))
    D = np.zeros(n)
    u = np.zeros(n)
    for i in reversed(range(n)):
        U[i] = IA[i] @ S[i]
        D[i] = S[i] @ U[i]
        if D[i] <= 0.0:
            raise singular_mass_matrix(model, i, D[i])
        u[i] = tau[i] - S[i] @ pA[i]
        p = model.parent[i]
        if p >= 0:
            Ia = IA[i] - np.outer(U[i], U[i]) / D[i]
            pa = pA[i] + Ia @ c[i] + U[i] * (u[i] / D[i])
            IA[p] += Xup[i].T @ Ia @ Xup[i]
            pA[p] += Xup[i].T @ pa
    # Scatter, base to tips: accelerations.
    a = np.zeros((n, 6))
    qdd = np.zeros(n)
    for i in range(n):
        p = model.parent[i]
        a_parent = Xup[i] @ (a[p] if p >= 0 else a0) + c[i]
        qdd[i] = (u[i] - U[i] @ a_parent) / D[i]
        a[i] = a_parent + S[i] * qdd[i]
    return qdd
