"""Every module the code imports is declared: in package.xml for rosdep and `colcon test`, in setup.py for pip.
Imports are read from the syntax trees (import_scan.py) of everything under robot_dynamics_ros/, launch/, test/
and benchmarks/, at module level and inside functions."""
import os
import re
import runpy
import sys
import xml.etree.ElementTree as ET
from unittest import mock

import setuptools

from conftest import ROOT
from import_scan import imports

ROS = 'ROS wheel'  # pip: 'ros-<name>' in the extra 'ros' (Kilted) and 'ros-jazzy-<name>' in 'ros-jazzy'
# pip: no wheel; test/interfaces/<name> holds its definitions, which test/interfaces/build.py builds for the tests. The
# package imports it only where a missing one is handled (a node without it says so and runs).
INTERFACES = 'test/interfaces'
# import name -> (rosdep key in package.xml, pip distribution in setup.py). None for pip: not on the
# registries (the launch stack), so imported only by launch files and by launch tests that skip without it.
DEPENDENCIES = {
    'numpy': ('python3-numpy', 'numpy'),
    'scipy': ('python3-scipy', 'scipy'),
    'yaml': ('python3-yaml', 'pyyaml'),
    'numba': ('python3-numba', 'numba'),
    'xacro': ('xacro', 'xacro'),
    'matplotlib': ('python3-matplotlib', 'matplotlib'),
    'rclpy': ('rclpy', ROS),
    'rcl_interfaces': ('rcl_interfaces', ROS),
    'builtin_interfaces': ('builtin_interfaces', ROS),
    'sensor_msgs': ('sensor_msgs', ROS),
    'std_msgs': ('std_msgs', ROS),
    'std_srvs': ('std_srvs', ROS),
    'geometry_msgs': ('geometry_msgs', ROS),
    'nav_msgs': ('nav_msgs', ROS),
    'diagnostic_msgs': ('diagnostic_msgs', ROS),
    'lifecycle_msgs': ('lifecycle_msgs', ROS),
    'trajectory_msgs': ('trajectory_msgs', ROS),
    'rosgraph_msgs': ('rosgraph_msgs', ROS),
    'ament_index_python': ('ament_index_python', ROS),
    'launch': ('launch', None),
    'launch_ros': ('launch_ros', None),
    'launch_testing': ('launch_testing', None),
    'pytest': ('python3-pytest', 'pytest'),
    'hypothesis': ('python3-hypothesis', 'hypothesis'),
    'pinocchio': ('pinocchio', 'pin'),
    'setuptools': ('python3-setuptools', 'setuptools'),
    'tf2_msgs': ('tf2_msgs', INTERFACES),
    'control_msgs': ('control_msgs', INTERFACES),
}
# Not in package.xml, so imported only where a missing one is handled (importorskip, except ImportError):
# import name -> pip distribution. rosbags: rosdep has only a pip key for it, which a released package cannot use;
# cvxpy (with the Clarabel solver) only for identify --urdf-out; clarabel for ground contact and
# contact_inverse_dynamics; mujoco: the second simulator the contact tests and benchmark compare with;
# viser and trimesh (the view extra) for the robot in the browser; trimesh also for the convex hulls of collision
# meshes (model/meshes.py, the legged extra); playwright drives the browser in the view tests.
OPTIONAL = {'rosbags': 'rosbags', 'cvxpy': 'cvxpy', 'clarabel': 'clarabel', 'mujoco': 'mujoco', 'viser': 'viser',
            'trimesh': 'trimesh', 'playwright': 'playwright'}
# Data the tests read without importing it (found by importlib.metadata): pip distribution -> the extra holding it.
# example-robot-data: robots as their packages ship them (URDF, SRDF, meshes), for test_srdf.py and the bringups.
DATA = {'example-robot-data': 'test'}
FOLDERS = ('robot_dynamics_ros', 'launch', 'test', 'benchmarks')
RUNTIME_FOLDERS = ('robot_dynamics_ros', 'launch')  # their unguarded imports need an exec_depend
TEST_COMMAND_EXTRAS = ('ros', 'test')  # the README's test command installs '.[ros,test]'


def local_modules():
    """The package itself and the modules tests and benchmarks import from their own folder."""
    return {'robot_dynamics_ros'} | {name[:-3] for folder in ('test', 'benchmarks')
                                     for name in os.listdir(os.path.join(ROOT, folder)) if name.endswith('.py')}


def third_party_imports():
    """(folder, 'file:line', Import) for every import of a module that is neither stdlib nor local."""
    local = local_modules()
    for folder in FOLDERS:
        for directory, _, files in sorted(os.walk(os.path.join(ROOT, folder))):
            for name in sorted(files):
                if name.endswith('.py'):
                    path = os.path.join(directory, name)
                    for found in imports(path):
                        if found.module not in sys.stdlib_module_names and found.module not in local:
                            yield folder, f'{os.path.relpath(path, ROOT)}:{found.line}', found


