"""Composite-rigid-body mass matrix (Saha eqs. 7-8; Jain Alg. 4.1-4.2)."""
import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..model.model import Model


def crba(model: Model, q: ArrayLike) -> NDArray[np.float64]:
    """Joint-space mass matrix M(q). Entries of bodies on unrelated branches stay zero and are never visited."""
    n = model.nv
    S = model.motion_subspace
    Xup = model.parent_transforms(q)
    Ic = model.inertia.copy()
    # Gather, tips to base: composite inertia of each subtree (Saha eq. 7: M~_i = M_i + B^T M~_{i+1} B).
    for i in reversed(range(n)):
        p = model.parent[i]
        if p >= 0:
            Ic[p] += Xup[i].T @ Ic[i] @ Xup[i]
    M = np.zeros((n, n))
    # M_ij = S_i^T Ic_i X_{i->j} S_j for j on the path from i to the base (Saha eq. 8).
    for i in range(n):
        F = Ic[i] @ S[i]
        M[i, i] = S[i] @ F
        j = i
        while model.parent[j] >= 0:
            F = Xup[j].T @ F
            j = model.parent[j]
            M[i, j] = M[j, i] = S[j] @ F
    return M
