"""Helpers for tests that run the nodes as real processes over DDS: an isolated ROS domain per test
module, node processes with their output in a log file, and an rclpy probe node in the test process."""
import contextlib
import gc
import importlib
import os
import signal
import socket
import time
import unittest

import pytest

rclpy = pytest.importorskip('rclpy')

from robot_dynamics_ros.commands.processes import isolated_ros_env, start_node, stop_node  # noqa: E402


# A domain is taken by binding this port + the domain id on the host, as launch_testing's and ament_cmake_ros's
# domain_coordinator do: a domain bound by any of them, in any process, is skipped by the others. The kernel
# frees the port when the process ends, however it ends.
COORDINATION_PORT_BASE = 22119
DOMAINS_VARIABLE = 'ROBOT_DYNAMICS_ROS_TEST_DOMAINS'   # 'FIRST-LAST': the domains the tests may take
DEFAULT_DOMAINS = (1, 100)
RESEND_AFTER = 2.0      # s without an answer before Probe.call sends a request again
_claimed = {}   # key -> (domain, its bound socket)
held = []       # [domain, time.time() claimed, time.time() released or None]: this process's claims, in order


def test_domains():
    """The domains the tests may take (inclusive range), from DOMAINS_VARIABLE, else 1-100."""
    text = os.environ.get(DOMAINS_VARIABLE, '').strip()
    if not text:
        return range(DEFAULT_DOMAINS[0], DEFAULT_DOMAINS[1] + 1)
    first, _, last = text.partition('-')
    return range(int(first), int(last or first) + 1)


def domain_id(key):
    """A ROS domain of this pytest process for ``key`` (e.g. a test module's name), claimed on first use and held
    until ``release_domain(key)`` or the end of the process: no other process that coordinates so (a concurrent
    pytest run, a launch test) uses it meanwhile."""
    if key not in _claimed:
        domains = test_domains()
        start = os.getpid() % len(domains)   # concurrent runs try different domains first
        for domain in list(domains[start:]) + list(domains[:start]):
            claim = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                claim.bind(('', COORDINATION_PORT_BASE + domain))
            except OSError:
                claim.close()
                continue
            _claimed[key] = (domain, claim)
            held.append([domain, time.time(), None])
            break
        else:
            raise RuntimeError(f"every ROS domain in {domains} is taken by another test run ({DOMAINS_VARIABLE})")
    return _claimed[key][0]


def release_domain(key):
    domain, claim = _claimed.pop(key)
    claim.close()
    next(record for record in reversed(held) if record[0] == domain)[2] = time.time()


# Set (to 1) where the interface packages no wheel provides are built (.ci/run: test/interfaces/build.py): a test that
# needs one then fails where it cannot import it, instead of being skipped.
REQUIRE_INTERFACES = 'ROBOT_DYNAMICS_ROS_REQUIRE_INTERFACES'


def import_interfaces(module):
    """The message module ``module`` (e.g. 'tf2_msgs.msg'); where it is not installed the test module is skipped,
    or fails where REQUIRE_INTERFACES is set."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        if os.environ.get(REQUIRE_INTERFACES):
            raise ImportError(f"{e}; {REQUIRE_INTERFACES} is set: build them with test/interfaces/build.py") from None
        pytest.skip(f"{module} is not installed (test/interfaces/build.py builds it)", allow_module_level=True)


def shadowing(tmp_path, package):
    """A PYTHONPATH entry under which ``package`` cannot be imported (as where it is not installed)."""
    folder = tmp_path / f'without_{package}'
    (folder / package).mkdir(parents=True)
    (folder / package / '__init__.py').write_text(f"raise ImportError({f'No module named {package!r}'!r})\n")
    return str(folder)


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


def release(context):
    """Shut ``context`` down, destroy it and collect the garbage now, not at some later wait. Under Jazzy's rclpy the
    test process once died (SIGSEGV while 'Garbage-collecting', inside the next module's probe's spin_once) after
    earlier tests had left shut-down contexts and their nodes' remaining handles to the garbage collector."""
    is_default = context is rclpy.get_default_context()
    rclpy.try_shutdown(context=None if is_default else context)   # (only None makes rclpy start a new default)
    context.destroy()
    gc.collect()


