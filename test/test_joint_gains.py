"""Gains as ros2_controllers take them (issue 29): gains.<joint>.p, .d, .i (joint_trajectory_controller's per-joint
map) on the computed-torque and legged controller nodes, beside the number-or-list kp, kd, ki that keep working.
The parsing alone; the nodes in process (start-up precedence, params files, run-time sets and refusals); and over
DDS, what `ros2 param set` does: a joint's gain set at run time changes that joint's command, a bad one is refused
with a reason and the commands stay."""
import signal

import numpy as np
import pytest
import yaml

from conftest import BUNDLED_URDF, ROOT
from ros_helpers import ParameterClient, domain_id, release, ros_domain, start  # noqa: F401  (fixtures; skips without rclpy)
from test_ros_interfaces import Q0, Loop

import rclpy  # noqa: E402
from rclpy.exceptions import ParameterNotDeclaredException  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402

from robot_dynamics_ros import gravity_torques, load_urdf  # noqa: E402
from robot_dynamics_ros.nodes.joint_gains import gain_name, joint_gain, merge_joint_gains, split_gain_name
from robot_dynamics_ros.nodes.parameter_schema import ConfigurationError
from robot_dynamics_ros.nodes.computed_torque_controller import ControllerNode  # noqa: E402

MODEL = load_urdf(BUNDLED_URDF)
NAMES = list(MODEL.joint_names)
JOINTS = NAMES[3:] + NAMES[:3]   # a command order that is not the model's
QUADRUPED = f'{ROOT}/urdf/quadruped.urdf'
STARTUP = 30.0
TERMS = ('p', 'd', 'i')


# --- parsing ---------------------------------------------------------------------------------------------------

def test_gain_names_are_joint_trajectory_controllers():
    assert gain_name('arm7_joint1', 'p') == 'gains.arm7_joint1.p'
    assert split_gain_name('gains.arm7_joint1.d') == ('arm7_joint1', 'd')
    assert split_gain_name('gains.left.hip.i') == ('left.hip', 'i')   # a joint name may hold dots
    for name in ('kp', 'gains.p', 'gains..p', 'gains.joint.', 'stiffness.trans_x'):
        assert split_gain_name(name) is None, name


def test_a_joint_gain_is_a_finite_non_negative_number():
    assert joint_gain('gains.j.p', 400) == 400.0 and isinstance(joint_gain('gains.j.p', 400), float)
    assert joint_gain('gains.j.p', 0.0) == 0.0
    for value, reason in ((-1.0, 'non-negative'), (True, 'boolean'), ('400', 'number'), (float('nan'), 'finite'),
                          (float('inf'), 'finite'), ([1.0, 2.0], 'one joint')):
        with pytest.raises(ConfigurationError, match=reason):
            joint_gain('gains.j.p', value)


def test_map_entries_replace_their_joints_values_and_others_are_reported():
    fallback = {'p': np.full(3, 100.0), 'd': np.full(3, 20.0)}
    gains, unknown = merge_joint_gains(['a', 'b', 'c'], ('p', 'd'), fallback,
                                       {'gains.b.p': 250, 'gains.c.d': 5.0, 'gains.z.p': 1.0, 'gains.a.i': 3.0})
    np.testing.assert_array_equal(gains['p'], [100.0, 250.0, 100.0])
    np.testing.assert_array_equal(gains['d'], [20.0, 20.0, 5.0])
    assert sorted(unknown) == ['gains.a.i', 'gains.z.p']   # no joint z; no term i here
    np.testing.assert_array_equal(fallback['p'], 100.0)    # the fallback is not changed
    with pytest.raises(ConfigurationError, match='gains.b.p'):
        merge_joint_gains(['a', 'b'], ('p',), {'p': np.zeros(2)}, {'gains.b.p': -3.0})


# --- the nodes in process --------------------------------------------------------------------------------------

def in_process(node_class, *parameters, params_file=None):
    """A node of node_class built in this process with these (name, value) parameters (as -p gives them)."""
    args = ['--ros-args'] + [arg for name, value in parameters for arg in ('-p', f'{name}:={value}')]
    if params_file is not None:
        args += ['--params-file', str(params_file)]
    rclpy.init(args=args, domain_id=domain_id(__name__))
    return node_class()


@pytest.fixture
def built():
    nodes = []

    def build(node_class, *parameters, params_file=None):
        nodes.append(in_process(node_class, *parameters, params_file=params_file))
        return nodes[-1]
    yield build
    for node in nodes:
        getattr(node, 'trajectories').shutdown()
        node.destroy_node()
    release(rclpy.get_default_context())


