"""The Delassus stage of the step: A = G M^-1 G^T over the step's rows G, from Saha's M = U D U^T (no ROS import).

Y = M^-1 G^T, the velocity the unit impulse of each row makes, by the sweeps of ``algorithms/inverse_mass`` (all
rows at once, each entry to the bit of a sweep of its own row), then A = G Y. The rows of G are sparse: a joint's
row is +-e_j, a contact point's has nonzeros only on the columns that move its body (the root's and its leg's);
A = G Y sums each row's nonzero terms only (a term skipped is an exact zero, g_k = 0 times a finite y: the same
sum), four entries of a row at a time, each summed in a register (summed in place in A, the products of TALOS's 98
rows took 40 us, twice Y's sweeps; now 20). Written as loops, as ``algorithms/``, so the plain-Python reference runs
it and numba compiles it.
"""
import numpy as np

from ..algorithms.backends import njit
from ..algorithms.inverse_mass import inverse_mass_rows


@njit()
def delassus(U, D, G, m, Y, A):
    """Y = M^-1 G^T and the Delassus matrix A = G M^-1 G^T (m x m, symmetric) of the first m rows of G."""
    inverse_mass_rows(U, D, G, m, Y)
    n = D.shape[0]
    nonzero = np.empty(n, dtype=np.int64)
    for r in range(m):                      # A_rs = sum_k G_rk Y_ks (s >= r), over the row's nonzeros k ascending
        count = 0
        for k in range(n):
            if G[r, k] != 0.0:
                nonzero[count] = k
                count += 1
        s = r
        while s + 3 < m:                    # four entries at a time: four independent sums, each in its order
            a, b, c, d = 0.0, 0.0, 0.0, 0.0
            for t in range(count):
                k = nonzero[t]
                g = G[r, k]
                a += g * Y[k, s]
                b += g * Y[k, s + 1]
                c += g * Y[k, s + 2]
                d += g * Y[k, s + 3]
            A[r, s] = A[s, r] = a
            A[r, s + 1] = A[s + 1, r] = b
            A[r, s + 2] = A[s + 2, r] = c
            A[r, s + 3] = A[s + 3, r] = d
            s += 4
        for s in range(s, m):
            a = 0.0
            for t in range(count):
                a += G[r, nonzero[t]] * Y[nonzero[t], s]
            A[r, s] = A[s, r] = a
