"""Bad input over the wire: the nodes reject it with a warning, stay up, keep their last safe output and
never publish a non-finite effort."""
import math
import os
import signal

import numpy as np

from ros_helpers import ros_domain, start  # noqa: F401  (fixtures)
from conftest import BAD_URDF_DIR, BUNDLED_URDF

from robot_dynamics_ros.model import load_urdf  # noqa: E402
from robot_dynamics_ros.nodes.messages import LATCHED_QOS
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray, String  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402
from builtin_interfaces.msg import Duration  # noqa: E402

MODEL = load_urdf(BUNDLED_URDF)
NAMES = list(MODEL.joint_names)
Q0 = MODEL.neutral()
STARTUP = 30.0   # s for a node to come up on a loaded machine
QUIET = 1.0      # s to wait for a reply that must not come


def joint_state(names=NAMES, position=Q0, velocity=None, stamp_sec=1):
    msg = JointState(name=list(names), position=[float(x) for x in position],
                     velocity=[0.0] * len(position) if velocity is None else [float(x) for x in velocity])
    msg.header.stamp.sec = stamp_sec
    return msg


class CommandListener:
    def __init__(self, probe):
        self.commands = []
        probe.node.create_subscription(Float64MultiArray, 'effort_controller/commands',
                                       lambda msg: self.commands.append(np.array(msg.data)), 100)


def test_controller_rejects_bad_joint_states_and_trajectories(ros_domain, start):
    _, probe = ros_domain
    listener = CommandListener(probe)
    states = probe.node.create_publisher(JointState, 'joint_states', 10)
    controller = start('computed_torque_controller', params=[
        ('urdf_file', BUNDLED_URDF), ('state_timeout', 1000.0), ('stale_behavior', 'zero')])

    def publish_until_command(msg):
        count = len(listener.commands)

        def replied():
            states.publish(msg)
            return len(listener.commands) > count
        return probe.spin_until(replied, STARTUP)

    assert publish_until_command(joint_state()), controller.log()
    probe.spin_for(QUIET)  # let replies in flight arrive
    count = len(listener.commands)

    nan_position = Q0.copy()
    nan_position[2] = math.nan
    inf_velocity = np.zeros(len(NAMES))
    inf_velocity[4] = math.inf
    bad = {
        'non-finite': [joint_state(position=nan_position), joint_state(velocity=inf_velocity)],
        'but 6 positions': [joint_state(position=Q0[:6])],                          # wrong length
        'unknown joints': [joint_state(names=NAMES + ['gripper'], position=np.append(Q0, 0.0))],
        'lacks joints': [joint_state(names=NAMES[:6], position=Q0[:6])],
        'no velocities': [JointState(name=NAMES, position=list(Q0))],
    }
    for reason, messages in bad.items():   # one kind at a time: the controller keeps only the newest state

        def warned():
            for msg in messages:
                states.publish(msg)
                probe.spin_for(0.05)
            return reason in controller.log()
        assert probe.spin_until(warned, STARTUP), f"no warning about {reason!r}:\n{controller.log()}"
    probe.spin_for(QUIET)
    assert len(listener.commands) == count, "a rejected joint state produced a command"
    assert 'rejected joint state' in controller.log()

    trajectories = probe.node.create_publisher(JointTrajectory, 'computed_torque_controller/joint_trajectory',
                                               LATCHED_QOS)
    unknown = JointTrajectory(joint_names=NAMES[:6] + ['not_a_joint'],
                              points=[JointTrajectoryPoint(positions=list(Q0))])
    trajectories.publish(unknown)
    assert controller.wait_for_log('rejected joint trajectory', STARTUP), controller.log()

    assert controller.alive()
    assert publish_until_command(joint_state(stamp_sec=2)), "no command after the bad messages"
    assert all(np.all(np.isfinite(c)) and c.shape == (len(NAMES),) for c in listener.commands)
    assert controller.stop(signal.SIGINT) == 0
    assert 'Traceback' not in controller.log()


