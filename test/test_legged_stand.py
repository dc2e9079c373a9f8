"""The bundled quadruped (urdf/quadruped.urdf) on the ground in process: contact-consistent inverse dynamics
(control/contact_inverse_dynamics.py) holds it standing and lowers it into a squat, in the simulator with ground contact
(Simulator with a Ground); without the controller it collapses."""
import numpy as np
import pytest

from conftest import tilt_degrees
from robot_dynamics_ros.algorithms import frame_placement
from robot_dynamics_ros.control.contact_inverse_dynamics import contact_inverse_dynamics
from robot_dynamics_ros.model.configuration import difference
from robot_dynamics_ros.simulation.simulator import Simulator

pytest.importorskip('clarabel')
from robot_dynamics_ros.simulation.ground_contact import Ground  # noqa: E402  (needs clarabel

STAND = np.array([0.0, 0.6, -1.2] * 4)    # hip, thigh, knee (rad) per leg
SQUAT = np.array([0.0, 0.9, -1.8] * 4)
MU = 0.8
KP, KD = 400.0, 40.0                       # 1/s^2, 1/s: a critically damped 20 rad/s error response


def simulator(model, points, initial_positions):
    return Simulator(model, 1e-3, initial_positions=initial_positions, ground=Ground(0.0, MU), contact_points=points)


def feet_in_contact(sim):
    """(link, lowest point in the link's frame) of the contact points within 1 mm of the ground."""
    height, lowest, _, _ = sim.contact.points(sim.q)
    feet = []
    for i in np.flatnonzero(height < 1e-3):
        link = sim.contact.links[i]
        placement = frame_placement(sim.model, sim.q, link)
        feet.append((link, placement.R.T @ (lowest[i] - placement.p)))
    return feet


def run(sim, q_ref, steps, control=True):
    model = sim.model
    for _ in range(steps):
        if control:
            desired = KP * difference(model, sim.q, q_ref) - KD * sim.qd
            tau, _, _ = contact_inverse_dynamics(model, sim.q, sim.qd, desired, feet_in_contact(sim), MU)
            command = np.zeros(model.nv)
            command[model.joint_v_index] = tau
            sim.set_command(command)
        sim.step()


def test_the_controller_holds_the_quadruped_standing_and_without_it_it_falls(quadruped):
    model, points = quadruped
    sim = simulator(model, points, STAND)
    spawn = sim.q.copy()
    run(sim, spawn, 500)
    assert abs(sim.q[2] - spawn[2]) < 1e-3 and tilt_degrees(sim.q) < 0.1
    limp = simulator(model, points, STAND)
    run(limp, spawn, 500, control=False)
    assert limp.q[2] < spawn[2] - 0.05     # m: the trunk drops without torques


def test_the_quadruped_squats_to_a_lower_posture(quadruped):
    """The reference: the squat joint angles, the trunk at the height where the feet touch the ground in them. The
    trunk gets there within 5 mm and 1 deg in 1.5 s, on its feet: the foot spheres roll as the calves pitch by 0.3
    rad (their centres move radius x 0.3 = 6 mm), and slip less than 1 mm beyond that."""
    model, points = quadruped
    sim = simulator(model, points, STAND)
    target = simulator(model, points, SQUAT).q   # spawned on the ground
    feet_before = np.array([lowest for lowest in foot_positions(model, sim.q, points)])
    run(sim, target, 1500)
    assert abs(sim.q[2] - target[2]) < 5e-3 and tilt_degrees(sim.q) < 1.0
    np.testing.assert_allclose(sim.q[7:], target[7:], atol=np.radians(1.0))
    calf_pitch_change = abs((SQUAT[1] + SQUAT[2]) - (STAND[1] + STAND[2]))
    rolled = 0.02 * calf_pitch_change
    assert np.max(np.abs(foot_positions(model, sim.q, points)[:, :2] - feet_before[:, :2])) < rolled + 1e-3


def foot_positions(model, q, points):
    feet = [p for p in points if p.radius > 0]
    return np.array([frame_placement(model, q, p.link).p + frame_placement(model, q, p.link).R @ np.asarray(p.offset)
                     for p in feet])
