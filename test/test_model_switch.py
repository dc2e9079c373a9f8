"""The latest valid /robot_description wins, as with robot_state_publisher and ros2_control's controller manager:
the simulator and the controller, both waiting on the topic, run a stray URDF first, then switch to the arm
published after it (the reproduction of issue 17); a URDF they cannot run later is logged and skipped, and the
arm keeps running."""
import signal

import numpy as np
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String

from ros_helpers import ros_domain, start  # noqa: F401  (fixtures)
from conftest import BUNDLED_URDF, TEST_URDFS

from robot_dynamics_ros import load_urdf
from robot_dynamics_ros.nodes.messages import LATCHED_QOS

STARTUP = 60.0
ARM = load_urdf(BUNDLED_URDF)
STRAY = load_urdf(TEST_URDFS['prismatic_chain'])
ARM_STATES = 300   # 0.3 s of sim time at 1 kHz, every step answered by a command (lockstep)
# The controller holds the arm where it starts, with its own model: it stays within well under a degree. Without
# its commands the arm would not move at all (lockstep stands still); with wrong ones (another robot's model)
# gravity alone pulls it ~0.1 rad away in 0.3 s.
HOLD = 0.01   # rad


def read(path):
    with open(path) as f:
        return f.read()


def test_a_later_urdf_replaces_a_stray_one_and_one_it_cannot_run_is_skipped(ros_domain, start):
    _, probe = ros_domain
    description = probe.node.create_publisher(String, 'robot_description', LATCHED_QOS)
    states, commands = [], []
    probe.node.create_subscription(JointState, 'joint_states', states.append, 1000)
    probe.node.create_subscription(Float64MultiArray, 'effort_controller/commands',
                                   lambda msg: commands.append(np.array(msg.data)), 1000)
    # publish_clock: joint states stamped with sim time. No URDF parameter: both wait for the topic.
    sim = start('simulator', params=[('sync', 'lockstep'), ('publish_clock', 'true')])
    controller = start('computed_torque_controller')
    for node in (sim, controller):
        assert node.wait_for_log('waiting for a URDF', STARTUP), node.log()

    description.publish(String(data=read(TEST_URDFS['prismatic_chain'])))
    for node in (sim, controller):
        assert node.wait_for_log("robot model 'prismatic_chain'", STARTUP), node.log()
    assert probe.spin_until(lambda: states and list(states[-1].name) == list(STRAY.joint_names), STARTUP)

    description.publish(String(data=read(BUNDLED_URDF)))
    for node in (sim, controller):
        assert node.wait_for_log("switched to robot model 'arm7' (7 DOF) from /robot_description, replacing "
                                 "'prismatic_chain'", STARTUP), node.log()

    def arm_states():
        return [s for s in states if list(s.name) == list(ARM.joint_names)]
    assert probe.spin_until(lambda: len(arm_states()) >= ARM_STATES, STARTUP), (len(arm_states()), sim.log())
    arm = arm_states()
    stamps = np.array([s.header.stamp.sec + 1e-9 * s.header.stamp.nanosec for s in arm])
    assert stamps[-1] - stamps[0] > 0.9 * ARM_STATES * 1e-3   # sim time ran: each step answered by a command
    positions = np.array([s.position for s in arm])
    assert np.abs(positions - positions[0]).max() < HOLD
    assert commands[-1].shape == (ARM.nv,) and all(np.all(np.isfinite(c)) for c in commands)

    # A URDF it cannot run is logged and skipped; the arm keeps running.
    description.publish(String(data='this is not a URDF'))
    for node in (sim, controller):
        assert node.wait_for_log("keeping robot model 'arm7'", STARTUP), node.log()
    received = len(states)
    assert probe.spin_until(lambda: len(states) > received + 100, STARTUP)
    assert all(list(s.name) == list(ARM.joint_names) for s in states[received:])
    for node in (sim, controller):
        assert node.stop(signal.SIGINT) == 0
        assert 'Traceback' not in node.log()
