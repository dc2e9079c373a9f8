"""``robot-dynamics bringup``: the closed loop of closed_loop.launch.py without a ROS install.

Starts the simulator, the computed-torque controller and the trajectory publisher as separate processes
with the same config file, on an isolated ROS domain with localhost-only discovery; records joint states,
tracking error and compute time in this process; stops the nodes with SIGINT and checks they exit 0;
prints tracking error, rates and compute time, and writes a tracking plot.
"""
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

from .. import algorithms, load_urdf, stopping
from ..errors import RobotDynamicsError
from ..resources import bundled_config, bundled_urdf
from . import int_in, positive_float

NODES = ('simulator', 'computed_torque_controller', 'trajectory_publisher')
STOP_TIMEOUT = 10.0  # s a node gets to exit after SIGINT
WALL_ALLOWANCE = (3.0, 10.0)   # a run of d s of sim time stops after 3 d + 10 s of wall time at the latest


def add_arguments(parser):
    parser.add_argument('--duration', type=positive_float, default=10.0,
                        help='seconds of sim time to run the loop (at most 3x as long plus 10 s on the wall clock)')
    parser.add_argument('--config', default=None, help='ROS 2 parameters YAML (default: bundled arm7.yaml)')
    parser.add_argument('--urdf', default=None, help='URDF or xacro file (default: bundled arm7.urdf)')
    parser.add_argument('--plot', default='tracking.png', help="tracking plot to write ('' for none)")
    parser.add_argument('--domain-id', type=int_in(0, 232), default=None,
                        help='ROS_DOMAIN_ID for the loop (default: derived from the process id)')
    parser.add_argument('--startup-timeout', type=positive_float, default=60.0,
                        help='seconds to wait for the first controller update')


def isolated_ros_env(domain_id, base=None):
    """Environment for an isolated loop: its own domain and localhost-only discovery
    (ROS_AUTOMATIC_DISCOVERY_RANGE since Iron; ROS_LOCALHOST_ONLY on older distributions)."""
    env = dict(os.environ if base is None else base)
    env['ROS_DOMAIN_ID'] = str(domain_id)
    env['ROS_AUTOMATIC_DISCOVERY_RANGE'] = 'LOCALHOST'
    if env.get('ROS_DISTRO') in ('foxy', 'galactic', 'humble'):
        env['ROS_LOCALHOST_ONLY'] = '1'
    env['PYTHONUNBUFFERED'] = '1'
    return env


def default_domain_id():
    """A domain in 1..100 from the process id, so that concurrent runs rarely share one."""
    return 1 + os.getpid() % 100


def start_node(name, ros_args, env, log_path):
    """Start robot_dynamics_ros.nodes.<name> as a child process in its own session (so a Ctrl-C in the
    terminal reaches only us, and we stop it), output to log_path. It starts with SIGINT and SIGTERM blocked,
    until its entry point catches them: a signal at any moment stops it cleanly (robot_dynamics_ros.stopping)."""
    command = [sys.executable, '-m', 'robot_dynamics_ros.nodes.start', name, '--ros-args', *ros_args]
    with open(log_path, 'w') as log, stopping.blocked():  # the child keeps its own descriptor
        return subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)


def stop_node(process, sig=signal.SIGINT, timeout=STOP_TIMEOUT):
    """Send sig and wait; kill it if it does not exit in time. Returns the exit code (None if killed)."""
    if process.poll() is None:
        process.send_signal(sig)
    try:
        return process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        return None


def rate(samples, start, end):
    """Messages per wall second received in [start, end]."""
    return sum(start <= sample[0] <= end for sample in samples) / max(end - start, 1e-9)


def first_error_line(log_text):
    """The line of a node's log that says why it failed: its first ROS error, else the exception line of a
    traceback, else its last line."""
    lines = [line.strip() for line in log_text.splitlines() if line.strip()]
    for line in lines:
        ros_error = re.match(r'^\[(ERROR|FATAL)\] \[[\d.]+\] \[[^\]]*\]: (.*)', line)
        if ros_error:
            return ros_error.group(2)
    exceptions = [line for line in lines if re.match(r'^[\w.]+(Error|Exception|Interrupt)\b', line)]
    return exceptions[-1] if exceptions else (lines[-1] if lines else 'no output')


def steps_per_second(log_text):
    """Achieved step rate from the simulator's exit line ('... (N steps/s, ...')."""
    match = re.search(r'\((\d+) steps/s', log_text)
    return float(match.group(1)) if match else float('nan')


def sim_time_since(recorder, first):
    """Sim time from the joint state with index `first` to the newest one."""
    states = recorder.states
    return states[-1][1] - states[first][1] if len(states) > first + 1 else 0.0


def report(recorder, start, end, sim_log, duration=None):
    """Lines for the user: sim time and real-time factor, tracking error per joint, rates, compute time."""
    errors = np.array([e for t, _, e in recorder.errors if start <= t <= end])
    stamps = [s for t, s, _ in recorder.states if start <= t <= end]
    lines = []
    if len(errors):
        rms = np.degrees(np.sqrt(np.mean(errors**2, axis=0)))
        peak = np.degrees(np.max(np.abs(errors), axis=0))
        lines.append(f"tracking error over {len(errors)} controller updates (deg):")
        lines.append(f"  {'joint':<24}{'RMS':>10}{'max':>10}")
        for name, r, m in zip(recorder.joint_names, rms, peak):
            lines.append(f"  {name:<24}{r:>10.4f}{m:>10.4f}")
    else:
        lines.append("tracking error: no controller updates received")
    simulated = stamps[-1] - stamps[0] if len(stamps) > 1 else 0.0
    lines.insert(0, f"ran {simulated:.2f} s of sim time in {end - start:.2f} s wall: real-time factor "
                    f"{simulated / max(end - start, 1e-9):.2f}")
    if duration is not None and simulated < duration - 0.01:
        lines.insert(1, f"note: ran only {simulated:.2f} s of the {duration:g} s of sim time asked for "
                        "(the loop ran slower than real time, or a node stopped)")
    lines.append(f"simulator: {steps_per_second(sim_log):.0f} steps/s achieved")
    lines.append(f"joint_states received: {rate(recorder.states, start, end):.1f} Hz")
    lines.append(f"controller commands: {rate(recorder.errors, start, end):.1f} Hz")
    if recorder.compute_us:
        us = np.array(recorder.compute_us)
        lines.append(f"controller compute time per update: mean {us.mean():.0f} us, "
                     f"p99 {np.percentile(us, 99):.0f} us, max {us.max():.0f} us ({len(us)} updates)")
    return lines


