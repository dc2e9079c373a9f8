"""What `robot-dynamics bringup`, `record` and the launch files take for any URDF (issue 18, items 1-3), without
DDS: the parameter files, the model-derived defaults, the domain, the report's units and the tracking figure."""
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

import numpy as np
import pytest
import yaml

from robot_dynamics_ros import fast, load_urdf
from robot_dynamics_ros.commands import bringup
from robot_dynamics_ros.commands.node_runs import JointStateIntake, write_report
from robot_dynamics_ros.commands import processes
from robot_dynamics_ros.errors import RobotDynamicsError
from robot_dynamics_ros.nodes.launch_support import closed_loop_parameters
from robot_dynamics_ros.resources import bundled_urdf, parameter_files, share_directory

from conftest import BUNDLED_URDF, ROOT, TEST_URDFS

CLOSED_LOOP = os.path.join(ROOT, 'config', 'closed_loop.yaml')
ARM7 = os.path.join(ROOT, 'config', 'arm7.yaml')
UR5 = os.path.join(ROOT, 'test', 'urdf', 'real', 'ur5.urdf')
PRISMATIC = TEST_URDFS['prismatic_chain']


def read_yaml(path):
    with open(path) as f:
        return yaml.safe_load(f)


def test_parameter_files_any_urdf_bundled_arm_and_user_config(tmp_path):
    """closed_loop.yaml for any robot; arm7.yaml only for the bundled arm; the user's config last (it wins). The
    bundled files are the package's share directory's: the source tree here, the install space under colcon."""
    share = share_directory()
    closed_loop, arm7 = (os.path.join(share, 'config', name) for name in ('closed_loop.yaml', 'arm7.yaml'))
    bundled = os.path.join(share, 'urdf', 'arm7.urdf')
    assert parameter_files(UR5) == [closed_loop]
    assert parameter_files(bundled) == [closed_loop, arm7]
    copy = tmp_path / 'arm7.urdf'
    copy.write_text(open(bundled).read())
    assert parameter_files(str(copy)) == [closed_loop]   # another file, even with the same contents
    config = tmp_path / 'mine.yaml'
    assert parameter_files(UR5, str(config)) == [closed_loop, str(config)]
    assert parameter_files(bundled, str(config)) == [closed_loop, arm7, str(config)]
    for name in (closed_loop, arm7):   # what is installed is what the source tree holds
        assert read_yaml(name) == read_yaml(os.path.join(ROOT, 'config', os.path.basename(name)))


def test_closed_loop_config_sets_nothing_per_joint():
    """Any robot takes closed_loop.yaml: no list but the 3-vector gravity."""
    for node, section in read_yaml(CLOSED_LOOP).items():
        for name, value in section['ros__parameters'].items():
            assert not isinstance(value, list) or name == 'gravity', (node, name, value)


def test_arm7_config_is_closed_loop_plus_the_arms_per_joint_lists():
    """config/arm7.yaml repeats closed_loop.yaml (tests and ros2_control.launch.py load it alone) and adds only
    lists of one number per joint of the arm: the two cannot drift apart."""
    nv = load_urdf(BUNDLED_URDF).nv
    common, arm = read_yaml(CLOSED_LOOP), read_yaml(ARM7)
    assert set(arm) == set(common)
    for node in common:
        shared, own = common[node]['ros__parameters'], arm[node]['ros__parameters']
        for name, value in own.items():
            if name not in shared or shared[name] != value:
                assert isinstance(value, list) and len(value) == nv, (node, name, value)
        assert set(shared) <= set(own), (node, set(shared) - set(own))


