"""Controllers are lifecycle nodes, as ros2_control's: over DDS, the standard ``~/change_state`` and ``~/get_state``
services (what `ros2 lifecycle set` and `ros2 lifecycle get` call) switch the computed-torque controller off and on
while it runs the bundled arm in the simulator. Inactive, it publishes no effort, so the simulator's command goes
stale and its brakes hold the arm (`on_command_timeout` 'brake'); active again, it follows the trajectory it was
given meanwhile. Its /diagnostics status says when it is inactive. In process, the Cartesian controller started with
`autostart` false: it commands only once configured and activated, and not while deactivated."""
import numpy as np

from conftest import BUNDLED_URDF
from ros_helpers import domain_id, in_process_ros, ros_domain, start  # noqa: F401  (fixtures)
from test_lockstep import START, STARTUP, node_args

from builtin_interfaces.msg import Duration  # noqa: E402  (ros_helpers skipped the module without rclpy)
from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from lifecycle_msgs.msg import Transition  # noqa: E402
from lifecycle_msgs.srv import ChangeState, GetState  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

from robot_dynamics_ros import load_urdf  # noqa: E402
from robot_dynamics_ros.nodes.cartesian_controller import CartesianControllerNode  # noqa: E402
from robot_dynamics_ros.nodes.messages import answered_state

NODE = '/computed_torque_controller'
STATUS = 'computed_torque_controller: computed-torque control'   # its /diagnostics status
COMMAND_TIMEOUT = 0.05   # sim s after which the simulator's command is stale and it brakes
SETTLE = 1.0             # s wall after deactivation for commands in flight to arrive and the command to go stale
WINDOW = 1.0             # s wall over which the inactive controller is watched
INACTIVE_STATES = 100    # states watched at least (STARTUP s wall for them on a machine that stalls the simulator)
OFFSET = 0.2             # rad: the trajectory given while inactive moves every joint by this
TOLERANCE = 0.01         # rad: the tracking the config's gains (kp 400, ki 1600) reach at rest, with margin
TRACK_TIME = 60.0        # s wall for the arm to reach the trajectory's end on a loaded machine


def transition(probe, change_state, get_state, transition_id):
    """The lifecycle state label after asking for the transition. Asked again if unanswered (Probe.call); a
    repeated request of a transition already made is refused, so the state, not the answer, tells the outcome."""
    probe.call(change_state, ChangeState.Request(transition=Transition(id=transition_id)), STARTUP)
    return probe.call(get_state, GetState.Request(), STARTUP).current_state.label


