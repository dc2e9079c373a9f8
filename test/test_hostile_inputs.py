"""Hostile inputs to the simulator and the model readers (issue 37): an external wrench beyond any push, files that
are not meshes or leave their package, inputs too large to use as they are, an SRDF orientation that is no rotation.
Each is refused with a reason, skipped with a warning, or reduced with a note; nothing crashes later."""
import os
import types
import warnings
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from conftest import ROOT, TEST_DIR, assert_one_line_error, cli
from ros_helpers import ros_domain, start  # noqa: F401  (fixtures)
from robot_dynamics_ros import load_urdf
from robot_dynamics_ros.model.collision import contact_points_from_urdf
from robot_dynamics_ros.model.urdf import URDFWarning
from robot_dynamics_ros.simulation.simulator import Simulator

QUADRUPED = os.path.join(ROOT, 'urdf', 'quadruped.urdf')
BOX = os.path.join(TEST_DIR, 'urdf', 'box.urdf')
STAND = np.tile([0.0, 0.8, -1.5], 4)
G = 9.81


def standing_quadruped():
    pytest.importorskip('clarabel')
    from robot_dynamics_ros.simulation.ground_contact import Ground
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', URDFWarning)
        model = load_urdf(QUADRUPED, root_joint='floating')
        points = contact_points_from_urdf(QUADRUPED)
    return Simulator(model, 1e-3, ground=Ground(0.0, 0.8), contact_points=points, initial_positions=STAND)


def quadruped_mass():
    """The sum of the URDF's <mass> values, read from the file (not from the model)."""
    return sum(float(mass.get('value')) for mass in ET.parse(QUADRUPED).getroot().iter('mass'))


# 1. External wrenches: bounded as pushes are, refused beyond, logged at most once per throttle period.

def test_a_wrench_beyond_ten_g_on_the_mass_is_refused_and_the_run_goes_on():
    """1e30 N on the trunk made the contact solver fail at the first step (Clarabel: DualInfeasible); 1e6 N failed
    in process after 20 steps. Both are refused, as a push is, and the held wrench stays; the quadruped, held in its
    stance by a PD law, keeps finite states and stands. The bound, 10 g on the URDF's mass (20.8 kg: 2040 N), holds
    for the force and (at a 1 m lever) for the torque, just below it accepted."""
    sim = standing_quadruped()
    bound = 10 * G * quadruped_mass()
    sim.apply_wrench('trunk', [0.0, 0.0, -20.0])
    held = sim.held_wrench
    for force, torque in (([1e30, 0.0, 1e30], [0.0, 0.0, 0.0]), ([1e6, 0.0, 0.0], [0.0, 0.0, 0.0]),
                          ([1.01 * bound, 0.0, 0.0], [0.0, 0.0, 0.0]), ([0.0, 0.0, 0.0], [0.0, 1.01 * bound, 0.0])):
        with pytest.raises(ValueError, match="wrench: .*10 g on the robot"):
            sim.apply_wrench('trunk', force, torque)
        assert sim.held_wrench is held
    for _ in range(100):
        sim.set_command(np.concatenate([np.zeros(6), 100.0 * (STAND - sim.q[7:]) - 2.0 * sim.qd[6:]]))
        sim.step()
        assert np.all(np.isfinite(sim.q)) and np.all(np.isfinite(sim.qd))
    assert np.max(np.abs(sim.qd)) < 1.0   # standing, not thrown: a 20 N load on a 20.8 kg robot
    sim.apply_wrench('trunk', [0.99 * bound, 0.0, 0.0], [0.0, 0.0, 0.99 * bound])
    assert sim.held_wrench[1] == pytest.approx([0.0, 0.0, 0.99 * bound, 0.99 * bound, 0.0, 0.0])


def test_a_stream_of_wrench_messages_is_logged_once_per_throttle_period():
    """The node's ~/wrench callback logged an INFO line per accepted wrench (5,018 lines in 5 s). 1,000 accepted
    wrenches with changing values are one line, 1,000 refused ones one warning, within one throttle period."""
    from geometry_msgs.msg import WrenchStamped
    from robot_dynamics_ros.nodes.node_loop import Throttle
    from robot_dynamics_ros.nodes.simulator import SimulatorNode

    class Logger:
        def __init__(self):
            self.lines = []

        def info(self, line):
            self.lines.append(('info', line))

        def warning(self, line):
            self.lines.append(('warning', line))
    logger = Logger()
    box = load_urdf(os.path.join(ROOT, 'test', 'urdf', 'box.urdf'), root_joint='floating')
    fake = types.SimpleNamespace(sim=Simulator(box, 1e-3), throttle=Throttle(logger, period=60.0),
                                 get_logger=lambda: logger)
    msg = WrenchStamped()
    msg.header.frame_id = 'box'
    for k in range(1000):
        msg.wrench.force.x = 1.0 + 0.01 * k
        SimulatorNode._on_wrench(fake, msg)
    assert fake.sim.held_wrench[1][3] == pytest.approx(1.0 + 0.01 * 999)   # every one was applied
    for k in range(1000):
        msg.wrench.force.x = 1e30 * (1 + k)
        SimulatorNode._on_wrench(fake, msg)
    assert fake.sim.held_wrench[1][3] == pytest.approx(1.0 + 0.01 * 999)   # none of these
    assert [kind for kind, _ in logger.lines] == ['info', 'warning'], logger.lines
    assert 'rejected wrench' in logger.lines[1][1] and '10 g' in logger.lines[1][1]


