"""Ground contact in the Simulator (issue 21): contact points from URDF collision geometry, analytic oracles (a box
on an incline, a dropped and a rolling sphere, energy of a robot coming to rest) and MuJoCo as a second simulator
on the bundled quadruped. Thresholds come from the physics of each case, stated beside it."""
import os

import numpy as np
import pytest

from conftest import ROOT
from mujoco_model import MUJOCO_STEP, mjcf
from robot_dynamics_ros import load_urdf, spatial
from robot_dynamics_ros.algorithms.inverse_mass import inverse_mass_rows
from robot_dynamics_ros.algorithms.operators import mass_matrix_inverse
from robot_dynamics_ros.fast import udut
from robot_dynamics_ros.model.collision import RIM_POINTS, ContactPoint, contact_points_from_urdf
from robot_dynamics_ros.simulation.simulator import Simulator

pytest.importorskip('clarabel')
from robot_dynamics_ros.simulation.ground_contact import Ground  # noqa: E402  (needs clarabel

QUADRUPED = os.path.join(ROOT, 'urdf', 'quadruped.urdf')
STAND = np.tile([0.0, 0.8, -1.5], 4)   # hip, thigh, knee of each leg: the quadruped's standing posture
G = 9.81
DT = 1e-3
BOX = '''<robot name="box"><link name="box">
  <inertial><mass value="2.0"/><inertia ixx="0.00833" iyy="0.00833" izz="0.01333" ixy="0" ixz="0" iyz="0"/></inertial>
  <collision><geometry><box size="0.2 0.2 0.1"/></geometry></collision></link></robot>'''
BALL_RADIUS = 0.05
BALL = f'''<robot name="ball"><link name="ball">
  <inertial><mass value="1.0"/><inertia ixx="0.001" iyy="0.001" izz="0.001" ixy="0" ixz="0" iyz="0"/></inertial>
  <collision><geometry><sphere radius="{BALL_RADIUS}"/></geometry></collision></link></robot>'''   # I = 2/5 m r^2


def simulator(urdf, mu=1.0, gravity=None, initial_positions=None, **options):
    model = load_urdf(urdf, root_joint='floating')
    return Simulator(model, DT, gravity=gravity, ground=Ground(0.0, mu), contact_points=contact_points_from_urdf(urdf),
                     initial_positions=initial_positions, **options)


def world_velocity(sim):
    """The base origin's velocity in the world (v of a free-flyer is in the base frame)."""
    return spatial.quaternion_to_matrix(sim.q[3:7]) @ sim.qd[:3]


def test_contact_points_from_collision_spheres_box_corners_and_cylinder_rims():
    urdf = '''<robot name="shapes"><link name="a">
      <collision><origin xyz="1 0 0"/><geometry><sphere radius="0.1"/></geometry></collision>
      <collision><origin xyz="0 0 1" rpy="0 0 1.5707963267948966"/><geometry><box size="0.2 0.4 0.6"/></geometry></collision>
      <collision><geometry><cylinder radius="0.5" length="2"/></geometry></collision>
      <collision><geometry><mesh filename="package://x/y.stl"/></geometry></collision></link></robot>'''
    points = contact_points_from_urdf(urdf, reduce=False)   # each shape's points (reduce_points: test_contact_bounds)
    assert len(points) == 1 + 8 + 2 * RIM_POINTS
    assert points[0] == ContactPoint('a', (1.0, 0.0, 0.0), 0.1)
    corners = np.array([p.offset for p in points[1:9]])
    # the box turned by 90 degrees about z: its 0.2 side lies along y, its 0.4 side along x
    np.testing.assert_allclose(np.abs(corners - [0, 0, 1]).max(axis=0), [0.2, 0.1, 0.3], atol=1e-12)
    rims = np.array([p.offset for p in points[9:]])
    np.testing.assert_allclose(np.hypot(rims[:, 0], rims[:, 1]), 0.5, atol=1e-12)
    assert sorted(set(np.round(rims[:, 2], 12))) == [-1.0, 1.0]


