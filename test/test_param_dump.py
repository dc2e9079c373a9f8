"""`ros2 param dump` and `ros2 param get` on every node, over DDS the way they do it: list_parameters, then
get_parameters with every name listed (rcl_interfaces). rclpy answers a whole get_parameters request with
nothing when one parameter has no value, so every declared parameter must have one."""
import signal

import pytest
from rcl_interfaces.msg import ParameterType
from rcl_interfaces.srv import GetParameters, ListParameters
from rclpy.parameter import parameter_value_to_python

from ros_helpers import ros_domain, start  # noqa: F401  (fixtures)
from conftest import BUNDLED_URDF

STARTUP = 60.0


def call(probe, client, request):
    return probe.call(client, request, STARTUP)


@pytest.mark.parametrize('node_name', ['simulator', 'computed_torque_controller', 'trajectory_publisher'])
def test_every_parameter_of_every_node_has_a_value(ros_domain, start, node_name):
    _, probe = ros_domain
    node = start(node_name, params=[('urdf_file', BUNDLED_URDF)])
    listed = call(probe, probe.node.create_client(ListParameters, f'{node_name}/list_parameters'),
                  ListParameters.Request()).result.names
    assert 'joints' in listed and 'urdf_file' in listed, listed
    values = call(probe, probe.node.create_client(GetParameters, f'{node_name}/get_parameters'),
                  GetParameters.Request(names=listed)).values
    assert len(values) == len(listed), f"{len(values)} values for {len(listed)} parameters"
    dump = dict(zip(listed, values))
    unset = [name for name, value in dump.items() if value.type == ParameterType.PARAMETER_NOT_SET]
    assert not unset, unset
    # `joints` not given: an empty list of names (model order), typed as the names it takes
    assert dump['joints'].type == ParameterType.PARAMETER_STRING_ARRAY
    assert parameter_value_to_python(dump['joints']) == []
    assert parameter_value_to_python(dump['urdf_file']) == BUNDLED_URDF
    assert node.stop(signal.SIGINT) == 0
