"""The NumPy reader of serialized JointTrajectory messages against rclpy's own serialization."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

rclpy = pytest.importorskip('rclpy')
from rclpy.serialization import serialize_message  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

from robot_dynamics_ros.nodes.trajectory_cdr import FIELDS, read_joint_trajectory  # noqa: E402


def message(names, frame_id, stamp, times, data):
    msg = JointTrajectory(joint_names=names)
    msg.header.frame_id = frame_id
    msg.header.stamp.sec, msg.header.stamp.nanosec = stamp
    for k, (sec, nanosec) in enumerate(times):
        point = JointTrajectoryPoint(**{field: rows[k] for field, rows in data.items()})
        point.time_from_start.sec, point.time_from_start.nanosec = sec, nanosec
        msg.points.append(point)
    return msg


@st.composite
def trajectories(draw):
    """Messages whose points are alike: any joint count, names and frame id of any length (they shift the
    alignment of everything after them), any subset of the four fields."""
    n = draw(st.integers(1, 9))
    count = draw(st.integers(1, 12))
    names = [draw(st.text('abcdefgh_', min_size=1, max_size=7)) + str(i) for i in range(n)]
    fields = draw(st.sets(st.sampled_from(FIELDS), min_size=1))
    number = st.floats(-1e6, 1e6, allow_nan=False)
    data = {field: [draw(st.lists(number, min_size=n, max_size=n)) for _ in range(count)] for field in fields}
    times = [(draw(st.integers(0, 2**31 - 1)), draw(st.integers(0, 10**9 - 1))) for _ in range(count)]
    stamp = (draw(st.integers(0, 2**31 - 1)), draw(st.integers(0, 10**9 - 1)))
    return message(names, draw(st.text('xyz/', max_size=9)), stamp, times, data), data, times, stamp


@settings(max_examples=200, deadline=None, derandomize=True)
@given(trajectories())
def test_reads_what_rclpy_serializes(case):
    msg, data, times, stamp = case
    result = read_joint_trajectory(serialize_message(msg))
    assert result is not None
    read_stamp, names, read_times, arrays = result
    assert read_stamp == stamp[0] * 10**9 + stamp[1]
    assert names == list(msg.joint_names)
    np.testing.assert_array_equal(read_times, [sec + 1e-9 * nanosec for sec, nanosec in times])
    for field in FIELDS:
        if field in data:
            np.testing.assert_array_equal(arrays[field], data[field])
        else:
            assert arrays[field] is None


def test_ragged_empty_truncated_or_big_endian_is_left_to_rclpy():
    ragged = message(['a', 'b'], '', (0, 0), [(0, 0)] * 3, {'positions': [[1.0, 2.0], [3.0, 4.0], [5.0]]})
    assert read_joint_trajectory(serialize_message(ragged)) is None
    assert read_joint_trajectory(serialize_message(message(['a'], '', (0, 0), [], {}))) is None
    whole = serialize_message(message(['a', 'b'], 'f', (1, 2), [(0, 0)] * 50,
                                      {'positions': [[1.0, 2.0]] * 50, 'velocities': [[0.0, 0.0]] * 50}))
    assert read_joint_trajectory(whole) is not None
    assert read_joint_trajectory(whole[:len(whole) // 2]) is None
    assert read_joint_trajectory(whole[:1] + b'\x00' + whole[2:]) is None   # big-endian CDR