def test_contact_space_inverse_inertia_equals_jains_operators():
    """G M^-1 G^T from U D U^T and the triangular sweeps (``algorithms/inverse_mass``) equals the one from Jain's M^-1
    operator (eq. 51)."""
    model = load_urdf(QUADRUPED, root_joint='floating')
    rng = np.random.default_rng(3)
    q = model.random_configuration(rng)
    G_rows = rng.normal(size=(12, model.nv))
    Y = np.empty((model.nv, len(G_rows)))
    inverse_mass_rows(*udut(model, q), G_rows, len(G_rows), Y)
    ours = G_rows @ Y
    np.testing.assert_allclose(ours, G_rows @ mass_matrix_inverse(model, q) @ G_rows.T, rtol=1e-10, atol=1e-12)


def test_a_floating_robot_spawns_with_its_lowest_point_on_the_ground_unless_its_pose_is_given():
    sim = simulator(QUADRUPED, initial_positions=STAND)
    assert abs(sim.contact.lowest_height(sim.q)) < 1e-12
    np.testing.assert_array_equal(sim.q[7:], STAND)
    given = sim.q.copy()
    given[:3] = 0.5, -0.2, 1.0
    sim = simulator(QUADRUPED, initial_positions=given)
    np.testing.assert_array_equal(sim.q, given)


def test_ground_contact_and_floating_models_take_semi_implicit_euler_only():
    model = load_urdf(BOX, root_joint='floating')
    with pytest.raises(ValueError, match='semi_implicit_euler'):
        Simulator(model, DT, integrator='rk4')
    with pytest.raises(ValueError, match='ground'):
        Simulator(load_urdf(QUADRUPED), DT, integrator='rk4', ground=Ground())


def test_without_ground_a_floating_body_falls_freely():
    """No ground: semi-implicit Euler of free fall, z_n = z_0 - g dt^2 n (n + 1) / 2 exactly."""
    model = load_urdf(BOX, root_joint='floating')
    sim = Simulator(model, DT, initial_positions=[0, 0, 1.0, 0, 0, 0, 1])
    for _ in range(100):
        sim.step()
    assert sim.q[2] == pytest.approx(1.0 - G * DT * DT * 100 * 101 / 2, abs=1e-12)


def slide(theta, mu, seconds=1.0):
    """The box on a plane inclined by theta (gravity tilted about y): (times, x, z) of its centre."""
    sim = simulator(BOX, mu=mu, gravity=G * np.array([np.sin(theta), 0.0, -np.cos(theta)]))
    x, z = [], []
    for _ in range(int(round(seconds / DT))):
        sim.step()
        x.append(sim.q[0])
        z.append(sim.q[2])
    return DT * np.arange(1, len(x) + 1), np.array(x), np.array(z)


@pytest.mark.parametrize('degrees', [20.0, 25.0])
def test_a_box_stays_on_an_incline_when_tan_theta_is_below_mu(degrees):
    """tan(theta) < mu = 0.5: the friction cone holds the box. Sticking is exact up to the solver's tolerance
    (1e-8 relative), so the box may creep by micrometres; sliding at even 1 % of g sin(theta) would take it
    17 mm in the second."""
    t, x, z = slide(np.radians(degrees), 0.5)
    assert np.max(np.abs(x)) < 1e-5
    assert np.max(np.abs(z - 0.05)) < 1e-6


@pytest.mark.parametrize('degrees', [28.0, 30.0])
def test_a_box_slides_down_an_incline_at_g_sin_minus_mu_cos(degrees):
    """tan(theta) > mu = 0.5: x = a t^2 / 2 with a = g (sin theta - mu cos theta), within 1 %; the box stays on the
    plane (no lift: the contact is on the plane, not Anitescu's relaxed cone that lifts a sliding body by
    mu |v_t| dt per step) and does not tip."""
    theta, mu = np.radians(degrees), 0.5
    t, x, z = slide(theta, mu)
    a = G * (np.sin(theta) - mu * np.cos(theta))
    fitted = 2.0 * np.polyfit(t, x, 2)[0]
    assert fitted == pytest.approx(a, rel=0.01)
    assert np.max(np.abs(z - 0.05)) < 1e-6


