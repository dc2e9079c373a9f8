"""Control laws against Pinocchio, reference trajectories against their own derivatives, joint-state mapping;
the compiled controller update (ControlStep) against the NumPy path."""
import re
from array import array

import numpy as np
import pytest
from conftest import BUNDLED_URDF, TEST_URDFS
from hypothesis import given, settings
from oracle import PinocchioOracle
from random_robots import random_trees

from robot_dynamics_ros import load_urdf
from robot_dynamics_ros.control.computed_torque import CONTROL_MODES, ComputedTorqueController, ControlStep
from robot_dynamics_ros.control.joint_states import JointStateMapper, plausibility_bounds
from robot_dynamics_ros.control.references import TrajectoryReference, sinusoid_reference


def random_tracking_state(model, rng):
    q = model.random_configuration(rng)
    return q, rng.normal(size=model.nv), q + 0.1 * rng.normal(size=model.nv), rng.normal(size=model.nv), \
        rng.normal(size=model.nv)


@pytest.mark.parametrize('friction', [False, True])
@pytest.mark.parametrize('mode', ['computed_torque', 'pd_gravity', 'gravity_compensation'])
def test_control_laws_match_pinocchio(urdf_path, mode, friction):
    """The laws of the class docstring with Pinocchio's RNEA; friction compensation adds the URDF's damping qd_ref +
    friction tanh(qd_ref / 0.01 rad/s) in the first two modes."""
    model = load_urdf(urdf_path)
    oracle = PinocchioOracle(urdf_path, model)
    rng = np.random.default_rng(3)
    kp, kd = rng.uniform(10, 100, model.nv), 7.0
    controller = ComputedTorqueController(model, kp, kd, mode=mode, friction_compensation=friction)
    for _ in range(3):
        q, qd, q_ref, qd_ref, qdd_ref = random_tracking_state(model, rng)
        feedback = kp * (q_ref - q) + kd * (qd_ref - qd)
        zero = np.zeros(model.nv)
        expected = {'computed_torque': oracle.rnea(q, qd, qdd_ref + feedback),
                    'pd_gravity': feedback + oracle.rnea(q, zero, zero),
                    'gravity_compensation': oracle.rnea(q, zero, zero)}[mode]
        if friction and mode != 'gravity_compensation':
            expected = expected + model.damping * qd_ref + model.friction * np.tanh(qd_ref / 0.01)
        expected = np.clip(expected, -model.effort_limit, model.effort_limit)
        np.testing.assert_allclose(controller.compute(q, qd, q_ref, qd_ref, qdd_ref), expected, atol=1e-9)


def test_efforts_are_clamped_to_limits(arm):
    controller = ComputedTorqueController(arm, kp=1e6, kd=0.0, mode='pd_gravity')
    q = arm.neutral()
    signs = np.where(np.arange(arm.nv) % 2 == 0, 1.0, -1.0)
    tau = controller.compute(q, np.zeros(arm.nv), q + 0.5 * signs, np.zeros(arm.nv), np.zeros(arm.nv))
    np.testing.assert_array_equal(tau, signs * arm.effort_limit)


def test_non_finite_or_wrong_length_input_is_rejected(arm):
    controller = ComputedTorqueController(arm, 100.0, 20.0)
    good = [np.zeros(arm.nv)] * 5
    for position, bad in [(0, np.full(arm.nv, np.nan)), (1, np.full(arm.nv, np.inf)), (4, np.zeros(arm.nv + 1))]:
        args = list(good)
        args[position] = bad
        with pytest.raises(ValueError):
            controller.compute(*args)
    with pytest.raises(ValueError, match='control mode'):
        ComputedTorqueController(arm, 1.0, 1.0, mode='impedance')
    with pytest.raises(ValueError, match='kp'):
        ComputedTorqueController(arm, np.ones(3), 1.0)


def test_continuous_joint_error_takes_the_short_way():
    model = load_urdf(TEST_URDFS['prismatic_chain'])
    continuous = [i for i in range(model.nv) if not np.isfinite(model.upper[i]) and model.joint_type[i] == 0]
    assert continuous, 'prismatic_chain.urdf should have a continuous joint'
    controller = ComputedTorqueController(model, 1.0, 1.0)
    q, q_ref = np.zeros(model.nv), np.zeros(model.nv)
    q[continuous], q_ref[continuous] = -3.1, 3.1
    np.testing.assert_allclose(controller.position_error(q_ref, q)[continuous], 6.2 - 2 * np.pi, atol=1e-12)


