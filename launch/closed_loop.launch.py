"""The whole loop: simulator (+ robot_state_publisher where installed), computed-torque controller and
demo trajectory, all from one config file. `robot-dynamics bringup` runs the same loop without ROS
installed.

ros2 launch robot_dynamics_ros closed_loop.launch.py [urdf_file:=...] [config_file:=...] [use_sim_time:=true]
                                                     [sync:=realtime|lockstep] [namespace:=arm1] [prefix:=arm1_]
                                                     [description_source:=parameter|topic]
`namespace`, `prefix` and `description_source` as in simulator.launch.py: two_arms.launch.py runs two of these loops in one graph.
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.substitutions import FindPackageShare

from robot_dynamics_ros.nodes.launch_support import DESCRIPTION_SOURCES

PACKAGE = 'robot_dynamics_ros'


def generate_launch_description():
    share = FindPackageShare(PACKAGE)
    arguments = {name: LaunchConfiguration(name) for name in ('urdf_file', 'config_file', 'use_sim_time', 'sync',
                                                                  'namespace', 'prefix', 'description_source')}

    def include(launch_file):
        source = PythonLaunchDescriptionSource(PathJoinSubstitution([share, 'launch', launch_file]))
        return IncludeLaunchDescription(source, launch_arguments=arguments.items())

    return LaunchDescription([
        DeclareLaunchArgument('urdf_file', default_value=PathJoinSubstitution([share, 'urdf', 'arm7.urdf']),
                              description='URDF (or xacro) of the robot'),
        DeclareLaunchArgument('config_file', default_value='',
                              description='ROS 2 parameters YAML over config/closed_loop.yaml (and config/arm7.yaml '
                                          'for the bundled arm); default: none, per-joint parameters from the URDF'),
        DeclareLaunchArgument('use_sim_time', default_value='true',
                              description='simulator publishes /clock and the other nodes use it'),
        DeclareLaunchArgument('sync', default_value='realtime',
                              description="simulator: 'realtime' or 'lockstep' (step when the controller has answered)"),
        DeclareLaunchArgument('namespace', default_value='', description='namespace of the nodes and their topics'),
        DeclareLaunchArgument('prefix', default_value='', description='prefix of every joint and link name'),
        DeclareLaunchArgument('description_source', default_value='parameter', choices=list(DESCRIPTION_SOURCES),
                              description="'topic': the nodes take the URDF from the robot_description topic"),
        include('simulator.launch.py'),
        include('computed_torque.launch.py'),
    ])
