"""The standing controller (legged_controller.StandingController) on the bundled quadruped: in process with the
simulator's ground contact (control at 200 Hz, simulation at 1 kHz), and as the ``legged_controller`` node."""
import numpy as np
import pytest

from conftest import tilt_degrees
from robot_dynamics_ros.simulation.simulator import Simulator

pytest.importorskip('clarabel')
from robot_dynamics_ros.simulation.ground_contact import Ground  # noqa: E402  (needs clarabel
from robot_dynamics_ros.control.standing import StandingController, yaw_of  # noqa: E402
from robot_dynamics_ros.model.collision import leaf_links  # noqa: E402

STAND = np.array([0.0, 0.6, -1.2] * 4)    # hip, thigh, knee (rad) per leg
SQUAT = np.array([0.0, 0.9, -1.8] * 4)
MU = 0.6
SIM_DT = 1e-3                              # s
CONTROL_EVERY = 5                          # simulation steps per control update: 200 Hz


def simulate(model, points, seconds, controller=None, push=None):
    """The quadruped spawned standing on the ground (STAND), with base velocity `push` (v[:6]) if given, run for
    `seconds` under the controller (zero-order hold between its updates) or limp (zero torque). Returns the
    simulator."""
    sim = Simulator(model, SIM_DT, initial_positions=STAND, ground=Ground(0.0, MU), contact_points=points)
    if push is not None:
        sim.qd[:6] = push
    command = np.zeros(model.nv)
    for k in range(round(seconds / SIM_DT)):
        if controller is not None and k % CONTROL_EVERY == 0:
            command[model.joint_v_index] = controller.update(sim.q, sim.qd, k * SIM_DT)
            sim.set_command(command)
        sim.step()
    return sim


def test_the_feet_default_to_the_leaf_links(quadruped):
    model, points = quadruped
    assert leaf_links(model) == {'FL_calf', 'FR_calf', 'RL_calf', 'RR_calf'}
    controller = StandingController(model, points)
    assert [p.link for p in controller.feet] == ['FL_calf', 'FR_calf', 'RL_calf', 'RR_calf']   # not the trunk box


def test_it_keeps_the_quadruped_standing_and_without_it_it_falls(quadruped):
    model, points = quadruped
    spawn = Simulator(model, SIM_DT, initial_positions=STAND, ground=Ground(0.0, MU), contact_points=points).q
    controller = StandingController(model, points, 0.0, MU)
    # the kinematic standing height is where the simulator spawns the robot on its feet
    assert abs(controller.standing_height(STAND) - spawn[2]) < 1e-6
    held = simulate(model, points, 1.0, controller)
    assert abs(held.q[2] - spawn[2]) < 2e-3 and tilt_degrees(held.q) < 0.5
    assert len(controller.contacts) == 4
    # the feet carry the weight: the vertical forces add up to m g (the robot is at rest)
    mass = sum(model.inertia[i][5, 5] for i in range(model.nb))
    assert abs(controller.forces[:, 2].sum() - mass * 9.81) < 0.02 * mass * 9.81
    limp = simulate(model, points, 1.0)
    assert limp.q[2] < spawn[2] - 0.05     # m: the trunk drops without torques


def test_on_a_raised_ground_the_standing_height_is_raised_by_as_much(quadruped):
    model, points = quadruped
    on_the_floor = StandingController(model, points, 0.0, MU).standing_height(STAND)
    assert StandingController(model, points, 0.5, MU).standing_height(STAND) == pytest.approx(0.5 + on_the_floor,
                                                                                              abs=1e-12)


def test_after_a_push_it_returns_to_where_it_stood(quadruped):
    """A base twist (0.2, 0.1, 0 m/s; 0.5, 0.3, 0.2 rad/s): after 1 s the base is back at its start pose, height
    within 2 mm, tilt below 0.5 deg, x and y within 5 mm, yaw within 0.5 deg, all four feet on the ground."""
    model, points = quadruped
    controller = StandingController(model, points, 0.0, MU)
    sim = simulate(model, points, 1.0, controller, push=[0.2, 0.1, 0.0, 0.5, 0.3, 0.2])
    start = controller.start_pose
    assert abs(sim.q[2] - controller.standing_height(STAND)) < 2e-3 and tilt_degrees(sim.q) < 0.5
    assert np.hypot(sim.q[0] - start[0], sim.q[1] - start[1]) < 5e-3
    assert abs(np.degrees(yaw_of(sim.q[3:7]) - start[2])) < 0.5
    assert len(controller.contacts) == 4


