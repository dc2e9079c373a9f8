"""The Delassus stage of the step: A = G M^-1 G^T over the step's rows G, from Saha's M = U D U^T (no ROS import).

M^-1 = U^-T D^-1 U^-1 (Saha, IEEE T-RA 1997, eq. 15): for each row g of G, three sweeps

    z = U^-1 g^T          (back substitution, U unit upper triangular: the tips-to-base sweep, eq. 17)
    z_i /= D_i            (eq. 18)
    y = U^-T z            (forward substitution: the base-to-tips sweep, eq. 19)

give y = M^-1 g^T, the velocity the unit impulse of that row makes (Y = M^-1 G^T, column by column), and A = G Y.
U_ik is zero unless joint i is an ancestor of k, so the sweeps skip the zeros of U. Written as loops, as
``algorithms/``, so the plain-Python reference runs it and numba compiles it.
"""
from ..algorithms.backends import njit


@njit()
def inverse_mass_rows(U, D, G, m, Y):
    """Y[:, r] = M^-1 G[r] for the first m rows of G (eqs. 17-19)."""
    n = D.shape[0]
    for r in range(m):
        for i in range(n - 1, -1, -1):      # z = U^-1 g (eq. 17)
            z = G[r, i]
            for k in range(i + 1, n):
                if U[i, k] != 0.0:
                    z -= U[i, k] * Y[k, r]
            Y[i, r] = z
        for i in range(n):                  # D^-1 (eq. 18)
            Y[i, r] /= D[i]
        for i in range(n):                  # y = U^-T z (eq. 19)
            y = Y[i, r]
            for k in range(i):
                if U[k, i] != 0.0:
                    y -= U[k, i] * Y[k, r]
            Y[i, r] = y


@njit()
def delassus(U, D, G, m, Y, A):
    """Y = M^-1 G^T and the Delassus matrix A = G M^-1 G^T (m x m, symmetric) of the first m rows of G."""
    inverse_mass_rows(U, D, G, m, Y)
    n = D.shape[0]
    for r in range(m):
        for s in range(r, m):
            a = 0.0
            for k in range(n):
                a += G[r, k] * Y[k, s]
            A[r, s] = a
            A[s, r] = a
