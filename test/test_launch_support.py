"""What the launch files check and build before they start a node (launch_support.py), and the launch
files themselves where the launch stack is installed (real ROS installs; skipped here)."""
import importlib.util
import os
import re
import subprocess
import sys

import pytest
import yaml

from conftest import BUNDLED_URDF, ROOT, TEST_DIR, TEST_URDFS
from ros_helpers import shadowing

from robot_dynamics_ros import load_urdf
from robot_dynamics_ros.nodes.launch_support import (LaunchCheckError, node_parameters, prefixed, require_packages,
                                                     robot_description)

LAUNCH_DIR = os.path.join(ROOT, 'launch')


@pytest.mark.parametrize('name', ['arm7', 'two_arm_tree'])
def test_a_prefix_renames_every_joint_and_link_and_keeps_the_dynamics(name):
    original = load_urdf(TEST_URDFS[name])
    model = load_urdf(robot_description(TEST_URDFS[name], 'left_'))
    assert list(model.joint_names) == ['left_' + joint for joint in original.joint_names]
    assert set(model.frames) == {'left_' + frame for frame in original.frames}
    assert model.parent.tolist() == original.parent.tolist()
    assert (model.inertia == original.inertia).all() and (model.upper == original.upper).all()


def test_no_prefix_leaves_the_urdf_as_it_is():
    with open(BUNDLED_URDF) as f:
        xml = f.read()
    assert prefixed(xml, '') is xml
    assert robot_description(BUNDLED_URDF) == xml


def test_an_invalid_or_missing_urdf_is_one_clear_error(tmp_path):
    with pytest.raises(LaunchCheckError, match='not found'):
        robot_description(str(tmp_path / 'missing.urdf'))
    broken = tmp_path / 'broken.urdf'
    broken.write_text('<robot name="r"><link name="a"/><joint name="j" type="revolute"/></robot>')
    with pytest.raises(LaunchCheckError, match='broken.urdf'):
        robot_description(str(broken), 'p_')


def test_missing_packages_are_named_before_anything_starts():
    pytest.importorskip('ament_index_python')
    with pytest.raises(LaunchCheckError, match=r"x\.launch\.py needs the ROS packages \['no_such_package_xyz'\]"):
        require_packages('x.launch.py', ['no_such_package_xyz'], 'install it')


def test_a_node_takes_its_section_of_a_parameters_file_in_any_namespace(tmp_path):
    path = tmp_path / 'params.yaml'
    path.write_text(yaml.safe_dump({'/**': {'ros__parameters': {'a': 1, 'b': 1}},
                                    'simulator': {'ros__parameters': {'b': 2, 'c': 2}},
                                    '/**/simulator': {'ros__parameters': {'c': 3}},
                                    'computed_torque_controller': {'ros__parameters': {'d': 4}}}))
    assert node_parameters(str(path), 'simulator') == {'a': 1, 'b': 2, 'c': 3}
    with pytest.raises(LaunchCheckError, match='not found'):
        node_parameters(str(tmp_path / 'missing.yaml'), 'simulator')


def load_launch_file(name):
    spec = importlib.util.spec_from_file_location(name.replace('.', '_'), os.path.join(LAUNCH_DIR, name))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize('name', sorted(f for f in os.listdir(LAUNCH_DIR)
                                        if f.endswith('.launch.py') and f != 'ros2_control.launch.py'))
def test_each_launch_file_builds_its_description(name):
    pytest.importorskip('launch')
    pytest.importorskip('launch_ros')
    from launch import LaunchDescription
    assert isinstance(load_launch_file(name).generate_launch_description(), LaunchDescription)


def test_ros2_control_launch_stops_up_front_without_ros2_control():
    pytest.importorskip('launch')
    pytest.importorskip('launch_ros')
    from robot_dynamics_ros.nodes.launch_support import is_installed
    if is_installed('controller_manager'):
        pytest.skip('ros2_control is installed')
    from launch import LaunchContext
    description = load_launch_file('ros2_control.launch.py').generate_launch_description()   # --show-args: no check
    context = LaunchContext()
    with pytest.raises(LaunchCheckError, match='controller_manager'):
        for entity in description.entities:   # in order, as launch runs them: the check before any node
            entity.visit(context)


def test_a_node_stopping_on_bad_configuration_makes_the_launch_exit_non_zero_naming_it(capfd):
    """The simulator with a negative rate exits 1 at start-up: the launch stops the other process and its run
    returns non-zero (ros2 launch's exit code) with an error naming the node. With launch's Shutdown action alone
    it returned 0."""
    pytest.importorskip('launch.actions')   # (the source tree's launch/ directory imports as 'launch')
    import launch.logging
    from launch import LaunchDescription, LaunchService
    from launch.actions import ExecuteProcess
    from robot_dynamics_ros.nodes.launch_support import stop_launch_on_failure
    from robot_dynamics_ros.commands.processes import isolated_ros_env
    env = isolated_ros_env(0)   # the node stops before it joins a domain
    simulator = ExecuteProcess(cmd=[sys.executable, '-m', 'robot_dynamics_ros.nodes.start', 'simulator', '--ros-args',
                                    '-p', f'urdf_file:={BUNDLED_URDF}', '-p', 'rate:=-5.0'],
                               name='simulator', additional_env=env, sigterm_timeout='60')
    other = ExecuteProcess(cmd=[sys.executable, '-c', 'import time; time.sleep(300)'], name='other',
                           sigterm_timeout='60')
    launch.logging.reset()   # its screen handler writes to the stdout of the first launch in this process
    service = LaunchService()
    service.include_launch_description(LaunchDescription([simulator, stop_launch_on_failure(simulator), other]))
    assert service.run() != 0
    output = capfd.readouterr()
    text = output.out + output.err
    # (launch numbers the processes it starts across the launches of one process: -1 and -2 in the first)
    assert re.search(r"node 'simulator-\d+' exited with code 1", text), text
    assert "parameter 'rate' must be positive" in text, text   # the node's own line says why
    assert re.search(r"sending signal 'SIGINT' to process\[other-\d+\]", text), text   # the other one stopped


