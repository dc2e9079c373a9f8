"""Control laws and reference trajectories for the controller node (no ROS import)."""
import numpy as np
from scipy.interpolate import BPoly, CubicHermiteSpline, CubicSpline

from .fast import gravity_torques, rnea
from .model.model import REVOLUTE

CONTROL_MODES = ('computed_torque', 'pd_gravity', 'gravity_compensation')


def as_finite_vector(name, value, n):
    """``value`` as a float array of length n, or ValueError saying what is wrong with it."""
    v = np.asarray(value, dtype=float).reshape(-1) if np.ndim(value) else np.full(n, float(value))
    if v.shape != (n,):
        raise ValueError(f'{name} has {v.size} values, expected {n}')
    if not np.all(np.isfinite(v)):
        raise ValueError(f'{name} contains NaN or Inf: {v.tolist()}')
    return v


FRICTION_SMOOTHING_VELOCITY = 0.01  # rad/s or m/s: Coulomb feed-forward ramps in over this speed


class ComputedTorqueController:
    """Joint-space control laws on the rigid-body model; efforts are clamped to the URDF effort limits.

    mode 'computed_torque': tau = RNEA(q, qd, qdd_ref + Kd (qd_ref - qd) + Kp (q_ref - q))
    mode 'pd_gravity':      tau = Kp (q_ref - q) + Kd (qd_ref - qd) + g(q)
    mode 'gravity_compensation': tau = g(q)
    kp, kd: scalars or one gain per joint. On continuous joints (revolute, unlimited) the position error
    is wrapped into [-pi, pi) so that the controller takes the short way round.
    friction_compensation: in the first two modes, also add the URDF joint friction as feed-forward,
    damping * qd + friction * tanh(qd_ref / FRICTION_SMOOTHING_VELOCITY).
    """

    def __init__(self, model, kp, kd, mode='computed_torque', gravity=None, friction_compensation=False):
        if mode not in CONTROL_MODES:
            raise ValueError(f'unknown control mode {mode!r}; expected one of {CONTROL_MODES}')
        self.model = model
        self.mode = mode
        self.gravity = gravity
        self.friction_compensation = friction_compensation
        self.kp = as_finite_vector('kp', kp, model.nv)
        self.kd = as_finite_vector('kd', kd, model.nv)
        if np.any(self.kp < 0) or np.any(self.kd < 0):
            raise ValueError('gains kp and kd must be non-negative')
        self._continuous = (model.joint_type == REVOLUTE) & ~np.isfinite(model.lower) & ~np.isfinite(model.upper)

    def position_error(self, q_ref, q):
        """q_ref - q, wrapped into [-pi, pi) on continuous joints."""
        e = q_ref - q
        e[self._continuous] = (e[self._continuous] + np.pi) % (2.0 * np.pi) - np.pi
        return e

    def compute(self, q, qd, q_ref, qd_ref, qdd_ref):
        """Joint efforts for the measured state (q, qd) and the reference; ValueError on non-finite input."""
        n = self.model.nv
        q, qd = as_finite_vector('q', q, n), as_finite_vector('qd', qd, n)
        q_ref, qd_ref = as_finite_vector('q_ref', q_ref, n), as_finite_vector('qd_ref', qd_ref, n)
        qdd_ref = as_finite_vector('qdd_ref', qdd_ref, n)
        if self.mode == 'gravity_compensation':
            tau = gravity_torques(self.model, q, self.gravity)
        else:
            feedback = self.kp * self.position_error(q_ref, q) + self.kd * (qd_ref - qd)
            if self.mode == 'computed_torque':
                tau = rnea(self.model, q, qd, qdd_ref + feedback, self.gravity)
            else:
                tau = feedback + gravity_torques(self.model, q, self.gravity)
            if self.friction_compensation:
                tau += self.model.damping * qd + self.model.friction * np.tanh(qd_ref / FRICTION_SMOOTHING_VELOCITY)
        limit = self.model.effort_limit
        return np.clip(tau, -limit, limit)


