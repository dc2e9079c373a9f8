"""Plumbing shared by the nodes: parameters, the robot model (parameter, file or topic), throttled
warnings, and a main loop that exits 0 on SIGINT and SIGTERM with one line saying why it stopped.

Only APIs available in rclpy as shipped with Humble are used.
"""
import math
import re
import time
from array import array
from collections import Counter

import numpy as np
import rclpy
from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor, SetParametersResult
from rclpy.clock import Clock, ClockType
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.signals import SignalHandlerOptions

try:   # Jazzy and later (experimental)
    from rclpy.experimental import EventsExecutor
except ImportError:   # Humble
    EventsExecutor = None
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import Float64MultiArray, MultiArrayDimension, MultiArrayLayout, String

from .. import stopping
from . import compile_progress, parameter_schema
from .parameter_schema import ConfigurationError
from ..algorithms.rnea import STANDARD_GRAVITY
from ..errors import SRDFError
from ..model import URDFError, load_urdf
from ..model.collision import ContactPoint
from ..model.joints import all_finite
from ..model.srdf import load_srdf, stance_configuration
from ..model.urdf import parse_urdf

# Like robot_state_publisher's /robot_description: the last message reaches late subscribers.
LATCHED_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)

# Timers that must keep running when /clock stops (paused simulation, use_sim_time).
STEADY_CLOCK = Clock(clock_type=ClockType.STEADY_TIME)
# s; the longest the spin loop waits before it looks at signals. Python runs a signal's handler only when the
# executor's wait returns, so an idle node (no timer due) saw a signal 0-0.1 s late at 0.1 s, a fifth of the 0.5 s
# a node has to exit (issue 28). 50 idle wake-ups a second: an idle controller 0.9 % of a core instead of 0.7 %.
WAKE_UP_PERIOD = 0.02


def given_value(node, name):
    """What a params file or --ros-args gives ``name`` (None: nothing, or `[]`), through rclpy's public API: declared
    without a type, a parameter takes its override; it is then undeclared, to be declared as its schema says."""
    value = node.declare_parameter(name, None, ParameterDescriptor(dynamic_typing=True)).value
    node.undeclare_parameter(name)
    return value


def descriptor(spec, read_only=None):
    """The ParameterDescriptor of a parameter_schema.Spec: description, read-only, dynamic typing, the validators'
    text (additional_constraints) and, for a bounded number, its range (inclusive: a gt or lt bound itself is
    refused by the validator, which runs after the range)."""
    result = ParameterDescriptor(description=spec.description, dynamic_typing=spec.dynamic_typing,
                                 read_only=spec.read_only if read_only is None else read_only,
                                 additional_constraints=parameter_schema.rules(spec))
    bounds = spec.range()
    if bounds is not None and spec.type == 'double':
        result.floating_point_range = [FloatingPointRange(
            from_value=-math.inf if bounds[0] is None else float(bounds[0]),
            to_value=math.inf if bounds[1] is None else float(bounds[1]), step=0.0)]
    elif bounds is not None:
        result.integer_range = [IntegerRange(from_value=-2 ** 63 if bounds[0] is None else bounds[0],
                                             to_value=2 ** 63 - 1 if bounds[1] is None else bounds[1], step=0)]
    return result


def typed(spec, value):
    """``value`` as ``spec``'s type (integers taken as floats for a double: YAML writes 1000 for 1000.0), or
    ConfigurationError. A dynamically typed parameter (a number or a list) is left to its validators."""
    if spec.dynamic_typing:
        return value
    array = spec.type.endswith('_array')
    values = value if array and isinstance(value, list) else [value]
    if spec.type.startswith('double') and isinstance(value, list if array else (int, float)) \
            and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return [float(v) for v in values] if array else float(value)
    element = parameter_schema.TYPES[spec.type]
    if (isinstance(value, list) != array) or not all(type(v) is element for v in values):
        raise ConfigurationError(f"parameter {spec.name!r} must be a {spec.type}, got {value!r}")
    return value


