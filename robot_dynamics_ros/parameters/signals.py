"""Joint velocities and accelerations from sampled positions, as the identification model needs them.

Positions are smoothed by a Savitzky-Golay filter (a cubic fitted over +-h samples: exact on cubics, so the
smooth part of the motion keeps its derivatives, and zero-phase) and differenced. h is the smallest half-width
(at least 2) that keeps the velocity noise below 1/VELOCITY_NOISE_RATIO of the speed below which equations are
left out, from the position noise estimated on the recording itself (``position_noise``): noise-free simulated
data are differentiated nearly exactly (h = 2), 1e-4 rad of encoder noise at 1 kHz gives h = 28 (28 ms).
How to difference depends on what produced the samples (``sampling``):

- ``'continuous'``: a robot sampled at instants t_k, each sample's effort acting at t_k (a real robot).
  Central differences: qd_k = (q_k+1 - q_k-1) / 2 dt, qdd_k = (q_k+1 - 2 q_k + q_k-1) / dt^2; Coulomb friction
  takes the sign of qd_k.
- ``'simulator'``: the package's Simulator stepped by semi-implicit Euler, one sample per step, as ``record``
  writes it. A step from state k applies the effort tau_k over [t_k, t_k+1] and does (simulation/simulator.py)

      qd_k+1 = qd_k + dt M(q_k)^-1 (tau_k - c(q_k, qd_k) - Fv qd_k+1 - Fc sign(qd_k+1)),
      q_k+1  = q_k + dt qd_k+1,

  (c: Coriolis, centrifugal and gravity efforts; damping implicit; the Coulomb term while the joint slides), so
  the equation of state k is exactly M(q_k) qdd_k + c(q_k, qd_k) + Fv qd_k+1 + Fc sign(qd_k+1) = tau_k with the
  backward velocity qd_k = (q_k - q_k-1) / dt, qdd_k = (qd_k+1 - qd_k) / dt (the central second difference) and
  friction, viscous and Coulomb, acting on the *next* velocity (``qd_friction``). Its state message carries the
  effort applied over the step before it: effort tau_k arrives with state k+1 (``EFFORT_DELAY``). Central
  differences on such data are off by dt/2 qdd in the velocity: with damping Fv that is an extra inertia
  Fv dt / 2 on each joint (5e-4 kg m^2 for Fv = 1 N m s/rad at 1 kHz), larger than the small products of
  inertia it then biases.

Non-uniform timestamps are first interpolated onto a uniform grid (``uniform_grid``).
"""
import numpy as np
from scipy.interpolate import CubicSpline
from scipy.signal import savgol_coeffs, savgol_filter

UNIFORM_RTOL = 1e-3  # largest relative deviation of a sampling interval still called uniform
SAMPLINGS = ('continuous', 'simulator')
EFFORT_DELAY = {'continuous': 0, 'simulator': 1}   # samples from a state to the message carrying its effort
VELOCITY_NOISE_RATIO = 5.0  # min_velocity / velocity noise: a kept equation's Coulomb sign is wrong < 1 in 10^6
MAX_HALF_WIDTH = 0.1        # s: the Savitzky-Golay half-width never exceeds this
NOISE_PROBE = 3             # half-width of the local cubic whose residual measures the position noise


def is_uniform(t):
    dt = np.diff(t)
    return bool(np.all(dt > 0) and np.ptp(dt) <= UNIFORM_RTOL * np.median(dt))


def uniform_grid(t, *signals, dt=None):
    """Resample ``signals`` (each (N, ...) along axis 0) onto a uniform grid over [t[0], t[-1]].

    dt defaults to the median sampling interval. Cubic-spline interpolation (C2, so the accelerations
    computed later see no kinks). Returns (t_uniform, *signals_uniform).
    """
    t = np.asarray(t, dtype=float)
    if np.any(np.diff(t) <= 0):
        raise ValueError("timestamps must be strictly increasing")
    dt = float(np.median(np.diff(t))) if dt is None else float(dt)
    grid = t[0] + dt * np.arange(int(np.floor((t[-1] - t[0]) / dt + 1e-9)) + 1)
    return (grid, *(CubicSpline(t, np.asarray(s, dtype=float), axis=0)(grid) for s in signals))


