"""Two robots in one ROS graph: the closed loop (simulator, controller, demo trajectory) twice, in the
namespaces arm1 and arm2 with the joint-name prefixes arm1_ and arm2_. Each loop's topics live under its
namespace (/arm1/joint_states, /arm1/effort_controller/commands, ...), so neither hears the other.

ros2 launch robot_dynamics_ros two_arms.launch.py [urdf_file:=...] [config_file:=...] [sync:=realtime|lockstep]
                                                  [namespace:=robots] [prefix:=left_] [demo:=false]
                                                  [description_source:=parameter|topic]
`namespace` goes before both (/robots/arm1/...), `prefix` before both joint-name prefixes (left_arm1_...).
No /clock: use_sim_time takes 'false' only (two simulators would both publish /clock); the controllers follow
their joint states' stamps without it.
"""
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, GroupAction, IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution
from launch_ros.actions import PushRosNamespace
from launch_ros.substitutions import FindPackageShare

from robot_dynamics_ros.nodes.launch_support import PACKAGE, launch_argument

ARMS = ('arm1', 'arm2')


def generate_launch_description():
    share = FindPackageShare(PACKAGE)
    closed_loop = PythonLaunchDescriptionSource(PathJoinSubstitution([share, 'launch', 'closed_loop.launch.py']))

    def arm(name):
        arguments = {key: LaunchConfiguration(key) for key in ('urdf_file', 'config_file', 'sync', 'description_source',
                                                               'demo', 'use_sim_time')}
        arguments.update(namespace=name, prefix=[LaunchConfiguration('prefix'), name + '_'])
        return GroupAction([PushRosNamespace(LaunchConfiguration('namespace')),
                            IncludeLaunchDescription(closed_loop, launch_arguments=arguments.items())], scoped=True)

    return LaunchDescription([
        launch_argument('urdf_file', 'URDF (or xacro) of both robots'),
        DeclareLaunchArgument('config_file', default_value='',
                              description='ROS 2 parameters YAML over config/closed_loop.yaml (and config/arm7.yaml '
                                          'for the bundled arm); default: none, per-joint parameters from the URDF'),
        launch_argument('sync', "'realtime' or 'lockstep'"),
        launch_argument('description_source', "'topic': each loop's nodes take its robot_description topic"),
        launch_argument('demo'),
        DeclareLaunchArgument('namespace', default_value='', description='namespace before arm1 and arm2'),
        DeclareLaunchArgument('prefix', default_value='', description="prefix before each arm's own (arm1_, arm2_) "
                                                                      'of every joint and link name'),
        DeclareLaunchArgument('use_sim_time', default_value='false', choices=['false'],
                              description="'false' only: two simulators cannot share /clock"),
        *(arm(name) for name in ARMS),
    ])
