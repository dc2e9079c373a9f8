"""Simulator: integrator accuracy against an adaptive high-order solution, energy, limits, friction, commands."""
import dataclasses
import os

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from robot_dynamics_ros import aba
from robot_dynamics_ros.algorithms.energy import kinetic_energy
from robot_dynamics_ros.control.computed_torque import ComputedTorqueController
from robot_dynamics_ros.control.references import TrajectoryReference, sinusoid_reference
from robot_dynamics_ros.simulation.simulator import Simulator

# A state well inside the bundled arm's limits, with every joint moving.
Q_OFFSET = np.array([0.3, 0.4, -0.2, 0.3, 0.5, -0.4, 0.2])
QD_START = np.array([0.3, -0.2, 0.4, 0.1, -0.5, 0.3, 0.6])
# Energy test horizon: 2 s by default to keep the suite fast; set RDR_ENERGY_SECONDS=10 for the long run.
ENERGY_SECONDS = float(os.environ.get('RDR_ENERGY_SECONDS', '2'))


def mid_limits(model):
    return 0.5 * (model.lower + model.upper) + Q_OFFSET


def run(sim, seconds):
    for _ in range(int(round(seconds / sim.dt))):
        sim.step()
    return sim


def start(sim, q, qd):
    sim.reset(q)
    sim.qd = qd.copy()
    return sim


def test_integrators_converge_to_an_accurate_solution(arm):
    """Semi-implicit Euler is first order, RK4 fourth order, both toward a DOP853 solution at tight tolerance."""
    q0, horizon = mid_limits(arm), 0.1
    tau = 0.02 * arm.effort_limit * np.sign(Q_OFFSET)

    def dynamics(_, x):
        q, qd = x[:arm.nv], x[arm.nv:]
        return np.concatenate([qd, aba(arm, q, qd, tau - arm.damping * qd)])

    exact = solve_ivp(dynamics, (0, horizon), np.concatenate([q0, QD_START]), method='DOP853',
                      rtol=1e-12, atol=1e-12).y[:, -1]
    errors = {}
    for integrator in ('semi_implicit_euler', 'rk4'):
        for dt in (1e-3, 5e-4):
            sim = start(Simulator(arm, dt, integrator, apply_friction=False), q0, QD_START)
            sim.set_command(tau)
            run(sim, horizon)
            errors[integrator, dt] = np.abs(np.concatenate([sim.q, sim.qd]) - exact).max()
    assert errors['semi_implicit_euler', 1e-3] < 2e-2
    assert errors['rk4', 1e-3] < 1e-8
    assert 1.7 < errors['semi_implicit_euler', 1e-3] / errors['semi_implicit_euler', 5e-4] < 2.3
    assert 12.0 < errors['rk4', 1e-3] / errors['rk4', 5e-4] < 20.0


def test_energy_is_conserved_without_damping_friction_or_torque(arm):
    """RK4 with gravity, no damping, friction or torque; the position and velocity limits are removed so that no
    stop takes energy out. The exact motion conserves E, so the drift max |E(t) - E(0)| is the integrator's error,
    which for RK4 is O(dt^4) over a fixed horizon: halving dt divides it by 2^4 = 16. The observed order
    log2(ratio) must be within 0.5 of 4 (3rd or 5th order would give 8 or 32), which a drift of any other origin
    (an energy or a force term wrong, a stop or damping left on) does not give: it does not shrink with dt."""
    unlimited = dataclasses.replace(arm, lower=np.full(arm.nv, -np.inf), upper=np.full(arm.nv, np.inf))
    drifts = {}
    for dt in (2e-3, 1e-3):
        sim = start(Simulator(unlimited, dt, 'rk4', apply_damping=False, apply_friction=False, limit_velocity=False),
                    mid_limits(arm), QD_START)
        energy0 = sim.total_energy()
        drift, kinetic = 0.0, []
        for _ in range(int(round(ENERGY_SECONDS / 0.01))):
            run(sim, 0.01)
            drift = max(drift, abs(sim.total_energy() - energy0))
            kinetic.append(kinetic_energy(unlimited, sim.q, sim.qd))
        assert np.ptp(kinetic) > 1.0, 'the arm should swing, trading potential for kinetic energy'
        drifts[dt] = drift
    order = np.log2(drifts[2e-3] / drifts[1e-3])
    assert abs(order - 4.0) < 0.5, f"energy drift {drifts}: order {order:.2f}, not RK4's 4"