def model_order(values_in_joints_order):
    """A vector in JOINTS order, in the model's."""
    return np.asarray(values_in_joints_order)[np.argsort([NAMES.index(name) for name in JOINTS])]


def test_the_map_wins_over_kp_for_its_joints_and_every_joint_has_its_entry(built):
    joint = JOINTS[0]
    node = built(ControllerNode, ('urdf_file', BUNDLED_URDF), ('joints', f"[{','.join(JOINTS)}]"), ('kp', 150.0),
                 ('kd', 25.0), (gain_name(joint, 'p'), 300), (gain_name(JOINTS[1], 'd'), 10.0))
    kp, kd = np.full(7, 150.0), np.full(7, 25.0)
    kp[0], kd[1] = 300.0, 10.0
    np.testing.assert_array_equal(node.controller.kp, model_order(kp))
    np.testing.assert_array_equal(node.controller.kd, model_order(kd))
    for k, name in enumerate(JOINTS):   # the map shows every joint's gains in use
        assert node.get_parameter(gain_name(name, 'p')).value == kp[k]
        assert node.get_parameter(gain_name(name, 'd')).value == kd[k]
        assert node.get_parameter(gain_name(name, 'i')).value == 0.0


def test_the_number_and_list_forms_still_work(built):
    kp = [50.0, 60.0, 70.0, 80.0, 90.0, 100.0, 110.0]   # JOINTS order
    node = built(ControllerNode, ('urdf_file', BUNDLED_URDF), ('joints', f"[{','.join(JOINTS)}]"),
                 ('kp', f"[{','.join(map(str, kp))}]"), ('kd', 15.0))
    np.testing.assert_array_equal(node.controller.kp, model_order(kp))
    np.testing.assert_array_equal(node.controller.kd, 15.0)
    assert [node.get_parameter(gain_name(name, 'p')).value for name in JOINTS] == kp


def test_a_params_file_takes_the_nested_map_as_ros2_controllers_configs_write_it(built, tmp_path):
    """gains: {joint: {p: .., d: .., i: ..}} in YAML, as joint_trajectory_controller's configs hold it (integers
    where a user writes them)."""
    config = {'computed_torque_controller': {'ros__parameters': {
        'urdf_file': BUNDLED_URDF, 'kp': 100.0,
        'gains': {NAMES[2]: {'p': 200, 'd': 30.0, 'i': 400.0}, NAMES[5]: {'p': 50.0}}}}}
    path = tmp_path / 'gains.yaml'
    path.write_text(yaml.safe_dump(config))
    node = built(ControllerNode, params_file=path)
    expected_kp, expected_kd, expected_ki = np.full(7, 100.0), np.full(7, 20.0), np.zeros(7)
    expected_kp[[2, 5]] = 200.0, 50.0
    expected_kd[2], expected_ki[2] = 30.0, 400.0
    np.testing.assert_array_equal(node.controller.kp, expected_kp)
    np.testing.assert_array_equal(node.controller.kd, expected_kd)
    np.testing.assert_array_equal(node.controller.ki, expected_ki)


def test_a_bad_map_entry_at_start_up_is_a_configuration_error(built):
    with pytest.raises(ConfigurationError, match=gain_name(NAMES[1], 'p')):
        built(ControllerNode, ('urdf_file', BUNDLED_URDF), (gain_name(NAMES[1], 'p'), -5.0))


def test_run_time_sets_change_one_joint_refuse_bad_values_and_kp_sets_every_joint(built):
    node = built(ControllerNode, ('urdf_file', BUNDLED_URDF), ('kp', 100.0), ('kd', 20.0))
    name = gain_name(NAMES[3], 'p')
    assert node.set_parameters([Parameter(name, value=250.0)])[0].successful
    expected = np.full(7, 100.0)
    expected[3] = 250.0
    np.testing.assert_array_equal(node.controller.kp, expected)
    assert node.set_parameters([Parameter(name, value=300)])[0].successful   # an integer, as `ros2 param set` sends 300
    expected[3] = 300.0
    np.testing.assert_array_equal(node.controller.kp, expected)

    for parameter, value, reason in ((name, -1.0, 'non-negative'), (name, True, 'boolean'), (name, 'high', 'number'),
                                     (name, float('nan'), 'finite'), (name, 1e10, 'unstable'),
                                     (gain_name(NAMES[6], 'd'), 5000.0, 'unstable')):
        result = node.set_parameters([Parameter(parameter, value=value)])[0]
        assert not result.successful and reason in result.reason, (parameter, value, result.reason)
    with pytest.raises(ParameterNotDeclaredException):   # no such joint: never declared
        node.set_parameters([Parameter(gain_name('no_such_joint', 'p'), value=1.0)])
    np.testing.assert_array_equal(node.controller.kp, expected)   # nothing changed
    np.testing.assert_array_equal(node.controller.kd, 20.0)
    assert node.get_parameter(name).value == 300

    # kp at run time sets every joint, and the map shows it
    assert node.set_parameters([Parameter('kp', value=120.0)])[0].successful
    np.testing.assert_array_equal(node.controller.kp, 120.0)
    assert [node.get_parameter(gain_name(joint, 'p')).value for joint in NAMES] == [120.0] * 7
    # a refused kp leaves the map as it was
    assert not node.set_parameters([Parameter('kp', value=1e10)])[0].successful
    assert [node.get_parameter(gain_name(joint, 'p')).value for joint in NAMES] == [120.0] * 7


