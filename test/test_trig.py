"""fast.trig (the generated code's cos and sin of the joint angles) against libm's, through NumPy."""
import numpy as np
import pytest

pytest.importorskip('numba')
from robot_dynamics_ros.fast.trig import REDUCTION_LIMIT, cos_sin, sin_cos  # noqa: E402

# fdlibm's polynomials are within 1 ulp on [-pi/4, pi/4] and the three-part reduction loses less than another for
# |x| < REDUCTION_LIMIT: within 2 ulp of 1.0 of the exact value, as libm is within 1 ulp.
TOLERANCE = 3 * np.finfo(float).eps


@pytest.mark.parametrize('scale', [1.0, 10.0, 1e3, REDUCTION_LIMIT, 1e9])
def test_sin_cos_equal_libm(scale):
    x = np.random.default_rng(0).uniform(-scale, scale, size=(1000, 7))
    x[0, :] = [0.0, -0.0, np.pi / 2, -np.pi, 3 * np.pi / 4, 1e-300, -5 * np.pi / 2]   # quadrant edges, tiny
    cos_x, sin_x = np.empty_like(x), np.empty_like(x)
    sin_cos(x, cos_x, sin_x)
    assert np.abs(cos_x - np.cos(x)).max() <= TOLERANCE
    assert np.abs(sin_x - np.sin(x)).max() <= TOLERANCE
    one_by_one = np.array([cos_sin(angle) for angle in x[:50].ravel()])   # the single call's version
    assert np.abs(one_by_one[:, 0] - np.cos(x[:50].ravel())).max() <= TOLERANCE
    assert np.abs(one_by_one[:, 1] - np.sin(x[:50].ravel())).max() <= TOLERANCE


def test_sin_cos_of_non_finite_angles_is_nan():
    x = np.array([np.nan, np.inf, -np.inf])
    cos_x, sin_x = np.empty(3), np.empty(3)
    sin_cos(x, cos_x, sin_x)
    assert np.isnan(cos_x).all() and np.isnan(sin_x).all()
