"""The simulator node (a stand-in robot, publishing /tf and /tf_static) and, where it is installed,
robot_state_publisher for /robot_description (its own transforms sent elsewhere: RSP_WITHOUT_TF).

ros2 launch robot_dynamics_ros simulator.launch.py [urdf_file:=...] [config_file:=...] [use_sim_time:=true]
                                                   [sync:=realtime|lockstep] [namespace:=arm1] [prefix:=arm1_]
                                                   [description_source:=parameter|topic]
With use_sim_time the simulator publishes /clock (publish_clock).
`namespace` puts the nodes and their relative topics (joint_states, effort_controller/commands, ...) under it;
`prefix` goes before every joint and link name of the URDF (as ur_description's tf_prefix), so that two robots
in one graph have distinct joint names and TF frames. The URDF is read (xacro expanded), prefixed and checked
before any node starts; an invalid one stops the launch with one line. `description_source:=topic`: the simulator
takes the latest URDF on the robot_description topic (robot_state_publisher publishes this one; another publisher
may replace it) instead of the parameter.
"""
from launch import LaunchDescription
from launch.actions import OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue

from robot_dynamics_ros.nodes.launch_support import (CONFIG_DESCRIPTION, PACKAGE, closed_loop_parameters,
                                                     RSP_WITHOUT_TF, description_parameter, is_installed,
                                                     launch_argument, robot_arguments, robot_description,
                                                     stop_launch_on_failure)


def start_nodes(context):
    def argument(name):
        return LaunchConfiguration(name).perform(context)
    description = ParameterValue(robot_description(argument('urdf_file'), argument('prefix')), value_type=str)
    use_sim_time = ParameterValue(LaunchConfiguration('use_sim_time'), value_type=bool)
    namespace = argument('namespace')
    simulator = Node(
        package=PACKAGE, executable='simulator', name='simulator', namespace=namespace, output='screen',
        parameters=[closed_loop_parameters(argument('urdf_file'), argument('config_file'), 'simulator'),
                    description_parameter(argument('description_source'), description),
                    {'publish_clock': use_sim_time, 'sync': LaunchConfiguration('sync')}])
    actions = [simulator, stop_launch_on_failure(simulator)]
    if is_installed('robot_state_publisher'):   # for /robot_description; the simulator publishes the transforms
        actions.append(Node(
            package='robot_state_publisher', executable='robot_state_publisher', namespace=namespace,
            output='screen', parameters=[{'robot_description': description, 'use_sim_time': use_sim_time}],
            remappings=RSP_WITHOUT_TF))
    return actions


def generate_launch_description():
    return LaunchDescription([
        *robot_arguments(CONFIG_DESCRIPTION, 'publish /clock; robot_state_publisher follows it'),
        launch_argument('sync', "'realtime' or 'lockstep' (step when the controller has answered)"),
        launch_argument('description_source', "'topic': take the URDF from the robot_description topic"),
        OpaqueFunction(function=start_nodes),
    ])
