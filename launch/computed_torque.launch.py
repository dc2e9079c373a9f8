"""The computed-torque controller and the demo trajectory publisher, for a robot (or simulator) that
publishes joint_states and takes effort_controller/commands.

ros2 launch robot_dynamics_ros computed_torque.launch.py [urdf_file:=...] [config_file:=...] [use_sim_time:=true]
                                                         [namespace:=arm1] [prefix:=arm1_]
                                                         [description_source:=parameter|topic]
`namespace` and `prefix` as in simulator.launch.py (the robot's joint names carry the prefix). The URDF is read,
prefixed and checked before any node starts. `description_source:=topic`: the nodes take the latest URDF on the
robot_description topic instead of the parameter.
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare

from robot_dynamics_ros.nodes.launch_support import (DESCRIPTION_SOURCES, closed_loop_parameters,
                                                     description_parameter, robot_description, stop_launch_on_failure)

PACKAGE = 'robot_dynamics_ros'
CONFIG_DESCRIPTION = ('ROS 2 parameters YAML over config/closed_loop.yaml (and config/arm7.yaml for the bundled '
                      'arm); default: none, every per-joint parameter from the URDF')


def start_nodes(context):
    def argument(name):
        return LaunchConfiguration(name).perform(context)
    description = ParameterValue(robot_description(argument('urdf_file'), argument('prefix')), value_type=str)
    common = {**description_parameter(argument('description_source'), description),
              'use_sim_time': ParameterValue(LaunchConfiguration('use_sim_time'), value_type=bool)}
    nodes = [Node(package=PACKAGE, executable=name, name=name, namespace=argument('namespace'), output='screen',
                  parameters=[closed_loop_parameters(argument('urdf_file'), argument('config_file'), name), common])
             for name in ('computed_torque_controller', 'trajectory_publisher')]
    return nodes + [stop_launch_on_failure(node) for node in nodes]



def generate_launch_description():
    share = FindPackageShare(PACKAGE)
    return LaunchDescription([
        DeclareLaunchArgument('urdf_file', default_value=PathJoinSubstitution([share, 'urdf', 'arm7.urdf']),
                              description='URDF (or xacro) of the robot'),
        DeclareLaunchArgument('config_file', default_value='', description=CONFIG_DESCRIPTION),
        DeclareLaunchArgument('use_sim_time', default_value='true', description='follow /clock'),
        DeclareLaunchArgument('namespace', default_value='', description='namespace of the nodes and their topics'),
        DeclareLaunchArgument('prefix', default_value='', description='prefix of every joint and link name'),
        DeclareLaunchArgument('description_source', default_value='parameter', choices=list(DESCRIPTION_SOURCES),
                              description="'topic': take the URDF from the robot_description topic"),
        OpaqueFunction(function=start_nodes),
    ])
