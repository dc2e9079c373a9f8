"""`robot-dynamics bringup --urdf X` with no config on public arms we did not write (test/urdf/real/, licences in
its README) and on a robot with prismatic joints, over DDS; bringup on the exported ROS_DOMAIN_ID (issue 18,
items 1-3).

Bounds. The demo moves every joint (amplitude 0.5 rad at 0.25 Hz, scaled into the position, velocity and
acceleration limits; the run covers its first 4 s; the reference must move at least half as much as the demo), and a loop whose model, joint order, start pose or efforts are wrong misses by a good part of that
motion, or does not start (the bundled arm's lists on these robots stopped every node). In lockstep, with the
exact model, computed torque leaves two errors: the 1 ms sample-and-hold of the torque, at most the distance the
reference moves in one step (speed <= 0.5 rad * (2 pi 0.25 Hz + 2 * 1.875 / 4 s), the sinusoid and its
smoothstep envelope: 1.25 rad/s, i.e. 1.25e-3 rad per step), and, on arms whose URDF has Coulomb friction, its
switch at rest and at reversals, which the controller's compensation (a function of the velocity's sign) cannot
anticipate. So: every arm within 5 % of each joint's reference range, friction-free arms within 1.25e-3 rad.
"""
import json
import os
import signal
import subprocess
import sys

import numpy as np
import pytest

from robot_dynamics_ros import load_urdf
from robot_dynamics_ros.control.references import sinusoid_reference

from conftest import ROOT, TEST_URDFS
from ros_helpers import Probe, domain_id, rclpy  # noqa: F401 (rclpy: skips the module without it)

REAL = os.path.join(ROOT, 'test', 'urdf', 'real')
ROBOTS = ('ur5', 'ur5e', 'panda', 'kinova_gen3', 'xarm7', 'z1')
DURATION = 5.0
STEP_BOUND = 1e-3 * 0.5 * (2 * np.pi * 0.25 + 2 * 1.875 / 4)   # rad: one 1 ms step of the demo's fastest motion
FRACTION_OF_MOTION = 0.05


def demo_motion(model):
    """Each joint's range of the demo reference over the run's first DURATION - 1 s (the config's sinusoids:
    amplitude 0.5 at 0.25 Hz over 20 s, scaled into the position, velocity and model acceleration limits)."""
    times, positions, _, _ = sinusoid_reference(model, 0.5, 0.25, 20.0)
    return np.ptp(positions[times <= DURATION - 1.0], axis=0)


def bringup(tmp_path, urdf, *extra, env=None):
    report = tmp_path / 'report.json'
    process = subprocess.Popen(
        [sys.executable, '-m', 'robot_dynamics_ros.cli', 'bringup', '--urdf', urdf, '--duration', str(DURATION),
         '--report', str(report), '--plot', str(tmp_path / 'tracking.png'), *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path, env=env)
    try:
        stdout, stderr = process.communicate(timeout=300)
    except subprocess.TimeoutExpired:   # stop it as a user would, so that it stops its nodes: killed, it left them
        process.send_signal(signal.SIGINT)   # running on the domain, where they disturbed the next robots' runs
        stdout, stderr = process.communicate(timeout=60)
        stderr += '\n(stopped by the test after 300 s)'
    result = subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)
    assert result.returncode == 0, result.stdout + result.stderr
    with open(report) as f:
        return result, json.load(f)


@pytest.mark.parametrize('robot', ROBOTS)
def test_bringup_runs_any_public_arm_without_a_config(robot, tmp_path):
    urdf = os.path.join(REAL, robot + '.urdf')
    model = load_urdf(urdf)
    result, report = bringup(tmp_path, urdf, '--sync', 'lockstep', '--isolated', '--domain-id', str(domain_id(__name__ + ' bringup')))
    assert 'with closed_loop.yaml,' in result.stdout   # no arm7.yaml for another robot
    assert report['joint_names'] == list(model.joint_names)
    assert report['joint_kinds'] == {name: 'revolute' for name in model.joint_names}
    assert report['sim_time'] >= DURATION - 0.01
    errors, motion = report['max_tracking_error'], report['reference_range']
    for name, expected in zip(model.joint_names, demo_motion(model)):   # the reference moved as the demo does
        assert np.isfinite(errors[name]) and motion[name] >= 0.5 * expected > 0.0, (name, motion[name], expected)
        assert errors[name] < FRACTION_OF_MOTION * motion[name], (name, errors[name], motion[name])
        if not np.any(model.friction):
            assert errors[name] < STEP_BOUND, (name, errors[name])
    assert (tmp_path / 'tracking.png').stat().st_size > 0


