"""The ``legged_controller`` node as a process over DDS (isolated domain): given a joint state and odometry it
commands finite efforts (those of legged_controller.StandingController at that state), and bad messages do not
kill it."""
import numpy as np
import pytest

pytest.importorskip('clarabel')
from ros_helpers import ros_domain, start  # noqa: E402,F401  (fixtures; skips without rclpy)
from conftest import ROOT  # noqa: E402
from test_legged_controller import MU, SIM_DT, STAND  # noqa: E402
from robot_dynamics_ros.simulation.ground_contact import Ground  # noqa: E402
from robot_dynamics_ros.control.standing import StandingController  # noqa: E402
from robot_dynamics_ros.simulation.simulator import Simulator  # noqa: E402

from nav_msgs.msg import Odometry  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402
from builtin_interfaces.msg import Duration  # noqa: E402


URDF = f'{ROOT}/urdf/quadruped.urdf'
STARTUP = 30.0   # s for a node to come up on a loaded machine


def test_the_node_commands_finite_efforts_and_survives_bad_messages(quadruped, ros_domain, start):  # noqa: F811
    model, points = quadruped
    _, probe = ros_domain
    commands = []
    probe.node.create_subscription(Float64MultiArray, 'effort_controller/commands',
                                   lambda msg: commands.append(np.array(msg.data)), 100)
    states = probe.node.create_publisher(JointState, 'joint_states', 10)
    odometry = probe.node.create_publisher(Odometry, 'odom', 10)
    node = start('legged_controller', params=[('urdf_file', URDF), ('state_timeout', 1000.0),
                                              ('friction', MU), ('max_trajectory_points', 50)])
    spawn = Simulator(model, SIM_DT, initial_positions=STAND, ground=Ground(0.0, MU), contact_points=points).q
    joints = JointState(name=list(model.joint_names), position=STAND.tolist(), velocity=[0.0] * 12)
    odom = Odometry()
    odom.pose.pose.position.z = float(spawn[2])
    odom.pose.pose.orientation.w = 1.0

    def publish_until(condition):
        def done():
            states.publish(joints)
            odometry.publish(odom)
            probe.spin_for(0.05)
            return condition()
        return probe.spin_until(done, STARTUP)

    assert publish_until(lambda: len(commands) > 0), node.log()
    assert node.wait_for_log('standing:', 5.0), node.log()
    good = commands[-1]
    assert good.shape == (12,) and np.all(np.isfinite(good))
    # Standing still at the stand: the thighs and knees carry the weight, the efforts are those of a controller
    # that holds the robot (the same as the core's at that state).
    expected = StandingController(model, points, 0.0, MU).update(spawn, np.zeros(model.nv))
    np.testing.assert_allclose(good, expected, atol=1e-3 * np.abs(expected).max())

    bad_joints = [JointState(name=list(model.joint_names), position=STAND[:6].tolist(), velocity=[0.0] * 6),
                  JointState(name=list(model.joint_names), position=[np.nan] + STAND[1:].tolist(),
                             velocity=[0.0] * 12)]
    bad_odom = Odometry()
    bad_odom.pose.pose.position.z = np.nan
    bad_odom.pose.pose.orientation.w = 1.0
    for msg in bad_joints:
        states.publish(msg)
        probe.spin_for(0.2)
    odometry.publish(bad_odom)
    probe.spin_for(0.2)
    assert node.alive(), node.log()
    assert node.wait_for_log('rejected joint state', 5.0) and node.wait_for_log('rejected odometry', 5.0), node.log()
    assert all(np.all(np.isfinite(c)) and c.shape == (12,) for c in commands)
    count = len(commands)
    assert publish_until(lambda: len(commands) > count + 5), node.log()   # good messages: commanding again

    trajectories = probe.node.create_publisher(JointTrajectory, 'legged_controller/joint_trajectory', 10)
    squat = JointTrajectory(joint_names=list(model.joint_names))
    squat.points = [JointTrajectoryPoint(positions=[0.0, 0.9, -1.8] * 4, time_from_start=Duration(sec=1))]
    unknown = JointTrajectory(joint_names=['tail'] + list(model.joint_names)[1:], points=squat.points)
    # Refused as the computed-torque controller refuses them: too long, or far beyond the joint limits.
    long = JointTrajectory(joint_names=list(model.joint_names), points=[
        JointTrajectoryPoint(positions=STAND.tolist(), time_from_start=Duration(sec=k + 1)) for k in range(51)])
    beyond = JointTrajectory(joint_names=list(model.joint_names), points=[
        JointTrajectoryPoint(positions=[0.0, 0.6, -1.2 - 10.0] * 4, time_from_start=Duration(sec=1))])
    for msg, line in ((unknown, 'rejected joint trajectory'),
                      (long, 'rejected joint trajectory: 51 points, more than max_trajectory_points 50'),
                      (beyond, 'rejected joint trajectory: positions beyond the joint limits'),
                      (squat, 'following a trajectory of 1 points')):
        assert probe.spin_until(lambda: (trajectories.publish(msg), probe.spin_for(0.1),
                                         line in node.log())[-1], STARTUP), node.log()
    assert node.alive(), node.log()
    assert node.stop() == 0, node.log()
