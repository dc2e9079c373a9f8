"""The simulator node with a floating root on the ground, as a process over DDS: a 2 kg box (test/urdf/box.urdf) rests
on the ground, and its odometry, IMU and contact force say so; a push on ~/push slides it as far as Coulomb friction
allows; ~/reset puts it back; it exits 0."""
import json
import os

import numpy as np
import pytest
from geometry_msgs.msg import WrenchStamped
from nav_msgs.msg import Odometry
from sensor_msgs.msg import Imu, JointState
from std_srvs.srv import Trigger

from conftest import TEST_DIR, assert_one_line_error, cli
from ros_helpers import domain_id, ros_domain, start  # noqa: F401  (fixtures)

pytest.importorskip('clarabel')
BOX = os.path.join(TEST_DIR, 'urdf', 'box.urdf')
MASS, HALF_HEIGHT, MU, G = 2.0, 0.05, 0.8, 9.81
STARTUP = 60.0


def test_a_box_rests_is_pushed_slides_and_resets(ros_domain, start):
    _, probe = ros_domain
    node = probe.node
    received = {'odom': [], 'imu': [], 'contact': [], 'states': []}
    node.create_subscription(Odometry, '/simulator/odom', received['odom'].append, 100)
    node.create_subscription(Imu, '/simulator/imu', received['imu'].append, 100)
    node.create_subscription(WrenchStamped, '/simulator/contact/box', received['contact'].append, 100)
    node.create_subscription(JointState, '/joint_states', received['states'].append, 100)
    simulator = start('simulator', params=[('urdf_file', BOX), ('root_joint', 'floating'), ('wait_for_command', False),
                                           ('publish_rate', 100.0), ('ground_friction', MU)])
    assert probe.spin_until(lambda: all(len(v) > 10 for v in received.values()), STARTUP), simulator.log()

    odom, imu, contact = received['odom'][-1], received['imu'][-1], received['contact'][-1]
    assert (odom.header.frame_id, odom.child_frame_id, imu.header.frame_id) == ('world', 'box', 'box')
    assert list(received['states'][-1].name) == []                # no actuated joints
    assert odom.pose.pose.position.z == pytest.approx(HALF_HEIGHT, abs=1e-6)      # on the ground, not in it
    assert odom.pose.pose.orientation.w == pytest.approx(1.0, abs=1e-9)
    # At rest an accelerometer measures +g upwards, and the ground carries the weight.
    specific_force = [imu.linear_acceleration.x, imu.linear_acceleration.y, imu.linear_acceleration.z]
    np.testing.assert_allclose(specific_force, [0.0, 0.0, G], atol=1e-6)
    force = contact.wrench.force
    np.testing.assert_allclose([force.x, force.y, force.z], [0.0, 0.0, MASS * G], rtol=1e-6, atol=1e-6)

    push = WrenchStamped()
    push.wrench.force.x = 30.0    # N, at the centre for push_duration 0.1 s: slides, does not tip (see below)
    publisher = node.create_publisher(WrenchStamped, '/simulator/push', 10)
    assert probe.spin_until(lambda: publisher.get_subscription_count() > 0, STARTUP)
    before = len(received['odom'])
    publisher.publish(push)

    def x():
        return received['odom'][-1].pose.pose.position.x

    def at_rest_after_moving():
        latest = received['odom'][-1].twist.twist.linear
        return len(received['odom']) > before + 50 and x() > 0.01 and abs(latest.x) < 1e-9
    assert probe.spin_until(at_rest_after_moving, STARTUP), simulator.log()
    # (F - mu m g) / m for 0.1 s, then mu g deceleration (test_ground_contact derives it): 68.35 mm.
    a = (30.0 - MU * MASS * G) / MASS
    assert x() == pytest.approx(a * 0.1**2 / 2 + (a * 0.1)**2 / (2 * MU * G), rel=0.01)

    reset = node.create_client(Trigger, '/simulator/reset')
    assert probe.call(reset, Trigger.Request(), 10.0).success
    count = len(received['odom'])
    assert probe.spin_until(lambda: len(received['odom']) > count + 5, 10.0)
    assert abs(x()) < 1e-9 and received['odom'][-1].pose.pose.position.z == pytest.approx(HALF_HEIGHT, abs=1e-6)

    # Beyond 10 g on its mass (196 N): rejected. A burst of pushes within static friction (moving nothing): logged
    # once per throttle period (2 s), not once each.
    huge = WrenchStamped()
    huge.wrench.force.x = 1e6
    publisher.publish(huge)
    assert probe.spin_until(lambda: 'rejected push' in simulator.log(), 10.0), simulator.log()
    assert '196.2 N' in simulator.log()
    light = WrenchStamped()
    light.wrench.force.x = 0.01
    pushes = simulator.log().count('pushing')
    for _ in range(20):
        publisher.publish(light)
    count = len(received['odom'])
    assert probe.spin_until(lambda: len(received['odom']) > count + 20, 10.0)
    assert simulator.log().count('pushing') <= pushes + 1, simulator.log()
    assert abs(x()) < 1e-9 and simulator.alive()
    assert simulator.stop() == 0, simulator.log()


