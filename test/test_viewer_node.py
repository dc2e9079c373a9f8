"""The viewer node's translation of messages into the scene, in this process over DDS (isolated domain): the floating
quadruped's links stand where our forward kinematics puts them at the odometry's base pose and the joint states'
angles, the ground's force on a foot is drawn from that foot along the force, and frames are drawn at most at
`rate` however fast joint states come."""
import os
import time

import numpy as np
import pytest

from conftest import ROOT
from view_helpers import free_port

rclpy = pytest.importorskip('rclpy')
pytest.importorskip('viser')
from geometry_msgs.msg import WrenchStamped  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402
from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from robot_dynamics_ros import load_urdf  # noqa: E402
from robot_dynamics_ros.algorithms.kinematics import frame_placements  # noqa: E402
from robot_dynamics_ros.spatial import quaternion_to_matrix  # noqa: E402
from ros_helpers import domain_id, release  # noqa: E402

QUADRUPED = os.path.join(ROOT, 'urdf', 'quadruped.urdf')
RATE = 5.0    # frames per second the viewer draws at most: below the ~15 states a second a loaded machine
              # (two test runs at once) still takes, so that the test exercises the limit there too
BURST = 10    # states published at once between spins


@pytest.fixture
def viewer():
    """(viewer node, a publisher node, executor) on a fresh context and domain."""
    from robot_dynamics_ros.nodes.viewer import ViewerNode
    rclpy.init(args=['--ros-args', '-p', f'urdf_file:={QUADRUPED}', '-p', 'root_joint:=floating', '-p',
                     f'port:={free_port()}', '-p', f'rate:={RATE}'], domain_id=domain_id(__name__))
    node = ViewerNode()
    source = rclpy.create_node('source')
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    executor.add_node(source)
    yield node, source, executor
    executor.shutdown()
    node.destroy_node()
    source.destroy_node()
    release(rclpy.get_default_context())


def spin(executor, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        executor.spin_once(timeout_sec=0.01)


def test_floating_base_pose_joint_angles_and_foot_force_are_drawn(viewer):
    node, source, executor = viewer
    model = load_urdf(QUADRUPED, root_joint='floating')
    states = source.create_publisher(JointState, 'joint_states', 10)
    odom = source.create_publisher(Odometry, '/viewer/odom', 10)
    force = source.create_publisher(WrenchStamped, '/simulator/contact/FL_calf', 10)
    rng = np.random.default_rng(5)
    q = model.random_configuration(rng)
    q[:3] = [0.3, -0.2, 0.4]
    message = Odometry()
    pose = message.pose.pose
    pose.position.x, pose.position.y, pose.position.z = q[:3]
    pose.orientation.x, pose.orientation.y, pose.orientation.z, pose.orientation.w = q[3:7]
    joints = JointState(name=list(model.joint_names), position=[float(q[i]) for i in model.joint_q_index])
    wrench = WrenchStamped()
    wrench.wrench.force.x, wrench.wrench.force.z = 5.0, 40.0
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and (node.odom is None or not node.forces):   # until the subscriptions match
        odom.publish(message)
        force.publish(wrench)
        spin(executor, 0.1)
    states.publish(joints)
    spin(executor, 0.5)   # a frame (every 1 / RATE s) with all three
    placements = frame_placements(model, q)
    for link in ('trunk', 'FL_calf', 'RR_thigh'):
        R, p = placements[link]
        frame = node.scene.frames[link]
        w, x, y, z = frame.wxyz
        np.testing.assert_allclose(frame.position, p, atol=1e-9, err_msg=link)
        np.testing.assert_allclose(quaternion_to_matrix([x, y, z, w]), R, atol=1e-9, err_msg=link)
    R, p = placements['FL_calf']
    start = p + R @ [0, 0, -0.2] - [0, 0, 0.02]   # the bottom of the foot sphere (radius 0.02 m, 0.2 m below)
    (segment,) = np.asarray(node.arrows.points)
    np.testing.assert_allclose(segment[0], start, atol=1e-6)   # viser keeps float32
    np.testing.assert_allclose(segment[1] - segment[0], node.force_scale * np.array([5.0, 0.0, 40.0]), atol=1e-6)


def test_frames_are_dropped_not_queued(viewer):
    node, source, executor = viewer
    states = source.create_publisher(JointState, 'joint_states', 10)
    names = list(load_urdf(QUADRUPED, root_joint='floating').joint_names)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and node.drawn == 0:   # until the subscription matches
        states.publish(JointState(name=names, position=[0.0] * len(names)))
        spin(executor, 0.05)
    drawn, received, published, start = node.drawn, node.received, 0, time.monotonic()
    while time.monotonic() < start + 2.0:   # hundreds of states a second, for 2 s, in bursts: a loaded machine
        for _ in range(BURST):              # runs this loop only tens of times a second (24 states/s seen)
            states.publish(JointState(name=names, position=[0.0] * len(names)))
        published += BURST
        spin(executor, 0.002)
    seconds = time.monotonic() - start
    assert published > 4 * RATE * seconds
    # more states were taken than frames may be drawn (the subscription keeps only the newest: the rest are dropped
    # before any callback), and at most `rate` frames a second were drawn
    assert node.received - received > RATE * seconds
    assert node.drawn - drawn <= RATE * seconds + 2
