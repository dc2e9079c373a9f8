"""Composite-rigid-body mass matrix (Featherstone RBDA Table 6.2; Saha eqs. 7-8; Jain Alg. 4.1-4.2).
``crba_kernel`` is the one recursion (``backends.py``); ``crba`` runs it as plain Python."""
import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..model.configuration import check_quaternions
from ..model.model import Model, check_state
from .backends import njit
from .packing import CRBA, IBAR, MASS, PARENT, as_float_arrays, packed
from .spatial_kernels import add_transformed_rigid_inertia, add_transposed_force, configuration_size, inertia_times, \
    joint_motion, parent_transform, project_on_joint

SIGNATURE = 'void(f8[:, ::1], f8[:, ::1], f8[::1], f8[:, ::1])'
RIGID = IBAR.stop - MASS     # [mass, h, Ibar]
X_, IC_, F_, F_PARENT_ = CRBA['X'], CRBA['Ic'], CRBA['F'], CRBA['F_parent']


@njit(SIGNATURE)
def crba_kernel(P, W, q, M):
    """M = M(q), full symmetric; P is PackedModel.table, W its Data.work (overwritten). Composite inertias
    are rigid-body inertias, so they are kept as [mass, h, Ibar] rows. Entries of bodies on unrelated branches
    are zero (Jain Sec. 4.2) and never visited."""
    n = P.shape[0]
    if q.shape[0] != configuration_size(P) or M.shape[0] != n or M.shape[1] != n:
        raise ValueError('crba: q needs length nq and out shape (nv, nv)')
    X, Ic = W[:, X_:X_ + 12], W[:, IC_:IC_ + RIGID]
    F, F_parent = W[:, F_:F_ + 6], W[:, F_PARENT_:F_PARENT_ + 6]
    for i in range(n):
        parent_transform(P, i, q, X[i])
        for k in range(RIGID):
            Ic[i, k] = P[i, MASS + k]
    # Gather, tips to base: composite inertia of each subtree (Jain Alg. 4.1, eq. 20; Saha eq. 7:
    # M~_i = M_i + B^T M~_{i+1} B).
    for i in range(n - 1, -1, -1):
        p = int(P[i, PARENT])
        if p >= 0:
            add_transformed_rigid_inertia(X[i], Ic[i], Ic[p])             # Ic_p += Xup_i^T Ic_i Xup_i
    M[:, :] = 0.0
    # M_ij = S_i^T Ic_i X_{i->j} S_j for j on the path from i to the base (Jain Alg. 4.2, eq. 17; Saha eq. 8).
    for i in range(n):
        joint_motion(P, i, 1.0, F_parent[i])
        inertia_times(Ic, i, 0, F_parent[i], F[i])                     # F = Ic_i S_i
        M[i, i] = project_on_joint(P, i, F[i])
        j = i
        force, carried = F[i], F_parent[i]
        while P[j, PARENT] >= 0:
            carried[:] = 0.0
            add_transposed_force(X[j], force, carried)                 # F = Xup_j^T F
            force, carried = carried, force
            j = int(P[j, PARENT])
            M[i, j] = M[j, i] = project_on_joint(P, j, force)


def crba(model: Model, q: ArrayLike) -> NDArray[np.float64]:
    """Joint-space mass matrix M(q)."""
    check_state(model, q=q)
    check_quaternions(model, q)
    if model.coupling is not None:   # mimic joints: M = G^T M_tree G
        c = model.coupling
        return c.G.T @ crba(model.tree, c.tree_positions(q)) @ c.G
    pack, M = packed(model), np.empty((model.nv, model.nv))
    crba_kernel(pack.table, pack.work(), *as_float_arrays(q), M)
    return M
