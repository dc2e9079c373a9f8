"""The nodes' parameter schemas (robot_dynamics_ros/nodes/parameters/<node>.yaml, generate_parameter_library's layout):
they hold exactly the names, types, defaults and run-time flags the nodes' tables had before the schemas replaced them
(test/parameters_before_schema.json, a dump of those tables), the loader declares exactly those on a node, the
validators refuse what they name, and over DDS a `ros2 param set` outside a schema's range is refused."""
import json
import math
import os
import signal

import pytest

from conftest import BUNDLED_URDF, ROOT
from ros_helpers import ParameterClient, domain_id, release, ros_domain, start  # noqa: F401  (fixtures; skips without rclpy)

import rclpy  # noqa: E402
from rclpy.node import Node  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402

from robot_dynamics_ros.control.cartesian import LAWS, PLANES  # noqa: E402
from robot_dynamics_ros.control.computed_torque import CONTROL_MODES  # noqa: E402
from robot_dynamics_ros.control.standing import MODES as STANDING_MODES  # noqa: E402
from robot_dynamics_ros.nodes import node_parameters, parameter_schema  # noqa: E402
from robot_dynamics_ros.nodes.parameter_reference import NODES  # noqa: E402
from robot_dynamics_ros.simulation.simulator import TIMEOUT_BEHAVIOURS  # noqa: E402

BEFORE = json.load(open(os.path.join(os.path.dirname(__file__), 'parameters_before_schema.json'), encoding='utf-8'))
RCLPY_OWN = {'use_sim_time', 'start_type_description_service'}   # declared by rclpy itself
STARTUP = 300.0   # s: the node compiles its kernels on a loaded machine


def test_every_node_has_a_schema_and_the_reference_covers_them():
    files = {name.removesuffix('.yaml') for name in os.listdir(parameter_schema.SCHEMA_DIRECTORY)}
    assert files == set(BEFORE) == set(NODES)


@pytest.mark.parametrize('node', sorted(BEFORE))
def test_a_schema_holds_the_tables_names_types_defaults_and_run_time_flags(node):
    schema = parameter_schema.load(node)
    expected = {p['name']: (p['type'], p['default'], p['runtime'], p['dynamic_typing'], p['description'])
                for p in BEFORE[node]['parameters']}
    found = {name: (spec.type, spec.default, not spec.read_only, spec.dynamic_typing, spec.description)
             for name, spec in schema.parameters.items()}
    assert found == expected
    for name, spec in schema.parameters.items():   # 1 == 1.0: the type of a default counts too
        assert type(spec.default) is type(expected[name][1]), name
    assert set(schema.joint_maps.get('gains', {})) == set(BEFORE[node]['gain_terms'])


@pytest.mark.parametrize('node', sorted(BEFORE))
def test_the_loader_declares_exactly_those_names_with_their_defaults_and_read_only_flags(node):
    rclpy.init(args=[], domain_id=domain_id(__name__))
    try:
        ros_node = Node(f'schema_{node}')
        values = node_parameters.declare_parameters(ros_node, node)
        expected = {p['name']: p for p in BEFORE[node]['parameters']}
        assert set(ros_node.list_parameters([], 0).names) - RCLPY_OWN == set(expected)
        for name, row in expected.items():
            parameter = ros_node.get_parameter(name)
            assert parameter.value == row['default'] and values[name] == row['default'], name
            assert parameter.type_ != Parameter.Type.NOT_SET, name
            assert ros_node.describe_parameter(name).read_only == (not row['runtime']), name
        ros_node.destroy_node()
    finally:
        release(rclpy.get_default_context())


def test_the_schemas_choices_are_the_codes():
    """one_of lists the code also knows (it branches on them): the schema and the code must not drift apart."""
    def choices(node, name):
        return tuple(dict(parameter_schema.load(node).parameters[name].validation)['one_of'][0])
    assert choices('computed_torque_controller', 'mode') == CONTROL_MODES
    assert choices('cartesian_controller', 'law') == LAWS
    assert set(choices('cartesian_target_publisher', 'plane')) == set(PLANES)
    assert choices('legged_controller', 'mode') == STANDING_MODES
    assert choices('simulator', 'on_command_timeout') == TIMEOUT_BEHAVIOURS


def test_parameters_several_nodes_share_are_the_same_in_every_schema():
    shared = ('robot_description', 'urdf_file', 'root_joint', 'mimic', 'robot_description_semantic', 'srdf_file',
              'executor', 'autostart')
    for name in shared:
        specs = [parameter_schema.load(node).parameters.get(name) for node in NODES]
        specs = [spec for spec in specs if spec is not None]
        assert len(specs) >= 2, name
        assert len({(spec.type, spec.description, spec.read_only, repr(spec.validation)) for spec in specs}) == 1, name
    assert parameter_schema.load('legged_controller').parameters['root_joint'].default == 'floating'
    assert parameter_schema.load('simulator').parameters['root_joint'].default == ''


def flattened(section, prefix=''):
    """Dotted parameter names of a params file's ros__parameters (nested maps are dotted names, as rcl reads them)."""
    for key, value in section.items():
        if isinstance(value, dict):
            yield from flattened(value, f'{prefix}{key}.')
        else:
            yield prefix + key


