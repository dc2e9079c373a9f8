"""A node's parameters, declared from its schema (``parameter_schema.py``) through rclpy: what the user gave, the
descriptors, the same checks at start-up and at every ``ros2 param set``; and the numeric conversions the nodes share.

Only APIs available in rclpy as shipped with Humble are used.
"""
import math

import numpy as np
from rcl_interfaces.msg import FloatingPointRange, IntegerRange, ParameterDescriptor, SetParametersResult
from rclpy.parameter import Parameter

from . import parameter_schema
from .parameter_schema import ConfigurationError
from ..algorithms.rnea import STANDARD_GRAVITY


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
