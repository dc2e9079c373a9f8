"""Joint reference trajectories: splines through trajectory points, and the sinusoid demo (no ROS import)."""
from bisect import bisect_right

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.interpolate import CubicHermiteSpline, CubicSpline

from ..model.joints import as_finite_vector
from ..model.model import Model
from .governor import LIMIT_MARGIN, model_acceleration_limits

Vector = NDArray[np.float64]


class TrajectoryReference:
    """A joint trajectory through waypoints, sampled at any time t (relative to the trajectory start).

    With velocities and accelerations: piecewise quintic Hermite; with velocities: piecewise cubic Hermite;
    positions only: a C2 cubic spline that starts and ends at rest (zero end velocities), so that it joins
    the hold before the start and after the end without a velocity jump. Before the first time the first
    point is held, after the last time the last point, both with zero velocity and acceleration.

    Construction is vectorised over the segments (100k points in tens of ms); each segment is stored as
    power-series coefficients q(t) = sum_j a_j (t - t_i)^j, and `sample` evaluates the segment that holds
    t (the last one used, when t is still in it, as for a controller sampling forward in time).
    """

    def __init__(self, times: ArrayLike, positions: ArrayLike, velocities: ArrayLike | None = None,
                 accelerations: ArrayLike | None = None) -> None:
        times = np.ascontiguousarray(times, dtype=float).reshape(-1)   # ControlStep's kernel is compiled for C order
        positions = np.atleast_2d(np.ascontiguousarray(positions, dtype=float))
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
        self._segment = 0
        if times.size == 1:
            self._coefficients = None
        elif len(derivatives) == 3:
            self._coefficients = quintic_hermite_coefficients(times, *derivatives)
        else:
            spline = (CubicHermiteSpline(times, positions, derivatives[1]) if len(derivatives) == 2
                      else CubicSpline(times, positions, bc_type='clamped'))
            self._coefficients = np.ascontiguousarray(spline.c[::-1].transpose(1, 0, 2))  # (segment, j, joint)
        if self._coefficients is not None:
            if not np.all(np.isfinite(self._coefficients)):
                raise ValueError('trajectory too steep: its polynomial coefficients overflow')
            order = self._coefficients.shape[1]
            j = np.arange(order)
            # Row r of factor * dt**exponent, times a_j, gives the r-th derivative: j!/(j-r)! a_j dt^(j-r).
            self._exponent = np.stack([np.maximum(j - r, 0) for r in range(3)]).astype(float)
            self._factor = np.stack([np.ones(order), j, j * (j - 1)]).astype(float)

    @classmethod
    def hold(cls, q: ArrayLike) -> 'TrajectoryReference':
        """A constant reference at q."""
        return cls([0.0], [np.asarray(q, dtype=float)])

    @property
    def duration(self) -> float:
        return self.times[-1]

    def sample(self, t: float) -> tuple[Vector, Vector, Vector]:
        """(q_ref, qd_ref, qdd_ref) at time t."""
        times = self.times
        if self._coefficients is None or t <= times[0]:
            zero = np.zeros(self.positions.shape[1])
            return self.positions[0].copy(), zero, zero.copy()
        if t >= times[-1]:
            zero = np.zeros(self.positions.shape[1])
            return self.positions[-1].copy(), zero, zero.copy()
        i = self._segment
        if not times[i] <= t < times[i + 1]:
            i = self._segment = bisect_right(times, t) - 1
        q, qd, qdd = (self._factor * (t - times[i]) ** self._exponent) @ self._coefficients[i]
        return q, qd, qdd


