"""Ground contact (ground_contact.py, floating_simulation.py) against the analytic results it must reproduce: a box on
an incline sticks when tan(theta) < mu and slides with g (sin(theta) - mu cos(theta)) when not; a dropped sphere
comes to rest without bounce and without sinking in; resting and tumbling bodies never gain energy."""
import numpy as np
import pytest

from robot_dynamics_ros import load_urdf
from robot_dynamics_ros.floating_simulation import FloatingBaseSimulator
from robot_dynamics_ros.ground_contact import ContactPoint, contact_points_from_urdf

G = 9.81
DT = 1e-3
BOX = ('<robot name="box"><link name="box"><inertial><mass value="2.0"/>'
       '<inertia ixx="0.00833" iyy="0.00833" izz="0.01333" ixy="0" ixz="0" iyz="0"/></inertial>'
       '<collision><geometry><box size="0.2 0.2 0.1"/></geometry></collision></link></robot>')
BALL = ('<robot name="ball"><link name="ball"><inertial><mass value="1.0"/>'
        '<inertia ixx="0.004" iyy="0.004" izz="0.004" ixy="0" ixz="0" iyz="0"/></inertial>'
        '<collision><geometry><sphere radius="0.1"/></geometry></collision></link></robot>')


def simulator(xml, **options):
    return FloatingBaseSimulator(load_urdf(xml, root_joint='floating'), DT, contact_points_from_urdf(xml), **options)


def tilted_gravity(theta):
    """Gravity of a ground tilted by theta about y: the incline goes down along +x."""
    return G * np.array([np.sin(theta), 0.0, -np.cos(theta)])


def test_contact_points_of_boxes_spheres_and_cylinders():
    assert len(contact_points_from_urdf(BOX)) == 8
    assert {tuple(np.abs(p.offset)) for p in contact_points_from_urdf(BOX)} == {(0.1, 0.1, 0.05)}
    assert contact_points_from_urdf(BALL) == [ContactPoint('ball', (0.0, 0.0, 0.0), 0.1)]
    wheel = BALL.replace('<sphere radius="0.1"/>', '<cylinder radius="0.1" length="0.04"/>')
    assert len(contact_points_from_urdf(wheel)) == 16


def test_a_box_on_an_incline_shallower_than_its_friction_angle_stays():
    """tan(10 deg) = 0.18 < mu = 0.3: static friction holds the box; over 1 s it moves less than 1 um."""
    sim = simulator(BOX, gravity=tilted_gravity(np.radians(10.0)), ground_friction=0.3)
    start = sim.q.copy()
    for _ in range(1000):
        sim.step()
    assert np.max(np.abs(sim.q[:3] - start[:3])) < 1e-6


@pytest.mark.parametrize('degrees, mu', [(30.0, 0.3), (45.0, 0.5)])
def test_a_box_on_a_steeper_incline_slides_at_g_sin_minus_mu_cos(degrees, mu):
    """tan(theta) > mu: the box slides down with a = g (sin(theta) - mu cos(theta)), within 1 %, and stays on
    the ground (no lift-off, no tipping)."""
    theta = np.radians(degrees)
    sim = simulator(BOX, gravity=tilted_gravity(theta), ground_friction=mu)
    for _ in range(500):
        sim.step()
    expected = G * (np.sin(theta) - mu * np.cos(theta))
    assert abs(sim.v[0] / sim.t - expected) < 0.01 * expected
    assert abs(sim.q[2] - 0.05) < 1e-4 and abs(sim.v[2]) < 1e-4


def test_a_dropped_sphere_comes_to_rest_without_bounce_or_sinking():
    """Dropped from 0.3 m: once it touches it never rises again (perfectly inelastic), it never sinks more than
    1 mm into the ground, and it is at rest 0.1 s later."""
    sim = simulator(BALL, base_pose=[0.0, 0.0, 0.4, 0.0, 0.0, 0.0, 1.0])
    heights, touched = [], None
    for step in range(1000):
        sim.step()
        heights.append(sim.q[2] - 0.1)   # the lowest point of the ball
        if touched is None and heights[-1] < 1e-9:
            touched = step
    heights = np.array(heights)
    assert touched is not None
    assert np.min(heights) >= -1e-3
    assert np.max(heights[touched:]) < 1e-9
    assert np.max(np.abs(sim.v)) < 1e-9


def test_resting_and_tumbling_bodies_never_gain_energy():
    """A box at rest on the ground keeps its energy (to 1e-9 J); one dropped tumbling onto it ends with less and
    never exceeds its initial energy by more than semi-implicit Euler's free-flight error (g^2 m dt^2 scale, here
    below 1e-3 J)."""
    sim = simulator(BOX)
    energy = sim.total_energy()
    for _ in range(300):
        sim.step()
        assert abs(sim.total_energy() - energy) < 1e-9
    tumbling = simulator(BOX, base_pose=[0.0, 0.0, 0.5, 0.2, 0.3, 0.1, np.sqrt(1 - 0.14)])
    tumbling.v[3:] = (4.0, -3.0, 2.0)   # rad/s
    start = tumbling.total_energy()
    energies = []
    for _ in range(1500):
        tumbling.step()
        energies.append(tumbling.total_energy())
    assert max(energies) < start + 1e-3
    assert energies[-1] < start - 1.0   # the impacts dissipated most of the 10 J
