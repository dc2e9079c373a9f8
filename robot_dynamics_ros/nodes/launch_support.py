"""What the launch files (launch/*.launch.py) do before they start any node, without the launch stack itself:
check the packages they need, build the robot description (xacro expanded, joint and link names prefixed,
checked by the loader), read a node's section of a parameters file whatever its namespace, and declare the launch
arguments they share.

A launch file that raises LaunchCheckError from these stops with that one line, before any process runs.
"""
import os
import xml.etree.ElementTree as ET

import yaml

from ..model import URDFError, load_urdf
from ..model.urdf import read_xml
from ..resources import parameter_files

# wall s without a joint state before a controller calls them stale, where the loop runs in lockstep: sim time stops
# while a busy machine delays a state, which is no stale state, and the command a controller sends on a stale state
# would answer the simulator's waiting step (seen under two copies of the test suite: a gravity-compensation command
# answered a step, and two lockstep runs differed). Bringup, record and the launch files give it in lockstep.
LOCKSTEP_STATE_TIMEOUT = 30.0


LAUNCH_STACK_NEEDED = "needs the ROS 2 launch stack ({}): source a ROS 2 installation"
# robot_state_publisher's remappings where the simulator publishes the transforms (nodes/transforms.py): it then
# serves /robot_description only, its /tf and /tf_static going where nobody listens.
RSP_WITHOUT_TF = [('/tf', 'robot_state_publisher/unused_tf'), ('/tf_static', 'robot_state_publisher/unused_tf_static')]


class LaunchCheckError(RuntimeError):
    """Something a launch file needs is missing or invalid; nothing was started."""


class NodeFailed(RuntimeError):
    """A node of the launch exited with an error."""


def stop_launch_on_failure(node):
    """A launch action: a node that exits with an error (a URDF or parameter it cannot run with) ends the launch,
    rather than leave the other nodes running idle, and makes ``ros2 launch`` exit non-zero naming it. The
    launch's Shutdown action ends it with exit code 0 (LaunchService.run returns 1 only for an exception raised
    in the launch), so the handler raises NodeFailed: the launch logs it as an error and shuts down."""
    try:
        from launch.actions import RegisterEventHandler
        from launch.event_handlers import OnProcessExit
    except ImportError as e:
        raise LaunchCheckError(LAUNCH_STACK_NEEDED.format(e)) from None

    def on_exit(event, context):
        if event.returncode:
            raise NodeFailed(f"node {event.action.name!r} exited with code {event.returncode} (its last log line "
                             "says why)")
    return RegisterEventHandler(OnProcessExit(target_action=node, on_exit=on_exit))


def is_installed(package):
    """Whether a ROS package is in the ament index (ROS sourced)."""
    from ament_index_python.packages import PackageNotFoundError, get_package_share_directory
    try:
        get_package_share_directory(package)
        return True
    except (PackageNotFoundError, OSError):   # OSError: AMENT_PREFIX_PATH unset
        return False


def require_packages(launch_file, packages, hint=''):
    """LaunchCheckError naming every package of `packages` that is not installed."""
    missing = [package for package in packages if not is_installed(package)]
    if missing:
        raise LaunchCheckError(f"{launch_file} needs the ROS packages {missing}, not installed (or not sourced)"
                               + (f"; {hint}" if hint else ""))


def robot_description(urdf_file, prefix=''):
    """URDF XML of `urdf_file` (.xacro expanded) with `prefix` before every joint and link name, checked by
    the loader: a ROS graph can then hold two robots with distinct joint names and TF frames (ur_description's
    tf_prefix). LaunchCheckError for a missing or invalid file, or a .xacro without xacro installed."""
    try:
        xml = prefixed(read_xml(urdf_file), prefix)
        load_urdf(xml)
    except (URDFError, ET.ParseError) as e:
        raise LaunchCheckError(f"robot description {urdf_file!r}: {e}") from None
    return xml


DESCRIPTION_SOURCES = ('parameter', 'topic')


def description_parameter(source, description):
    """Our nodes' parameters for the launch argument ``description_source``: 'parameter', {'robot_description':
    description}; 'topic', none, so that they take the latest URDF on the robot_description topic
    (robot_state_publisher's, or the user's) and switch when it changes. LaunchCheckError for another source."""
    if source not in DESCRIPTION_SOURCES:
        raise LaunchCheckError(f"description_source must be one of {list(DESCRIPTION_SOURCES)}, got {source!r}")
    return {'robot_description': description} if source == 'parameter' else {}


def prefixed(xml, prefix):
    """URDF XML with `prefix` before the names of links and joints and every reference to them (joint
    parent/child and mimic, transmission and ros2_control joints, gazebo references)."""
    if not prefix:
        return xml
    robot = ET.fromstring(xml)
    renames = [('link', 'name'), ('joint', 'name'), ('joint/parent', 'link'), ('joint/child', 'link'),
               ('joint/mimic', 'joint'), ('transmission/joint', 'name'), ('ros2_control/joint', 'name'),
               ('gazebo', 'reference')]
    for path, attribute in renames:
        for element in robot.findall(path):
            if element.get(attribute):
                element.set(attribute, prefix + element.get(attribute))
    return ET.tostring(robot, encoding='unicode')


