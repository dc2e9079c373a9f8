"""The simulator driven by ros2_control through topics: the topic-based hardware interface
(joint_state_topic_hardware_interface/JointStateTopicSystem) exchanges sensor_msgs/JointState with the simulator,
joint_state_broadcaster publishes /joint_states and, with position commands, a joint_trajectory_controller takes
trajectories; with command_interface:=effort spawn an effort controller of yours.

ros2 launch robot_dynamics_ros ros2_control.launch.py [command_interface:=position|effort]
Needs ros2_control, ros2_controllers and topic_based_hardware_interfaces installed
(e.g. ros-$ROS_DISTRO-ros2-control ros-$ROS_DISTRO-ros2-controllers ros-$ROS_DISTRO-joint-state-topic-hardware-interface):
without one of them it stops with one line naming the missing packages, before it starts any process (checked when
it runs: `--show-args` lists the arguments without them).
One robot per graph: its hardware topics and controller manager have fixed names (no namespace or prefix).
"""
import os

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.conditions import IfCondition
from launch.substitutions import Command, LaunchConfiguration, PathJoinSubstitution, PythonExpression
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare

from robot_dynamics_ros.nodes.launch_support import require_packages

PACKAGE = 'robot_dynamics_ros'
NEEDED = ('controller_manager', 'joint_state_broadcaster', 'joint_trajectory_controller',
          'joint_state_topic_hardware_interface', 'robot_state_publisher', 'xacro')


def check_packages(context):
    require_packages('ros2_control.launch.py', NEEDED,
                     'install ros-$ROS_DISTRO-ros2-control ros-$ROS_DISTRO-ros2-controllers '
                     'ros-$ROS_DISTRO-joint-state-topic-hardware-interface ros-$ROS_DISTRO-xacro')


def generate_launch_description():
    share = FindPackageShare(PACKAGE)
    command_interface = LaunchConfiguration('command_interface')
    description = ParameterValue(Command([
        'xacro ', PathJoinSubstitution([share, 'config', 'ros2_control', 'arm7.ros2_control.urdf.xacro']),
        ' command_interface:=', command_interface]), value_type=str)
    controllers = PathJoinSubstitution([share, 'config', 'ros2_control', 'arm7_controllers.yaml'])
    # Humble's controller manager takes the URDF as a parameter; later ones read /robot_description.
    manager_parameters = [controllers] + ([{'robot_description': description}]
                                          if os.environ.get('ROS_DISTRO') == 'humble' else [])

    def spawner(controller, condition=None):
        return Node(package='controller_manager', executable='spawner', output='screen', condition=condition,
                    arguments=[controller, '--controller-manager', '/controller_manager'])

    return LaunchDescription([
        DeclareLaunchArgument('command_interface', default_value='position', choices=['position', 'effort'],
                              description='command interface the hardware exports'),
        OpaqueFunction(function=check_packages),   # first: nothing starts without them
        # The simulator's joint states go to the hardware interface; joint_state_broadcaster owns /joint_states.
        Node(package=PACKAGE, executable='simulator', name='simulator', output='screen',
             parameters=[PathJoinSubstitution([share, 'config', 'arm7.yaml']),
                         {'urdf_file': PathJoinSubstitution([share, 'urdf', 'arm7.urdf']), 'publish_clock': False,
                          'publish_tf': False}],   # robot_state_publisher's, from joint_state_broadcaster's states
             remappings=[('joint_states', '/simulator/joint_states')]),
        Node(package='robot_state_publisher', executable='robot_state_publisher', output='screen',
             parameters=[{'robot_description': description}]),
        Node(package='controller_manager', executable='ros2_control_node', output='screen',
             parameters=manager_parameters, remappings=[('~/robot_description', '/robot_description')]),
        spawner('joint_state_broadcaster'),
        spawner('position_trajectory_controller',
                condition=IfCondition(PythonExpression(["'", command_interface, "' == 'position'"]))),
    ])
