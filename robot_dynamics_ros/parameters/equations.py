"""Identification equations from a recording: tau_f = Y_f beta, with Gautier's parallel filtering.

Gautier (1997, "Dynamic identification of robots with power model", and Gautier & Poignet 2001) low-passes the
efforts *and* each column of the regressor with the same filter before least squares: the model is linear in
beta, so F tau = (F Y) beta holds exactly for any linear filter F, while F removes the noise that differentiating
the positions puts into the acceleration columns. Here:

1. Each state's regressor Y(q_s, qd, qdd) with the derivatives of ``signals.derivatives`` (the sampling's own
   difference scheme; the viscous and Coulomb columns from qd_friction, the velocity friction acts on); the effort of the message ``EFFORT_DELAY`` samples
   later belongs to it.
2. F: a Hann window (raised cosine) of half-width H = round(1 / (2 cutoff dt)) samples, gain 1/2 at ``cutoff``,
   zero at 2 cutoff, applied to Y_base and tau; every ``decimate``-th sample is kept. A finite window, so that
   what the model cannot describe reaches a known number of equations and is left out exactly.
   Unfiltered, the acceleration noise of differentiated encoder noise biases the inertias (errors in
   variables: attenuation ~ noise^2 / signal^2, tens of percent on the small ones with 1e-4 rad at 1 kHz).
3. Left out, per joint, the equations within reach (filter plus differences) of a sample where the model is not
   what moved the joint: speed below ``min_velocity`` (a sticking joint's Coulomb friction is anything in
   [-Fc, Fc], and near a reversal its sign is uncertain) or at a position or velocity limit (stop and drive
   saturation impulses). Counted per joint and reason in ``Equations.excluded``; the filter's edges are trimmed.
"""
from dataclasses import dataclass

import numpy as np
from scipy.ndimage import binary_dilation
from scipy.signal.windows import hann

from ..algorithms.regressor import parameter_names
from ..fast import regressor_batch
from .signals import EFFORT_DELAY, derivatives, is_uniform, position_noise, smoothing_half_width, uniform_grid

LIMIT_MARGIN = 1e-3      # a position within this fraction of the range from a limit counts as at the limit
SPEED_MARGIN = 0.99      # a speed above this fraction of the velocity limit counts as saturated
MIN_SAMPLES = 2 * (2 + 1 + 1) + 1   # the shortest filter and differences (half-widths h >= 2, H >= 1, edge h + 1 + H)
CHUNK = 4096             # samples per block of regressor evaluations (bounds the memory: CHUNK x n x b floats)


@dataclass(frozen=True, eq=False)
class Equations:
    t: np.ndarray            # (N,) time of each kept state
    Y: np.ndarray            # (N, n, b) low-passed base regressor
    tau: np.ndarray          # (N, n) low-passed efforts
    rows: np.ndarray         # (N, n) bool: equations in use
    excluded: dict           # reason -> (n,) equations left out per joint
    sampling: str
    dt: float                # recording's sampling interval
    half_width: int          # H, samples each side of the filter
    trimmed: float           # s dropped at each end (filter and differences)
    position_noise: np.ndarray   # (n,) estimated standard deviation of the position noise
    smoothing: int           # half-width of the Savitzky-Golay cubic of the derivatives, samples
    decimation: int          # every decimation-th filtered sample kept

    @property
    def correlation_time(self):
        """s over which the filtered equations' errors stay correlated (the filter's window, 2 H dt)."""
        return 2 * self.half_width * self.dt


def hann_kernel(half_width):
    """Hann window of 2 H + 1 taps, unit sum."""
    w = hann(2 * half_width + 3)[1:-1]
    return w / w.sum()


def half_width_for(cutoff, dt):
    """H with gain 1/2 at ``cutoff`` Hz: the Hann window of length T = 2 H dt has its -6 dB point at 1/T."""
    quarter = 0.25 / dt
    if not 0 < cutoff < quarter:
        raise ValueError(f"cut-off {cutoff:g} Hz must lie between 0 and a quarter of the sampling rate ({quarter:g} Hz)")
    return max(1, int(round(1.0 / (2.0 * cutoff * dt))))


