"""Compiled Saha M = U D U^T factorization (Saha eqs. 12-13, 24-27; Jain Lemma 11), same maths as
``algorithms/udut.py``: the pivots D_k are articulated-body inertias projected on joint k."""
from numba import njit

from .aba_kernel import articulated_inertia_on_joint
from .packing import MASS, PARENT, WORK
from .spatial_kernels import add_congruence, add_transposed_force, parent_transform, project_on_joint, \
    spatial_inertia_matrix

SIGNATURE = 'void(f8[:, ::1], f8[::1], f8[:, ::1], f8[::1])'


@njit(SIGNATURE, cache=True)
def udut_kernel(P, q, U, D):
    """U (unit upper triangular) and D with M(q) = U diag(D) U^T; P is PackedModel.table (work overwritten)."""
    n = P.shape[0]
    if q.shape[0] != n or U.shape[0] != n or U.shape[1] != n or D.shape[0] != n:
        raise ValueError('udut: q and D need length nv and U shape (nv, nv)')
    X, IA, psi = P[:, WORK:WORK + 12], P[:, WORK + 12:WORK + 48], P[:, WORK + 48:WORK + 54]
    force, carried, scratch = P[:, WORK + 54:WORK + 60], P[:, WORK + 60:WORK + 66], P[:, WORK + 66:WORK + 111]
    for i in range(n):
        parent_transform(P, i, q[i], X[i])
        spatial_inertia_matrix(P, i, MASS, IA[i])
    # Gather, tips to base (Riccati recursion, Jain Lemma 7).
    for k in range(n - 1, -1, -1):
        D[k] = articulated_inertia_on_joint(P, k, IA[k], psi[k])      # psi^_k = IA_k p_k, m^_k (eq. 25)
        p = int(P[k, PARENT])
        if p >= 0:
            inv_D = 1.0 / D[k]
            for row in range(6):                                      # IA_k - psi^ psi^T / m^ (eq. 27)
                for col in range(row, 6):
                    IA[k, 6 * row + col] -= psi[k, row] * psi[k, col] * inv_D
                    IA[k, 6 * col + row] = IA[k, 6 * row + col]
            add_congruence(X[k], IA[k], IA[p], scratch[k])            # M^_{p} += B^T (...) B
        for row in range(6):
            psi[k, row] /= D[k]                                       # psi_k = psi^_k / m^_k (eq. 26)
    # Column k: carry psi_k to each ancestor i with force transforms, then project on joint i (eq. 24).
    for k in range(n):
        for i in range(n):
            U[i, k] = 1.0 if i == k else 0.0
        f, c = force[k], carried[k]
        f[:] = psi[k]
        i = k
        while P[i, PARENT] >= 0:
            c[:] = 0.0
            add_transposed_force(X[i], f, c)
            f, c = c, f
            i = int(P[i, PARENT])
            U[i, k] = project_on_joint(P, i, f)
