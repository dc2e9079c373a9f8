"""``cartesian_target_publisher`` node: the Cartesian demo. A target pose moving on a circle of ``radius`` around the
start pose (the first ``cartesian_controller/current_pose``), in the plane of ``plane``, one turn per ``period``,
orientation held; the radius grows from 0 with a quintic smoothstep over the first ``ramp_time`` seconds, so the
target leaves the start pose at rest. Targets are published on ``cartesian_controller/target_pose`` every
``target_period`` seconds of the current poses' stamps (sim time, without /clock), each the circle's point
``lead_time`` ahead, stamped with that time: the controller interpolates between them.
"""
import sys

import numpy as np
from geometry_msgs.msg import PoseStamped
from rclpy.node import Node

from ..control.cartesian import PLANES, circle_offset
from .common import Param, as_float, choice, declare_parameters, positive, run


PARAMETERS = (
    Param('radius', 0.05, 'm', as_float),
    Param('period', 4.0, 's per turn', positive),
    Param('ramp_time', 1.0, 's over which the radius grows from 0', positive),
    Param('plane', 'xy', f"plane of the circle in the robot base frame: one of {list(PLANES)}", choice(*PLANES)),
    Param('target_period', 0.01, 's of sim time between targets', positive),
    Param('lead_time', 0.25, 's: each target is the point of the circle this far ahead of the current pose, stamped so '
                            '(the controller interpolates; a late message does not leave it without a target)',
          as_float),
)


class CartesianTargetPublisherNode(Node):
    def __init__(self) -> None:
        super().__init__('cartesian_target_publisher')
        self.p = declare_parameters(self, PARAMETERS)
        self.start = None   # (stamp s, PoseStamped) of the first current pose
        self.last = -np.inf
        self.publisher = self.create_publisher(PoseStamped, 'cartesian_controller/target_pose', 10)
        # depth 1: after a stall the newest pose, not a queue of old ones
        self.create_subscription(PoseStamped, 'cartesian_controller/current_pose', self._on_pose, 1)
        self.published = 0

    def _on_pose(self, msg):
        stamp = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
        if self.start is None:
            self.start = (stamp, msg)
            self.get_logger().info(f"circle of radius {self.p['radius']:g} m, {self.p['period']:g} s per turn, in the "
                                   f"{self.p['plane']} plane around the start pose")
        if stamp - self.last < self.p['target_period'] - 1e-9:
            return
        self.last = stamp
        start_stamp, start = self.start
        target = PoseStamped()
        target.header.frame_id = msg.header.frame_id
        when = stamp + self.p['lead_time']
        target.header.stamp.sec = int(when)
        target.header.stamp.nanosec = int(round((when - int(when)) * 1e9)) % 1_000_000_000
        target.pose.orientation = start.pose.orientation
        offset = circle_offset(when - start_stamp, self.p['radius'], self.p['period'], self.p['ramp_time'],
                               self.p['plane'])
        position = start.pose.position
        target.pose.position.x = position.x + offset[0]
        target.pose.position.y = position.y + offset[1]
        target.pose.position.z = position.z + offset[2]
        self.publisher.publish(target)
        self.published += 1

    def summary(self):
        return f"{self.published} targets published"


def main(args: list[str] | None = None) -> int:
    return run(CartesianTargetPublisherNode, 'cartesian_target_publisher', args)


if __name__ == '__main__':
    sys.exit(main())
