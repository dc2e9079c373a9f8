"""Joint trajectories for the controllers, as joint_trajectory_controller takes them on ``~/joint_trajectory``: read
from their serialized form (``trajectory_fields``), checked against the model (``checked_columns``) and built into a
``TrajectoryReference`` on a worker thread of their own (``TrajectoryWorker``), so that the executor's callbacks never
wait behind a big one."""
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from operator import attrgetter

import numpy as np
from rclpy.serialization import deserialize_message
from trajectory_msgs.msg import JointTrajectory

from ..control.joint_states import MAX_MAGNITUDE
from ..control.references import TrajectoryReference
from .messages import stamp_nanoseconds, stamp_seconds
from .node_loop import Throttle
from .trajectory_cdr import FIELDS, read_joint_trajectory

# While the worker builds a reference, the executor thread gets the interpreter lock back within this many
# seconds (Python's default, 5 ms, per lock hand-over, stalls the rclpy callbacks that hand it over often).
WORKER_SWITCH_INTERVAL = 1e-4


def trajectory_fields(raw):
    """(stamp in ns, joint names, times, {field: (points, joints) array or None}) of a serialized JointTrajectory:
    read with NumPy (trajectory_cdr) where the points are alike, else deserialized by rclpy, where a field
    whose points do not all have one value per joint is None."""
    fast = read_joint_trajectory(raw)
    if fast is not None:
        return fast
    msg = deserialize_message(raw, JointTrajectory)
    points, n = msg.points, len(msg.joint_names)

    def column(field):
        rows = list(map(attrgetter(field), points))
        if not rows or set(map(len, rows)) != {n}:
            return None
        return np.frombuffer(b''.join(rows), dtype=float).reshape(len(rows), n)   # rows are array('d')

    times = np.array([stamp_seconds(point.time_from_start) for point in points])
    stamp = stamp_nanoseconds(msg.header.stamp)
    return stamp, list(msg.joint_names), times, {field: column(field) for field in FIELDS}


class TrajectoryWorker:
    """Serialized JointTrajectory messages read and turned into a reference on a thread of their own, so that the
    executor's callbacks never wait behind a big one. ``build(names, times, fields)`` runs there and returns the
    reference, or raises ValueError (warned about: rejected). The newest is handed over as ``incoming``,
    (reference, stamp ns), under ``handover``, with ``incoming_number``, the count of ``received`` it was submitted at; ``submit`` supersedes the trajectories queued, ``drop`` (a model
    switch) also the one being built."""

    def __init__(self, node, throttle, build):
        self._node, self._throttle, self._build = node, throttle, build
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix='trajectory')
        self.handover = threading.Lock()
        self.received = 0
        self.incoming = None
        self.incoming_number = 0

    def submit(self, raw):
        self.received += 1
        self._executor.submit(self._run, raw, self.received)

    def drop(self):
        with self.handover:
            self.received += 1
            self.incoming = None

    def shutdown(self):
        self._executor.shutdown()

    def _run(self, raw, number):
        if number != self.received:
            return   # a newer trajectory or model has arrived
        switch_interval = sys.getswitchinterval()
        sys.setswitchinterval(WORKER_SWITCH_INTERVAL)
        try:
            stamp, names, times, fields = trajectory_fields(raw)
            reference = self._build(names, times, fields)
        except Exception as e:   # noqa: BLE001  (a worker must not die silently)
            if number != self.received:
                pass   # the model changed under it: dropped
            elif isinstance(e, ValueError):
                self._throttle.warn(Throttle.reason(e), f"rejected joint trajectory: {e}")
            else:
                self._node.get_logger().error(f"rejected joint trajectory: {type(e).__name__}: {e}")
            return
        finally:
            sys.setswitchinterval(switch_interval)
        with self.handover:
            current = number == self.received
            if current:
                self.incoming, self.incoming_number = (reference, stamp), number
        if current:
            self._node.get_logger().info(f"following a trajectory of {len(times)} points, {reference.duration:.2f} s "
                                         "(from the next update)")


def checked_columns(names, times, fields, joint_names, bounds, max_points, mimic=None):
    """model_columns (``mimic``: as there), checked: ValueError for more than max_points points, positions beyond
    the bounds (lower, upper, speed: plausibility_bounds, the joint limits and a margin), velocities beyond the
    speeds, accelerations beyond MAX_MAGNITUDE."""
    if len(times) > max_points:
        raise ValueError(f"{len(times)} points, more than max_trajectory_points {max_points}")
    positions, velocities, accelerations = model_columns(names, fields, joint_names, mimic)
    lower, upper, speed = bounds
    if np.any(positions < lower) or np.any(positions > upper):
        raise ValueError("positions beyond the joint limits by more than the margin: lowest "
                         f"{positions.min(axis=0).tolist()}, highest {positions.max(axis=0).tolist()}")
    if velocities is not None and np.any(np.abs(velocities) > speed):
        raise ValueError(f"velocities beyond {speed.tolist()}")
    if accelerations is not None and np.any(np.abs(accelerations) > MAX_MAGNITUDE):
        raise ValueError(f"accelerations beyond {MAX_MAGNITUDE:g}")
    return positions, velocities, accelerations


def model_columns(names, fields, joint_names, mimic=None):
    """(positions, velocities or None, accelerations or None) with columns in `joint_names` order; ValueError
    for unknown, missing or duplicate joints, joints of ``mimic`` ({coupled mimic joint: master}), no points or
    positions missing. Accelerations count only with velocities."""
    followers = sorted(name for name in names if name in (mimic or {}))
    if followers:
        raise ValueError(f"joints {followers} are mimic joints, which follow their masters "
                         f"{sorted({mimic[name] for name in followers})}: a trajectory names the independent joints "
                         f"{list(joint_names)}")
    unknown = [name for name in names if name not in joint_names]
    missing = [name for name in joint_names if name not in names]
    if unknown or missing or len(set(names)) != len(names):
        raise ValueError(f"joint_names {names} must list each of {list(joint_names)} once "
                         f"(unknown: {unknown}, missing: {missing})")
    if fields['positions'] is None:
        raise ValueError(f"no points, or not every point has {len(names)} positions")
    source = [names.index(name) for name in joint_names]
    positions = fields['positions'][:, source]
    velocities = None if fields['velocities'] is None else fields['velocities'][:, source]
    accelerations = None if velocities is None or fields['accelerations'] is None \
        else fields['accelerations'][:, source]
    return positions, velocities, accelerations


def trajectory_reference(names, times, fields, joint_names, bounds, max_points, start, mimic=None):
    """TrajectoryReference in `joint_names` order of a trajectory read by ``trajectory_fields`` (``checked_columns``:
    ValueError for one it refuses); when its first point lies in the future, it starts from ``start()``, (q, qd, qdd)
    where the robot is to be now."""
    positions, velocities, accelerations = checked_columns(names, times, fields, joint_names, bounds, max_points,
                                                           mimic)
    if times[0] > 0:
        q_ref, qd_ref, qdd_ref = start()
        times = np.concatenate([[0.0], times])
        positions = np.vstack([q_ref, positions])
        velocities = None if velocities is None else np.vstack([qd_ref, velocities])
        accelerations = None if accelerations is None else np.vstack([qdd_ref, accelerations])
    return TrajectoryReference(times, positions, velocities, accelerations)