def package_xml_dependencies():
    """rosdep key -> tag (exec_depend, test_depend, ...) of every dependency in package.xml."""
    root = ET.parse(os.path.join(ROOT, 'package.xml')).getroot()
    return {element.text.strip(): element.tag for element in root if element.tag.endswith('depend')}


def setup_arguments(monkeypatch):
    """The keyword arguments setup.py passes to setuptools.setup (run with setup() replaced: nothing is built)."""
    monkeypatch.chdir(ROOT)
    with mock.patch.object(setuptools, 'setup') as setup:
        runpy.run_path(os.path.join(ROOT, 'setup.py'))
    return setup.call_args.kwargs


def distribution_names(requirements):
    return {re.match(r'[A-Za-z0-9._-]+', requirement).group().lower() for requirement in requirements}


def test_every_import_is_declared_in_package_xml():
    declared = package_xml_dependencies()
    problems = []
    for folder, where, found in third_party_imports():
        if found.module in OPTIONAL:
            continue
        if found.module not in DEPENDENCIES:
            problems.append(f"{where}: '{found.module}' has no rosdep key in DEPENDENCIES (declare it in "
                            "package.xml and here, or make it optional)")
            continue
        key = DEPENDENCIES[found.module][0]
        if key not in declared:
            problems.append(f"{where}: '{found.module}' needs <{key}> in package.xml")
        elif folder in RUNTIME_FOLDERS and not found.guarded and declared[key] not in ('depend', 'exec_depend'):
            problems.append(f"{where}: '{found.module}' is imported at run time: <{key}> must be an exec_depend")
    assert problems == []


def test_optional_modules_are_imported_only_where_a_missing_one_is_handled():
    optional = [(where, found) for _, where, found in third_party_imports() if found.module in OPTIONAL]
    assert {found.module for _, found in optional} == set(OPTIONAL)  # each is used: the list is not stale
    assert [where for where, found in optional if not found.guarded] == []


def test_every_package_xml_dependency_serves_an_import():
    imported = {found.module for _, _, found in third_party_imports()}
    served = {DEPENDENCIES[module][0] for module in imported if module in DEPENDENCIES}
    assert sorted(set(package_xml_dependencies()) - served) == []


def test_setup_py_installs_every_import(monkeypatch):
    arguments = setup_arguments(monkeypatch)
    extras = {name: distribution_names(requirements) for name, requirements in arguments['extras_require'].items()}
    required = distribution_names(arguments['install_requires'])
    test_command = required.union(*(extras[name] for name in TEST_COMMAND_EXTRAS))
    pip_names = {module: pip for module, (_, pip) in DEPENDENCIES.items()} | OPTIONAL
    problems = []
    for folder, where, found in third_party_imports():
        pip = pip_names.get(found.module, '')
        if pip == '':
            problems.append(f"{where}: '{found.module}' has no pip distribution in DEPENDENCIES")
        elif pip == ROS:
            wheel = found.module.replace('_', '-')
            if f'ros-{wheel}' not in extras['ros'] or f'ros-jazzy-{wheel}' not in extras['ros-jazzy']:
                problems.append(f"{where}: ros-{wheel} and ros-jazzy-{wheel} belong in the extras 'ros', 'ros-jazzy'")
        elif pip == INTERFACES:
            if not os.path.isdir(os.path.join(ROOT, INTERFACES, found.module)):
                problems.append(f"{where}: '{found.module}' has no definitions in {INTERFACES} to build")
        elif pip is None:
            if folder != 'launch' and not found.guarded:
                problems.append(f"{where}: '{found.module}' is not on pip: import it behind importorskip")
        elif pip not in required.union(*extras.values()):
            problems.append(f"{where}: {pip} is in neither install_requires nor an extra")
        elif folder == 'test' and pip not in test_command:
            problems.append(f"{where}: {pip} is imported by a test but not installed by '.[ros,test]'")
    assert problems == []


def test_data_the_tests_read_is_in_its_extra(monkeypatch):
    extras = setup_arguments(monkeypatch)['extras_require']
    assert {pip: extra for pip, extra in DATA.items() if pip in distribution_names(extras[extra])} == DATA


def test_ros_wheels_only_in_extras_and_the_same_for_kilted_and_jazzy(monkeypatch):
    arguments = setup_arguments(monkeypatch)
    kilted, jazzy = arguments['extras_require']['ros'], arguments['extras_require']['ros-jazzy']
    assert [name.removeprefix('ros-') for name in kilted] == [name.removeprefix('ros-jazzy-') for name in jazzy]
    assert 'rmw-fastrtps-cpp' in [name.removeprefix('ros-') for name in kilted]  # a middleware to talk with
    assert not [name for name in distribution_names(arguments['install_requires']) if name.startswith('ros-')]
