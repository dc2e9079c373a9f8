"""The launch files as a ROS user drives them: two_arms takes the namespace, prefix and use_sim_time it lists, and
`ros2 launch ... --show-args` lists every launch file's arguments, ros2_control.launch.py's too where ros2_control is
not installed (it calls generate_launch_description and get_launch_arguments: nothing there may need the packages a
launch file checks for). Skipped where the launch stack is not installed."""
import os

import pytest

from test_launch_support import LAUNCH_DIR, load_launch_file

LAUNCH_FILES = sorted(f for f in os.listdir(LAUNCH_DIR) if f.endswith('.launch.py'))


def two_arms(**arguments):
    """[(ROS namespace pushed, {argument: value} given to closed_loop.launch.py)] per arm, as two_arms.launch.py
    hands them on with ``arguments`` on the command line (every action up to the include, which is not run)."""
    pytest.importorskip('launch.actions')
    from launch import LaunchContext
    from launch.actions import IncludeLaunchDescription
    from launch.utilities import normalize_to_list_of_substitutions, perform_substitutions
    context = LaunchContext()
    context.launch_configurations.update(arguments)
    arms = []

    def perform(substitutions):
        return perform_substitutions(context, normalize_to_list_of_substitutions(substitutions))

    def visit(entities):
        for entity in entities:
            if isinstance(entity, IncludeLaunchDescription):
                arms.append((context.launch_configurations.get('ros_namespace'),
                             {perform(name): perform(value) for name, value in entity.launch_arguments}))
            else:   # a GroupAction gives its actions between a push and a pop of the launch configurations
                visit(entity.visit(context) or [])
    visit(load_launch_file('two_arms.launch.py').generate_launch_description().entities)
    return arms


def test_two_arms_takes_the_namespace_and_prefix_it_lists():
    pytest.importorskip('launch.actions')
    pytest.importorskip('launch_ros')
    arms = two_arms(namespace='robots', prefix='left_')
    assert [namespace for namespace, _ in arms] == ['/robots', '/robots']
    assert [(given['namespace'], given['prefix'], given['use_sim_time']) for _, given in arms] == [
        ('arm1', 'left_arm1_', 'false'), ('arm2', 'left_arm2_', 'false')]
    arms = two_arms()   # the defaults: /arm1 and /arm2, joints arm1_* and arm2_*
    assert [namespace for namespace, _ in arms] == ['/', '/']
    assert [(given['namespace'], given['prefix']) for _, given in arms] == [('arm1', 'arm1_'), ('arm2', 'arm2_')]
    assert arms[0][1]['demo'] == 'true'
    assert two_arms(demo='false')[1][1]['demo'] == 'false'


def test_two_arms_refuses_sim_time_rather_than_ignore_it():
    pytest.importorskip('launch.actions')
    pytest.importorskip('launch_ros')
    arguments = {argument.name: argument for argument in
                 load_launch_file('two_arms.launch.py').generate_launch_description().get_launch_arguments()}
    assert {'namespace', 'prefix', 'use_sim_time', 'demo'} <= set(arguments)
    assert arguments['use_sim_time'].choices == ['false']
    with pytest.raises(RuntimeError, match='use_sim_time.*true.* is not valid'):
        two_arms(use_sim_time='true')


@pytest.mark.parametrize('name', LAUNCH_FILES)
def test_show_args_lists_the_arguments(name):
    """As `ros2 launch robot_dynamics_ros <name> --show-args` loads the file and lists its arguments, without running
    it: ros2_control.launch.py checks for ros2_control's packages only when it runs."""
    pytest.importorskip('launch.actions')
    pytest.importorskip('launch_ros')
    from launch.launch_description_sources import get_launch_description_from_any_launch_file
    description = get_launch_description_from_any_launch_file(os.path.join(LAUNCH_DIR, name))
    listed = [argument.name for argument in description.get_launch_arguments()]
    assert ('command_interface' if name == 'ros2_control.launch.py' else 'urdf_file') in listed
