"""The cartesian_controller node and the simulator's ~/wrench as processes over DDS (issue 31): the impedance law
holds a 10 N force at F/K, bad targets and wrenches are refused with a reason while the loop goes on, and
`bringup --controller cartesian` tracks the circle on public arms.

Bounds: F/K within 5 % (the issue; at rest K e = -F exactly, see test_cartesian_control); tracking within 2 mm and
0.5 deg (the issue), in lockstep so that machine load does not change the result.
"""
import json
import os
import signal
import subprocess
import sys
import threading

import numpy as np
import pytest
from geometry_msgs.msg import PoseStamped, TwistStamped, WrenchStamped

from conftest import ROOT
from ros_helpers import domain_id, ros_domain, start  # noqa: F401  (fixtures)
from robot_dynamics_ros import load_urdf
from robot_dynamics_ros.control.cartesian import dexterous_posture
from robot_dynamics_ros.nodes.launch_support import LOCKSTEP_STATE_TIMEOUT
from robot_dynamics_ros.nodes.parameter_schema import load as load_schema

REAL = os.path.join(ROOT, 'test', 'urdf', 'real')
UR5 = os.path.join(REAL, 'ur5.urdf')
STARTUP = 120.0   # s: the first start compiles the law's kernel (once per source version)


def stamp_of(msg):
    return msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec


def position(msg):
    p = msg.pose.position
    return np.array([p.x, p.y, p.z])


def linear(msg):
    v = msg.twist.linear
    return np.array([v.x, v.y, v.z])


def wrench_message(link, force):
    msg = WrenchStamped()
    msg.header.frame_id = link
    msg.wrench.force.x, msg.wrench.force.y, msg.wrench.force.z = map(float, force)
    return msg


@pytest.fixture
def ur5_loop(ros_domain, start):
    """Simulator (lockstep, at a dexterous posture) and the impedance controller on UR5; (probe, poses, nodes)."""
    _, probe = ros_domain
    poses = []
    probe.node.create_subscription(PoseStamped, '/cartesian_controller/current_pose', poses.append, 1000)
    q0 = dexterous_posture(load_urdf(UR5), 'tool0')
    simulator = start('simulator', params=[('urdf_file', UR5), ('sync', 'lockstep'),
                                           ('initial_positions', str(q0.tolist()))])
    # lockstep: no joint state while the machine is busy is no stale state (a zero command would answer a step)
    controller = start('cartesian_controller', params=[('urdf_file', UR5), ('law', 'impedance'),
                                                       ('state_timeout', LOCKSTEP_STATE_TIMEOUT)])
    assert probe.spin_until(lambda: len(poses) > 100, STARTUP), controller.log() + simulator.log()
    return probe, poses, simulator, controller


def connected(probe, topic, kind):
    """A publisher on ``topic`` once the node's subscription has matched (a message sent before is lost)."""
    publisher = probe.node.create_publisher(kind, topic, 10)
    assert probe.spin_until(lambda: publisher.get_subscription_count() > 0, 30.0)
    return publisher


def spin_sim_time(probe, messages, seconds):
    """Spin until the stamps of the newest of ``messages`` (stamped, received in order) have advanced by
    ``seconds`` (sim time)."""
    start = stamp_of(messages[-1])
    assert probe.spin_until(lambda: stamp_of(messages[-1]) - start >= seconds, 60.0 + 10 * seconds)


def test_impedance_holds_a_force_at_f_over_k_and_returns_when_it_is_removed(ur5_loop):
    """The displacement from the held target: -e of ~/pose_error (target - current)."""
    probe, poses, simulator, controller = ur5_loop
    errors = []
    probe.node.create_subscription(TwistStamped, '/cartesian_controller/pose_error', errors.append, 1000)
    assert probe.spin_until(lambda: len(errors) > 0, STARTUP)
    spin_sim_time(probe, errors, 0.5)
    publisher = connected(probe, '/simulator/wrench', WrenchStamped)
    publisher.publish(wrench_message('tool0', [10.0, 0.0, 0.0]))
    assert simulator.wait_for_log("external wrench on 'tool0'", 30.0)
    # the errors' own stamps: under load the pose_error topic can lag the current_pose one
    spin_sim_time(probe, errors, 2.0)
    moved = -linear(errors[-1])
    assert moved[0] == pytest.approx(10.0 / 500.0, rel=0.05), simulator.log() + controller.log()
    assert np.all(np.abs(moved[1:]) <= 0.05 * 0.02)
    publisher.publish(wrench_message('tool0', [0.0, 0.0, 0.0]))   # a zero wrench removes it
    assert simulator.wait_for_log('external wrench removed', 30.0)
    spin_sim_time(probe, errors, 2.0)
    assert np.all(np.abs(linear(errors[-1])) <= 0.05 * 0.02)
    assert simulator.stop() == 0 and controller.stop() == 0