def waypoints(rng, n=3, m=5):
    times = np.cumsum(rng.uniform(0.3, 1.0, m))
    return times, rng.normal(size=(m, n)), rng.normal(size=(m, n)), rng.normal(size=(m, n))


@pytest.mark.parametrize('order', ['positions', 'velocities', 'accelerations'])
def test_trajectory_hits_waypoints_and_is_self_consistent(order):
    rng = np.random.default_rng(5)
    times, positions, velocities, accelerations = waypoints(rng)
    given = {'positions': (None, None), 'velocities': (velocities, None),
             'accelerations': (velocities, accelerations)}[order]
    reference = TrajectoryReference(times, positions, *given)
    for k, t in enumerate(times[:-1]):
        q, qd, qdd = reference.sample(t + 1e-12 if k == 0 else t)
        np.testing.assert_allclose(q, positions[k], atol=1e-9)
        if given[0] is not None:
            np.testing.assert_allclose(qd, velocities[k], atol=1e-9)
        if given[1] is not None:
            np.testing.assert_allclose(qdd, accelerations[k], atol=1e-6)
    # Derivatives agree with central differences of the positions (and velocities) inside the segments.
    h = 1e-6
    for t in rng.uniform(times[0] + 1e-3, times[-1] - 1e-3, 10):
        q_minus, qd_minus, _ = reference.sample(t - h)
        q_plus, qd_plus, _ = reference.sample(t + h)
        _, qd, qdd = reference.sample(t)
        np.testing.assert_allclose(qd, (q_plus - q_minus) / (2 * h), atol=1e-6)
        np.testing.assert_allclose(qdd, (qd_plus - qd_minus) / (2 * h), atol=1e-4)
    # Before the start the first point is held, after the end the last one, at rest.
    for t, index in [(times[0] - 1.0, 0), (times[-1], -1), (times[-1] + 5.0, -1)]:
        q, qd, qdd = reference.sample(t)
        np.testing.assert_array_equal(q, positions[index])
        assert not np.any(qd) and not np.any(qdd)


def test_positions_only_trajectory_starts_and_ends_at_rest():
    rng = np.random.default_rng(6)
    times, positions, _, _ = waypoints(rng)
    reference = TrajectoryReference(times, positions)
    for t in (times[0] + 1e-9, times[-1] - 1e-9):
        np.testing.assert_allclose(reference.sample(t)[1], 0.0, atol=1e-6)


def test_hold_and_malformed_trajectories():
    q = np.array([0.1, -0.2])
    for t in (-1.0, 0.0, 3.0):
        held, qd, qdd = TrajectoryReference.hold(q).sample(t)
        np.testing.assert_array_equal(held, q)
        assert not np.any(qd) and not np.any(qdd)
    with pytest.raises(ValueError, match='increasing'):
        TrajectoryReference([0.0, 1.0, 1.0], np.zeros((3, 2)))
    with pytest.raises(ValueError, match='times'):
        TrajectoryReference([0.0, 1.0], np.zeros((3, 2)))
    with pytest.raises(ValueError, match='velocities'):
        TrajectoryReference([0.0, 1.0], np.zeros((2, 2)), np.zeros((2, 3)))
    with pytest.raises(ValueError, match='finite'):
        TrajectoryReference([0.0, 1.0], [[0.0, np.nan], [0.0, 0.0]])


def test_sinusoid_reference_respects_limits_and_starts_at_rest(arm):
    times, q, qd, qdd = sinusoid_reference(arm, amplitude=10.0, frequency=np.linspace(0.2, 0.8, arm.nv),
                                           duration=6.0, rate=1000.0)
    assert times[0] == 0.0 and times[-1] == pytest.approx(6.0) and np.allclose(np.diff(times), 1 / 1000.0)
    assert np.all(q > arm.lower) and np.all(q < arm.upper)
    assert np.all(np.abs(qd) < arm.velocity_limit)
    assert np.all(q.max(axis=0) - q.min(axis=0) > 0.1), 'large amplitudes are scaled, not zeroed'
    np.testing.assert_allclose(q[0], q[-1], atol=1e-12)
    np.testing.assert_allclose([qd[0], qd[-1], qdd[0], qdd[-1]], 0.0, atol=1e-9)
    dt = times[1] - times[0]
    np.testing.assert_allclose(np.gradient(q, dt, axis=0)[1:-1], qd[1:-1], atol=1e-3)
    np.testing.assert_allclose(np.gradient(qd, dt, axis=0)[1:-1], qdd[1:-1], atol=1e-2)


