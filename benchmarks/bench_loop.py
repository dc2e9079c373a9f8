"""The closed loop over ROS against the transport floor, at several joint-state rates.

    python benchmarks/bench_loop.py [--rates 250 500 1000] [--duration 5] [--executors single events] [--runs N]
                                    [--store]
    python benchmarks/bench_loop.py --trajectory-points 100000

The second form measures bounded work per message instead: the in-process time to deserialize a
trajectory of that many points and turn it into the controller's reference, and, over DDS, the longest
time the controller goes without a command (joint states at 1 kHz) while that trajectory arrives.

Per rate and executor, in one run:
- floor: two do-nothing rclpy processes; one publishes a 7-joint sensor_msgs/JointState at the rate (a
  timer on the steady clock), the other answers each with a 7-value std_msgs/Float64MultiArray;
- package: the simulator, the computed-torque controller and the trajectory publisher as separate
  processes with the bundled config (publish_rate = rate, integration at max(rate, 1 kHz)).
Both loops are measured the same way, inside the processes (this script starts them in an instrumented
wrapper): the state side records the wall time and key of each joint state it publishes (the echo's
counter; the simulator's stamp) and the wall time and first value of each command it receives; the
answering side records, for each command it publishes from its joint-state callback, the key of the
state it answers and the command's first value, and the wall time of the whole callback (cb us); the
controller also the part before its command is published (comp us: mapping, reference sampling and the
control law, what it reports on ~/compute_time_us). age99: p99 of (receipt - publish) of the states the
answering side takes; behind: mean/max of the newer states published by then (a depth-1 subscription
should take the newest: 0). A state is answered when its command reached the state side; its latency is that
arrival minus the state's publish (state stamp -> the simulator receiving the answering command).
Real-time factor: sim time over wall time across the window (the floor has no sim time). CPU: the time each
process ran (user + system, from /proc) over the window, in % of one core: what the loop costs, whatever the load.
Each package figure is also given as a ratio to the floor at the same rate and executor. Timings are
from one run on whatever machine runs this: compare ratios, and note the load (printed with each table).
With ``--runs N`` the table runs N times and ends with the README row (``readme_rows.py``): at 1 kHz, per executor,
the medians over the runs of the controller's comp us and of its callback's time against the floor's.
"""
import argparse
import itertools
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

from robot_dynamics_ros.commands.processes import isolated_ros_env, stop_node

import readme_rows

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIG = os.path.join(ROOT, 'config', 'arm7.yaml')
URDF = os.path.join(ROOT, 'urdf', 'arm7.urdf')
NAMES = [f'arm7_joint{i}' for i in range(1, 8)]
EXECUTORS = {'single': 'SingleThreadedExecutor', 'events': 'EventsExecutor'}
EXECUTOR_PARAMETER = {'single': 'single_threaded', 'events': 'events'}   # the nodes' `executor` parameter


# ---- the processes (run by this file with --role) -------------------------------------------------

def make_executor(kind):
    if kind == 'events':
        from rclpy.experimental import EventsExecutor
        return EventsExecutor()
    from rclpy.executors import SingleThreadedExecutor
    return SingleThreadedExecutor()


def spin_until_signal(node, executor):
    stop = []

    def on_signal(signum, frame):   # the spin loop sees it within its 0.1 s timeout
        stop.append(signum)
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    executor.add_node(node)
    while not stop:
        executor.spin_once(timeout_sec=0.1)


def echo_state_side(args, record):
    """Publishes joint states at args.rate (position[0] = a counter, the key of the state) and records
    publishes and command arrivals."""
    import rclpy
    from rclpy.clock import Clock, ClockType
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray
    rclpy.init(args=[])
    node = rclpy.create_node('echo_state_side')
    publisher = node.create_publisher(JointState, 'joint_states', 10)
    msg = JointState(name=NAMES, position=[0.0] * 7, velocity=[0.0] * 7, effort=[0.0] * 7)
    count = [0]

    def publish():
        count[0] += 1
        msg.header.stamp = node.get_clock().now().to_msg()
        msg.position[0] = float(count[0])
        publisher.publish(msg)
        record['publish'].append((time.monotonic(), count[0]))

    node.create_subscription(Float64MultiArray, 'effort_controller/commands',
                             lambda m: record['command'].append((time.monotonic(), m.data[0])), 1)
    node.create_timer(1.0 / args.rate, publish, clock=Clock(clock_type=ClockType.STEADY_TIME))
    spin_until_signal(node, make_executor(args.executor))