def test_the_legged_controller_takes_per_joint_p_and_d(built):
    pytest.importorskip('clarabel')
    from robot_dynamics_ros.nodes.legged_controller import LeggedControllerNode
    node = built(LeggedControllerNode, ('urdf_file', QUADRUPED), ('kp', 300.0), ('kd', 30.0),
                 ('gains.FL_calf_joint.p', 500), ('gains.RR_hip_joint.d', 10.0))
    model = node.model
    v = {name: model.joint_v_index[model.joint_names.index(name)] for name in model.joint_names}
    kp, kd = np.full(model.nv, 300.0), np.full(model.nv, 30.0)   # the base's six from kp, kd
    kp[v['FL_calf_joint']], kd[v['RR_hip_joint']] = 500.0, 10.0
    np.testing.assert_array_equal(node.controller.kp, kp)
    np.testing.assert_array_equal(node.controller.kd, kd)
    assert not node.has_parameter('gains.FL_calf_joint.i')   # the law has no integral term

    assert node.set_parameters([Parameter('gains.FL_hip_joint.p', value=250.0)])[0].successful
    kp[v['FL_hip_joint']] = 250.0
    np.testing.assert_array_equal(node.controller.kp, kp)
    result = node.set_parameters([Parameter('gains.FL_hip_joint.p', value=-250.0)])[0]
    assert not result.successful and 'non-negative' in result.reason
    np.testing.assert_array_equal(node.controller.kp, kp)
    assert node.set_parameters([Parameter('kd', value=35.0)])[0].successful   # kd: the base and every joint
    np.testing.assert_array_equal(node.controller.kd, 35.0)
    assert node.get_parameter('gains.RR_hip_joint.d').value == 35.0


# --- over DDS: what `ros2 param set` does ----------------------------------------------------------------------

def test_ros2_param_set_of_a_joint_gain_changes_that_joints_command_and_a_bad_one_is_refused(ros_domain, start):
    """pd_gravity at rest, displaced from the held reference: the command is kp (q_ref - q) + g(q) joint by joint,
    so a joint's p gain shows in that joint's effort alone. Start-up: kp 100 with the map's 80 for one joint, which
    wins (said once in the log)."""
    _, probe = ros_domain
    loop = Loop(probe)
    controller = start('computed_torque_controller', params=[
        ('urdf_file', BUNDLED_URDF), ('mode', 'pd_gravity'), ('kp', 100.0), ('kd', 5.0),
        ('friction_compensation', 'false'), (gain_name(NAMES[2], 'p'), 80.0)])
    loop.next_command()                      # the reference now holds Q0
    loop.q = Q0 + 0.02
    gravity = gravity_torques(MODEL, loop.q)
    kp = np.full(7, 100.0)
    kp[2] = 80.0
    loop.commands_become(kp * (Q0 - loop.q) + gravity)
    assert controller.log().count('gains given both ways') == 1, controller.log()

    parameters = ParameterClient(probe, 'computed_torque_controller', STARTUP)
    name = gain_name(NAMES[4], 'p')
    assert parameters.set(name, 200).successful    # `ros2 param set ... 200` sends an integer
    kp[4] = 200.0
    loop.commands_become(kp * (Q0 - loop.q) + gravity)
    for value, reason in ((-1.0, 'non-negative'), (1e10, 'unstable'), ('stiff', 'number')):
        result = parameters.set(name, value)
        assert not result.successful and reason in result.reason, (value, result.reason)
    assert parameters.get(name) == 200
    loop.commands_become(kp * (Q0 - loop.q) + gravity)   # the refused values changed nothing
    assert controller.stop(signal.SIGINT) == 0
    assert 'Traceback' not in controller.log()
