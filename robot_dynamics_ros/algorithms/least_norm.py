"""The least-norm least-squares solve of a small symmetric positive semidefinite system, x = H^+ b, by pivoted
Cholesky with a check of the SVD's rank (``least_norm_semidefinite``), written once for the compiled kernels (the
contact step's singular held rows, ``simulation/contact_active_set``; no ROS import).
"""
import numpy as np

from .backends import njit
from .cholesky import cholesky_column, cholesky_factor, cholesky_solve

RANK_MARGIN = 2.0    # the rank check's factor on either side of the SVD's cut (rcond of the largest value)


@njit()
def least_norm_semidefinite(H, b, x, rcond):
    """x = H^+ b, the least-norm least-squares solution of H x = b for H symmetric positive semidefinite (n x n) with
    its singular values below rcond of the largest taken as zero, as np.linalg.lstsq(H, b, rcond) gives
    it; True, or False (x unwritten) where the check below cannot show that rank r is the SVD's.

    Pivoted Cholesky (the largest remaining diagonal first): P^T H P = [L1; L2] [L1; L2]^T + [0 0; 0 S], L1 r x r
    lower triangular, S the Schur complement of the rows not taken (the pivots stop where trace(S) drops to
    rcond / RANK_MARGIN of H's largest diagonal entry). The SVD's rank is r where
        sigma_r(H) >= lambda_min(H11) >= 1 / ||L1^-1||_F^2 >= RANK_MARGIN rcond trace(H)   (Cauchy interlacing;
                                                                         trace(H) >= sigma_1(H))
        sigma_r+1(H) <= ||S||_2 <= trace(S) <= rcond max_i H_ii / RANK_MARGIN              (Weyl; max_i H_ii <=
                                                                         sigma_1(H))
    Then with K = P [L1; L2] (n x r, full column rank), H = K K^T to within S, and
        x = (K K^T)^+ b = K (K^T K)^-1 (K^T K)^-1 K^T b,
    by the Cholesky factor of K^T K = R R^T. It differs from the SVD's by rounding times sigma_1 / sigma_r. (The
    SVD's own rounding, ~n eps sigma_1, is far inside RANK_MARGIN; a singular value near the cut, as a held set
    passing through a singular posture has, is refused and left to the SVD.)"""
    n = H.shape[0]
    perm = np.arange(n)
    K = np.zeros((n, n))
    d = np.empty(n)                              # the remaining (Schur complement's) diagonal, by original row
    trace, largest = 0.0, 0.0
    for i in range(n):
        d[i] = H[i, i]
        trace += d[i]
        largest = max(largest, d[i])
    if not largest > 0.0:
        return False
    cut = rcond * largest / RANK_MARGIN
    r = 0
    for j in range(n):                           # column j of K: the largest remaining diagonal as pivot
        q, schur = j, 0.0                        # (schur = trace(S), as computed: |.|, rounding may leave d < 0)
        for k in range(j, n):
            schur += abs(d[perm[k]])
            if d[perm[k]] > d[perm[q]]:
                q = k
        if schur <= cut:
            break
        if not d[perm[q]] > 0.0:                 # no positive pivot left, yet S not negligible: not semidefinite
            return False
        perm[j], perm[q] = perm[q], perm[j]
        for k in range(j):
            K[j, k], K[q, k] = K[q, k], K[j, k]
        K[j, j] = np.sqrt(d[perm[j]])
        cholesky_column(H, perm, K, j, n)
        for i in range(j + 1, n):
            d[perm[i]] -= K[i, j] * K[i, j]
        r = j + 1
    if r == 0:
        return False
    inverse = np.zeros((r, r))                   # ||L1^-1||_F^2, column by column of L1^-1 (forward substitution)
    frobenius = 0.0
    for j in range(0, r, 2):                     # two columns at a time (each sum, and the norm's, in its order)
        if j + 1 == r:
            for i in range(j, r):
                e = 1.0 if i == j else 0.0
                for k in range(j, i):
                    e -= K[i, k] * inverse[k, j]
                inverse[i, j] = e / K[i, i]
                frobenius += inverse[i, j] * inverse[i, j]
            break
        inverse[j, j] = 1.0 / K[j, j]
        for i in range(j + 1, r):
            e, f = 0.0 - K[i, j] * inverse[j, j], 1.0 if i == j + 1 else 0.0
            for k in range(j + 1, i):
                e -= K[i, k] * inverse[k, j]
                f -= K[i, k] * inverse[k, j + 1]
            inverse[i, j], inverse[i, j + 1] = e / K[i, i], f / K[i, i]
        for c in range(j, j + 2):
            for i in range(c, r):
                frobenius += inverse[i, c] * inverse[i, c]
    if 1.0 / frobenius < RANK_MARGIN * rcond * trace:
        return False
    R = np.zeros((r, r))                         # K^T K (lower part), row by row of K: each entry summed in k's
    for k in range(n):                           # order, from the first nonzero term (K[k, i] = 0 for i > k)
        for i in range(min(k + 1, r)):
            a = K[k, i]
            for col in range(i + 1):
                R[i, col] += a * K[k, col]
    rows = np.arange(r)
    if not cholesky_factor(R, rows, R, r, 0.0, 0.0):   # = R R^T, in place
        return False
    z = np.empty(r)                              # z = K^T b
    for j in range(r):
        e = 0.0
        for k in range(j, n):
            e += K[k, j] * b[perm[k]]
        z[j] = e
    for _ in range(2):                           # z = (K^T K)^-1 z, twice: R R^T solves
        cholesky_solve(R, r, z, rows)
    for k in range(n):                           # x = K z, back in H's order (K[k, j] = 0 for j > k: a sum
        value = 0.0                              # from +0 that skips zero terms is the same)
        for j in range(min(k + 1, r)):
            value += K[k, j] * z[j]
        x[perm[k]] = value
    return True
