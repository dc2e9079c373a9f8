"""Simulator: leaving joint stops under control, brakes on a stale command, per-joint servo commands,
the positive-definiteness check at start and the refusal of a non-finite state (issues 9, 10, 12)."""
import dataclasses

import numpy as np
import pytest
from conftest import BUNDLED_URDF, ROOT, TEST_URDFS

from robot_dynamics_ros import crba, load_urdf
from robot_dynamics_ros.control.computed_torque import ComputedTorqueController
from robot_dynamics_ros.fast import gravity_torques
from robot_dynamics_ros.simulation.simulator import SimulationDiverged, Simulator

# config/arm7.yaml: initial pose, gravity and the computed-torque gains.
INITIAL = np.array([0.0, 0.0, 0.0, -1.5708, 0.0, 1.8675, 0.0])
GRAVITY = [0.0, 0.0, -9.81]
KP, KD = 400.0, 40.0
REAL_AND_TEST_URDFS = {**TEST_URDFS, **{name: f'{ROOT}/test/urdf/real/{name}.urdf'
                                        for name in ('ur5', 'ur5e', 'panda', 'kinova_gen3', 'xarm7', 'z1')}}
RETURN_SECONDS = 3.0


def starts_on_limits(model):
    """(name, start): each joint alone on its lower and on its upper limit, and some with several on limits."""
    cases = []
    for j in range(model.nv):
        for side, limits in (('lower', model.lower), ('upper', model.upper)):
            start = INITIAL.copy()
            start[j] = limits[j]
            cases.append((f'joint{j + 1}_{side}', start))
    several = {'joints1-2_upper': ([0, 1], model.upper), 'joints2-4-6_lower': ([1, 3, 5], model.lower)}
    for name, (joints, limits) in several.items():
        start = INITIAL.copy()
        start[joints] = limits[joints]
        cases.append((name, start))
    return cases


def stiction_band(model, q, integrator='semi_implicit_euler', dt=1e-3):
    """Largest |q_ref - q| per joint at which computed torque at rest cannot overcome Coulomb friction.

    At rest the controller's torque beyond gravity is M(q) Kp e (its friction feed-forward is zero for a
    resting reference). Semi-implicit Euler sticks while |M Kp e| <= F componentwise, so
    |e_i| <= sum_j |M^-1|_ij F_j / Kp. An RK4 step from rest also lets viscous damping (diagonal B) act on
    its stage velocities before friction does, w = dt (I - dt/2 M^-1 B) M^-1 M Kp e + O(dt^3): it sticks
    while |(I - dt/2 B M^-1) M Kp e| <= F, a band wider by |(I - dt/2 B M^-1)^-1|.
    """
    M_inv = np.linalg.inv(crba(model, q))
    stage_damping = np.eye(model.nv) if integrator == 'semi_implicit_euler' else \
        np.linalg.inv(np.eye(model.nv) - 0.5 * dt * np.diag(model.damping) @ M_inv)
    return np.abs(M_inv @ stage_damping) @ model.friction / KP


# Every case with semi-implicit Euler, two with RK4 (to keep the suite short).
CASES = ([(name, start, 'semi_implicit_euler') for name, start in starts_on_limits(load_urdf(BUNDLED_URDF))]
         + [(name, start, 'rk4') for name, start in starts_on_limits(load_urdf(BUNDLED_URDF))
            if name in ('joint1_upper', 'joints2-4-6_lower')])


