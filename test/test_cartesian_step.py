"""CartesianStep, the Cartesian controller's update in one compiled call, against the NumPy path it replaces in the
node (JointStateMapper.map, CartesianTarget.sample, CartesianController.update): the same efforts to 1e-12 relative
(the same kernels compiled into one call; only the order of operations may differ), and nothing computed where the
NumPy path raises."""
from array import array

import numpy as np
import pytest

from robot_dynamics_ros import load_urdf
from robot_dynamics_ros.control.cartesian import (LAWS, MAX_TARGET_GAP, CartesianController, CartesianTarget,
                                                  default_end_effector, dexterous_posture,
                                                  rotation_matrix)
from robot_dynamics_ros.control.cartesian_step import CartesianStep
from robot_dynamics_ros.control.joint_states import JointStateMapper, coupled_mimic_joints, plausibility_bounds
from robot_dynamics_ros.spatial import matrix_to_quaternion

from test_cartesian_control import load
from conftest import example_robot_data
from test_mimic import PUBLIC


def numpy_update(mapper, controller, target, names, positions, velocities, t, wrench):
    """The NumPy path's efforts, or the ValueError it raises."""
    try:
        q, qd = mapper.map(names, positions, velocities)
        return controller.update(q, qd, *target.sample(t), None, wrench)
    except ValueError as e:
        return e


def targets_stamped_ahead(controller, q, start):
    """Two target streams as the node gets them: 20 targets 10 ms apart turning about z and moving along x from the
    frame's pose at q (stamped ahead of the state times), each with its own CartesianTarget (a target keeps state)."""
    controller.ee.update(q, np.zeros_like(q))
    R0, p0 = controller.ee.R.copy(), controller.ee.p.copy()
    streams = []
    for _ in range(2):
        target = CartesianTarget(R0, p0, start)
        for k in range(1, 21):
            R = rotation_matrix(np.array([0.0, 0.0, 0.01 * k])) @ R0
            target.set(p0 + [0.001 * k, 0.0, 0.0], matrix_to_quaternion(R), start + 0.01 * k)
        streams.append(target)
    return streams


def check_step(model, law, rng, mimic_names=()):
    """States along the targets (before the first, between, extrapolated, held after MAX_TARGET_GAP), names shuffled,
    as array('d') or lists, with and without a wrench; returns how many updates were compared."""
    link = default_end_effector(model)
    q0 = dexterous_posture(model, link)
    controllers = [CartesianController(model, link, law, nullspace_stiffness=10.0, posture=q0,
                                       friction_compensation=True, max_force=30.0, max_linear_speed=0.5)
                   for _ in range(2)]
    followers = coupled_mimic_joints(model)
    mapper = JointStateMapper(model.joint_names, bounds=plausibility_bounds(model), followers=followers)
    step = CartesianStep(mapper, controllers[1])
    numpy_target, step_target = targets_stamped_ahead(controllers[0], q0, 1.0)
    compared = 0
    for t in (0.5, 1.0, 1.004, 1.015, 1.1, 1.19, 1.25, 1.2 + MAX_TARGET_GAP + 0.01, 3.0):
        q, qd = q0 + rng.normal(scale=0.05, size=model.nv), rng.normal(scale=0.2, size=model.nv)
        names = list(model.joint_names) + list(mimic_names)
        positions, velocities = list(q) + [0.0] * len(mimic_names), list(qd) + [0.0] * len(mimic_names)
        shuffle = rng.permutation(len(names))
        names = [names[i] for i in shuffle]
        positions, velocities = [positions[i] for i in shuffle], [velocities[i] for i in shuffle]
        if rng.random() < 0.5:
            positions, velocities = array('d', positions), array('d', velocities)
        wrench = rng.normal(scale=20.0, size=6) if rng.random() < 0.5 else None
        expected = numpy_update(mapper, controllers[0], numpy_target, names, positions, velocities, t, wrench)
        tau = step(names, positions, velocities, step_target, t, wrench)
        assert not isinstance(expected, ValueError), expected
        scale = max(1.0, np.abs(expected).max())
        np.testing.assert_allclose(tau, expected, rtol=0, atol=1e-12 * scale)
        assert step.controller.singular == controllers[0].singular
        np.testing.assert_array_equal(step_target.ring, numpy_target.ring)   # the same targets done
        compared += 1
    return compared


@pytest.mark.parametrize('law', LAWS)
@pytest.mark.parametrize('robot', ('ur5', 'panda', 'xarm7'))
def test_cartesian_step_equals_numpy_path(robot, law):
    pytest.importorskip('numba')
    assert check_step(load(robot), law, np.random.default_rng(3)) == 9


@pytest.mark.parametrize('law', LAWS)
def test_cartesian_step_equals_numpy_path_with_coupled_mimic_joints(law):
    """Panda with its hand, mimic true: the finger's mimic joint is in the joint states and skipped by both."""
    pytest.importorskip('numba')
    model = load_urdf(example_robot_data(PUBLIC['panda'][0]), mimic=True)
    assert model.coupling is not None
    assert check_step(model, law, np.random.default_rng(4), mimic_names=list(coupled_mimic_joints(model))) == 9


def test_cartesian_step_refuses_what_the_numpy_path_rejects():
    """Unknown, missing and duplicate joints, wrong lengths, no velocities, non-finite or implausible values, a
    non-finite wrench: the step computes nothing (None) and leaves tau as it was, the NumPy path raises; a good
    state after a bad one computes again."""
    pytest.importorskip('numba')
    model = load('ur5')
    names = list(model.joint_names)
    link = default_end_effector(model)
    q = dexterous_posture(model, link)
    controller = CartesianController(model, link)
    mapper = JointStateMapper(names, bounds=plausibility_bounds(model))
    step = CartesianStep(mapper, controller)
    controller.ee.update(q, q)
    target = CartesianTarget(controller.ee.R.copy(), controller.ee.p + 0.01)
    good = (names, list(q), [0.0] * 6)
    fast, beyond = [0.0] * 6, list(q)
    fast[1], beyond[2] = 1e155, model.upper[2] + 1.0
    cases = [((names + ['x'], list(q) + [0.0], [0.0] * 7), None), ((names[:5], list(q[:5]), [0.0] * 5), None),
             ((names[:5] + names[:1], list(q), [0.0] * 6), None), ((names, list(q[:5]), [0.0] * 6), None),
             ((names, list(q), [0.0] * 7), None), ((names, list(q), []), None),
             ((names, list(q[:5]) + [np.nan], [0.0] * 6), None), ((names, list(q), fast), None),
             ((names, beyond, [0.0] * 6), None), (good, np.array([0.0, 0.0, 0.0, np.inf, 0.0, 0.0]))]
    before = step(*good, target, 0.0).copy()
    for fields, wrench in cases:
        assert isinstance(numpy_update(mapper, controller, target, *fields, 0.0, wrench), ValueError)
        controller.tau[:] = before
        assert step(*fields, target, 0.0, wrench) is None
        np.testing.assert_array_equal(controller.tau, before)
        np.testing.assert_array_equal(step(*good, target, 0.0), before)