def identification_equations(model, base, t, q, tau, sampling='continuous', cutoff=5.0, decimate=None,
                             min_velocity=0.02, gravity=None, progress=None, **extra_columns):
    """Equations of the recording (t (N,), q and tau (N, n) in model order) for the base parameters ``base``.

    decimate: keep every k-th filtered sample (default: ten per half-width H). progress(done, total) is
    called after each block of regressor evaluations.
    """
    t, q, tau = (np.asarray(a, dtype=float) for a in (t, q, tau))
    if len(t) < MIN_SAMPLES:
        raise ValueError(f"recording of {len(t)} samples is shorter than the filter and differences need (at least "
                         f"{MIN_SAMPLES} samples)")
    if not is_uniform(t):
        t, q, tau = uniform_grid(t, q, tau)
    dt = float(t[1] - t[0])
    noise = position_noise(q)
    h = smoothing_half_width(dt, noise, min_velocity)
    q_s, qd, qdd, qd_friction = derivatives(q, dt, h, sampling)
    delay = EFFORT_DELAY[sampling]
    if delay:   # state k's effort arrives with state k + delay
        t, q_s, qd, qdd, qd_friction = (a[:-delay] for a in (t, q_s, qd, qdd, qd_friction))
        tau = tau[delay:]
    H = half_width_for(cutoff, dt)
    decimate = max(1, H // 10) if decimate is None else int(decimate)
    edge = h + 1 + H
    centres = np.arange(edge, len(t) - edge, decimate)
    if centres.size == 0:
        raise ValueError(f"recording of {len(t)} samples is shorter than the filter and differences need "
                         f"({2 * edge + 1} samples at {1 / dt:g} Hz, cut-off {cutoff:g} Hz)")
    reasons = _unmodelled(model, q_s, qd, qd_friction, min_velocity)
    window = np.ones((2 * edge + 1, 1), dtype=bool)
    reached = {reason: binary_dilation(mask, structure=window)[centres] for reason, mask in reasons.items()}
    rows = ~np.logical_or.reduce(list(reached.values()))
    excluded, taken = {}, np.zeros_like(rows)
    for reason, mask in reached.items():   # each equation counted once, under the first reason that applies
        excluded[reason] = np.sum(mask & ~taken, axis=0)
        taken |= mask
    kernel = hann_kernel(H)
    viscous, coulomb = (_joint_columns(model, extra_columns, name) for name in ('viscous', 'coulomb'))
    Y_f = np.empty((centres.size, model.nv, len(base)))
    for start in range(0, centres.size, max(1, CHUNK // decimate)):
        chunk = centres[start:start + max(1, CHUNK // decimate)]
        span = slice(chunk[0] - H, chunk[-1] + H + 1)
        Y = regressor_batch(model, q_s[span], qd[span], qdd[span], gravity, **extra_columns)
        if viscous:
            Y[:, np.arange(model.nv), viscous] = qd_friction[span]
        if coulomb:
            Y[:, np.arange(model.nv), coulomb] = np.sign(qd_friction[span])
        Y_f[start:start + chunk.size] = _filtered(base.regressor(Y), kernel, chunk - span.start)
        if progress is not None:
            progress(start + chunk.size, centres.size)
    tau_f = _filtered(tau, kernel, centres)
    return Equations(t[centres], Y_f, tau_f, rows, excluded, sampling, dt, H, edge * dt, noise, h,
                     decimate)


def _filtered(x, kernel, centres):
    """sum_k kernel[k] x[c - H + k] at each centre c (x along axis 0)."""
    H = len(kernel) // 2
    out = np.zeros((len(centres),) + x.shape[1:])
    for k, weight in enumerate(kernel):
        out += weight * x[centres - H + k]
    return out


def _unmodelled(model, q, qd, qd_friction, min_velocity):
    """{reason: (N, n) bool} samples where the rigid-body model with viscous and Coulomb friction is not what
    moved the joint."""
    slow = (np.abs(qd) < min_velocity) | (np.abs(qd_friction) < min_velocity)
    span = model.upper - model.lower
    margin = np.where(np.isfinite(span), LIMIT_MARGIN * span, 0.0)
    at_stop = (q <= model.lower + margin) | (q >= model.upper - margin)
    limit = np.where(np.isfinite(model.velocity_limit) & (model.velocity_limit > 0), model.velocity_limit, np.inf)
    saturated = np.maximum(np.abs(qd), np.abs(qd_friction)) >= SPEED_MARGIN * limit
    return {'slow': slow, 'limit': at_stop | saturated}


def _joint_columns(model, extra_columns, kind):
    """Column of each joint's viscous ('viscous': Fv) or Coulomb ('coulomb': Fc) parameter in the standard
    regressor, or None without them."""
    if not extra_columns.get(kind):
        return None
    names = parameter_names(model, **extra_columns)
    prefix = {'viscous': 'Fv', 'coulomb': 'Fc'}[kind]
    return [names.index(f'{prefix}{j + 1}') for j in range(model.nv)]
