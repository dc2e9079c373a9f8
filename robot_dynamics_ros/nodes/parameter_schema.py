"""A node's parameters from its YAML schema, robot_dynamics_ros/nodes/parameters/<node>.yaml, read at run time.

The layout is generate_parameter_library's (the one ros2_controllers use): the node's name, then one entry per
parameter (nested mappings for dotted names: ``nullspace: {posture: ...}`` is ``nullspace.posture``) with ``type``
(bool, int, double, string, bool_array, int_array, double_array, string_array), ``default_value``, ``description``,
``read_only`` (``ros2 param set`` refused) and ``validation``: gt, gt_eq, lt, lt_eq, bounds, one_of (written with
or without gpl's ``<>``), and this package's custom validators in gpl's ``<namespace>::<function>`` form,
``robot_dynamics_ros::finite`` and ``robot_dynamics_ros::numbers`` (CUSTOM). One extension: ``dynamic_typing:
true`` for a number that may also be given as a list, one per joint (kp), which gpl has no type for. ``__map_joints``
under a group (``gains: __map_joints: p: ...``) is gpl's per-joint map: gains.<joint>.p for every joint, declared
by the node once it knows the joints (joint_gains.JointGains).

The comparisons also refuse NaN and infinities: every bound here is on a finite quantity. No ROS here:
node_parameters.py declares the parameters with these specifications (descriptors, ranges) and checks values with ``Spec.check`` at
start-up and at every ``ros2 param set``.
"""
import math
import os
from array import array
from dataclasses import dataclass, field
from typing import Any

import yaml

SCHEMA_DIRECTORY = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'parameters')
TYPES = {'bool': bool, 'int': int, 'double': float, 'string': str,
         'bool_array': bool, 'int_array': int, 'double_array': float, 'string_array': str}
FIELDS = {'type', 'default_value', 'description', 'read_only', 'validation', 'dynamic_typing'}
MAP_PREFIX = '__map_'


class ConfigurationError(Exception):
    """A parameter or URDF the node cannot run with; the node logs it and exits with code 1."""