def test_launch_files_take_the_same_files_for_any_urdf(tmp_path):
    """The launch files' parameters (launch_support.closed_loop_parameters): no per-joint list for another
    robot, the arm's lists for the bundled one, and a user's config over both. The bundled arm is the share
    directory's, as the launch files pass it (under a colcon build without --symlink-install a copy of the source
    tree's, which is another file)."""
    arm = read_yaml(ARM7)['simulator']['ros__parameters']['initial_positions']
    assert 'initial_positions' not in closed_loop_parameters(UR5, '', 'simulator')
    assert 'center' not in closed_loop_parameters(UR5, '', 'trajectory_publisher')
    assert closed_loop_parameters(UR5, '', 'computed_torque_controller')['kp'] == 400.0
    assert closed_loop_parameters(bundled_urdf(), '', 'simulator')['initial_positions'] == arm
    config = tmp_path / 'mine.yaml'
    config.write_text('computed_torque_controller:\n  ros__parameters:\n    kp: 250.0\n')
    controller = closed_loop_parameters(UR5, str(config), 'computed_torque_controller')
    assert controller['kp'] == 250.0 and controller['kd'] == 40.0


def test_middle_of_limits_from_the_urdf():
    """Where the simulator starts and the demo is centred when no config says otherwise: (lower + upper) / 2
    read from the URDF's <limit> elements, 0 for a continuous joint."""
    model = load_urdf(PRISMATIC)
    expected = {}
    for joint in ET.parse(PRISMATIC).getroot().iter('joint'):
        limit = joint.find('limit')
        if joint.get('type') in ('revolute', 'prismatic'):
            expected[joint.get('name')] = (float(limit.get('lower')) + float(limit.get('upper'))) / 2
        elif joint.get('type') == 'continuous':
            expected[joint.get('name')] = 0.0
    middle = model.middle_of_limits()
    assert {name: middle[i] for i, name in enumerate(model.joint_names)} == pytest.approx(expected, abs=1e-12)


class FakeRecorder:
    """What the monitor node records, made up: joint states (in a shuffled joint order) and tracking errors."""

    def __init__(self, model, positions, errors, dt=0.001):
        order = list(reversed(range(model.nv)))
        self.state_names = [model.joint_names[i] for i in order]
        stamps = dt * np.arange(len(positions))
        self.states = [(t, t, q[order]) for t, q in zip(stamps, positions)]
        self.errors = [(t, t, e) for t, e in zip(stamps, errors)]
        self.compute_us = [20.0, 30.0]
        self.intake = JointStateIntake(model.joint_names)   # (nothing ignored)


def prismatic_run():
    model = load_urdf(PRISMATIC)
    t = np.linspace(0.0, 1.0, 101)[:, None]
    positions = model.middle_of_limits() + 0.1 * np.sin(2 * np.pi * t) * np.ones(model.nv)
    errors = np.zeros((len(t), model.nv))
    errors[50] = [0.002, 0.01, -0.003, 0.02]   # lift (m), shoulder (rad), slide (m), wrist (rad)
    return model, FakeRecorder(model, positions, errors), positions, errors


def test_report_metres_for_prismatic_joints_and_degrees_for_revolute(tmp_path):
    model, recorder, _, _ = prismatic_run()
    assert list(model.joint_names) == ['lift', 'shoulder', 'slide', 'wrist']
    result = bringup.summary(recorder, model, -1.0, 2.0, 'stopping: (1000 steps/s, ...')
    assert result['joint_kinds'] == {'lift': 'prismatic', 'shoulder': 'revolute', 'slide': 'prismatic',
                                     'wrist': 'revolute'}
    assert result['max_tracking_error'] == pytest.approx({'lift': 0.002, 'shoulder': 0.01, 'slide': 0.003,
                                                          'wrist': 0.02})
    rows = {line.split()[0]: line.split()[1:] for line in bringup.report(result, model)
            if line.strip().split()[0] in model.joint_names}
    assert rows['lift'][1:] == ['2.0000', 'mm'] and rows['slide'][1:] == ['3.0000', 'mm']
    assert rows['shoulder'][1:] == [f'{np.degrees(0.01):.4f}', 'deg'] and rows['wrist'][2] == 'deg'
    path = tmp_path / 'report.json'
    write_report(result, str(path))
    written = json.loads(path.read_text())
    for key in ('real_time_factor', 'joint_names', 'joint_kinds', 'max_tracking_error'):
        assert written[key] == result[key]


