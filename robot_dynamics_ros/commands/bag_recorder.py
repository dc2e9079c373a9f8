"""The in-process recorder of ``robot-dynamics record``: joint states as received, into a rosbag2 file."""
import time

import numpy as np
from rclpy.qos import QoSProfile, ReliabilityPolicy
from rclpy.serialization import serialize_message
from sensor_msgs.msg import JointState

from .monitor import InProcessNode


class JointStateBagRecorder(InProcessNode):
    """Subscribes ``joint_states`` and writes each message's CDR bytes to a rosbags Writer connection, stamped
    with the receive time as ``ros2 bag record`` does; keeps the first and last header stamps (sim time).
    States stamped zero, or like the state before (sent again), are not written."""

    def __init__(self, writer, connection, depth=1000):
        super().__init__('joint_state_recorder')
        self.writer, self.connection = writer, connection
        self.count = 0
        self.first_stamp = self.last_stamp = None
        self.intervals = []   # s between consecutive stamps
        self.heard = False    # whether any joint state has arrived (stamped zero too)
        qos = QoSProfile(depth=depth, reliability=ReliabilityPolicy.RELIABLE)
        self.node.create_subscription(JointState, 'joint_states', self._on_state, qos)

    def _on_state(self, msg):
        self.heard = True
        stamp = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
        if stamp == 0.0:
            return  # the simulator holding before its clock starts; a reader would take the receive time
        if stamp == self.last_stamp:
            return  # the same state sent again (a lockstep simulator waiting for its command)
        self.writer.write(self.connection, time.time_ns(), serialize_message(msg))
        if self.last_stamp is not None:
            self.intervals.append(stamp - self.last_stamp)
        self.first_stamp = stamp if self.first_stamp is None else self.first_stamp
        self.last_stamp = stamp
        self.count += 1

    def lost(self):
        """Joint states missing between the recorded ones, taking the shortest interval as the period."""
        intervals = np.array(self.intervals)
        positive = intervals[intervals > 0]
        return int(np.sum(np.round(positive / positive.min()) - 1)) if positive.size else 0

    def recorded_seconds(self):
        """Sim time between the first and the last recorded joint state."""
        return 0.0 if self.first_stamp is None else self.last_stamp - self.first_stamp
