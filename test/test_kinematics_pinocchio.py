"""Frame placements, frame Jacobians and energies against Pinocchio, every link frame, joints matched by name."""
import numpy as np
import pytest
from hypothesis import given, settings

from random_robots import random_trees
from robot_dynamics_ros import (crba, frame_jacobian, frame_placement, frame_placements, kinetic_energy,
                                load_urdf, potential_energy)

from conftest import relative_error
from oracle import PinocchioOracle, pin
from test_random_trees import XmlOracle

N_STATES = 50
RTOL = 1e-9
PIN_REFERENCES = ('local', 'world', 'local_world_aligned')  # pin.LOCAL, pin.WORLD, pin.LOCAL_WORLD_ALIGNED


def check_against_pinocchio(model, oracle, n_states, seed=0):
    pm, data = oracle.pin_model, oracle.data
    rng = np.random.default_rng(seed)
    for _ in range(n_states):
        q, qd = model.random_configuration(rng), rng.normal(size=model.nv)
        pq = oracle.q(q)
        pin.framesForwardKinematics(pm, data, pq)
        expected_placements = {name: data.oMf[pm.getFrameId(name, pin.BODY)].copy() for name in model.frames}
        placements = frame_placements(model, q)
        assert set(placements) == set(expected_placements)
        for name, (R, p) in placements.items():
            assert relative_error(R, expected_placements[name].rotation) < RTOL
            assert relative_error(p, expected_placements[name].translation) < RTOL
            for reference in PIN_REFERENCES:
                J = pin.computeFrameJacobian(pm, data, pq, pm.getFrameId(name, pin.BODY),
                                             getattr(pin, reference.upper()))
                J = J.reshape(6, -1)[:, oracle.v_index]  # eigenpy returns (6,) when nv = 1
                assert relative_error(frame_jacobian(model, q, name, reference), np.vstack([J[3:], J[:3]])) < RTOL
        assert abs(kinetic_energy(model, q, qd) - pin.computeKineticEnergy(pm, data, pq, oracle.v(qd))) \
            < RTOL * max(1.0, kinetic_energy(model, q, qd))
        V = pin.computePotentialEnergy(pm, data, pq)
        assert abs(potential_energy(model, q) - V) < RTOL * max(1.0, abs(V))


def test_frames_jacobians_and_energies_match_pinocchio(urdf_path):
    model = load_urdf(urdf_path)
    check_against_pinocchio(model, PinocchioOracle(urdf_path, model), N_STATES)


def test_energies_under_other_gravity_and_identities(urdf_path):
    model = load_urdf(urdf_path)
    oracle = PinocchioOracle(urdf_path, model)
    gravity = np.array([1.5, -2.0, -7.0])
    oracle.pin_model.gravity.linear = gravity
    rng = np.random.default_rng(5)
    for _ in range(10):
        q, qd = model.random_configuration(rng), rng.normal(size=model.nv)
        V = pin.computePotentialEnergy(oracle.pin_model, oracle.data, oracle.q(q))
        assert abs(potential_energy(model, q, gravity) - V) < RTOL * max(1.0, abs(V))
        # T = 1/2 qd^T M qd; and the tool Jacobian is the same velocity in every reference.
        assert abs(kinetic_energy(model, q, qd) - 0.5 * qd @ crba(model, q) @ qd) < 1e-12 * max(1.0, qd @ qd)
        name = model.body_names[-1]
        R, p = frame_placement(model, q, name)
        local = frame_jacobian(model, q, name, 'local') @ qd
        aligned = frame_jacobian(model, q, name, 'local_world_aligned') @ qd
        world = frame_jacobian(model, q, name, 'world') @ qd
        assert np.allclose(aligned, np.concatenate([R @ local[:3], R @ local[3:]]), rtol=0, atol=1e-12)
        assert np.allclose(world, np.concatenate([aligned[:3], aligned[3:] - np.cross(aligned[:3], p)]),
                           rtol=0, atol=1e-12)


def test_unknown_link_and_reference_are_rejected(urdf_path):
    model = load_urdf(urdf_path)
    q = model.neutral()
    some_link = model.root_link
    for call in (lambda: frame_placement(model, q, 'no_such_link'),
                 lambda: frame_jacobian(model, q, 'no_such_link')):
        with pytest.raises(KeyError, match=some_link):
            call()
    with pytest.raises(ValueError, match='local_world_aligned'):
        frame_jacobian(model, q, some_link, 'body')
    assert np.all(frame_jacobian(model, q, some_link) == 0.0)  # the root does not move


@settings(max_examples=10, deadline=None)
@given(random_trees)
def test_random_trees_match_pinocchio(xml):
    model = load_urdf(xml)
    check_against_pinocchio(model, XmlOracle(xml, model), n_states=2)
