"""The node parameter reference (docs/parameters.md), generated from the nodes' parameter tables.

    python -m robot_dynamics_ros.nodes.parameter_reference > docs/parameters.md

Each node module declares its parameters in a table, ``PARAMETERS`` (rows of ``common.Param``); the parameters
every node shares (the URDF, the SRDF, the executor) are declared by ``common``'s helpers, whose declarations are
read here by running them on a stand-in node that only records them. test/test_docs.py fails when
docs/parameters.md differs from this output. The node modules import rclpy: they are imported when the reference
is made, not when this module is.
"""
import importlib
import sys

# ROS node name, module under robot_dynamics_ros.nodes, the parameters it declares through common's helpers (see
# _shared_rows): the SRDF's, the URDF's (with the node's root_joint default) and the executor's
MODEL, FLOATING_MODEL, SRDF, EXECUTOR = ('model', ''), ('model', 'floating'), ('srdf',), ('executor',)
NODES = (
    ('simulator', 'simulator', (SRDF, MODEL, EXECUTOR)),
    ('computed_torque_controller', 'computed_torque_controller', (MODEL, EXECUTOR)),
    ('trajectory_publisher', 'trajectory_publisher', (MODEL, EXECUTOR)),
    ('legged_controller', 'legged_controller', (SRDF, FLOATING_MODEL, EXECUTOR)),
    ('cartesian_controller', 'cartesian_controller', (MODEL, EXECUTOR)),
    ('cartesian_target_publisher', 'cartesian_target_publisher', (EXECUTOR,)),
    ('viewer', 'viewer', (MODEL, EXECUTOR)),
)

HEADER = """\
# Node parameters

Generated from the nodes' parameter tables by `python -m robot_dynamics_ros.nodes.parameter_reference >
docs/parameters.md`; `test/test_docs.py` fails when this file and the tables differ. Do not edit it by hand.

Parameters are typed (`true`/`false` for booleans; an integer is accepted where a float is expected). Every
declared parameter has a value: `[]` for a per-joint list means "from the model". *Run time*: `ros2 param set`
may change it while the node runs, checked by the code that checks it at start-up (an invalid value is refused
with the reason and the old one is kept); the others are read-only. `config/closed_loop.yaml` holds the values
the bundled loop uses for any robot, `config/arm7.yaml` those of the bundled arm.
"""


class _Recorded(Exception):
    """Raised by the stand-in node to stop a helper once its declarations are recorded."""


class _Recorder:
    """A stand-in for an rclpy node that records parameter declarations (name, default, descriptor)."""

    _parameter_overrides = {}

    def __init__(self, stop_at=()):
        self.declared = []
        self._stop_at = set(stop_at)

    def declare_parameter(self, name, default, descriptor, ignore_override=False):
        self.declared.append((name, default, descriptor))
        if name in self._stop_at:
            raise _Recorded

        class Value:
            value = default
        return Value

    def create_subscription(self, *args, **kwargs):
        class Subscription:
            topic_name = '/robot_description'
        return Subscription

    def get_logger(self):
        class Logger:
            def info(self, *args, **kwargs):
                pass
        return Logger()


def _shared_rows(group):
    """(name, default, description, runtime, dynamic_typing) of the parameters a helper of ``common`` declares."""
    from . import common
    recorder = _Recorder(stop_at=('executor',))
    try:
        if group[0] == 'model':
            common.ModelSource(recorder, lambda model: None, root_joint_default=group[1])
        elif group[0] == 'srdf':
            common.semantic_description(recorder)
        elif group[0] == 'executor':
            common.make_executor(recorder)
        else:
            raise ValueError(f"unknown parameter group {group!r}")
    except _Recorded:
        pass
    return [(name, default, descriptor.description, not descriptor.read_only, descriptor.dynamic_typing)
            for name, default, descriptor in recorder.declared]


def _table_rows(module):
    table = importlib.import_module(f'{__package__}.{module}').PARAMETERS
    return [(row.name, row.default, row.description, row.runtime, row.dynamic_typing) for row in table]


def _type(default, dynamic_typing):
    from rclpy.parameter import Parameter
    if isinstance(default, Parameter.Type):
        kind = {Parameter.Type.STRING_ARRAY: 'string[]', Parameter.Type.DOUBLE_ARRAY: 'double[]',
                Parameter.Type.INTEGER_ARRAY: 'integer[]', Parameter.Type.BOOL_ARRAY: 'bool[]'}[default]
    elif isinstance(default, bool):
        kind = 'bool'
    elif isinstance(default, int):
        kind = 'integer'
    elif isinstance(default, float):
        kind = 'double'
    elif isinstance(default, str):
        kind = 'string'
    elif isinstance(default, (list, tuple)):
        kind = _type(default[0], False) + '[]'
    else:
        raise TypeError(f"no parameter type for default {default!r}")
    return f'{kind} or {kind}[]' if dynamic_typing else kind


def _value(default):
    from rclpy.parameter import Parameter
    if isinstance(default, Parameter.Type):
        return '[]'
    if isinstance(default, bool):
        return 'true' if default else 'false'
    if isinstance(default, str):
        return f"'{default}'"
    if isinstance(default, (list, tuple)):
        return '[' + ', '.join(_value(v) for v in default) + ']'
    return repr(default)


def _cell(text):
    return str(text).replace('|', '\\|')


def _table(rows):
    lines = ['| parameter | type | default | run time | meaning |', '|---|---|---|---|---|']
    for name, default, description, runtime, dynamic_typing in rows:
        lines.append(f"| `{name}` | {_type(default, dynamic_typing)} | `{_cell(_value(default))}` | "
                     f"{'yes' if runtime else ''} | {_cell(description)} |")
    return lines


def _joint_gain_rows(module):
    """Rows of the per-joint gains gains.<joint>.<term> (common.JointGains) a controller declares once its model
    is known, one row per term; none for a node without GAIN_TERMS."""
    terms = getattr(importlib.import_module(f'{__package__}.{module}'), 'GAIN_TERMS', {})
    return [f"| `gains.<joint>.{term}` | double | the joint's `{parameter}` | yes | {parameter} of one joint "
            f"(joint_trajectory_controller's name), declared for every joint once the model is known; wins over "
            f"`{parameter}` where both are given |" for term, parameter in terms.items()]


def reference():
    """The text of docs/parameters.md."""
    lines = [HEADER]
    for node, module, shared in NODES:
        lines.append(f"## `{node}`\n")
        common = [row for group in shared for row in _shared_rows(group)]
        shared_text = (f"the last {len(common)} rows, which several nodes share, are" if len(common) > 1
                       else "the last row, which every node shares, is")
        lines.append(f"Its table is in `robot_dynamics_ros/nodes/{module}.py`; {shared_text} declared by "
                     "`robot_dynamics_ros/nodes/common.py`.\n")
        lines += _table(_table_rows(module) + common) + _joint_gain_rows(module) + ['']
    return '\n'.join(lines).rstrip('\n') + '\n'


def main():
    sys.stdout.write(reference())
    return 0


if __name__ == '__main__':
    sys.exit(main())
