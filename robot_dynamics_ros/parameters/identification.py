"""Least-squares identification of the base inertial parameters: tau = Y_base(q, qd, qdd) beta.

The base parameters (Gautier & Khalil 1990) are the identifiable combinations of the standard ones, so
the stacked base regressor has full column rank on an exciting trajectory and beta has a unique
least-squares estimate. Ordinary least squares, or Gautier's weighted least squares: each joint's
equations are divided by that joint's residual standard deviation from a first OLS pass, which makes
the errors of all rows comparable (joints with large torques no longer dominate the fit).
Standard deviations: from the residual variance, cov(beta) = sigma^2 (W^T W)^-1, W = weighted Y, for
independent equations (``identify`` without blocks); for a recording's filtered equations, which are correlated
in time, by the delete-a-block jackknife (``identify_equations``, ``jackknife.py``).
"""
from dataclasses import dataclass

import numpy as np
from scipy.stats import t as student_t

from ..fast import regressor   # compiled where numba imports: one call per sample
from .base_numeric import numeric_base_parameters
from .jackknife import block_jackknife

BLOCK_CORRELATION_TIMES = 1.0   # jackknife blocks span one correlation time of the filtered equations (2 H dt)
HELD_OUT_FRACTION = 0.2         # the last fifth of the equations in use is the held-out segment


@dataclass(frozen=True, eq=False)
class IdentificationResult:
    names: tuple
    beta: np.ndarray              # (b,) identified base parameters
    std: np.ndarray               # (b,) standard deviation of each estimate
    relative_std: np.ndarray      # (b,) 100 std / |beta|, in percent
    condition_number: float       # of the (weighted) stacked regressor
    relative_residual: float      # ||tau - Y beta|| / ||tau||, unweighted
    n_samples: int                # time samples (rows / joints)
    weights: np.ndarray = None    # per-joint weights of weighted least squares, None for OLS
    R: np.ndarray = None          # (b, b) triangular factor of the weighted stacked regressor, W = Q R
    dof: int = None               # degrees of freedom of std: equations - b, or jackknife blocks - 1
    std_method: str = 'residual variance'
    n_equations: int = None       # equations in use

    def interval(self, level=0.95):
        """(b,) half-widths of the two-sided ``level`` confidence intervals: Student's t quantile times std."""
        return student_t.ppf(0.5 + 0.5 * level, self.dof) * self.std

    def report(self):
        method = 'weighted least squares' if self.weights is not None else 'ordinary least squares'
        lines = [f"{len(self.beta)} base parameters from {self.n_samples} samples by {method}",
                 f"condition number {self.condition_number:.4g}, "
                 f"relative residual ||tau - Y beta|| / ||tau|| = {self.relative_residual:.4g}",
                 f"{'parameter':<12}{'value':>14}{'std':>12}{'rel. std %':>12}"]
        for name, value, s, r in zip(self.names, self.beta, self.std, self.relative_std):
            lines.append(f"{name:<12}{value:>14.6g}{s:>12.3g}{r:>12.3g}")
        if self.weights is not None:
            lines.append('joint weights 1/sigma_j: ' + ' '.join(f"{w:.4g}" for w in self.weights))
        return '\n'.join(lines)


def identify(Y_base, tau, weights=None, names=None, rows=None, blocks=None):
    """Least-squares beta with tau ~ Y_base beta.

    Y_base: (N, n, b) per-sample regressors, or (rows, b) already stacked; tau: (N, n) or (rows,).
    weights: None (OLS), or per-row weights broadcastable to tau's shape (e.g. (n,): one per joint).
    rows: optional boolean mask of tau's shape, the equations to use (default all).
    blocks: None (std from the residual variance, independent equations), or the jackknife block of each
    equation, broadcastable to tau's shape (e.g. (N, 1): one per time sample).
    """
    Y_base = np.asarray(Y_base, dtype=float)
    tau = np.asarray(tau, dtype=float)
    b = Y_base.shape[-1]
    if Y_base.shape[:-1] != tau.shape:
        raise ValueError(f"regressor of shape {Y_base.shape} does not match torques of shape {tau.shape}")
    w = np.ones(tau.shape) if weights is None else np.broadcast_to(np.asarray(weights, dtype=float), tau.shape)
    used = np.ones(tau.shape, dtype=bool) if rows is None else np.broadcast_to(rows, tau.shape)
    W = (w[..., None] * Y_base)[used]                                 # weighted observation matrix
    y = (w * tau)[used]
    if W.shape[0] <= b:
        raise ValueError(f"{W.shape[0]} equations cannot determine {b} parameters")
    beta, _, rank, singular_values = np.linalg.lstsq(W, y, rcond=None)
    if rank < b:
        raise ValueError(f"the regressor has rank {rank} < {b}: the data do not excite every base parameter")
    R = np.linalg.qr(W, mode='r')
    if blocks is None:
        sigma2 = np.sum((y - W @ beta) ** 2) / (W.shape[0] - b)       # residual variance
        R_inv = np.linalg.inv(R)                                      # (W^T W)^-1 = R^-1 R^-T
        std, dof, method = np.sqrt(sigma2 * np.sum(R_inv ** 2, axis=1)), W.shape[0] - b, 'residual variance'
    else:
        std, K = block_jackknife(W, y, np.broadcast_to(blocks, tau.shape)[used])
        dof, method = K - 1, f'delete-a-block jackknife over {K} blocks'
    with np.errstate(divide='ignore'):
        relative_std = 100.0 * std / np.abs(beta)
    residual = tau[used] - Y_base[used] @ beta
    return IdentificationResult(
        names=tuple(names) if names is not None else tuple(f"beta{k + 1}" for k in range(b)),
        beta=beta, std=std, relative_std=relative_std,
        condition_number=float(singular_values[0] / singular_values[-1]),
        relative_residual=float(np.linalg.norm(residual) / np.linalg.norm(tau[used])),
        n_samples=tau.shape[0], weights=None if weights is None else np.asarray(weights, dtype=float), R=R,
        dof=int(dof), std_method=method, n_equations=int(W.shape[0]))


