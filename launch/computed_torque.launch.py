"""The computed-torque controller and the demo trajectory publisher, for a robot (or simulator) that
publishes joint_states and takes effort_controller/commands.

ros2 launch robot_dynamics_ros computed_torque.launch.py [urdf_file:=...] [config_file:=...] [use_sim_time:=true]
                                                         [namespace:=arm1] [prefix:=arm1_]
                                                         [description_source:=parameter|topic] [demo:=false]
`demo:=false` starts no demo trajectory publisher (it re-sends its trajectory, overriding one sent from outside).
`namespace` and `prefix` as in simulator.launch.py (the robot's joint names carry the prefix). The URDF is read,
prefixed and checked before any node starts. `description_source:=topic`: the nodes take the latest URDF on the
robot_description topic instead of the parameter.
"""
from launch import LaunchDescription
from launch.actions import OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.parameter_descriptions import ParameterValue

from robot_dynamics_ros.nodes.launch_support import (CONFIG_DESCRIPTION, controller_nodes, description_parameter,
                                                     launch_argument, robot_arguments, robot_description)


def start_nodes(context):
    def argument(name):
        return LaunchConfiguration(name).perform(context)
    description = ParameterValue(robot_description(argument('urdf_file'), argument('prefix')), value_type=str)
    common = {**description_parameter(argument('description_source'), description),
              'use_sim_time': ParameterValue(LaunchConfiguration('use_sim_time'), value_type=bool)}
    names = ['computed_torque_controller'] + (['trajectory_publisher'] if argument('demo') == 'true' else [])
    return controller_nodes(context, names, common)


def generate_launch_description():
    return LaunchDescription([
        *robot_arguments(CONFIG_DESCRIPTION),
        launch_argument('description_source', "'topic': take the URDF from the robot_description topic"),
        launch_argument('demo'),
        OpaqueFunction(function=start_nodes),
    ])
