"""A node's life: the guarded node, throttled warnings, the executor, and the main loop that exits 0 on SIGINT and
SIGTERM with one line saying why it stopped.

Only APIs available in rclpy as shipped with Humble are used.
"""
import gc
import re
import time
from collections import Counter

import numpy as np
import rclpy
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.signals import SignalHandlerOptions

try:   # Jazzy and later (experimental)
    from rclpy.experimental import EventsExecutor
except ImportError:   # Humble
    EventsExecutor = None

from .. import stopping
from . import compile_progress
from .parameter_schema import ConfigurationError

# Timers that must keep running when /clock stops (paused simulation, use_sim_time).
STEADY_CLOCK = Clock(clock_type=ClockType.STEADY_TIME)
# s; the longest the spin loop waits before it looks at signals. Python runs a signal's handler only when the
# executor's wait returns, so an idle node (no timer due) saw a signal 0-0.1 s late at 0.1 s, a fifth of the 0.5 s
# a node has to exit (issue 28). 50 idle wake-ups a second: an idle controller 0.9 % of a core instead of 0.7 %.
WAKE_UP_PERIOD = 0.02


class Throttle:
    """At most one warning per key every `period` seconds; the next one says how many were suppressed.
    `reason(error)` is the key for a rejection message: the kind of problem, its variable parts (numbers,
    joint lists, quoted names) blanked, so that a stream of the same fault on varying joints or values is
    one key."""

    def __init__(self, logger, period=2.0, clock=time.monotonic):
        self._logger = logger
        self._period = period
        self._clock = clock
        self._last = {}        # key -> clock time of the last logged warning
        self._suppressed = {}  # key -> warnings dropped since then
        self.counts = Counter()  # key -> warnings since the start, logged or not (for /diagnostics)

    @staticmethod
    def reason(error):
        text = re.sub(r"'[^']*'|\"[^\"]*\"", '#', str(error))
        while True:   # innermost lists and sets first
            blanked = re.sub(r'\[[^\[\]]*\]|\{[^{}]*\}|\([^()]*\)', '#', text)
            if blanked == text:
                break
            text = blanked
        return re.sub(r'[-+]?(\d+(\.\d*)?|\.\d+)(e[-+]?\d+)?|nan|inf', '#', text)[:200]

    def warn(self, key, message):
        suffix = self._due(key)
        if suffix is not None:
            self._logger.warning(message + suffix)

    def info(self, key, message):
        """As warn, at INFO (a stream of valid messages that each say something, e.g. pushes). (rclpy refuses a
        call site that logs at two severities: each has its own.)"""
        suffix = self._due(key)
        if suffix is not None:
            self._logger.info(message + suffix)

    def _due(self, key):
        """None when a line for key was logged less than a period ago, else the suffix of the line to log now."""
        now = self._clock()
        self.counts[key] += 1
        if now - self._last.get(key, -np.inf) < self._period:
            self._suppressed[key] = self._suppressed.get(key, 0) + 1
            return None
        dropped = self._suppressed.pop(key, 0)
        self._last[key] = now
        return f" ({dropped} similar suppressed)" if dropped else ""


class GuardedNode(Node):
    """A Node that no message or service request can stop: an exception in a subscription's or a service's callback
    is a throttled warning naming the topic and the error (the message is dropped; a service answers its default
    response), never a dead node. Unguarded, rclpy's executors raise it out of spin, and the EventsExecutor then
    loses the events that follow."""

    def create_subscription(self, msg_type, topic, callback, *args, **kwargs):
        def guarded(msg):   # one parameter: rclpy passes the message alone (no MessageInfo)
            try:
                callback(msg)
            except Exception as error:
                self._callback_failed(topic, error)
        return super().create_subscription(msg_type, topic, guarded, *args, **kwargs)

    def create_service(self, srv_type, srv_name, callback, *args, **kwargs):
        def guarded(request, response):
            try:
                return callback(request, response)
            except Exception as error:
                self._callback_failed(srv_name, error)
                return response
        return super().create_service(srv_type, srv_name, guarded, *args, **kwargs)

    def _callback_failed(self, name, error):
        if stopping.interrupted(error):   # a signal's KeyboardInterrupt, wrapped: the signal, not a bad message
            raise error
        if not hasattr(self, '_callback_throttle'):
            self._callback_throttle = Throttle(self.get_logger())
        self._callback_throttle.warn(f'callback {name}', f"dropped a message on {name!r}: its callback failed with "
                                                         f"{type(error).__name__}: {error}"[:2000])


