"""Small dense Cholesky factorisation A = L L^T and its solve, written once for the compiled kernels of
``simulation/`` and ``control/`` (``backends.njit``; no ROS import).

A is read as M[index[i], index[j]] (a gathered block of M, a pivoted order, or M itself with index = 0 .. n-1), from
its lower triangle only; L may be M itself (in place: each entry of A is read before its place in L is written).
"""
import numpy as np

from .backends import njit


@njit()
def cholesky_column(M, index, L, j, n):
    """Column j of a Cholesky factor below its diagonal (L[j, j] set): L[i, j] = (M[index[i], index[j]] -
    sum_k<j L[i, k] L[j, k]) / L[j, j] for i = j+1 .. n-1; four rows at a time, four independent sums, each in its
    order (the same bits as one row at a time)."""
    i = j + 1
    while i + 3 < n:
        e, f, g, h = M[index[i], index[j]], M[index[i + 1], index[j]], M[index[i + 2], index[j]], \
            M[index[i + 3], index[j]]
        for k in range(j):
            t = L[j, k]
            e -= L[i, k] * t
            f -= L[i + 1, k] * t
            g -= L[i + 2, k] * t
            h -= L[i + 3, k] * t
        L[i, j], L[i + 1, j], L[i + 2, j], L[i + 3, j] = e / L[j, j], f / L[j, j], g / L[j, j], h / L[j, j]
        i += 4
    for i in range(i, n):
        e = M[index[i], index[j]]
        for k in range(j):
            e -= L[i, k] * L[j, k]
        L[i, j] = e / L[j, j]


@njit()
def cholesky_factor(M, index, L, n, shift, pivot_ratio):
    """L[:n, :n]'s lower triangle = the Cholesky factor of A - shift I, A = M[index[:n]][:, index[:n]]; True, or
    False (L partly written) at the first pivot that is not positive or that puts the smallest pivot so far below
    pivot_ratio times the largest (0: only positivity; the largest only grows and the smallest only falls, so the
    full check's answer is reached without the remaining columns)."""
    largest, smallest = 0.0, np.inf
    for j in range(n):
        d = M[index[j], index[j]] - shift
        for k in range(j):
            d -= L[j, k] * L[j, k]
        if not d > 0.0:
            return False
        largest, smallest = max(largest, d), min(smallest, d)
        if smallest < pivot_ratio * largest:
            return False
        L[j, j] = np.sqrt(d)
        cholesky_column(M, index, L, j, n)
    return True


@njit()
def cholesky_solve(L, n, x, index):
    """x[index[:n]] = A^-1 x[index[:n]] in place, A = L L^T (``cholesky_factor``): L z = x, then L^T x = z."""
    for i in range(n):
        z = x[index[i]]
        for k in range(i):
            z -= L[i, k] * x[index[k]]
        x[index[i]] = z / L[i, i]
    for i in range(n - 1, -1, -1):
        z = x[index[i]]
        for k in range(i + 1, n):
            z -= L[k, i] * x[index[k]]
        x[index[i]] = z / L[i, i]