def _number(name, value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigurationError(f"parameter {name!r} must be a number, got {value!r}")
    if not math.isfinite(value):
        raise ConfigurationError(f"parameter {name!r} must be finite, got {value!r}")
    return value


def _compare(test, words, zero_words):
    def validator(name, value, bound):
        if not test(_number(name, value), bound):
            said = zero_words if bound == 0 else f"{words} {bound}"
            raise ConfigurationError(f"parameter {name!r} must be {said}, got {value}")
    return validator


def bounds(name, value, lower, upper):
    if not lower <= _number(name, value) <= upper:
        raise ConfigurationError(f"parameter {name!r} must be in [{lower}, {upper}], got {value}")


def one_of(name, value, choices):
    if value not in choices:
        raise ConfigurationError(f"parameter {name!r} must be one of {list(choices)}, got {value!r}")


def finite(name, value):
    """A finite number (robot_dynamics_ros::finite)."""
    _number(name, value)


def numbers(name, value):
    """A finite number or a list of finite numbers, not booleans (robot_dynamics_ros::numbers): a gain given once or
    per joint (their count needs the model)."""
    values = list(value) if isinstance(value, (list, tuple, array)) else [value]   # rclpy: array('d') for doubles
    if isinstance(value, bool) or any(isinstance(v, bool) for v in values):
        raise ConfigurationError(f"parameter {name!r} must be a number or a list of numbers, not a boolean: "
                                 f"got {value!r}")
    for v in values:
        _number(name, v)


VALIDATORS = {
    'gt': _compare(lambda v, b: v > b, 'greater than', 'positive'),
    'gt_eq': _compare(lambda v, b: v >= b, 'at least', 'non-negative'),
    'lt': _compare(lambda v, b: v < b, 'less than', 'negative'),
    'lt_eq': _compare(lambda v, b: v <= b, 'at most', 'non-positive'),
    'bounds': bounds,
    'one_of': one_of,
}
CUSTOM = {'robot_dynamics_ros::finite': finite, 'robot_dynamics_ros::numbers': numbers}


@dataclass(frozen=True)
class Spec:
    """One parameter of a schema: ``default`` typed as ``type`` says ([] for an empty array), ``validation``
    ((validator name without <>, arguments), ...) in the schema's order."""
    name: str
    type: str
    default: Any
    description: str
    read_only: bool = False
    validation: tuple = ()
    dynamic_typing: bool = False

    def check(self, value):
        """Raise ConfigurationError (naming the parameter and the rule) unless every validator takes ``value``."""
        for validator, arguments in self.validation:
            (CUSTOM.get(validator) or VALIDATORS[validator])(self.name, value, *arguments)

    def range(self):
        """(lower, upper), inclusive, that the validators bound a number to (None for an open side), or None: for
        a descriptor's range. gt and lt give their bound, which the validator itself refuses."""
        if self.type not in ('int', 'double') or self.dynamic_typing:
            return None
        lower = upper = None
        for validator, arguments in self.validation:
            if validator in ('gt', 'gt_eq'):
                lower = arguments[0] if lower is None else max(lower, arguments[0])
            elif validator in ('lt', 'lt_eq'):
                upper = arguments[0] if upper is None else min(upper, arguments[0])
            elif validator == 'bounds':
                lower = arguments[0] if lower is None else max(lower, arguments[0])
                upper = arguments[1] if upper is None else min(upper, arguments[1])
        return None if lower is None and upper is None else (lower, upper)


@dataclass(frozen=True)
class Schema:
    """A node's parameters (``parameters``: {name: Spec}, in the file's order) and per-joint maps (``joint_maps``:
    {group: {term: Spec named <group>.<joint>.<term> with '<joint>' for the joint}})."""
    node: str
    parameters: dict
    joint_maps: dict = field(default_factory=dict)


RULES = {'gt': '> {}', 'gt_eq': '>= {}', 'lt': '< {}', 'lt_eq': '<= {}', 'bounds': 'in [{}, {}]', 'one_of': 'one of {}',
         'robot_dynamics_ros::finite': 'finite', 'robot_dynamics_ros::numbers': 'finite numbers'}


def rules(spec):
    """The validators of ``spec`` in words ('> 0.0, finite'; '' for none): docs and descriptors."""
    return ', '.join(RULES[validator].format(*(list(a) if isinstance(a, (list, tuple)) else a for a in arguments))
                     for validator, arguments in spec.validation)


def _spec(name, entry):
    unknown = set(entry) - FIELDS
    if unknown:
        raise ValueError(f"parameter {name!r}: unknown fields {sorted(unknown)}")
    kind = entry['type']
    if kind not in TYPES:
        raise ValueError(f"parameter {name!r}: unknown type {kind!r}")
    validation = []
    for validator, arguments in (entry.get('validation') or {}).items():
        validator = validator.removesuffix('<>')
        if validator not in VALIDATORS and validator not in CUSTOM:
            raise ValueError(f"parameter {name!r}: unknown validator {validator!r}")
        validation.append((validator, tuple(arguments or ())))
    default = entry.get('default_value')
    if kind == 'double' and isinstance(default, int) and not isinstance(default, bool):
        default = float(default)
    elif kind == 'double_array' and default is not None:
        default = [float(v) for v in default]
    spec = Spec(name, kind, default, entry.get('description', ''), bool(entry.get('read_only', False)),
                tuple(validation), bool(entry.get('dynamic_typing', False)))
    if default is not None:
        _check_type(spec, default)
        spec.check(default)
    return spec


def _check_type(spec, value):
    element = TYPES[spec.type]
    values = value if spec.type.endswith('_array') else [value]
    if not isinstance(values, list) or not all(type(v) is element for v in values):
        raise ValueError(f"parameter {spec.name!r}: default {value!r} is not a {spec.type}")


def parse(node, tree):
    """The Schema of ``tree`` ({node: {...}}, a schema file's content)."""
    if list(tree) != [node]:
        raise ValueError(f"a schema of {node!r} holds its parameters under {node!r}, got {list(tree)}")
    parameters, joint_maps = {}, {}

    def walk(prefix, mapping):
        for key, entry in mapping.items():
            if key.startswith(MAP_PREFIX):
                group = prefix.rstrip('.')
                joint_maps[group] = {term: _spec(f'{group}.<joint>.{term}', spec) for term, spec in entry.items()}
            elif 'type' in entry:
                parameters[prefix + key] = _spec(prefix + key, entry)
            else:
                walk(f'{prefix}{key}.', entry)
    walk('', tree[node] or {})
    return Schema(node, parameters, joint_maps)


def load(node, directory=SCHEMA_DIRECTORY):
    """The Schema of the node named ``node`` (its file <directory>/<node>.yaml)."""
    with open(os.path.join(directory, f'{node}.yaml'), encoding='utf-8') as file:
        return parse(node, yaml.safe_load(file))
