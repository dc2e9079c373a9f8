"""The viewer node: the robot in the browser (the 'view' extra: pip install viser trimesh pycollada) as
/joint_states move it, with the ground, contact forces and the controller's reference as a ghost.
Start it beside closed_loop.launch.py or legged.launch.py; the page's URL is in its log.

ros2 launch robot_dynamics_ros viewer.launch.py [urdf_file:=...] [port:=8080] [root_joint:=floating]
                                                [namespace:=arm1] [prefix:=arm1_]
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue

from robot_dynamics_ros.nodes.launch_support import PACKAGE, launch_argument, robot_description


def start_nodes(context):
    def argument(name):
        return LaunchConfiguration(name).perform(context)
    description = ParameterValue(robot_description(argument('urdf_file'), argument('prefix')), value_type=str)
    return [Node(package=PACKAGE, executable='viewer', name='viewer', namespace=argument('namespace'),
                 output='screen', remappings=[('~/odom', '/simulator/odom')],
                 parameters=[{'robot_description': description, 'urdf_file': argument('urdf_file'),
                              'port': int(argument('port')), 'root_joint': argument('root_joint')}])]


def generate_launch_description():
    return LaunchDescription([
        launch_argument('urdf_file', 'URDF (or xacro) of the robot; its folder resolves relative mesh names'),
        DeclareLaunchArgument('port', default_value='8080', description='port of the page'),
        DeclareLaunchArgument('root_joint', default_value='',
                              description="'floating' for a robot on the ground (its base pose from /simulator/odom)"),
        launch_argument('namespace', 'namespace of the robot'),
        launch_argument('prefix'),
        OpaqueFunction(function=start_nodes),
    ])