def test_prismatic_joints_are_reported_in_metres(tmp_path):
    urdf = TEST_URDFS['prismatic_chain']
    model = load_urdf(urdf)
    result, report = bringup(tmp_path, urdf, '--sync', 'lockstep', '--isolated', '--domain-id', str(domain_id(__name__ + ' bringup')))
    assert report['joint_kinds'] == {'lift': 'prismatic', 'shoulder': 'revolute', 'slide': 'prismatic',
                                     'wrist': 'revolute'}
    rows = {line.split()[0]: line.split() for line in result.stdout.splitlines()
            if line.strip() and line.split()[0] in model.joint_names}
    assert [rows[name][-1] for name in model.joint_names] == ['mm', 'deg', 'mm', 'deg'], result.stdout
    for name in model.joint_names:   # the printed mm / deg are the report's m / rad
        scale = 1e3 if report['joint_kinds'][name] == 'prismatic' else np.degrees(1.0)
        assert float(rows[name][2]) == pytest.approx(scale * report['max_tracking_error'][name], abs=1e-4)
        assert report['max_tracking_error'][name] < FRACTION_OF_MOTION * report['reference_range'][name]


def test_bringup_runs_on_the_exported_ros_domain(tmp_path, monkeypatch):
    """No --domain-id, no --isolated: the nodes join the ROS_DOMAIN_ID of the environment, where a node of
    ours hears them (discovery kept to this machine by the environment, as a user would set it)."""
    domain = domain_id(61)
    for key, value in (('ROS_DOMAIN_ID', str(domain)), ('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')):
        monkeypatch.setenv(key, value)
    if os.environ.get('ROS_DISTRO') in ('foxy', 'galactic', 'humble'):
        monkeypatch.setenv('ROS_LOCALHOST_ONLY', '1')
    from sensor_msgs.msg import JointState
    probe = Probe(domain)
    heard = []
    probe.node.create_subscription(JointState, '/joint_states', lambda msg: heard.append(msg.name), 10)
    process = subprocess.Popen(
        [sys.executable, '-m', 'robot_dynamics_ros.cli', 'bringup', '--urdf', os.path.join(REAL, 'ur5.urdf'),
         '--duration', '2', '--plot', ''], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=tmp_path)
    try:
        probe.spin_until(lambda: heard or process.poll() is not None, 120)
        output = process.communicate(timeout=120)[0]
    finally:
        if process.poll() is None:
            process.kill()
        probe.close()
    assert process.returncode == 0, output
    assert f'ROS_DOMAIN_ID={domain}, localhost only' in output
    assert heard and heard[0] == list(load_urdf(os.path.join(REAL, 'ur5.urdf')).joint_names)


def test_configuration_errors_show_plain_numbers():
    from robot_dynamics_ros.nodes.node_parameters import as_vector
    from robot_dynamics_ros.nodes.parameter_schema import ConfigurationError
    with pytest.raises(ConfigurationError) as error:
        as_vector('center', np.zeros(7), 6, allow_scalar=False)
    assert str(error.value) == "parameter 'center' must be 6 numbers, got [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]"


@pytest.mark.parametrize('sig', [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_bringup_stops_its_nodes_and_exits_with_the_signals_code(sig, tmp_path):
    """As a shell command stopped by a signal: 128 + its number (130, 143), after the nodes exited 0."""
    process = subprocess.Popen(
        [sys.executable, '-m', 'robot_dynamics_ros.cli', 'bringup', '--duration', '600', '--plot', '', '--isolated',
         '--domain-id', str(domain_id(60 + sig.value))],
        cwd=tmp_path, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=dict(os.environ, PYTHONUNBUFFERED='1'))
    for line in process.stdout:   # the loop is running
        if line.startswith('loop running'):
            break
    process.send_signal(sig)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 128 + sig.value, out + err
    assert 'all nodes exited 0' in out and 'Traceback' not in err, out + err