def test_lifecycle_services_switch_a_controller_off_and_on(ros_domain, start):
    _, probe = ros_domain
    states, commands = [], []
    probe.node.create_subscription(JointState, 'joint_states',
                                   lambda msg: states.append((list(msg.position), list(msg.velocity))), 100)
    probe.node.create_subscription(Float64MultiArray, 'effort_controller/commands', commands.append, 100)
    health = []   # (message, lifecycle state) of the controller's /diagnostics statuses
    probe.node.create_subscription(
        DiagnosticArray, '/diagnostics',
        lambda msg: health.extend((s.message, {v.key: v.value for v in s.values}['lifecycle state'])
                                  for s in msg.status if s.name == STATUS), 10)
    trajectories = probe.node.create_publisher(JointTrajectory, f'{NODE}/joint_trajectory', 10)
    sim = start('simulator', **node_args(('command_timeout', COMMAND_TIMEOUT), ('on_command_timeout', 'brake')))
    controller = start('computed_torque_controller', **node_args())
    assert probe.spin_until(lambda: len(commands) > 50, 4 * STARTUP), sim.log() + controller.log()

    get_state = probe.node.create_client(GetState, f'{NODE}/get_state')
    change_state = probe.node.create_client(ChangeState, f'{NODE}/change_state')
    assert probe.call(get_state, GetState.Request(), STARTUP, controller.log).current_state.label == 'active'

    assert transition(probe, change_state, get_state, Transition.TRANSITION_DEACTIVATE) == 'inactive'
    assert probe.spin_until(lambda: trajectories.get_subscription_count() > 0, STARTUP)
    goal = START + OFFSET
    msg = JointTrajectory(joint_names=[f'arm7_joint{i}' for i in range(1, 8)])
    msg.points.append(JointTrajectoryPoint(positions=[float(x) for x in goal], time_from_start=Duration(sec=1)))
    trajectories.publish(msg)   # stamped zero: followed from the first state after activation
    probe.spin_for(SETTLE)
    commanded, watched = len(commands), len(states)
    probe.spin_for(WINDOW)
    assert probe.spin_until(lambda: len(states) > watched + INACTIVE_STATES, STARTUP), (
        "the simulator must keep running while the controller is inactive\n" + sim.log() + controller.log())
    inactive = states[watched:]
    assert len(commands) == commanded, f"{len(commands) - commanded} commands from an inactive controller"
    positions = np.array([position for position, _ in inactive])
    velocities = np.array([velocity for _, velocity in inactive])
    assert np.all(velocities == 0.0), f"the brakes hold the joints: largest speed {np.abs(velocities).max()}"
    assert np.all(positions == positions[0]), "the braked arm moved"
    assert np.abs(positions[0] - goal).max() > OFFSET / 2, "the inactive controller followed the trajectory"
    reported = len(health)
    assert probe.spin_until(lambda: len(health) > reported, STARTUP)
    assert health[-1] == ('inactive: commanding nothing', 'inactive')

    assert transition(probe, change_state, get_state, Transition.TRANSITION_ACTIVATE) == 'active'

    def at_goal():
        return bool(states) and np.abs(np.array(states[-1][0]) - goal).max() < TOLERANCE
    assert probe.spin_until(at_goal, TRACK_TIME), (states[-1][0], sim.log() + controller.log())
    assert len(commands) > commanded
    reported = len(health)
    assert probe.spin_until(lambda: len(health) > reported, STARTUP)
    assert health[-1][1] == 'active' and health[-1][0] != 'inactive: commanding nothing'
    assert sim.alive() and controller.alive()
    assert sim.stop() == 0 and controller.stop() == 0
    assert 'Traceback' not in sim.log() + controller.log()


class Commands:
    """Stands in for the effort publisher: the stamp (ns) of the state each command answers."""

    def __init__(self):
        self.answered = []

    def publish(self, msg):
        self.answered.append(answered_state(msg))


def test_the_cartesian_controller_commands_only_while_active():
    model = load_urdf(BUNDLED_URDF)

    def joint_state(k):
        msg = JointState(name=list(model.joint_names), position=list(model.neutral()), velocity=[0.0] * model.nv)
        msg.header.stamp.sec = k
        return msg
    args = ['--ros-args', '-p', f'urdf_file:={BUNDLED_URDF}', '-p', 'autostart:=false', '-p', 'state_timeout:=1e-9']
    with in_process_ros(args, domain_id(__name__)):
        node = CartesianControllerNode()
        try:
            commands = node.answers.publisher = Commands()
            assert node.lifecycle_state() == 'unconfigured'
            node._on_joint_state(joint_state(1))
            node.trigger_configure()
            assert node.lifecycle_state() == 'inactive'
            node._on_joint_state(joint_state(2))
            assert commands.answered == []
            node.trigger_activate()
            node._on_joint_state(joint_state(3))
            assert commands.answered == [3 * 10**9]
            node.trigger_deactivate()
            node._on_joint_state(joint_state(4))
            node._check_stale()   # stale at once (state_timeout): an active node would command zero effort
            assert commands.answered == [3 * 10**9]
            node.trigger_activate()
            node._on_joint_state(joint_state(5))
            node._check_stale()
            assert commands.answered == [3 * 10**9, 5 * 10**9, 5 * 10**9]   # the state's answer, then the stale one
        finally:
            node.destroy_node()