def drop(horizontal_velocity, seconds=1.0):
    sim = simulator(BALL, mu=0.8, initial_positions=[0, 0, 0.35, 0, 0, 0, 1])
    sim.qd[0] = horizontal_velocity
    heights, vertical = [], []
    for _ in range(int(round(seconds / DT))):
        sim.step()
        heights.append(sim.q[2] - BALL_RADIUS)   # of the ball's lowest point
        vertical.append(world_velocity(sim)[2])
    return sim, np.array(heights), np.array(vertical)


def test_a_dropped_sphere_comes_to_rest_without_bounce_or_penetration():
    """Dropped from 0.3 m: perfectly inelastic, so once it touches the ground it stays there: never above it again
    by more than the solver's tolerance (a bounce with restitution even 0.01 would lift it by (0.01 v)^2 / 2g =
    0.3 mm), never more than 1 mm into it, and at rest. (The step it lands in ends on the ground with the speed
    that closed the gap; the next step stops it.)"""
    sim, heights, vertical = drop(0.0)
    landed = np.argmax(heights < 1e-6)
    assert 0 < landed < len(heights) - 2
    assert heights[landed:].max() < 1e-6
    assert heights.min() > -1e-3
    assert np.max(np.abs(vertical[landed + 1:])) < 1e-6
    assert np.max(np.abs(sim.qd)) < 1e-6


def test_a_sphere_thrown_along_the_ground_rolls_at_five_sevenths_of_its_speed():
    """Thrown at v0 = 0.5 m/s while it falls: friction brings it to rolling without slipping, where its angular
    momentum about the contact point is conserved: v = v0 / (1 + I / (m r^2)) = 5/7 v0, and omega r = v."""
    v0 = 0.5
    sim, heights, vertical = drop(v0)
    landed = np.argmax(heights < 1e-6)
    assert heights[landed:].max() < 1e-6 and heights.min() > -1e-3
    velocity, omega = world_velocity(sim), spatial.quaternion_to_matrix(sim.q[3:7]) @ sim.qd[3:]
    assert velocity[0] == pytest.approx(5.0 / 7.0 * v0, rel=1e-6)
    assert omega[1] * BALL_RADIUS == pytest.approx(velocity[0], rel=1e-6)


def test_a_robot_resting_on_the_ground_never_gains_energy():
    """The quadruped, standing with zero effort, folds onto the ground under gravity (joint damping and friction
    from the URDF) and comes to rest. Kinetic plus potential energy never rises from one step to the next by more
    than 1e-6 of the starting energy (the solver's tolerance); a gain from the contact itself (a bounce, a push
    out of the ground by 1 mm) would be m g 1 mm = 0.14 J, three thousand times that. Joints stay within their
    limits, solved with the contacts."""
    sim = simulator(QUADRUPED, mu=0.8, initial_positions=STAND)
    model, standing_height = sim.model, sim.q[2]
    energy, lowest = [sim.total_energy()], []
    for _ in range(1500):
        sim.step()
        energy.append(sim.total_energy())
        lowest.append(sim.contact.lowest_height(sim.q))
        joints = sim.q[model.joint_q_index]
        assert np.all(joints >= model.lower[model.joint_q_index]) and np.all(joints <= model.upper[model.joint_q_index])
    energy = np.array(energy)
    assert np.max(np.diff(energy)) <= 1e-6 * energy[0]
    assert sim.q[2] < 0.5 * standing_height        # it did fold: the trunk came down to the ground
    assert min(lowest) > -1e-3
    assert np.max(np.abs(sim.qd)) < 1e-3           # and is at rest


