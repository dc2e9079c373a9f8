"""``robot-dynamics record``: record an identification experiment as a rosbag2 (MCAP).

Runs the simulator and the computed-torque controller (``resources.parameter_files``: any URDF runs without a
config) as processes on the caller's ROS domain (or ``--domain-id``, ``--isolated``), and the
trajectory_publisher with the trajectory file that ``robot-dynamics excite`` writes (waypoints, published to
the controller's ~/joint_trajectory), URDF <mimic> joints coupled to their masters unless ``--no-mimic`` (as the
trajectory was excited: on a coupled model it names the independent joints); the simulator starts at rest at the first
waypoint and applies the URDF's damping and Coulomb friction, as identification with --friction expects.
This process records /joint_states (positions, velocities, applied efforts) into a rosbag2 directory until
the trajectory has ended, then stops the nodes with SIGINT. The simulation starts only once the recorder hears
the simulator and the controller has the trajectory (``_start_in_order``), and a recording with lost joint
states is an error. On SIGINT or SIGTERM it stops the nodes, closes the bag (readable, with its metadata),
says how much of the experiment it holds, and exits with 128 + the signal's number (130, 143). The bag's
metadata carries the experiment's length in sim time (custom data ``EXPERIMENT_SECONDS``), from which
``identify`` tells a recording that stopped short.
"""
import argparse
import os
import sys
import tempfile

import numpy as np
import yaml

from .. import load_urdf, stopping
from ..errors import RobotDynamicsError
from ..model.srdf import load_srdf, stance_configuration
from ..parameters.recordings import EXPERIMENT_SECONDS, SAMPLING
from ..resources import bundled_urdf, parameter_files
from .bringup import add_domain_arguments
from .processes import describe_domain, loop_environment, start_node, stop_node, use_environment

SETTLE = 0.5  # s of sim time recorded after the trajectory's end


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('trajectory', help="trajectory file written by 'robot-dynamics excite' (.yaml)")
    parser.add_argument('-o', '--output', required=True, help='rosbag2 directory to create (MCAP storage)')
    parser.add_argument('--urdf', default=None, help='URDF or xacro file (default: bundled arm7.urdf)')
    parser.add_argument('--srdf', default=None,
                        help="the robot's SRDF (MoveIt's semantic description), passed to the nodes (srdf_file)")
    parser.add_argument('--config', default=None,
                        help='ROS 2 parameters YAML; overrides any parameter (default: none, all from the URDF)')
    parser.add_argument('--mimic', action=argparse.BooleanOptionalAction, default=True,
                        help="couple each URDF <mimic> joint to its master (the nodes' parameter mimic; the default, "
                             "as excite's); --no-mimic: every joint is a degree of freedom of its own")
    add_domain_arguments(parser)
    parser.add_argument('--startup-timeout', type=float, default=60.0,
                        help='wall seconds to wait for the first joint state')


def read_trajectory(path):
    """(joint names, waypoint times, (N, n) waypoints) of an excite trajectory file; ValueError if malformed."""
    with open(path, encoding='utf-8') as f:
        document = yaml.safe_load(f)
    try:
        params = document['trajectory_publisher']['ros__parameters']
        names, times = list(params['joints']), np.asarray(params['waypoint_times'], dtype=float)
        waypoints = np.asarray(params['waypoints'], dtype=float).reshape(len(times), len(names))
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"{path}: not a trajectory_publisher waypoints file from 'robot-dynamics excite' ({e})")
    return names, times, waypoints


