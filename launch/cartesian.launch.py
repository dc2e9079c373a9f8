"""The Cartesian controller and the demo's circle target publisher, for a robot (or simulator) that publishes
joint_states and takes effort_controller/commands (as computed_torque.launch.py, with the Cartesian controller).

ros2 launch robot_dynamics_ros cartesian.launch.py [urdf_file:=...] [config_file:=...] [use_sim_time:=true]
                                                   [namespace:=arm1] [prefix:=arm1_] [demo:=true]
`namespace` and `prefix` as in simulator.launch.py. `demo:=false` leaves out the circle: send target poses on
cartesian_controller/target_pose. Start the arm away from singular postures (`robot-dynamics bringup --controller
cartesian` picks one for the simulator). The URDF is read, prefixed and checked before any node starts.
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare

from robot_dynamics_ros.nodes.launch_support import closed_loop_parameters, robot_description, stop_launch_on_failure

PACKAGE = 'robot_dynamics_ros'


def start_nodes(context):
    def argument(name):
        return LaunchConfiguration(name).perform(context)
    common = {'robot_description': ParameterValue(robot_description(argument('urdf_file'), argument('prefix')),
                                                  value_type=str),
              'use_sim_time': ParameterValue(LaunchConfiguration('use_sim_time'), value_type=bool)}
    names = ['cartesian_controller'] + (['cartesian_target_publisher'] if argument('demo') == 'true' else [])
    nodes = [Node(package=PACKAGE, executable=name, name=name, namespace=argument('namespace'), output='screen',
                  parameters=[closed_loop_parameters(argument('urdf_file'), argument('config_file'), name), common])
             for name in names]
    return nodes + [stop_launch_on_failure(node) for node in nodes]


def generate_launch_description():
    share = FindPackageShare(PACKAGE)
    return LaunchDescription([
        DeclareLaunchArgument('urdf_file', default_value=PathJoinSubstitution([share, 'urdf', 'arm7.urdf']),
                              description='URDF (or xacro) of the robot'),
        DeclareLaunchArgument('config_file', default_value='',
                              description='ROS 2 parameters YAML over config/closed_loop.yaml; default: none'),
        DeclareLaunchArgument('use_sim_time', default_value='true', description='follow /clock'),
        DeclareLaunchArgument('namespace', default_value='', description='namespace of the nodes and their topics'),
        DeclareLaunchArgument('prefix', default_value='', description='prefix of every joint and link name'),
        DeclareLaunchArgument('demo', default_value='true', description='also run the circle target publisher'),
        OpaqueFunction(function=start_nodes),
    ])