def declare_spec(node, spec, name=None, given=None):
    """Declare the parameter of ``spec`` (as ``name``; default: its own) with the value ``given`` (None: the
    schema's default), typed and checked by the schema's validators; returns the value, or raises
    ConfigurationError. Every declared parameter has a value: an empty list is declared typed, `[]` of that type
    (rclpy answers a whole get_parameters request, `ros2 param dump`, with nothing for an uninitialized one)."""
    name = name or spec.name
    value = typed(spec, spec.default if given is None else given)
    spec.check(value)
    final = descriptor(spec)
    if value == [] and not spec.dynamic_typing:
        kind = Parameter.Type[spec.type.upper().replace('INT', 'INTEGER')]
        writable = descriptor(spec, read_only=False)
        node.declare_parameter(name, kind, writable)   # uninitialized; writable until it has its empty value
        node.set_parameters([Parameter(name, kind, [])])
        final.type = kind.value
        node.set_descriptor(name, final)
    else:
        node.declare_parameter(name, value, final, ignore_override=True)
    return value


class RuntimeParameters:
    """Parameters that `ros2 param set` may change while the node runs (the SetParameters service).

    A request naming any of them calls apply({name: value, ...}) before the values are stored: the node
    validates them with the code it uses at start-up and either takes them all or raises
    ConfigurationError, whose text is the refusal's reason, and nothing changes.
    """

    def __init__(self, node, apply, names):
        self._node = node
        self._apply = apply
        self._names = names
        node.add_on_set_parameters_callback(self._on_set)

    def _on_set(self, parameters):
        changes = {parameter.name: parameter.value for parameter in parameters if parameter.name in self._names}
        if changes:
            try:
                self._apply(changes)
            except ConfigurationError as e:
                return SetParametersResult(successful=False, reason=str(e))
            self._node.get_logger().info(f"parameters changed: {changes}")
        return SetParametersResult(successful=True)


class NodeParameters:
    """A node's parameters as its schema (parameter_schema, nodes/parameters/<schema>.yaml) declares them:
    ``values`` ({name: value} at start-up) and ``given`` (the names a params file or --ros-args gave). The writable
    ones (not read_only) may be set at run time: a request is checked by the validators that checked the start-up
    values, then passed to ``apply(changes)`` (see RuntimeParameters), which may refuse it."""

    def __init__(self, node, schema, apply=None):
        self.schema = parameter_schema.load(schema)
        self.given = set()
        self.values = {}
        for name, spec in self.schema.parameters.items():
            value = given_value(node, name)
            if value is not None:
                self.given.add(name)
            self.values[name] = declare_spec(node, spec, given=value)
        runtime = {name: spec for name, spec in self.schema.parameters.items() if not spec.read_only}
        if runtime:
            def checked_apply(changes):
                for name, value in changes.items():
                    runtime[name].check(value)
                if apply is not None:
                    apply(changes)
            RuntimeParameters(node, checked_apply, set(runtime))


def declare_parameters(node, schema, apply=None):
    """Declare the parameters of the schema named ``schema`` on ``node`` (its ``node_parameters``, NodeParameters),
    each checked at start-up; returns {name: value}."""
    node.node_parameters = NodeParameters(node, schema, apply)
    return node.node_parameters.values


def as_float(name, value):
    try:
        result = float(value)
    except (TypeError, ValueError):
        raise ConfigurationError(f"parameter {name!r} must be a number, got {value!r}") from None
    if not np.isfinite(result):
        raise ConfigurationError(f"parameter {name!r} must be finite, got {value!r}")
    return result


def as_vector(name, value, n, allow_scalar=True):
    """A scalar (broadcast, when allowed) or a list of n finite numbers -> (n,) float array."""
    try:
        array = np.array(value, dtype=float)
    except (TypeError, ValueError):
        raise ConfigurationError(f"parameter {name!r} must be numbers, got {value!r}") from None
    if array.ndim == 0 and allow_scalar:
        array = np.full(n, float(array))
    if array.shape != (n,):
        expected = f"a number or {n} numbers" if allow_scalar else f"{n} numbers"
        raise ConfigurationError(f"parameter {name!r} must be {expected}, got {np.atleast_1d(array).tolist()}")
    if not np.all(np.isfinite(array)):
        raise ConfigurationError(f"parameter {name!r} must be finite, got {array.tolist()}")
    return array


