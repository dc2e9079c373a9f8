"""The cartesian_controller node validates its gains as the computed-torque controller does (issue 37, item 5): gains
the loop cannot realise at joint_state_rate (``control.cartesian.check_gains``, see test_cartesian_guards) are refused
at run time with the reason and the old ones kept: in process, and over DDS as `ros2 param set` reaches them."""
import signal

import numpy as np

from conftest import ROOT
from ros_helpers import ParameterClient, domain_id, in_process_ros, ros_domain, start  # noqa: F401  (fixtures; skips without rclpy)

from rclpy.parameter import Parameter  # noqa: E402

from robot_dynamics_ros.nodes.cartesian_controller import CartesianControllerNode  # noqa: E402

UR5 = f'{ROOT}/test/urdf/real/ur5.urdf'
STARTUP = 120.0   # s: the first start compiles the law's kernel (once per source version)
ATTACKS = (('stiffness.trans_x', 1e12), ('damping_ratio', 1e12), ('nullspace.stiffness', 1e12))


def test_the_node_refuses_unstable_gains_at_run_time_and_keeps_the_old_ones():
    """``ros2 param set`` reaches _apply_settings through the node's parameter callback: in process, the same."""
    with in_process_ros(['--ros-args', '-p', f'urdf_file:={UR5}'], domain_id(__name__)):
        node = CartesianControllerNode()
        stiffness = node.controller.stiffness.copy()
        for name, value in ATTACKS:
            result = node.set_parameters([Parameter(name, value=value)])[0]
            assert not result.successful and 'unstable' in result.reason, (name, result.reason)
        np.testing.assert_array_equal(node.controller.stiffness, stiffness)
        assert node.controller.zeta == 1.0 and node.controller.nullspace_stiffness == 10.0
        assert node.get_parameter('stiffness.trans_x').value == 500.0
        assert node.set_parameters([Parameter('stiffness.trans_x', value=800.0)])[0].successful
        assert node.controller.stiffness[3] == 800.0
        node.destroy_node()


def test_ros2_param_set_of_an_unstable_gain_is_refused_with_the_reason(ros_domain, start):
    _, probe = ros_domain
    controller = start('cartesian_controller', params=[('urdf_file', UR5)])
    assert controller.wait_for_log("control of 'tool0'", STARTUP), controller.log()   # the model is loaded
    parameters = ParameterClient(probe, 'cartesian_controller', STARTUP)
    for name, value in ATTACKS:
        result = parameters.set(name, value)
        assert not result.successful and 'unstable at 1000 joint states per second' in result.reason, result.reason
    assert parameters.get('stiffness.trans_x') == 500.0
    assert parameters.get('damping_ratio') == 1.0
    assert parameters.set('stiffness.trans_x', 800.0).successful
    assert controller.stop(signal.SIGINT) == 0
    assert 'Traceback' not in controller.log()