def test_bad_targets_and_wrenches_are_refused_with_a_reason_and_the_pose_is_held(ur5_loop):
    probe, poses, simulator, controller = ur5_loop
    spin_sim_time(probe, poses, 0.2)
    held = position(poses[-1])
    targets = connected(probe, '/cartesian_controller/target_pose', PoseStamped)
    wrenches = connected(probe, '/simulator/wrench', WrenchStamped)
    bad = []
    cases = ((np.nan, (0, 0, 0, 1), ''), (0.3, (0, 0, 0, 2), ''), (0.3, (0, 0, 0, 1), 'camera_link'))
    for x, quaternion, frame in cases:
        msg = PoseStamped()
        msg.header.frame_id = frame
        msg.pose.position.x = x
        o = msg.pose.orientation
        o.x, o.y, o.z, o.w = map(float, quaternion)
        bad.append(msg)
    for msg in bad:
        targets.publish(msg)
        spin_sim_time(probe, poses, 0.1)
    wrenches.publish(wrench_message('no_such_link', [1.0, 0.0, 0.0]))
    wrenches.publish(wrench_message('tool0', [np.inf, 0.0, 0.0]))
    assert simulator.wait_for_log('wrench force contains NaN or Inf', 30.0), simulator.log()
    assert controller.wait_for_log("is not robot_base_link", 30.0), controller.log()
    spin_sim_time(probe, poses, 0.5)
    log = controller.log()
    for reason in ('target pose is not finite', 'not a unit quaternion', "frame 'camera_link' is not robot_base_link"):
        assert 'rejected target pose: ' in log and reason in log, log
    assert "rejected wrench: wrench: no link 'no_such_link'" in simulator.log()
    assert 'wrench force contains NaN or Inf' in simulator.log()
    assert np.all(np.abs(position(poses[-1]) - held) < 1e-4)   # still holding, still commanding
    assert simulator.stop() == 0 and controller.stop() == 0


def test_the_target_publisher_sends_no_target_before_a_subscriber_of_them_has_matched(ros_domain, start):
    """Targets published before the controller's subscription has matched are lost (DDS keeps nothing for a later
    subscriber), and under load it can match after the controller's first pose has reached this node: the controller
    then got the targets from some point on and stepped there (82 mm on the issue's 2 mm bound). Here the first pose
    comes before any subscriber: the first target received is the circle's first point, at the start pose, and none
    is missing after it."""
    _, probe = ros_domain
    publisher = start('cartesian_target_publisher')
    poses = connected(probe, '/cartesian_controller/current_pose', PoseStamped)
    pose = PoseStamped()
    pose.pose.position.x, pose.pose.position.z, pose.pose.orientation.w = 0.4, 0.3, 1.0
    poses.publish(pose)   # stamp 0: no subscriber of the targets yet
    probe.spin_for(1.0)
    targets = []
    probe.node.create_subscription(PoseStamped, '/cartesian_controller/target_pose', targets.append, 1000)
    for k in range(1, 11):   # stamps 0.3 k: none of them a target's stamp less one target_period
        pose.header.stamp.sec, pose.header.stamp.nanosec = divmod(3 * k * 10**8, 10**9)
        poses.publish(pose)
        probe.spin_for(0.3)
    assert publisher.wait_for_log('targets published', 30.0), publisher.log()
    assert targets, publisher.log()
    period = TARGET_PUBLISHER_SCHEMA.parameters['target_period'].default
    assert np.linalg.norm(position(targets[0]) - [0.4, 0.0, 0.3]) < 1e-5   # the circle's point at one period
    assert np.allclose(np.diff([stamp_of(target) for target in targets]), period, atol=1e-6)
    assert publisher.stop() == 0


TARGET_PUBLISHER_SCHEMA = load_schema('cartesian_target_publisher')
ARMS = ('ur5', 'panda', 'kinova_gen3', 'xarm7', 'z1')
RADIUS = TARGET_PUBLISHER_SCHEMA.parameters['radius'].default


def assert_tracked_the_circle(summary):
    """Within the issue's bounds of the circle, and around it: over 8 s (2 turns) the circle through the start
    point reaches the point opposite, 2 RADIUS away (a controller holding its start pose tracks within any bound)."""
    error = summary['cartesian_tracking_error']
    assert error['max_position'] <= 2e-3, error
    assert error['max_orientation'] <= np.radians(0.5), error
    assert summary['farthest_from_start'] == pytest.approx(2 * RADIUS, abs=2e-3), summary