def position_noise(q):
    """(n,) standard deviation of the noise on each joint's positions q (N, n).

    The residual r = q - S q of a local cubic S over 2 NOISE_PROBE + 1 samples keeps (1 - 2 c + |s|^2) sigma^2
    of white noise (s the fit's centre coefficients, c = s_0) and next to nothing of a motion smooth at the
    sampling rate; sigma = MAD(r) / 0.6745 / sqrt(that), the median ignoring the kinks of stick-slip.
    """
    s = savgol_coeffs(2 * NOISE_PROBE + 1, 3)
    kept = 1.0 - 2.0 * s[NOISE_PROBE] + np.sum(s ** 2)
    r = np.asarray(q, dtype=float) - savgol_filter(q, 2 * NOISE_PROBE + 1, 3, axis=0)
    r = r[NOISE_PROBE:-NOISE_PROBE]
    mad = np.median(np.abs(r - np.median(r, axis=0)), axis=0)
    return mad / 0.6745 / np.sqrt(kept)


def velocity_noise_gain(h):
    """sigma_v dt / sigma_q of the difference of two neighbouring Savitzky-Golay cubics of half-width h."""
    c = savgol_coeffs(2 * h + 1, 3)
    return float(np.linalg.norm(np.diff(np.concatenate([[0.0], c, [0.0]]))))


def smoothing_half_width(dt, noise, min_velocity):
    """Smallest half-width h >= 2 with velocity noise max(noise) * gain(h) / dt <= min_velocity /
    VELOCITY_NOISE_RATIO, at most MAX_HALF_WIDTH seconds."""
    largest = max(2, int(round(MAX_HALF_WIDTH / dt)))
    target = min_velocity / VELOCITY_NOISE_RATIO * dt / max(float(np.max(noise)), 1e-300)
    h = 2
    while h < largest and velocity_noise_gain(h) > target:
        h += 1
    return h


def derivatives(q, dt, half_width, sampling='continuous'):
    """(q_s, qd, qdd, qd_friction), each (N, n): smoothed positions, velocity, acceleration and the velocity
    viscous and Coulomb friction act on, at each state of uniformly sampled positions q (N, n) (see the module doc);
    half_width: of the Savitzky-Golay cubic (``smoothing_half_width``).

    A sample's values use its neighbours up to half_width + 1 samples away; the first and last rows are not
    valid (zero velocity there, to be trimmed by the caller).
    """
    if sampling not in SAMPLINGS:
        raise ValueError(f"unknown sampling {sampling!r}; expected one of {SAMPLINGS}")
    q = np.asarray(q, dtype=float)
    h = int(half_width)
    if len(q) < 2 * h + 3:
        raise ValueError(f"{len(q)} samples are too few to differentiate (at least {2 * h + 3})")
    q_s = savgol_filter(q, 2 * h + 1, 3, axis=0)
    qd, qdd, qd_friction = (np.zeros_like(q_s) for _ in range(3))
    step = np.diff(q_s, axis=0) / dt                               # velocity over each step, (q_k+1 - q_k) / dt
    qdd[1:-1] = np.diff(step, axis=0) / dt                         # (q_k+1 - 2 q_k + q_k-1) / dt^2
    if sampling == 'simulator':
        qd[1:-1], qd_friction[1:-1] = step[:-1], step[1:]           # backward velocity; friction: the next one
    else:
        qd[1:-1] = 0.5 * (step[:-1] + step[1:])                    # central
        qd_friction[1:-1] = qd[1:-1]
    return q_s, qd, qdd, qd_friction
