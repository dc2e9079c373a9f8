"""The simulator's /tf and /tf_static, as RViz, MoveIt and Nav2 read them, against the forward kinematics at the
joint states of the same stamp: ours (frame_placements) and Pinocchio's. The bundled arm (two fixed joints: on
/tf_static, to a subscriber that joins late) and the quadruped on a floating root (odom -> trunk: the base pose of
~/odom). Without tf2_msgs the simulator says so once and runs."""
import os
import xml.etree.ElementTree as ET

import numpy as np
import pytest
from nav_msgs.msg import Odometry
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
from sensor_msgs.msg import JointState

from conftest import ROOT
from oracle import BlockOracle, pin
from robot_dynamics_ros import frame_placements, load_urdf
from robot_dynamics_ros.spatial import quaternion_to_matrix
from ros_helpers import (REQUIRE_INTERFACES, NodeProcess, domain_id, import_interfaces, ros_domain,  # noqa: F401
                         shadowing, start)

TFMessage = import_interfaces('tf2_msgs.msg').TFMessage
ARM = os.path.join(ROOT, 'urdf', 'arm7.urdf')
QUADRUPED = os.path.join(ROOT, 'urdf', 'quadruped.urdf')
STARTUP = 180.0      # s: the first start of a robot on the ground compiles the contact kernels (once per source)
SAMPLES = 20          # stamps at which /tf is compared
TOLERANCE = 1e-9      # m, rad: the same numbers through float64 messages and quaternions, far below any wrong frame
STATIC_QOS = QoSProfile(depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL)
# The type hash real ROS (Jazzy, Kilted) gives tf2_msgs/msg/TFMessage, as `ros2 topic info -v /tf` shows it there.
TFMESSAGE_HASH = 'RIHS01_e369d0f05a23ae52508854b66f6aa0437f3449d652e8cbf22d5abe85d020f087'


def urdf_joint_links(path, fixed):
    """{(parent link, child link)} of the URDF's fixed joints (fixed=True) or of its others."""
    return {(j.find('parent').get('link'), j.find('child').get('link'))
            for j in ET.parse(path).getroot().findall('joint') if (j.get('type') == 'fixed') == fixed}


def pose(transform):
    t, r = transform.translation, transform.rotation
    return quaternion_to_matrix([r.x, r.y, r.z, r.w]), np.array([t.x, t.y, t.z])


def stamp_ns(header):
    return header.stamp.sec * 1_000_000_000 + header.stamp.nanosec


def disagreement(measured, parent, child):
    """(translation error m, rotation error rad) of a measured (R, p) of child in parent, given both frames'
    (R, p) in one frame."""
    R = parent[0].T @ child[0]
    p = parent[0].T @ (child[1] - parent[1])
    # The angle between the rotations: |R1 - R2|_F = 2 sqrt(2) sin(angle / 2) (accurate near zero, as arccos is not).
    angle = 2.0 * np.arcsin(min(1.0, np.linalg.norm(measured[0] - R) / (2.0 * np.sqrt(2.0))))
    return np.linalg.norm(measured[1] - p), float(angle)


def receive(probe, start, urdf, params, floating):
    """Start the simulator; ({stamp: TFMessage}, {stamp: q in model order}, the publishers' type hash) once SAMPLES
    stamps have /tf and the joint state (and ~/odom) of that stamp."""
    node = probe.node
    tf, states, odom = {}, {}, {}
    node.create_subscription(TFMessage, '/tf', lambda m: tf.setdefault(stamp_ns(m.transforms[0].header), m), 1000)
    node.create_subscription(JointState, '/joint_states', lambda m: states.setdefault(stamp_ns(m.header), m), 1000)
    node.create_subscription(Odometry, '/simulator/odom', lambda m: odom.setdefault(stamp_ns(m.header), m), 1000)
    simulator = start('simulator', params=[('urdf_file', urdf), ('wait_for_command', False),
                                           ('publish_rate', 100.0)] + params)

    def matched():
        return [s for s in tf if s in states and (s in odom or not floating)]
    assert probe.spin_until(lambda: len(matched()) >= SAMPLES, STARTUP), simulator.log()
    configurations = {}
    for stamp in matched():
        q = np.array(states[stamp].position)
        if floating:
            p, r = odom[stamp].pose.pose.position, odom[stamp].pose.pose.orientation
            q = np.concatenate([[p.x, p.y, p.z, r.x, r.y, r.z, r.w], q])
        configurations[stamp] = q
    hashes = {str(info.topic_type_hash) for info in node.get_publishers_info_by_topic('/tf')}
    return {s: tf[s] for s in configurations}, configurations, simulator, hashes


def check_agreement(model, urdf_xml, tf, configurations, root_joint):
    """The largest disagreement of /tf with our kinematics and with Pinocchio's, over every transform of every stamp:
    (ours, Pinocchio's), each (m, rad)."""
    oracle = BlockOracle(urdf_xml, model, root_joint)
    pm, data = oracle.pin_model, oracle.data
    worst = np.zeros((2, 2))
    for stamp, message in tf.items():
        q = configurations[stamp]
        ours = frame_placements(model, q)
        pin.framesForwardKinematics(pm, data, oracle.q(q))
        theirs = {name: (data.oMf[pm.getFrameId(name, pin.BODY)].rotation, data.oMf[pm.getFrameId(name, pin.BODY)]
                         .translation) for name in model.frames}
        world = (np.eye(3), np.zeros(3))
        for transform in message.transforms:
            parent, child = transform.header.frame_id, transform.child_frame_id
            measured = pose(transform.transform)
            for row, placements in enumerate((ours, theirs)):
                reference = world if parent == 'odom' else placements[parent]
                worst[row] = np.maximum(worst[row], disagreement(measured, reference, placements[child]))
    return worst


