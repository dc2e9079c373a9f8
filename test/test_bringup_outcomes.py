"""bringup's exit code gates CI (issue 38): a lockstep run completes its sim time however long the machine stalls it,
a robot that falls and a run that misses its tracking bound exit non-zero with the reason first, a stray publisher of
joint states on the domain does not change the report; the simulator alone runs without a config (issue 37)."""
import json
import os
import signal
import subprocess
import sys
import time

from robot_dynamics_ros.commands.node_runs import BEYOND_BOUND, FELL, REALTIME_ALLOWANCE

from conftest import ROOT, TEST_DIR
from ros_helpers import Probe, domain_id, rclpy  # noqa: F401 (rclpy: skips the module without it)
from test_cartesian_nodes import node_processes as node_pids

POLE = os.path.join(TEST_DIR, 'urdf', 'pole.urdf')


def bringup(tmp_path, *arguments, domain=None):
    """``robot-dynamics bringup ARGUMENTS --report`` on an isolated domain as a child process, its output read line by
    line; returns the Popen (stdout and stderr merged, text) and the report's path."""
    report = tmp_path / 'report.json'
    domain = domain_id(__name__) if domain is None else domain
    process = subprocess.Popen(
        [sys.executable, '-m', 'robot_dynamics_ros.cli', 'bringup', *arguments, '--isolated', '--domain-id',
         str(domain), '--report', str(report)],
        cwd=tmp_path, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=dict(os.environ, PYTHONUNBUFFERED='1'))
    return process, report


def verdict(stderr):
    """The line that says why a run failed."""
    return next((line for line in stderr.splitlines() if line.startswith('bringup failed')), None)


DURATION = 1.0
# Longer than the wall-clock cap a lockstep run of DURATION had before issue 38 (3 x duration + 10 s): the old
# bringup gave up during the stop, having run less than its sim time. (The 30 s, scaled down.)
STOP = REALTIME_ALLOWANCE[0] * DURATION + REALTIME_ALLOWANCE[1] + 1.0


def test_a_lockstep_run_completes_its_sim_time_after_the_simulator_was_stopped(tmp_path):
    domain = domain_id(__name__ + ' stopped')
    process, report = bringup(tmp_path, '--duration', str(DURATION), '--sync', 'lockstep', domain=domain)
    out = []
    for line in process.stdout:
        out.append(line)
        if line.startswith('loop running'):
            break
    pids = node_pids('simulator', domain)
    assert len(pids) == 1, (pids, ''.join(out))
    os.kill(pids[0], signal.SIGSTOP)
    try:
        time.sleep(STOP)
    finally:
        os.kill(pids[0], signal.SIGCONT)
    rest, err = process.communicate(timeout=300)
    output = ''.join(out) + rest
    assert process.returncode == 0, output + err
    summary = json.loads(report.read_text())
    assert summary['sim_time'] >= DURATION - 0.01 and summary['wall_time'] > STOP, summary
    assert f'of {DURATION:g} s of sim time after' in output   # a progress line while it was stopped


def test_a_robot_that_falls_exits_4_and_says_so_first(tmp_path):
    """A 1 m pole on a 0.1 m square foot under gravity leaning 19.6 deg (3.5 m/s^2 sideways: it tips over beyond
    atan(0.05 / 0.5) = 5.7 deg, and does not slide: tan 19.6 deg = 0.36 < the ground's friction 0.8) falls flat."""
    process, report = bringup(tmp_path, '--urdf', POLE, '--root-joint', 'floating', '--controller', 'none',
                              '--gravity', '3.5', '0', '-9.81', '--duration', '3')
    out, err = process.communicate(timeout=600)
    assert process.returncode == FELL, out + err
    assert verdict(err).startswith('bringup failed (exit 4): the robot fell: its base tilted'), err
    summary = json.loads(report.read_text())
    assert summary['fell'] and summary['base_tilt_deg']['max'] > 45 and summary['exit_code'] == FELL, summary


def test_a_run_beyond_its_tracking_bound_exits_5_and_a_stray_publisher_does_not_change_the_report(tmp_path):
    """Unitree Z1 in lockstep: every joint has Coulomb friction (1-2 N m), whose switch as a joint starts from rest the
    controller cannot anticipate (its compensation follows the velocity's sign): one 1 ms step of 1 N m unanswered
    on joint6 (1.8e-4 kg m^2 about its axis at the start posture) moves it 0.5 * (1 / 1.8e-4) * 1e-6 rad = 0.16 deg,
    so a bound of 0.01 deg is missed.
    Meanwhile another graph's node on the same domain publishes joint states of other joints stamped with the wall
    clock, as in issue 38's report (1795813469.66 s of sim time): the run counts only its own robot's."""
    from sensor_msgs.msg import JointState
    domain = domain_id(__name__ + ' stray')
    probe = Probe(domain)
    stray = probe.node.create_publisher(JointState, '/joint_states', 10)
    sent = []

    def publish():
        msg = JointState(name=['wheel_left', 'wheel_right'], position=[0.0, 0.0])
        msg.header.stamp.sec = 1795813469
        stray.publish(msg)
        sent.append(1)
    probe.node.create_timer(0.05, publish)
    process, report = bringup(tmp_path, '--urdf', os.path.join(ROOT, 'test', 'urdf', 'real', 'z1.urdf'),
                              '--duration', '2', '--sync', 'lockstep', '--max-error', '0.01', domain=domain)
    try:
        probe.spin_until(lambda: process.poll() is not None, 600)
    finally:
        probe.close()
    out, err = process.communicate(timeout=60)
    assert process.returncode == BEYOND_BOUND, out + err
    assert verdict(err).startswith('bringup failed (exit 5): the tracking error of '), err
    summary = json.loads(report.read_text())
    assert 2.0 - 0.01 <= summary['sim_time'] < 3.0, summary
    assert len(sent) > 20 and summary['ignored_joint_states'] > 0, (len(sent), summary)
    assert 'ignoring joint states naming other joints' in err


def test_the_simulator_alone_runs_without_a_config(tmp_path):
    """Issue 37: `bringup --controller none` without --config was a TypeError traceback."""
    process, report = bringup(tmp_path, '--controller', 'none', '--duration', '0.5')
    out, err = process.communicate(timeout=600)
    assert process.returncode == 0 and 'Traceback' not in err, out + err
    assert json.loads(report.read_text())['sim_time'] >= 0.5 - 0.01