def default_as_none(gravity):
    """None for the standard gravity vector: the dynamics then take their default path (per-robot generated code
    where it serves), which an explicit vector never does."""
    return None if np.array_equal(gravity, STANDARD_GRAVITY) else gravity


def joint_order(model, joints):
    """Model indices of the `joints` parameter (empty: model order), checked against the model."""
    names = [str(name) for name in joints] or list(model.joint_names)
    unknown = [name for name in names if name not in model.joint_names]
    if unknown:
        raise ConfigurationError(f"parameter 'joints' names {unknown}, not degrees of freedom of "
                                 f"{model.name!r}: {list(model.joint_names)}")
    if sorted(names) != sorted(model.joint_names):
        raise ConfigurationError(f"parameter 'joints' must list each of {list(model.joint_names)} once, "
                                 f"got {names}")
    return names, np.array([model.joint_names.index(name) for name in names], dtype=int)


def _fixed_base_only(on_model):
    """on_model, refusing (ConfigurationError) a model with a floating or planar joint inside the URDF: with
    root_joint '' the node runs fixed-base robots."""
    def accept(model, *urdf):
        if not model.fixed_base:
            raise ConfigurationError(f"robot {model.name!r} has a floating or planar joint: set the parameter "
                                     "'root_joint' ('floating' or 'planar') to run a robot that moves its base")
        on_model(model, *urdf)
    return accept


def semantic_description(node):
    """From the parameters `robot_description_semantic` (SRDF XML, MoveIt's name) and `srdf_file`: returns the SRDF
    they give (model.srdf.SRDF), None for neither, ConfigurationError for an invalid one."""
    xml = node.get_parameter('robot_description_semantic').value
    path = node.get_parameter('srdf_file').value
    if not (xml or path):
        return None
    try:
        return load_srdf(xml or path)
    except SRDFError as e:
        raise ConfigurationError(f"invalid SRDF from {'robot_description_semantic' if xml else repr(path)}: {e}") \
            from None


def stance(model, srdf):
    """model.srdf.stance_configuration as ConfigurationError; None without an SRDF."""
    try:
        return None if srdf is None else stance_configuration(model, srdf)
    except SRDFError as e:
        raise ConfigurationError(str(e)) from None


def contact_point(entry):
    """A ContactPoint from a 'link x y z radius' entry of the parameter `contact_points`."""
    words = str(entry).split()
    try:
        if len(words) != 5:
            raise ValueError
        x, y, z, radius = map(float, words[1:])
    except ValueError:
        raise ConfigurationError(f"parameter 'contact_points': {entry!r} is not 'link x y z radius'") from None
    return ContactPoint(words[0], (x, y, z), radius)


def _fitting(on_model, srdf):
    """on_model, refusing (ConfigurationError) a model the SRDF does not fit."""
    def accept(model, *urdf):
        stance(model, srdf)
        on_model(model, *urdf)
    return accept