def test_overflowing_inputs_never_become_non_finite_commands(ros_domain, start):
    """Finite but huge inputs (issue 12): qd = 1e155 squares to inf inside the dynamics, a trajectory
    position of 1e306 times kp overflows. Both are rejected with a reason; the controller stays up, never
    publishes a non-finite effort and keeps commanding on good input."""
    _, probe = ros_domain
    listener = CommandListener(probe)
    states = probe.node.create_publisher(JointState, 'joint_states', 10)
    trajectories = probe.node.create_publisher(JointTrajectory, 'computed_torque_controller/joint_trajectory',
                                               LATCHED_QOS)
    controller = start('computed_torque_controller', params=[
        ('urdf_file', BUNDLED_URDF), ('state_timeout', 1000.0), ('stale_behavior', 'gravity_compensation')])
    stamp = [1]

    def publish_until_command(**state):
        count = len(listener.commands)

        def replied():
            stamp[0] += 1
            states.publish(joint_state(stamp_sec=stamp[0], **state))
            return len(listener.commands) > count
        return probe.spin_until(replied, STARTUP)

    assert publish_until_command(), controller.log()
    huge_velocity = np.zeros(len(NAMES))
    huge_velocity[1] = 1e155

    def warned_about(text, **state):
        def check():
            stamp[0] += 1
            states.publish(joint_state(stamp_sec=stamp[0], **state))
            probe.spin_for(0.05)
            return text in controller.log()
        return probe.spin_until(check, STARTUP)
    assert warned_about('implausible position or velocity', velocity=huge_velocity), controller.log()
    assert publish_until_command(), "no command on a good state after the huge velocity"

    huge = Q0.copy()
    huge[2] = 1e306
    trajectory = JointTrajectory(joint_names=NAMES, points=[
        JointTrajectoryPoint(positions=[float(x) for x in huge], time_from_start=Duration(sec=1))])
    trajectories.publish(trajectory)
    assert controller.wait_for_log('beyond the joint limits', STARTUP), controller.log()
    for _ in range(50):   # the controller keeps holding: good states keep getting finite commands
        assert publish_until_command(), "no command on a good state after the huge trajectory"
    assert controller.alive()
    assert listener.commands and all(np.all(np.isfinite(c)) for c in listener.commands)
    assert controller.stop(signal.SIGINT) == 0
    assert 'Traceback' not in controller.log()


def test_simulator_rejects_bad_commands_and_keeps_the_last_safe_one(ros_domain, start):
    _, probe = ros_domain
    states = []
    probe.node.create_subscription(JointState, 'joint_states', states.append, 100)
    commands = probe.node.create_publisher(Float64MultiArray, 'effort_controller/commands', 10)
    sim = start('simulator', params=[('urdf_file', BUNDLED_URDF), ('command_timeout', 0.0),
                                     ('publish_rate', 100.0)])

    def applies(effort):
        def check():
            commands.publish(Float64MultiArray(data=[float(x) for x in effort]))
            return states and np.allclose(states[-1].effort, np.clip(effort, -MODEL.effort_limit,
                                                                      MODEL.effort_limit))
        return probe.spin_until(check, STARTUP)

    safe = np.linspace(-2.0, 2.0, len(NAMES))
    assert applies(safe), sim.log()
    since_safe = len(states)   # every state from here on was published after the safe command was applied
    nan_command = safe.copy()
    nan_command[3] = math.nan
    # One kind at a time (the simulator keeps only the newest command), each until the simulator's warning quotes
    # it: the warning is logged as the command is refused, so the simulator has seen each. Repeats of a kind are
    # throttled (one line per 2 s), so the second of a kind shows once its period has passed.
    bad = {'2 values for 7 joints': [1.0, 2.0], '8 values for 7 joints': safe.tolist() + [0.0],
           str(nan_command.tolist()): nan_command.tolist(), str([math.inf] * len(NAMES)): [math.inf] * len(NAMES)}
    for text, command in bad.items():

        def warned():
            commands.publish(Float64MultiArray(data=command))
            probe.spin_for(0.05)
            return text in sim.log()
        assert probe.spin_until(warned, STARTUP), f"no warning with {text!r}:\n{sim.log()}"
    received = len(states)
    assert probe.spin_until(lambda: len(states) > received + 20, QUIET * 5), "the simulator stopped publishing"
    applied = [m.effort for m in states[since_safe:]]
    assert all(np.allclose(effort, safe) for effort in applied), "a rejected command changed the applied effort"
    assert sim.log().count('keeping the last safe command') >= len(bad)

    # Efforts beyond the URDF limits are clamped to them.
    assert applies(np.full(len(NAMES), 1e3)), sim.log()
    assert np.allclose(states[-1].effort, MODEL.effort_limit)
    assert all(np.all(np.isfinite(m.effort)) and np.all(np.isfinite(m.position)) for m in states)
    assert sim.alive()
    assert sim.stop(signal.SIGINT) == 0
    assert 'Traceback' not in sim.log()


