"""``cartesian_target_publisher`` node: the Cartesian demo. A target pose moving on a circle of ``radius`` around the
start pose (the first ``cartesian_controller/current_pose``), in the plane of ``plane``, one turn per ``period``,
orientation held; the radius grows from 0 with a quintic smoothstep over the first ``ramp_time`` seconds, so the
target leaves the start pose at rest. The targets are a function of sim time alone: the circle's points at the
stamps start + k ``target_period`` (k = 1, 2, ...), each published on ``cartesian_controller/target_pose`` stamped
with its time, ``lead_time`` ahead of the current poses' stamps (every grid point up to stamp + lead_time that is not
out yet, so a pose this node did not see leaves no gap). The controller interpolates between them; which points it
gets does not depend on when this node runs, so in lockstep the run is the same under any machine load as long as
this node is less than ``lead_time`` of sim time behind.

Nothing is published before the controller's subscription is matched (volatile targets published earlier are lost),
and the first burst is waited on until the controller has acknowledged it (up to ACK_TIMEOUT): a burst larger than
a transport's queue (Fast DDS's shared memory port holds 512 messages) loses samples that only this node can send
again, which it cannot while a busy machine stalls it; lockstep bringup starts the loop after the log line that says
the burst is out.
"""
import math
import sys

from geometry_msgs.msg import PoseStamped
from rclpy.duration import Duration

from ..control.cartesian import circle_offset
from .messages import stamp_seconds
from .node_loop import GuardedNode, run
from .node_parameters import declare_parameters


BURST = 10   # history depth beyond the targets of one lead_time (published at once at the start)
ACK_TIMEOUT = 30.0   # s of wall time the first burst is waited on (a loaded machine's controller may take seconds)


class CartesianTargetPublisherNode(GuardedNode):
    def __init__(self) -> None:
        super().__init__('cartesian_target_publisher')
        self.p = declare_parameters(self, 'cartesian_target_publisher')
        self.start = None   # (stamp s, PoseStamped) of the first current pose
        self.next = 1       # index k of the next target on the grid start + k target_period
        depth = int(math.ceil(self.p['lead_time'] / self.p['target_period'])) + BURST
        self.publisher = self.create_publisher(PoseStamped, 'cartesian_controller/target_pose', depth)
        # depth 1: after a stall the newest pose, not a queue of old ones
        self.create_subscription(PoseStamped, 'cartesian_controller/current_pose', self._on_pose, 1)
        self.published = 0

    def _on_pose(self, msg):
        stamp = stamp_seconds(msg.header.stamp)
        if self.start is None:
            self.start = (stamp, msg)
        if self.publisher.get_subscription_count() == 0:
            return   # the controller's subscription is not matched yet: the next pose tries again
        first = self.published == 0
        start_stamp, start = self.start
        period = self.p['target_period']
        while self.next * period <= stamp - start_stamp + self.p['lead_time'] + 1e-9:
            self.publisher.publish(self.target(start_stamp, start, self.next * period, msg.header.frame_id))
            self.next += 1
            self.published += 1
        if first:
            if not self.publisher.wait_for_all_acked(Duration(seconds=ACK_TIMEOUT)):
                self.get_logger().warning(f"the first targets were not all acknowledged within {ACK_TIMEOUT:g} s")
            self.get_logger().info(f"circle of radius {self.p['radius']:g} m, {self.p['period']:g} s per turn, in the "
                                   f"{self.p['plane']} plane around the start pose: {self.published} targets "
                                   f"published, {self.p['lead_time']:g} s ahead")

    def target(self, start_stamp, start, elapsed, frame_id):
        """The circle's point ``elapsed`` s after the start, stamped start + elapsed."""
        target = PoseStamped()
        target.header.frame_id = frame_id
        target.header.stamp.sec, target.header.stamp.nanosec = divmod(round((start_stamp + elapsed) * 1e9), 10**9)
        target.pose.orientation = start.pose.orientation
        offset = circle_offset(elapsed, self.p['radius'], self.p['period'], self.p['ramp_time'], self.p['plane'])
        position = start.pose.position
        target.pose.position.x = position.x + offset[0]
        target.pose.position.y = position.y + offset[1]
        target.pose.position.z = position.z + offset[2]
        return target

    def summary(self):
        return f"{self.published} targets published"


def main(args: list[str] | None = None) -> int:
    return run(CartesianTargetPublisherNode, 'cartesian_target_publisher', args)


if __name__ == '__main__':
    sys.exit(main())