class ModelSource:
    """Reads `robot_description` and `urdf_file` (declared from the node's schema) and calls on_model(model): once,
    right away, with the parameter (URDF XML) or the file; else with each URDF on the `robot_description` topic that
    the node can run, the latest winning, as with robot_state_publisher and ros2_control's controller manager.
    on_model builds everything the node needs for the model before it changes any of the node's state (the executor
    thread runs it between two callbacks, so none sees half a switch), or raises ConfigurationError (e.g. joints the
    configuration does not name): that URDF, like an invalid one, is logged and skipped, and the node keeps the model
    it runs. An invalid URDF from a parameter is a ConfigurationError.

    `root_joint` (its default is the node's schema's): '' builds a fixed-base model and refuses one with a floating
    or planar joint; 'floating' or 'planar' is passed to load_urdf / parse_urdf as the root joint (as Pinocchio's
    buildModelFromUrdf(filename, root_joint)). ``with_urdf``: call on_model(model, urdf) with the URDF it came from
    (XML, or the file's path) for nodes that read more of it (collision geometry). ``srdf`` (model.srdf.SRDF, from
    ``semantic_description``): its floating or planar virtual joint is the root joint where `root_joint` is ''; a
    model it does not fit (links, stance joints) is refused as above."""

    def __init__(self, node, on_model, with_urdf=False, srdf=None):
        self._node = node
        self._with_urdf = with_urdf
        self._root_joint = node.get_parameter('root_joint').value or (srdf.root_joint if srdf is not None else None)
        if srdf is not None:
            on_model = _fitting(on_model, srdf)
        self._on_model = _fixed_base_only(on_model) if self._root_joint is None else on_model
        self._running = None   # (URDF XML, model) the node runs, when it came from the topic
        self._mimic = node.get_parameter('mimic').value
        xml = node.get_parameter('robot_description').value
        path = node.get_parameter('urdf_file').value
        if xml or path:
            try:
                model = (parse_urdf(xml, root_joint=self._root_joint, mimic=self._mimic) if xml
                         else load_urdf(path, root_joint=self._root_joint, mimic=self._mimic))
            except URDFError as e:
                source = "parameter 'robot_description'" if xml else f"urdf_file {path!r}"
                raise ConfigurationError(f"invalid URDF from {source}: {e}") from None
            self._offer(model, xml or path)
            return
        self._subscription = node.create_subscription(String, 'robot_description', self._on_message,
                                                      LATCHED_QOS)
        node.get_logger().info(f"waiting for a URDF on {self._subscription.topic_name}")

    def _offer(self, model, urdf):
        if self._with_urdf:
            self._on_model(model, urdf)
        else:
            self._on_model(model)

    def _on_message(self, msg):
        if self._running is not None and msg.data == self._running[0]:
            return   # the same URDF again (a publisher restarted)
        topic = self._subscription.topic_name
        keeping = (f"keeping robot model {self._running[1].name!r}" if self._running is not None
                   else "waiting for another one")
        try:
            model = parse_urdf(msg.data, root_joint=self._root_joint, mimic=self._mimic)
        except URDFError as e:
            self._node.get_logger().error(f"invalid URDF on {topic}: {e}; {keeping}")
            return
        try:
            self._offer(model, msg.data)
        except ConfigurationError as e:
            self._node.get_logger().error(f"cannot run with the URDF on {topic}: {e}; {keeping}")
            return
        line = f"robot model {model.name!r} ({model.nv} DOF) from {topic}"
        if self._running is not None:
            line = f"switched to {line}, replacing {self._running[1].name!r}"
        self._running = (msg.data, model)
        self._node.get_logger().info(line)


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


# --- Per-joint gains as ros2_controllers take them ---------------------------------------------------------------
# joint_trajectory_controller's PID gains are a map per joint, gains.<joint>.p, .d, .i (its parameter file); the
# controllers here also take one number or list per term (kp, kd, ki). Both forms are accepted: see JointGains.
GAINS_PREFIX = 'gains.'


def gain_name(joint, term):
    """The parameter of one joint's gain, as joint_trajectory_controller names it: gains.<joint>.<term>."""
    return f'{GAINS_PREFIX}{joint}.{term}'


def split_gain_name(name):
    """(joint, term) of a parameter named gains.<joint>.<term>, else None. Joint names may hold dots; the term
    may not."""
    if not name.startswith(GAINS_PREFIX):
        return None
    joint, dot, term = name[len(GAINS_PREFIX):].rpartition('.')
    return (joint, term) if dot and joint and term else None


def joint_gain(name, value):
    """One joint's gain: a finite number >= 0 (an integer is taken as a float, as YAML writes 400 for 400.0), not
    a boolean; else ConfigurationError."""
    if isinstance(value, bool):
        raise ConfigurationError(f"parameter {name!r} must be a number, not a boolean: got {value!r}")
    if isinstance(value, (list, tuple)):
        raise ConfigurationError(f"parameter {name!r} is one joint's gain: a number, got {value!r}")
    if not isinstance(value, (int, float)):
        raise ConfigurationError(f"parameter {name!r} must be a number, got {value!r}")
    value = as_float(name, value)
    if value < 0:
        raise ConfigurationError(f"parameter {name!r} must be non-negative, got {value}")
    return value


