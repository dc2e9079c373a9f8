"""The node parameter reference (docs/parameters.md), generated from the nodes' parameter schemas.

    python -m robot_dynamics_ros.nodes.parameter_reference > docs/parameters.md

Each node's parameters are in its schema, robot_dynamics_ros/nodes/parameters/<node>.yaml (generate_parameter_library's
layout, read by parameter_schema, which the nodes declare them from). test/test_docs.py fails when docs/parameters.md
differs from this output. No ROS here.
"""
import sys

from .parameter_schema import load, rules

NODES = ('simulator', 'computed_torque_controller', 'trajectory_publisher', 'legged_controller', 'cartesian_controller',
         'cartesian_target_publisher', 'viewer')

HEADER = """\
# Node parameters

Generated from the nodes' parameter schemas, `robot_dynamics_ros/nodes/parameters/<node>.yaml`
(generate_parameter_library's layout, read by the nodes at run time), by `python -m
robot_dynamics_ros.nodes.parameter_reference > docs/parameters.md`; `test/test_docs.py` fails when this file and
the schemas differ. Do not edit it by hand.

Parameters are typed (`true`/`false` for booleans; an integer is accepted where a double is expected). Every
declared parameter has a value: `[]` for a per-joint list means "from the model". *Checked*: the schema's
validators, run at start-up (an invalid value stops the node with the reason) and at every `ros2 param set`;
numbers they bound carry the range in their descriptor (`ros2 param describe`). *Run time*: `ros2 param set` may
change it while the node runs (an invalid value is refused with the reason and the old one is kept); the others are
read-only. `config/closed_loop.yaml` holds the values the bundled loop uses for any robot, `config/arm7.yaml` those
of the bundled arm.
"""


def _type(spec, per_joint=False):
    return f'{spec.type} or {spec.type}_array' if spec.dynamic_typing and not per_joint else spec.type


def _value(value):
    if isinstance(value, bool):
        return 'true' if value else 'false'
    if isinstance(value, str):
        return f"'{value}'"
    if isinstance(value, (list, tuple)):
        return '[' + ', '.join(_value(v) for v in value) + ']'
    return repr(value)


def _cell(text):
    return str(text).replace('|', '\\|')


def _row(name, spec, default, per_joint=False):
    runtime = '' if spec.read_only else 'yes'
    return (f"| `{name}` | {_type(spec, per_joint)} | {default} | {_cell(rules(spec))} | {runtime} | "
            f"{_cell(spec.description)} |")


def reference():
    """The text of docs/parameters.md."""
    lines = [HEADER]
    for node in NODES:
        schema = load(node)
        lines += [f"## `{node}`\n", f"Its schema is `robot_dynamics_ros/nodes/parameters/{node}.yaml`.\n",
                  '| parameter | type | default | checked | run time | meaning |', '|---|---|---|---|---|---|']
        lines += [_row(name, spec, f"`{_cell(_value(spec.default))}`") for name, spec in schema.parameters.items()]
        for group, terms in schema.joint_maps.items():
            lines += [_row(f'{group}.<joint>.{term}', spec, 'see meaning', per_joint=True)
                      for term, spec in terms.items()]
        lines.append('')
    return '\n'.join(lines).rstrip('\n') + '\n'


def main():
    sys.stdout.write(reference())
    return 0


if __name__ == '__main__':
    sys.exit(main())