def test_it_squats_to_a_joint_reference(quadruped):
    """From the stand to [0, 0.9, -1.8] per leg: the joints within 1 deg and the trunk at the kinematic standing
    height of the squat (feet on the ground, base upright) within 5 mm after 2 s."""
    model, points = quadruped
    controller = StandingController(model, points, 0.0, MU)
    controller.set_joint_reference(SQUAT)
    sim = simulate(model, points, 2.0, controller)
    np.testing.assert_allclose(sim.q[7:], SQUAT, atol=np.radians(1.0))
    target = controller.standing_height(SQUAT)
    assert target < controller.standing_height(STAND) - 0.05   # a real squat
    assert abs(sim.q[2] - target) < 5e-3 and tilt_degrees(sim.q) < 1.0


def test_a_joint_reference_beyond_the_limits_is_governed_into_them(quadruped):
    """The squat's thighs and knees 1 rad past their limits (hips as they stand): the reference the controller
    follows stops at the limits, each joint reaching them within its velocity limit (less LIMIT_MARGIN)."""
    from robot_dynamics_ros.control.governor import LIMIT_MARGIN
    model, points = quadruped
    lower, upper = model.lower[model.joint_q_index], model.upper[model.joint_q_index]
    speed = model.velocity_limit[model.joint_v_index]
    beyond = np.where(SQUAT > STAND, upper + 1.0, lower - 1.0)
    beyond[::3] = 0.0
    assert np.all(np.isfinite(lower)) and np.all(np.isfinite(speed))
    controller = StandingController(model, points, 0.0, MU)
    controller.set_joint_reference(beyond)
    sim = Simulator(model, SIM_DT, initial_positions=STAND, ground=Ground(0.0, MU), contact_points=points)
    previous = STAND
    command = np.zeros(model.nv)
    for k in range(0, 200, CONTROL_EVERY):
        command[model.joint_v_index] = controller.update(sim.q, sim.qd, k * SIM_DT)
        governed = controller.joint_reference[0]
        assert np.all(governed >= lower) and np.all(governed <= upper), governed
        assert np.all(np.abs(governed - previous) <= LIMIT_MARGIN * speed * CONTROL_EVERY * SIM_DT + 1e-9)
        previous = governed
        sim.set_command(command)
        for _ in range(CONTROL_EVERY):
            sim.step()
    np.testing.assert_allclose(governed, np.clip(beyond, lower, upper), atol=1e-12)
    assert controller.governor.limited_updates > 0


def test_gravity_compensation_holds_the_posture_and_bad_states_are_refused(quadruped):
    model, points = quadruped
    controller = StandingController(model, points, 0.0, MU, mode='gravity_compensation')
    sim = simulate(model, points, 0.2, controller)
    np.testing.assert_allclose(sim.q[7:], STAND, atol=np.radians(1.0))
    q = sim.q.copy()
    q[9] = np.nan
    with pytest.raises(ValueError, match='non-finite'):
        controller.update(q, sim.qd)
    with pytest.raises(ValueError):
        controller.set_joint_reference(STAND[:6])
    with pytest.raises(ValueError, match='mode'):
        controller.set_mode('dance')


def test_the_feet_in_contact_can_be_given(quadruped):
    """Standing, the four feet touch by kinematics; told that only the front ones do (a contact sensor's word), the
    controller plans forces on those two alone (two feet cannot hold the trunk still: it plans the best it can)."""
    model, points = quadruped
    q = Simulator(model, SIM_DT, initial_positions=STAND, ground=Ground(0.0, MU), contact_points=points).q
    controller = StandingController(model, points, 0.0, MU)
    controller.update(q, np.zeros(model.nv))
    assert len(controller.contacts) == 4
    controller.update(q, np.zeros(model.nv), feet_in_contact={'FL_calf', 'FR_calf'})
    assert sorted(link for link, _ in controller.contacts) == ['FL_calf', 'FR_calf']
    assert controller.forces.shape == (2, 3) and np.all(controller.forces[:, 2] > 0)
