"""The controller as standard ROS tools reach it, over DDS: a default-QoS trajectory publisher (what
`ros2 topic pub` and most user code create) and the SetParameters service (what `ros2 param set` calls);
the simulator's /clock as use_sim_time nodes read it."""
import signal
import subprocess
import sys

import numpy as np
import pytest
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from ros_helpers import NodeProcess, ParameterClient, ros_domain, start  # noqa: F401  (fixtures)
from conftest import BUNDLED_URDF

from robot_dynamics_ros import gravity_torques, load_urdf

MODEL = load_urdf(BUNDLED_URDF)
NAMES = list(MODEL.joint_names)
Q0 = np.array([0.0, 0.3, 0.0, -1.5, 0.0, 1.8, 0.0])   # inside the arm7 limits
STARTUP = 30.0
KP, KD = 100.0, 5.0   # pd_gravity: KD 20 would make the wrist (0.005 kg m^2) unstable at 1 kHz: refused


class Loop:
    """The probe stands in for the robot: it publishes joint states at a fixed position with advancing
    stamps (the controller samples its reference at the stamps) and records the commands."""

    def __init__(self, probe):
        self.probe = probe
        self.q = Q0.copy()
        self.time = 1.0
        self.commands = []
        self.errors = []
        self.states = probe.node.create_publisher(JointState, 'joint_states', 10)
        probe.node.create_subscription(Float64MultiArray, 'effort_controller/commands',
                                       lambda msg: self.commands.append(np.array(msg.data)), 100)
        probe.node.create_subscription(JointState, 'computed_torque_controller/tracking_error',
                                       lambda msg: self.errors.append(np.array(msg.position)), 100)

    def publish_state(self):
        self.time += 0.01
        msg = JointState(name=NAMES, position=self.q.tolist(), velocity=[0.0] * len(NAMES))
        msg.header.stamp.sec = int(self.time)
        msg.header.stamp.nanosec = int(round((self.time % 1.0) * 1e9))
        self.states.publish(msg)

    def next_command(self, timeout=STARTUP):
        """Publish states until commands answer those published after this call (the fifth new command: the
        first ones may still be in flight from before)."""
        received = len(self.commands)
        assert self.probe.spin_until(lambda: self.publish_state() or len(self.commands) >= received + 5, timeout)
        return self.commands[-1]

    def commands_become(self, expected, timeout=STARTUP):
        """Publish states until the newest command equals `expected` (commands for older states may still be in
        flight when the machine is loaded); then the next five must equal it too."""
        def equal():
            return self.commands and np.allclose(self.commands[-1], expected, atol=1e-9)
        assert self.probe.spin_until(lambda: self.publish_state() or equal(), timeout), \
            (self.commands[-1] if self.commands else None, expected)
        assert np.allclose(self.next_command(), expected, atol=1e-9)


def controller_params(*extra):
    return [('urdf_file', BUNDLED_URDF), ('mode', 'pd_gravity'), ('kp', KP), ('kd', KD),
            ('friction_compensation', 'false'), *extra]


def test_default_qos_trajectory_reaches_the_controller(ros_domain, start):
    _, probe = ros_domain
    loop = Loop(probe)
    controller = start('computed_torque_controller', params=controller_params())
    loop.next_command()
    # tracking_error is published once the controller has seen a subscriber (its timer checks every 0.1 s)
    assert probe.spin_until(lambda: loop.publish_state() or loop.errors, STARTUP)
    assert np.allclose(loop.errors[-1], 0.0)      # holding where the robot is: zero error
    publisher = probe.node.create_publisher(JointTrajectory, 'computed_torque_controller/joint_trajectory', 10)
    assert probe.spin_until(lambda: publisher.get_subscription_count() > 0, STARTUP), \
        "a default-QoS publisher did not match the controller's subscription (QoS incompatible?)"
    target = Q0 + 0.1
    point = JointTrajectoryPoint(positions=target.tolist())
    point.time_from_start.nanosec = 200_000_000
    publisher.publish(JointTrajectory(joint_names=NAMES, points=[point]))
    assert controller.wait_for_log('following a trajectory', STARTUP), controller.log()
    # The probe's robot does not move, so once the trajectory has ended the error is target - q exactly.
    assert probe.spin_until(lambda: loop.publish_state() or (loop.errors and np.allclose(loop.errors[-1], 0.1)),
                            STARTUP), loop.errors[-1]
    assert controller.stop(signal.SIGINT) == 0