def test_gravity_compensated_arm_stays_still(arm):
    q0 = mid_limits(arm)
    controller = ComputedTorqueController(arm, 0.0, 0.0, mode='gravity_compensation')
    sim = Simulator(arm, 1e-3, initial_positions=q0, apply_friction=False)
    zero = np.zeros(arm.nv)
    for _ in range(2000):
        sim.set_command(controller.compute(sim.q, sim.qd, q0, zero, zero))
        sim.step()
    np.testing.assert_allclose(sim.q, q0, atol=1e-9)
    np.testing.assert_allclose(sim.qd, 0.0, atol=1e-9)
    falling = run(Simulator(arm, 1e-3, initial_positions=q0, apply_friction=False), 0.2)
    assert np.abs(falling.q - q0).max() > 1e-2, 'without compensation the arm falls'


def test_computed_torque_tracking_error_decays(arm):
    times, positions, velocities, accelerations = sinusoid_reference(arm, 0.3, 0.5, 2.0, rate=100.0)
    reference = TrajectoryReference(times, positions, velocities, accelerations)
    controller = ComputedTorqueController(arm, kp=100.0, kd=20.0)
    sim = Simulator(arm, 1e-3, initial_positions=positions[0] + 0.05, apply_damping=False, apply_friction=False)
    initial_error = np.abs(sim.q - positions[0]).max()
    while sim.t < 1.0 - 1e-9:
        sim.set_command(controller.compute(sim.q, sim.qd, *reference.sample(sim.t)))
        sim.step()
    q_ref, _, _ = reference.sample(sim.t)
    assert np.abs(np.diff(positions, axis=0)).max() > 1e-3, 'the reference moves'
    assert initial_error == pytest.approx(0.05)
    assert np.abs(sim.q - q_ref).max() < 1e-3


def test_friction_feed_forward_cancels_the_urdf_joint_friction(arm):
    times, positions, velocities, accelerations = sinusoid_reference(arm, 0.3, 0.5, 2.0, rate=100.0)
    reference = TrajectoryReference(times, positions, velocities, accelerations)

    def max_tracking_error(friction_compensation):
        controller = ComputedTorqueController(arm, 100.0, 20.0, friction_compensation=friction_compensation)
        sim = Simulator(arm, 1e-3, initial_positions=positions[0])  # URDF damping and friction on
        worst = 0.0
        while sim.t < 2.0 - 1e-9:
            sim.set_command(controller.compute(sim.q, sim.qd, *reference.sample(sim.t)))
            sim.step()
            worst = max(worst, np.abs(sim.q - reference.sample(sim.t)[0]).max())
        return worst

    without, with_feed_forward = max_tracking_error(False), max_tracking_error(True)
    assert without > 1e-2
    assert with_feed_forward < without / 5


def test_efforts_are_clamped_to_limits(arm):
    sim = Simulator(arm, 1e-3, apply_friction=False, apply_damping=False, limit_velocity=False)   # (one step of
    #                                                                   12 N m on the wrist would pass its velocity limit)
    command = 10.0 * arm.effort_limit * np.where(np.arange(arm.nv) % 2 == 0, 1.0, -1.0)
    sim.set_command(command)
    sim.step()
    clamped = np.sign(command) * arm.effort_limit
    np.testing.assert_array_equal(sim.applied_effort, clamped)
    np.testing.assert_allclose(sim.qd, 1e-3 * aba(arm, arm.neutral(), np.zeros(arm.nv), clamped), atol=1e-12)


@pytest.mark.parametrize('bad', [np.ones(3), np.full(7, np.nan), np.r_[np.ones(6), np.inf], 'abc'])
def test_bad_commands_are_rejected_and_the_last_safe_one_kept(arm, bad):
    sim = Simulator(arm, 1e-3)
    safe = np.linspace(-1.0, 1.0, arm.nv)
    sim.set_command(safe)
    with pytest.raises(ValueError):
        sim.set_command(bad)
    sim.step()
    np.testing.assert_array_equal(sim.applied_effort, safe)