def test_the_simulator_node_refuses_a_1e30_wrench_runs_on_and_logs_a_stream_once_per_period(ros_domain, start):
    """Over DDS, a 2 kg box on the ground (bound 196.2 N): a 1e30 N wrench is refused with a warning and the node
    keeps publishing finite odometry with the box at rest on the ground; a stream of 200 valid wrenches (pressing
    it down, within friction) logs at most one line per 2 s throttle period."""
    import time
    from geometry_msgs.msg import WrenchStamped
    from nav_msgs.msg import Odometry
    pytest.importorskip('clarabel')
    _, probe = ros_domain
    odom = []
    probe.node.create_subscription(Odometry, '/simulator/odom', odom.append, 100)
    simulator = start('simulator', params=[('urdf_file', BOX), ('root_joint', 'floating'), ('wait_for_command', False),
                                           ('publish_rate', 100.0)])
    assert probe.spin_until(lambda: len(odom) > 10, 60.0), simulator.log()
    publisher = probe.node.create_publisher(WrenchStamped, '/simulator/wrench', 10)
    assert probe.spin_until(lambda: publisher.get_subscription_count() > 0, 60.0)
    msg = WrenchStamped()
    msg.header.frame_id = 'box'
    msg.wrench.force.x = 1e30
    publisher.publish(msg)
    assert probe.spin_until(lambda: 'rejected wrench' in simulator.log(), 10.0), simulator.log()
    assert '196.2 N' in simulator.log()
    msg.wrench.force.x = 0.0
    started = time.monotonic()
    for k in range(200):
        msg.wrench.force.z = -1.0 - 0.01 * k
        publisher.publish(msg)
        probe.spin_for(0.005)
    count = len(odom)
    assert probe.spin_until(lambda: len(odom) > count + 50, 10.0), simulator.log()
    elapsed = time.monotonic() - started
    assert simulator.alive(), simulator.log()
    position = odom[-1].pose.pose.position
    assert np.all(np.isfinite([position.x, position.y, position.z]))
    assert position.z == pytest.approx(0.05, abs=1e-3) and abs(position.x) < 1e-3   # at rest on its face
    lines = simulator.log().count('external wrench on')
    assert 1 <= lines <= elapsed / 2.0 + 1, simulator.log()
    assert simulator.stop() == 0, simulator.log()


# 2. Collision meshes that are not meshes, or leave their package: skipped with a URDFWarning naming link and file.

def urdf_with_mesh(filename):
    return (f'<robot name="r"><link name="a"><collision><geometry><mesh filename="{filename}"/></geometry></collision>'
            '</link></robot>')


def contact_points_of_mesh(folder, filename):
    urdf = folder / 'r.urdf'
    urdf.write_text(urdf_with_mesh(filename))
    return contact_points_from_urdf(str(urdf))


def write_stl(path, triangles):
    """A binary STL of (n, 3, 3) triangles: an 80-byte header, the count, 50 bytes a triangle."""
    record = np.zeros(len(triangles), dtype=[('normal', '<f4', 3), ('corners', '<f4', (3, 3)), ('attribute', '<u2')])
    record['corners'] = triangles
    with open(path, 'wb') as f:
        f.write(bytes(80) + np.uint32(len(triangles)).tobytes() + record.tobytes())


def sphere_triangles(count, radius):
    """About ``count`` triangles of a latitude-longitude sphere of ``radius`` about the origin (poles at z = -+r)."""
    k = int(np.sqrt(count / 2))
    theta, phi = np.meshgrid(np.linspace(0, np.pi, k + 1), np.linspace(0, 2 * np.pi, k + 1), indexing='ij')
    v = radius * np.stack([np.sin(theta) * np.cos(phi), np.sin(theta) * np.sin(phi), np.cos(theta)], axis=-1)
    a, b, c, d = v[:-1, :-1], v[1:, :-1], v[1:, 1:], v[:-1, 1:]
    return np.concatenate([np.stack([a, b, c], axis=-2).reshape(-1, 3, 3),
                           np.stack([a, c, d], axis=-2).reshape(-1, 3, 3)])