def test_tracking_figure_shows_reference_and_actual_per_joint_with_the_legend_off_the_data():
    pytest.importorskip('matplotlib')
    import matplotlib
    matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    model, recorder, positions, errors = prismatic_run()
    fig = bringup.tracking_figure(recorder, model, plt)
    scale = {'lift': 1e3, 'shoulder': np.degrees(1.0), 'slide': 1e3, 'wrist': np.degrees(1.0)}
    position_axes = fig.axes[0:2 * model.nv:2]
    for i, (axis, name) in enumerate(zip(position_axes, model.joint_names)):
        lines = {line.get_label(): line.get_ydata() for line in axis.get_lines()}
        assert lines['actual'] == pytest.approx(scale[name] * positions[:, i])
        assert lines['reference'] == pytest.approx(scale[name] * (positions[:, i] + errors[:, i]))
        assert ('mm' if scale[name] == 1e3 else 'deg') in axis.get_ylabel()
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    legend = fig.legends[0].get_window_extent(renderer)
    for axis in fig.axes:
        assert not legend.overlaps(axis.get_window_extent(renderer)), axis.get_ylabel()


def test_loop_environment_honours_ros_domain_id_and_isolates_only_when_asked(monkeypatch):
    monkeypatch.setenv('ROS_DOMAIN_ID', '17')
    monkeypatch.delenv('ROS_AUTOMATIC_DISCOVERY_RANGE', raising=False)
    env = processes.loop_environment()
    assert env['ROS_DOMAIN_ID'] == '17' and 'ROS_AUTOMATIC_DISCOVERY_RANGE' not in env
    assert processes.loop_environment(domain_id=5)['ROS_DOMAIN_ID'] == '5'
    isolated = processes.loop_environment(isolated=True)
    assert isolated['ROS_DOMAIN_ID'] == str(1 + os.getpid() % 100)
    assert isolated['ROS_AUTOMATIC_DISCOVERY_RANGE'] == 'LOCALHOST'
    assert processes.loop_environment(domain_id=42, isolated=True)['ROS_DOMAIN_ID'] == '42'
    monkeypatch.setenv('ROS_DOMAIN_ID', 'seven')
    with pytest.raises(RobotDynamicsError, match='ROS_DOMAIN_ID'):
        processes.loop_environment()


def test_bringup_with_a_ros_domain_id_out_of_range_is_one_line_and_exit_2(tmp_path):
    env = dict(os.environ, ROS_DOMAIN_ID='300')
    result = subprocess.run([sys.executable, '-m', 'robot_dynamics_ros.cli', 'bringup', '--urdf', UR5],
                            capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env)
    assert result.returncode == 2 and 'Traceback' not in result.stderr, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and 'ROS_DOMAIN_ID' in result.stderr
    assert not os.listdir(tmp_path)


def test_demo_names_the_code_that_timed_the_calls(capsys):
    from robot_dynamics_ros.cli import main
    assert main(['demo']) == 0
    timings = capsys.readouterr().out.split('time per call')[1]
    assert 'NumPy' not in timings
    expected = 'plain Python' if fast.BACKEND == 'python' else 'compiled'
    assert timings.count(expected) == 3, timings


def test_bringup_compiles_the_nodes_code_ahead_only_when_asked(monkeypatch, capsys):
    """--compile builds what the nodes call (rnea, crba, aba) and is not in the disk cache; without it bringup
    only says how: nothing compiles behind the user's back."""
    pytest.importorskip('numba')
    monkeypatch.setattr(fast, 'ENABLE', True)
    compiled = []
    monkeypatch.setattr(fast, 'specialize', lambda model, algorithms, progress: compiled.append(algorithms))
    model = load_urdf(UR5)
    model._cache['generated'] = {'rnea': None}   # as if rnea alone were in the disk cache
    bringup.offer_compiled_code(model, compile_now=False)
    assert compiled == [] and '--compile builds per-robot code' in capsys.readouterr().out
    bringup.offer_compiled_code(model, compile_now=True)
    assert compiled == [('crba', 'aba')]