def test_parameter_service_changes_validates_and_refuses(ros_domain, start):
    _, probe = ros_domain
    loop = Loop(probe)
    controller = start('computed_torque_controller', params=controller_params())
    loop.next_command()                    # the reference now holds Q0
    loop.q = Q0 + 0.02                     # displaced: pd_gravity commands kp (Q0 - q) + g(q) at rest
    gravity = gravity_torques(MODEL, loop.q)
    loop.commands_become(KP * (Q0 - loop.q) + gravity)

    parameters = ParameterClient(probe, 'computed_torque_controller', STARTUP)
    set_parameter, get_parameter = parameters.set, parameters.get

    # A valid gain takes effect on the commands that follow.
    assert set_parameter('kp', 2 * KP).successful
    after = 2 * KP * (Q0 - loop.q) + gravity
    loop.commands_become(after)
    assert get_parameter('kp') == 2 * KP

    # Invalid values are refused with a reason, and nothing changes.
    # Gains that make the sampled loop unstable (control.check_gains) and booleans are refused too.
    for name, value, reason in (('kp', -1.0, 'non-negative'), ('kp', [1.0, 2.0], '7'),
                                ('kp', 1e10, 'unstable'), ('kp', 1e300, 'unstable'), ('kd', 50.0, 'unstable'),
                                ('kp', True, 'not a boolean'), ('ki', [True] * 7, 'not a boolean'),
                                ('mode', 'not_a_mode', 'mode'), ('stale_behavior', 'explode', 'stale_behavior')):
        result = set_parameter(name, value)
        assert not result.successful and reason in result.reason, (name, value, result.reason)
    assert get_parameter('kp') == 2 * KP and get_parameter('mode') == 'pd_gravity'
    loop.commands_become(after)

    # A string where a boolean belongs is a type error, not bool('false') == True.
    assert not set_parameter('friction_compensation', 'false').successful
    assert get_parameter('friction_compensation') is False

    # Structural parameters are read-only.
    for name, value in (('joints', list(reversed(NAMES))), ('state_timeout', 5.0), ('urdf_file', '')):
        result = set_parameter(name, value)
        assert not result.successful and 'read-only' in result.reason, (name, result.reason)

    # A valid mode change also takes effect: gravity_compensation commands g(q) alone, no kp term.
    assert set_parameter('mode', 'gravity_compensation').successful
    loop.commands_become(gravity)
    assert controller.stop(signal.SIGINT) == 0
    assert 'Traceback' not in controller.log()


def test_string_for_a_boolean_parameter_is_a_clear_start_up_error(ros_domain, start):
    controller = start('computed_torque_controller',
                       params=[('urdf_file', BUNDLED_URDF), ('friction_compensation', "'false'")])
    assert controller.process.wait(STARTUP) == 1
    assert 'friction_compensation' in controller.log() and 'Traceback' not in controller.log()


def test_clock_is_published_at_clock_rate_and_joint_states_at_publish_rate(ros_domain, start):
    """/clock every 1/clock_rate of sim time (on a joint-state tick), not with every joint state; each /clock
    carries the stamp of a joint state published with it."""
    _, probe = ros_domain
    clocks, states = [], []

    def seconds(stamp):
        return stamp.sec + 1e-9 * stamp.nanosec
    probe.node.create_subscription(Clock, '/clock', lambda msg: clocks.append(seconds(msg.clock)), 1000)
    probe.node.create_subscription(JointState, 'joint_states', lambda msg: states.append(seconds(msg.header.stamp)),
                                   1000)
    simulator = start('simulator', params=[('urdf_file', BUNDLED_URDF), ('publish_clock', 'true'),
                                           ('publish_rate', 500.0), ('clock_rate', 50.0),
                                           ('wait_for_command', 'false'),
                                           ('joint_states_depth', 1000)])   # 2 s: a starved probe loses none
    assert probe.spin_until(lambda: len(clocks) > 30 and len(states) > 300, STARTUP), (len(clocks), len(states))
    assert simulator.stop(signal.SIGINT) == 0
    # Take what was delivered before the stop: under load the probe's 500 states a second can fall behind its 50
    # clocks, leaving clocks ahead of the last state taken. Every clock but a last one cut off by SIGINT has its
    # state; the assertions below say which is missing if none comes.
    probe.spin_until(lambda: {round(c, 9) for c in clocks[:-1]} <= set(np.round(states, 9)), STARTUP)
    clock_steps, state_steps = np.diff(clocks[1:]), np.diff(states[1:])
    assert np.allclose(state_steps[state_steps > 0].min(), 1 / 500, atol=1e-9)   # joint states every 2 ms of sim time
    # /clock every 20 ms of sim time, on the first tick after it is due (a late tick steps up to 8 ms at once).
    assert clock_steps.min() >= 1 / 50 - 1e-9 and clock_steps.max() <= 1 / 50 + 0.008 + 1e-9, clock_steps
    stamped = set(np.round(states, 9))
    in_flight = [c for c in clocks if c > max(states)]   # published with the last states, which SIGINT cut off
    assert len(in_flight) <= 1 and all(round(c, 9) in stamped for c in clocks if c <= max(states))


def test_the_controller_serves_from_generated_code_once_it_is_compiled(ros_domain, tmp_path):
    """With per-robot code in the on-disk cache (``robot-dynamics compile``), the node loads it at start (and says
    so) and its commands are the control law's, as the NumPy reference computes it."""
    pytest.importorskip('numba')
    from robot_dynamics_ros.algorithms import gravity_torques as reference_gravity
    from robot_dynamics_ros import fast
    env, probe = ros_domain
    # Compiled in a process started as the node's, which hashes the sources the node runs: this process hashed its
    # sources once, at their first use (under colcon test a source tree changed since had another hash).
    compiling = subprocess.run([sys.executable, '-m', 'robot_dynamics_ros.cli', 'compile', BUNDLED_URDF, '--only',
                                *fast.NODE_ALGORITHMS], env=env, capture_output=True, text=True, timeout=600)
    assert compiling.returncode == 0, compiling.stdout + compiling.stderr
    controller = NodeProcess('computed_torque_controller', dict(env, ROBOT_DYNAMICS_ROS_CODEGEN='1'), str(tmp_path),
                             controller_params())
    try:
        loop = Loop(probe)
        loop.next_command()
        assert 'dynamics: generated per-robot code' in controller.log(), controller.log()
        loop.q = Q0 + 0.02
        loop.commands_become(KP * (Q0 - loop.q) + reference_gravity(MODEL, loop.q))
        assert controller.stop(signal.SIGINT) == 0
    finally:
        controller.kill()