@pytest.mark.parametrize('config', ['closed_loop.yaml', 'arm7.yaml', 'legged.yaml', 'quadruped.yaml'])
def test_the_bundled_params_files_name_only_parameters_of_the_schemas(config):
    """A node no longer hears of parameters its schema lacks (it asks for its own, by name): a bundled file naming
    one would set nothing."""
    import yaml
    with open(os.path.join(ROOT, 'config', config), encoding='utf-8') as file:
        sections = yaml.safe_load(file)
    for node, section in sections.items():
        if node not in NODES:
            continue
        schema = parameter_schema.load(node)
        names = set(flattened(section['ros__parameters'])) - RCLPY_OWN
        unknown = {name for name in names if name not in schema.parameters
                   and not (name.startswith('gains.') and name.rpartition('.')[2] in schema.joint_maps.get('gains', {}))}
        assert not unknown, (config, node, unknown)


# --- validators, without ROS -----------------------------------------------------------------------------------

def spec(validation, kind='double', default=None):
    return parameter_schema.parse('n', {'n': {'x': {'type': kind, 'default_value': default, 'description': '',
                                                    'validation': validation}}}).parameters['x']


@pytest.mark.parametrize('validation, good, bad', [
    ({'gt<>': [0.0]}, [1e-9, 5.0], [0.0, -1.0, math.nan, math.inf]),
    ({'gt_eq<>': [0.0]}, [0.0, 3.0], [-1e-9, math.nan, math.inf]),
    ({'lt': [1.0]}, [0.5], [1.0, 2.0]),
    ({'lt_eq': [1.0]}, [1.0], [1.5]),
    ({'bounds<>': [1, 65535]}, [1, 65535], [0, 65536]),
    ({'one_of<>': [['a', 'b']]}, ['a', 'b'], ['c', '']),
    ({'robot_dynamics_ros::finite': []}, [0.0, -3.0], [math.nan, -math.inf, 'x', True]),
    ({'robot_dynamics_ros::numbers': []}, [2.0, 3, [1.0, 2]], [True, [1.0, True], 'x', [1.0, math.nan]]),
])
def test_a_validator_takes_what_it_names_and_refuses_the_rest_with_the_parameters_name(validation, good, bad):
    checked = spec(validation)
    for value in good:
        checked.check(value)
    for value in bad:
        with pytest.raises(parameter_schema.ConfigurationError, match="'x'"):
            checked.check(value)


def test_the_nodes_messages_say_positive_and_non_negative():
    with pytest.raises(parameter_schema.ConfigurationError, match="'x' must be positive, got 0.0"):
        spec({'gt<>': [0.0]}).check(0.0)
    with pytest.raises(parameter_schema.ConfigurationError, match="'x' must be non-negative, got -1.0"):
        spec({'gt_eq<>': [0.0]}).check(-1.0)


def test_ranges_for_descriptors_come_from_the_bounding_validators():
    assert spec({'gt<>': [0.0]}).range() == (0.0, None)
    assert spec({'bounds<>': [1, 65535]}, 'int').range() == (1, 65535)
    assert spec({'one_of<>': [['a']]}, 'string').range() is None
    assert spec({'robot_dynamics_ros::finite': []}).range() is None


@pytest.mark.parametrize('entry, message', [
    ({'type': 'double', 'default_value': 1.0, 'validation': {'positive': []}}, 'unknown validator'),
    ({'type': 'float', 'default_value': 1.0}, 'unknown type'),
    ({'type': 'double', 'default_value': 1.0, 'units': 'm'}, 'unknown fields'),
    ({'type': 'int', 'default_value': 1.5}, 'is not a int'),
    ({'type': 'double', 'default_value': -1.0, 'validation': {'gt<>': [0.0]}}, 'must be positive'),
])
def test_a_schema_with_an_error_is_refused_when_read(entry, message):
    with pytest.raises((ValueError, parameter_schema.ConfigurationError), match=message):
        parameter_schema.parse('n', {'n': {'x': entry}})


# --- over DDS ----------------------------------------------------------------------------------------------------

def test_ros2_param_set_outside_a_schemas_range_is_refused_and_inside_taken(ros_domain, start):
    """max_force (cartesian_controller, gt_eq 0, run time): -5 is refused by the descriptor's range, which
    `ros2 param describe` shows, and the value stays; 50 is taken. joint_state_rate is read-only."""
    from rcl_interfaces.srv import DescribeParameters
    _, probe = ros_domain
    controller = start('cartesian_controller', params=[('urdf_file', BUNDLED_URDF)])
    assert controller.wait_for_log('executor:', STARTUP), controller.log()   # built (compiled code): it spins now
    parameters = ParameterClient(probe, 'cartesian_controller', STARTUP)
    result = parameters.set('max_force', -5.0)
    assert not result.successful and 'max_force' in result.reason, result.reason
    assert parameters.get('max_force') == 0.0
    assert parameters.set('max_force', 50.0).successful
    assert parameters.get('max_force') == 50.0
    assert not parameters.set('joint_state_rate', 500.0).successful

    client = probe.node.create_client(DescribeParameters, 'cartesian_controller/describe_parameters')
    max_force, rate = probe.call(client, DescribeParameters.Request(names=['max_force', 'joint_state_rate']),
                                 STARTUP).descriptors
    assert (max_force.floating_point_range[0].from_value, max_force.floating_point_range[0].to_value) == (0.0, math.inf)
    assert not max_force.read_only and rate.read_only and rate.additional_constraints == '> 0.0'
    assert controller.stop(signal.SIGINT) == 0