def test_stale_commands_give_zero_effort_when_asked(arm):
    sim = Simulator(arm, 1e-3, command_timeout=0.05, on_command_timeout='zero_effort')
    command = np.ones(arm.nv)
    sim.set_command(command)
    run(sim, 0.04)
    np.testing.assert_array_equal(sim.applied_effort, command)
    run(sim, 0.02)
    np.testing.assert_array_equal(sim.applied_effort, 0.0)
    sim.set_command(command)
    sim.step()
    np.testing.assert_array_equal(sim.applied_effort, command)


@pytest.mark.parametrize('integrator', ['semi_implicit_euler', 'rk4'])
def test_joints_driven_into_their_limits_come_to_rest_on_them(arm, integrator):
    """Without gravity, constant efforts into the stops have their minimum of -tau.q at the corner of the
    limits; damping, friction and inelastic stops take the energy out, so every joint ends on its stop at
    rest, the stop pushing back. q never leaves the limits on the way."""
    sim = Simulator(arm, 1e-3, integrator, gravity=[0.0, 0.0, 0.0])
    direction = np.where(np.arange(arm.nv) % 2 == 0, 1.0, -1.0)
    sim.set_command(direction * arm.effort_limit)
    for _ in range(2000):
        sim.step()
        assert np.all(np.isfinite(sim.q)) and np.all(np.isfinite(sim.qd))
        assert np.all(sim.q >= arm.lower) and np.all(sim.q <= arm.upper)
    np.testing.assert_array_equal(sim.q, np.where(direction > 0, arm.upper, arm.lower))
    np.testing.assert_array_equal(sim.qd, 0.0)
    assert np.all(np.sign(sim.constraint_effort) == -direction)


def test_stops_push_back_with_exactly_the_applied_effort_at_rest(arm):
    """Semi-implicit Euler sees the acceleration at q only: at rest on the stops, M qdd = tau + stop force = 0."""
    direction = np.where(np.arange(arm.nv) % 2 == 0, 1.0, -1.0)
    sim = Simulator(arm, 1e-3, gravity=[0.0, 0.0, 0.0], initial_positions=np.where(direction > 0, arm.upper, arm.lower))
    sim.set_command(direction * arm.effort_limit)
    sim.step()
    np.testing.assert_array_equal(sim.qd, 0.0)
    np.testing.assert_allclose(sim.constraint_effort, -direction * arm.effort_limit, rtol=1e-9)


def test_friction_holds_a_joint_at_rest_without_chatter(arm):
    sim = Simulator(arm, 1e-3, gravity=[0.0, 0.0, 0.0], initial_positions=mid_limits(arm))
    sim.set_command(0.9 * arm.friction * np.sign(Q_OFFSET))
    run(sim, 0.2)
    np.testing.assert_array_equal(sim.qd, 0.0)
    np.testing.assert_array_equal(sim.q, sim.initial_positions)


def test_friction_stops_a_moving_arm_and_keeps_it_stopped(arm):
    sim = start(Simulator(arm, 1e-3, gravity=[0.0, 0.0, 0.0], apply_damping=False), mid_limits(arm), 0.1 * QD_START)
    velocities = []
    for _ in range(400):
        sim.step()
        velocities.append(sim.qd.copy())
    velocities = np.array(velocities)
    np.testing.assert_array_equal(velocities[-100:], 0.0)
    sign_changes = np.sum(np.abs(np.diff(np.sign(velocities), axis=0)) == 2, axis=0)
    assert np.all(sign_changes <= 1), f'velocity sign flips per joint: {sign_changes}'


