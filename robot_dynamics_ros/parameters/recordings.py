"""Recorded joint data for identification: CSV, NumPy ``.npz`` and rosbag2 (MCAP or sqlite3).

A Recording holds timestamps, joint names, positions, optional velocities and efforts. Joints are put
into the model's order by name (``for_model``); joints the model does not have are dropped.

File formats:
- CSV: a header row with ``t`` and, per joint, ``q_<joint>``, ``tau_<joint>`` and optionally
  ``qd_<joint>``; one row per sample.
- npz: arrays ``t`` (N,), ``joint_names`` (n,), ``q`` (N, n), ``tau`` (N, n), optionally ``qd`` and ``sampling``
  (a string).
- rosbag2: a bag directory (or its ``.mcap`` / ``.db3`` file) with ``sensor_msgs/msg/JointState`` on
  a topic (default ``/joint_states``); position and effort per message, mapped by name per message.
  Read with the pure-Python ``rosbags`` package (no ROS install needed). Time is the header stamp, or
  the bag's receive time where the stamp is zero. A bag ``robot-dynamics record`` wrote says in its
  metadata (custom data ``EXPERIMENT_SECONDS``) how long the full experiment is: ``expected_duration``, and
  (``SAMPLING``) how its samples relate to the simulator's steps: ``sampling`` (see ``signals.py``).

A recording needs two samples or more at distinct times; a sample sent again (same time, same values, as a
lockstep simulator does while it waits) is kept once, different samples at one time are an error. A file that
cannot be read raises ValueError (or OSError) with one line saying why.
"""
import csv
import dataclasses
import os
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml

EXPERIMENT_SECONDS = 'robot_dynamics_ros.experiment_seconds'  # rosbag2 custom data: sim seconds a full recording spans
SAMPLING = 'robot_dynamics_ros.sampling'   # rosbag2 custom data: 'simulator' where each effort is from the step before

@dataclass(frozen=True, eq=False)
class Recording:
    t: np.ndarray          # (N,) seconds
    joint_names: tuple
    q: np.ndarray          # (N, n)
    tau: np.ndarray        # (N, n)
    qd: np.ndarray = None  # (N, n) or None
    expected_duration: float = None  # s the full experiment spans, where the recording says (record's bags)
    sampling: str = None     # 'simulator' or 'continuous' where the recording says (record's bags), else None

    @property
    def duration(self):
        return float(self.t[-1] - self.t[0])

    def covered_fraction(self):
        """duration / expected_duration, or None where the recording does not say how long it should be."""
        return None if self.expected_duration is None else self.duration / self.expected_duration

    def for_model(self, model):
        """The same samples with columns in the model's DOF order; raises naming any missing joint."""
        missing = [name for name in model.joint_names if name not in self.joint_names]
        if missing:
            raise ValueError(f"the recording has no data for joints {missing} (it has {list(self.joint_names)})")
        cols = [self.joint_names.index(name) for name in model.joint_names]
        return Recording(self.t, tuple(model.joint_names), self.q[:, cols], self.tau[:, cols],
                         None if self.qd is None else self.qd[:, cols], self.expected_duration, self.sampling)

    def save(self, path):
        """Write as CSV or npz, by the file extension."""
        path = os.fspath(path)
        if path.endswith('.npz'):
            arrays = dict(t=self.t, joint_names=np.array(self.joint_names), q=self.q, tau=self.tau)
            if self.qd is not None:
                arrays['qd'] = self.qd
            if self.sampling is not None:
                arrays['sampling'] = np.array(self.sampling)
            np.savez(path, **arrays)
            return
        groups = [('q', self.q), ('tau', self.tau)] + ([('qd', self.qd)] if self.qd is not None else [])
        header = ['t'] + [f"{prefix}_{name}" for prefix, _ in groups for name in self.joint_names]
        table = np.column_stack([self.t] + [values for _, values in groups])
        with open(path, 'w', newline='', encoding='utf-8') as f:
            writer = csv.writer(f)
            writer.writerow(header)
            writer.writerows(table.tolist())


def load_recording(path, topic='/joint_states'):
    """Recording from a ``.csv`` or ``.npz`` file, or a rosbag2 directory / ``.mcap`` / ``.db3`` file."""
    path = Path(path)
    if not path.exists():
        raise FileNotFoundError(f"no recording at {str(path)!r}")
    if path.is_dir() or path.suffix in ('.mcap', '.db3'):
        return load_rosbag(path, topic)
    if path.suffix == '.npz':
        return _load_npz(path)
    if path.suffix == '.csv':
        return _load_csv(path)
    raise ValueError(f"unknown recording format {path.suffix!r}: use .csv, .npz or a rosbag2 directory")


def _load_npz(path):
    data = np.load(path, allow_pickle=False)
    missing = {'t', 'joint_names', 'q', 'tau'} - set(data.files)
    if missing:
        raise ValueError(f"{path.name}: missing arrays {sorted(missing)}")
    recording = _checked(data['t'], [str(n) for n in data['joint_names']], data['q'], data['tau'],
                         data['qd'] if 'qd' in data.files else None, path.name)
    return dataclasses.replace(recording, sampling=str(data['sampling']) if 'sampling' in data.files else None)