@contextlib.contextmanager
def in_process_ros(args, domain):
    """rclpy initialised in this process (its default context) with ``args`` on ``domain``, for nodes built here;
    the caller destroys them, then the context is released."""
    rclpy.init(args=args, domain_id=domain)
    context = rclpy.get_default_context()
    try:
        yield context
    finally:
        release(context)


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
            gc.disable()   # garbage is collected between waits, not during one (see release)
            try:
                self.executor.spin_once(timeout_sec=0.05)
            finally:
                gc.enable()
        return bool(condition())

    def spin_for(self, seconds):
        self.spin_until(lambda: False, seconds)

    def call(self, client, request, timeout, log=lambda: ''):
        """The answer to an idempotent service call, sent again after RESEND_AFTER s without one. Fast DDS drops a
        response when the server has not yet matched the client's response reader (it waits 100 ms, then logs
        'failed to send response (timeout): client will not receive response'): a first call on a busy machine."""
        assert client.wait_for_service(timeout_sec=timeout), f"no service {client.srv_name}\n{log()}"
        deadline = time.monotonic() + timeout
        while True:
            future = client.call_async(request)
            if self.spin_until(future.done, min(RESEND_AFTER, deadline - time.monotonic())):
                return future.result()
            client.remove_pending_request(future)
            assert time.monotonic() < deadline, f"no answer from {client.srv_name}\n{log()}"

    def close(self):
        self.executor.shutdown()
        self.node.destroy_node()
        release(self.context)


class ParameterClient:
    """A node's parameters as `ros2 param set` and `ros2 param get` reach them: its SetParameters and GetParameters
    services, called from the probe (each call must answer within ``timeout`` seconds)."""

    def __init__(self, probe, node_name, timeout):
        from rcl_interfaces.srv import GetParameters, SetParameters
        self._probe, self._timeout = probe, timeout
        self._setter = probe.node.create_client(SetParameters, f'{node_name}/set_parameters')
        self._getter = probe.node.create_client(GetParameters, f'{node_name}/get_parameters')
        assert self._setter.wait_for_service(timeout_sec=timeout) and self._getter.wait_for_service(timeout_sec=timeout)

    def _call(self, client, request):
        return self._probe.call(client, request, self._timeout)

    def set(self, name, value):
        """The SetParametersResult (successful, reason) of setting one parameter."""
        from rcl_interfaces.srv import SetParameters
        from rclpy.parameter import Parameter
        request = SetParameters.Request(parameters=[Parameter(name, value=value).to_parameter_msg()])
        return self._call(self._setter, request).results[0]

    def get(self, name):
        """The parameter's value (Python)."""
        from rcl_interfaces.srv import GetParameters
        from rclpy.parameter import parameter_value_to_python
        return parameter_value_to_python(self._call(self._getter, GetParameters.Request(names=[name])).values[0])


def launch_test_domain(key):
    """For a launch_testing module: a ROS domain of its own (domain_id(key), coordinated with the other tests and
    runs). Its processes get it from domain_environment(domain), at the head of the launch description."""
    return domain_id(key)


def domain_environment(domain):
    """Launch actions that put ``domain``, with localhost-only discovery, into the environment of the processes
    launched after them. In the launch, not at import: launch_testing imports every launch test module while it
    collects, so an environment set at import would be the last module's."""
    from launch.actions import SetEnvironmentVariable
    return [SetEnvironmentVariable(name, value) for name, value in isolated_ros_env(domain, base={}).items()]


class LaunchProbe(unittest.TestCase):
    """Base of a launch test's test case: ``cls.node``, an rclpy node (a Probe) on the domain ``cls.domain`` (set it
    to launch_test_domain's), and ``spin_until``."""
    domain = None

    @classmethod
    def setUpClass(cls):
        cls.probe = Probe(cls.domain)
        cls.node = cls.probe.node

    @classmethod
    def tearDownClass(cls):
        cls.probe.close()

    def spin_until(self, condition, timeout):
        return self.probe.spin_until(condition, timeout)


@pytest.fixture(scope='module')
def ros_domain(request):
    """(env for node processes, probe) on a domain of this module's own."""
    domain = domain_id(request.module.__name__)
    env = isolated_ros_env(domain)
    for key in ('ROS_AUTOMATIC_DISCOVERY_RANGE', 'ROS_LOCALHOST_ONLY'):  # the probe discovers likewise
        if key in env:
            os.environ[key] = env[key]
    probe = Probe(domain)
    yield env, probe
    probe.close()
    release_domain(request.module.__name__)


@pytest.fixture
def start(ros_domain, tmp_path):
    """start(name, params=(), extra_args=(), extra_env=None) -> NodeProcess; every one still running is killed at
    the end."""
    env, _ = ros_domain
    started = []

    def start_process(name, params=(), extra_args=(), extra_env=None):
        node = NodeProcess(name, dict(env, **(extra_env or {})), str(tmp_path), params, extra_args)
        started.append(node)
        return node

    yield start_process
    for node in started:
        node.kill()