def quintic_hermite_coefficients(times, p, v, a):
    """Power-series coefficients (segment, j = 0..5, joint) of the quintic through position, velocity and
    acceleration at both ends of every segment, all segments at once."""
    h = np.diff(times)[:, None]
    inverse = 1.0 / h                 # products instead of powers: this runs on 100k-point trajectories
    p0, p1, v0, v1, a0, a1 = p[:-1], p[1:], v[:-1], v[1:], a[:-1], a[1:]
    coefficients = np.empty((len(h), 6, p.shape[1]))
    coefficients[:, 0], coefficients[:, 1], coefficients[:, 2] = p0, v0, 0.5 * a0
    dp = (p1 - p0) * inverse          # in units of velocity, and the accelerations times h
    ah0, ah1 = a0 * h, a1 * h
    coefficients[:, 3] = (20.0 * dp - 8.0 * v1 - 12.0 * v0 - 3.0 * ah0 + ah1) * (0.5 * inverse * inverse)
    coefficients[:, 4] = (-30.0 * dp + 14.0 * v1 + 16.0 * v0 + 3.0 * ah0 - 2.0 * ah1) * (0.5 * inverse**3)
    coefficients[:, 5] = (12.0 * dp - 6.0 * (v1 + v0) + ah1 - ah0) * (0.5 * inverse**4)
    return coefficients


def _smoothstep(s):
    """Quintic smoothstep S(s) = 10 s^3 - 15 s^4 + 6 s^5 on [0, 1] (1 beyond) and its first two derivatives."""
    s = np.clip(s, 0.0, 1.0)
    return (s**3 * (10.0 - 15.0 * s + 6.0 * s**2),
            30.0 * s**2 * (1.0 - s)**2,
            60.0 * s * (1.0 - s) * (1.0 - 2.0 * s))


SMOOTHSTEP_MAX_SLOPE = 1.875  # max of S'(s), at s = 1/2
SMOOTHSTEP_MAX_CURVATURE = 10.0 / np.sqrt(3.0)   # max of |S''(s)|, at s = 1/2 -+ sqrt(3)/6


def sinusoid_reference(model: Model, amplitude: ArrayLike, frequency: ArrayLike, duration: float,
                       center: ArrayLike | None = None, rate: float = 100.0) -> 'TrajectoryReference':
    """Sinusoids q_i(t) = c_i + a_i sin(2 pi f_i t) e(t) sampled at ``rate`` Hz, as (times, q, qd, qdd).

    The envelope e(t) rises from 0 to 1 and falls back to 0 with quintic smoothsteps, each as long as the
    slowest period (at most a quarter of the duration), so the motion starts and ends at rest at the centre.
    The centre defaults to the middle of the limits (0 where unlimited). Amplitudes are scaled down so
    that the motion stays within the position limits and, with the envelope's slope and curvature bounds,
    within the velocity limits and ``model_acceleration_limits`` (so the controller's governor passes it through).
    """
    n = model.nv
    frequency = as_finite_vector('frequency', frequency, n)
    if np.any(frequency <= 0) or duration <= 0 or rate <= 0:
        raise ValueError('frequency, duration and rate must be positive')
    if center is None:
        center = model.middle_of_limits()
    center = np.clip(as_finite_vector('center', center, n), model.lower, model.upper)
    amplitude = np.abs(as_finite_vector('amplitude', amplitude, n))
    omega = 2.0 * np.pi * frequency
    ramp = min(1.0 / frequency.min(), 0.25 * duration)
    room = LIMIT_MARGIN * np.minimum(model.upper - center, center - model.lower)
    peak_speed_per_amplitude = omega + 2.0 * SMOOTHSTEP_MAX_SLOPE / ramp
    amplitude = np.minimum(amplitude, room)
    amplitude = np.minimum(amplitude, LIMIT_MARGIN * model.velocity_limit / peak_speed_per_amplitude)
    peak_acceleration_per_amplitude = (omega**2 + 2.0 * omega * SMOOTHSTEP_MAX_SLOPE / ramp
                                       + SMOOTHSTEP_MAX_CURVATURE / ramp**2)
    amplitude = np.minimum(amplitude, LIMIT_MARGIN * model_acceleration_limits(model) / peak_acceleration_per_amplitude)

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
