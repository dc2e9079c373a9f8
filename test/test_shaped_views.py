"""``backends.shaped``, compiled (``algorithms/numba_views.py``), is NumPy's reshape of a one-dimensional
C-contiguous array: the same shape, strides and entries, a view of the same memory (a write through it reaches the
arena), and it refuses an array whose entries are not contiguous."""
import numpy as np
import pytest

from robot_dynamics_ros.algorithms.backends import compiled, njit, shaped

pytest.importorskip('numba')
from numba.core.errors import TypingError  # noqa: E402


@njit(cache=False)
def matrix_of(arena, start, rows, columns):
    view = shaped(arena[start:start + rows * columns], (rows, columns))
    view[rows - 1, columns - 1] = -1.0   # written through the view
    return view


@njit(cache=False)
def block_of(arena, n):
    return shaped(arena[:9 * n], (n, 3, 3))


def test_compiled_shaped_views_equal_numpys_reshape_and_share_the_arena():
    arena = np.arange(60.0)
    expected = arena.copy()[5:5 + 4 * 7].reshape((4, 7))
    expected[3, 6] = -1.0
    view = compiled(matrix_of)(arena, 5, 4, 7)
    assert view.shape == (4, 7) and view.strides == expected.strides and view.flags.c_contiguous
    np.testing.assert_array_equal(view, expected)
    assert arena[5 + 4 * 7 - 1] == -1.0 and np.shares_memory(view, arena)
    blocks = compiled(block_of)(arena, 6)
    assert blocks.shape == (6, 3, 3) and blocks.strides == (72, 24, 8)
    np.testing.assert_array_equal(blocks, arena[:54].reshape((6, 3, 3)))


def test_compiled_shaped_refuses_a_strided_array():
    with pytest.raises(TypingError):
        compiled(block_of)(np.arange(120.0)[::2], 6)
