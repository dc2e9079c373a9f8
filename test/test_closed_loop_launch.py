"""launch_testing test of launch/closed_loop.launch.py (real ROS installs; skipped where launch_testing is
missing): the loop starts, joint states arrive, the tracking error stays below a bound, and every process
exits 0 when the launch is shut down."""
import pytest

launch_testing = pytest.importorskip('launch_testing')

import os  # noqa: E402
import unittest  # noqa: E402

import launch  # noqa: E402
import launch_testing.actions  # noqa: E402
import launch_testing.asserts  # noqa: E402
import numpy as np  # noqa: E402
from launch.actions import IncludeLaunchDescription  # noqa: E402
from launch.launch_description_sources import PythonLaunchDescriptionSource  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

import ros_helpers  # noqa: E402
from robot_dynamics_ros.resources import share_directory  # noqa: E402

# This module's own ROS domain, localhost-only, set for the launched processes by the launch description.
DOMAIN = ros_helpers.launch_test_domain(__name__)

TIME_LIMIT = 90.0      # s wall for joint states and enough controller updates
UPDATES = 1000         # controller updates the bound is checked over (1 s of sim time at 1 kHz)
MAX_ERROR = 0.35       # rad; the bundled loop stays within ~0.17 rad (friction is not in the model), an
                       # unstable or unconnected loop goes far beyond


@pytest.mark.launch_test
def generate_test_description():
    closed_loop = os.path.join(share_directory(), 'launch', 'closed_loop.launch.py')
    return launch.LaunchDescription([
        *ros_helpers.domain_environment(DOMAIN),
        IncludeLaunchDescription(PythonLaunchDescriptionSource(closed_loop),
                                 # lockstep: the tracking error does not depend on the machine's load
                                 launch_arguments={'use_sim_time': 'true', 'sync': 'lockstep'}.items()),
        launch_testing.actions.ReadyToTest(),
    ])


class TestClosedLoop(ros_helpers.LaunchProbe):
    domain = DOMAIN

    def test_joint_states_arrive_and_tracking_error_stays_bounded(self):
        states, errors = [], []
        self.node.create_subscription(JointState, 'joint_states', states.append, 10)
        self.node.create_subscription(JointState, 'computed_torque_controller/tracking_error', errors.append, 100)
        self.assertTrue(self.spin_until(lambda: states, TIME_LIMIT), 'no joint states')
        self.assertTrue(self.spin_until(lambda: len(errors) >= UPDATES, TIME_LIMIT),
                        f'only {len(errors)} controller updates')
        error = np.array([e.position for e in errors[-UPDATES:]])
        self.assertTrue(np.all(np.isfinite(error)))
        self.assertLess(np.abs(error).max(), MAX_ERROR)
        positions = np.array([s.position for s in states])
        self.assertTrue(np.all(np.isfinite(positions)))


@launch_testing.post_shutdown_test()
class TestExitCodes(unittest.TestCase):

    def test_every_process_exits_0(self, proc_info):
        launch_testing.asserts.assertExitCodes(proc_info)