def test_bringup_runs_a_box_without_a_controller_and_reports_its_rest(tmp_path):
    """A floating root with no actuated joints through `bringup --controller none`: it rests on its face."""
    report = tmp_path / 'box.json'
    result = cli('bringup', '--urdf', BOX, '--root-joint', 'floating', '--controller', 'none', '--duration', '1',
                 '--isolated', '--domain-id', str(domain_id(__name__ + ' bringup')), '--report', str(report))
    assert result.returncode == 0, result.stdout + result.stderr
    height = json.loads(report.read_text())['base_height']
    assert height['min'] == pytest.approx(HALF_HEIGHT, abs=1e-6) and height['max'] == pytest.approx(HALF_HEIGHT, abs=1e-6)


def test_bringup_ground_options_without_a_floating_root_are_one_line_errors():
    assert_one_line_error(cli('bringup', '--ground-friction', '0.5'), '--root-joint')
    assert_one_line_error(cli('bringup', '--ground-friction', '-1', '--root-joint', 'floating'), '--ground-friction')


def test_base_state_writes_the_topics_someone_reads_with_each_links_summed_force(ros_domain):
    """A topic nobody subscribes to is not written (Go1 has 38 contact links); one read gets, per link, the sum of
    the forces on that link's points; a new model (attach) brings its own links."""
    from robot_dynamics_ros import load_urdf
    from robot_dynamics_ros.model.collision import contact_points_from_urdf
    from robot_dynamics_ros.nodes.base_state import BaseStatePublisher
    from robot_dynamics_ros.resources import bundled_urdf
    from robot_dynamics_ros.simulation.ground_contact import Ground
    from robot_dynamics_ros.simulation.simulator import Simulator

    def standing_simulator(urdf, initial_positions=None):
        sim = Simulator(load_urdf(urdf, root_joint='floating'), 1e-3, ground=Ground(0.0, MU),
                        contact_points=contact_points_from_urdf(urdf), initial_positions=initial_positions)
        sim.initial_positions[2] -= sim.contact.lowest_height(sim.initial_positions)
        sim.reset()
        for _ in range(20):
            sim.step()
        return sim

    _, probe = ros_domain
    quadruped = standing_simulator(bundled_urdf('quadruped.urdf'), np.tile([0.0, 0.8, -1.5], 4))
    base_state = BaseStatePublisher(probe.node, quadruped, None)
    links = sorted(set(quadruped.contact.links))
    assert sorted(base_state.contact_pubs) == links and len(links) > 1
    read = {'odom', links[0]}   # the topics with a subscriber
    written = {}
    for topic, publisher in [('odom', base_state.odom_pub), ('imu', base_state.imu_pub),
                             *base_state.contact_pubs.items()]:
        publisher.get_subscription_count = lambda topic=topic: int(topic in read)
        publisher.publish = lambda msg, topic=topic: written.setdefault(topic, []).append(msg)
    base_state.publish(JointState().header.stamp)
    assert set(written) == read
    force = written[links[0]][0].wrench.force
    mine = np.array(quadruped.contact.links) == links[0]
    np.testing.assert_array_equal([force.x, force.y, force.z], quadruped.contact_forces[mine].sum(axis=0))
    assert force.z > 0.0   # a foot bearing its share of the weight

    box = standing_simulator(BOX)
    base_state.attach(box, None)
    base_state.contact_pubs['box'].get_subscription_count = lambda: 1
    base_state.contact_pubs['box'].publish = lambda msg: written.setdefault('box', []).append(msg)
    base_state.publish(JointState().header.stamp)
    np.testing.assert_allclose(written['box'][0].wrench.force.z, MASS * G, rtol=1e-6)
