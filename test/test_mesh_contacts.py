"""Contact points from collision meshes (model/collision.py, model/meshes.py): convex-hull vertices of meshes we
make with known geometry, the files found as ROS finds them (package://, relative paths), and Solo12's mesh feet
against Pinocchio's own reading of the same meshes (coal)."""
import os

import numpy as np
import pytest

from conftest import example_robot_data

from oracle import standing_height
from robot_dynamics_ros import URDFWarning, frame_placements, load_srdf, load_urdf
from robot_dynamics_ros.simulation.ground_contact import Ground
from robot_dynamics_ros.model.collision import MESH_POINTS, contact_points_from_urdf
from robot_dynamics_ros.model.srdf import stance_configuration
from robot_dynamics_ros.simulation.simulator import Simulator

trimesh = pytest.importorskip('trimesh')
SOLO12 = ('solo_description/robots/solo12.urdf', 'solo_description/srdf/solo.srdf')
pytest.importorskip('clarabel')


def urdf_with_mesh(filename, origin='', scale=''):
    return (f'<robot name="r"><link name="a"><collision>{origin}<geometry><mesh filename="{filename}" {scale}/>'
            '</geometry></collision></link></robot>')


def write_box(path, size=(0.2, 0.4, 0.6)):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    trimesh.creation.box(extents=size).export(path)


def offsets(points):
    return np.array([p.offset for p in points])


def test_a_box_mesh_gives_its_eight_corners_scaled_and_placed(tmp_path):
    write_box(str(tmp_path / 'box.stl'))
    urdf = tmp_path / 'r.urdf'
    urdf.write_text(urdf_with_mesh('box.stl', '<origin xyz="0 0 1" rpy="0 0 1.5707963267948966"/>', 'scale="2 1 1"'))
    corners = offsets(contact_points_from_urdf(str(urdf)))
    assert corners.shape == (8, 3)
    # scaled to 0.4 x 0.4 x 0.6, then turned by 90 degrees about z and raised by 1
    np.testing.assert_allclose(np.sort(corners, axis=0)[[0, -1]], [[-0.2, -0.2, 0.7], [0.2, 0.2, 1.3]], atol=1e-12)


def test_a_round_mesh_keeps_at_most_mesh_points_of_its_hull_the_lowest_first(tmp_path):
    """Farthest-point sampling of a ball's vertices: when the N-th point is picked, N - 1 points leave no vertex
    farther than its distance d to them, so N - 1 caps of chord radius d (area pi d^2 each, Archimedes) cover the
    sphere up to one mesh edge: the points are at least 2 r / sqrt(N - 1) minus an edge apart."""
    radius = 0.02
    ball = trimesh.creation.icosphere(subdivisions=4, radius=radius)
    ball.export(str(tmp_path / 'ball.stl'))
    urdf = tmp_path / 'r.urdf'
    urdf.write_text(urdf_with_mesh('ball.stl'))
    points = offsets(contact_points_from_urdf(str(urdf)))
    assert len(points) == MESH_POINTS
    np.testing.assert_allclose(np.linalg.norm(points, axis=1), radius, rtol=1e-6)   # vertices of the sphere
    assert points[0][2] == pytest.approx(-radius, rel=1e-6)   # the icosphere's pole: its lowest vertex
    spread = np.linalg.norm(points[:, None] - points[None], axis=2) + np.eye(len(points))
    assert spread.min() >= 2 * radius / np.sqrt(MESH_POINTS - 1) - ball.edges_unique_length.max()


@pytest.mark.parametrize('where', ['AMENT_PREFIX_PATH', 'ROS_PACKAGE_PATH', 'ROS_PACKAGE_PATH (the package)',
                                   'an ancestor folder'])
