"""The legged controller's compiled kernels against the NumPy code they replace: the configuration error against
``configuration.difference``, and the contact Jacobian's independent rows against the SVD's rank and row space.
Each kernel runs as plain Python and, where numba is installed, compiled."""
import importlib.util

import numpy as np
import pytest

from robot_dynamics_ros.algorithms.backends import compiled
from robot_dynamics_ros.control.contact_inverse_dynamics import RANK_TOLERANCE, independent_rows_kernel
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


@pytest.mark.parametrize('name', BACKENDS)
def test_independent_rows_span_the_rows_as_the_svd_finds_them(name):
    """J with dependent rows (several points of one foot, a foot repeated): the kernel's T gives T J with
    orthonormal rows, as many as the SVD's rank of J (singular values above RANK_TOLERANCE of the largest), spanning
    J's row space (the same projector as the SVD's right singular vectors)."""
    kernel = backend(independent_rows_kernel, name)
    rng = np.random.default_rng(11)
    for rows, rank in ((12, 12), (27, 15), (24, 9), (6, 1)):
        J = rng.standard_normal((rows, rank)) @ rng.standard_normal((rank, 18))
        T = kernel(J)
        s = np.linalg.svd(J, compute_uv=False)
        svd_rank = int(np.sum(s > RANK_TOLERANCE * s[0]))
        assert svd_rank == rank and T.shape == (rank, rows)
        W = T @ J
        np.testing.assert_allclose(W @ W.T, np.eye(rank), atol=1e-9)
        basis = np.linalg.svd(J)[2][:rank]
        np.testing.assert_allclose(W.T @ W, basis.T @ basis, atol=1e-9)
