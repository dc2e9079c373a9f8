"""Conformance with ros2_control's topic-based hardware interface (joint_state_topic_hardware_interface/
JointStateTopicSystem, ros-controls/topic_based_hardware_interfaces), over DDS.

The probe plays that interface as its source does it, configured from the package's own
config/ros2_control xacro: it reads the simulator's sensor_msgs/JointState with SensorDataQoS and, on each
controller-manager update, publishes a JointState naming every joint, stamped, with only the fields of the
exported command interfaces, on a depth-1 reliable publisher, and skips the update while the commanded
positions match the measured ones within `trigger_joint_command_threshold` (1e-5 unless the block sets it).
"""
import os
import signal
import time

import numpy as np
import pytest
import yaml
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import JointState

from ros_helpers import ros_domain, start  # noqa: F401  (fixtures)
from conftest import BUNDLED_URDF, ROOT

from robot_dynamics_ros import crba, gravity_torques, load_urdf
from robot_dynamics_ros.simulation.simulator import Simulator

xacro = pytest.importorskip('xacro')

CONFIG = os.path.join(ROOT, 'config', 'arm7.yaml')
ROS2_CONTROL = os.path.join(ROOT, 'config', 'ros2_control')
MODEL = load_urdf(BUNDLED_URDF)
with open(CONFIG) as f:
    START = np.array(yaml.safe_load(f)['simulator']['ros__parameters']['initial_positions'])
with open(os.path.join(ROS2_CONTROL, 'arm7_controllers.yaml')) as f:
    UPDATE_RATE = yaml.safe_load(f)['controller_manager']['ros__parameters']['update_rate']
TIME_LIMIT = 60.0   # s wall
STARTUP = 30.0


def hardware_block(command_interface):
    """(joints [(name, [command interfaces])], hardware parameters) of the xacro's <ros2_control> block."""
    document = xacro.process_file(os.path.join(ROS2_CONTROL, 'arm7.ros2_control.urdf.xacro'),
                                  mappings={'urdf_file': BUNDLED_URDF, 'command_interface': command_interface})
    block = document.getElementsByTagName('ros2_control')[0]
    hardware = block.getElementsByTagName('hardware')[0]
    plugin = hardware.getElementsByTagName('plugin')[0].firstChild.data.strip()
    assert plugin == 'joint_state_topic_hardware_interface/JointStateTopicSystem'
    parameters = {p.getAttribute('name'): p.firstChild.data.strip() for p in hardware.getElementsByTagName('param')}
    joints = [(joint.getAttribute('name'), [c.getAttribute('name') for c in joint.getElementsByTagName('command_interface')])
              for joint in block.getElementsByTagName('joint')]
    return joints, parameters


