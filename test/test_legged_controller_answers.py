"""The legged controller node answers a state from that state's inputs alone, in process: where the simulator
stamps joint states and odometry alike, a joint state is not paired with a copy of the last state's odometry (one
the simulator republished while it waited for its first command) but waits for its own."""
import numpy as np
import pytest

from ros_helpers import domain_id, in_process_ros

from nav_msgs.msg import Odometry  # noqa: E402  (ros_helpers skips the module without rclpy)
from sensor_msgs.msg import JointState  # noqa: E402

from robot_dynamics_ros import load_urdf  # noqa: E402
from robot_dynamics_ros.model.collision import contact_points_from_urdf  # noqa: E402
from robot_dynamics_ros.nodes.legged_controller import LeggedControllerNode  # noqa: E402
from robot_dynamics_ros.nodes.messages import answered_state  # noqa: E402
from robot_dynamics_ros.resources import bundled_urdf, legged_parameter_files  # noqa: E402
from robot_dynamics_ros.simulation.ground_contact import Ground  # noqa: E402
from robot_dynamics_ros.simulation.simulator import Simulator  # noqa: E402

pytest.importorskip('clarabel')
URDF = bundled_urdf('quadruped.urdf')
MODEL = load_urdf(URDF, root_joint='floating')
STAND = np.array([0.0, 0.6, -1.2] * 4)     # config/quadruped.yaml


class Commands:
    """Stands in for the command publisher: each command's data and the state it names."""

    def __init__(self):
        self.sent = []

    def publish(self, msg):
        self.sent.append((answered_state(msg), np.array(msg.data)))


@pytest.fixture
def node_pair():
    """Two legged controller nodes of the bundled quadruped, their commands recorded."""
    args = ['--ros-args', '-p', f'urdf_file:={URDF}', '-p', 'state_timeout:=1000.0'] + \
        [arg for file in legged_parameter_files(URDF) for arg in ('--params-file', file)]
    with in_process_ros(args, domain_id(__name__)):
        nodes = [LeggedControllerNode(), LeggedControllerNode()]
        for node in nodes:
            node.answers.publisher = Commands()
        yield nodes
        for node in nodes:
            node.trajectories.shutdown()
            node.destroy_node()


def messages(k, state):
    """The joint state and odometry of the k-th step (stamp k ms) at the simulator's state (q, qd)."""
    q, qd = state
    stamp = (0, k * 1_000_000)
    joints = JointState(name=list(MODEL.joint_names), position=list(q[7:]), velocity=list(qd[6:]))
    odometry = Odometry()
    pose, twist = odometry.pose.pose, odometry.twist.twist
    pose.position.x, pose.position.y, pose.position.z = q[:3]
    pose.orientation.x, pose.orientation.y, pose.orientation.z, pose.orientation.w = q[3:7]
    twist.linear.x, twist.linear.y, twist.linear.z = qd[:3]
    twist.angular.x, twist.angular.y, twist.angular.z = qd[3:6]
    for msg in (joints, odometry):
        msg.header.stamp.sec, msg.header.stamp.nanosec = stamp
    return joints, odometry


def test_a_joint_state_waits_for_its_own_odometry_not_a_copy_of_the_last(node_pair):
    sim = Simulator(MODEL, 1e-3, initial_positions=STAND, ground=Ground(0.0, 0.8),
                    contact_points=contact_points_from_urdf(URDF))
    first = (sim.q.copy(), sim.qd.copy())
    sim.step()   # (no command: the trunk starts to sag, so the next state's odometry differs from the first's)
    second = (sim.q.copy(), sim.qd.copy())
    (joints_0, odometry_0), (joints_1, odometry_1) = messages(0, first), messages(1, second)
    racing, clean = node_pair
    racing._on_joint_state(joints_0)
    racing._on_odometry(odometry_0)
    racing._on_odometry(odometry_0)   # the state republished: its copy arrives after the answer
    racing._on_joint_state(joints_1)  # the next state's joint state, before its odometry
    assert [stamp for stamp, _ in racing.answers.publisher.sent] == [0]
    racing._on_odometry(odometry_1)
    for callback, msg in ((clean._on_joint_state, joints_0), (clean._on_odometry, odometry_0),
                          (clean._on_joint_state, joints_1), (clean._on_odometry, odometry_1)):
        callback(msg)
    sent, expected = racing.answers.publisher.sent, clean.answers.publisher.sent
    assert [stamp for stamp, _ in sent] == [stamp for stamp, _ in expected] == [0, 1_000_000]
    np.testing.assert_array_equal(sent[1][1], expected[1][1])   # bit-identical: the same inputs alone
    assert not np.array_equal(odometry_0.pose.pose.position.z, odometry_1.pose.pose.position.z)