def joint_weights(Y_base, tau, beta, rows):
    """Gautier's weights 1/sigma_j: sigma_j^2 = ||tau_j - Y_j beta||^2 / (N_j - b) per joint j, over the
    N_j equations of joint j in use (boolean mask ``rows``)."""
    b = Y_base.shape[2]
    residual = np.where(rows, tau - Y_base @ beta, 0.0)
    sigma = np.sqrt(np.sum(residual ** 2, axis=0) / np.maximum(np.sum(rows, axis=0) - b, 1))
    return 1.0 / np.maximum(sigma, 1e-12 * max(np.max(sigma), 1e-300))


def stacked_regressor(model, q, qd, qdd, gravity=None, progress=None, **extra_columns):
    """(N, n, p) standard regressors at each sample. progress(done, total) is called now and then."""
    N = len(q)
    Y = None
    for k in range(N):
        Yk = regressor(model, q[k], qd[k], qdd[k], gravity, **extra_columns)
        if Y is None:
            Y = np.empty((N,) + Yk.shape)
        Y[k] = Yk
        if progress is not None and ((k + 1) % 500 == 0 or k + 1 == N):
            progress(k + 1, N)
    return Y


def identify_base_parameters(model, q, qd, qdd, tau, base=None, weighted=False, gravity=None,
                             min_velocity=0.0, progress=None, **extra_columns):
    """Identify the base parameters of ``model`` from samples q, qd, qdd, tau (each (N, n), model order).

    base: BaseParameters (default: numeric base parameters of the model with the same extra columns,
    e.g. viscous=True, coulomb=True for friction). weighted: Gautier's per-joint weighted least squares.
    min_velocity: joint j's equation at a sample is left out where |qd_j| < min_velocity: while a joint
    sticks its Coulomb friction can be anything up to Fc, not Fc sign(qd) (on simulated stick-slip data,
    leaving these out took the friction estimates from 10-30 % to about 1 % error).
    progress(done, total): called while the regressor is computed. Returns (IdentificationResult, base).
    """
    if base is None:
        base = numeric_base_parameters(model, gravity=gravity, **extra_columns)
    tau = np.asarray(tau, dtype=float)
    Y_base = base.regressor(stacked_regressor(model, q, qd, qdd, gravity, progress, **extra_columns))
    rows = np.abs(np.asarray(qd)) >= min_velocity
    result = identify(Y_base, tau, names=base.names, rows=rows)
    if weighted:
        result = identify(Y_base, tau, weights=joint_weights(Y_base, tau, result.beta, rows), names=base.names,
                          rows=rows)
    return result, base


def identify_equations(equations, names, weighted=True, rows=None):
    """IdentificationResult of a recording's ``equations.Equations`` (OLS, then Gautier's weights if weighted),
    standard deviations by the delete-a-block jackknife over blocks of BLOCK_CORRELATION_TIMES correlation times.
    rows: a subset of ``equations.rows`` to use (default all of them)."""
    rows = equations.rows if rows is None else rows & equations.rows
    block = BLOCK_CORRELATION_TIMES * equations.correlation_time
    blocks = np.floor((equations.t - equations.t[0]) / block).astype(int)[:, None]
    result = identify(equations.Y, equations.tau, names=names, rows=rows, blocks=blocks)
    if weighted:
        weights = joint_weights(equations.Y, equations.tau, result.beta, rows)
        result = identify(equations.Y, equations.tau, weights=weights, names=names, rows=rows, blocks=blocks)
    return result


def held_out_torque_errors(equations, names, prior, weighted=True, fraction=HELD_OUT_FRACTION):
    """Fit without the last ``fraction`` of the equations in use (by time) and compare there.

    prior: (b,) base parameters of the URDF. Returns {'segment': (t0, t1) s, 'torque': (n,), 'urdf': (n,),
    'identified': (n,)}: per joint the RMS of the filtered efforts there, and the RMS errors (N m or N) of the prior
    and of the fit on the rest; None
    where the rest does not determine every base parameter (a short recording).
    """
    used_times = equations.t[np.any(equations.rows, axis=1)]
    start = used_times[int(np.floor((1 - fraction) * (len(used_times) - 1)))]
    held = equations.t >= start
    try:
        fit = identify_equations(equations, names, weighted, rows=equations.rows & ~held[:, None])
    except ValueError:   # rank deficient without the held-out segment, or too few blocks
        return None
    rows = equations.rows & held[:, None]

    def rms(x):
        return np.sqrt(np.sum(np.where(rows, x, 0.0) ** 2, axis=0) / np.maximum(np.sum(rows, axis=0), 1))
    return {'segment': (float(start), float(equations.t[-1])), 'torque': rms(equations.tau),
            'urdf': rms(equations.tau - equations.Y @ prior), 'identified': rms(equations.tau - equations.Y @ fit.beta)}