def test_package_paths_are_found_as_ros_finds_them(tmp_path, monkeypatch, where):
    monkeypatch.delenv('AMENT_PREFIX_PATH', raising=False)
    monkeypatch.delenv('ROS_PACKAGE_PATH', raising=False)
    urdf = tmp_path / 'elsewhere' / 'r.urdf'
    if where == 'AMENT_PREFIX_PATH':
        write_box(str(tmp_path / 'install' / 'share' / 'my_robot' / 'meshes' / 'box.stl'))
        monkeypatch.setenv('AMENT_PREFIX_PATH', os.pathsep.join(['/nonexistent', str(tmp_path / 'install')]))
    elif where == 'ROS_PACKAGE_PATH':
        write_box(str(tmp_path / 'src' / 'my_robot' / 'meshes' / 'box.stl'))
        monkeypatch.setenv('ROS_PACKAGE_PATH', str(tmp_path / 'src'))
    elif where == 'ROS_PACKAGE_PATH (the package)':
        write_box(str(tmp_path / 'src' / 'my_robot' / 'meshes' / 'box.stl'))
        monkeypatch.setenv('ROS_PACKAGE_PATH', str(tmp_path / 'src' / 'my_robot'))
    else:
        write_box(str(tmp_path / 'my_robot' / 'meshes' / 'box.stl'))
        urdf = tmp_path / 'my_robot' / 'urdf' / 'r.urdf'
    urdf.parent.mkdir(parents=True, exist_ok=True)
    urdf.write_text(urdf_with_mesh('package://my_robot/meshes/box.stl'))
    assert len(contact_points_from_urdf(str(urdf))) == 8


def test_a_mesh_that_is_not_found_is_named_in_a_warning_and_gives_no_points(tmp_path):
    urdf = tmp_path / 'r.urdf'
    urdf.write_text(urdf_with_mesh('package://nowhere/feet.stl'))
    with pytest.warns(URDFWarning, match="link 'a'.*'package://nowhere/feet.stl'.*not found"):
        assert contact_points_from_urdf(str(urdf)) == []


def test_solo12_spawns_on_its_mesh_feet_where_pinocchio_puts_them():
    """Solo12's collision geometry is STL meshes only. Upright in its SRDF 'standing' posture, the simulator spawns it
    with its lowest contact point on the ground; Pinocchio (its geometry model reads the same meshes with coal) puts
    the lowest foot vertex at the base height h. Our points are hull vertices, so we spawn at most h (never
    through the ground), and lower only by as much as the sampled points leave a foot vertex uncovered."""
    urdf, srdf_path = (example_robot_data(path) for path in SOLO12)
    model = load_urdf(urdf, root_joint='floating')
    srdf = load_srdf(srdf_path)
    _, q, _ = stance_configuration(model, srdf)
    points = contact_points_from_urdf(urdf)
    spawn = Simulator(model, 1e-3, initial_positions=q[model.joint_q_index], ground=Ground(0.0, 0.8),
                      contact_points=points).q[2]
    height, feet_vertices = standing_height(urdf, srdf_path, 'standing', [SHARE()], srdf.feet)
    assert height - uncovered(model, q, points, srdf.feet, feet_vertices) <= spawn <= height + 1e-9


def SHARE():
    """The folder holding example-robot-data/ (package:// paths of its URDFs)."""
    return os.path.dirname(os.path.dirname(os.path.normpath(example_robot_data())))


def uncovered(model, q, points, feet, vertices):
    """The farthest any of ``vertices`` (world, (k, 3) arrays) lies from our contact points on the ``feet`` at q with
    the base at the origin: how much lower than ours the true lowest point can be."""
    q = q.copy()
    q[:7] = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]
    placements = frame_placements(model, q)
    ours = np.array([placements[p.link].R @ p.offset + placements[p.link].p for p in points if p.link in feet])
    assert len(ours), f"no contact points on {feet}"
    every = np.concatenate(vertices)
    return float(np.linalg.norm(every[:, None] - ours[None], axis=2).min(axis=1).max())
