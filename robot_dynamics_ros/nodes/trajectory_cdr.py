"""A serialized trajectory_msgs/JointTrajectory (little-endian CDR, as rclpy receives it with raw=True) read
straight into NumPy arrays: a 100k-point trajectory in milliseconds instead of rclpy's seconds of building
Python objects (during which the interpreter lock stalls every other callback).

CDR (XCDR1): after a 4-byte encapsulation header, every primitive is aligned to its size counted from the
end of that header; a sequence is a uint32 count followed by its elements (no padding when it is empty).
Points whose field lengths all repeat share one layout once a point's size is a multiple of 8, so their
numbers are read with strided views. Anything else (big-endian, ragged points) returns None and the caller
falls back to rclpy's deserialization.
"""
import struct

import numpy as np

HEADER = 4          # bytes of encapsulation header
CDR_LE = 1          # its second byte for little-endian CDR
FIELDS = ('positions', 'velocities', 'accelerations', 'effort')


class _Reader:
    def __init__(self, raw):
        self.raw = raw
        self.offset = HEADER

    def align(self, size):
        self.offset += -(self.offset - HEADER) % size

    def uint32(self):
        self.align(4)
        value, = struct.unpack_from('<I', self.raw, self.offset)
        self.offset += 4
        return value

    def string(self):
        length = self.uint32()
        text = bytes(self.raw[self.offset:self.offset + length - 1]).decode()
        self.offset += length
        return text

    def point_layout(self):
        """The point at the current offset, which it skips: (offsets of each field's count, offsets of its
        doubles, the counts, offset of time_from_start, size in bytes)."""
        start, count_offsets, data_offsets, counts = self.offset, [], [], []
        for _ in FIELDS:
            self.align(4)
            count_offsets.append(self.offset)
            count = self.uint32()
            if count:
                self.align(8)
            data_offsets.append(self.offset)
            counts.append(count)
            self.offset += 8 * count
        self.align(4)
        time_offset = self.offset
        self.offset += 8
        return count_offsets, data_offsets, counts, time_offset, self.offset - start


def read_joint_trajectory(raw):
    """(stamp in ns, joint names, times (points,), {field: (points, joints) array, or None when empty}), or None
    where the fast path does not apply (the caller deserializes with rclpy then)."""
    raw = memoryview(raw).cast('B')
    if len(raw) < HEADER or raw[1] != CDR_LE:
        return None
    try:
        reader = _Reader(raw)
        sec, nanosec = struct.unpack_from('<iI', raw, reader.offset)
        reader.offset += 8
        reader.string()                                    # header.frame_id
        names = [reader.string() for _ in range(reader.uint32())]
        count = reader.uint32()
        if count == 0:
            return None
        # Walk single points until one's size keeps the alignment: every later point then has its layout.
        walked = []
        while len(walked) < count:
            walked.append((reader.offset, *reader.point_layout()))
            if walked[-1][-1] % 8 == 0:
                break
        start, count_offsets, data_offsets, counts, time_offset, stride = walked[-1]
        rest = count - len(walked) + 1                     # points laid out like the last walked one
        if start + stride * rest > len(raw) or any(point[3] != counts for point in walked):
            return None
        buffer = np.frombuffer(raw, dtype=np.uint8)

        def column(offset, dtype, width):   # `width` numbers at `offset` of each of the `rest` points
            return np.ndarray((rest, width), dtype=dtype, buffer=buffer, offset=offset,
                              strides=(stride, np.dtype(dtype).itemsize))

        if any(np.any(column(offset, '<u4', 1) != n) for offset, n in zip(count_offsets, counts)):
            return None                                    # ragged points
        arrays = {}
        for k, field in enumerate(FIELDS):
            arrays[field] = None if counts[k] == 0 else np.vstack(
                [np.frombuffer(raw, '<f8', counts[k], point[2][k]) for point in walked[:-1]]
                + [column(data_offsets[k], '<f8', counts[k])])
        seconds = np.concatenate([[struct.unpack_from('<i', raw, point[4])[0] for point in walked[:-1]],
                                  column(time_offset, '<i4', 1)[:, 0]])
        nanoseconds = np.concatenate([[struct.unpack_from('<I', raw, point[4] + 4)[0] for point in walked[:-1]],
                                      column(time_offset + 4, '<u4', 1)[:, 0]])
        return sec * 10**9 + nanosec, names, seconds + 1e-9 * nanoseconds, arrays
    except (struct.error, UnicodeDecodeError, ValueError, TypeError):
        return None
