"""The legged controller's kernels, as plain Python and, where numba is installed, compiled: its configuration error
against the NumPy code it replaces, ``configuration.difference``; the contact program's elimination of its
equalities against their matrix written out with NumPy."""
import importlib.util

import numpy as np
import pytest

from robot_dynamics_ros.algorithms.backends import compiled
from robot_dynamics_ros.control.contact_inverse_dynamics import (STANDARD_GRAVITY, eliminate_equalities,
                                                                 independent_rows, point_acceleration_bias,
                                                                 point_jacobians)
from robot_dynamics_ros.control.standing import configuration_error
from robot_dynamics_ros.fast import bias_torques, crba
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


FEET = [(f'{leg}_calf', (0.0, 0.0, -0.2)) for leg in ('FL', 'FR', 'RL', 'RR')]


@pytest.mark.parametrize('name', BACKENDS)
def test_the_elimination_solves_the_equalities_on_an_orthonormal_null_space(quadruped, name):
    """eliminate_equalities for no foot, one to four feet and a point given twice (dependent rows), at random
    states: E = [[M_b / W, -J_cb^T], [B J_c, 0]], e = [-h_b / W; -B Jdot_c v] ((1)'s base rows in units of the
    weight W and (2) on the basis B of J_c's rows, independent_rows), x0 solves E x = e (to rounding: 1e-12 of
    the data, of order one), Z has orthonormal columns (Z^T Z = I) spanning E's null space (E Z = 0, and
    n - rank E of them)."""
    model, _ = quadruped
    kernel = backend(eliminate_equalities, name)
    rng = np.random.default_rng(8)
    base = np.arange(6, dtype=np.int64)
    weight = STANDARD_GRAVITY * sum(inertia[5, 5] for inertia in model.inertia)
    for feet in ([], FEET[:1], FEET[:2], FEET[:3], FEET, FEET + FEET[:1]):
        for _ in range(5):
            q, v = random_configuration(model, rng), rng.normal(size=model.nv)
            M, h = crba(model, q), bias_torques(model, q, v)
            Jc = point_jacobians(model, q, feet) if feet else np.zeros((0, model.nv))
            bias = point_acceleration_bias(model, q, v, feet) if feet else np.zeros(0)
            B = independent_rows(Jc)
            E = np.block([[M[:6] / weight, -Jc[:, :6].T], [B @ Jc, np.zeros((len(B), len(Jc)))]])
            e = np.concatenate([-h[:6] / weight, -B @ bias])
            x0, Z, residual = kernel(M, h, Jc, bias, base, weight)
            assert residual < 1e-12
            np.testing.assert_allclose(E @ x0, e, atol=1e-12 * max(1.0, np.abs(e).max()))
            np.testing.assert_allclose(Z.T @ Z, np.eye(Z.shape[1]), atol=1e-12)
            np.testing.assert_allclose(E @ Z, 0.0, atol=1e-12)
            assert Z.shape == (model.nv + len(Jc), model.nv + len(Jc) - np.linalg.matrix_rank(E))


@pytest.mark.parametrize('name', BACKENDS)
def test_the_elimination_reports_base_rows_it_cannot_meet(name):
    """No feet and base rows of M zero (G = 0): nothing moves the base, and the residual is the largest |g| =
    |h_b| / W (ContactInverseDynamics raises ContactForceError on it); with M_b whole it is zero."""
    kernel = backend(eliminate_equalities, name)
    nv, weight = 8, 10.0
    M, h = np.eye(nv), np.arange(1.0, nv + 1.0)
    base = np.arange(6, dtype=np.int64)
    _, _, residual = kernel(M, h, np.zeros((0, nv)), np.zeros(0), base, weight)
    assert residual < 1e-12
    M[:6] = 0.0
    _, _, residual = kernel(M, h, np.zeros((0, nv)), np.zeros(0), base, weight)
    assert residual == pytest.approx(6.0 / weight, rel=1e-12)