def test_arm_tf_matches_our_kinematics_and_pinocchio_and_tf_static_has_the_fixed_joints(ros_domain, start):
    _, probe = ros_domain
    model = load_urdf(ARM)
    tf, configurations, simulator, hashes = receive(probe, start, ARM, [], floating=False)
    assert hashes == {TFMESSAGE_HASH}   # our build of tf2_msgs is the type real ROS has
    moving = urdf_joint_links(ARM, fixed=False)
    for message in tf.values():
        assert {(t.header.frame_id, t.child_frame_id) for t in message.transforms} == moving
    with open(ARM) as f:
        worst = check_agreement(model, f.read(), tf, configurations, None)
    print(f"arm7 /tf over {len(tf)} stamps: largest disagreement with our kinematics {worst[0, 0]:.2e} m, "
          f"{worst[0, 1]:.2e} rad; with Pinocchio's {worst[1, 0]:.2e} m, {worst[1, 1]:.2e} rad")
    assert worst.max() < TOLERANCE
    # The arm moves (it falls under gravity, no command): the stamps compared are not all one configuration.
    spread = np.ptp(np.array(list(configurations.values())), axis=0)
    assert spread.max() > 1e-3

    static = []   # a subscriber that joins after the simulator published: transient local delivers to it
    probe.node.create_subscription(TFMessage, '/tf_static', static.append, STATIC_QOS)
    assert probe.spin_until(lambda: static, 10.0), simulator.log()
    transforms = static[-1].transforms
    assert {(t.header.frame_id, t.child_frame_id) for t in transforms} == urdf_joint_links(ARM, fixed=True)
    with open(ARM) as f:
        oracle = BlockOracle(f.read(), model)
    pm, data = oracle.pin_model, oracle.data
    pin.framesForwardKinematics(pm, data, oracle.q(model.neutral()))

    def placement(name):
        frame = data.oMf[pm.getFrameId(name, pin.BODY)]
        return frame.rotation, frame.translation
    for t in transforms:
        error = disagreement(pose(t.transform), placement(t.header.frame_id), placement(t.child_frame_id))
        assert max(error) < TOLERANCE, (t.header.frame_id, t.child_frame_id, error)


def test_quadruped_tf_has_odom_to_base_and_every_link(ros_domain, start):
    pytest.importorskip('clarabel')   # the ground
    _, probe = ros_domain
    model = load_urdf(QUADRUPED, root_joint='floating')
    tf, configurations, simulator, _ = receive(probe, start, QUADRUPED, [('root_joint', 'floating')], floating=True)
    expected = urdf_joint_links(QUADRUPED, fixed=False) | {('odom', model.root_link)}
    for message in tf.values():
        assert {(t.header.frame_id, t.child_frame_id) for t in message.transforms} == expected
    with open(QUADRUPED) as f:
        worst = check_agreement(model, f.read(), tf, configurations, 'floating')
    print(f"quadruped /tf over {len(tf)} stamps: largest disagreement with our kinematics {worst[0, 0]:.2e} m, "
          f"{worst[0, 1]:.2e} rad; with Pinocchio's {worst[1, 0]:.2e} m, {worst[1, 1]:.2e} rad")
    assert worst.max() < TOLERANCE   # (at rest or settling: where the samples fall in its start-up varies)


def test_frame_parameters_and_a_simulator_without_tf2_msgs(ros_domain, start, tmp_path):
    env, probe = ros_domain
    pytest.importorskip('clarabel')
    tf = []
    probe.node.create_subscription(TFMessage, '/tf', tf.append, 100)
    renamed = start('simulator', params=[('urdf_file', QUADRUPED), ('root_joint', 'floating'),
                                         ('odom_frame', 'map'), ('base_frame', 'base_link')])
    static = []
    probe.node.create_subscription(TFMessage, '/tf_static', static.append, STATIC_QOS)
    assert probe.spin_until(lambda: tf and static, STARTUP), renamed.log()
    assert ('map', 'base_link') in {(t.header.frame_id, t.child_frame_id) for t in tf[-1].transforms}
    assert [(t.header.frame_id, t.child_frame_id) for t in static[-1].transforms] == [('base_link', 'trunk')]
    renamed.stop()

    environment = dict(env, PYTHONPATH=os.pathsep.join([shadowing(tmp_path, 'tf2_msgs'), env.get('PYTHONPATH', '')]))
    without = NodeProcess('simulator', environment, str(tmp_path), [('urdf_file', ARM), ('wait_for_command', False)],
                          extra_args=['-r', '__node:=without_tf'])
    try:
        states = []
        probe.node.create_subscription(JointState, '/joint_states', states.append, 10)
        assert probe.spin_until(lambda: len(states) > 50, STARTUP), without.log()
        assert without.wait_for_log('no /tf or /tf_static', STARTUP), without.log()
        assert without.log().count('no /tf or /tf_static') == 1, without.log()

        def published():
            if ('without_tf', '/') not in probe.node.get_node_names_and_namespaces():
                return set()   # not discovered yet
            return {name for name, _ in probe.node.get_publisher_names_and_types_by_node('without_tf', '/')}
        assert probe.spin_until(lambda: '/joint_states' in published(), STARTUP)
        assert '/tf' not in published() and '/tf_static' not in published()
    finally:
        without.kill()


def test_a_missing_interface_is_skipped_or_where_required_fails(monkeypatch):
    monkeypatch.delenv(REQUIRE_INTERFACES, raising=False)
    with pytest.raises(pytest.skip.Exception):
        import_interfaces('no_such_interfaces.msg')
    monkeypatch.setenv(REQUIRE_INTERFACES, '1')
    with pytest.raises(ImportError, match='no_such_interfaces'):
        import_interfaces('no_such_interfaces.msg')