class TrajectoryReference:
    """A joint trajectory through waypoints, sampled at any time t (relative to the trajectory start).

    With velocities and accelerations: piecewise quintic Hermite; with velocities: piecewise cubic Hermite;
    positions only: a C2 cubic spline that starts and ends at rest (zero end velocities), so that it joins
    the hold before the start and after the end without a velocity jump. Before the first time the first
    point is held, after the last time the last point, both with zero velocity and acceleration.
    """

    def __init__(self, times, positions, velocities=None, accelerations=None):
        times = np.asarray(times, dtype=float).reshape(-1)
        positions = np.atleast_2d(np.asarray(positions, dtype=float))
        if positions.shape[0] != times.size:
            raise ValueError(f'{times.size} times but {positions.shape[0]} position waypoints')
        if times.size == 0:
            raise ValueError('a trajectory needs at least one point')
        if not (np.all(np.isfinite(times)) and np.all(np.isfinite(positions))):
            raise ValueError('trajectory times and positions must be finite')
        if np.any(np.diff(times) <= 0):
            raise ValueError('trajectory times must be strictly increasing')
        derivatives = [positions]
        for name, values in (('velocities', velocities), ('accelerations', accelerations)):
            if values is None:
                break
            values = np.atleast_2d(np.asarray(values, dtype=float))
            if values.shape != positions.shape:
                raise ValueError(f'{name} have shape {values.shape}, positions {positions.shape}')
            if not np.all(np.isfinite(values)):
                raise ValueError(f'trajectory {name} must be finite')
            derivatives.append(values)
        if accelerations is not None and velocities is None:
            raise ValueError('accelerations need velocities as well')
        self.times = times
        self.positions = positions
        if times.size == 1:
            self._spline = None
        elif len(derivatives) == 3:
            self._spline = BPoly.from_derivatives(times, np.stack(derivatives, axis=1))
        elif len(derivatives) == 2:
            self._spline = CubicHermiteSpline(times, positions, derivatives[1])
        else:
            self._spline = CubicSpline(times, positions, bc_type='clamped')

    @classmethod
    def hold(cls, q):
        """A constant reference at q."""
        return cls([0.0], [np.asarray(q, dtype=float)])

    @property
    def duration(self):
        return self.times[-1]

    def sample(self, t):
        """(q_ref, qd_ref, qdd_ref) at time t."""
        zero = np.zeros(self.positions.shape[1])
        if self._spline is None or t <= self.times[0]:
            return self.positions[0].copy(), zero, zero.copy()
        if t >= self.times[-1]:
            return self.positions[-1].copy(), zero, zero.copy()
        return self._spline(t), self._spline(t, 1), self._spline(t, 2)


def _smoothstep(s):
    """Quintic smoothstep S(s) = 10 s^3 - 15 s^4 + 6 s^5 on [0, 1] (1 beyond) and its first two derivatives."""
    s = np.clip(s, 0.0, 1.0)
    return (s**3 * (10.0 - 15.0 * s + 6.0 * s**2),
            30.0 * s**2 * (1.0 - s)**2,
            60.0 * s * (1.0 - s) * (1.0 - 2.0 * s))


SMOOTHSTEP_MAX_SLOPE = 1.875  # max of S'(s), at s = 1/2
LIMIT_MARGIN = 0.95            # fraction of the distance from the centre to the nearest limit that is used