def merge_joint_gains(joints, terms, fallback, given):
    """Per-joint gains in `joints` order: ``fallback`` ({term: array}, from the number-or-list parameters) with
    the map entries of ``given`` ({parameter name: value}) replacing their joints' values, each checked
    (joint_gain). Returns ({term: array}, names of ``given`` that name no (joint, term) here)."""
    gains = {term: np.array(fallback[term], dtype=float) for term in terms}
    position = {joint: k for k, joint in enumerate(joints)}
    unknown = []
    for name, value in given.items():
        parts = split_gain_name(name)
        if parts is None or parts[0] not in position or parts[1] not in gains:
            unknown.append(name)
            continue
        gains[parts[1]][position[parts[0]]] = joint_gain(name, value)
    return gains, unknown


class JointGains:
    """The per-joint gains gains.<joint>.<term> (joint_trajectory_controller's names: p, d, i) beside a node's
    number-or-list gain parameters (``terms``: {term: parameter}, e.g. {'p': 'kp', 'd': 'kd', 'i': 'ki'}).

    ``declare(joints, fallback)``, once the model is known, declares gains.<joint>.<term> for every joint and term
    (settable at run time; type, description and validators from the node schema's ``gains: __map_joints``; an entry
    for a joint the model lacks is not asked for, so it is not declared) and returns the gains in use, {term: array in `joints` order}: a joint's map entry given
    in a params file or with -p wins over the number or list (a node given both says once which wins); a joint
    without one takes the number or list's value, or, declared for an earlier model, keeps the value it has.
    The gains.* parameters always hold the gains in use: setting one at run time changes that joint (the node's
    ``apply({term: array})`` checks the whole set as at start-up and takes it, or raises ConfigurationError, the
    refusal's reason, and nothing changes); a node whose number or list is set at run time (every joint) calls
    ``mirror``, which writes the new values into the map. ``serve(joints)`` once the node runs the model."""

    def __init__(self, node, terms, apply):
        self._node, self._terms, self._apply = node, dict(terms), apply
        self.joints = []        # joints order of the model the node runs
        self._names = set()     # the gains.* parameters declared (RuntimeParameters reads this set as it grows)
        self._mirroring = False
        self._told = False
        RuntimeParameters(node, self._on_set, self._names)

    def declare(self, joints, fallback):
        node = self._node
        names = [gain_name(joint, term) for joint in joints for term in self._terms]
        declared = {name: node.get_parameter(name).value for name in names if name in self._names}
        given = {name: value for name in names if name not in self._names
                 for value in [given_value(node, name)] if value is not None}
        gains, _ = merge_joint_gains(joints, self._terms, fallback, {**given, **declared})
        if not self._told:
            self._tell(given)
        specs = node.node_parameters.schema.joint_maps[GAINS_PREFIX.rstrip('.')]
        for k, joint in enumerate(joints):
            for term in self._terms:
                name = gain_name(joint, term)
                if name not in self._names:
                    declare_spec(node, specs[term], name=name, given=float(gains[term][k]))
                    self._names.add(name)
        return gains

    def _tell(self, given):
        """Once: which form wins where a joint is given both."""
        self._told = True
        given_forms = self._node.node_parameters.given
        both = sorted(name for name in given if self._terms[split_gain_name(name)[1]] in given_forms)
        if both:
            parameters = sorted({self._terms[split_gain_name(name)[1]] for name in both})
            self._node.get_logger().info(f"gains given both ways: the per-joint {both} win over {parameters} for "
                                         "their joints")

    def serve(self, joints):
        self.joints = list(joints)

    def values(self):
        """{term: array in `joints` order} of the gains.* parameters of the joints served."""
        return {term: np.array([self._node.get_parameter(gain_name(joint, term)).value for joint in self.joints],
                               dtype=float) for term in self._terms}

    def mirror(self, gains):
        """Write {term: array in `joints` order} into the gains.* parameters (values the node already took)."""
        self._mirroring = True
        try:
            self._node.set_parameters([Parameter(gain_name(joint, term), value=float(value))
                                       for term, column in gains.items() for joint, value in zip(self.joints, column)])
        finally:
            self._mirroring = False

    def _on_set(self, changes):
        if self._mirroring:
            return
        gains = self.values()
        position = {joint: k for k, joint in enumerate(self.joints)}
        for name, value in changes.items():
            joint, term = split_gain_name(name)
            if joint not in position:
                raise ConfigurationError(f"parameter {name!r}: {joint!r} is not a joint of the robot the node runs")
            gains[term][position[joint]] = joint_gain(name, value)
        self._apply(gains)


