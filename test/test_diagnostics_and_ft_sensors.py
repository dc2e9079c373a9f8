"""Over DDS: /diagnostics, where the simulator and the computed-torque controller each publish their status once a
second (diagnostic_msgs/DiagnosticArray, as rqt_robot_monitor reads it) with the loop's rate and what is wrong (here,
the simulator's commands stop when the controller is stopped); and the simulator's force/torque sensors."""
import time

from ros_helpers import ros_domain, start  # noqa: F401  (fixtures)
from test_lockstep import STARTUP, node_args

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus  # noqa: E402  (ros_helpers skipped without rclpy)
from sensor_msgs.msg import JointState  # noqa: E402

# s wall for the nodes' first answers: the first test to start them compiles their numba kernels (minutes on a loaded
# 2-core machine with a cold cache)
COMPILING = 600.0
SIMULATOR, CONTROLLER = 'simulator: simulation', 'computed_torque_controller: computed-torque control'
OK, WARN = DiagnosticStatus.OK, DiagnosticStatus.WARN   # bytes


def test_the_loop_reports_its_rate_and_a_stale_command_on_diagnostics(ros_domain, start):
    """Both statuses arrive with the robot's name as hardware_id. The simulator's 'steps per second' agrees, within
    30 % (the windows are not aligned to its ticks), with the sim time its joint states' stamps (sim time, with
    publish_clock) advanced per wall second over the same period, divided by the step (1 ms). Once the controller is stopped, the command goes
    stale after command_timeout (0.5 s of sim time) and the simulator's status turns WARN, saying so."""
    _, probe = ros_domain
    statuses = []
    arrivals = []
    probe.node.create_subscription(
        DiagnosticArray, '/diagnostics', lambda msg: statuses.extend((time.monotonic(), s) for s in msg.status), 100)
    probe.node.create_subscription(JointState, 'joint_states', lambda msg: arrivals.append(
        (time.monotonic(), msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec)), 100)
    sim = start('simulator', **node_args(('publish_clock', True)))
    controller = start('computed_torque_controller', **node_args())

    def latest(name):
        found = [status for _, status in statuses if status.name == name]
        return found[-1] if found else None

    def ok_and_running():
        return all(latest(name) is not None and latest(name).level == OK and latest(name).message != 'waiting for '
                   'the first command' for name in (SIMULATOR, CONTROLLER)) and latest(CONTROLLER).message == 'commanding'
    assert probe.spin_until(ok_and_running, COMPILING), sim.log() + controller.log()
    probe.spin_for(3.0)
    _, status = next((wall, status) for wall, status in reversed(statuses) if status.name == SIMULATOR)
    values = {item.key: item.value for item in status.values}
    wall = [when for when, s in statuses if s.name == SIMULATOR][-2:]
    window = [(when, stamp) for when, stamp in arrivals if wall[0] <= when <= wall[1]]
    steps = (window[-1][1] - window[0][1]) / (window[-1][0] - window[0][0]) / 1e-3
    print(f"diagnostics: {values['steps per second']} steps/s; the stamps advanced {steps:.0f} steps per second")
    assert status.hardware_id == 'arm7' and latest(CONTROLLER).hardware_id == 'arm7'
    assert abs(float(values['steps per second']) - steps) <= 0.3 * steps, (values, steps)
    assert int(values['commands received']) > 0
    assert controller.stop() == 0
    # (a loaded machine may first say 'cannot keep up', also WARN: the stale command is what must come)
    assert probe.spin_until(lambda: latest(SIMULATOR).message == 'no command for over command_timeout: brake',
                            STARTUP), (latest(SIMULATOR), sim.log())
    assert latest(SIMULATOR).level == WARN
    assert sim.stop() == 0


def test_a_force_torque_sensor_publishes_pinocchios_joint_force(ros_domain, start):
    """The simulator with ft_sensors [arm7_joint6], waiting for its first command (still, so the wrench is static):
    ~/ft/arm7_joint6 carries, in the joint's child link frame, Pinocchio's data.f of that joint after rnea at the
    published joint state with zero velocity and acceleration, to 1e-9 N (m)."""
    from geometry_msgs.msg import WrenchStamped
    import numpy as np
    import pinocchio as pin
    from conftest import BUNDLED_URDF
    _, probe = ros_domain
    wrenches, states = [], []
    probe.node.create_subscription(WrenchStamped, '/simulator/ft/arm7_joint6', wrenches.append, 10)
    probe.node.create_subscription(JointState, 'joint_states', states.append, 10)
    sim = start('simulator', **node_args(('ft_sensors', '[arm7_joint6]')))
    assert probe.spin_until(lambda: wrenches and states, COMPILING), sim.log()
    model = pin.buildModelFromUrdf(BUNDLED_URDF)
    data = model.createData()
    q = pin.neutral(model)
    for name, position in zip(states[-1].name, states[-1].position):
        q[model.joints[model.getJointId(name)].idx_q] = position
    pin.rnea(model, data, q, np.zeros(model.nv), np.zeros(model.nv))
    expected = data.f[model.getJointId('arm7_joint6')]
    wrench = wrenches[-1].wrench
    assert wrenches[-1].header.frame_id == 'arm7_link6'   # the joint's child link
    assert np.allclose([wrench.force.x, wrench.force.y, wrench.force.z], expected.linear, atol=1e-9)
    assert np.allclose([wrench.torque.x, wrench.torque.y, wrench.torque.z], expected.angular, atol=1e-9)
    assert sim.stop() == 0


def test_the_legged_controller_reports_on_diagnostics(ros_domain, start):
    """The bundled quadruped standing under the legged controller (as launch/legged.launch.py starts them): its
    status is OK with commands flowing; once the simulator is stopped, it turns WARN: stale joint states."""
    import os
    from conftest import ROOT
    from robot_dynamics_ros.resources import legged_parameter_files
    urdf = os.path.join(ROOT, 'urdf', 'quadruped.urdf')
    files = [arg for file in legged_parameter_files(urdf) for arg in ('--params-file', file)]
    _, probe = ros_domain
    statuses = []
    probe.node.create_subscription(DiagnosticArray, '/diagnostics', lambda msg: statuses.extend(msg.status), 100)
    sim = start('simulator', params=[('urdf_file', urdf)], extra_args=files)
    controller = start('legged_controller', params=[('urdf_file', urdf)],
                       extra_args=files + ['-r', 'odom:=/simulator/odom'])
    name = 'legged_controller: legged control'

    def latest():
        found = [status for status in statuses if status.name == name]
        return found[-1] if found else None

    def commanding():
        values = {item.key: item.value for item in latest().values} if latest() is not None else {}
        return latest() is not None and latest().level == OK and float(values['commands per second']) > 0
    assert probe.spin_until(commanding, COMPILING), sim.log() + controller.log()
    assert latest().hardware_id == 'quadruped' and latest().message.endswith('control')
    assert sim.stop() == 0
    assert probe.spin_until(lambda: latest().level == WARN, STARTUP), controller.log()
    assert latest().message == 'joint states stale: not commanding'
    assert controller.stop() == 0
