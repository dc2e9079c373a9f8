"""A paused simulator publishes nothing, as gz: no joint state is stamped after the pause was acknowledged, in real time
and in lockstep, also after a reset; after ~/pause false the states come again and the arm moves. Its step rate counts the time it stepped."""
import re
import signal
import time

import pytest

from ros_helpers import ros_domain, start  # noqa: F401  (fixtures)
from conftest import BUNDLED_URDF

from sensor_msgs.msg import JointState  # noqa: E402  (ros_helpers skipped the module without rclpy)
from std_msgs.msg import Float64MultiArray  # noqa: E402
from std_srvs.srv import SetBool, Trigger  # noqa: E402

STARTUP = 60.0      # s wall for a node to come up on a loaded machine
PAUSED = 1.0        # s wall the probe listens while the simulator is paused
RESUMED = 10        # joint states after ~/pause false that show it publishes again


def stamp_ns(msg):
    return msg.header.stamp.sec * 10**9 + msg.header.stamp.nanosec


@pytest.mark.parametrize('sync', ['realtime', 'lockstep'])
def test_paused_simulator_publishes_no_joint_states(ros_domain, start, sync):
    """Without a controller: the arm sags under gravity (wait_for_command false), lockstep stepping each time its
    lockstep_timeout runs out; reset while paused, it falls again from its initial posture once resumed. The stamps
    are the wall clock (publish_clock false): a state stamped after the pause's answer arrived was published after
    the pause; states published before it may still arrive, and are allowed."""
    _, probe = ros_domain
    states = []
    probe.node.create_subscription(JointState, 'joint_states', states.append, 1000)
    # command_timeout 0 (never stale): no brake holds the arm (config/arm7.yaml's 0.5 s would, half a second in)
    sim = start('simulator', params=[('urdf_file', BUNDLED_URDF), ('wait_for_command', 'false'), ('sync', sync),
                                     ('lockstep_timeout', 0.01), ('publish_clock', 'false'), ('command_timeout', 0.0)])
    pause = probe.node.create_client(SetBool, '/simulator/pause')
    reset = probe.node.create_client(Trigger, '/simulator/reset')

    def call(client, request):
        """The wall time (ns, the clock the simulator stamps with) at which the answer arrived."""
        assert probe.call(client, request, STARTUP, sim.log).success
        return time.time_ns()

    assert probe.spin_until(lambda: len(states) > RESUMED, STARTUP), sim.log()
    paused_at = call(pause, SetBool.Request(data=True))
    received = len(states)
    call(reset, Trigger.Request())   # back to the initial posture, still paused: the arm falls from there once resumed
    probe.spin_for(PAUSED)
    after_pause = [msg for msg in states[received:] if stamp_ns(msg) > paused_at]
    print(f"{sync}: {len(states) - received} joint states received in {PAUSED:g} s after the pause was answered, "
          f"{len(after_pause)} stamped after it")
    assert not after_pause, f"{len(after_pause)} joint states published while paused"

    resumed_at = call(pause, SetBool.Request(data=False))
    received = len(states)
    assert probe.spin_until(lambda: len(states) > received + RESUMED, STARTUP), sim.log()
    assert stamp_ns(states[-1]) > resumed_at
    # it falls from its initial posture, the middle of the joint limits, as test_nodes_integration's arm sags
    assert probe.spin_until(lambda: len({tuple(msg.position) for msg in states[received:]}) > 1, STARTUP), \
        "the arm should move under gravity again"
    assert sim.stop(signal.SIGINT) == 0, sim.log()
    assert 'Traceback' not in sim.log()


WAITED, RAN = 4.0, 4.0   # s wall: paused with the first command in, then stepping


def test_the_step_rate_counts_from_the_first_step(ros_domain, start):
    """As bringup starts it: the simulator paused (~/pause) gets its first command and stays paused WAITED s, then
    steps RAN s: its exit line's step rate is the steps over the time it stepped. Counted from the first command, as
    it was, the rate is at most RAN / (WAITED + RAN) = 0.5 of the true one (bringup printed 769 steps/s for a
    simulator keeping 1,000)."""
    _, probe = ros_domain
    states = []
    probe.node.create_subscription(JointState, 'joint_states', states.append, 10)
    sim = start('simulator', params=[('urdf_file', BUNDLED_URDF), ('wait_for_command', 'true')])
    assert probe.spin_until(lambda: states, STARTUP), sim.log()
    pause = probe.node.create_client(SetBool, '/simulator/pause')
    assert probe.call(pause, SetBool.Request(data=True), STARTUP, sim.log).success
    publisher = probe.node.create_publisher(Float64MultiArray, 'effort_controller/commands', 10)
    probe.spin_until(lambda: publisher.get_subscription_count() > 0, STARTUP)
    publisher.publish(Float64MultiArray(data=[0.0] * 7))
    probe.spin_for(WAITED)
    resumed = time.monotonic()
    assert probe.call(pause, SetBool.Request(data=False), STARTUP, sim.log).success
    probe.spin_for(RAN)
    stopped = time.monotonic()
    assert sim.stop(signal.SIGINT) == 0, sim.log()
    assert 'first command received' in sim.log()
    match = re.search(r'(\d+) steps in [\d.]+ s wall \((\d+) steps/s', sim.log())
    assert match, sim.log()
    steps, rate = int(match.group(1)), int(match.group(2))
    print(f"{steps} steps, reported {rate} steps/s; {steps / (stopped - resumed):.0f} steps/s from the resume on")
    assert steps > 0
    # stepping began after the resume was asked and ended after the SIGINT: the rate over the test's own span is at
    # most the true one, and 0.75 of it leaves a loaded machine 1.3 s to stop the node (0.5: counted from the pause)
    assert rate >= 0.75 * steps / (stopped - resumed), sim.log()
