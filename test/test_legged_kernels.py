"""The legged controller's compiled configuration error against the NumPy code it replaces,
``configuration.difference``, as plain Python and, where numba is installed, compiled."""
import importlib.util

import numpy as np
import pytest

from robot_dynamics_ros.algorithms.backends import compiled
from robot_dynamics_ros.control.standing import configuration_error
from robot_dynamics_ros.model.configuration import difference, integrate, random_configuration

BACKENDS = ['python'] + (['numba'] if importlib.util.find_spec('numba') else [])


def backend(kernel, name):
    return compiled(kernel) if name == 'numba' else kernel


def base_rotated_by(q, axis, angle):
    """q with its base orientation turned by `angle` about the unit `axis` (body frame)."""
    from scipy.spatial.transform import Rotation
    turned = q.copy()
    turned[3:7] = (Rotation.from_quat(q[3:7]) * Rotation.from_rotvec(angle * axis)).as_quat()
    return turned


@pytest.mark.parametrize('name', BACKENDS)
def test_configuration_error_equals_the_configuration_difference(quadruped, name):
    """On random pairs the kernel gives configuration.difference (one floating-point formula against another: 1e-9).
    Within 1e-6 rad of a half turn the axis sign of the log is a choice: there the error must still take q to q_ref
    when integrated."""
    model, _ = quadruped
    kernel = backend(configuration_error, name)
    rng = np.random.default_rng(7)
    error = np.empty(model.nv)
    for _ in range(200):
        q, q_ref = random_configuration(model, rng), random_configuration(model, rng)
        kernel(q, q_ref, error)
        np.testing.assert_allclose(error, difference(model, q, q_ref), atol=1e-9)
    for angle in (np.pi - 1e-7, np.pi):
        q = random_configuration(model, rng)
        axis = rng.standard_normal(3)
        q_ref = base_rotated_by(q, axis / np.linalg.norm(axis), angle)
        kernel(q, q_ref, error)
        reached = integrate(model, q, error)
        np.testing.assert_allclose(reached[:3], q_ref[:3], atol=1e-9)
        assert abs(abs(reached[3:7] @ q_ref[3:7]) - 1.0) < 1e-12   # the same rotation (q and -q)
        np.testing.assert_allclose(reached[7:], q_ref[7:], atol=1e-12)