def node_parameters(parameters_file, node_name):
    """The parameters a node named `node_name` takes from a ROS 2 parameters YAML, in any namespace: the
    sections '/**', `node_name`, '/node_name' and '/**/node_name', later ones overriding. (rcl reads a
    plain `node_name:` section only for a node in the root namespace.)"""
    if not os.path.isfile(parameters_file):
        raise LaunchCheckError(f"parameters file not found: {parameters_file!r}")
    with open(parameters_file) as f:
        try:
            sections = yaml.safe_load(f) or {}
        except yaml.YAMLError as e:
            raise LaunchCheckError(f"parameters file {parameters_file!r}: {e}") from None
    result = {}
    for key in ('/**', node_name, '/' + node_name, '/**/' + node_name):
        section = sections.get(key) if isinstance(sections, dict) else None
        if section is not None:
            if not isinstance(section, dict) or not isinstance(section.get('ros__parameters'), dict):
                raise LaunchCheckError(f"parameters file {parameters_file!r}: section {key!r} has no "
                                       "ros__parameters mapping")
            result.update(section['ros__parameters'])
    return result


def closed_loop_parameters(urdf_file, config_file, node_name, files=parameter_files):
    """A closed-loop node's parameters from `resources.parameter_files` (config/closed_loop.yaml for any robot,
    config/arm7.yaml for the bundled arm, then `config_file` when not empty), later files overriding; for a robot
    on the ground, `files` = `resources.legged_parameter_files`."""
    result = {}
    for parameters_file in files(urdf_file, config_file or None):
        result.update(node_parameters(parameters_file, node_name))
    return result


PACKAGE = 'robot_dynamics_ros'


def controller_nodes(context, names, common):
    """Inside an OpaqueFunction: the nodes ``names`` of this package (executable and node name alike) in the launch's
    ``namespace``, each with its section of the closed-loop parameters (``urdf_file``, ``config_file``) and then
    ``common`` (and, where the launch's ``sync`` is lockstep, a controller's LOCKSTEP_STATE_TIMEOUT); each ends the
    launch if it fails (``stop_launch_on_failure``)."""
    try:
        from launch.substitutions import LaunchConfiguration
        from launch_ros.actions import Node
    except ImportError as e:
        raise LaunchCheckError(LAUNCH_STACK_NEEDED.format(e)) from None

    def argument(name):
        return LaunchConfiguration(name).perform(context)
    lockstep = context.launch_configurations.get('sync') == 'lockstep'   # (given by closed_loop.launch.py)

    def parameters(name):
        own = [{'state_timeout': LOCKSTEP_STATE_TIMEOUT}] if lockstep and name.endswith('_controller') else []
        return [closed_loop_parameters(argument('urdf_file'), argument('config_file'), name), common, *own]
    nodes = [Node(package=PACKAGE, executable=name, name=name, namespace=argument('namespace'), output='screen',
                  parameters=parameters(name)) for name in names]
    return nodes + [stop_launch_on_failure(node) for node in nodes]


CONFIG_DESCRIPTION = ('ROS 2 parameters YAML over config/closed_loop.yaml (and config/arm7.yaml for the bundled '
                      'arm); default: none, every per-joint parameter from the URDF')

# The launch arguments several launch files take: name -> (default, description, choices); urdf_file's default is the
# bundled arm (see launch_argument).
ARGUMENTS = {
    'urdf_file': (None, 'URDF (or xacro) of the robot', None),
    'use_sim_time': ('true', 'follow /clock', None),
    'namespace': ('', 'namespace of the nodes and their topics', None),
    'prefix': ('', 'prefix of every joint and link name', None),
    'sync': ('realtime', "simulator: 'realtime' or 'lockstep' (step when the controller has answered)", None),
    'description_source': ('parameter', "'topic': the nodes take the URDF from the robot_description topic",
                           list(DESCRIPTION_SOURCES)),
    'demo': ('true', "'false': no demo trajectory publisher (send your own trajectories or FollowJointTrajectory "
                     "goals)", ['true', 'false']),
}


def launch_argument(name, description=None):
    """The DeclareLaunchArgument of ``name``, one of ARGUMENTS, with its default and choices; ``description``
    replaces the usual one where a launch file says more."""
    try:
        from launch.actions import DeclareLaunchArgument
        from launch.substitutions import PathJoinSubstitution
        from launch_ros.substitutions import FindPackageShare
    except ImportError as e:
        raise LaunchCheckError(LAUNCH_STACK_NEEDED.format(e)) from None
    default, usual, choices = ARGUMENTS[name]
    if name == 'urdf_file':
        default = PathJoinSubstitution([FindPackageShare(PACKAGE), 'urdf', 'arm7.urdf'])
    return DeclareLaunchArgument(name, default_value=default, description=description or usual, choices=choices)


def robot_arguments(config_description, use_sim_time_description=None):
    """The launch arguments of a launch file that runs nodes for one robot: urdf_file (default: the bundled arm),
    config_file, use_sim_time, namespace, prefix."""
    try:
        from launch.actions import DeclareLaunchArgument
    except ImportError as e:
        raise LaunchCheckError(LAUNCH_STACK_NEEDED.format(e)) from None
    return [launch_argument('urdf_file'),
            DeclareLaunchArgument('config_file', default_value='', description=config_description),
            launch_argument('use_sim_time', use_sim_time_description),
            launch_argument('namespace'),
            launch_argument('prefix')]
