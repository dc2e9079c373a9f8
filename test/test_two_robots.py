"""Two arms in one ROS graph, as launch/two_arms.launch.py starts them: each its own simulator and controller (node
processes over DDS) in its own namespace, with joint names prefixed (the launch files' `prefix`, applied to the
URDF by launch_support.py). Each gets a different reference and tracks its own; topics live under each
namespace and none at the root."""
import signal

import numpy as np
import yaml
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from ros_helpers import ros_domain, start  # noqa: F401  (fixtures)
from conftest import BUNDLED_URDF

from robot_dynamics_ros import load_urdf
from robot_dynamics_ros.nodes.launch_support import robot_description

STARTUP = 60.0
ARM = load_urdf(BUNDLED_URDF)
MIDDLE = (ARM.lower + ARM.upper) / 2
# Targets 0.2 rad apart: an arm that followed the other's reference would end 0.2 rad off its own.
OFFSETS = {'arm1': 0.1, 'arm2': -0.1}
TOLERANCE = 0.05   # rad
# s wall for both lockstep loops to reach their targets: they run as slowly as the machine needs; with the test
# suite running twice at once, 60 s left them still converging (0.09 and 0.07 rad off)
TRACKING = 300.0


def test_two_arms_in_two_namespaces_each_track_their_own_reference(ros_domain, start, tmp_path):
    _, probe = ros_domain
    states, nodes = {}, []
    for arm in OFFSETS:
        params = tmp_path / f'{arm}.yaml'   # as the launch files pass them: a URDF string, prefixed
        params.write_text(yaml.safe_dump({'/**': {'ros__parameters': {
            'robot_description': robot_description(BUNDLED_URDF, arm + '_'),
            'initial_positions': MIDDLE.tolist(), 'sync': 'lockstep', 'friction_compensation': True}}}))
        for name in ('simulator', 'computed_torque_controller'):
            nodes.append(start(name, extra_args=['--params-file', str(params), '-r', f'__ns:=/{arm}']))
        states[arm] = []
        probe.node.create_subscription(JointState, f'/{arm}/joint_states', states[arm].append, 100)
    assert probe.spin_until(lambda: all(states.values()), STARTUP)
    for arm, received in states.items():
        assert list(received[-1].name) == [f'{arm}_{name}' for name in ARM.joint_names]
    assert probe.node.count_publishers('/joint_states') == 0
    assert probe.node.count_subscribers('/effort_controller/commands') == 0

    for arm, offset in OFFSETS.items():
        publisher = probe.node.create_publisher(JointTrajectory, f'/{arm}/computed_torque_controller/joint_trajectory',
                                                10)
        assert probe.spin_until(lambda: publisher.get_subscription_count() == 1, STARTUP)
        point = JointTrajectoryPoint(positions=(MIDDLE + offset).tolist())
        point.time_from_start.sec = 1
        publisher.publish(JointTrajectory(joint_names=[f'{arm}_{name}' for name in ARM.joint_names], points=[point]))

    def error(arm):
        return np.abs(np.array(states[arm][-1].position) - (MIDDLE + OFFSETS[arm])).max()
    assert probe.spin_until(lambda: all(error(arm) < TOLERANCE for arm in OFFSETS), TRACKING), \
        {arm: error(arm) for arm in OFFSETS}
    for node in nodes:
        assert node.stop(signal.SIGINT) == 0