@pytest.mark.parametrize('name,start,integrator', CASES, ids=[f'{name}-{integ}' for name, _, integ in CASES])
def test_controlled_arm_leaves_its_limits_and_returns_to_the_reference(arm, name, start, integrator):
    """Issue 12 item 3: with per-joint clipping this loop ended with every joint on a stop. Within 3 s every
    joint is back within the stiction band of the reference (plus 1 mrad for what is left of the transient:
    the loop's poles are at -20 rad/s), at rest, and q never left the limits."""
    controller = ComputedTorqueController(arm, KP, KD, gravity=GRAVITY, friction_compensation=True)
    sim = Simulator(arm, 1e-3, integrator, gravity=GRAVITY, initial_positions=start, command_timeout=0.5)
    zero = np.zeros(arm.nv)
    for _ in range(int(round(RETURN_SECONDS / sim.dt))):
        sim.set_command(controller.compute(sim.q, sim.qd, INITIAL, zero, zero))
        sim.step()
        assert np.all(sim.q >= arm.lower) and np.all(sim.q <= arm.upper)
    assert np.abs(start - INITIAL).max() > 1.0, 'the case starts far from the reference'
    error = np.abs(sim.q - INITIAL)
    assert np.all(error <= stiction_band(arm, sim.q, integrator) + 1e-3), f'{name}: error {error} rad'
    assert np.abs(sim.qd).max() < 1e-3


def test_a_joint_resting_on_its_stop_under_gravity_stays_there(arm):
    """Joint 2 on its lower limit, where gravity pushes it (g_2 > 0), unpowered; the others hold against
    gravity. It stays on the stop at rest, and the stop force, equal to g_2, pushes (is non-negative)."""
    q = INITIAL.copy()
    q[1] = arm.lower[1]
    g = gravity_torques(arm, q, GRAVITY)
    assert g[1] > 10.0, 'gravity pushes joint 2 into its lower stop'
    sim = Simulator(arm, 1e-3, gravity=GRAVITY, initial_positions=q, apply_friction=False)
    command = g.copy()
    command[1] = 0.0
    for _ in range(1000):
        sim.set_command(command)
        sim.step()
        assert sim.constraint_effort[1] >= 0.0
    assert sim.q[1] == arm.lower[1]
    np.testing.assert_allclose(sim.qd, 0.0, atol=1e-9)
    np.testing.assert_allclose(sim.q, q, atol=1e-9)
    np.testing.assert_allclose(sim.constraint_effort[1], g[1], rtol=1e-6)


def hold_then_stall(arm, behaviour):
    """Gravity compensation once at t = 0, then no command for 2 s (command_timeout 0.5 s)."""
    sim = Simulator(arm, 1e-3, gravity=GRAVITY, initial_positions=INITIAL, command_timeout=0.5,
                    on_command_timeout=behaviour)
    sim.set_command(gravity_torques(arm, INITIAL, GRAVITY))
    for _ in range(2000):
        sim.step()
    return sim


def test_brakes_hold_the_arm_when_the_command_goes_stale_and_release_on_the_next(arm):
    """Issue 12 item 4: a stalled controller; with brakes (the default) the arm moves < 1 deg in 2 s,
    without them it falls. The next command releases the brakes and is followed."""
    braked, falling = hold_then_stall(arm, 'brake'), hold_then_stall(arm, 'zero_effort')
    assert np.degrees(np.abs(braked.q - INITIAL).max()) < 1.0
    assert np.degrees(np.abs(falling.q - INITIAL).max()) > 10.0
    assert braked.braking()
    target = INITIAL + np.r_[0.3, np.zeros(arm.nv - 1)]
    controller = ComputedTorqueController(arm, KP, KD, gravity=GRAVITY, friction_compensation=True)
    zero = np.zeros(arm.nv)
    for _ in range(1000):
        braked.set_command(controller.compute(braked.q, braked.qd, target, zero, zero))
        braked.step()
    assert not braked.braking()
    assert np.all(np.abs(braked.q - target) <= stiction_band(arm, braked.q) + 1e-3)


