"""`ros2 param load` and `--params-file` of a node's own `ros2 param dump`: the dump written as ros2param 0.36 writes
it (list_parameters, get_parameters with the sorted names, the values as Python, nested at '.', then
``yaml.dump(..., default_flow_style=False)``), and a node started with that file as its --params-file, as launch
passes a launch file's parameters, holding the same values. The first node gets its URDF as the launch files give
it: the XML, with its comments, in robot_description."""
import os
import signal

import pytest
import yaml
from rcl_interfaces.srv import GetParameters, ListParameters
from rclpy.parameter import parameter_dict_from_yaml_file, parameter_value_to_python
from rclpy.parameter_client import AsyncParameterClient

from ros_helpers import NodeProcess, ros_domain, start  # noqa: F401  (fixtures)
from conftest import BUNDLED_URDF

STARTUP = 60.0


def call(probe, node, client, request):
    return probe.call(client, request, STARTUP, node.log)


def parameters(probe, node):
    """{name: Python value} of every parameter of the node (a NodeProcess), as `ros2 param dump` reads them."""
    names = sorted(call(probe, node, probe.node.create_client(ListParameters, f'{node.name}/list_parameters'),
                        ListParameters.Request()).result.names)
    values = call(probe, node, probe.node.create_client(GetParameters, f'{node.name}/get_parameters'),
                  GetParameters.Request(names=names)).values
    assert len(values) == len(names)
    return {name: parameter_value_to_python(value) for name, value in zip(names, values)}


def dump(node_name, values):
    """The YAML text ros2param's DumpVerb prints: names split at the first '.' into nested mappings."""
    def insert(dictionary, key, value):
        head, _, rest = key.partition('.')
        if rest:
            insert(dictionary.setdefault(head, {}), rest, value)
        else:
            dictionary[key] = value
    tree = {}
    for name, value in values.items():
        insert(tree, name, value)
    return yaml.dump({f'/{node_name}': {'ros__parameters': tree}}, default_flow_style=False)


@pytest.mark.parametrize('node_name', ['simulator', 'computed_torque_controller'])
def test_a_node_loads_its_own_parameter_dump(ros_domain, start, tmp_path, node_name):
    env, probe = ros_domain
    with open(BUNDLED_URDF) as f:
        urdf = f.read()
    given = tmp_path / 'given.yaml'   # as launch_ros writes a launch file's parameters
    given.write_text(yaml.dump({f'/{node_name}': {'ros__parameters': {'robot_description': urdf}}}))
    first = start(node_name, extra_args=['--params-file', str(given)])
    dumped = parameters(probe, first)
    assert dumped['robot_description'] == urdf
    assert first.stop(signal.SIGINT) == 0, first.log()

    dump_file = tmp_path / 'dump.yaml'
    dump_file.write_text(dump(node_name, dumped))
    # ros2 param load reads it with rclpy, which guesses every value's type again from its str() with PyYAML: a
    # multi-line string comes back folded (as a plain scalar), `[]` as a bool array (the node refuses both: read-only);
    # a ':' before a space or a line's end in the string (the URDF's comments had them) made it raise instead
    loaded = parameter_dict_from_yaml_file(str(dump_file), True, target_nodes=[f'/{node_name}'])
    loaded = {name: parameter_value_to_python(msg.value) for name, msg in loaded.items()}
    loaded_names = list(loaded)
    assert set(loaded) == set(dumped)
    assert ' '.join(loaded.pop('robot_description').split()) == ' '.join(urdf.split())
    assert loaded == {name: value for name, value in dumped.items() if name != 'robot_description'}
    # ... and --params-file with rcl's parser (libyaml), as launch passes it
    os.makedirs(tmp_path / 'second')
    second = NodeProcess(node_name, env, str(tmp_path / 'second'), extra_args=['--params-file', str(dump_file)])
    try:
        again = parameters(probe, second)
        assert again == dumped, {name: (dumped.get(name), again.get(name)) for name in set(dumped) | set(again)
                                 if dumped.get(name) != again.get(name)}
        # `ros2 param load` on the running node: what ros2param's load_parameter_file calls
        client = AsyncParameterClient(probe.node, f'/{node_name}')
        future = client.load_parameter_file(str(dump_file), True)
        assert probe.spin_until(future.done, STARTUP), second.log()
        results = dict(zip(loaded_names, future.result().results))
        refused = {name: result.reason for name, result in results.items() if not result.successful}
        assert all('read-only' in reason for reason in refused.values()), refused   # as any node's read-only ones
        assert results['use_sim_time'].successful   # the writable ones are set
        print(f"{node_name}: ros2 param load set {len(results) - len(refused)} parameters, refused {len(refused)} "
              "read-only ones")
        assert second.stop(signal.SIGINT) == 0, second.log()
    finally:
        second.kill()
