"""Panda with its hand in the closed loop over DDS with its mimic finger joint coupled (issue 41): the simulator, the
controller and the reference all with their default mimic:=true (``robot-dynamics bringup``, no config; lockstep, so the
run is the same on any machine load). The joint states name the mimic joint too; the controllers skip it and command
the 8 independent joints."""
import json
import subprocess
import sys

from conftest import ROOT, example_robot_data
from ros_helpers import domain_id
from test_cartesian_nodes import STARTUP, assert_tracked_the_circle
from test_mimic import PUBLIC

from robot_dynamics_ros import load_urdf
from robot_dynamics_ros.control.cartesian import reach

PANDA = example_robot_data(PUBLIC['panda'][0])
HAND_ERROR = 2e-3   # m: the bound on the hand's error in the Cartesian demo


def bringup(tmp_path, *args):
    """The report of ``robot-dynamics bringup --urdf panda.urdf --sync lockstep ARGS``, which must exit 0."""
    report = tmp_path / 'report.json'
    result = subprocess.run(
        [sys.executable, '-m', 'robot_dynamics_ros.cli', 'bringup', '--urdf', PANDA, '--sync', 'lockstep',
         '--isolated', '--domain-id', str(domain_id(__name__)), '--report', str(report),
         '--startup-timeout', str(STARTUP), *args], capture_output=True, text=True, timeout=600, cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    return json.loads(report.read_text()), result.stdout


def test_computed_torque_loop_tracks_panda_with_hand(tmp_path):
    """The default reference (a sinusoid over every joint's range) on the 8 coordinates, the finger pair one of them,
    tracked with every revolute joint within HAND_ERROR / reach (an error e on each joint moves the hand by at most
    e times the sum of the link lengths: the hand within HAND_ERROR) and the fingers within HAND_ERROR; the
    fingers' reference spans at least half their range (the loop moved them)."""
    summary, output = bringup(tmp_path, '--duration', '4')
    model = load_urdf(PANDA)
    assert summary['joint_names'] == list(model.joint_names) and model.nv == 8
    assert summary['controller_updates'] > 1000, output   # 1 kHz for 4 s of sim time, less the start
    for name, kind in summary['joint_kinds'].items():
        bound = HAND_ERROR if kind == 'prismatic' else HAND_ERROR / reach(model)
        assert summary['max_tracking_error'][name] <= bound, (name, output)
    finger = model.joint_names.index('panda_finger_joint1')
    assert summary['reference_range']['panda_finger_joint1'] >= 0.5 * (model.upper[finger] - model.lower[finger])


def test_cartesian_demo_tracks_the_circle_on_panda_with_hand(tmp_path):
    """`bringup --urdf panda.urdf --controller cartesian`, no config: the hand (panda_hand, the default end
    effector) on the circle within the issue's 2 mm, and around it."""
    summary, _ = bringup(tmp_path, '--controller', 'cartesian', '--duration', '8')
    assert_tracked_the_circle(summary)


def test_coupled_gripper_stands_on_the_ground_in_bringup(tmp_path):
    """`bringup --root-joint floating --controller none` on a floating gripper whose fingers <mimic> couples
    (test_mimic_contact.py): the simulator node, coupled by default, holds it on its fingertips; with --no-mimic the
    nodes are told mimic:=false (the simulator's log says the finger is a joint of its own)."""
    from test_mimic_contact import GRIPPER
    urdf = tmp_path / 'gripper.urdf'
    urdf.write_text(GRIPPER)
    for flags in ([], ['--no-mimic']):
        report = tmp_path / 'report.json'
        result = subprocess.run(
            [sys.executable, '-m', 'robot_dynamics_ros.cli', 'bringup', '--urdf', str(urdf), '--root-joint',
             'floating', '--controller', 'none', '--duration', '1', '--isolated', '--domain-id',
             str(domain_id(__name__)), '--report', str(report), '--startup-timeout', str(STARTUP), *flags],
            capture_output=True, text=True, timeout=600, cwd=ROOT)
        assert result.returncode == 0, result.stdout + result.stderr
        summary = json.loads(report.read_text())
        assert summary['sim_time'] >= 1.0 and summary['ignored_joint_states'] == 0, result.stdout
        log_dir = result.stdout.split('logs in ')[1].split()[0]
        with open(f'{log_dir}/simulator.log') as f:
            assert ('independent degree of freedom' in f.read()) == bool(flags)
