"""M^-1 B from Saha's M = U D U^T (U unit upper triangular, D diagonal), written once for the compiled kernels of
``simulation/`` (the Delassus stage, the one-call step's free acceleration) and ``control/`` (the Cartesian law) (no
ROS import).

M^-1 = U^-T D^-1 U^-1 (Saha, IEEE T-RA 1997, eq. 15): for each column b of B, three sweeps

    z = U^-1 b            (back substitution, U unit upper triangular: the tips-to-base sweep, eq. 17)
    z_i /= D_i            (eq. 18)
    y = U^-T z            (forward substitution: the base-to-tips sweep, eq. 19)

give y = M^-1 b. U_ik is zero unless joint i is an ancestor of k, so the sweeps skip the zeros of U (tested as they
go: no list to build per call). A sweep runs over all the columns at once: each step (entry i of every column) is
one loop over the columns, independent of each other and contiguous, where a sweep per column waits on each
product's result before the next. Each entry still takes the same operations in the same order as in a sweep of its
own column (its sum over k ascending), so the result is the same, to the bit. Written as loops, as ``algorithms/``,
so the plain-Python reference runs them and numba compiles them.
"""
import numpy as np

from .backends import njit


@njit()
def unit_upper_sweep(U, Y, m):
    """Y[:, :m] = U^-1 Y[:, :m] in place (eq. 17, back substitution): y_i -= sum_k>i U_ik y_k over U's nonzeros, k
    ascending."""
    n = U.shape[0]
    for i in range(n - 1, -1, -1):
        for k in range(i + 1, n):
            u = U[i, k]
            if u != 0.0:
                for r in range(m):
                    Y[i, r] -= u * Y[k, r]


@njit()
def unit_upper_transposed_sweep(U, Y, m):
    """Y[:, :m] = U^-T Y[:, :m] in place (eq. 19, forward substitution): y_i -= sum_k<i U_ki y_k over U's nonzeros,
    k ascending."""
    for i in range(U.shape[0]):
        for k in range(i):
            u = U[k, i]
            if u != 0.0:
                for r in range(m):
                    Y[i, r] -= u * Y[k, r]


@njit()
def inverse_mass_rows(U, D, G, m, Y):
    """Y[:, r] = M^-1 G[r] for the first m rows of G (eqs. 17-19), all rows at once."""
    n = D.shape[0]
    for i in range(n):
        for r in range(m):
            Y[i, r] = G[r, i]
    unit_upper_sweep(U, Y, m)
    for i in range(n):                      # D^-1 (eq. 18)
        d = D[i]
        for r in range(m):
            Y[i, r] /= d
    unit_upper_transposed_sweep(U, Y, m)


@njit()
def inverse_mass_times(U, D, b):
    """M^-1 b for one vector b (n,)."""
    n = D.shape[0]
    Y = np.empty((n, 1))
    inverse_mass_rows(U, D, np.ascontiguousarray(b).reshape((1, n)), 1, Y)
    return Y.reshape((n,))