def test_continuous_joints_are_unbounded_and_move_again_after_the_brakes(arm):
    """Infinite limits: no stop ever holds the arm; after braking, a new command moves it (finitely)."""
    unlimited = dataclasses.replace(arm, lower=np.full(arm.nv, -np.inf), upper=np.full(arm.nv, np.inf))
    sim = Simulator(unlimited, 1e-3, gravity=GRAVITY, initial_positions=INITIAL, command_timeout=0.1)
    for _ in range(150):   # it falls until the command is 0.1 s old, then the brakes hold it
        sim.step()
    assert sim.braking()
    braked = sim.q.copy()
    for _ in range(150):
        sim.step()
    np.testing.assert_array_equal(sim.q, braked)
    for _ in range(1000):   # fresh zero-effort commands
        sim.set_command(np.zeros(arm.nv))
        sim.step()
        assert np.all(np.isfinite(sim.q)) and np.all(np.isfinite(sim.qd))
    assert np.abs(sim.q - braked).max() > 1.0, 'unpowered, the unlimited arm falls a long way'


def servo(arm, integrator='semi_implicit_euler', gravity=GRAVITY, **kwargs):
    return Simulator(arm, 1e-3, integrator, gravity=gravity, initial_positions=INITIAL, command_timeout=0.5,
                     **kwargs)


STEADY_ERROR = 1e-4   # rad: the servo's steady error under gravity (issue 18: no sag within the effort limits)


@pytest.mark.parametrize('integrator', ['semi_implicit_euler', 'rk4'])
def test_servo_reaches_position_targets_and_holds_them_without_new_messages(arm, integrator):
    """Position targets 0.3 rad from the start on every joint: within 0.1 mrad under gravity after 3 s (the drive
    holds the joint with the effort gravity needs: no sag), and still there 4 s later without a new command, long
    past command_timeout."""
    sim = servo(arm, integrator)
    target = INITIAL + 0.3 * np.where(np.arange(arm.nv) % 2 == 0, 1.0, -1.0)
    target = np.clip(target, arm.lower + 0.1, arm.upper - 0.1)
    sim.set_joint_command(position=target)
    for seconds in (3.0, 4.0):
        for _ in range(int(round(seconds / sim.dt))):
            sim.step()
            assert np.all(np.abs(sim.applied_effort) <= arm.effort_limit)
        assert np.all(np.abs(sim.q - target) <= STEADY_ERROR)
        assert np.abs(sim.qd).max() < 1e-3
    assert not sim.command_is_stale() and not sim.braking()


def test_servo_velocity_target_is_the_joint_speed_within_the_effort_limit(arm):
    """Joint 7 with a velocity target only, the others held at their positions, no gravity: the drive holds the
    commanded speed exactly, friction and damping (0.1 N m + 0.5 d) being far within its 12 N m."""
    sim = servo(arm, gravity=[0.0, 0.0, 0.0])
    velocity = np.full(arm.nv, np.nan)
    velocity[6] = 0.5
    sim.set_joint_command(position=np.r_[INITIAL[:6], np.nan], velocity=velocity)
    for _ in range(500):
        sim.step()
    assert sim.qd[6] == pytest.approx(0.5, abs=1e-9)
    assert abs(sim.applied_effort[6]) < arm.effort_limit[6]


def test_the_position_servo_is_first_order_with_the_stated_time_constant(arm):
    """A step small enough that neither the velocity nor the effort limit binds: each step closes POSITION_GAIN
    of the error, e_k = (1 - POSITION_GAIN)^k e_0, a time constant of dt / POSITION_GAIN (10 ms at 1 kHz)."""
    from robot_dynamics_ros.simulation.simulator import POSITION_GAIN
    sim = servo(arm, gravity=[0.0, 0.0, 0.0])
    sim.set_joint_command(position=INITIAL)
    for _ in range(2000):
        sim.step()
    step = 1e-5
    sim.set_joint_command(position=INITIAL + step)
    errors = []
    for _ in range(30):
        sim.step()
        errors.append(np.abs(sim.q - (INITIAL + step)))
    expected = step * (1.0 - POSITION_GAIN) ** np.arange(1, 31)
    np.testing.assert_allclose(np.array(errors), np.repeat(expected[:, None], arm.nv, axis=1), rtol=1e-6, atol=1e-12)


