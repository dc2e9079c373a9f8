"""The inertial-parameter regressor: tau = Y pi against RNEA and Pinocchio's joint-torque regressor."""
import dataclasses

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from random_robots import random_trees
from robot_dynamics_ros import load_urdf, rnea, spatial
from robot_dynamics_ros.algorithms.regressor import (inertia_parameters, parameter_names, regressor,
                                                     standard_parameters)

from oracle import PinocchioOracle, pin

# Pinocchio's per-body order is m, mc_x, mc_y, mc_z, Ixx, Ixy, Iyy, Ixz, Iyz, Izz; ours is
# XX XY XZ YY YZ ZZ MX MY MZ M: position of each of ours in Pinocchio's block.
PINOCCHIO_COLUMN = [4, 5, 7, 6, 8, 9, 1, 2, 3, 0]


def random_state(model, rng):
    return model.random_configuration(rng), rng.normal(size=model.nv), rng.normal(size=model.nv)


def inertia_from_parameters(p):
    """6x6 spatial inertia about the frame origin from XX XY XZ YY YZ ZZ MX MY MZ M (written from the
    definition, independent of inertia_parameters)."""
    I = np.zeros((6, 6))
    I[:3, :3] = [[p[0], p[1], p[2]], [p[1], p[3], p[4]], [p[2], p[4], p[5]]]
    I[:3, 3:] = spatial.skew(p[6:9])
    I[3:, :3] = I[:3, 3:].T
    I[3:, 3:] = p[9] * np.eye(3)
    return I


def test_y_pi_equals_rnea(urdf_path):
    model = load_urdf(urdf_path)
    rng = np.random.default_rng(1)
    pi = standard_parameters(model)
    for _ in range(3):
        q, qd, qdd = random_state(model, rng)
        tau = rnea(model, q, qd, qdd)
        np.testing.assert_allclose(regressor(model, q, qd, qdd) @ pi, tau, atol=1e-10 * max(1, abs(tau).max()))


def test_gravity_enters_like_rnea(urdf_path):
    model = load_urdf(urdf_path)
    rng = np.random.default_rng(2)
    g = rng.normal(size=3) * 5
    q, qd, qdd = random_state(model, rng)
    np.testing.assert_allclose(regressor(model, q, qd, qdd, gravity=g) @ standard_parameters(model),
                               rnea(model, q, qd, qdd, gravity=g), atol=1e-10)


def test_extra_columns_are_rotor_inertia_friction_and_offset(urdf_path):
    model = load_urdf(urdf_path)
    rng = np.random.default_rng(3)
    Ia, off = rng.uniform(0.1, 1, model.nv), rng.normal(size=model.nv)
    q, qd, qdd = random_state(model, rng)
    Y = regressor(model, q, qd, qdd, rotor_inertia=True, viscous=True, coulomb=True, offset=True)
    pi = standard_parameters(model, rotor_inertia=Ia, viscous=True, coulomb=True, offset=off)
    expected = rnea(model, q, qd, qdd) + Ia * qdd + model.damping * qd + model.friction * np.sign(qd) + off
    np.testing.assert_allclose(Y @ pi, expected, atol=1e-10)
    names = parameter_names(model, rotor_inertia=True, viscous=True, coulomb=True, offset=True)
    assert len(names) == Y.shape[1] == 14 * model.nv
    assert names[:10] == ['XX1', 'XY1', 'XZ1', 'YY1', 'YZ1', 'ZZ1', 'MX1', 'MY1', 'MZ1', 'M1']
    assert names[10 * model.nv:10 * model.nv + 5] == ['Ia1', 'Fv1', 'Fc1', 'off1', 'Ia2']
    only_viscous = parameter_names(model, viscous=True)
    assert only_viscous[10 * model.nv:] == [f'Fv{j + 1}' for j in range(model.nv)]


def test_matches_pinocchio_joint_torque_regressor(urdf_path):
    model = load_urdf(urdf_path)
    oracle = PinocchioOracle(urdf_path, model)
    rng = np.random.default_rng(4)
    columns = [10 * (oracle.pin_model.getJointId(name) - 1) + k
               for name in model.joint_names for k in PINOCCHIO_COLUMN]
    for _ in range(3):
        q, qd, qdd = random_state(model, rng)
        Y_pin = pin.computeJointTorqueRegressor(oracle.pin_model, oracle.data, oracle.q(q), oracle.v(qd),
                                                oracle.v(qdd))
        np.testing.assert_allclose(regressor(model, q, qd, qdd), Y_pin[oracle.v_index][:, columns], atol=1e-10)


def test_inertia_parameters_of_spatial_inertia():
    rng = np.random.default_rng(5)
    p = rng.normal(size=10)
    np.testing.assert_allclose(inertia_parameters(inertia_from_parameters(p)), p)
    m, c = 2.0, np.array([0.1, -0.2, 0.3])
    expected_first_moment = m * c
    np.testing.assert_allclose(inertia_parameters(spatial.spatial_inertia(m, c, np.eye(3)))[6:], [*expected_first_moment, m])


@settings(max_examples=10, deadline=None)
@given(random_trees, st.integers(0, 2**32 - 1))
def test_linear_in_any_parameters_on_random_trees(xml, seed):
    """Y does not depend on pi: Y @ pi equals RNEA of the same tree with other random inertias."""
    model = load_urdf(xml)
    rng = np.random.default_rng(seed)
    inertias = []
    for _ in range(model.nv):
        R = np.linalg.qr(rng.normal(size=(3, 3)))[0]
        moments = rng.uniform(0.1, 1.0, 3)
        moments[2] = rng.uniform(abs(moments[0] - moments[1]), moments[0] + moments[1])
        inertias.append(spatial.spatial_inertia(rng.uniform(0.1, 5), rng.normal(size=3), R @ np.diag(moments) @ R.T))
    pi = np.concatenate([inertia_parameters(I) for I in inertias])
    other = dataclasses.replace(model, inertia=np.array(inertias))
    q, qd, qdd = random_state(model, rng)
    np.testing.assert_allclose(regressor(model, q, qd, qdd) @ pi, rnea(other, q, qd, qdd), atol=1e-9)