def _load_csv(path):
    with open(path, newline='', encoding='utf-8') as f:
        header = next(csv.reader(f))
    table = np.loadtxt(path, delimiter=',', skiprows=1, ndmin=2)
    if 't' not in header:
        raise ValueError(f"{path.name}: no 't' column in the header")
    columns = {name: k for k, name in enumerate(header)}
    joints = [name[2:] for name in header if name.startswith('q_')]
    absent = [j for j in joints if 'tau_' + j not in columns]
    if absent:
        raise ValueError(f"{path.name}: no 'tau_<joint>' column for joints {absent}")
    has_qd = all('qd_' + j in columns for j in joints)

    def block(prefix):
        return table[:, [columns[prefix + j] for j in joints]]
    return _checked(table[:, columns['t']], joints, block('q_'), block('tau_'),
                    block('qd_') if has_qd else None, path.name)


def load_rosbag(path, topic='/joint_states'):
    """Recording from the sensor_msgs/msg/JointState messages on ``topic`` of a rosbag2 recording."""
    try:
        from rosbags.highlevel import AnyReader, AnyReaderError
        from rosbags.typesys import Stores, get_typestore
    except ImportError:
        raise ImportError("reading rosbag2 recordings needs rosbags: pip install 'robot_dynamics_ros[bag]'") from None

    path = Path(path)
    bag = path.parent if path.is_file() else path
    try:
        names, stamps, positions, velocities, efforts = _read_joint_states(AnyReader, get_typestore(Stores.ROS2_HUMBLE),
                                                                           bag, topic)
    except (AnyReaderError, struct.error, EOFError, KeyError) as e:   # a damaged file, e.g. a writer killed
        raise ValueError(f"{bag.name}: unreadable rosbag2 recording ({type(e).__name__}: "
                         f"{str(e).strip().splitlines()[0] if str(e).strip() else 'no detail'})") from None
    if not stamps:
        raise ValueError(f"{bag.name}: no usable JointState messages on {topic!r}")
    qd = np.array(velocities)
    recording = _checked(np.array(stamps), names, np.array(positions), np.array(efforts),
                         None if np.isnan(qd).any() else qd, bag.name)
    expected_duration, sampling = _custom_data(bag)
    return dataclasses.replace(recording, expected_duration=expected_duration, sampling=sampling)


def _read_joint_states(AnyReader, typestore, bag, topic):
    names, stamps, positions, velocities, efforts = None, [], [], [], []
    with AnyReader([bag], default_typestore=typestore) as reader:
        connections = [c for c in reader.connections if c.topic == topic]
        if not connections:
            topics = sorted({c.topic for c in reader.connections})
            raise ValueError(f"{bag.name}: no messages on {topic!r}; topics are {topics}")
        for connection, receive_time, raw in reader.messages(connections=connections):
            msg = reader.deserialize(raw, connection.msgtype)
            if names is None:
                names = list(msg.name)
            order = _message_order(msg.name, names)
            if order is None:
                continue  # a message that does not carry every joint (e.g. a gripper's own state)
            stamp = msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec
            stamps.append(stamp if stamp > 0 else 1e-9 * receive_time)
            positions.append(np.asarray(msg.position, dtype=float)[order])
            efforts.append(np.asarray(msg.effort, dtype=float)[order] if len(msg.effort) == len(msg.name)
                           else np.full(len(names), np.nan))
            velocities.append(np.asarray(msg.velocity, dtype=float)[order] if len(msg.velocity) == len(msg.name)
                              else np.full(len(names), np.nan))
    return names, stamps, positions, velocities, efforts


def _custom_data(bag):
    """(experiment's length, sampling) that record wrote into the bag's metadata.yaml, each None if absent."""
    with open(bag / 'metadata.yaml', encoding='utf-8') as f:
        info = yaml.safe_load(f).get('rosbag2_bagfile_information', {})
    custom = info.get('custom_data') or {}
    seconds = custom.get(EXPERIMENT_SECONDS)
    return None if seconds is None else float(seconds), custom.get(SAMPLING)


def _message_order(message_names, names):
    """Indices that put a message's values into ``names`` order; None if it lacks some joint."""
    lookup = {name: k for k, name in enumerate(message_names)}
    if any(name not in lookup for name in names):
        return None
    return [lookup[name] for name in names]


def _checked(t, names, q, tau, qd, source):
    t, q, tau = (np.asarray(a, dtype=float) for a in (t, q, tau))
    n = len(names)
    if q.ndim != 2 or q.shape != tau.shape or q.shape != (len(t), n):
        raise ValueError(f"{source}: positions {q.shape}, efforts {tau.shape}, {len(t)} times, {n} joints "
                         "do not fit together")
    if not (np.all(np.isfinite(t)) and np.all(np.isfinite(q)) and np.all(np.isfinite(tau))):
        raise ValueError(f"{source}: non-finite times, positions or efforts (missing effort field?)")
    order = np.argsort(t, kind='stable')
    t, q, tau = t[order], q[order], tau[order]
    qd = None if qd is None else np.asarray(qd, float)[order]
    same_time = np.flatnonzero(np.diff(t) == 0)
    resent = np.all(np.hstack([q, tau] + ([] if qd is None else [qd]))[same_time]
                    == np.hstack([q, tau] + ([] if qd is None else [qd]))[same_time + 1], axis=1)
    if not np.all(resent):
        raise ValueError(f"{source}: different samples at the same time ({t[same_time[~resent][0]]:.9g} s); "
                         "each sample needs its own time")
    keep = np.setdiff1d(np.arange(len(t)), same_time + 1)   # a sample sent again (same time, same values) once
    if len(keep) < 2:
        raise ValueError(f"{source}: {len(keep)} sample{'' if len(keep) == 1 else 's'} at distinct times; "
                         "a recording needs two or more")
    return Recording(t[keep], tuple(names), q[keep], tau[keep], None if qd is None else qd[keep])
