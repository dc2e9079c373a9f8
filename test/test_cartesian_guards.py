"""The Cartesian controller's reach and stability guards (issue 37, item 5), the attacks written as tests: a target
10 m (and 1e300 m) away, a 1e30 N feed-forward with max_force = 10 N, and gains the loop cannot realise at its rate.

In process on UR5 with the Simulator as the plant, with the node's settings (impedance, its default gains, the guards
of ``speed_limits``; and operational_space at bringup's gains). The simulator's drives are not limited to the URDF
velocity limits here (``limit_velocity=False``), so the joint speeds measured are the controller's doing.
Bounds: joint speeds below 90 % of their limits (the issue); under a feed-forward held at max_force F on an impedance
K with the target held, the end effector comes to rest where K e = -F (test_cartesian_control: the law adds no other
task force at rest), F / K = 20 mm, and a critically damped spring does not overshoot it: within 5 % (as the F/K
tests).
"""
import os

import numpy as np
import pytest

from robot_dynamics_ros import load_urdf
from robot_dynamics_ros.control.cartesian import CartesianController, check_gains, dexterous_posture, speed_limits
from robot_dynamics_ros.simulation.simulator import Simulator

from conftest import ROOT

UR5 = os.path.join(ROOT, 'test', 'urdf', 'real', 'ur5.urdf')
MODEL = load_urdf(UR5)
PERIOD = 1e-3   # the simulator's step: one joint state, one command
NODE_GAINS = dict(stiffness=(50.0, 50.0, 50.0, 500.0, 500.0, 500.0), damping_ratio=1.0, nullspace_stiffness=10.0)


def guarded(model, q0, law='impedance', **settings):
    """The controller as the node builds it (speed_limits' guards) on tool0, holding q0's posture."""
    angular, linear, joint_speed = speed_limits(model, 'tool0')
    return CartesianController(model, 'tool0', law, posture=q0, max_angular_speed=angular,
                               max_linear_speed=linear, joint_speed_limit=joint_speed, period=PERIOD,
                               **{**NODE_GAINS, **settings})


@pytest.mark.parametrize('law, stiffness', [('impedance', NODE_GAINS['stiffness']),
                                            ('operational_space', (2000.0,) * 6)])   # config/closed_loop.yaml's
@pytest.mark.parametrize('distance', [10.0, 1e300])
def test_a_far_target_moves_the_arm_at_a_bounded_speed_within_its_joint_limits(distance, law, stiffness):
    """Before: efforts saturated and every joint at 100 % of its velocity limit, into the stretched posture."""
    q0 = dexterous_posture(MODEL, 'tool0')
    sim = Simulator(MODEL, PERIOD, initial_positions=q0, limit_velocity=False)
    controller = guarded(MODEL, q0, law, stiffness=stiffness)
    controller.ee.update(q0, np.zeros(MODEL.nv))
    R0, p0 = controller.ee.R.copy(), controller.ee.p.copy()
    target = p0 + [distance, 0.0, 0.0]
    peak = 0.0
    for _ in range(4000):
        tau = controller.update(sim.q, sim.qd, R0, target, np.zeros(6))
        assert np.all(np.isfinite(tau))
        sim.set_command(tau)
        sim.step()
        peak = max(peak, np.max(np.abs(sim.qd) / MODEL.velocity_limit))
    assert peak < 0.9
    controller.ee.update(sim.q, sim.qd)
    assert controller.ee.p[0] - p0[0] > 0.3   # it went towards the target (a frozen arm keeps its speeds too)


def test_a_huge_feed_forward_moves_the_end_effector_only_as_far_as_max_force_can():
    """A 1e30 N feed-forward along x with max_force = 10 N: before, the clip of the total left 10 N along the
    feed-forward and nothing of the spring (0.59 m in 3 s); now it acts as 10 N, and the spring answers it."""
    q0 = dexterous_posture(MODEL, 'tool0')
    sim = Simulator(MODEL, PERIOD, initial_positions=q0)
    controller = guarded(MODEL, q0, max_force=10.0)
    controller.ee.update(q0, np.zeros(MODEL.nv))
    R0, p0 = controller.ee.R.copy(), controller.ee.p.copy()
    wrench = np.array([0.0, 0.0, 0.0, 1e30, 0.0, 0.0])
    farthest = 0.0
    for _ in range(3000):
        sim.set_command(controller.update(sim.q, sim.qd, R0, p0, np.zeros(6), None, wrench))
        sim.step()
        controller.ee.update(sim.q, sim.qd)
        farthest = max(farthest, np.linalg.norm(controller.ee.p - p0))
    expected = 10.0 / NODE_GAINS['stiffness'][3]   # F / K
    assert farthest <= 1.05 * expected
    assert controller.ee.p[0] - p0[0] == pytest.approx(expected, rel=0.05)   # and the 10 N did act
    for bad in (np.inf, np.nan):
        with pytest.raises(ValueError, match='feed-forward wrench is not finite'):
            controller.update(sim.q, sim.qd, R0, p0, np.zeros(6), None, np.array([0.0, 0.0, 0.0, bad, 0.0, 0.0]))


@pytest.mark.parametrize('law, stiffness, damping_ratio, nullspace_stiffness', [
    ('impedance', (50.0, 50.0, 50.0, 1e12, 1e12, 1e12), 1.0, 10.0),   # the attack: trans_* = 1e12
    ('impedance', NODE_GAINS['stiffness'], 1e12, 10.0),               # damping_ratio = 1e12
    ('impedance', NODE_GAINS['stiffness'], 0.0, 10.0),                # no damping: unstable sampled
    ('impedance', NODE_GAINS['stiffness'], 1.0, 1e12),                # nullspace.stiffness = 1e12
    ('operational_space', (2000.0,) * 5 + (1e12,), 1.0, 10.0),
])
def test_gains_the_loop_cannot_realise_at_its_rate_are_refused_with_a_reason(law, stiffness, damping_ratio,
                                                                             nullspace_stiffness):
    with pytest.raises(ValueError, match='unstable at 1000 joint states per second'):
        check_gains(MODEL, 'tool0', law, stiffness, damping_ratio, nullspace_stiffness, PERIOD)


def test_the_bound_is_the_sampled_loops():
    """operational_space makes each axis e'' = -(Kp e + 2 zeta sqrt(Kp) e'), each command held over the period T
    after its state: with x = w T (w^2 = Kp) and zeta = 1 the map on (e, e') has trace 2 - 2x - x^2/2 and
    determinant 1 - 2x + x^2/2, so 1 + trace + det = 4 - 4x (Jury): a root leaves the unit circle at z = -1 when
    w T = 1. w T = 0.95 is kept and 1.05 refused; the node's defaults and config/closed_loop.yaml's 2000 1/s^2 are
    kept."""
    for w_T, stable in ((0.95, True), (1.05, False)):
        kp = (w_T / PERIOD) ** 2
        if stable:
            check_gains(MODEL, 'tool0', 'operational_space', (kp,) * 6, 1.0, 0.0, PERIOD)
        else:
            with pytest.raises(ValueError, match='unstable'):
                check_gains(MODEL, 'tool0', 'operational_space', (kp,) * 6, 1.0, 0.0, PERIOD)
    check_gains(MODEL, 'tool0', 'operational_space', (2000.0,) * 6, 1.0, 10.0, PERIOD)
    check_gains(MODEL, 'tool0', 'impedance', NODE_GAINS['stiffness'], 1.0, 10.0, PERIOD)
    check_gains(MODEL, 'tool0', 'impedance', (0.0,) * 6, 1.0, 0.0, PERIOD)   # no stiffness: nothing to destabilise
