"""Joint velocities and accelerations from sampled positions, for identification.

The usual recipe (Gautier): low-pass the measured positions with a zero-phase Butterworth filter
(``filtfilt``: no delay, so q, qd, qdd and tau stay aligned) and take central differences. The torques
are not filtered: their noise is zero-mean and least squares averages it, while low-passing them (and
not the regressor) would smear the Coulomb friction steps that the regressor keeps sharp; on simulated
stick-slip data this biased the friction estimates. Non-uniform timestamps are first interpolated onto
a uniform grid; ``decimate`` keeps every k-th sample (fewer, less correlated equations).
"""
import numpy as np
from scipy.interpolate import CubicSpline
from scipy.signal import butter, filtfilt

UNIFORM_RTOL = 1e-3  # largest relative deviation of a sampling interval still called uniform


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


def lowpass(x, dt, cutoff, order=4):
    """Zero-phase Butterworth low-pass of x along axis 0 (forward-backward, so the order doubles).

    The ends are padded by odd extension over three time constants (3 / cutoff seconds) rather than
    filtfilt's default few samples: on a sinusoid this takes the edge error of the second derivative
    from tens of percent to below 0.1 %."""
    nyquist = 0.5 / dt
    if not 0 < cutoff < nyquist:
        raise ValueError(f"cut-off {cutoff} Hz must lie between 0 and the Nyquist frequency {nyquist:g} Hz")
    b, a = butter(order, cutoff, fs=1.0 / dt)
    x = np.asarray(x, dtype=float)
    return filtfilt(b, a, x, axis=0, padlen=min(len(x) - 1, int(np.ceil(3.0 / (cutoff * dt)))))


def derivatives(q, dt, cutoff, order=4):
    """(q_filtered, qd, qdd) from uniformly sampled positions q (N, n): filter, then central differences."""
    q_filtered = lowpass(q, dt, cutoff, order)
    qd = np.gradient(q_filtered, dt, axis=0)
    qdd = np.gradient(qd, dt, axis=0)
    return q_filtered, qd, qdd


def prepare(t, q, tau, cutoff, order=4, decimate=1, trim=None):
    """Identification samples from a recording: (t, q, qd, qdd, tau), positions filtered, torques as measured.

    t: (N,) timestamps (resampled to a uniform grid when uneven); q, tau: (N, n).
    cutoff: filter cut-off in Hz, typically a few times the highest frequency of the motion.
    decimate: keep every k-th sample after filtering. trim: samples dropped at each end (filter and
    difference edge effects), default one filter time constant's worth (1 / cutoff seconds).
    """
    t = np.asarray(t, dtype=float)
    if not is_uniform(t):
        t, q, tau = uniform_grid(t, q, tau)
    dt = t[1] - t[0]
    q, qd, qdd = derivatives(q, dt, cutoff, order)
    tau = np.asarray(tau, dtype=float)
    trim = int(np.ceil(1.0 / (cutoff * dt))) if trim is None else int(trim)
    keep = slice(trim, len(t) - trim, max(1, int(decimate)))
    if len(t[keep]) == 0:
        raise ValueError(f"recording of {len(t)} samples is too short to trim {trim} samples at each end")
    return t[keep], q[keep], qd[keep], qdd[keep], tau[keep]
