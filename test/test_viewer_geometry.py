"""What the viewer draws: mesh files found as ROS tools find them, <collision> primitives where meshes are missing,
and every link's frame in the scene where our forward kinematics puts it."""
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import ROOT, example_robot_data
from view_helpers import PACKAGE, free_port, write_mesh_robot

from robot_dynamics_ros import load_urdf
from robot_dynamics_ros.algorithms.kinematics import frame_placements
from robot_dynamics_ros.spatial import quaternion_to_matrix
from robot_dynamics_ros.viewer.geometry import resolve_mesh, robot_geometry

pytest.importorskip('trimesh')
QUADRUPED = os.path.join(ROOT, 'urdf', 'quadruped.urdf')


@pytest.fixture
def robot(tmp_path):
    """(URDF path, folder holding the package) of the mesh robot."""
    return write_mesh_robot(str(tmp_path / 'src')), str(tmp_path / 'src')


def test_package_url_found_from_the_urdf_folder(robot):
    urdf, src = robot
    found = resolve_mesh(f'package://{PACKAGE}/meshes/base.stl', os.path.dirname(urdf), environ={})
    assert found == os.path.join(src, PACKAGE, 'meshes', 'base.stl')


def test_package_url_found_on_ros_package_path_and_ament_prefix_path(robot, tmp_path):
    urdf, src = robot
    elsewhere = str(tmp_path / 'elsewhere')   # a URDF folder outside the package: only the environment finds it
    url = f'package://{PACKAGE}/meshes/arm.stl'
    expected = os.path.join(src, PACKAGE, 'meshes', 'arm.stl')
    assert resolve_mesh(url, elsewhere, environ={}) is None
    assert resolve_mesh(url, elsewhere, environ={'ROS_PACKAGE_PATH': os.pathsep.join(['/nowhere', src])}) == expected
    assert resolve_mesh(url, elsewhere, environ={'ROS_PACKAGE_PATH': os.path.join(src, PACKAGE)}) == expected
    prefix = tmp_path / 'install'
    (prefix / 'share').mkdir(parents=True)
    os.symlink(os.path.join(src, PACKAGE), prefix / 'share' / PACKAGE)
    assert resolve_mesh(url, elsewhere, environ={'AMENT_PREFIX_PATH': str(prefix)}) == str(
        prefix / 'share' / PACKAGE / 'meshes' / 'arm.stl')


def test_relative_absolute_and_file_url_names(robot):
    urdf, src = robot
    mesh = os.path.join(src, PACKAGE, 'meshes', 'arm.stl')
    urdf_dir = os.path.dirname(urdf)
    assert os.path.samefile(resolve_mesh('../meshes/arm.stl', urdf_dir, environ={}), mesh)
    assert resolve_mesh(mesh, '/', environ={}) == mesh
    assert resolve_mesh('file://' + mesh, '/', environ={}) == mesh
    assert resolve_mesh('../meshes/none.stl', urdf_dir, environ={}) is None


def test_mesh_robot_draws_its_meshes_with_scale_and_material(robot):
    pytest.importorskip('viser')   # robot_geometry is the viewer's (the 'view' extra)
    urdf, _ = robot
    geometry = robot_geometry(urdf, environ={})
    assert geometry.missing == []
    assert [(s.link, s.kind) for s in geometry.shapes] == [('base', 'mesh'), ('arm', 'mesh')]
    arm = geometry.shapes[1]
    assert arm.size == (1.0, 1.0, 2.0) and arm.color == (0.9, 0.1, 0.1, 1.0)
    from robot_dynamics_ros.viewer.geometry import shape_mesh
    low, high = shape_mesh(arm).bounds   # the 0.2 m box scaled to 0.4 m along z, lifted by its origin 0.2 m
    np.testing.assert_allclose([low, high], [[-0.025, -0.025, 0.0], [0.025, 0.025, 0.4]], atol=1e-7)  # STL: float32


def test_missing_mesh_falls_back_to_the_links_collision_primitives_said_once():
    urdf = """<robot name="r">
      <link name="base"><visual><geometry><mesh filename="package://nowhere/base.stl"/></geometry></visual>
        <visual><geometry><box size="1 1 1"/></geometry></visual>
        <collision><origin xyz="0 0 0.1"/><geometry><cylinder radius="0.1" length="0.2"/></geometry></collision>
        <collision><geometry><mesh filename="package://nowhere/base_collision.stl"/></geometry></collision></link>
      <link name="tip"><visual><geometry><sphere radius="0.05"/></geometry></visual></link>
      <joint name="j" type="fixed"><parent link="base"/><child link="tip"/></joint>
    </robot>"""
    geometry = robot_geometry(urdf, environ={})
    assert geometry.missing == [('base', 'package://nowhere/base.stl')]
    # base: its one collision primitive replaces both visuals (the box visual too: half a link would mislead);
    # tip keeps its visual sphere
    assert [(s.link, s.kind, s.size) for s in geometry.shapes] == [('base', 'cylinder', (0.1, 0.2)),
                                                                    ('tip', 'sphere', (0.05,))]
    np.testing.assert_allclose(geometry.shapes[0].origin[:3, 3], [0, 0, 0.1])
    message = geometry.missing_message()
    assert '\n' not in message and 'package://nowhere/base.stl' in message and 'base' in message


