"""Joint states by name to model order, with the bounds beyond which a state is a bad input (no ROS import)."""
from array import array
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..model.model import Model

Vector = NDArray[np.float64]


PLAUSIBLE_VELOCITY_FACTOR = 10.0  # a joint moving faster than this multiple of its URDF velocity limit is a bad input
LIMIT_MARGIN_RAD = 0.5             # rad or m a position may lie beyond a joint limit before it is a bad input
MAX_MAGNITUDE = 1e6                # no position, velocity or acceleration of a joint is larger than this


def plausibility_bounds(model: Model) -> tuple[Vector, Vector, Vector]:
    """(lower, upper, max |velocity|) in model order that joint states and trajectory points must keep to:
    the position limits widened by LIMIT_MARGIN_RAD, PLAUSIBLE_VELOCITY_FACTOR times the velocity limits,
    and MAX_MAGNITUDE where the URDF gives no limit. Values beyond them overflow the dynamics (1e155 rad/s
    squares to inf) or are sensor faults; rejecting them keeps non-finite numbers out of commands."""
    lower = np.where(np.isfinite(model.lower), model.lower - LIMIT_MARGIN_RAD, -MAX_MAGNITUDE)
    upper = np.where(np.isfinite(model.upper), model.upper + LIMIT_MARGIN_RAD, MAX_MAGNITUDE)
    velocity = np.where(np.isfinite(model.velocity_limit) & (model.velocity_limit > 0),
                        PLAUSIBLE_VELOCITY_FACTOR * model.velocity_limit, MAX_MAGNITUDE)
    return lower, upper, np.minimum(velocity, MAX_MAGNITUDE)


def coupled_mimic_joints(model: Model) -> dict:
    """{mimic joint: its master} for the mimic joints ``model`` couples (``model/mimic.py``; none for a model
    loaded with mimic=False): their states follow their masters', so a controller takes no input from them and
    accepts no command or trajectory naming them."""
    if model.coupling is None:
        return {}
    return {name: master for name, (master, _, _) in model.mimic.items()}


class JointStateMapper:
    """Maps named joint values (as in sensor_msgs/JointState) into the model's DOF order.

    ignore_unknown: joints the model does not have are skipped instead of rejected.
    allow_missing_velocity: an empty velocity array gives zero velocities instead of an error.
    bounds: optional (lower, upper, max |velocity|) in model order (see plausibility_bounds); values
    beyond them are rejected. followers: joints whose entries are skipped, not rejected: coupled mimic joints
    (``coupled_mimic_joints``), whose state follows their master's. The index map of the last name list is kept, so
    a stream of messages with the same names costs one list comparison each.
    """

    def __init__(self, joint_names: Sequence[str], ignore_unknown: bool = False, allow_missing_velocity: bool = False,
                 bounds: tuple[Vector, Vector, Vector] | None = None, followers: Sequence[str] = ()) -> None:
        self.joint_names = tuple(joint_names)
        self.followers = frozenset(followers)
        self._index = {name: i for i, name in enumerate(self.joint_names)}
        self.ignore_unknown = ignore_unknown
        self.allow_missing_velocity = allow_missing_velocity
        self.bounds = bounds
        self._names = None     # the name list of the last valid message ...
        self._source = None    # ... and, for each model joint, its index in that list

    def _source_of(self, names):
        """For each model joint, its index in `names`; ValueError for duplicate, unknown or missing joints."""
        if len(set(names)) != len(names):
            raise ValueError(f'duplicate joint names in {names}')
        unknown = [name for name in names if name not in self._index and name not in self.followers]
        if unknown and not self.ignore_unknown:
            raise ValueError(f'unknown joints {unknown}; the model has {list(self.joint_names)}')
        missing = [name for name in self.joint_names if name not in names]
        if missing:
            raise ValueError(f'joint state lacks joints {missing}')
        return np.array([names.index(name) for name in self.joint_names])

    def source(self, names: Sequence[str]) -> np.ndarray:
        """For each model joint, its index in `names` (kept for the last name list); ValueError for duplicate,
        unknown or missing joints."""
        if names != self._names:
            names = list(names)
            self._source = self._source_of(names)
            self._names = names
        return self._source

    def _reject(self, q, qd):
        """ValueError naming the joints whose values are not finite or beyond the bounds."""
        if not (np.isfinite(q).all() and np.isfinite(qd).all()):
            bad = [name for name, a, b in zip(self.joint_names, q, qd) if not (np.isfinite(a) and np.isfinite(b))]
            raise ValueError(f'non-finite position or velocity for joints {bad}')
        lower, upper, speed = self.bounds
        bad = [f'{name} (q {a:.6g}, qd {b:.6g})' for name, a, b, lo, hi, s
               in zip(self.joint_names, q, qd, lower, upper, speed) if not (lo <= a <= hi and abs(b) <= s)]
        raise ValueError(f'implausible position or velocity for joints {bad}: beyond the limits by more than '
                         f'{LIMIT_MARGIN_RAD} or faster than {PLAUSIBLE_VELOCITY_FACTOR:g}x the velocity limit')

    def map(self, names: Sequence[str], positions: ArrayLike, velocities: ArrayLike | None) -> tuple[Vector, Vector]:
        """(q, qd) in model order; ValueError naming the problem for any inconsistent message."""
        positions = (np.frombuffer(positions, dtype=float) if isinstance(positions, array) and positions.typecode == "d"
                     else np.asarray(positions, dtype=float).reshape(-1))
        velocities = (np.frombuffer(velocities, dtype=float) if isinstance(velocities, array) and velocities.typecode == "d"
                      else np.asarray(velocities if velocities is not None else [], dtype=float).reshape(-1))
        if positions.size != len(names):
            raise ValueError(f'{len(names)} joint names but {positions.size} positions')
        if velocities.size == 0:
            if not self.allow_missing_velocity:
                raise ValueError('joint state has no velocities')
            velocities = np.zeros(len(names))
        elif velocities.size != len(names):
            raise ValueError(f'{len(names)} joint names but {velocities.size} velocities')
        source = self.source(names)
        q, qd = positions[source], velocities[source]
        if self.bounds is None:
            plausible = np.isfinite(q).all() and np.isfinite(qd).all()
        else:   # NaN fails every comparison, so this also rejects non-finite values
            lower, upper, speed = self.bounds
            plausible = ((lower <= q) & (q <= upper) & (np.abs(qd) <= speed)).all()
        if not plausible:
            self._reject(q, qd)
        return q, qd
