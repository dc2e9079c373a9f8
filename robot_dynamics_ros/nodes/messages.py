"""Message helpers the nodes share: latched QoS, stamps, the finite check right before publishing, and the lockstep
label of an effort command (the joint state it answers).
"""
import re
from array import array

from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from std_msgs.msg import Float64MultiArray, MultiArrayDimension, MultiArrayLayout

from ..model.joints import all_finite

# Like robot_state_publisher's /robot_description: the last message reaches late subscribers.
LATCHED_QOS = QoSProfile(history=HistoryPolicy.KEEP_LAST, depth=1, reliability=ReliabilityPolicy.RELIABLE,
                         durability=DurabilityPolicy.TRANSIENT_LOCAL)


def stamp_seconds(stamp) -> float:
    """A builtin_interfaces/Time (or Duration) in seconds."""
    return stamp.sec + 1e-9 * stamp.nanosec


def stamp_nanoseconds(stamp) -> int:
    """A builtin_interfaces/Time in integer nanoseconds (exact, where seconds as a float round)."""
    return stamp.sec * 1_000_000_000 + stamp.nanosec


def publish_finite(publisher, msg, values, throttle) -> bool:
    """Publish ``values`` (a float64 NumPy array) as ``msg.data`` (Float64MultiArray) unless one is not finite: the
    last check before every command, whatever produced it (a throttled warning instead). Returns whether it was
    published."""
    if not all_finite(values):
        throttle.warn('non-finite', f"not publishing a non-finite command {values.tolist()}")
        return False
    msg.data = array('d', values.tobytes())
    publisher.publish(msg)
    return True


STATE_LABEL = 'answers state '   # + '<sec>.<nanosec>': the label of an effort command's layout dimension
# The label's stamp as StateAnswers writes it: builtin_interfaces/Time's sec (uint32: at most 10 digits) and nanosec
# (9 digits), ASCII only (str.isdigit takes '\u00b2', which int() refuses; a 5,000-digit field exceeds int()'s limit).
LABELLED_STAMP = re.compile(r'answers state ([0-9]{1,10})\.([0-9]{9})', re.ASCII)


def answered_state(msg) -> int | None:
    """The stamp (ns) of the joint state an effort command (Float64MultiArray) names as the one it answers
    (StateAnswers), or None when it names none (no label, or one not written as StateAnswers writes it)."""
    dims = msg.layout.dim
    match = LABELLED_STAMP.fullmatch(dims[0].label) if len(dims) == 1 else None
    if match is None:
        return None
    return int(match[1]) * 1_000_000_000 + int(match[2])


class StateAnswers:
    """A controller's effort commands, each naming the joint state it answers.

    Float64MultiArray has no header, so the command's one layout dimension (size = stride = the number of joints,
    as a 1-D array's layout reads) is labelled 'answers state <sec>.<nanosec>' with the state's stamp; consumers
    that do not know the label ignore the layout, as ros2_control's forward command controllers do. A lockstep
    simulator steps only on the answer to the state it published last, so a late answer to an earlier state (one
    republished while the simulator waited for its first command) is not taken for the next state's."""

    def __init__(self, publisher, size, throttle):
        self.publisher, self.throttle = publisher, throttle
        self.dimension = MultiArrayDimension(size=size, stride=size)
        self.msg = Float64MultiArray(layout=MultiArrayLayout(dim=[self.dimension]))

    def publish(self, stamp_ns, values) -> bool:
        """Publish `values` as the answer to the state stamped `stamp_ns` (None: to no state), unless one is not
        finite (publish_finite); whether it was published."""
        self.dimension.label = ('' if stamp_ns is None else
                                f"{STATE_LABEL}{stamp_ns // 1_000_000_000}.{stamp_ns % 1_000_000_000:09d}")
        return publish_finite(self.publisher, self.msg, values, self.throttle)
