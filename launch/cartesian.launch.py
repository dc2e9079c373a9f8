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
from launch.substitutions import LaunchConfiguration
from launch_ros.parameter_descriptions import ParameterValue

from robot_dynamics_ros.nodes.launch_support import controller_nodes, robot_arguments, robot_description


def start_nodes(context):
    def argument(name):
        return LaunchConfiguration(name).perform(context)
    common = {'robot_description': ParameterValue(robot_description(argument('urdf_file'), argument('prefix')),
                                                  value_type=str),
              'use_sim_time': ParameterValue(LaunchConfiguration('use_sim_time'), value_type=bool)}
    names = ['cartesian_controller'] + (['cartesian_target_publisher'] if argument('demo') == 'true' else [])
    return controller_nodes(context, names, common)


def generate_launch_description():
    return LaunchDescription([
        *robot_arguments('ROS 2 parameters YAML over config/closed_loop.yaml; default: none'),
        DeclareLaunchArgument('demo', default_value='true', description='also run the circle target publisher'),
        OpaqueFunction(function=start_nodes),
    ])
