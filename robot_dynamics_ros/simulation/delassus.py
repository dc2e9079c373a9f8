"""The Delassus stage of the step: A = G M^-1 G^T over the step's rows G, from Saha's M = U D U^T (no ROS import).

Y = M^-1 G^T, the velocity the unit impulse of each row makes, by the sweeps of ``algorithms/inverse_mass`` (all
rows at once, each entry to the bit of a sweep of its own row), then A = G Y. The rows of G are sparse: a joint's
row is +-e_j, a contact point's has nonzeros only on the columns that move its body (the root's and its leg's);
A = G Y sums each row's nonzero terms only (a term skipped is an exact zero, g_k = 0 times a finite y: the same
sum). Written as loops, as ``algorithms/``, so the plain-Python reference runs it and numba compiles it.
"""
from ..algorithms.backends import njit
from ..algorithms.inverse_mass import inverse_mass_rows


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