def echo_answer_side(args, record):
    """Answers each joint state with a 7-value command (the state's positions)."""
    import rclpy
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray
    rclpy.init(args=[])
    node = rclpy.create_node('echo_answer_side')
    publisher = node.create_publisher(Float64MultiArray, 'effort_controller/commands', 10)

    def answer(state):
        record['received'].append((time.monotonic(), state.position[0]))
        started = time.perf_counter()
        publisher.publish(Float64MultiArray(data=list(state.position)))
        record['callback_us'].append((time.perf_counter() - started) * 1e6)
        record['answer'].append((state.position[0], state.position[0]))

    node.create_subscription(JointState, 'joint_states', answer, 1)
    spin_until_signal(node, make_executor(args.executor))


def stamp_ns(stamp):
    return stamp.sec * 10**9 + stamp.nanosec


def package_simulator(args, record):
    """The package's simulator node; its joint-state publishes (key: the stamp) and command arrivals
    (key: the first value) recorded."""
    from rclpy.publisher import Publisher
    from sensor_msgs.msg import JointState
    from robot_dynamics_ros.nodes import node_loop, simulator
    node_class = simulator.SimulatorNode
    publish, on_command = Publisher.publish, node_class._on_command

    def recorded_publish(self, msg):
        publish(self, msg)
        if isinstance(msg, JointState):
            record['publish'].append((time.monotonic(), stamp_ns(msg.header.stamp)))

    def recorded_command(self, msg):
        record['command'].append((time.monotonic(), msg.data[0] if len(msg.data) else None))
        on_command(self, msg)

    Publisher.publish, node_class._on_command = recorded_publish, recorded_command
    node_loop.run(node_class, 'simulator', ['simulator', *args.ros_args])


def package_controller(args, record):
    """The package's controller node; the wall time of its joint-state callback, the part of it before the
    command is published (mapping, reference, control law: what the node reports as compute_time_us) and,
    for each command it publishes there, (state stamp, first value) recorded."""
    from rclpy.publisher import Publisher
    from std_msgs.msg import Float64MultiArray
    from robot_dynamics_ros.nodes import computed_torque_controller, node_loop
    node_class = computed_torque_controller.ControllerNode
    on_state, publish = node_class._on_joint_state, Publisher.publish
    answering = [None, None]   # the stamp of the state being answered, the callback's start

    def timed(self, msg):
        answering[0] = stamp_ns(msg.header.stamp)
        record['received'].append((time.monotonic(), answering[0]))
        started = answering[1] = time.perf_counter()
        on_state(self, msg)
        record['callback_us'].append((time.perf_counter() - started) * 1e6)
        answering[0] = None

    def recorded_publish(self, msg):
        if answering[0] is not None and isinstance(msg, Float64MultiArray):
            record['compute_us'].append((time.perf_counter() - answering[1]) * 1e6)
        publish(self, msg)
        if answering[0] is not None and isinstance(msg, Float64MultiArray):
            record['answer'].append((answering[0], msg.data[0]))

    node_class._on_joint_state, Publisher.publish = timed, recorded_publish
    node_loop.run(node_class, 'computed_torque_controller', ['computed_torque_controller', *args.ros_args])


def package_trajectory_publisher(args, record):
    from robot_dynamics_ros.nodes import node_loop, trajectory_publisher
    node_loop.run(trajectory_publisher.TrajectoryPublisherNode, 'trajectory_publisher',
               ['trajectory_publisher', *args.ros_args])


def publish_trajectory(args, record):
    """Publishes the serialized trajectory in args.out + '.cdr' once a subscriber is there."""
    import rclpy
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from trajectory_msgs.msg import JointTrajectory
    rclpy.init(args=[])
    node = rclpy.create_node('bench_trajectory')
    qos = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
    publisher = node.create_publisher(JointTrajectory, '/computed_torque_controller/joint_trajectory', qos)
    with open(args.out + '.cdr', 'rb') as f:
        data = f.read()
    deadline = time.monotonic() + 30.0
    while publisher.get_subscription_count() == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    record['publish'].append((time.monotonic(), len(data)))
    publisher.publish(data)
    time.sleep(5.0)   # stay matched while the message is delivered