def make_executor(node):
    """The executor named by the node's `executor` parameter. 'auto' is rclpy's EventsExecutor where this
    rclpy has it (Jazzy and later), else the SingleThreadedExecutor (Humble): at 1 kHz joint states the
    EventsExecutor answers more states, sooner, on less CPU (benchmarks/bench_loop.py, which also checks
    that a depth-1 subscription still gets the newest state). Returns (executor, wake-up function for a
    signal handler)."""
    choice = node.get_parameter('executor').value
    if choice == 'events' and EventsExecutor is None:
        raise ConfigurationError("parameter 'executor': this rclpy has no EventsExecutor (Jazzy and later)")
    if choice == 'events' or (choice == 'auto' and EventsExecutor is not None):
        executor = EventsExecutor()
        wake_up = executor.wake   # it supports no guard conditions
    else:
        executor = SingleThreadedExecutor()
        wake_up = node.create_guard_condition(lambda: None).trigger
    node.get_logger().info(f"executor: {type(executor).__name__}")
    return executor, wake_up


def run(node_class: type, name: str, args: list[str] | None = None) -> int:
    """Create the node, spin it, and return the exit code: 0 when stopped by SIGINT, SIGTERM (at any moment,
    start-up included) or an external shutdown, 1 on a configuration error or when the node sets its `failure`
    (a reason: it cannot go on; a callback sets it, the loop stops after that callback). Logs one line saying why
    it stopped, followed by the node's `summary()` if it has one.

    SIGINT and SIGTERM are ours (`stopping`; rclpy installs no handler): once the node spins, the handler only
    records the signal and wakes the executor (raising from a handler could land in any callback); the spin loop
    then ends cleanly, before the context is shut down, so no callback runs into a shut-down context. While the
    node is built, a signal interrupts the building at once.
    """
    stopping.catch()   # the entry point (nodes/start.py) did so before the imports; here for other callers
    rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    context = rclpy.get_default_context()   # (try_shutdown below replaces the default with a new one)
    node = executor = None
    code = 0
    reason = 'rclpy was shut down'
    try:
        if not stopping.received():   # else a signal came during the imports: stop before building the node
            # While the node is built (seconds under load: a URDF, ground contact, compiled code), a signal stops
            # it where it is: nothing it builds needs finishing, and rclpy's shutdown destroys what was built.
            stopping.interrupt()
            compile_progress.install(name)   # each numba compilation said in the log as it happens
            node = node_class()
            executor, wake_up = make_executor(node)
            stopping.catch(wake_up)
            executor.add_node(node)
            # What the node was built with, out of the cyclic collector's reach: a full collection walks every
            # tracked object, 1.6 x 10^5 in TALOS's simulator (its model, numba's, rclpy's, trimesh's modules) in
            # 71 ms, and the steps' small allocations trigger collections now and then (A1's simulator: single
            # steps of 60-92 ms; TALOS: 1.6 ms, 0.6 ms frozen). They live as long as the node; later ones are
            # collected as before.
            gc.freeze()
            while not stopping.received() and rclpy.ok() and not getattr(node, 'failure', None):
                executor.spin_once(timeout_sec=WAKE_UP_PERIOD)
            if getattr(node, 'failure', None):   # the node cannot go on (it has logged why)
                reason, code = node.failure, 1
    except KeyboardInterrupt:   # a signal while the node was built (stopping.interrupt)
        pass
    except ExternalShutdownException:
        reason = 'external shutdown'
    except ConfigurationError as e:
        reason = str(e)
        code = 1
    except Exception as e:   # the signal's KeyboardInterrupt wrapped by Python, or a real error
        if not (stopping.interrupted(e) or (node is None and stopping.received())):
            raise
    if node is None and stopping.received():
        # A signal while the node was built stops it, whatever error its KeyboardInterrupt became where it landed:
        # numba's C extension turns one inside its import into "ImportError: numba._devicearray failed to import",
        # without the KeyboardInterrupt in the chain (seen in CI), and a loader may report it as a configuration error.
        code = 0
    stopping.ignore()   # a second signal must not interrupt the clean-up
    if stopping.received() and code == 0:
        reason = stopping.received() + (' during start-up' if node is None else '')
    logger = node.get_logger() if node is not None else rclpy.logging.get_logger(name)
    summary = getattr(node, 'summary', lambda: '')()
    line = f"stopping ({reason})" + (f": {summary}" if summary else "")
    (logger.error if code else logger.info)(line)
    if executor is not None:
        executor.shutdown()
    if node is not None:
        node.destroy_node()
    rclpy.try_shutdown()
    # The DDS participant goes with the context, saying goodbye to its peers; the entry point then ends the
    # process without the interpreter's finalisation (nodes/start.py), which would otherwise have destroyed it:
    # without this, peers kept the stopped node's endpoints until their lease ran out (a new run's latched
    # trajectory went to the gone controller in the same domain). A node interrupted while it was built may still
    # hold entities of the context: its process ends without destroying it.
    if node is not None:
        context.destroy()
    return code
