"""A robot with a floating base on the ground: the simulator (ground contact, base odometry, IMU, contact forces)
and the legged controller that keeps it standing (contact-consistent inverse dynamics), with robot_state_publisher
for /robot_description where it is installed (the simulator publishes /tf: odom -> base and every link).
`robot-dynamics bringup --root-joint floating` runs the same without ROS installed.

ros2 launch robot_dynamics_ros legged.launch.py [urdf_file:=...] [config_file:=...] [controller:=true|false]
                                                [sync:=realtime|lockstep] [description_source:=parameter|topic]
                                                [gait:=stand|trot]
                                                [srdf_file:=...] [robot_description_semantic:=...]
Parameters: config/legged.yaml, then config/quadruped.yaml for the bundled quadruped, then config_file.
`sync` and `description_source` as in simulator.launch.py; `gait` sets the controller's (trot: it walks on
/legged_controller/cmd_vel).
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare

from robot_dynamics_ros.nodes.launch_support import (PACKAGE, RSP_WITHOUT_TF, closed_loop_parameters,
                                                     description_parameter, is_installed, launch_argument,
                                                     robot_description, stop_launch_on_failure)
from robot_dynamics_ros.resources import legged_parameter_files


def start_nodes(context):
    def argument(name):
        return LaunchConfiguration(name).perform(context)
    urdf_file, config_file = argument('urdf_file'), argument('config_file')
    description = ParameterValue(robot_description(urdf_file), value_type=str)
    node_description = description_parameter(argument('description_source'), description)
    # The SRDF (root joint, stance, feet) for both nodes, where given; else the config file's, if any.
    node_description.update({name: ParameterValue(argument(name), value_type=str)
                             for name in ('srdf_file', 'robot_description_semantic') if argument(name)})

    def parameters(node_name):
        return closed_loop_parameters(urdf_file, config_file, node_name, files=legged_parameter_files)
    with_controller = argument('controller').lower() == 'true'
    simulator = Node(package=PACKAGE, executable='simulator', name='simulator', output='screen',
                     parameters=[parameters('simulator'), node_description,
                                 {'wait_for_command': with_controller, 'sync': argument('sync')}])
    actions = [simulator, stop_launch_on_failure(simulator)]
    if with_controller:
        gait = {'gait': argument('gait')} if argument('gait') else {}
        controller = Node(package=PACKAGE, executable='legged_controller', name='legged_controller', output='screen',
                          parameters=[parameters('legged_controller'), node_description, gait],
                          remappings=[('odom', '/simulator/odom')])
        actions += [controller, stop_launch_on_failure(controller)]
    if is_installed('robot_state_publisher'):   # for /robot_description; the simulator publishes the transforms
        actions.append(Node(package='robot_state_publisher', executable='robot_state_publisher', output='screen',
                            parameters=[{'robot_description': description, 'use_sim_time': True}],
                            remappings=RSP_WITHOUT_TF))
    return actions


def generate_launch_description():
    share = FindPackageShare(PACKAGE)
    return LaunchDescription([
        DeclareLaunchArgument('urdf_file', default_value=PathJoinSubstitution([share, 'urdf', 'quadruped.urdf']),
                              description='URDF (or xacro) of a robot whose root link floats'),
        DeclareLaunchArgument('config_file', default_value='',
                              description='ROS 2 parameters YAML over config/legged.yaml (and config/quadruped.yaml '
                                          'for the bundled quadruped)'),
        DeclareLaunchArgument('controller', default_value='true',
                              description="'false': the simulator alone, zero effort"),
        DeclareLaunchArgument('gait', default_value='',
                              description="the controller's gait, 'stand' or 'trot' (walks on "
                                          "/legged_controller/cmd_vel); empty: the config's (stand)"),
        DeclareLaunchArgument('srdf_file', default_value='', description='SRDF of the robot (root joint, standing '
                                                                         'posture, feet); default: the config file\'s'),
        DeclareLaunchArgument('robot_description_semantic', default_value='',
                              description='SRDF XML, as MoveIt names it; over srdf_file'),
        launch_argument('sync'),
        launch_argument('description_source'),
        OpaqueFunction(function=start_nodes),
    ])