def _start_in_order(recorder, processes, ros_args, env, log_dir, timeout):
    """Start the nodes so that the recording holds the whole experiment: the simulator first (it holds still
    until the first command); once the recorder hears it, pause it, start the controller and the trajectory
    publisher, and resume when the controller has the trajectory. Without this order the simulation can
    run for seconds before the recorder is matched or the trajectory arrives. False (with the reason on
    stderr) when a step times out or a node exits."""
    def start(name):
        processes[name] = start_node(name, ros_args[name], env, os.path.join(log_dir, name + '.log'))

    def controller_has_trajectory():
        with open(os.path.join(log_dir, 'computed_torque_controller.log')) as f:
            return 'following a trajectory' in f.read()

    def wait_for(what, condition):
        if recorder.spin_until(lambda: condition() or stopping.received()
                               or any(p.poll() is not None for p in processes.values()),
                               timeout) and all(p.poll() is None for p in processes.values()):
            return not stopping.received()
        print(f"error: no {what} within {timeout:g} s, or a node exited; logs in {log_dir}", file=sys.stderr)
        return False
    start('simulator')
    if not (wait_for('joint state from the simulator', lambda: recorder.heard)
            and wait_for('pause service', lambda: recorder.request_pause(True))):
        return False
    start('computed_torque_controller')
    start('trajectory_publisher')
    return (wait_for('trajectory at the controller', controller_has_trajectory)
            and wait_for('pause service', lambda: recorder.request_pause(False)))