def test_a_box_resting_on_flat_ground_stays_put_with_constant_energy():
    sim = simulator(BOX)
    start, energy = sim.q.copy(), sim.total_energy()
    for _ in range(500):
        sim.step()
    np.testing.assert_allclose(sim.q, start, atol=1e-9)
    assert abs(sim.total_energy() - energy) < 1e-6 * energy


def test_a_push_is_bounded_by_ten_g_on_the_robots_mass():
    """The 2 kg box: 196.2 N of force (10 g) and 196.2 N m of torque (at a 1 m lever) at most; beyond, refused and
    the push acting before stays."""
    sim = simulator(BOX)
    sim.push('box', [196.0, 0.0, 0.0], torque=[0.0, 0.0, 196.0])
    acting = sim.push_wrench
    for force, torque in (([197.0, 0.0, 0.0], [0.0, 0.0, 0.0]), ([0.0, 0.0, 0.0], [0.0, 197.0, 0.0])):
        with pytest.raises(ValueError, match='10 g on the robot'):
            sim.push('box', force, torque=torque)
        assert sim.push_wrench is acting


def test_a_pushed_box_slides_as_far_as_coulomb_friction_allows():
    """A horizontal push F for T at the centre of a resting box (mass m, friction mu): it slides with acceleration
    (F - mu m g) / m during the push, then decelerates at mu g: distance a T^2 / 2 + (a T)^2 / (2 mu g). F = 30 N at
    0.05 m height tips nothing (moment 1.5 N m < m g x 0.1 m = 1.96 N m). Within 1 %."""
    mu, force, duration, mass = 0.8, 30.0, 0.1, 2.0
    sim = simulator(BOX, mu=mu)
    sim.push('box', [force, 0.0, 0.0], duration=duration)
    for _ in range(1000):
        sim.step()
    a = (force - mu * mass * G) / mass
    expected = a * duration**2 / 2 + (a * duration)**2 / (2 * mu * G)
    assert sim.q[0] == pytest.approx(expected, rel=0.01)
    assert sim.push_wrench is None and np.max(np.abs(sim.qd)) < 1e-9    # the push ended, and the box stopped


def test_a_push_gives_the_momentum_of_its_impulse():
    """Without gravity or ground, a force F and torque N at a free body's centre for T give it momentum F T and
    angular momentum N T (semi-implicit Euler is exact for constant forces)."""
    model = load_urdf(BOX, root_joint='floating')
    sim = Simulator(model, DT, gravity=[0.0, 0.0, 0.0])
    sim.push('box', [2.0, -1.0, 0.5], torque=[0.0, 0.0, 0.3], duration=0.05)
    for _ in range(100):
        sim.step()
    R = spatial.quaternion_to_matrix(sim.q[3:7])
    np.testing.assert_allclose(2.0 * world_velocity(sim), [0.1, -0.05, 0.025], rtol=1e-9)
    np.testing.assert_allclose(R @ (0.01333 * sim.qd[3:6]), [0.0, 0.0, 0.015], rtol=1e-9, atol=1e-12)