@pytest.mark.parametrize('filename', ['/etc/passwd', 'file:///proc/self/environ', 'garbage.stl', 'garbage.obj'])
def test_a_collision_file_that_is_not_a_mesh_is_skipped_with_a_warning(tmp_path, filename):
    """trimesh's NotImplementedError (and whatever else a reader raises) escaped and ended the simulator's start."""
    pytest.importorskip('trimesh')
    for name in ('garbage.stl', 'garbage.obj'):
        (tmp_path / name).write_bytes(b'solid x\n\x00\xff not a mesh \x01' * 40)
    with pytest.warns(URDFWarning, match=f"link 'a': collision mesh '{filename}' gives no contact points"):
        assert contact_points_of_mesh(tmp_path, filename) == []


def test_a_package_path_that_leaves_its_package_is_refused(tmp_path, monkeypatch):
    """package://pkg/../outside.stl named a real mesh beside the package and was read; package://pkg/ followed by
    enough ../ reached /etc/passwd. Both are refused, by the path alone, with the warning; a mesh inside the package
    (its path through a sub-folder's .., or slashes before the package's name) is still read."""
    trimesh = pytest.importorskip('trimesh')
    package = tmp_path / 'share' / 'pkg'
    (package / 'meshes').mkdir(parents=True)
    box = trimesh.creation.box(extents=(0.2, 0.2, 0.2))
    box.export(str(tmp_path / 'share' / 'outside.stl'))
    box.export(str(package / 'inside.stl'))
    monkeypatch.setenv('AMENT_PREFIX_PATH', str(tmp_path))
    monkeypatch.delenv('ROS_PACKAGE_PATH', raising=False)
    to_root = '../' * len(package.parts)
    for filename in ('package://pkg/../outside.stl', f'package://pkg/{to_root}etc/passwd', 'package://pkg//etc/passwd',
                     'package://../share/outside.stl'):
        with pytest.warns(URDFWarning, match=f"link 'a': collision mesh '{filename}' .*leaves its package"):
            assert contact_points_of_mesh(tmp_path, filename) == []
    assert len(contact_points_of_mesh(tmp_path, 'package://pkg/meshes/../inside.stl')) == 8   # the box's corners
    assert len(contact_points_of_mesh(tmp_path, 'package:///pkg/inside.stl')) == 8   # as TALOS writes it
    from robot_dynamics_ros.viewer.geometry import resolve_mesh   # the viewer's lookup: not found, drawn as missing
    environ = {'AMENT_PREFIX_PATH': str(tmp_path)}
    assert resolve_mesh('package://pkg/../outside.stl', str(tmp_path), environ) is None
    assert os.path.samefile(resolve_mesh('package://pkg/meshes/../inside.stl', str(tmp_path), environ),
                            package / 'inside.stl')


# 3. Large inputs: bounded or simplified before use, with a one-line note.

def test_a_large_collision_mesh_is_reduced_on_a_grid_with_a_note(tmp_path):
    """A 150k-triangle sphere (450k stored vertices; a 1M-triangle one cost 24.6 s and 707 MB at start, reading
    every vertex into its convex hull): the hull is taken over one vertex per cell of a 128-cell grid, said in one
    warning line. Every contact point is a vertex of the sphere, and the lowest is within a cell diagonal
    (2 r / 128 sqrt 3) of its pole."""
    pytest.importorskip('trimesh')
    from robot_dynamics_ros.model.collision import MESH_POINTS
    radius = 0.02
    write_stl(tmp_path / 'ball.stl', sphere_triangles(150_000, radius))
    with pytest.warns(URDFWarning) as caught:
        points = np.array([p.offset for p in contact_points_of_mesh(tmp_path, 'ball.stl')])
    notes = [str(w.message) for w in caught if 'is large' in str(w.message)]
    assert len(notes) == 1 and '\n' not in notes[0] and "'ball.stl'" in notes[0] and '128-cell grid' in notes[0]
    assert len(points) == MESH_POINTS
    np.testing.assert_allclose(np.linalg.norm(points, axis=1), radius, rtol=1e-6)   # float32 vertices
    assert -radius <= points[:, 2].min() <= -radius + 2 * radius / 128 * np.sqrt(3)


def test_a_collision_mesh_file_above_the_bound_is_skipped_unread(tmp_path, monkeypatch):
    pytest.importorskip('trimesh')
    from robot_dynamics_ros.model import meshes
    monkeypatch.setattr(meshes, 'MESH_FILE_BYTES', 1_000_000)
    write_stl(tmp_path / 'ball.stl', sphere_triangles(40_000, 0.02))   # 2 MB
    with pytest.warns(URDFWarning, match=r"'ball.stl' gives no contact points: the file has 2 MB, above the 1 MB"):
        assert contact_points_of_mesh(tmp_path, 'ball.stl') == []