@pytest.mark.parametrize('robot', ARMS)
def test_bringup_cartesian_tracks_the_circle_on_public_arms(robot, tmp_path):
    report = tmp_path / 'report.json'
    result = subprocess.run(
        [sys.executable, '-m', 'robot_dynamics_ros.cli', 'bringup', '--urdf', os.path.join(REAL, robot + '.urdf'),
         '--controller', 'cartesian', '--duration', '8', '--sync', 'lockstep', '--isolated', '--report', str(report),
         '--domain-id', str(domain_id(__name__ + ' bringup')),
         '--plot', str(tmp_path / 'tracking.png'), '--startup-timeout', str(STARTUP)],
        capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    summary = json.loads(report.read_text())
    assert_tracked_the_circle(summary)
    assert (tmp_path / 'tracking.png').exists()


STALL = 1.5   # s wall the target publisher is stopped at a time: more than its default lead_time (1 s) of sim time


def node_processes(name, domain):
    """PIDs of the node processes ``name`` running on ROS domain ``domain`` (from /proc)."""
    pids = []
    for pid in filter(str.isdigit, os.listdir('/proc')):
        try:
            with open(f'/proc/{pid}/cmdline', 'rb') as f:
                command = f.read().split(b'\0')
            with open(f'/proc/{pid}/environ', 'rb') as f:
                environment = f.read().split(b'\0')
        except OSError:   # exited meanwhile, or not ours
            continue
        if b'robot_dynamics_ros.nodes.start' in command and name.encode() in command \
                and f'ROS_DOMAIN_ID={domain}'.encode() in environment:
            pids.append(int(pid))
    return pids


def send(pids, sig):
    for pid in pids:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:   # exited since it was listed
            pass


def stall_repeatedly(name, domain, done, stalls):
    """Until ``done``: stop the node ``name`` (SIGSTOP) for STALL s, let it run 0.2 s, again (a machine too busy
    to run it); appends one entry to ``stalls`` per stop."""
    while not done.is_set():
        pids = node_processes(name, domain)
        send(pids, signal.SIGSTOP)
        if pids:
            stalls.append(pids)
        done.wait(STALL if pids else 0.05)
        send(pids, signal.SIGCONT)
        done.wait(0.2 if pids else 0.0)


def test_bringup_cartesian_lockstep_tracks_within_2_mm_beside_a_stalled_target_publisher(tmp_path):
    """A stalled target publisher must not take the lockstep loop off its circle. The target publisher is stopped
    for STALL s of every STALL + 0.2 s from its start to its end; the simulator outruns it by far more than the
    default 1 s lead (with that lead alone, 76 mm off the circle). The tracking must stay within the issue's 2 mm,
    all the way round.

    Why a bound and not bit equality with an unstalled run: the loop itself is deterministic here (lockstep, and
    the whole run's targets are out and acknowledged before it starts: ``whole_run_targets``), but what this test
    can see is bringup's report, a max and RMS over the error samples it received within a window cut by wall time
    (from the loop's start until --duration of sim time has passed, then the nodes are stopped): which samples at
    the window's ends fall in differs from run to run with the machine's load, stalled or not, so two unperturbed
    runs do not give bit-equal reports either. The bound is the issue's tracking bound, which the 76 mm of a
    publisher left behind exceeds by far."""
    domain = domain_id(__name__ + ' stalled')
    report = tmp_path / 'report.json'
    done, stalls = threading.Event(), []
    staller = threading.Thread(target=stall_repeatedly, args=('cartesian_target_publisher', domain, done, stalls))
    staller.start()
    try:
        result = subprocess.run(
            [sys.executable, '-m', 'robot_dynamics_ros.cli', 'bringup', '--urdf', os.path.join(REAL, 'panda.urdf'),
             '--controller', 'cartesian', '--duration', '8', '--sync', 'lockstep', '--isolated', '--report',
             str(report), '--domain-id', str(domain), '--startup-timeout', str(STARTUP)],
            capture_output=True, text=True, timeout=600, cwd=tmp_path)
    finally:
        done.set()
        staller.join()
    assert result.returncode == 0, result.stdout + result.stderr
    summary = json.loads(report.read_text())
    assert len(stalls) >= summary['wall_time'] / (STALL + 0.2) - 1, (stalls, summary['wall_time'])
    assert summary['sim_time'] >= 8.0
    assert_tracked_the_circle(summary)