@pytest.mark.parametrize('path', sorted(REAL_AND_TEST_URDFS))
def test_the_servo_holds_every_test_robot_under_gravity(path):
    """Stable at the default rate on every test robot: positions held at the middle of the limits, then a step of
    0.1 rad on every joint, within 0.1 mrad after 2 s, states finite."""
    model = load_urdf(REAL_AND_TEST_URDFS[path])
    start = model.middle_of_limits()
    sim = Simulator(model, 1e-3, initial_positions=start)
    target = np.clip(start + 0.1, model.lower, model.upper)
    sim.set_joint_command(position=target)
    for _ in range(2000):
        sim.step()
    assert np.all(np.isfinite(sim.q)) and np.abs(sim.q - target).max() < STEADY_ERROR


def test_servo_nan_fields_keep_the_previous_targets(arm):
    sim = servo(arm)
    first = INITIAL + 0.2
    sim.set_joint_command(position=first, effort=np.full(arm.nv, np.nan))
    update = np.full(arm.nv, np.nan)
    update[0] = -0.4
    sim.set_joint_command(position=update)
    np.testing.assert_array_equal(sim.position_target, np.r_[-0.4, first[1:]])
    assert np.all(np.isnan(sim.velocity_target)) and np.all(np.isnan(sim.effort_target))
    for _ in range(3000):
        sim.step()
    assert np.all(np.abs(sim.q - sim.position_target) <= STEADY_ERROR)
    assert abs(sim.q[0] + 0.4) < 1e-2


@pytest.mark.parametrize('effort_first', [False, True])
def test_a_command_naming_one_joint_holds_the_others(arm, effort_first):
    """A position target for joint 1 alone (NaN elsewhere), from rest or after effort commands: joint 1 moves 0.3
    rad and the others hold where they were under gravity (within the servo's steady error) for 3 s; without
    the hold they would fall (checked: the same command leaves them further than 0.1 rad away when limp)."""
    sim = servo(arm)
    if effort_first:
        sim.set_command(gravity_torques(arm, INITIAL))
        sim.step()
    held = sim.q.copy()
    target = np.full(arm.nv, np.nan)
    target[0] = INITIAL[0] + 0.3
    sim.set_joint_command(position=target)
    for _ in range(3000):
        sim.step()
    assert abs(sim.q[0] - target[0]) <= STEADY_ERROR
    assert np.all(np.abs(sim.q[1:] - held[1:]) <= STEADY_ERROR), sim.q - held
    limp = servo(arm)
    limp.set_joint_command(position=target, effort=np.r_[np.nan, np.zeros(arm.nv - 1)])
    for _ in range(3000):
        limp.step()
    assert np.max(np.abs(limp.q[1:] - held[1:])) > 0.1


def test_servo_efforts_are_clamped_and_bad_fields_refused(arm):
    sim = servo(arm)
    sim.set_joint_command(effort=10.0 * arm.effort_limit)
    sim.step()
    np.testing.assert_array_equal(sim.applied_effort, arm.effort_limit)
    # Huge errors: the drives ask for their velocity limits within one step, more than joints 1-6 can reach with
    # their effort limits (the wrist, 0.005 kg m^2, is also swung by the others' reactions): they saturate.
    sim.set_joint_command(effort=np.zeros(arm.nv), position=INITIAL + 3.0)
    sim.step()
    assert np.all(np.abs(sim.applied_effort) <= arm.effort_limit)
    np.testing.assert_allclose(np.abs(sim.applied_effort[:6]), arm.effort_limit[:6], rtol=1e-12)
    before = sim.position_target.copy()
    with pytest.raises(ValueError, match='Inf'):
        sim.set_joint_command(position=np.r_[np.inf, INITIAL[1:]])
    with pytest.raises(ValueError, match='values'):
        sim.set_joint_command(velocity=np.zeros(3))
    np.testing.assert_array_equal(sim.position_target, before)
    sim.set_command(np.ones(arm.nv))
    assert not sim.servo_mode and np.all(np.isnan(sim.position_target))
    sim.step()
    np.testing.assert_array_equal(sim.applied_effort, 1.0)


