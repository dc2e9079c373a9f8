"""The Delassus stage of the step: A = G M^-1 G^T over the step's rows G, from Saha's M = U D U^T (no ROS import).

M^-1 = U^-T D^-1 U^-1 (Saha, IEEE T-RA 1997, eq. 15): for each row g of G, three sweeps

    z = U^-1 g^T          (back substitution, U unit upper triangular: the tips-to-base sweep, eq. 17)
    z_i /= D_i            (eq. 18)
    y = U^-T z            (forward substitution: the base-to-tips sweep, eq. 19)

give y = M^-1 g^T, the velocity the unit impulse of that row makes (Y = M^-1 G^T, column by column), and A = G Y.
U_ik is zero unless joint i is an ancestor of k, so the sweeps skip the zeros of U (listed once for all rows). The
sweeps run over all the rows at once: each step of a sweep (entry i of every column of Y) is one loop over the
rows, independent of each other and contiguous in Y, where a sweep per row waits on each product's result before
the next. Each entry still takes the same operations in the same order as in a sweep of its own row (its sum over
k ascending), so the result is the same, to the bit. The rows of G are sparse: a joint's row is +-e_j, a contact
point's has nonzeros only on the columns that move its body (the root's and its leg's); A = G Y sums each row's
nonzero terms only (a term skipped is an exact zero, g_k = 0 times a finite y: the same sum). Written as loops, as
``algorithms/``, so the plain-Python reference runs it and numba compiles it.
"""
import numpy as np

from ..algorithms.backends import njit


@njit()
def inverse_mass_rows(U, D, G, m, Y):
    """Y[:, r] = M^-1 G[r] for the first m rows of G (eqs. 17-19), all rows at once."""
    n = D.shape[0]
    # U's nonzeros above the diagonal, in ascending order: row i's columns k > i (eq. 17), column i's rows k < i
    # (eq. 19)
    right, right_count = np.empty((n, n), dtype=np.int64), np.zeros(n, dtype=np.int64)
    above, above_count = np.empty((n, n), dtype=np.int64), np.zeros(n, dtype=np.int64)
    for i in range(n):
        for k in range(i + 1, n):
            if U[i, k] != 0.0:
                right[i, right_count[i]] = k
                right_count[i] += 1
                above[k, above_count[k]] = i
                above_count[k] += 1
    for i in range(n - 1, -1, -1):          # z = U^-1 g (eq. 17): z_i = g_i - sum_k>i U_ik z_k
        for r in range(m):
            Y[i, r] = G[r, i]
        for t in range(right_count[i]):
            k = right[i, t]
            u = U[i, k]
            for r in range(m):
                Y[i, r] -= u * Y[k, r]
    for i in range(n):                      # D^-1 (eq. 18)
        d = D[i]
        for r in range(m):
            Y[i, r] /= d
    for i in range(n):                      # y = U^-T z (eq. 19): y_i = z_i - sum_k<i U_ki y_k
        for t in range(above_count[i]):
            k = above[i, t]
            u = U[k, i]
            for r in range(m):
                Y[i, r] -= u * Y[k, r]


@njit()
def delassus(U, D, G, m, Y, A):
    """Y = M^-1 G^T and the Delassus matrix A = G M^-1 G^T (m x m, symmetric) of the first m rows of G."""
    inverse_mass_rows(U, D, G, m, Y)
    n = D.shape[0]
    for r in range(m):                      # A_rs = sum_k G_rk Y_ks (s >= r), over the row's nonzeros k ascending
        for s in range(r, m):
            A[r, s] = 0.0
        for k in range(n):
            g = G[r, k]
            if g != 0.0:
                for s in range(r, m):
                    A[r, s] += g * Y[k, s]
        for s in range(r + 1, m):
            A[s, r] = A[r, s]
