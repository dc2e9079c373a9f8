"""Compiled Saha M = U D U^T factorization (Saha eqs. 12-13, 24-27; Jain Lemma 11), same maths as
``algorithms/udut.py``: the pivots D_k are articulated-body inertias projected on joint k."""
from numba import njit

from .aba_kernel import articulated_inertia_gather
from .packing import PARENT, SPATIAL_INERTIA, UDUT
from .spatial_kernels import add_transposed_force, parent_transform, project_on_joint

SIGNATURE = 'void(f8[:, ::1], f8[:, ::1], f8[::1], f8[:, ::1], f8[::1])'
X_, IA_, PSI_, FORCE_, CARRIED_, SCRATCH_ = UDUT['X'], UDUT['IA'], UDUT['psi'], UDUT['force'], UDUT['carried'], \
    UDUT['scratch']


@njit(SIGNATURE, cache=True)
def udut_kernel(P, W, q, U, D):
    """U (unit upper triangular) and D with M(q) = U diag(D) U^T; P is PackedModel.table, W its Data.work."""
    n = P.shape[0]
    if q.shape[0] != n or U.shape[0] != n or U.shape[1] != n or D.shape[0] != n:
        raise ValueError('udut: q and D need length nv and U shape (nv, nv)')
    X, IA, psi = W[:, X_:X_ + 12], W[:, IA_:IA_ + 36], W[:, PSI_:PSI_ + 6]
    force, carried, scratch = W[:, FORCE_:FORCE_ + 6], W[:, CARRIED_:CARRIED_ + 6], W[:, SCRATCH_:SCRATCH_ + 45]
    for i in range(n):
        parent_transform(P, i, q[i], X[i])
        IA[i, :] = P[i, SPATIAL_INERTIA.start:SPATIAL_INERTIA.stop]
    # Gather, tips to base (Riccati recursion, Jain Lemma 7).
    for k in range(n - 1, -1, -1):
        D[k] = articulated_inertia_gather(P, k, X, IA, psi, scratch)  # psi^_k, m^_k (eq. 25); M^_p (eq. 27)
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
