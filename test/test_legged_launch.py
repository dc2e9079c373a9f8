"""launch_testing test of launch/legged.launch.py (real ROS installs; skipped where launch_testing is missing): the
bundled quadruped stands under the legged controller for 2 s of sim time, and every process exits 0 when the
launch is shut down. test/test_legged_loop.py runs the same nodes over DDS without the launch stack."""
import pytest

launch_testing = pytest.importorskip('launch_testing')
pytest.importorskip('clarabel')   # the legged controller's contact forces (robot_dynamics_ros[legged])

import os  # noqa: E402
import unittest  # noqa: E402

import launch  # noqa: E402
import launch_testing.actions  # noqa: E402
import launch_testing.asserts  # noqa: E402
from launch.actions import IncludeLaunchDescription  # noqa: E402
from launch.launch_description_sources import PythonLaunchDescriptionSource  # noqa: E402
from nav_msgs.msg import Odometry  # noqa: E402

import ros_helpers  # noqa: E402
from robot_dynamics_ros.resources import share_directory  # noqa: E402

# This module's own ROS domain, localhost-only, set for the launched processes by the launch description.
DOMAIN = ros_helpers.launch_test_domain(__name__)

TIME_LIMIT = 120.0    # s wall: start-up (compiling the kernels in a fresh install) and 2 s of sim time
TOLERANCE = 2e-3      # m: a robot that is not held sinks by centimetres within a second


def standing_height():
    """The trunk height of config/quadruped.yaml's posture with the feet on the ground: where it spawns."""
    import yaml
    from robot_dynamics_ros import load_urdf
    from robot_dynamics_ros.simulation.ground_contact import Ground
    from robot_dynamics_ros.model.collision import contact_points_from_urdf
    from robot_dynamics_ros.resources import bundled_config, bundled_urdf
    from robot_dynamics_ros.simulation.simulator import Simulator
    with open(bundled_config('quadruped.yaml')) as f:
        posture = yaml.safe_load(f)['simulator']['ros__parameters']['initial_positions']
    urdf = bundled_urdf('quadruped.urdf')
    return Simulator(load_urdf(urdf, root_joint='floating'), 1e-3, initial_positions=posture, ground=Ground(),
                     contact_points=contact_points_from_urdf(urdf)).q[2]


@pytest.mark.launch_test
def generate_test_description():
    legged = os.path.join(share_directory(), 'launch', 'legged.launch.py')
    return launch.LaunchDescription([
        *ros_helpers.domain_environment(DOMAIN),
        IncludeLaunchDescription(PythonLaunchDescriptionSource(legged)),
        launch_testing.actions.ReadyToTest(),
    ])


class TestLegged(ros_helpers.LaunchProbe):
    domain = DOMAIN

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
