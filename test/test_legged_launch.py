"""launch_testing test of launch/legged.launch.py (real ROS installs; skipped where launch_testing is missing): the
bundled quadruped stands under the legged controller for 2 s of sim time, and every process exits 0 when the
launch is shut down. test/test_legged_loop.py runs the same nodes over DDS without the launch stack."""
import pytest

launch_testing = pytest.importorskip('launch_testing')

import os  # noqa: E402
import time  # noqa: E402
import unittest  # noqa: E402

import launch  # noqa: E402
import launch_testing.actions  # noqa: E402
import launch_testing.asserts  # noqa: E402
import rclpy  # noqa: E402
from launch.actions import IncludeLaunchDescription  # noqa: E402
from launch.launch_description_sources import PythonLaunchDescriptionSource  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402

from robot_dynamics_ros.processes import isolated_ros_env  # noqa: E402
from robot_dynamics_ros.resources import share_directory  # noqa: E402
from ros_helpers import domain_id  # noqa: E402

os.environ.update(isolated_ros_env(domain_id(__name__), base={}))   # one no concurrent run uses

TIME_LIMIT = 120.0    # s wall: start-up (compiling the kernels in a fresh install) and 2 s of sim time
TOLERANCE = 2e-3      # m: a robot that is not held sinks by centimetres within a second


def standing_height():
    """The trunk height of config/quadruped.yaml's posture with the feet on the ground: where it spawns."""
    import yaml
    from robot_dynamics_ros import load_urdf
    from robot_dynamics_ros.ground_contact import Ground
    from robot_dynamics_ros.model.collision import contact_points_from_urdf
    from robot_dynamics_ros.resources import bundled_config, bundled_urdf
    from robot_dynamics_ros.simulation import Simulator
    with open(bundled_config('quadruped.yaml')) as f:
        posture = yaml.safe_load(f)['simulator']['ros__parameters']['initial_positions']
    urdf = bundled_urdf('quadruped.urdf')
    return Simulator(load_urdf(urdf, root_joint='floating'), 1e-3, initial_positions=posture, ground=Ground(),
                     contact_points=contact_points_from_urdf(urdf)).q[2]


@pytest.mark.launch_test
def generate_test_description():
    legged = os.path.join(share_directory(), 'launch', 'legged.launch.py')
    return launch.LaunchDescription([
        IncludeLaunchDescription(PythonLaunchDescriptionSource(legged)),
        launch_testing.actions.ReadyToTest(),
    ])


class TestLegged(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        rclpy.init()
        cls.node = rclpy.create_node('legged_launch_probe')

    @classmethod
    def tearDownClass(cls):
        cls.node.destroy_node()
        rclpy.shutdown()

    def spin_until(self, condition, timeout):
        deadline = time.monotonic() + timeout
        while not condition() and time.monotonic() < deadline:
            rclpy.spin_once(self.node, timeout_sec=0.1)
        return condition()

    def test_the_quadruped_stands(self):
        odom = []
        self.node.create_subscription(Odometry, 'simulator/odom', odom.append, 100)

        def sim_time():
            return odom[-1].header.stamp.sec + 1e-9 * odom[-1].header.stamp.nanosec if odom else 0.0
        self.assertTrue(self.spin_until(lambda: sim_time() > 2.0, TIME_LIMIT), 'the simulation did not run 2 s')
        self.assertAlmostEqual(odom[-1].pose.pose.position.z, standing_height(), delta=TOLERANCE)


@launch_testing.post_shutdown_test()
class TestExitCodes(unittest.TestCase):

    def test_every_process_exits_0(self, proc_info):
        launch_testing.asserts.assertExitCodes(proc_info)