def test_a_large_visual_mesh_is_drawn_with_at_most_view_triangles(tmp_path):
    """Every browser is sent every triangle (a 1M-triangle mesh with 20 browsers took 1.6 GB): a 150k-triangle
    sphere, scaled by 10, is drawn with at most VIEW_TRIANGLES, every vertex of the scaled sphere within the distance
    the one-line note says of a drawn one, each drawn vertex one of the sphere's."""
    pytest.importorskip('trimesh')
    pytest.importorskip('viser')
    from scipy.spatial import cKDTree
    from robot_dynamics_ros.viewer.geometry import VIEW_TRIANGLES, robot_geometry, shape_mesh
    radius = 0.02
    write_stl(tmp_path / 'ball.stl', sphere_triangles(150_000, radius))
    urdf = tmp_path / 'r.urdf'
    urdf.write_text('<robot name="r"><link name="a"><visual><geometry><mesh filename="ball.stl" scale="10 10 10"/>'
                    '</geometry></visual></link></robot>')
    shape, = robot_geometry(str(urdf), environ={}).shapes
    with pytest.warns(URDFWarning) as caught:
        mesh = shape_mesh(shape)
    assert 0 < len(mesh.faces) <= VIEW_TRIANGLES
    note, = [str(w.message) for w in caught]
    within = float(note.split('at most ')[1].split(' mm')[0]) / 1e3
    assert "link 'a'" in note and 'ball.stl' in note and '\n' not in note
    np.testing.assert_allclose(np.linalg.norm(mesh.vertices, axis=1), 10 * radius, rtol=1e-6)
    sphere = 10 * sphere_triangles(150_000, radius).astype(np.float32).reshape(-1, 3)
    moved, _ = cKDTree(mesh.vertices).query(sphere)
    assert moved.max() <= within * 1.005   # the note's 3 digits


def test_an_srdf_above_the_bound_is_refused_before_it_is_parsed(tmp_path):
    from robot_dynamics_ros import SRDFError, load_srdf
    from robot_dynamics_ros.model.srdf import SRDF_BYTES
    line = '<disable_collisions link1="trunk" link2="FL_hip" reason="Adjacent"/>\n'
    big = '<robot name="quadruped">' + line * (SRDF_BYTES // len(line) + 1) + '</robot>'
    path = tmp_path / 'big.srdf'
    path.write_text(big)
    for source in (str(path), big):
        with pytest.raises(SRDFError, match=r"has 5.0 MB, more than the 5 MB an SRDF may have"):
            load_srdf(source)
    assert_one_line_error(cli('bringup', '--urdf', QUADRUPED, '--srdf', str(path)), 'big.srdf', '5 MB')


# 4. An SRDF orientation that is no rotation: an error where the stance is read, one line and exit 2 at the CLI.

def zero_orientation_srdf(values):
    return ('<robot name="quadruped"><virtual_joint name="root_joint" type="floating" parent_frame="world" '
            f'child_link="trunk"/><group_state name="standing" group="all"><joint name="root_joint" value="{values}"/>'
            '</group_state></robot>')


def test_a_zero_quaternion_in_the_stance_is_an_error_naming_it(tmp_path):
    """A zero quaternion normalized to NaN and the simulator failed later (exit 1)."""
    from robot_dynamics_ros import SRDFError, load_srdf
    from robot_dynamics_ros.model.srdf import stance_configuration
    floating = load_urdf(QUADRUPED, root_joint='floating')
    with pytest.raises(SRDFError, match=r"'standing'.*'root_joint'.*quaternion \(qx qy qz qw\).*no orientation"):
        stance_configuration(floating, load_srdf(zero_orientation_srdf('0 0 0.3 0 0 0 0')))
    planar = load_urdf(QUADRUPED, root_joint='planar')
    with pytest.raises(SRDFError, match=r"'root_joint'.*\(cos, sin\).*no orientation"):
        stance_configuration(planar, load_srdf(zero_orientation_srdf('0 0.3 0 0').replace('floating', 'planar')))
    _, q, _ = stance_configuration(floating, load_srdf(zero_orientation_srdf('0 0 0.3 0 0 0 2')))
    assert q[:7] == pytest.approx([0, 0, 0.3, 0, 0, 0, 2])   # not unit, yet a rotation: the simulator normalizes it
    path = tmp_path / 'zero.srdf'
    path.write_text(zero_orientation_srdf('0 0 0.3 0 0 0 0'))
    assert_one_line_error(cli('bringup', '--urdf', QUADRUPED, '--srdf', str(path)), 'standing', 'quaternion')