def sinusoid_reference(model, amplitude, frequency, duration, center=None, rate=100.0):
    """Sinusoids q_i(t) = c_i + a_i sin(2 pi f_i t) e(t) sampled at ``rate`` Hz, as (times, q, qd, qdd).

    The envelope e(t) rises from 0 to 1 and falls back to 0 with quintic smoothsteps, each as long as the
    slowest period (at most a quarter of the duration), so the motion starts and ends at rest at the centre.
    The centre defaults to the middle of the limits (0 where unlimited). Amplitudes are scaled down so
    that the motion stays within the position limits and, with the envelope's slope bound, within the
    velocity limits.
    """
    n = model.nv
    frequency = as_finite_vector('frequency', frequency, n)
    if np.any(frequency <= 0) or duration <= 0 or rate <= 0:
        raise ValueError('frequency, duration and rate must be positive')
    finite = np.isfinite(model.lower) & np.isfinite(model.upper)
    if center is None:
        center = 0.5 * (np.where(finite, model.lower, 0.0) + np.where(finite, model.upper, 0.0))
    center = np.clip(as_finite_vector('center', center, n), model.lower, model.upper)
    amplitude = np.abs(as_finite_vector('amplitude', amplitude, n))
    omega = 2.0 * np.pi * frequency
    ramp = min(1.0 / frequency.min(), 0.25 * duration)
    room = LIMIT_MARGIN * np.minimum(model.upper - center, center - model.lower)
    peak_speed_per_amplitude = omega + 2.0 * SMOOTHSTEP_MAX_SLOPE / ramp
    amplitude = np.minimum(amplitude, room)
    amplitude = np.minimum(amplitude, LIMIT_MARGIN * model.velocity_limit / peak_speed_per_amplitude)

    times = np.linspace(0.0, duration, int(round(duration * rate)) + 1)
    rise, rise_d, rise_dd = _smoothstep(times / ramp)
    fall, fall_d, fall_dd = _smoothstep((duration - times) / ramp)
    envelope = rise * fall
    envelope_d = (rise_d * fall - rise * fall_d) / ramp
    envelope_dd = (rise_dd * fall - 2.0 * rise_d * fall_d + rise * fall_dd) / ramp**2
    phase = np.outer(times, omega)
    s, c = np.sin(phase), np.cos(phase)
    e, ed, edd = envelope[:, None], envelope_d[:, None], envelope_dd[:, None]
    positions = center + amplitude * s * e
    velocities = amplitude * (omega * c * e + s * ed)
    accelerations = amplitude * (-omega**2 * s * e + 2.0 * omega * c * ed + s * edd)
    return times, positions, velocities, accelerations


class JointStateMapper:
    """Maps named joint values (as in sensor_msgs/JointState) into the model's DOF order.

    ignore_unknown: joints the model does not have are skipped instead of rejected.
    allow_missing_velocity: an empty velocity array gives zero velocities instead of an error.
    """

    def __init__(self, joint_names, ignore_unknown=False, allow_missing_velocity=False):
        self.joint_names = tuple(joint_names)
        self._index = {name: i for i, name in enumerate(self.joint_names)}
        self.ignore_unknown = ignore_unknown
        self.allow_missing_velocity = allow_missing_velocity

    def map(self, names, positions, velocities):
        """(q, qd) in model order; ValueError naming the problem for any inconsistent message."""
        names = list(names)
        positions = np.asarray(positions, dtype=float).reshape(-1)
        velocities = np.asarray(velocities if velocities is not None else [], dtype=float).reshape(-1)
        if positions.size != len(names):
            raise ValueError(f'{len(names)} joint names but {positions.size} positions')
        if velocities.size == 0:
            if not self.allow_missing_velocity:
                raise ValueError('joint state has no velocities')
            velocities = np.zeros(len(names))
        elif velocities.size != len(names):
            raise ValueError(f'{len(names)} joint names but {velocities.size} velocities')
        if len(set(names)) != len(names):
            raise ValueError(f'duplicate joint names in {names}')
        unknown = [name for name in names if name not in self._index]
        if unknown and not self.ignore_unknown:
            raise ValueError(f'unknown joints {unknown}; the model has {list(self.joint_names)}')
        missing = [name for name in self.joint_names if name not in names]
        if missing:
            raise ValueError(f'joint state lacks joints {missing}')
        source = [names.index(name) for name in self.joint_names]
        q, qd = positions[source], velocities[source]
        if not (np.all(np.isfinite(q)) and np.all(np.isfinite(qd))):
            bad = [name for name, a, b in zip(self.joint_names, q, qd) if not (np.isfinite(a) and np.isfinite(b))]
            raise ValueError(f'non-finite position or velocity for joints {bad}')
        return q, qd
