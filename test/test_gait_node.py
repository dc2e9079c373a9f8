"""The legged controller walks on ``~/cmd_vel`` over DDS: the simulator with the bundled quadruped in lockstep, the
controller with `gait` 'trot', a Twist of 0.3 m/s forward published as teleop does (control/gait.py)."""
import json
import math
import os

import pytest
from geometry_msgs.msg import Twist
from nav_msgs.msg import Odometry

from conftest import ROOT, cli, tilt_degrees
from ros_helpers import domain_id, ros_domain, start  # noqa: F401  (fixtures)

from robot_dynamics_ros.resources import legged_parameter_files

pytest.importorskip('clarabel')
URDF = os.path.join(ROOT, 'urdf', 'quadruped.urdf')
STARTUP = 90.0
SPEED = 0.3        # m/s
SECONDS = 2.0      # s of simulated time walking


def params_args():
    return [arg for file in legged_parameter_files(URDF) for arg in ('--params-file', file)]


def test_the_quadruped_trots_forward_on_cmd_vel(ros_domain, start):  # noqa: F811
    """Standing, it stays put without a command; with cmd_vel at 0.3 m/s for 2 s of simulated time its base moves
    forward by more than half of what the command asks (the velocity limit's ramp costs under 0.25 s of it) and
    less than twice, not sideways, upright; once the commands stop it stands still again. A non-finite command is
    rejected and the node lives on."""
    _, probe = ros_domain
    odom = []
    probe.node.create_subscription(Odometry, '/simulator/odom', odom.append, 100)
    cmd_vel = probe.node.create_publisher(Twist, '/legged_controller/cmd_vel', 10)
    simulator = start('simulator', params=[('urdf_file', URDF), ('sync', 'lockstep')], extra_args=params_args())
    controller = start('legged_controller', params=[('urdf_file', URDF), ('gait', 'trot')],
                       extra_args=params_args() + ['-r', 'odom:=/simulator/odom'])
    assert probe.spin_until(lambda: controller.wait_for_log('standing', 0.0) and len(odom) > 0, STARTUP), \
        simulator.log() + controller.log()

    def stamp(msg):
        return msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec

    def run_for(seconds, command=None):   # sim seconds, publishing the command every 50 ms of wall time
        begin = stamp(odom[-1])

        def done():
            if command is not None:
                cmd_vel.publish(command)
            probe.spin_for(0.05)
            return stamp(odom[-1]) >= begin + seconds
        assert probe.spin_until(done, 40 * seconds + 20), controller.log()

    run_for(0.5)
    standing = odom[-1].pose.pose.position
    run_for(0.5)
    start_pose = odom[-1].pose.pose.position
    assert math.hypot(start_pose.x - standing.x, start_pose.y - standing.y) < 0.01   # no command: it stands
    bad = Twist()
    bad.linear.x = math.nan

    def rejected():   # sent until heard: a first message can go before discovery has matched the publisher
        cmd_vel.publish(bad)
        probe.spin_for(0.05)
        return controller.wait_for_log('rejected cmd_vel', 0.0)
    assert probe.spin_until(rejected, STARTUP), controller.log()
    forward = Twist()
    forward.linear.x = SPEED
    run_for(SECONDS, forward)
    end = odom[-1].pose.pose
    moved = end.position.x - start_pose.x
    print(f"\ntrot over DDS in lockstep: moved {moved:.3f} m forward, {end.position.y - start_pose.y:.3f} m sideways "
          f"in {SECONDS} s at {SPEED} m/s, tilt {tilt_degrees(end.orientation):.1f} deg")
    assert 0.5 * SPEED * SECONDS < moved < 2.0 * SPEED * SECONDS, controller.log()
    assert abs(end.position.y - start_pose.y) < 0.1 * moved
    assert tilt_degrees(end.orientation) < 10.0
    # No more commands: after cmd_vel_timeout (0.5 s of wall time) the command counts as zero and it stops, feet
    # down, within the deceleration (under 0.25 s) and the rest of a period (0.5 s): still in the next 0.5 s.
    run_for(1.5)
    stopped = odom[-1].pose.pose.position
    run_for(0.5)
    final = odom[-1].pose.pose.position
    assert math.hypot(final.x - stopped.x, final.y - stopped.y) < 0.01, controller.log()
    assert controller.alive() and simulator.alive()


def test_bringup_walks_on_cmd_vel_and_plots_the_velocity(tmp_path):
    """robot-dynamics bringup --cmd-vel in lockstep: the report's base_velocity (commanded as given, achieved in the
    second half forward) and the --plot file written (its data: test_gait.py)."""
    report, plot = tmp_path / 'report.json', tmp_path / 'velocity.png'
    result = cli('bringup', '--urdf', URDF, '--root-joint', 'floating', '--cmd-vel', f'{SPEED},0,0', '--duration', '4',
                 '--isolated', '--sync', 'lockstep', '--domain-id', str(domain_id(__name__ + ' bringup')),
                 '--report', str(report), '--plot', str(plot))
    assert result.returncode == 0, result.stdout + result.stderr
    velocity = json.loads(report.read_text())['base_velocity']
    assert velocity['commanded'] == [SPEED, 0.0, 0.0]
    # as above, from half to twice the command: on a loaded machine the base can stop for a moment mid-run (as where
    # the command lapses; bringup's plot shows it)
    assert 0.5 * SPEED < velocity['achieved'][0] < 2.0 * SPEED
    assert 'base velocity plot written to' in result.stdout
    assert plot.read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'
