"""Saha's U D U^T and Jain's operators: identities that must hold, and Pinocchio where it has the quantity."""
import os

import numpy as np
import pytest
from hypothesis import given, settings

from random_robots import random_trees
from robot_dynamics_ros import (SingularTaskError, aba, crba, forward_dynamics_udut, load_urdf,
                                mass_matrix_inverse, mass_matrix_log_det, operational_space_inertia, rnea,
                                udut)

from conftest import random_states, relative_error
from oracle import PinocchioOracle, pin

RTOL = 1e-10

# Well-posed operational-space tasks per test robot: (links, rows of the stacked [angular; linear] rows).
# The forearm frames of two_arm_tree sit on their elbow axes and fixed_and_massless' tip on the j3 axis,
# so their positions have fewer independent rows than the arms have joints: they get orientation rows.
TASKS = {
    'arm7.urdf': [(['arm7_tool'], None), (['arm7_link5', 'arm7_tool'], [3, 4, 5, 6, 7, 8])],
    'two_arm_tree.urdf': [(['left_forearm', 'right_forearm'], [0, 1, 2, 6, 7, 8])],
    'prismatic_chain.urdf': [(['hand'], [3, 4, 5]), (['slider'], [3, 4, 5])],
    'fixed_and_massless.urdf': [(['tip'], [0, 1, 2])],
}
PIN_REFERENCES = ('local', 'world', 'local_world_aligned')  # pin.LOCAL, pin.WORLD, pin.LOCAL_WORLD_ALIGNED


def is_ancestor(model, i, k):
    while k >= 0:
        if k == i:
            return True
        k = model.parent[k]
    return False


def check_factorization_and_solves(model, q, qd, tau):
    M = crba(model, q)
    U, D = udut(model, q)
    assert relative_error(U @ np.diag(D) @ U.T, M) < RTOL
    assert np.all(np.diag(U) == 1.0) and np.all(np.tril(U, -1) == 0.0)
    assert np.all(D > 0)
    # Jain: U_ik is nonzero only where i is an ancestor of k.
    unrelated = [(i, k) for i in range(model.nv) for k in range(i + 1, model.nv) if not is_ancestor(model, i, k)]
    assert all(U[i, k] == 0.0 for i, k in unrelated)
    f_ext = np.random.default_rng(7).normal(size=(model.nv, 6))
    gravity = np.array([0.3, -1.2, -9.0])
    assert relative_error(forward_dynamics_udut(model, q, qd, tau), aba(model, q, qd, tau)) < RTOL
    assert relative_error(forward_dynamics_udut(model, q, qd, tau, gravity, f_ext),
                          aba(model, q, qd, tau, gravity, f_ext)) < RTOL
    h = rnea(model, q, qd, np.zeros(model.nv))
    assert relative_error(forward_dynamics_udut(model, q, qd, tau), np.linalg.solve(M, tau - h)) < RTOL
    sign, log_det = np.linalg.slogdet(M)
    assert sign > 0 and abs(mass_matrix_log_det(model, q) - log_det) < RTOL * max(1.0, abs(log_det))
    Minv = mass_matrix_inverse(model, q)
    assert relative_error(Minv @ M, np.eye(model.nv)) < RTOL
    return Minv


def test_udut_operators_match_identities_and_pinocchio(urdf_path):
    model = load_urdf(urdf_path)
    oracle = PinocchioOracle(urdf_path, model)
    for q, qd, tau in random_states(model):
        Minv = check_factorization_and_solves(model, q, qd, tau)
        assert relative_error(Minv, oracle.minv(q)) < 1e-9


def pinocchio_task_jacobian(oracle, q, links, rows, reference):
    pq = oracle.q(q)
    blocks = []
    for link in links:
        J = pin.computeFrameJacobian(oracle.pin_model, oracle.data, pq, oracle.pin_model.getFrameId(link),
                                     getattr(pin, reference.upper())).reshape(6, -1)[:, oracle.v_index]
        blocks.append(np.vstack([J[3:], J[:3]]))  # Pinocchio's [linear; angular] -> [angular; linear]
    J = np.vstack(blocks)
    return J if rows is None else J[rows]


@pytest.mark.parametrize('reference', sorted(PIN_REFERENCES))
def test_operational_space_inertia_matches_inverse_task_compliance(urdf_path, reference):
    model = load_urdf(urdf_path)
    oracle = PinocchioOracle(urdf_path, model)
    tasks = TASKS.get(os.path.basename(urdf_path))
    if tasks is None:
        pytest.skip(f"no well-posed operational-space task written down for {urdf_path}")
    for q, _, _ in random_states(model):
        for links, rows in tasks:
            J = pinocchio_task_jacobian(oracle, q, links, rows, reference)
            expected = np.linalg.inv(J @ oracle.minv(q) @ J.T)
            assert relative_error(operational_space_inertia(model, q, links, reference, rows), expected) < 1e-9


def test_operational_space_inertia_rejects_dependent_rows_and_unknown_links(urdf_path):
    model = load_urdf(urdf_path)
    q = model.random_configuration(np.random.default_rng(3))
    deepest_link = model.body_names[-1]
    # 12 rows of two frames on one body are never independent; neither is a frame on the fixed root.
    with pytest.raises(SingularTaskError, match='pass rows'):
        operational_space_inertia(model, q, [deepest_link, deepest_link])
    with pytest.raises(SingularTaskError):
        operational_space_inertia(model, q, [model.root_link], rows=[0])
    with pytest.raises(KeyError, match=deepest_link):
        operational_space_inertia(model, q, ['no_such_link'])


def test_six_row_task_on_four_dof_chain_is_singular():
    from conftest import TEST_URDFS
    model = load_urdf(TEST_URDFS['prismatic_chain'])
    assert model.nv < 6
    with pytest.raises(SingularTaskError):
        operational_space_inertia(model, model.neutral(), ['hand'])


@settings(max_examples=15, deadline=None)
@given(random_trees)
def test_udut_and_operators_on_random_trees(xml):
    model = load_urdf(xml)
    for q, qd, tau in random_states(model, n=3):
        check_factorization_and_solves(model, q, qd, tau)