def test_invalid_urdf_on_topic_then_a_valid_one(ros_domain, start):
    _, probe = ros_domain
    listener = CommandListener(probe)
    description = probe.node.create_publisher(String, 'robot_description', LATCHED_QOS)
    states = probe.node.create_publisher(JointState, 'joint_states', 10)
    controller = start('computed_torque_controller')   # no robot_description or urdf_file: waits for the topic
    assert controller.wait_for_log('waiting for a URDF', STARTUP), controller.log()

    description.publish(String(data='this is not a URDF'))
    assert controller.wait_for_log('invalid URDF on /robot_description', STARTUP), controller.log()
    with open(os.path.join(BAD_URDF_DIR, 'unsupported_joint.urdf')) as f:
        description.publish(String(data=f.read()))
    assert controller.wait_for_log("joint 'joint2'", STARTUP), controller.log()   # names the element
    assert controller.alive()
    states.publish(joint_state())
    probe.spin_for(QUIET)
    assert not listener.commands, "commanded without a model"

    with open(BUNDLED_URDF) as f:
        description.publish(String(data=f.read()))
    assert controller.wait_for_log("robot model 'arm7'", STARTUP), controller.log()
    assert probe.spin_until(lambda: states.publish(joint_state()) or listener.commands, STARTUP)
    assert all(np.all(np.isfinite(c)) for c in listener.commands)
    assert controller.stop(signal.SIGINT) == 0


def test_a_stream_of_one_fault_with_changing_values_is_warned_once_per_period():
    """Rejections name the offending values; the throttle keys them by the message with its numbers blanked,
    so 1 kHz of the same fault is one warning (not one per message, each formatted by the logger)."""
    from robot_dynamics_ros.nodes.node_loop import Throttle

    class Logger:
        def __init__(self):
            self.lines = []

        def warning(self, line):
            self.lines.append(line)
    logger = Logger()
    throttle = Throttle(logger, period=60.0)
    for k in range(100):
        error = ValueError(f"implausible joints ['arm7_joint7 (q {1.7 + k * 0.01:g}, qd {26.3 - k * 1e-3:g})']")
        throttle.warn(Throttle.reason(error), f"rejected joint state: {error}")
    throttle.warn(Throttle.reason(ValueError("3 positions for 7 joints")), "rejected: 3 positions for 7 joints")
    assert len(logger.lines) == 2, logger.lines


def test_publish_finite_refuses_a_non_finite_command_with_a_throttled_warning():
    """The last check before every controller command (computed-torque and Cartesian controllers): a NaN or an
    infinity anywhere is not published but warned about, once per period; finite values are published as they are."""
    from robot_dynamics_ros.nodes.messages import publish_finite
    from robot_dynamics_ros.nodes.node_loop import Throttle

    class Recorder:
        def __init__(self):
            self.lines, self.published = [], []

        def warning(self, line):
            self.lines.append(line)

        def publish(self, msg):
            self.published.append(list(msg.data))
    recorder = Recorder()
    throttle = Throttle(recorder, period=60.0)
    msg = Float64MultiArray()
    for bad in (np.array([1.0, math.nan, 2.0]), np.array([math.inf, 0.0, 0.0]), np.array([1e308, 1e308, -math.inf])):
        assert not publish_finite(recorder, msg, bad, throttle)
    assert recorder.published == []
    assert len(recorder.lines) == 1 and 'non-finite command' in recorder.lines[0], recorder.lines
    assert publish_finite(recorder, msg, np.array([1e308, 1e308, -2.5]), throttle)   # its sum overflows; each is finite
    assert recorder.published == [[1e308, 1e308, -2.5]]
