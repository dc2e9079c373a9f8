"""The simulator node (a stand-in robot) and, where it is installed, robot_state_publisher.

ros2 launch robot_dynamics_ros simulator.launch.py [urdf_file:=...] [config_file:=...] [use_sim_time:=true]
                                                   [sync:=realtime|lockstep]
With use_sim_time the simulator publishes /clock (publish_clock) and robot_state_publisher follows it.
"""
from ament_index_python.packages import PackageNotFoundError, get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import Command, LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare

PACKAGE = 'robot_dynamics_ros'


def is_installed(package):
    try:
        get_package_share_directory(package)
        return True
    except PackageNotFoundError:
        return False


def generate_launch_description():
    urdf_file = LaunchConfiguration('urdf_file')
    use_sim_time = ParameterValue(LaunchConfiguration('use_sim_time'), value_type=bool)
    share = FindPackageShare(PACKAGE)
    actions = [
        DeclareLaunchArgument('urdf_file', default_value=PathJoinSubstitution([share, 'urdf', 'arm7.urdf']),
                              description='URDF (or xacro) of the robot'),
        DeclareLaunchArgument('config_file', default_value=PathJoinSubstitution([share, 'config', 'arm7.yaml']),
                              description='ROS 2 parameters YAML (simulator section)'),
        DeclareLaunchArgument('use_sim_time', default_value='true',
                              description='publish /clock; robot_state_publisher follows it'),
        DeclareLaunchArgument('sync', default_value='realtime',
                              description="'realtime' or 'lockstep' (step when the controller has answered)"),
    ]
    actions.append(Node(
        package=PACKAGE, executable='simulator', name='simulator', output='screen',
        parameters=[LaunchConfiguration('config_file'),
                    {'urdf_file': ParameterValue(urdf_file, value_type=str), 'publish_clock': use_sim_time,
                     'sync': LaunchConfiguration('sync')}]))
    if is_installed('robot_state_publisher'):
        description = ParameterValue(Command(['xacro ', urdf_file]), value_type=str)
        actions.append(Node(
            package='robot_state_publisher', executable='robot_state_publisher', output='screen',
            parameters=[{'robot_description': description, 'use_sim_time': use_sim_time}]))
    return LaunchDescription(actions)