def test_a_mass_matrix_that_is_not_positive_definite_is_refused_naming_the_joint(arm):
    """The last body without mass or inertia: its joint moves nothing, D_7 = 0 in U D U^T."""
    inertia = arm.inertia.copy()
    inertia[-1] = 0.0
    massless_tip = dataclasses.replace(arm, inertia=inertia)
    with pytest.raises(ValueError, match=f'not positive definite.*{arm.joint_names[-1]}'):
        Simulator(massless_tip, 1e-3)
    Simulator(arm, 1e-3)   # the bundled arm is fine


def test_a_non_finite_state_is_refused_and_the_arm_held_still(arm):
    sim = Simulator(arm, 1e-3, initial_positions=INITIAL)
    sim.qd = np.full(arm.nv, 1e200)   # velocity products overflow in the bias forces
    with pytest.raises(SimulationDiverged, match='non-finite') as raised:
        sim.step()
    assert isinstance(raised.value, ValueError)
    np.testing.assert_array_equal(sim.q, INITIAL)
    np.testing.assert_array_equal(sim.qd, 0.0)
    assert sim.t == 0.0
    sim.step()
    assert np.all(np.isfinite(sim.q))


def test_an_absurd_joint_command_is_refused_whole_and_the_servo_keeps_its_targets(arm):
    """Issue 17's reproduction: position 1.7e308 with velocity -1.7e308 made the servo effort NaN (joint states
    stopped) and the absurd velocity target stayed, so a later position-only command drove every joint into its
    lower limit at full effort. Now it is refused whole; targets beyond the limits are held at the limits, as
    Gazebo's joints do; and a later position-only command takes the arm to its targets."""
    sim = servo(arm)
    before = sim.position_target.copy(), sim.velocity_target.copy()
    with pytest.raises(ValueError, match='not finite'):
        sim.set_joint_command(position=np.full(arm.nv, 1.7e308), velocity=np.full(arm.nv, -1.7e308))
    np.testing.assert_array_equal(sim.position_target, before[0])
    np.testing.assert_array_equal(sim.velocity_target, before[1])
    sim.step()
    assert np.all(np.isfinite(sim.q)) and np.all(np.isfinite(sim.applied_effort))
    target = np.clip(INITIAL + 0.2, arm.lower, arm.upper)
    sim.set_joint_command(position=target)   # position only, as in the reproduction
    for _ in range(3000):
        sim.step()
    assert np.all(np.abs(sim.q - target) <= STEADY_ERROR)
    sim.set_joint_command(position=np.full(arm.nv, 1e300), velocity=np.full(arm.nv, -1e3))
    np.testing.assert_array_equal(sim.position_target, arm.upper)
    np.testing.assert_array_equal(sim.velocity_target, -arm.velocity_limit)


@pytest.mark.parametrize('integrator', ['semi_implicit_euler', 'rk4'])
def test_a_large_effort_does_not_push_a_joint_beyond_its_velocity_limit(arm, integrator):
    """The drives saturate at the URDF velocity limits (as Gazebo's joints do): full effort on every joint, no
    gravity, until the joints reach their stops; with limit_velocity=False the same efforts go well beyond."""
    speeds = {}
    for limit in (True, False):
        sim = Simulator(arm, 1e-3, integrator=integrator, gravity=[0.0, 0.0, 0.0], initial_positions=arm.lower,
                        limit_velocity=limit)
        sim.set_command(arm.effort_limit)
        fastest = np.zeros(arm.nv)
        for _ in range(1000):
            sim.step()
            fastest = np.maximum(fastest, np.abs(sim.qd))
        speeds[limit] = fastest
    assert np.all(speeds[True] <= arm.velocity_limit) and np.all(speeds[True] > 0.9 * arm.velocity_limit)
    assert np.all(speeds[False] > 1.5 * arm.velocity_limit)