def test_the_certified_pattern_path_steps_as_the_interior_point_solver():
    """The quadruped dropped from 3 cm onto its feet under a joint PD, and a box sliding down a 30 degree incline
    (mu 0.5), each stepped twice: with the last step's pattern tried first (contact_active_set), then the bounded
    sweeps (bounded_solve), and with the interior-point solver alone. The quadruped's trajectories agree to the
    interior-point solver's tolerance; the pattern serves some of its steps (so the comparison tests it: how many
    is a matter of speed, reported by benchmarks/bench_contact.py) and every step of the sliding box's but its
    first (a sliding contact's pattern, ``sliding``; the first, from rest, starts every corner sliding: the sweeps).
    The box slides as semi-implicit Euler does at a = g (sin - mu cos): x_k = a dt^2 k (k + 1) / 2, to 1e-9 m
    on the step's path; the interior-point solver's fixed point stops where the shift changes by less than
    FIXED_POINT_TOLERANCE (1e-6 m/s), which leaves it within 1e-5 m over the 0.5 s."""
    runs = {}
    for try_pattern in (True, False):
        quadruped = simulator(QUADRUPED, initial_positions=STAND)
        quadruped.q[2] += 0.03
        box = simulator(BOX, mu=0.5, gravity=G * np.array([np.sin(np.radians(30.0)), 0.0, -np.cos(np.radians(30.0))]))
        trajectory = []
        for sim in (quadruped, box):
            sim.contact.try_pattern = try_pattern
        for _ in range(500):
            quadruped.set_command(np.concatenate([np.zeros(6), 100.0 * (STAND - quadruped.q[7:]) - 2.0 * quadruped.qd[6:]]))
            quadruped.step()
            box.step()
            trajectory.append(np.concatenate([quadruped.q, box.q]))
        runs[try_pattern] = np.array(trajectory), quadruped.contact.solves, box.contact.solves
    (with_pattern, quadruped_solves, box_solves), (without, _, _) = runs[True], runs[False]
    np.testing.assert_allclose(with_pattern[:, :19], without[:, :19], atol=1e-7)
    k = np.arange(1, 501)
    slid = G * (np.sin(np.radians(30.0)) - 0.5 * np.cos(np.radians(30.0))) * DT ** 2 * k * (k + 1) / 2
    np.testing.assert_allclose(with_pattern[:, 19] - with_pattern[0, 19] + slid[0], slid, rtol=0, atol=1e-9)
    np.testing.assert_allclose(without[:, 19] - without[0, 19] + slid[0], slid, rtol=0, atol=1e-5)
    assert quadruped_solves['pattern'] > 0 and quadruped_solves['interior point'] == 0
    assert box_solves['pattern'] >= 499 and box_solves['bounded'] <= 1 and box_solves['interior point'] == 0


# --- MuJoCo as a second simulator (the model: mujoco_model.py) -----------------------------------------------------


def test_quadruped_under_joint_pd_agrees_with_mujoco():
    """The bundled quadruped spawned on the ground in its standing posture, held by the same joint PD
    (Kp = 100 N m/rad, Kd = 2 N m s/rad, computed from each simulator's state at each of its steps): after 2 s
    (settled: the PD legs sag under the weight and the body pitches slightly, the legs being asymmetric), base
    height within 5 mm and base orientation within 1 degree of MuJoCo's."""
    mujoco = pytest.importorskip('mujoco')
    mu, kp, kd, seconds = 1.0, 100.0, 2.0, 2.0
    sim = simulator(QUADRUPED, mu=mu, initial_positions=STAND)
    model, standing_height = sim.model, sim.q[2]   # spawned with its lowest points on the ground
    mj_model = mujoco.MjModel.from_xml_string(mjcf(model, contact_points_from_urdf(QUADRUPED), mu))
    assert mj_model.nv == model.nv and np.isclose(mj_model.body_mass.sum(), model.inertia[:, 5, 5].sum())
    data = mujoco.MjData(mj_model)
    data.qpos[:] = np.concatenate([sim.q[:3], np.roll(sim.q[3:7], 1), sim.q[7:]])   # MuJoCo: quaternion w first
    for _ in range(int(round(seconds / DT))):
        sim.set_command(np.concatenate([np.zeros(6), kp * (STAND - sim.q[7:]) - kd * sim.qd[6:]]))
        sim.step()
    for _ in range(int(round(seconds / MUJOCO_STEP))):
        data.qfrc_applied[6:] = kp * (STAND - data.qpos[7:]) - kd * data.qvel[6:]
        mujoco.mj_step(mj_model, data)
    ours, theirs = sim.q[3:7], np.roll(data.qpos[3:7], -1)
    angle = 2.0 * np.degrees(np.arccos(min(1.0, abs(float(ours @ theirs)))))
    assert abs(sim.q[2] - data.qpos[2]) < 5e-3
    assert angle < 1.0
    # and both stand: nearer their standing height than the ground (the PD legs sag; a robot lying on its body is
    # at a fraction of it)
    assert sim.q[2] > 0.5 * standing_height