def stamp_seconds(stamp) -> float:
    """A builtin_interfaces/Time (or Duration) in seconds."""
    return stamp.sec + 1e-9 * stamp.nanosec


def stamp_nanoseconds(stamp) -> int:
    """A builtin_interfaces/Time in integer nanoseconds (exact, where seconds as a float round)."""
    return stamp.sec * 1_000_000_000 + stamp.nanosec


def publish_finite(publisher, msg, values, throttle) -> bool:
    """Publish ``values`` (a float64 NumPy array) as ``msg.data`` (Float64MultiArray) unless one is not finite: the
    last check before every command, whatever produced it (a throttled warning instead). Returns whether it was
    published."""
    if not all_finite(values):
        throttle.warn('non-finite', f"not publishing a non-finite command {values.tolist()}")
        return False
    msg.data = array('d', values.tobytes())
    publisher.publish(msg)
    return True


STATE_LABEL = 'answers state '   # + '<sec>.<nanosec>': the label of an effort command's layout dimension
# The label's stamp as StateAnswers writes it: builtin_interfaces/Time's sec (uint32: at most 10 digits) and nanosec
# (9 digits), ASCII only (str.isdigit takes '\u00b2', which int() refuses; a 5,000-digit field exceeds int()'s limit).
LABELLED_STAMP = re.compile(r'answers state ([0-9]{1,10})\.([0-9]{9})', re.ASCII)


def answered_state(msg) -> int | None:
    """The stamp (ns) of the joint state an effort command (Float64MultiArray) names as the one it answers
    (StateAnswers), or None when it names none (no label, or one not written as StateAnswers writes it)."""
    dims = msg.layout.dim
    match = LABELLED_STAMP.fullmatch(dims[0].label) if len(dims) == 1 else None
    if match is None:
        return None
    return int(match[1]) * 1_000_000_000 + int(match[2])


class StateAnswers:
    """A controller's effort commands, each naming the joint state it answers.

    Float64MultiArray has no header, so the command's one layout dimension (size = stride = the number of joints,
    as a 1-D array's layout reads) is labelled 'answers state <sec>.<nanosec>' with the state's stamp; consumers
    that do not know the label ignore the layout, as ros2_control's forward command controllers do. A lockstep
    simulator steps only on the answer to the state it published last, so a late answer to an earlier state (one
    republished while the simulator waited for its first command) is not taken for the next state's."""

    def __init__(self, publisher, size, throttle):
        self.publisher, self.throttle = publisher, throttle
        self.dimension = MultiArrayDimension(size=size, stride=size)
        self.msg = Float64MultiArray(layout=MultiArrayLayout(dim=[self.dimension]))

    def publish(self, stamp_ns, values) -> bool:
        """Publish `values` as the answer to the state stamped `stamp_ns` (None: to no state), unless one is not
        finite (publish_finite); whether it was published."""
        self.dimension.label = ('' if stamp_ns is None else
                                f"{STATE_LABEL}{stamp_ns // 1_000_000_000}.{stamp_ns % 1_000_000_000:09d}")
        return publish_finite(self.publisher, self.msg, values, self.throttle)