class TopicHardware:
    """JointStateTopicSystem's read() and write(), with `command` standing in for the controllers' output."""

    def __init__(self, probe, command_interface):
        self.joints, parameters = hardware_block(command_interface)
        self.names = [name for name, _ in self.joints]
        self.threshold = float(parameters.get('trigger_joint_command_threshold', 1e-5))
        self.command = {'position': np.zeros(len(self.names)), 'velocity': np.zeros(len(self.names)),
                        'effort': np.zeros(len(self.names))}
        self.state = None          # the latest JointState from the simulator
        self.sent = []
        self.publisher = probe.node.create_publisher(JointState, parameters['joint_commands_topic'], 1)
        probe.node.create_subscription(JointState, parameters['joint_states_topic'], self._on_state,
                                       qos_profile_sensor_data)
        self.probe = probe

    def _on_state(self, msg):
        self.state = msg

    def position(self):
        index = [list(self.state.name).index(name) for name in self.names]
        return np.array(self.state.position)[index], np.array(self.state.velocity)[index]

    def write(self):
        if self.state is None:
            return
        q, _ = self.position()
        if np.sum(np.abs(q - self.command['position'])) <= self.threshold:
            return
        msg = JointState()
        msg.header.stamp = self.probe.node.get_clock().now().to_msg()
        for i, (name, interfaces) in enumerate(self.joints):
            msg.name.append(name)
            for interface in interfaces:
                getattr(msg, interface).append(float(self.command[interface][i]))
        self.publisher.publish(msg)
        self.sent.append(msg)

    def run(self, until, controller=None, timeout=TIME_LIMIT):
        """Update at the controller manager's rate until until() holds (True) or the timeout (False)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.state is not None:
                if until():
                    return True
                if controller is not None:
                    controller(*self.position())
            self.write()
            self.probe.spin_for(1.0 / UPDATE_RATE)
        return False


def start_simulator(start, extra=()):
    return start('simulator', params=[('urdf_file', BUNDLED_URDF), ('apply_friction', 'false'), *extra],
                 extra_args=['--params-file', CONFIG, '-r', 'joint_states:=/simulator/joint_states'])


def test_position_interface_reaches_targets_ignores_nan_and_holds(ros_domain, start):
    _, probe = ros_domain
    hardware = TopicHardware(probe, 'position')
    assert all(interfaces == ['position'] for _, interfaces in hardware.joints)
    sim = start_simulator(start, extra=[('on_command_timeout', 'zero_effort')])
    assert probe.spin_until(lambda: hardware.state is not None, STARTUP), sim.log()

    # ros2_control starts position commands where the robot is; the trajectory controller then moves them.
    target = START + 0.2
    hardware.command['position'] = target.copy()
    rest = target   # the drive holds it against gravity: no sag
    assert hardware.run(lambda: np.max(np.abs(hardware.position()[0] - rest)) < 1e-3), \
        (hardware.position()[0] - rest, sim.log())
    error = hardware.position()[0] - target
    print('position interface: final error per joint (deg):', np.round(np.degrees(error), 4).tolist())

    # NaN = no command for that joint: joint 3 keeps its target while the others move on.
    second = target + 0.1
    hardware.command['position'] = second.copy()
    hardware.command['position'][2] = np.nan
    expected = np.where(np.isnan(hardware.command['position']), target, second)
    assert hardware.run(lambda: np.max(np.abs(hardware.position()[0] - expected)) < 1e-3), \
        hardware.position()[0] - expected

    # Silence (the interface stops publishing when command and state agree): the command is held, although
    # the config's command_timeout (0.5 s) would zero a stale effort command after 0.5 s.
    probe.spin_for(3.0)
    assert np.max(np.abs(hardware.position()[0] - expected)) < 1e-3, hardware.position()[0] - expected
    assert sim.alive() and 'rejected' not in sim.log()
    assert sim.stop(signal.SIGINT) == 0


def test_effort_interface(ros_domain, start):
    """Efforts from the user's controller, here PD with gravity compensation at the controller manager's rate:
    Kp = m w^2, Kd = 2 w m per joint (m_i = 1 / (M^-1)_ii at the start, w = 2 pi 2 Hz, slow enough for the
    transport delay). Without friction its rest point is the target itself."""
    _, probe = ros_domain
    hardware = TopicHardware(probe, 'effort')
    assert all(interfaces == ['effort'] for _, interfaces in hardware.joints)
    assert hardware.threshold < 0    # effort commands carry no positions: publish on every update
    inertia = 1.0 / np.diag(np.linalg.inv(crba(MODEL, START)))
    omega = 2 * np.pi * 2.0
    sim = start_simulator(start)
    assert probe.spin_until(lambda: hardware.state is not None, STARTUP), sim.log()
    target = START + 0.2

    def pd_gravity(q, qd):
        hardware.command['effort'] = inertia * (omega**2 * (target - q) - 2 * omega * qd) + gravity_torques(MODEL, q)

    assert hardware.run(lambda: np.max(np.abs(hardware.position()[0] - target)) < 1e-3, pd_gravity), \
        (hardware.position()[0] - target, sim.log())
    error = hardware.position()[0] - target
    print('effort interface: final error per joint (deg):', np.round(np.degrees(error), 4).tolist())
    assert all(np.all(np.isfinite(m.effort)) for m in hardware.sent)
    assert sim.stop(signal.SIGINT) == 0


def test_a_command_naming_one_joint_holds_the_others(ros_domain, start):
    """A JointState naming joint 1 alone: it moves 0.2 rad while every other joint holds its start under gravity
    (within 1 mrad, for 3 s); limp, they would sag (test_limits_brakes_servo checks that they do)."""
    _, probe = ros_domain
    hardware = TopicHardware(probe, 'position')
    sim = start_simulator(start)
    assert probe.spin_until(lambda: hardware.state is not None, STARTUP), sim.log()
    target = START[0] + 0.2
    command = JointState(name=hardware.names[:1], position=[target])

    def reached():   # the same command again until it arrives (it may precede the match with the simulator)
        hardware.publisher.publish(command)
        return abs(hardware.position()[0][0] - target) < 1e-3

    assert probe.spin_until(reached, TIME_LIMIT), (hardware.position()[0], sim.log())
    probe.spin_for(3.0)
    q = hardware.position()[0]
    assert abs(q[0] - target) < 1e-3 and np.max(np.abs(q[1:] - START[1:])) < 1e-3, (q - START, sim.log())
    assert sim.alive() and sim.stop(signal.SIGINT) == 0


def test_mixed_known_and_unknown_joints_are_rejected_whole(ros_domain, start):
    _, probe = ros_domain
    hardware = TopicHardware(probe, 'position')
    sim = start_simulator(start, extra=[('wait_for_command', 'false')])
    assert probe.spin_until(lambda: hardware.state is not None, STARTUP), sim.log()
    msg = JointState(name=hardware.names[:3] + ['not_a_joint'], position=[0.0, 0.0, 0.0, 0.0])
    hardware.publisher.publish(msg)
    assert probe.spin_until(lambda: 'rejected joint command' in sim.log(), STARTUP), sim.log()
    assert 'not_a_joint' in sim.log()
    assert sim.alive() and sim.stop(signal.SIGINT) == 0