@pytest.mark.parametrize('guess', ['none', 'all_sliding'])
@pytest.mark.parametrize('with_stops', [False, True])
def test_velocity_step_satisfies_maximum_dissipation_conditions(arm, with_stops, guess):
    """v = argmin 1/2 (v-w)^T M (v-w) + dt F.|v| over v_lo <= v <= v_hi. With p = M (v - w) / dt:
    p = -F sign(v) where v slides inside the bounds, |p| <= F where v = 0 inside them, and on a bound the
    excess over friction pushes away from it. No feasible perturbation lowers the objective. The guess
    'all sliding' (the previous step's pattern in motion) takes the solver's shortcut; the minimiser is
    unique (strictly convex), so it must give the same v as no guess."""
    from robot_dynamics_ros import crba
    from robot_dynamics_ros.simulation.joint_friction import solve_velocity_step
    dt, rng = 1e-3, np.random.default_rng(8)
    for scale in (1e-4, 1e-3, 1e-2, 1.0):
        for _ in range(5):
            q, w = arm.random_configuration(rng), scale * rng.normal(size=arm.nv)
            M = crba(arm, q)
            v_lo, v_hi = np.full(arm.nv, -np.inf), np.full(arm.nv, np.inf)
            if with_stops:   # some joints on a stop (bound 0), some about to reach one
                v_lo = -np.abs(scale * rng.normal(size=arm.nv)) * rng.integers(0, 2, arm.nv)
                v_hi = np.abs(scale * rng.normal(size=arm.nv)) * rng.integers(0, 2, arm.nv)
            v, _ = solve_velocity_step(M, w, dt * arm.friction, v_lo, v_hi,
                                       np.zeros(arm.nv, dtype=int) if guess == 'all_sliding' else None)
            if guess == 'all_sliding':
                unguessed, _ = solve_velocity_step(M, w, dt * arm.friction, v_lo, v_hi)
                np.testing.assert_allclose(v, unguessed, rtol=0, atol=1e-12 * (1 + np.abs(w).max()))
            assert np.all(v >= v_lo) and np.all(v <= v_hi)
            p = M @ (v - w) / dt
            inside = (v > v_lo) & (v < v_hi)
            sliding = inside & (v != 0)
            np.testing.assert_allclose(p[sliding], -(arm.friction * np.sign(v))[sliding], atol=1e-7)
            assert np.all(np.abs(p[inside & (v == 0)]) <= arm.friction[inside & (v == 0)] + 1e-7)
            assert np.all((p + arm.friction * np.sign(v))[(v == v_lo) & (v != 0)] >= -1e-7), 'a lower stop pulls'
            assert np.all((p + arm.friction * np.sign(v))[(v == v_hi) & (v != 0)] <= 1e-7), 'an upper stop pulls'
            assert np.all(p[(v == v_lo) & (v == 0) & (v_hi > 0)] >= -arm.friction[(v == v_lo) & (v == 0) & (v_hi > 0)] - 1e-7)
            assert np.all(p[(v == v_hi) & (v == 0) & (v_lo < 0)] <= arm.friction[(v == v_hi) & (v == 0) & (v_lo < 0)] + 1e-7)

            def objective(x):
                return 0.5 * (x - w) @ M @ (x - w) + dt * arm.friction @ np.abs(x)
            for _ in range(20):
                trial = np.clip(v + 1e-3 * scale * rng.normal(size=arm.nv), v_lo, v_hi)
                assert objective(trial) >= objective(v) - 1e-12 * (1.0 + abs(objective(v)))


def test_reset_and_initial_positions(arm):
    sim = Simulator(arm, 1e-3, initial_positions=np.full(arm.nv, 100.0))
    np.testing.assert_array_equal(sim.q, arm.upper)
    assert sim.paused is False
    sim.set_command(np.ones(arm.nv))
    run(sim, 0.01)
    sim.reset()
    assert sim.t == 0.0 and not np.any(sim.qd) and not np.any(sim.command)
    np.testing.assert_array_equal(sim.q, arm.upper)
    sim.reset(arm.neutral())
    np.testing.assert_array_equal(sim.q, arm.neutral())
    with pytest.raises(ValueError):
        Simulator(arm, 1e-3, initial_positions=np.zeros(3))
    with pytest.raises(ValueError, match='integrator'):
        Simulator(arm, 1e-3, integrator='euler')
    with pytest.raises(ValueError, match='dt'):
        Simulator(arm, 0.0)