def write_plot(recorder, path):
    """Joint positions and tracking error against the joint states' stamps (sim time); returns a message."""
    try:
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
    except ImportError:
        return "no plot: matplotlib is not installed (pip install matplotlib)"
    if not recorder.states or not recorder.errors:
        return "no plot: nothing was recorded"
    t0 = recorder.states[0][1]
    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(9, 7))
    top.plot([s - t0 for _, s, _ in recorder.states], np.degrees([q for _, _, q in recorder.states]))
    top.set_ylabel('joint position (deg)')
    bottom.plot([s - t0 for _, s, _ in recorder.errors], np.degrees([e for _, _, e in recorder.errors]))
    bottom.set_ylabel('q_ref - q (deg)')
    bottom.set_xlabel('time (s, joint-state stamps)')
    bottom.legend(recorder.joint_names, fontsize='small', ncol=4)
    top.set_title('robot-dynamics bringup: computed-torque tracking')
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return f"tracking plot written to {os.path.abspath(path)}"


def run(args):
    try:
        from ..nodes.monitor import Recorder  # rclpy and the message packages
    except ImportError as e:
        raise RobotDynamicsError(f"needs rclpy and the ROS 2 message packages ({e}): pip install '.[ros]' "
                                 "(from the package source) or source a ROS 2 installation") from None
    config = os.path.abspath(args.config or bundled_config())
    urdf = os.path.abspath(args.urdf or bundled_urdf())
    if not os.path.isfile(config):
        raise FileNotFoundError(f"config file not found: {config}")
    model = load_urdf(urdf)  # a URDF the nodes cannot run with fails here, in one line
    algorithms.aba(model, model.neutral(), np.zeros(model.nv), np.zeros(model.nv))  # the simulator's forward dynamics
    domain_id = default_domain_id() if args.domain_id is None else args.domain_id
    env = isolated_ros_env(domain_id)
    os.environ.update({k: env[k] for k in ('ROS_DOMAIN_ID', 'ROS_AUTOMATIC_DISCOVERY_RANGE')})
    if 'ROS_LOCALHOST_ONLY' in env:
        os.environ['ROS_LOCALHOST_ONLY'] = env['ROS_LOCALHOST_ONLY']
    log_dir = tempfile.mkdtemp(prefix='robot_dynamics_bringup_')
    print(f"bringup: {os.path.basename(urdf)} with {config}, ROS_DOMAIN_ID={domain_id}, logs in {log_dir}")

    recorder = Recorder()
    signal.signal(signal.SIGINT, signal.default_int_handler)  # Ctrl-C: stop the nodes, then report
    ros_args = ['--params-file', config, '-p', f'urdf_file:={urdf}']
    processes = {name: start_node(name, ros_args, env, os.path.join(log_dir, name + '.log')) for name in NODES}
    interrupted = False
    start = end = time.monotonic()
    failed_to_start = []
    try:
        if not recorder.spin_until(lambda: recorder.errors or any(p.poll() is not None
                                                                   for p in processes.values()),
                                   args.startup_timeout):
            print(f"no controller update within {args.startup_timeout:g} s", file=sys.stderr)
        failed_to_start = [name for name, p in processes.items() if p.poll() is not None]
        if recorder.errors and not failed_to_start:
            start, first = time.monotonic(), len(recorder.states)
            print(f"loop running; recording {args.duration:g} s of sim time ...")
            recorder.spin_until(lambda: any(p.poll() is not None for p in processes.values())
                                or sim_time_since(recorder, first) >= args.duration,
                                WALL_ALLOWANCE[0] * args.duration + WALL_ALLOWANCE[1])
            end = time.monotonic()
    except KeyboardInterrupt:
        interrupted = True
        end = time.monotonic()
    finally:
        codes = {name: stop_node(process) for name, process in processes.items()}
        recorder.close()

    logs = {}
    for name in NODES:
        with open(os.path.join(log_dir, name + '.log')) as f:
            logs[name] = f.read()
    if failed_to_start:
        name = failed_to_start[0]
        raise RobotDynamicsError(f"the {name} node failed to start: {first_error_line(logs[name])} "
                                 f"(log: {os.path.join(log_dir, name + '.log')})")
    print('\n'.join(report(recorder, start, end, logs['simulator'], args.duration)))
    if args.plot and end > start:
        print(write_plot(recorder, args.plot))
    failed = {name: code for name, code in codes.items() if code != 0}
    for name, code in failed.items():
        print(f"{name} exited with {'no exit (killed)' if code is None else code}; last lines of its log:",
              file=sys.stderr)
        print('  ' + '\n  '.join(logs[name].strip().splitlines()[-10:]), file=sys.stderr)
    if not failed:
        print(f"all nodes exited 0 on SIGINT{' (interrupted by the user)' if interrupted else ''}")
    return 1 if failed or not recorder.errors else 0