def run(args: argparse.Namespace) -> int:
    try:
        from rosbags.rosbag2 import StoragePlugin, Writer
        from rosbags.typesys import Stores, get_typestore
    except ImportError:
        print("robot-dynamics record needs rosbags: pip install 'robot_dynamics_ros[bag]'", file=sys.stderr)
        return 2
    try:
        from .bag_recorder import JointStateBagRecorder  # rclpy and the message packages
        from ..nodes.simulator import LOCKSTEP_REPUBLISH
        from ..nodes.launch_support import LOCKSTEP_STATE_TIMEOUT
    except ImportError as e:
        print(f"robot-dynamics record needs rclpy and the ROS 2 message packages ({e}): "
              "pip install 'robot_dynamics_ros[ros]' or source a ROS 2 installation", file=sys.stderr)
        return 2
    urdf = os.path.abspath(args.urdf or bundled_urdf())
    if os.path.exists(args.output):
        print(f"{args.output} exists; choose a new rosbag2 directory", file=sys.stderr)
        return 2
    try:
        if args.config and not os.path.isfile(args.config):
            raise FileNotFoundError(f"config file not found: {os.path.abspath(args.config)}")
        names, times, waypoints = read_trajectory(args.trajectory)
        model = load_urdf(urdf, mimic=args.mimic)
        if args.srdf:
            stance_configuration(model, load_srdf(args.srdf))   # one line here for an SRDF that does not fit
        coupled = sorted(set(names) & set(model.mimic)) if model.coupling is not None else []
        if coupled:
            raise ValueError(f"{args.trajectory} names the mimic joints {coupled}, which follow their masters here: "
                             "excite it without --no-mimic, or record with --no-mimic")
        missing = [name for name in model.joint_names if name not in names]
        if missing:
            raise ValueError(f"{args.trajectory} has no waypoints for the joints {missing}")
        initial = waypoints[0][[names.index(name) for name in model.joint_names]]
        env = loop_environment(args.domain_id, args.isolated)
    except (OSError, ValueError, RobotDynamicsError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    use_environment(env)
    log_dir = tempfile.mkdtemp(prefix='robot_dynamics_record_')
    files = parameter_files(urdf, args.config)
    common = [arg for file in files for arg in ('--params-file', file)] + ['-p', f'urdf_file:={urdf}']
    if args.srdf:
        common += ['-p', f'srdf_file:={os.path.abspath(args.srdf)}']
    if not args.mimic:
        common += ['-p', 'mimic:=false']
    start_time = 1.0  # trajectory_publisher's start_time default: the reference starts 1 s after receipt
    sim_seconds = start_time + times[-1] + SETTLE
    # Lockstep, a state every integration step: every state answered by its command whatever the machine's load,
    # and each recorded effort applied over the one step (1 ms) before its state. Integrator and rate are fixed
    # whatever the config says, so that what the bag says (SAMPLING 'simulator': semi-implicit Euler, one state
    # per step) is true: identify then differentiates as the simulator integrated (parameters/signals.py).
    # The lockstep loop does not wait for the recorder, so the simulator pauses at the experiment's end and both
    # ends of joint_states keep every state it publishes (the experiment's, and those sent again while it waits or
    # is paused): a recorder that falls behind under load catches up instead of losing states.
    end = sim_seconds + 0.002   # the first recorded state is one 1 ms step in
    depth = int(np.ceil(end * 1000.0)) + int(np.ceil(4 * args.startup_timeout / LOCKSTEP_REPUBLISH))
    ros_args = {'simulator': common + ['-p', f"initial_positions:={[float(x) for x in initial]}",
                                       '-p', 'sync:=lockstep', '-p', 'rate:=1000.0', '-p', 'publish_rate:=1000.0',
                                       '-p', 'integrator:=semi_implicit_euler',
                                       '-p', f'joint_states_depth:={depth}', '-p', f'pause_at_time:={end}',
                                       '-p', 'publish_while_paused:=true'],
                'computed_torque_controller': common + ['-p', f'state_timeout:={LOCKSTEP_STATE_TIMEOUT}'],
                'trajectory_publisher': common + ['--params-file', os.path.abspath(args.trajectory),
                                                  '-p', 'loop:=false']}
    store = get_typestore(Stores.ROS2_HUMBLE)
    print(f"record: {os.path.basename(urdf)} following {args.trajectory} ({times[-1]:.2f} s), "
          f"{describe_domain(env)}, logs in {log_dir}", file=sys.stderr)
    stopping.catch()   # from here a signal ends the recording in order instead of raising where it lands
    with Writer(args.output, version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        writer.set_custom_data(EXPERIMENT_SECONDS, repr(float(sim_seconds)))
        writer.set_custom_data(SAMPLING, 'simulator')
        connection = writer.add_connection('/joint_states', 'sensor_msgs/msg/JointState', typestore=store)
        recorder = JointStateBagRecorder(writer, connection, depth)
        processes = {}
        try:
            finished = _start_in_order(recorder, processes, ros_args, env, log_dir, args.startup_timeout)
            if finished:
                running = (lambda: recorder.recorded_seconds() >= sim_seconds or stopping.received()
                           or any(p.poll() is not None for p in processes.values()))
                finished = recorder.spin_until(running, args.startup_timeout + 10 * sim_seconds)
        finally:
            codes = {name: stop_node(process) for name, process in processes.items()}
            recorder.close()
    complete = finished and recorder.recorded_seconds() >= sim_seconds
    lost = recorder.lost()
    if stopping.received() and not complete:
        print(f"record: stopped by {stopping.received()}: kept {recorder.count} joint states over "
              f"{recorder.recorded_seconds():.3f} s of the experiment's {sim_seconds:.3f} s of sim time "
              f"({recorder.recorded_seconds() / sim_seconds:.0%}) in {args.output}", file=sys.stderr)
    else:
        print(f"recorded {recorder.count} joint states over {recorder.recorded_seconds():.2f} s of sim time "
              f"into {args.output}")
    if lost:
        print(f"error: {lost} joint states were lost (the recorder fell behind); the recording has gaps, "
              "record again on a less loaded machine", file=sys.stderr)
    failed = {name: code for name, code in codes.items() if code != 0}
    for name, code in failed.items():
        with open(os.path.join(log_dir, name + '.log')) as f:
            tail = f.read().strip().splitlines()[-10:]
        print(f"{name} exited with {code}; last lines of its log:\n  " + '\n  '.join(tail), file=sys.stderr)
    if stopping.received() and not complete:
        return stopping.exit_code()
    if not complete:
        print(f"error: the recording stopped before the trajectory's end ({sim_seconds:.2f} s of sim time)",
              file=sys.stderr)
    return 0 if complete and not failed and not lost else 1
