"""Hostile effort commands against a lockstep simulator (issue 37's attacks, written as tests): labels that only look
like a state's stamp, a callback that fails, and a third publisher flooding the command topic while the simulator and
the computed-torque controller run in lockstep."""
import logging
import time

import numpy as np

from ros_helpers import release, ros_domain, start  # noqa: F401  (fixtures)
from test_lockstep import START, STARTUP, command, node_args

from sensor_msgs.msg import JointState  # noqa: E402  (ros_helpers skipped the module without rclpy)
from std_msgs.msg import Float64MultiArray  # noqa: E402

from robot_dynamics_ros.nodes.messages import StateAnswers, answered_state
from robot_dynamics_ros.nodes.node_loop import Throttle
from robot_dynamics_ros.nodes.launch_support import LOCKSTEP_STATE_TIMEOUT  # noqa: E402

PUBLISH_RATE = 250.0   # joint states per sim second
WINDOW = 3.0           # s wall over which the loop's rate is counted, without and with the flood
# Labels that start as ours but are not a stamp as StateAnswers writes it: Unicode digits (str.isdigit takes them,
# int() refuses '\u00b2'), a seconds field beyond int()'s 4,300-digit limit, signs, blanks, a short nanosecond field.
SPOOFED_LABELS = ['answers state \u00b2.0', 'answers state 1.\u00b2', 'answers state \uff11.000000000',
                  'answers state ' + '9' * 5000 + '.000000000', 'answers state 1.' + '0' * 5000,
                  'answers state ', 'answers state .', 'answers state +1.000000000', 'answers state -1.000000000',
                  'answers state 1.5', 'answers state 1 .000000000', 'answers state 1.000000000 ',
                  'answers state 1.000000000\n', 'answers state 12345678901.000000000']


def test_only_a_stamp_written_as_stateanswers_writes_it_names_a_state():
    """Every spoofed label names no state (and raises nothing); the labels StateAnswers writes name theirs."""
    for label in SPOOFED_LABELS:
        assert answered_state(command([0.0], label)) is None, label
    answers = StateAnswers(None, 1, Throttle(logging.getLogger('test')))
    for stamp_ns in (0, 5, 4_294_967_295 * 10**9 + 999_999_999):
        answers.dimension.label = f"answers state {stamp_ns // 10**9}.{stamp_ns % 10**9:09d}"
        assert answered_state(answers.msg) == stamp_ns


def test_a_failing_callback_is_a_warning_not_a_dead_node():
    """GuardedNode: a subscription's callback that raises drops that message with a warning naming the topic; the next
    message is handled. A service's callback that raises answers the default response."""
    import rclpy
    from rclpy.context import Context
    from std_srvs.srv import Trigger
    from robot_dynamics_ros.nodes.node_loop import GuardedNode

    class Fragile(GuardedNode):
        def __init__(self, context):
            super().__init__('fragile', context=context)
            self.handled = []
            self.subscription = self.create_subscription(Float64MultiArray, 'commands', self.on_command, 1)
            self.service = self.create_service(Trigger, 'reset', lambda request, response: 1 / 0)

        def on_command(self, msg):
            self.handled.append(int(msg.data[0]))   # raises on an empty command

    context = Context()
    rclpy.init(args=[], context=context)
    try:
        node = Fragile(context)
        warnings = []
        node._callback_throttle = Throttle(type('Logger', (), {'warning': warnings.append})())
        node.subscription.callback(Float64MultiArray(data=[]))
        node.subscription.callback(Float64MultiArray(data=[3.0]))
        response = node.service.callback(Trigger.Request(), Trigger.Response())
        assert node.handled == [3]
        assert len(warnings) == 2 and "'commands'" in warnings[0] and 'IndexError' in warnings[0]
        assert "'reset'" in warnings[1] and 'ZeroDivisionError' in warnings[1]
        assert isinstance(response, Trigger.Response) and not response.success
        node.destroy_node()
    finally:
        release(context)


def test_spoofed_labels_and_a_command_flood_neither_kill_nor_stall_a_lockstep_loop(ros_domain, start):
    """The simulator and the computed-torque controller in lockstep. The probe counts the distinct states per wall
    second over WINDOW, then floods the command topic for WINDOW from a third publisher (every 2 ms: a spoofed label, a
    command answering another state, an unlabelled command of the wrong length) and counts again. The loop
    keeps at least half its rate (a depth-1 command queue let the flood overwrite the controller's answers: 457 -> 8
    states/s in the attack), both nodes live through it and exit 0 on SIGINT, and the simulator counts what it ignored.
    """
    _, probe = ros_domain
    stamps = []
    probe.node.create_subscription(
        JointState, 'joint_states', lambda msg: stamps.append(msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec),
        100)
    sim = start('simulator', **node_args(('sync', 'lockstep'), ('publish_rate', PUBLISH_RATE)))
    controller = start('computed_torque_controller', **node_args(('state_timeout', LOCKSTEP_STATE_TIMEOUT)))
    assert probe.spin_until(lambda: len(set(stamps)) > 50, 4 * STARTUP), sim.log() + controller.log()

    def states_per_second():
        before, wall = len(set(stamps)), time.monotonic()
        probe.spin_for(WINDOW)
        return (len(set(stamps)) - before) / (time.monotonic() - wall)

    quiet = states_per_second()
    flood = probe.node.create_publisher(Float64MultiArray, 'effort_controller/commands', 10)
    zero = np.zeros(len(START))
    spoofed = [command(zero, label) for label in SPOOFED_LABELS]
    other_state, wrong_length = command(zero, 'answers state 7.000000000'), command([0.0, 0.0, 0.0])
    sent = []

    def send():
        for msg in (spoofed[len(sent) % len(spoofed)], other_state, wrong_length):
            flood.publish(msg)
        sent.append(3)
    timer = probe.node.create_timer(0.002, send)
    flooded = states_per_second()
    probe.node.destroy_timer(timer)
    print(f"lockstep loop: {quiet:.0f} states/s quiet, {flooded:.0f} states/s under a flood of "
          f"{sum(sent) / WINDOW:.0f} bad commands/s")
    assert sum(sent) / WINDOW > quiet, "the flood must outnumber the controller's answers"
    assert flooded >= 0.5 * quiet, f"{flooded:.0f} states/s under the flood against {quiet:.0f} without"
    assert sim.alive() and controller.alive(), sim.log() + controller.log()
    assert sim.stop() == 0 and controller.stop() == 0
    assert 'commands naming another state ignored' in sim.log(), sim.log()
    assert 'Traceback' not in sim.log() + controller.log()

