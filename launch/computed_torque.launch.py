"""The computed-torque controller and the demo trajectory publisher, for a robot (or simulator) that
publishes /joint_states and takes /effort_controller/commands.

ros2 launch robot_dynamics_ros computed_torque.launch.py [urdf_file:=...] [config_file:=...] [use_sim_time:=true]
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare

PACKAGE = 'robot_dynamics_ros'


def generate_launch_description():
    share = FindPackageShare(PACKAGE)
    parameters = [LaunchConfiguration('config_file'),
                  {'urdf_file': ParameterValue(LaunchConfiguration('urdf_file'), value_type=str),
                   'use_sim_time': ParameterValue(LaunchConfiguration('use_sim_time'), value_type=bool)}]
    return LaunchDescription([
        DeclareLaunchArgument('urdf_file', default_value=PathJoinSubstitution([share, 'urdf', 'arm7.urdf']),
                              description='URDF (or xacro) of the robot'),
        DeclareLaunchArgument('config_file', default_value=PathJoinSubstitution([share, 'config', 'arm7.yaml']),
                              description='ROS 2 parameters YAML (computed_torque_controller / '
                                          'trajectory_publisher sections)'),
        DeclareLaunchArgument('use_sim_time', default_value='true', description='follow /clock'),
        Node(package=PACKAGE, executable='computed_torque_controller', name='computed_torque_controller',
             output='screen', parameters=parameters),
        Node(package=PACKAGE, executable='trajectory_publisher', name='trajectory_publisher',
             output='screen', parameters=parameters),
    ])
