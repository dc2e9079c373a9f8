"""M = U D U^T of a dense mass matrix, for models with coupled mimic joints: O(n^3).

A model whose URDF mimic joints are coupled coordinates (``model/mimic.py``) has M = G^T M_tree G, which is no
tree's mass matrix, so Saha's O(n) factorisation (``udut.py``) does not apply to it. Its U D U^T (U unit upper
triangular: the factorisation is unique, and on a tree it is Saha's) is taken here from the dense M, the last pivot
first as Saha orders them. ``udut``, ``forward_dynamics_udut``, ``mass_matrix_inverse``, ``mass_matrix_log_det`` and
``operational_space_inertia`` use it on coupled models, and the simulator's contact step from the tree's own
U D U^T (``reduced_udut``). (Jain's constraint embedding, which keeps ``embedded_aba.py``
O(n), would keep these O(n) as well, with block pivots; not done yet.)
"""
import numpy as np

from ..errors import SingularMassMatrixError
from ..model.joints import NV
from .backends import njit


@njit(cache=True)
def dense_udut(M, U, D):
    """M = U diag(D) U^T with U unit upper triangular, from the dense M (the last pivot first, as Saha's
    factorisation orders them): D_j = M_jj - sum_k>j U_jk^2 D_k, U_ij = (M_ij - sum_k>j U_ik U_jk D_k) / D_j (i < j).
    For a model with coupled mimic joints, whose M = G^T M_tree G is no tree's."""
    n = M.shape[0]
    for j in range(n - 1, -1, -1):
        d = M[j, j]
        for k in range(j + 1, n):
            d -= U[j, k] * U[j, k] * D[k]
        D[j] = d
        for i in range(j):
            x = M[i, j]
            for k in range(j + 1, n):
                x -= U[i, k] * U[j, k] * D[k]
            U[i, j] = x / d
            U[j, i] = 0.0
        U[j, j] = 1.0


@njit()
def reduced_udut(U_tree, D_tree, G, B, M, U, D):
    """U, D with G^T M_tree G = U diag(D) U^T, from the tree's M_tree = U_tree diag(D_tree) U_tree^T (its unit upper
    triangle strictly above the diagonal read): B = U_tree^T G, M = B^T diag(D_tree) B, then ``dense_udut``."""
    n_tree, n = G.shape[0], G.shape[1]
    for i in range(n_tree):
        for j in range(n):
            value = G[i, j]
            for k in range(i):
                value += U_tree[k, i] * G[k, j]
            B[i, j] = value
    for a in range(n):
        for b in range(a, n):
            value = 0.0
            for i in range(n_tree):
                value += B[i, a] * D_tree[i] * B[i, b]
            M[a, b] = value
            M[b, a] = value
    dense_udut(M, U, D)


def coupled_udut(model, M, kernel=dense_udut):
    """(U, D) with M = U diag(D) U^T for the mass matrix M of ``model`` (``kernel``: ``dense_udut`` or its
    compilation); SingularMassMatrixError naming the joint of the first pivot D_j <= 0 (the last pivots come first)."""
    n = len(M)
    U, D = np.zeros((n, n)), np.zeros(n)
    try:
        with np.errstate(divide='ignore', invalid='ignore'):   # a zero pivot is reported below
            kernel(np.require(M, dtype=float, requirements=['C']), U, D)
    except ZeroDivisionError:   # compiled: D is filled down to the zero pivot, zero below it
        pass
    singular = np.flatnonzero(~(D > 0.0))
    if singular.size:
        j = singular[-1]
        name = _joint_of(model, j)
        if name in model.massless_joints:
            raise SingularMassMatrixError(
                f"forward dynamics is undefined: joint {name!r} moves no mass or inertia (every link from it to the "
                "leaves is massless), so the mass matrix is singular; give those links an <inertial>")
        raise SingularMassMatrixError(
            f"forward dynamics is undefined: the mass matrix is not positive definite at this configuration (the "
            f"pivot of joint {name!r}, with the joints coupled to it, is {D[j]:.3g}); check the inertias it moves")
    return U, D


def unit_upper_inverse(U):
    """U^-1 of a unit upper triangular U (back substitution)."""
    n = len(U)
    V = np.eye(n)
    for i in range(n - 1, -1, -1):
        V[i] -= U[i, i + 1:] @ V[i + 1:]
    return V


def _joint_of(model, j):
    """The joint that owns velocity coordinate j."""
    for b in model.coordinate_bodies:
        if model.idx_v[b] <= j < model.idx_v[b] + NV[model.joint_type[b]]:
            return model.body_joint_names[b]
    return f'coordinate {j}'
