"""The shared small dense Cholesky factor and solve (``algorithms/cholesky.py``), as plain Python and compiled."""
import numpy as np
import pytest

from robot_dynamics_ros.algorithms import cholesky


@pytest.fixture(params=['python', 'numba'])
def kernels(request):
    if request.param == 'python':
        return cholesky.cholesky_factor, cholesky.cholesky_solve
    pytest.importorskip('numba')
    from robot_dynamics_ros.algorithms.backends import compiled
    return compiled(cholesky.cholesky_factor), compiled(cholesky.cholesky_solve)


def test_factor_and_solve_match_numpy_on_a_gathered_shifted_block_in_place_or_not(kernels):
    """On random positive definite blocks gathered from a larger matrix (sizes across the four-row unrolling), the
    factor is NumPy's Cholesky of A - shift I to rounding, the same bits in place as into another array, and the
    solve gives A^-1 b to rounding, leaving the entries outside the index untouched."""
    factor, solve = kernels
    rng = np.random.default_rng(3)
    for n in range(1, 11):
        m = n + 3
        B = rng.standard_normal((m, m))
        M = B @ B.T + m * np.eye(m)
        index = rng.permutation(m)[:n]
        shift = 0.5
        A = M[np.ix_(index, index)] - shift * np.eye(n)
        L = np.zeros((n, n))
        assert factor(M, index, L, n, shift, 0.0)
        assert np.allclose(np.tril(L), np.linalg.cholesky(A), rtol=1e-12, atol=1e-12), n
        in_place = np.tril(M[np.ix_(index, index)])
        assert factor(in_place, np.arange(n), in_place, n, shift, 0.0)
        assert np.array_equal(np.tril(in_place), np.tril(L)), n
        x = rng.standard_normal(m)
        expected = x.copy()
        expected[index] = np.linalg.solve(A, x[index])
        solve(L, n, x, index)
        assert np.allclose(x, expected, rtol=1e-10, atol=1e-12), n
        outside = np.setdiff1d(np.arange(m), index)
        assert np.array_equal(x[outside], expected[outside])


def test_factor_refuses_an_indefinite_matrix_and_a_pivot_below_the_ratio(kernels):
    """False for a negative pivot, for a shift past the least eigenvalue, and for a pivot below pivot_ratio times
    the largest (a rank-deficient block), which ratio 0 takes."""
    factor, _ = kernels
    n = 4
    L = np.zeros((n, n))
    assert not factor(np.diag([1.0, 2.0, -1.0, 3.0]), np.arange(n), L, n, 0.0, 0.0)
    A = np.diag([1.0, 2.0, 3.0, 4.0])
    assert factor(A, np.arange(n), L, n, 0.99, 0.0)
    assert not factor(A, np.arange(n), L, n, 1.01, 0.0)
    tiny = np.diag([1.0, 1e-14, 1.0, 1.0])
    assert factor(tiny, np.arange(n), L, n, 0.0, 0.0)
    assert not factor(tiny, np.arange(n), L, n, 0.0, 1e-12)
