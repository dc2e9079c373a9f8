"""Saha's M = U D U^T in one world-aligned frame (``world_frame``), O(n) on trees.

``udut.py``'s elimination (Saha eqs. 24-27; Jain Part II, Lemma 7, eq. 33) with every Xup_i the identity: the
articulated inertia a body passes to its parent is added to the parent's as it is, M^_{k-1,k} = M_{k-1} +
(M^_{k,k+1} - psi_k psi^_k^T) (eq. 27, B = 1), instead of through the congruence X^T IA X, and U's entries are
U_ik = S_i^T psi_k (eq. 24) for i an ancestor of k, with no force transform between them.
"""
from .backends import njit
from .packing import PARENT, WORLD

S_, I_, IA_, PSI_ = WORLD['S'], WORLD['I'], WORLD['IA'], WORLD['psi']


@njit()
def world_udut(P, W, U, D):
    """U (unit upper triangular) and D with M = U diag(D) U^T on the rows' world columns and inertias in the work
    fields S and I of W (``world_frame.world_rows``)."""
    n = P.shape[0]
    for k in range(n):                               # IA_k = I_k as a 6x6: [[Ibar, h x], [(h x)^T, mass 1]]
        I, IA = W[k, I_:I_ + 13], W[k, IA_:IA_ + 36]
        mass, hx, hy, hz = I[0], I[1], I[2], I[3]
        for row in range(3):
            for col in range(3):
                IA[6 * row + col] = I[4 + 3 * row + col]
                IA[6 * (3 + row) + 3 + col] = mass if row == col else 0.0
        IA[3], IA[4], IA[5], IA[9], IA[10], IA[11], IA[15], IA[16], IA[17] = 0.0, -hz, hy, hz, 0.0, -hx, -hy, hx, 0.
        IA[18], IA[19], IA[20], IA[24], IA[25], IA[26], IA[30], IA[31], IA[32] = 0.0, hz, -hy, -hz, 0.0, hx, hy, -hx, 0.
    for k in range(n - 1, -1, -1):                   # tips to base
        S, IA, psi = W[k, S_:S_ + 6], W[k, IA_:IA_ + 36], W[k, PSI_:PSI_ + 6]
        D_k = 0.0
        for row in range(6):                         # psi^_k = M^_{k,k+1} p_k, m^_k = p_k^T psi^_k (eq. 25)
            psi[row] = IA[6 * row] * S[0] + IA[6 * row + 1] * S[1] + IA[6 * row + 2] * S[2] \
                + IA[6 * row + 3] * S[3] + IA[6 * row + 4] * S[4] + IA[6 * row + 5] * S[5]
            D_k += S[row] * psi[row]
        D[k] = D_k
        inv_D = 1.0 / D_k
        p = int(P[k, PARENT])
        if p >= 0:                                   # M^_p += M^_k - psi^_k psi^_k^T / m^_k (eq. 27)
            for row in range(6):
                for col in range(row, 6):
                    e = IA[6 * row + col] - psi[row] * psi[col] * inv_D
                    W[p, IA_ + 6 * row + col] += e
                    if col != row:
                        W[p, IA_ + 6 * col + row] += e
        for row in range(6):
            psi[row] *= inv_D                        # psi_k = psi^_k / m^_k (eq. 26)
    for k in range(n):                               # U_ik = p_i^T psi_k for i an ancestor of k (eq. 24)
        for i in range(n):
            U[i, k] = 1.0 if i == k else 0.0
        psi = W[k, PSI_:PSI_ + 6]
        i = int(P[k, PARENT])
        while i >= 0:
            U[i, k] = W[i, S_] * psi[0] + W[i, S_ + 1] * psi[1] + W[i, S_ + 2] * psi[2] + W[i, S_ + 3] * psi[3] \
                + W[i, S_ + 4] * psi[4] + W[i, S_ + 5] * psi[5]
            i = int(P[i, PARENT])