def trajectory_message(points, accelerations=True):
    """A smooth 7-joint trajectory of `points` points at 1 kHz around the bundled config's initial pose."""
    from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint
    from builtin_interfaces.msg import Duration
    times = 1.0 + np.arange(points) * 1e-3
    center = np.array([0.0, 0.0, 0.0, -1.5708, 0.0, 1.8675, 0.0])
    omega = 2 * np.pi * 0.2
    q = center + 0.1 * np.sin(omega * times)[:, None]
    qd = 0.1 * omega * np.cos(omega * times)[:, None] * np.ones(7)
    qdd = -0.1 * omega**2 * np.sin(omega * times)[:, None] * np.ones(7)
    msg = JointTrajectory(joint_names=NAMES)
    for k, t in enumerate(times):
        ns = int(round(t * 1e9))
        msg.points.append(JointTrajectoryPoint(
            positions=q[k].tolist(), velocities=qd[k].tolist(),
            accelerations=qdd[k].tolist() if accelerations else [],
            time_from_start=Duration(sec=ns // 10**9, nanosec=ns % 10**9)))
    return msg


def trajectory_timings(points):
    """In-process time to turn a serialized `points`-point message into the controller's reference (no ROS
    transport): reading it (NumPy CDR reader; rclpy's deserialization for comparison) and building the reference."""
    from rclpy.serialization import deserialize_message, serialize_message
    from trajectory_msgs.msg import JointTrajectory
    from robot_dynamics_ros.control.references import TrajectoryReference
    from robot_dynamics_ros.nodes.joint_trajectories import model_columns, trajectory_fields
    data = serialize_message(trajectory_message(points))
    t0 = time.perf_counter()
    _, names, times, fields = trajectory_fields(data)
    positions, velocities, accelerations = model_columns(names, fields, NAMES)
    t1 = time.perf_counter()
    TrajectoryReference(times, positions, velocities, accelerations)
    t2 = time.perf_counter()
    deserialize_message(data, JointTrajectory)
    t3 = time.perf_counter()
    return {'arrays_ms': (t1 - t0) * 1e3, 'reference_ms': (t2 - t1) * 1e3, 'rclpy_deserialize_ms': (t3 - t2) * 1e3}


def command_gap(points, domain, rate=1000.0, settle=3.0, after=3.0):
    """The controller as a process answering joint states at `rate` from this process; a `points`-point
    trajectory arrives from a third process. Returns the longest time without a command before and after
    it arrives, and the controller log's line about the trajectory."""
    import rclpy
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64MultiArray
    workdir = tempfile.mkdtemp(prefix='bench_loop_gap_')
    env = isolated_ros_env(domain)
    os.environ.update({k: env[k] for k in ('ROS_DOMAIN_ID', 'ROS_AUTOMATIC_DISCOVERY_RANGE')})
    with open(os.path.join(workdir, 'publish-trajectory.json.cdr'), 'wb') as f:
        f.write(serialize_message(trajectory_message(points)))
    ros_args = ['--ros-args', '--params-file', CONFIG, '-p', f'urdf_file:={URDF}', '-p', 'state_timeout:=10.0',
                '-p', f'max_trajectory_points:={max(points, 100000)}']
    controller, _ = start('controller', workdir, env, ['--', *ros_args])
    rclpy.init(args=[])
    node = rclpy.create_node('bench_gap_probe')
    states = node.create_publisher(JointState, 'joint_states', 10)
    arrivals = []
    node.create_subscription(Float64MultiArray, 'effort_controller/commands',
                             lambda m: arrivals.append(time.monotonic()), 10)
    msg = JointState(name=NAMES, position=[0.0, 0.0, 0.0, -1.5708, 0.0, 1.8675, 0.0], velocity=[0.0] * 7)
    count, failed = [0], []

    def publish():
        count[0] += 1
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(count[0] * 10**6, 10**9)
        try:
            states.publish(msg)
        except Exception as e:   # noqa: BLE001  (a DDS write that fails under load is counted, not fatal)
            failed.append(str(e))

    node.create_timer(1.0 / rate, publish)
    spin = rclpy.executors.SingleThreadedExecutor()
    spin.add_node(node)
    deadline = time.monotonic() + 60.0
    while not arrivals and time.monotonic() < deadline:
        spin.spin_once(timeout_sec=0.01)
    end = time.monotonic() + settle
    while time.monotonic() < end:
        spin.spin_once(timeout_sec=0.01)
    sent = time.monotonic()
    publisher, _ = start('publish-trajectory', workdir, env, [])
    end = time.monotonic() + 90.0   # until the controller says it follows (or rejected) it, and `after` more
    while time.monotonic() < end:
        spin.spin_once(timeout_sec=0.01)
        if end - time.monotonic() > after and re.search('following a trajectory|rejected', read_log(workdir, 'controller')):
            end = time.monotonic() + after
    publisher.wait(30)
    controller.send_signal(signal.SIGINT)
    controller.wait(60)
    node.destroy_node()
    rclpy.try_shutdown()
    arrivals = np.array(arrivals)
    gaps = np.diff(arrivals)
    before = gaps[(arrivals[1:] > arrivals[0] + 1.0) & (arrivals[1:] < sent)]
    later = gaps[arrivals[1:] >= sent]
    log = read_log(workdir, 'controller')
    line = next((l for l in log.splitlines() if 'trajectory' in l and ('following' in l or 'rejected' in l)), '')
    return {'gap_before_ms': before.max() * 1e3 if before.size else np.nan,
            'gap_after_ms': later.max() * 1e3 if later.size else np.nan,
            'commands_after': int(later.size), 'failed_state_publishes': len(failed), 'log': line.strip()}


ROLES = {'echo-state': echo_state_side, 'echo-answer': echo_answer_side, 'simulator': package_simulator,
         'controller': package_controller, 'trajectory': package_trajectory_publisher,
         'publish-trajectory': publish_trajectory}


def run_role(args):
    record = {'publish': [], 'command': [], 'answer': [], 'callback_us': [], 'compute_us': [], 'received': []}
    try:
        ROLES[args.role](args, record)
    finally:
        with open(args.out, 'w') as f:
            json.dump(record, f)


# ---- the benchmark --------------------------------------------------------------------------------

def start(role, workdir, env, extra):
    out = os.path.join(workdir, f'{role}.json')
    log = open(os.path.join(workdir, f'{role}.log'), 'w')
    command = [sys.executable, os.path.abspath(__file__), '--role', role, '--out', out, *extra]
    return subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True), out


def read_log(workdir, role):
    with open(os.path.join(workdir, f'{role}.log')) as f:
        return f.read()


def run_case(case, rate, executor, duration, warmup, domain):
    """Start the processes of one case, let them run, stop them with SIGINT; the records and logs."""
    workdir = tempfile.mkdtemp(prefix=f'bench_loop_{case}_{rate:g}_{executor}_')
    env = isolated_ros_env(domain)
    if case == 'floor':
        roles = {'echo-state': ['--rate', str(rate), '--executor', executor],
                 'echo-answer': ['--executor', executor]}
    else:
        ros_args = ['--ros-args', '--params-file', CONFIG, '-p', f'urdf_file:={URDF}', '-p', f'executor:={EXECUTOR_PARAMETER[executor]}']
        roles = {'simulator': ros_args + ['-p', f'publish_rate:={rate:g}', '-p', f'rate:={max(rate, 1000.0):g}'],
                 'controller': ros_args, 'trajectory': ros_args}
    processes = {role: start(role, workdir, env, ['--', *extra] if case != 'floor' else extra)
                 for role, extra in roles.items()}
    state_role = 'echo-state' if case == 'floor' else 'simulator'
    deadline = time.monotonic() + 60.0
    started = False
    while time.monotonic() < deadline and not started:   # the loop runs once the state side hears commands
        time.sleep(0.2)
        started = (re.search('first (effort )?command received', read_log(workdir, state_role)) if case == 'package'
                   else time.monotonic() > deadline - 57.0)
    window = (time.monotonic() + warmup, time.monotonic() + warmup + duration)
    time.sleep(max(0.0, window[0] - time.monotonic()))
    cpu_start = {role: cpu_seconds(process.pid) for role, (process, _) in processes.items()}
    time.sleep(max(0.0, window[1] - time.monotonic()))
    cpu = {role: (cpu_seconds(process.pid) - cpu_start[role]) / duration
           for role, (process, _) in processes.items()}
    time.sleep(0.2)
    for process, _ in processes.values():
        process.send_signal(signal.SIGINT)
    records, logs = {}, {}
    for role, (process, out) in processes.items():
        stop_node(process, timeout=20)
        logs[role] = read_log(workdir, role)
        try:
            with open(out) as f:
                records[role] = json.load(f)
        except (OSError, ValueError):
            records[role] = None
    if not started:
        return None, logs
    figures = measure(records[state_role], records['echo-answer' if case == 'floor' else 'controller'], window,
                      sim_time=case == 'package')
    if figures is not None:
        figures['cpu'] = cpu
    return figures, logs


def cpu_seconds(pid):
    """CPU time (user + system) a process has used so far; NaN where /proc is not there."""
    try:
        with open(f'/proc/{pid}/stat') as f:
            fields = f.read().rpartition(')')[2].split()
    except OSError:
        return float('nan')
    return (int(fields[11]) + int(fields[12])) / os.sysconf('SC_CLK_TCK')   # utime, stime


def measure(state_side, answer_side, window, sim_time):
    """Figures over the window. A published state (wall time, key) is answered when the answering side
    published a command for its key and the state side received that command (matched by its first value)."""
    if state_side is None or answer_side is None:
        return None
    published = [(wall, key) for wall, key in state_side['publish'] if window[0] <= wall <= window[1]]
    if len(published) < 2:
        return None
    answer_of = {}
    for key, value in answer_side['answer']:
        answer_of.setdefault(key, value)
    arrival_of = {}
    for wall, value in state_side['command']:
        arrival_of.setdefault(value, wall)
    first_publish = {}
    for wall, key in published:
        first_publish.setdefault(key, wall)
    latencies = []
    for key, wall in first_publish.items():
        arrival = arrival_of.get(answer_of.get(key, np.nan))
        if arrival is not None and arrival >= wall:
            latencies.append(arrival - wall)
    # How old the state the answering side takes is: receipt minus publish, and how many newer states had
    # been published by then (a depth-1 subscription should hand over the newest: 0).
    publish_walls = np.array([wall for wall, _ in published])
    ages, behind = [], []
    for wall, key in answer_side['received']:
        sent = first_publish.get(key)
        if sent is not None and window[0] <= wall <= window[1]:
            ages.append(wall - sent)
            behind.append(np.searchsorted(publish_walls, wall) - np.searchsorted(publish_walls, sent, 'right'))
    span = window[1] - window[0]
    result = {'age_p99_ms': np.percentile(ages, 99) * 1e3 if ages else np.nan,
              'behind_mean': np.mean(behind) if behind else np.nan,
              'behind_max': max(behind) if behind else np.nan,
'published_hz': len(published) / span, 'answered_hz': len(latencies) / span,
              'answered_fraction': len(latencies) / len(published),
              'latency_p50_ms': np.percentile(latencies, 50) * 1e3 if latencies else np.nan,
              'latency_p99_ms': np.percentile(latencies, 99) * 1e3 if latencies else np.nan,
              'callback_us': np.mean(answer_side['callback_us']) if answer_side['callback_us'] else np.nan,
              'compute_us': np.mean(answer_side['compute_us']) if answer_side.get('compute_us') else np.nan,
              'real_time_factor': np.nan}
    if sim_time:   # the package's keys are the stamps: sim time in ns
        (wall0, key0), (wall1, key1) = published[0], published[-1]
        result['real_time_factor'] = (key1 - key0) * 1e-9 / (wall1 - wall0)
    return result


def executor_used(logs, executor):
    """Which executor the package's nodes say they used (older versions always used the single-threaded one)."""
    used = set()
    for role in ('simulator', 'controller', 'trajectory'):
        lines = [line for line in logs.get(role, '').splitlines() if 'executor' in line.lower()]
        used.add(lines[0].split('executor')[-1].strip(' :') if lines else 'SingleThreadedExecutor (not logged)')
    return ', '.join(sorted(used))


def load_average():
    return ' '.join(f'{x:.2f}' for x in os.getloadavg())


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--rates', type=float, nargs='+', default=[250.0, 500.0, 1000.0])
    parser.add_argument('--duration', type=float, default=5.0, help='measured seconds per case')
    parser.add_argument('--warmup', type=float, default=1.0, help='seconds after the loop starts not measured')
    parser.add_argument('--executors', nargs='+', default=None, choices=sorted(EXECUTORS),
                        help='default: both where rclpy has the EventsExecutor')
    parser.add_argument('--trajectory-points', type=int, default=0,
                        help='instead of the loop: how long the controller stops commanding while a trajectory of '
                             'this many points arrives (and, where the package has it, the in-process conversion time)')
    parser.add_argument('--json', default=None, help='also write the figures to this file')
    parser.add_argument('--role', choices=sorted(ROLES), help=argparse.SUPPRESS)
    parser.add_argument('--out', help=argparse.SUPPRESS)
    parser.add_argument('--rate', type=float, help=argparse.SUPPRESS)
    parser.add_argument('--executor', default='single', help=argparse.SUPPRESS)
    parser.add_argument('ros_args', nargs='*', help=argparse.SUPPRESS)
    readme_rows.add_arguments(parser, runs=3)
    args = parser.parse_args()
    if args.role:
        return run_role(args)
    if args.duration <= 0 or args.warmup < 0 or min(args.rates) <= 0:
        parser.error('--duration and --rates must be positive, --warmup non-negative')
    if args.trajectory_points > 0:
        try:
            print(f"in process, {args.trajectory_points} points: " + ', '.join(
                f"{k} {v:.1f}" for k, v in trajectory_timings(args.trajectory_points).items()))
        except ImportError as e:
            print(f"in-process conversion not measured: {e}")
        print(f"over DDS at 1 kHz joint states: {command_gap(args.trajectory_points, 1 + os.getpid() % 100)}")
        return 0
    executors = args.executors
    if executors is None:
        try:
            from rclpy.experimental import EventsExecutor  # noqa: F401
            executors = ['single', 'events']
        except ImportError:
            executors = ['single']
    load = os.getloadavg()[0]
    print(f"bench_loop: {args.duration:g} s measured per case after {args.warmup:g} s warm-up; "
          f"load average before: {load_average()}")
    header = (f"{'case':<9}{'rate':>6} {'executor':<24}{'RTF':>6}{'pub/s':>8}{'ans/s':>8}{'ans%':>6}"
              f"{'p50 ms':>8}{'p99 ms':>8}{'cb us':>8}{'comp us':>8}{'age99':>7}{'behind':>11}   ratios to floor: pub ans p50 p99 cb   CPU per process (% of a core)")
    print(header)
    results = []
    domain = 1 + (os.getpid() * 13) % 100
    for rate, executor, _ in itertools.product(args.rates, executors, range(args.runs)):
        floor = None
        for case in ('floor', 'package'):
            domain = domain % 100 + 1
            figures, logs = run_case(case, rate, executor, args.duration, args.warmup, domain)
            used = EXECUTORS[executor] if case == 'floor' else executor_used(logs, executor)
            if figures is None:
                print(f"{case:<9}{rate:>6g} {used:<24} did not run; last log lines:")
                for role, text in logs.items():
                    print(f"  {role}: " + ' | '.join(text.strip().splitlines()[-3:]))
                continue
            ratios = ''
            if case == 'floor':
                floor = figures
            elif floor is not None:
                ratios = '   ' + ' '.join(f"{figures[k] / floor[k]:.2f}" for k in (
                    'published_hz', 'answered_hz', 'latency_p50_ms', 'latency_p99_ms', 'callback_us'))
            rtf = f"{figures['real_time_factor']:.3f}" if np.isfinite(figures['real_time_factor']) else '-'
            print(f"{case:<9}{rate:>6g} {used:<24}{rtf:>6}{figures['published_hz']:>8.0f}"
                  f"{figures['answered_hz']:>8.0f}{100 * figures['answered_fraction']:>6.1f}"
                  f"{figures['latency_p50_ms']:>8.2f}{figures['latency_p99_ms']:>8.2f}"
                  f"{figures['callback_us']:>8.0f}{figures['compute_us']:>8.0f}{figures['age_p99_ms']:>7.2f}"
                  f"{figures['behind_mean']:>6.2f}/{figures['behind_max']:<4}{ratios}   "
                  + ' '.join(f"{role} {100 * used:.0f}" for role, used in figures['cpu'].items()), flush=True)
            results.append({'case': case, 'rate': rate, 'executor': used, 'requested': executor, **figures})
    print(f"load average after: {load_average()}")
    if args.json:
        with open(args.json, 'w') as f:
            json.dump(results, f, indent=1)
    figures = []
    for executor in executors:
        package, floor = ([r for r in results if (r['rate'], r['case'], r['requested']) == (1000.0, case, executor)]
                          for case in ('package', 'floor'))
        if package and floor:
            comp, callback = (np.median([r[k] for r in package]) for k in ('compute_us', 'callback_us'))
            figures.append(f"{executor}: {comp:.0f} us (callback {callback:.0f} us, "
                           f"{callback / np.median([r['callback_us'] for r in floor]):.1f}x the floor's)")
    if figures:
        readme_rows.report('bench_loop.py', [readme_rows.row(
            'bench_loop.py', 'controller compute per update over ROS at 1 kHz (`comp us`); its whole callback against '
            "a do-nothing rclpy answer's (the floor)", '; '.join(figures))], args.runs, args.store, load)


if __name__ == '__main__':
    sys.exit(main())