def test_the_description_source_gives_the_nodes_the_parameter_or_the_topic():
    from robot_dynamics_ros.nodes.launch_support import description_parameter
    assert description_parameter('parameter', '<robot/>') == {'robot_description': '<robot/>'}
    assert description_parameter('topic', '<robot/>') == {}   # ModelSource then subscribes robot_description
    with pytest.raises(LaunchCheckError, match="description_source must be one of"):
        description_parameter('file', '<robot/>')


@pytest.mark.parametrize('name', ['simulator.launch.py', 'computed_torque.launch.py', 'closed_loop.launch.py',
                                  'two_arms.launch.py', 'legged.launch.py'])
def test_each_launch_file_takes_description_source_and_sync(name):
    pytest.importorskip('launch.actions')
    pytest.importorskip('launch_ros')
    arguments = {argument.name: argument for argument in
                 load_launch_file(name).generate_launch_description().get_launch_arguments()}
    assert arguments['description_source'].choices == ['parameter', 'topic']
    assert ('sync' in arguments) == (name != 'computed_torque.launch.py')   # wherever a simulator starts


def test_a_shared_launch_argument_keeps_its_default_and_choices_where_a_launch_file_says_more():
    pytest.importorskip('launch.actions')
    pytest.importorskip('launch_ros')
    from launch import LaunchContext
    from robot_dynamics_ros.nodes.launch_support import launch_argument, robot_arguments

    def default(argument):
        return ''.join(part.perform(LaunchContext()) for part in argument.default_value)
    usual, told = launch_argument('description_source'), launch_argument('description_source', "'topic': each loop's")
    assert usual.choices == told.choices == ['parameter', 'topic']
    assert default(usual) == default(told) == 'parameter'
    assert told.description.startswith("'topic': each loop's") and usual.description != told.description
    assert [argument.name for argument in robot_arguments('yaml')] == ['urdf_file', 'config_file', 'use_sim_time',
                                                                       'namespace', 'prefix']
    assert robot_arguments('yaml', 'publish /clock')[2].description == 'publish /clock'
    assert robot_arguments('yaml')[2].description == 'follow /clock'


LAUNCH_TESTS = ('test_closed_loop_launch', 'test_legged_launch')


def test_each_launch_test_starts_its_nodes_on_its_probes_domain():
    """launch_testing imports every launch test module while it collects, before it runs one: each launch description
    sets its module's domain for its processes (set at import, every launch had the last module's domain)."""
    pytest.importorskip('launch_testing')
    from launch import LaunchContext
    from launch.actions import IncludeLaunchDescription
    modules = [importlib.import_module(name) for name in LAUNCH_TESTS]
    assert len({module.DOMAIN for module in modules}) == len(modules)
    saved = dict(os.environ)
    try:
        for module in modules:
            context = LaunchContext()
            for entity in module.generate_test_description().entities:   # what runs before the nodes start
                if isinstance(entity, IncludeLaunchDescription):
                    break
                entity.visit(context)
            assert os.environ['ROS_DOMAIN_ID'] == str(module.DOMAIN), module.__name__
            assert os.environ['ROS_AUTOMATIC_DISCOVERY_RANGE'] == 'LOCALHOST'
    finally:
        os.environ.clear()
        os.environ.update(saved)


def test_a_module_skipped_at_import_leaves_the_others_collected_under_launch_testing(tmp_path):
    """colcon test loads launch_testing's pytest plugin, which imports each test module to look for a launch test;
    a module that skips itself at import (here: clarabel missing; one of them a launch test) ended the collection of
    every module in test/."""
    pytest.importorskip('launch_testing')
    skipping = [os.path.join(TEST_DIR, name) for name in ('test_bounded_contact.py', 'test_legged_launch.py')]
    path = [shadowing(tmp_path, 'clarabel')] + ([os.environ['PYTHONPATH']] if os.environ.get('PYTHONPATH') else [])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(path))
    env.pop('PYTEST_ADDOPTS', None)   # (colcon test's)
    result = subprocess.run([sys.executable, '-m', 'pytest', '--collect-only', '-q', '-p', 'no:cacheprovider',
                             *skipping, os.path.join(TEST_DIR, 'test_launch_support.py')],
                            capture_output=True, text=True, cwd=ROOT, env=env, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert 'test_launch_support.py::test_no_prefix_leaves_the_urdf_as_it_is' in result.stdout, result.stdout
