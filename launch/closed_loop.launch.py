"""The whole loop: simulator (/tf; + robot_state_publisher for /robot_description where installed), computed-torque
controller and demo trajectory, all from one config file. `robot-dynamics bringup` runs the same loop without ROS
installed.

ros2 launch robot_dynamics_ros closed_loop.launch.py [urdf_file:=...] [config_file:=...] [use_sim_time:=true]
                                                     [sync:=realtime|lockstep] [namespace:=arm1] [prefix:=arm1_]
                                                     [description_source:=parameter|topic] [demo:=false]
`namespace`, `prefix` and `description_source` as in simulator.launch.py, `demo` as in computed_torque.launch.py:
two_arms.launch.py runs two of these loops in one graph.
"""
from launch import LaunchDescription
from launch.actions import IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.substitutions import FindPackageShare

from robot_dynamics_ros.nodes.launch_support import PACKAGE, launch_argument, robot_arguments


def generate_launch_description():
    share = FindPackageShare(PACKAGE)
    arguments = {name: LaunchConfiguration(name) for name in ('urdf_file', 'config_file', 'use_sim_time', 'sync',
                                                                  'namespace', 'prefix', 'description_source',
                                                                  'demo')}

    def include(launch_file):
        source = PythonLaunchDescriptionSource(PathJoinSubstitution([share, 'launch', launch_file]))
        return IncludeLaunchDescription(source, launch_arguments=arguments.items())

    return LaunchDescription([
        *robot_arguments('ROS 2 parameters YAML over config/closed_loop.yaml (and config/arm7.yaml for the bundled '
                         'arm); default: none, per-joint parameters from the URDF',
                         'simulator publishes /clock and the other nodes use it'),
        launch_argument('sync'),
        launch_argument('description_source'),
        launch_argument('demo'),
        include('simulator.launch.py'),
        include('computed_torque.launch.py'),
    ])