NAMES = ('a', 'b', 'c')


def test_joint_state_mapper_reorders_by_name():
    q, qd = JointStateMapper(NAMES).map(['c', 'a', 'b'], [3.0, 1.0, 2.0], [30.0, 10.0, 20.0])
    np.testing.assert_array_equal(q, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(qd, [10.0, 20.0, 30.0])
    q, qd = JointStateMapper(NAMES, ignore_unknown=True).map(['c', 'x', 'a', 'b'], [3, 9, 1, 2], [0, 0, 0, 0])
    np.testing.assert_array_equal(q, [1.0, 2.0, 3.0])
    q, qd = JointStateMapper(NAMES, allow_missing_velocity=True).map(NAMES, [1, 2, 3], [])
    np.testing.assert_array_equal(qd, 0.0)


@pytest.mark.parametrize('names, positions, velocities, reason', [
    (['a', 'b', 'c', 'x'], [0, 0, 0, 0], [0, 0, 0, 0], 'unknown'),
    (['a', 'b'], [0, 0], [0, 0], 'lacks'),
    (['a', 'b', 'c'], [0, 0], [0, 0, 0], 'positions'),
    (['a', 'b', 'c'], [0, 0, 0], [0, 0], 'velocities'),
    (['a', 'b', 'c'], [0, np.nan, 0], [0, 0, 0], 'non-finite'),
    (['a', 'b', 'c'], [0, 0, 0], [0, 0, np.inf], 'non-finite'),
    (['a', 'b', 'c'], [0, 0, 0], [], 'no velocities'),
    (['a', 'b', 'b'], [0, 0, 0], [0, 0, 0], 'duplicate'),
])
def test_joint_state_mapper_rejects_bad_messages(names, positions, velocities, reason):
    with pytest.raises(ValueError, match=reason):
        JointStateMapper(NAMES).map(names, positions, velocities)


def test_quintic_segments_match_scipy_bernstein_form_in_any_sampling_order():
    """The vectorised quintic Hermite coefficients against scipy's BPoly.from_derivatives (an independent
    construction), sampled forwards, backwards and at random: the cached segment must never be stale."""
    from scipy.interpolate import BPoly
    rng = np.random.default_rng(3)
    times = np.cumsum(rng.uniform(0.05, 0.5, 12))
    p, v, a = (rng.normal(size=(12, 3)) for _ in range(3))
    reference = TrajectoryReference(times, p, v, a)
    oracle = BPoly.from_derivatives(times, np.stack([p, v, a], axis=1))
    inside = np.linspace(times[0], times[-1], 400)[1:-1]
    for order in (inside, inside[::-1], rng.permutation(inside)):
        for t in order:
            q, qd, qdd = reference.sample(t)
            np.testing.assert_allclose(q, oracle(t), atol=1e-9)
            np.testing.assert_allclose(qd, oracle(t, 1), atol=1e-8)
            np.testing.assert_allclose(qdd, oracle(t, 2), atol=1e-7)


def test_joint_state_mapper_rejects_implausible_values():
    from robot_dynamics_ros.control.joint_states import plausibility_bounds
    arm = load_urdf(BUNDLED_URDF)
    names = list(arm.joint_names)
    mapper = JointStateMapper(names, bounds=plausibility_bounds(arm))
    q0, zero = arm.neutral(), np.zeros(arm.nv)
    mapper.map(names, q0, zero)   # plausible
    fast = zero.copy()
    fast[1] = 1e155
    beyond = q0.copy()
    beyond[2] = arm.upper[2] + 1.0
    for q, qd in ((q0, fast), (beyond, zero)):
        with pytest.raises(ValueError, match='implausible'):
            mapper.map(names, q, qd)


# ---- ControlStep: one compiled call per update, equal to map + sample + compute ----------------------------------

def numpy_update(mapper, controller, reference, names, positions, velocities, t, now):
    """The NumPy path: (q, qd, governed q_ref, qd_ref, qdd_ref, tau), or the ValueError it raises."""
    try:
        q, qd = mapper.map(names, positions, velocities)
        tau, q_ref, qd_ref, qdd_ref = controller.update(now, q, qd, *reference.sample(t))
        return q, qd, q_ref, qd_ref, qdd_ref, tau
    except ValueError as e:
        return e


def assert_step_equals_numpy_path(step, mapper, controller, reference, names, positions, velocities, t, now):
    """The step computes exactly where the NumPy path (``controller``: another instance, fed the same updates)
    does, the same values to 1e-12 (relative to each array's largest element, at least 1), and the command is tau
    in the step's output order; their states (governor, integral) stay equal. Returns tau."""
    expected = numpy_update(mapper, controller, reference, names, positions, velocities, t, now)
    computed = step(names, positions, velocities, reference, t, now)
    assert computed == (not isinstance(expected, ValueError)), expected
    if not computed:
        return None
    for name, value, reference_value in zip(('q', 'qd', 'q_ref', 'qd_ref', 'qdd_ref', 'tau'),
                                            (step.q, step.qd, step.q_ref, step.qd_ref, step.qdd_ref, step.tau),
                                            expected):
        scale = max(1.0, np.abs(reference_value).max(initial=0.0))
        np.testing.assert_allclose(value, reference_value, rtol=0, atol=1e-12 * scale, err_msg=name)
    np.testing.assert_array_equal(step.command, step.tau[step._order])
    np.testing.assert_allclose(step.controller.state, controller.state, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(step.controller.clock, controller.clock)
    return expected[-1]


def references(model, rng, q):
    """A hold and a quintic, a cubic Hermite and a positions-only spline trajectory near q, with position
    differences beyond pi (continuous joints wrap their error)."""
    times = np.cumsum(rng.uniform(0.05, 0.3, 6))
    positions = q + rng.uniform(-4.0, 4.0, (6, model.nv))
    velocities, accelerations = rng.normal(size=(2, 6, model.nv))
    return [TrajectoryReference.hold(q + 0.3), TrajectoryReference(times, positions, velocities, accelerations),
            TrajectoryReference(times, positions, velocities), TrajectoryReference(times, positions)]


def check_step_on_model(model, rng, mode, friction, states=4):
    """Random states and gains, the joint state's names shuffled (array('d') fields as rclpy gives them, or
    lists), references sampled before, inside (in random order) and after, and at their waypoint times.
    Returns how many efforts reached an effort limit."""
    n = model.nv
    kp, kd, ki = rng.uniform(0.0, 2000.0, n), rng.uniform(0.0, 50.0, n), rng.uniform(0.0, 2000.0, n)
    gravity, acceleration = rng.normal(size=3), rng.uniform(1.0, 50.0, n) if rng.random() < 0.5 else None
    numpy_controller, compiled_controller = (
        ComputedTorqueController(model, kp, kd, mode, gravity, friction, ki, acceleration) for _ in range(2))
    mapper = JointStateMapper(model.joint_names, bounds=plausibility_bounds(model))
    order = rng.permutation(n)
    step = ControlStep(mapper, compiled_controller, order)
    clamped, now = 0, 0.0
    for _ in range(states):
        q, qd = model.random_configuration(rng), rng.normal(size=n)
        shuffle = rng.permutation(n)
        names = [model.joint_names[i] for i in shuffle]
        as_message = rng.random() < 0.5
        positions, velocities = ((array('d', q[shuffle]), array('d', qd[shuffle])) if as_message
                                 else (list(q[shuffle]), list(qd[shuffle])))
        for reference in references(model, rng, q):
            times = reference.times
            inside = rng.uniform(times[0], times[-1], 6)
            for t in (times[0] - 1.0, times[0], *inside, *times[1:-1], *inside[::-1], times[-1], times[-1] + 2.0):
                now += rng.uniform(0.0005, 0.002)
                tau = assert_step_equals_numpy_path(step, mapper, numpy_controller, reference, names, positions,
                                                    velocities, t, now)
                clamped += np.count_nonzero(np.abs(tau) == model.effort_limit)
    return clamped


@pytest.mark.parametrize('friction', [False, True])
@pytest.mark.parametrize('mode', CONTROL_MODES)
def test_control_step_equals_numpy_path(urdf_path, mode, friction):
    pytest.importorskip('numba')
    model = load_urdf(urdf_path)
    clamped = check_step_on_model(model, np.random.default_rng(11), mode, friction)
    if mode != 'gravity_compensation':   # kp up to 2000 on errors up to 4 rad: some efforts reach their limit
        assert clamped > 0, 'no effort reached its limit: the clamp went untested'


@settings(max_examples=15, deadline=None)
@given(random_trees)
def test_control_step_equals_numpy_path_on_random_trees(xml):
    pytest.importorskip('numba')
    model = load_urdf(xml)
    rng = np.random.default_rng(12)
    for mode in CONTROL_MODES:
        check_step_on_model(model, rng, mode, friction=bool(rng.integers(2)), states=1)


def test_control_step_wraps_continuous_joint_errors():
    """prismatic_chain.urdf has a continuous joint: an error of 6.2 rad is driven the short way round."""
    pytest.importorskip('numba')
    model = load_urdf(TEST_URDFS['prismatic_chain'])
    continuous = (model.joint_type == 0) & ~np.isfinite(model.upper)
    assert continuous.any()
    controller = ComputedTorqueController(model, 1.0, 0.0, mode='pd_gravity')
    zero_gain = ComputedTorqueController(model, 0.0, 0.0, mode='pd_gravity')
    q = np.where(continuous, -3.1, 0.0)
    steps = [ControlStep(JointStateMapper(model.joint_names), c) for c in (controller, zero_gain)]
    for step in steps:   # the governed reference moves the short way to -q from q, then holds there
        for k in range(1000):
            assert step(list(model.joint_names), q, np.zeros(model.nv), TrajectoryReference.hold(-q), 0.0, k * 1e-3)
    np.testing.assert_allclose((steps[0].tau - steps[1].tau)[continuous], 6.2 - 2 * np.pi, atol=1e-12)


def test_control_step_keeps_no_stale_segment():
    """One step serving a long and a short reference in turn, at times in the long one's last segment."""
    pytest.importorskip('numba')
    model = load_urdf(BUNDLED_URDF)
    rng = np.random.default_rng(4)
    controller, compiled_controller = (ComputedTorqueController(model, 100.0, 20.0) for _ in range(2))
    mapper = JointStateMapper(model.joint_names)
    step = ControlStep(mapper, compiled_controller)
    q = model.neutral()
    long = TrajectoryReference(np.linspace(0.0, 1.0, 13), q + rng.normal(size=(13, model.nv)))
    short = TrajectoryReference([0.0, 2.0], q + rng.normal(size=(2, model.nv)))
    for k, t in enumerate((0.99, 0.995, 0.3)):
        for j, reference in enumerate((long, short)):
            assert_step_equals_numpy_path(step, mapper, controller, reference, list(model.joint_names), q,
                                          np.zeros(model.nv), t, (2 * k + j) * 1e-3)


NAMES7 = [f'arm7_joint{i}' for i in range(1, 8)]


@pytest.mark.parametrize('names, positions, velocities', [
    (NAMES7 + ['x'], [0.0] * 8, [0.0] * 8),                    # unknown joint
    (NAMES7[:6], [0.0] * 6, [0.0] * 6),                        # missing joint
    (NAMES7[:6] + NAMES7[:1], [0.0] * 7, [0.0] * 7),           # duplicate
    (NAMES7, [0.0] * 6, [0.0] * 7),                            # positions of the wrong length
    (NAMES7, [0.0] * 7, [0.0] * 8),                            # velocities of the wrong length
    (NAMES7, [0.0] * 7, []),                                   # no velocities
    (NAMES7, [0.0] * 6 + [np.nan], [0.0] * 7),                 # non-finite
    (NAMES7, [0.0] * 7, [np.inf] + [0.0] * 6),
    (NAMES7, [0.0, 5.0] + [0.0] * 5, [0.0] * 7),               # beyond joint 2's limit by more than the margin
    (NAMES7, [0.0] * 7, [0.0, 1e155] + [0.0] * 5),             # implausibly fast
])
def test_control_step_refuses_what_the_numpy_path_rejects(names, positions, velocities):
    """The step computes nothing (returns False), the NumPy path raises its ValueError, and a good state after
    a bad one computes again."""
    pytest.importorskip('numba')
    model = load_urdf(BUNDLED_URDF)
    assert list(model.joint_names) == NAMES7
    controller = ComputedTorqueController(model, 100.0, 20.0)
    mapper = JointStateMapper(model.joint_names, bounds=plausibility_bounds(model))
    step = ControlStep(mapper, controller)
    reference = TrajectoryReference.hold(model.neutral())
    for fields in ((names, positions, velocities), (names, array('d', positions), array('d', velocities))):
        assert isinstance(numpy_update(mapper, controller, reference, *fields, 0.0, 0.0), ValueError)
        assert not step(*fields, reference, 0.0, 0.0)
        assert step(NAMES7, model.neutral(), np.zeros(7), reference, 0.0, 0.0)


def test_control_step_missing_velocity_and_unknown_joints_where_allowed():
    pytest.importorskip('numba')
    model = load_urdf(BUNDLED_URDF)
    controller, compiled_controller = (ComputedTorqueController(model, 100.0, 20.0, friction_compensation=True)
                                       for _ in range(2))
    mapper = JointStateMapper(model.joint_names, ignore_unknown=True, allow_missing_velocity=True)
    step = ControlStep(mapper, compiled_controller)
    reference = TrajectoryReference.hold(model.neutral() + 0.1)
    q = model.random_configuration(np.random.default_rng(2))
    for k, (names, positions, velocities) in enumerate(((NAMES7[::-1], q[::-1], []), (['x'] + NAMES7, [9.0, *q], None),
                                                        (['x'] + NAMES7, [9.0, *q], [1.0] * 8))):
        assert_step_equals_numpy_path(step, mapper, controller, reference, names, positions, velocities, 0.0,
                                      k * 1e-3)


@pytest.mark.filterwarnings('ignore:overflow encountered')
def test_control_step_refuses_a_non_finite_reference():
    """A reference whose polynomial overflows at t (its coefficients altered after the checks at construction):
    compute raises on the NumPy path, the step computes nothing."""
    pytest.importorskip('numba')
    model = load_urdf(BUNDLED_URDF)
    controller = ComputedTorqueController(model, 100.0, 20.0)
    mapper = JointStateMapper(model.joint_names)
    step = ControlStep(mapper, controller)
    reference = TrajectoryReference([0.0, 10.0], np.zeros((2, 7)))
    reference._coefficients[0, -1, 3] = 1e308
    error = numpy_update(mapper, controller, reference, NAMES7, np.zeros(7), np.zeros(7), 5.0, 0.0)
    assert isinstance(error, ValueError) and re.search('q_ref contains NaN or Inf', str(error))
    assert not step(NAMES7, np.zeros(7), np.zeros(7), reference, 5.0, 0.0)


def test_a_restarted_controller_updates_as_a_new_one(arm):
    """restart() (a controller activated again after a pause): the next updates are those of a new controller, the
    governed reference starting at that state and no integral over the pause; without it the pause of 5 s is
    integrated over (ki) and the governor slews from where it was."""
    kp, kd, ki = np.full(arm.nv, 100.0), np.full(arm.nv, 20.0), np.full(arm.nv, 200.0)
    q, rest = arm.neutral(), np.zeros(arm.nv)
    q_ref = q + 0.05
    running = ComputedTorqueController(arm, kp, kd, 'computed_torque', ki=ki)
    for k in range(20):
        running.update(0.001 * k, q, rest, q_ref, rest, rest)
    paused = ComputedTorqueController(arm, kp, kd, 'computed_torque', ki=ki)
    paused.take_state(running)
    running.restart()
    new = ComputedTorqueController(arm, kp, kd, 'computed_torque', ki=ki)
    q_later = q + 0.02
    for now in (5.0, 5.001, 5.002):
        restarted_tau = running.update(now, q_later, rest, q_ref, rest, rest)[0]
        np.testing.assert_array_equal(restarted_tau, new.update(now, q_later, rest, q_ref, rest, rest)[0])
        assert not np.array_equal(paused.update(now, q_later, rest, q_ref, rest, rest)[0], restarted_tau)
