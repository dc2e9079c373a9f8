"""A node's health on ``/diagnostics`` (``diagnostic_msgs/DiagnosticArray``, once a second), as ROS drivers publish it
through diagnostic_updater and rqt_robot_monitor and the aggregator read it: one status per node, named
'<node>: <task>', with the model's name as hardware_id, a level (OK, WARN, ERROR), a one-line message and the
figures behind it as key/value pairs (rates over the last period, counts since the start, warnings by kind)."""
import time

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue

from .node_loop import STEADY_CLOCK

PERIOD = 1.0   # s wall between two DiagnosticArray messages (diagnostic_updater's default rate)
OK, WARN, ERROR = 0, 1, 2   # diagnostic_msgs/DiagnosticStatus levels (bytes in the message)


class Diagnostics:
    """Publishes ``status()`` -> (level, message, {key: value}) every PERIOD s as the status '<node>: <task>' of the
    hardware ``hardware_id()`` (the robot's name). ``rate(name, count)`` turns a running count into its rate over
    the last period (per wall second)."""

    def __init__(self, node, task, status, hardware_id):
        self.node, self.status, self.hardware_id = node, status, hardware_id
        self._last = {}   # name -> (wall time, count) at the last rate
        self.name = f"{node.get_name()}: {task}"
        self.publisher = node.create_publisher(DiagnosticArray, '/diagnostics', 10)
        node.create_timer(PERIOD, self.publish, clock=STEADY_CLOCK)

    def rate(self, name, count):
        """Per wall second since the last call for ``name`` (0 on the first)."""
        now = time.monotonic()
        wall, before = self._last.get(name, (now, count))
        self._last[name] = (now, count)
        return (count - before) / (now - wall) if now > wall else 0.0

    def publish(self):
        level, message, values = self.status()
        status = DiagnosticStatus(level=bytes([level]), name=self.name, message=message,
                                  hardware_id=self.hardware_id(),
                                  values=[KeyValue(key=key, value=as_text(value)) for key, value in values.items()])
        array = DiagnosticArray(status=[status])
        array.header.stamp = self.node.get_clock().now().to_msg()
        self.publisher.publish(array)


def as_text(value):
    """A figure as diagnostic_msgs/KeyValue carries it: floats to 4 significant digits, the rest as str."""
    return f"{value:.4g}" if isinstance(value, float) else str(value)


def warnings_by_kind(throttle):
    """{'warnings <kind>': count} of a Throttle, each kind's count since the start."""
    return {f"warnings {kind[:60]}": count for kind, count in sorted(throttle.counts.items())}
