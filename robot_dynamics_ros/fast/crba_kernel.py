"""Compiled composite-rigid-body mass matrix (Saha eqs. 7-8; Jain Alg. 4.1-4.2), same maths as
``algorithms/crba.py``."""
import numpy as np
from numba import njit

from .packing import IBAR, MASS, PARENT
from .spatial_kernels import add_transformed_rigid_inertia, add_transposed_force, inertia_times, joint_motion, \
    parent_transform, project_on_joint

SIGNATURE = 'void(f8[:, ::1], f8[::1], f8[:, ::1])'

@njit(SIGNATURE, cache=True)
def crba_kernel(P, q, M):
    """M = M(q), full symmetric; P is PackedModel.table. Composite inertias are rigid-body inertias, so they
    are kept as [mass, h, Ibar] rows."""
    n = P.shape[0]
    if q.shape[0] != n or M.shape[0] != n or M.shape[1] != n:
        raise ValueError('crba: q needs length nv and out shape (nv, nv)')
    X = np.empty((n, 12))
    Ic = np.empty((n, IBAR.stop - MASS))
    F = np.empty(6)
    F_parent = np.empty(6)
    for i in range(n):
        parent_transform(P, i, q[i], X[i])
        for k in range(IBAR.stop - MASS):
            Ic[i, k] = P[i, MASS + k]
    # Gather, tips to base: composite inertia of each subtree (Saha eq. 7: M~_i = M_i + B^T M~_{i+1} B).
    for i in range(n - 1, -1, -1):
        p = int(P[i, PARENT])
        if p >= 0:
            add_transformed_rigid_inertia(X[i], Ic, i, p)
    M[:, :] = 0.0
    # M_ij = S_i^T Ic_i X_{i->j} S_j for j on the path from i to the base (Saha eq. 8).
    for i in range(n):
        joint_motion(P, i, 1.0, F_parent)
        inertia_times(Ic, i, 0, F_parent, F)                          # F = Ic_i S_i
        M[i, i] = project_on_joint(P, i, F)
        j = i
        while P[j, PARENT] >= 0:
            F_parent[:] = 0.0
            add_transposed_force(X[j], F, F_parent)                   # F = X_j^T F
            F[:] = F_parent
            j = int(P[j, PARENT])
            M[i, j] = M[j, i] = project_on_joint(P, j, F)

