"""The robot's transforms for RViz, MoveIt and Nav2, as robot_state_publisher publishes them (the simulator does
this itself: run no robot_state_publisher beside it): every URDF joint's transform parent link -> child link from our
forward kinematics (``frame_placements``), the moving joints' on ``/tf`` and the fixed joints' once on ``/tf_static``
(transient local, as tf2's static broadcaster). A robot with a floating or planar root also gets
`odom_frame` -> `base_frame` on ``/tf``, the base's pose in the world; a `base_frame` other than the root link is
joined to it by an identity on ``/tf_static``."""
import time
import xml.etree.ElementTree as ET

import numpy as np
from geometry_msgs.msg import TransformStamped
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from tf2_msgs.msg import TFMessage

from ..algorithms.kinematics import frame_placements
from ..model.urdf import read_xml
from ..spatial import matrix_to_quaternion
from .messages import stamp_nanoseconds
from .parameter_schema import ConfigurationError

# tf2_ros's TransformBroadcaster and StaticTransformBroadcaster QoS.
DYNAMIC_QOS = QoSProfile(depth=100, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.VOLATILE)
STATIC_QOS = QoSProfile(depth=1, history=HistoryPolicy.KEEP_LAST, reliability=ReliabilityPolicy.RELIABLE,
                        durability=DurabilityPolicy.TRANSIENT_LOCAL)


def urdf_joints(urdf):
    """[(joint name, type, parent link, child link)] of a URDF (XML, a file or a xacro file), in document order."""
    robot = ET.fromstring(read_xml(urdf))
    return [(joint.get('name'), joint.get('type'), joint.find('parent').get('link'), joint.find('child').get('link'))
            for joint in robot.findall('joint')]


def relative_pose(parent, child):
    """(rotation, translation) of the child frame in the parent frame, from their Placements in one frame."""
    return parent.R.T @ child.R, parent.R.T @ (child.p - parent.p)


def transform_message(parent, child, rotation, translation, stamp):
    msg = TransformStamped()
    msg.header.frame_id, msg.child_frame_id, msg.header.stamp = parent, child, stamp
    t, r = msg.transform.translation, msg.transform.rotation
    t.x, t.y, t.z = (float(value) for value in translation)
    r.x, r.y, r.z, r.w = (float(value) for value in matrix_to_quaternion(rotation))
    return msg


class TransformPublisher:
    """Publishes the transforms of a model at configuration q on ``node``'s /tf and /tf_static; /tf ``rate`` times
    per second of the stamps, or of the wall clock while the stamps stand still (sim time paused or waiting)."""

    def __init__(self, node, odom_frame, base_frame, rate):
        self.node, self.odom_frame, self.base_frame_param = node, odom_frame, base_frame
        self.period_ns = int(1e9 / rate)
        self.published = (None, -float('inf'))   # (stamp in ns, wall time) of the last /tf message
        self.dynamic_pub = node.create_publisher(TFMessage, '/tf', DYNAMIC_QOS)
        self.static_pub = node.create_publisher(TFMessage, '/tf_static', STATIC_QOS)

    def attach(self, model, urdf, stamp):
        """Publish ``model``'s transforms from now on (a new model): its fixed joints on /tf_static, now."""
        base = self.base_frame_param or model.root_link
        if base != model.root_link and base in model.frames:
            raise ConfigurationError(f"base_frame {base!r} is a link of the model other than its root link "
                                     f"{model.root_link!r}: it would have two parents in /tf")
        joints = urdf_joints(urdf)
        self.model, self.base = model, base
        self.moving = [(parent, child) for _, kind, parent, child in joints if kind != 'fixed']
        self.floating = not model.fixed_base
        static = [(parent, child) for _, kind, parent, child in joints if kind == 'fixed']
        placements = frame_placements(model, model.neutral())
        transforms = [transform_message(parent, child, *relative_pose(placements[parent], placements[child]), stamp)
                      for parent, child in static]
        if self.floating and base != model.root_link:
            transforms.append(transform_message(base, model.root_link, np.eye(3), np.zeros(3), stamp))
        self.static_pub.publish(TFMessage(transforms=transforms))

    def publish(self, q, stamp):
        """The moving joints' transforms (and odom -> base) at configuration q (model order), stamped ``stamp``, when
        a period has passed since the last."""
        ns, now = stamp_nanoseconds(stamp), time.monotonic()
        last_ns, last_wall = self.published
        if last_ns is not None and abs(ns - last_ns) < self.period_ns and now - last_wall < self.period_ns * 1e-9:
            return
        self.published = (ns, now)
        placements = frame_placements(self.model, q)
        transforms = [transform_message(parent, child, *relative_pose(placements[parent], placements[child]), stamp)
                      for parent, child in self.moving]
        if self.floating:
            root = placements[self.model.root_link]
            transforms.append(transform_message(self.odom_frame, self.base, root.R, root.p, stamp))
        self.dynamic_pub.publish(TFMessage(transforms=transforms))