def test_unreadable_mesh_is_an_error_naming_the_link(tmp_path):
    pytest.importorskip('viser')   # shape_mesh is the viewer's (the 'view' extra)
    from robot_dynamics_ros.errors import URDFError
    from robot_dynamics_ros.viewer.geometry import shape_mesh
    (tmp_path / 'broken.stl').write_text('solid nothing here\n')
    urdf = tmp_path / 'r.urdf'
    urdf.write_text('<robot name="r"><link name="base"><visual><geometry><mesh filename="broken.stl"/></geometry>'
                    '</visual></link></robot>')
    shape, = robot_geometry(str(urdf), environ={}).shapes
    with pytest.raises(URDFError, match="link 'base'.*broken.stl"):
        shape_mesh(shape)


def test_links_without_visuals_draw_their_collision_primitives():
    geometry = robot_geometry(QUADRUPED, environ={})
    kinds = sorted((s.link, s.kind) for s in geometry.shapes)
    assert geometry.missing == []
    assert kinds == sorted([('trunk', 'box')] + [(f'{leg}_calf', 'sphere') for leg in ('FL', 'FR', 'RL', 'RR')])


@pytest.fixture
def server():
    viser = pytest.importorskip('viser')
    server = viser.ViserServer(host='127.0.0.1', port=free_port(), verbose=False)
    yield server
    server.stop()


def assert_scene_matches_forward_kinematics(scene, model, q):
    placements = frame_placements(model, q)
    assert set(scene.frames) == set(model.frames)
    for link, (R, p) in placements.items():
        frame = scene.frames[link]
        w, x, y, z = frame.wxyz
        np.testing.assert_allclose(frame.position, p, atol=1e-12, err_msg=link)
        np.testing.assert_allclose(quaternion_to_matrix([x, y, z, w]), R, atol=1e-12, err_msg=link)


def test_each_link_frame_is_where_our_forward_kinematics_puts_it(server, robot):
    from robot_dynamics_ros.viewer.scene import RobotScene
    urdf, _ = robot
    model = load_urdf(urdf)
    scene = RobotScene(server, model, robot_geometry(urdf, environ={}), urdf=urdf)
    for angle in (0.0, 0.7, -1.1):
        scene.show(np.array([angle]))
        assert_scene_matches_forward_kinematics(scene, model, np.array([angle]))
        # by hand: the arm turns about y at 5 cm above the base
        c, s = np.cos(angle), np.sin(angle)
        np.testing.assert_allclose(scene.frames['arm'].position, [0, 0, 0.05], atol=1e-12)
        w, x, y, z = scene.frames['arm'].wxyz
        np.testing.assert_allclose(quaternion_to_matrix([x, y, z, w]), [[c, 0, s], [0, 1, 0], [-s, 0, c]], atol=1e-12)


def test_floating_quadruped_links_follow_the_base_pose(server):
    from robot_dynamics_ros.viewer.scene import RobotScene
    model = load_urdf(QUADRUPED, root_joint='floating')
    scene = RobotScene(server, model, robot_geometry(QUADRUPED, environ={}), urdf=QUADRUPED)
    rng = np.random.default_rng(3)
    for _ in range(3):
        q = model.random_configuration(rng)
        q[:3] = rng.uniform(-1, 1, 3)
        scene.show(q)
        assert_scene_matches_forward_kinematics(scene, model, q)
        # the legs have no shapes: bones reach from the trunk through each leg to its foot, 0.2 m below the knee
        ends = np.asarray(scene.skeleton.points)[:, 1]
        for leg in ('FL', 'FR', 'RL', 'RR'):
            R, p = frame_placements(model, q)[f'{leg}_calf']
            assert np.min(np.linalg.norm(ends - (p + R @ [0, 0, -0.2]), axis=1)) < 1e-6   # viser keeps float32
    assert len(scene.contacts) == 8 + 4   # the trunk box's corners and a sphere per foot, hidden until asked for
    assert not any(sphere.visible for sphere in scene.contacts)


def test_the_core_and_the_geometry_reader_load_neither_ros_nor_viser():
    code = ("import sys, robot_dynamics_ros, robot_dynamics_ros.algorithms, robot_dynamics_ros.simulation, "
            "robot_dynamics_ros.viewer.geometry; print(sorted({'rclpy', 'viser', 'trimesh'} & set(sys.modules)))")
    result = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == '[]'


def test_view_with_an_srdf_shows_its_stance_on_its_virtual_joint():
    """Go1 (example-robot-data) with its SRDF: a free-flyer root and the 'standing' group_state, base pose and joints,
    as Pinocchio's loadReferenceConfigurations reads them (joints matched by name); without it, fixed at mid-limits."""
    pin = pytest.importorskip('pinocchio')
    from robot_dynamics_ros.commands.view import posture
    urdf, srdf = (example_robot_data(f'go1_description/{kind}/go1.{kind}') for kind in ('urdf', 'srdf'))
    model, q = posture(urdf, srdf)
    oracle = pin.buildModelFromUrdf(urdf, pin.JointModelFreeFlyer())
    pin.loadReferenceConfigurations(oracle, srdf)
    standing = oracle.referenceConfigurations['standing']
    assert not model.fixed_base
    np.testing.assert_allclose(q[:7], standing[:7], atol=1e-12)
    for k, name in enumerate(model.joint_names):
        assert q[model.joint_q_index[k]] == pytest.approx(standing[oracle.joints[oracle.getJointId(name)].idx_q])
    fixed, middle = posture(urdf)
    assert fixed.fixed_base
    np.testing.assert_array_equal(middle, fixed.middle_of_limits())
