"""``trajectory_publisher`` node: publishes a demo trajectory_msgs/JointTrajectory for the controller.

mode 'sinusoid': per-joint sinusoids (`amplitude`, `frequency`, `duration`) that start and end at rest at
`center` (empty: the middle of the limits), scaled into the joint limits. mode 'waypoints': `waypoints`
(flat list, one row of len(joints) positions per entry of `waypoint_times`). All times are shifted by
`start_time`, during which the controller moves from where it holds to the first point. The message is
stamped zero (start on receipt) and published with the default QoS (reliable, volatile, as
joint_trajectory_controller subscribes) on ``computed_torque_controller/joint_trajectory`` (relative:
remappable, and in a namespace it reaches the controller of that namespace). It is published when the
first subscriber appears (again if all leave and one comes back), and with `loop` again when it ends.
"""
import sys

import numpy as np
from rclpy.duration import Duration
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from ..control.references import sinusoid_reference
from .model_source import ModelSource, joint_order
from .node_loop import GuardedNode, STEADY_CLOCK, run
from .node_parameters import as_vector, declare_parameters
from .parameter_schema import ConfigurationError

NEW_SUBSCRIBER_CHECK_PERIOD = 0.1  # s


class TrajectoryPublisherNode(GuardedNode):
    def __init__(self) -> None:
        super().__init__('trajectory_publisher')
        p = declare_parameters(self, 'trajectory_publisher')
        self.mode, self.joints_param, self.loop = p['mode'], p['joints'], p['loop']
        self.amplitude, self.frequency, self.center = p['amplitude'], p['frequency'], p['center']
        self.duration, self.sample_rate = p['duration'], p['sample_rate']
        self.waypoints, self.waypoint_times, self.start_time = p['waypoints'], p['waypoint_times'], p['start_time']
        self.publisher = self.create_publisher(JointTrajectory, 'computed_torque_controller/joint_trajectory', 10)
        self.message = None
        self.subscribers = 0
        self.loop_timer = None
        ModelSource(self, self._start)

    def _start(self, model):
        """Build the trajectory for the model (ConfigurationError if it cannot), then publish it: to each new
        subscriber, and with a later model (a new /robot_description) at once to those there are."""
        names, index = joint_order(model, self.joints_param)
        n = model.nv
        order = np.argsort(index)  # `joints` order -> model order
        if self.mode == 'sinusoid':
            center = as_vector('center', self.center, n, allow_scalar=False)[order] if len(self.center) else None
            try:
                times, q, qd, qdd = sinusoid_reference(
                    model, as_vector('amplitude', self.amplitude, n)[order],
                    as_vector('frequency', self.frequency, n)[order], self.duration, center, self.sample_rate)
            except ValueError as e:
                raise ConfigurationError(str(e)) from None
            q, qd, qdd = q[:, index], qd[:, index], qdd[:, index]   # back to `joints` order
        else:
            times = np.asarray(self.waypoint_times, dtype=float)
            q = as_vector('waypoints', self.waypoints, times.size * n, allow_scalar=False).reshape(-1, n)
            if times.size == 0 or np.any(np.diff(times) <= 0) or times[0] < 0:
                raise ConfigurationError("parameter 'waypoint_times' must be non-empty, non-negative and "
                                         f"strictly increasing, got {times.tolist()}")
            qd = qdd = None
        first = self.message is None
        self.message = trajectory_message(names, times + max(self.start_time, 0.0), q, qd, qdd)
        self.get_logger().info(f"publishing a {self.mode} trajectory: {len(times)} points, {times[-1]:.2f} s, "
                               f"on {self.publisher.topic_name} to each subscriber")
        if first:
            # Wall time: a subscriber can appear while sim time stands still (paused, or before the first step).
            self.create_timer(NEW_SUBSCRIBER_CHECK_PERIOD, self._publish_to_new_subscribers, clock=STEADY_CLOCK)
        elif self.subscribers:
            self.publisher.publish(self.message)
        if self.loop:
            if self.loop_timer is not None:
                self.destroy_timer(self.loop_timer)
            period = max(self.start_time, 0.0) + times[-1]
            self.loop_timer = self.create_timer(max(period, 0.1), lambda: self.publisher.publish(self.message))

    def _publish_to_new_subscribers(self):
        """A volatile topic reaches only the subscribers matched at the time: publish when the first appears."""
        subscribers = self.publisher.get_subscription_count()
        if subscribers and not self.subscribers:
            self.publisher.publish(self.message)
            self.get_logger().info(f"published the trajectory ({subscribers} subscribers)")
        self.subscribers = subscribers


def trajectory_message(names, times, positions, velocities=None, accelerations=None):
    """JointTrajectory stamped zero (start on receipt); rows of the arrays are points."""
    msg = JointTrajectory()
    msg.joint_names = list(names)
    for k, t in enumerate(times):
        point = JointTrajectoryPoint(positions=positions[k].tolist())
        if velocities is not None:
            point.velocities = velocities[k].tolist()
        if accelerations is not None:
            point.accelerations = accelerations[k].tolist()
        point.time_from_start = Duration(nanoseconds=int(round(t * 1e9))).to_msg()
        msg.points.append(point)
    return msg


def main(args: list[str] | None = None) -> int:
    return run(TrajectoryPublisherNode, 'trajectory_publisher', args)


if __name__ == '__main__':
    sys.exit(main())
