"""The closed loop as real processes over DDS: simulator, computed-torque controller and trajectory
publisher with the bundled config, on an isolated ROS domain with localhost-only discovery."""
import os
import signal
import time

import numpy as np
import yaml

from ros_helpers import ros_domain, start  # noqa: F401  (fixtures)
from conftest import BUNDLED_URDF, ROOT

from sensor_msgs.msg import JointState  # noqa: E402  (ros_helpers skipped the module without rclpy)

CONFIG = os.path.join(ROOT, 'config', 'arm7.yaml')
with open(CONFIG) as f:
    START = np.array(yaml.safe_load(f)['simulator']['ros__parameters']['initial_positions'])
TARGET = START + 0.2      # rad; every joint moves, all stay inside the arm7 limits
TOLERANCE = 0.01          # rad (0.57 deg): with an exact model and no friction the error decays to ~0
TIME_LIMIT = 60.0         # s wall; generous for a loaded machine (sim time runs slower there)
STARTUP = 30.0            # s wall for a node to come up


def node_args(*params):
    return {'params': [('urdf_file', BUNDLED_URDF), *params], 'extra_args': ['--params-file', CONFIG]}


def flat(values):
    return '[' + ','.join(f'{v:.6f}' for v in values) + ']'


def test_closed_loop_reaches_target_and_nodes_exit_0(ros_domain, start):
    _, probe = ros_domain
    states, errors, arrivals = [], [], []

    def on_state(msg):
        states.append(msg)
        arrivals.append(time.monotonic())

    probe.node.create_subscription(JointState, 'joint_states', on_state, 100)
    probe.node.create_subscription(JointState, 'computed_torque_controller/tracking_error', errors.append, 100)
    # Friction is off so that the controller's model is exact: the error must decay to (almost) zero.
    sim = start('simulator', **node_args(('apply_friction', 'false'), ('sync', 'lockstep'), ('publish_rate', 250.0)))
    controller = start('computed_torque_controller', **node_args())
    # Before any reference the controller holds the robot where it is.
    assert probe.spin_until(lambda: states and errors, TIME_LIMIT), f"{sim.log()}\n{controller.log()}"
    assert np.max(np.abs(np.array(states[0].position) - START)) < 0.01
    reference = start('trajectory_publisher', **node_args(
        ('mode', 'waypoints'), ('waypoints', flat(TARGET)), ('waypoint_times', '[1.0]'),
        ('start_time', '0.0'), ('loop', 'false')))

    def arrived():
        return (states and errors and np.max(np.abs(np.array(states[-1].position) - TARGET)) < TOLERANCE
                and np.max(np.abs(errors[-1].position)) < TOLERANCE)

    assert probe.spin_until(arrived, TIME_LIMIT), (
        f"not at the target within {TIME_LIMIT} s: last state {states[-1].position if states else None}, "
        f"last error {errors[-1].position if errors else None}\n{sim.log()}\n{controller.log()}")
    # It followed the reference there (it started 0.2 rad away on every joint) ...
    peak_error = np.max([np.abs(e.position) for e in errors])
    assert 0 < peak_error < 0.1, f"tracking error peaked at {np.degrees(peak_error):.2f} deg"
    # ... and joint states came at a usable rate (lockstep: as fast as the loop goes, on any machine).
    first, last = (m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec for m in (states[0], states[-1]))
    assert last > first
    assert (len(arrivals) - 1) / (arrivals[-1] - arrivals[0]) > 20.0
    assert all(np.all(np.isfinite(m.effort)) for m in states)

    codes = {'simulator': sim.stop(signal.SIGINT), 'computed_torque_controller': controller.stop(signal.SIGTERM),
             'trajectory_publisher': reference.stop(signal.SIGINT)}
    assert codes == dict.fromkeys(codes, 0)
    assert 'stopping (SIGINT)' in sim.log() and 'steps/s' in sim.log()
    assert 'stopping (SIGTERM)' in controller.log()
    assert 'stopping (SIGINT)' in reference.log()
    assert 'Traceback' not in sim.log() + controller.log() + reference.log()


