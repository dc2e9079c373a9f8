"""Child processes and the ROS environment they share, for the commands, the tests and the benchmarks: the
nodes' environment (the caller's ROS domain, or an isolated one), starting a node as a process with its output in
a log file, and stopping it. No ROS import."""
import os
import signal
import subprocess
import sys

from .. import stopping
from ..errors import RobotDynamicsError

STOP_TIMEOUT = 10.0  # s a node gets to exit after SIGINT
MAX_DOMAIN_ID = 232


def loop_environment(domain_id=None, isolated=False):
    """The nodes' environment: this one (its ROS_DOMAIN_ID and discovery settings) unless `domain_id` is given
    or `isolated` asked for. Raises RobotDynamicsError for a ROS_DOMAIN_ID that is not a domain."""
    if isolated:
        return isolated_ros_env(default_domain_id() if domain_id is None else domain_id)
    env = dict(os.environ, PYTHONUNBUFFERED='1')
    if domain_id is not None:
        env['ROS_DOMAIN_ID'] = str(domain_id)
    elif env.get('ROS_DOMAIN_ID', '').strip():
        text = env['ROS_DOMAIN_ID'].strip()
        if not (text.isdigit() and 0 <= int(text) <= MAX_DOMAIN_ID):
            raise RobotDynamicsError(f"environment variable ROS_DOMAIN_ID: must be an integer in [0, {MAX_DOMAIN_ID}], "
                                     f"got {text!r}")
    return env


def describe_domain(env):
    """'ROS_DOMAIN_ID=N' and how discovery is limited, for the first line of a command's output."""
    text = f"ROS_DOMAIN_ID={env.get('ROS_DOMAIN_ID') or '0 (unset)'}"
    return text + (', localhost only' if env.get('ROS_AUTOMATIC_DISCOVERY_RANGE') == 'LOCALHOST' else '')


def use_environment(env):
    """Make this process (its in-process monitor node) join the nodes' domain and discovery range."""
    for key in ('ROS_DOMAIN_ID', 'ROS_AUTOMATIC_DISCOVERY_RANGE', 'ROS_LOCALHOST_ONLY'):
        if key in env:
            os.environ[key] = env[key]


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
    until its entry point catches them: a signal at any moment stops it cleanly (robot_dynamics_ros.stopping).
    It stops (SIGTERM) when this process dies, also by SIGKILL (nodes.start); call from a thread that outlives it."""
    return start_process([sys.executable, '-m', 'robot_dynamics_ros.nodes.start', name, '--ros-args', *ros_args],
                         dict(env, ROBOT_DYNAMICS_ROS_STARTER=str(os.getpid())), log_path)


def start_process(command, env, log_path):
    """``command`` as a child process in its own session, SIGINT and SIGTERM blocked until it catches them, output
    to log_path."""
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
