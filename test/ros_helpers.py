"""Helpers for tests that run the nodes as real processes over DDS: an isolated ROS domain per test
module, node processes with their output in a log file, and an rclpy probe node in the test process."""
import os
import signal
import time

import pytest

rclpy = pytest.importorskip('rclpy')

from robot_dynamics_ros.processes import isolated_ros_env, start_node, stop_node  # noqa: E402


def domain_id(module_offset):
    """A ROS domain for one test module of one pytest run: modules and concurrent runs differ."""
    return 1 + (os.getpid() * 7 + module_offset) % 100


class NodeProcess:
    """robot_dynamics_ros.nodes.<name> in a child process; `log()` is its output so far.
    extra_args (e.g. a params file) come before the `params`, which therefore override them."""

    def __init__(self, name, env, log_dir, params=(), extra_args=()):
        self.name = name
        self.log_path = os.path.join(log_dir, f'{name}.log')
        ros_args = list(extra_args) + [arg for key, value in params for arg in ('-p', f'{key}:={value}')]
        self.process = start_node(name, ros_args, env, self.log_path)

    def log(self):
        with open(self.log_path) as f:
            return f.read()

    def alive(self):
        return self.process.poll() is None

    def wait_for_log(self, text, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text in self.log():
                return True
            if not self.alive():
                break
            time.sleep(0.1)
        return text in self.log()

    def stop(self, sig=signal.SIGINT):
        return stop_node(self.process, sig)

    def kill(self):
        if self.alive():
            self.process.kill()
            self.process.wait()


class Probe:
    """An rclpy node in the test process, on its own context and domain."""

    def __init__(self, domain):
        self.context = rclpy.context.Context()
        rclpy.init(args=[], context=self.context, domain_id=domain)
        self.node = rclpy.create_node('test_probe', context=self.context)
        self.executor = rclpy.executors.SingleThreadedExecutor(context=self.context)
        self.executor.add_node(self.node)

    def spin_until(self, condition, timeout):
        deadline = time.monotonic() + timeout
        while not condition() and time.monotonic() < deadline:
            self.executor.spin_once(timeout_sec=0.05)
        return bool(condition())

    def spin_for(self, seconds):
        self.spin_until(lambda: False, seconds)

    def close(self):
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.try_shutdown(context=self.context)


@pytest.fixture(scope='module')
def ros_domain(request):
    """(env for node processes, probe) on a domain of this module's own."""
    domain = domain_id(sum(map(ord, request.module.__name__)))
    env = isolated_ros_env(domain)
    for key in ('ROS_AUTOMATIC_DISCOVERY_RANGE', 'ROS_LOCALHOST_ONLY'):  # the probe discovers likewise
        if key in env:
            os.environ[key] = env[key]
    probe = Probe(domain)
    yield env, probe
    probe.close()


@pytest.fixture
def start(ros_domain, tmp_path):
    """start(name, params=(), extra_args=()) -> NodeProcess; every one still running is killed at the end."""
    env, _ = ros_domain
    started = []

    def start_process(name, params=(), extra_args=()):
        node = NodeProcess(name, env, str(tmp_path), params, extra_args)
        started.append(node)
        return node

    yield start_process
    for node in started:
        node.kill()