STARTED = {'simulator': 'simulating', 'computed_torque_controller': 'control of',
           'trajectory_publisher': 'publishing a'}


def test_nodes_exit_0_on_sigterm(ros_domain, start):
    """How ros2 launch escalates; SIGINT is covered by the loop test above and test_bad_messages."""
    nodes = [start(name, **node_args()) for name in STARTED]
    for node in nodes:
        assert node.wait_for_log(STARTED[node.name], STARTUP), f"{node.name} did not start:\n{node.log()}"
    for node in nodes:
        assert node.stop(signal.SIGTERM) == 0, node.log()
        assert 'stopping (SIGTERM)' in node.log(), node.log()
        assert 'Traceback' not in node.log()


def test_simulator_pause_and_reset_services(ros_domain, start):
    from std_srvs.srv import SetBool, Trigger
    _, probe = ros_domain
    states = []
    probe.node.create_subscription(JointState, 'joint_states', states.append, 100)
    # No controller: with zero effort the arm moves under gravity; sim time is in the stamps. publish_while_paused:
    # the state keeps coming while paused (test_paused_simulator.py: without it, none does).
    sim = start('simulator', **node_args(('wait_for_command', 'false'), ('publish_rate', 100.0),
                                         ('publish_while_paused', True)))

    def stamp(msg):
        return msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec

    def call(service_type, name, request):
        return probe.call(probe.node.create_client(service_type, name), request, STARTUP, sim.log)

    assert probe.spin_until(lambda: states and stamp(states[-1]) > 0.3, TIME_LIMIT), sim.log()
    moved = np.max(np.abs(np.array(states[-1].position) - START))
    assert moved > 0.01, "the arm should sag under gravity without a controller"

    assert call(SetBool, '/simulator/pause', SetBool.Request(data=True)).success
    probe.spin_for(0.3)
    paused_at = stamp(states[-1])
    received = len(states)
    assert probe.spin_until(lambda: len(states) > received + 5, TIME_LIMIT)
    assert stamp(states[-1]) == paused_at, "sim time advanced while paused"

    assert call(SetBool, '/simulator/pause', SetBool.Request(data=False)).success
    assert call(Trigger, '/simulator/reset', Trigger.Request()).success
    received = len(states)
    assert probe.spin_until(lambda: len(states) > received + 5, TIME_LIMIT)
    # Back at the initial positions (wait_for_command is off, so it sags again from there), time forward.
    assert stamp(states[-1]) >= paused_at
    assert np.max(np.abs(np.array(states[-1].position) - START)) < moved
    assert sim.stop(signal.SIGINT) == 0


def test_bringup_command_runs_the_loop_and_reports(tmp_path):
    import subprocess
    import sys
    from ros_helpers import domain_id
    plot = tmp_path / 'tracking.png'
    result = subprocess.run(
        [sys.executable, '-m', 'robot_dynamics_ros.cli', 'bringup', '--duration', '3', '--plot', str(plot),
         '--domain-id', str(domain_id(11)), '--isolated'], capture_output=True, text=True, timeout=180)
    assert result.returncode == 0, result.stdout + result.stderr
    for line in ('tracking error over', 'arm7_joint7', 'steps/s achieved', 'joint_states received',
                 'compute time per update', 'all nodes exited 0 on SIGINT'):
        assert line in result.stdout, result.stdout
    assert plot.stat().st_size > 0
    # Per-joint 'name RMS max' rows in degrees; the bundled loop stays within ~10 deg (Coulomb friction is
    # not in the controller's model), an unstable loop leaves that far behind.
    rows = [line.split() for line in result.stdout.splitlines() if line.strip().startswith('arm7_joint')]
    assert len(rows) == 7
    assert max(float(row[2]) for row in rows) < 20.0, result.stdout
