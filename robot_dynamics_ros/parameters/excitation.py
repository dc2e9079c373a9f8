"""Excitation trajectories for identification: finite Fourier series optimised for the regressor.

Swevers, Ganseman, Tukel, De Schutter, Van Brussel, "Optimal robot excitation and identification",
IEEE T-RA 13(5) 1997: each joint follows a periodic finite Fourier series with base pulsation
w = 2 pi / T and L harmonics,

    q_j(t)   = q0_j + sum_l  a_jl / (w l) sin(w l t) - b_jl / (w l) cos(w l t)
    qd_j(t)  =        sum_l  a_jl cos(w l t) + b_jl sin(w l t)
    qdd_j(t) =        sum_l  w l (-a_jl sin(w l t) + b_jl cos(w l t)),

so that the motion is periodic (noise can be averaged over periods) and band limited (it excites no
unmodelled high-frequency dynamics and survives the low-pass filtering of the measurements). Here the
first harmonic is chosen so that the robot starts and ends at rest (qd = qdd = 0 at t = 0 and T), and
each joint's series is scaled to use its position range (about the centre q0) and velocity limit
within margins. The free coefficients minimise the condition number of the base regressor stacked
over samples of one period (the criterion of Gautier & Khalil's identification), by scipy's L-BFGS-B
within a wall-clock budget (best point found so far is kept).
"""
import time
from dataclasses import dataclass

import numpy as np
import yaml
from scipy.optimize import minimize

from ..fast import regressor_batch
from ..model.model import REVOLUTE
from .base_numeric import numeric_base_parameters


@dataclass(frozen=True, eq=False)
class FourierTrajectory:
    period: float
    q0: np.ndarray           # (n,) centre positions
    a: np.ndarray            # (n, L) cosine coefficients of qd
    b: np.ndarray            # (n, L) sine coefficients of qd
    condition_number: float = float('nan')  # of the stacked base regressor it was optimised for

    def evaluate(self, t):
        """(q, qd, qdd) at times t (any shape (N,)), each (N, n)."""
        t = np.asarray(t, dtype=float)[:, None, None]
        wl = 2 * np.pi / self.period * np.arange(1, self.a.shape[1] + 1)       # w l, (L,)
        s, c = np.sin(wl * t), np.cos(wl * t)                                  # (N, 1, L)
        q = self.q0 + np.sum((self.a * s - self.b * c) / wl, axis=2)
        qd = np.sum(self.a * c + self.b * s, axis=2)
        qdd = np.sum(wl * (-self.a * s + self.b * c), axis=2)
        return q, qd, qdd

    def sample(self, rate):
        """(times, q, qd, qdd) over one period, both ends included, at ``rate`` samples per second."""
        times = np.linspace(0.0, self.period, int(round(self.period * rate)) + 1)
        return (times, *self.evaluate(times))


def rest_to_rest(free_a, free_b):
    """Full (n, L) coefficients from the free harmonics 2..L, with qd(0) = 0 and qdd(0) = 0:
    sum_l a_jl = 0 and sum_l l b_jl = 0 fix the first harmonic."""
    harmonics = np.arange(2, free_a.shape[1] + 2)
    a = np.column_stack([-free_a.sum(axis=1), free_a])
    b = np.column_stack([-(free_b * harmonics).sum(axis=1), free_b])
    return a, b


def joint_ranges(model, position_margin, velocity_fraction):
    """Centre, usable half range and usable speed per joint (unlimited joints: +-pi or +-1 m, 2 rad/s)."""
    span = np.where(model.joint_type[model.coordinate_bodies] == REVOLUTE, np.pi, 1.0)   # (mimic joints: none)
    lower = np.where(np.isfinite(model.lower), model.lower, -span)
    upper = np.where(np.isfinite(model.upper), model.upper, span)
    speed = np.where(np.isfinite(model.velocity_limit), model.velocity_limit, 2.0)
    return 0.5 * (lower + upper), 0.5 * (upper - lower) * (1 - position_margin), speed * velocity_fraction


def fit_to_limits(trajectory, half_range, max_speed, max_acceleration=None, n_check=2000):
    """Scale each joint's coefficients so that |q - q0| <= half_range and |qd| <= max_speed (and
    |qdd| <= max_acceleration when given) at n_check times over the period; each joint touches its tightest
    bound (between check times the bounds can be exceeded by a fraction of a per mille)."""
    _, q, qd, qdd = trajectory.sample(n_check / trajectory.period)
    ratios = [half_range / np.max(np.abs(q - trajectory.q0), axis=0), max_speed / np.max(np.abs(qd), axis=0)]
    if max_acceleration is not None:
        ratios.append(max_acceleration / np.max(np.abs(qdd), axis=0))
    scale = np.min(ratios, axis=0)[:, None]
    return FourierTrajectory(trajectory.period, trajectory.q0, trajectory.a * scale, trajectory.b * scale)


def optimise_excitation(model, duration=10.0, harmonics=5, time_budget=30.0, seed=0, gravity=None,
                        position_margin=0.1, velocity_fraction=0.8, max_acceleration=None, n_samples=40,
                        max_evaluations=None, base=None, **extra_columns):
    """Fourier excitation trajectory of period ``duration`` for ``model``, optimised for cond(Y_base).

    harmonics: L >= 2 (the first is fixed by the rest-to-rest conditions). time_budget: wall-clock
    seconds for the optimiser; max_evaluations: a cap on objective evaluations (deterministic, unlike
    the budget). n_samples: times per period at which the regressor is stacked.
    extra_columns (viscous, coulomb, ...): as for the regressor, so friction columns are excited too.
    """
    if harmonics < 2:
        raise ValueError("at least 2 harmonics are needed (the first one enforces rest at the ends)")
    if base is None:
        base = numeric_base_parameters(model, gravity=gravity, **extra_columns)
    n, free = model.nv, harmonics - 1
    q0, half_range, max_speed = joint_ranges(model, position_margin, velocity_fraction)
    sample_times = np.linspace(0.0, duration, n_samples, endpoint=False)

    def trajectory(x):
        a, b = rest_to_rest(x[:n * free].reshape(n, free), x[n * free:].reshape(n, free))
        return fit_to_limits(FourierTrajectory(duration, q0, a, b), half_range, max_speed, max_acceleration)

    def log_condition(x):
        q, qd, qdd = trajectory(x).evaluate(sample_times)
        Y = base.regressor(regressor_batch(model, q, qd, qdd, gravity, **extra_columns))
        Y = Y.reshape(-1, Y.shape[-1])
        s = np.linalg.svd(Y, compute_uv=False)
        return np.log(s[0] / s[-1]) if s[-1] > 0 else np.inf

    deadline = time.monotonic() + time_budget
    best = {'f': np.inf, 'x': None, 'evaluations': 0}

    def objective(x):
        out_of_time = time.monotonic() > deadline
        if best['x'] is not None and (out_of_time or best['evaluations'] == max_evaluations):
            raise TimeoutError
        best['evaluations'] += 1
        f = log_condition(x)
        if f < best['f']:
            best.update(f=f, x=x.copy())
        return f

    x0 = np.random.default_rng(seed).normal(size=2 * n * free)
    try:
        minimize(objective, x0, method='L-BFGS-B')
    except TimeoutError:
        pass
    if best['x'] is None:
        raise ValueError("no excitation trajectory with a full-rank base regressor was found")
    result = trajectory(best['x'])
    return FourierTrajectory(result.period, result.q0, result.a, result.b, float(np.exp(best['f'])))


def excitation_trajectory(model, duration=10.0, harmonics=5, rate=100.0, **options):
    """(times, q, qd, qdd) of an optimised excitation trajectory (``optimise_excitation`` options)."""
    return optimise_excitation(model, duration, harmonics, **options).sample(rate)


def write_trajectory(path, joint_names, times, q, qd=None, qdd=None, comment=''):
    """Write a sampled trajectory as a ROS 2 parameter file for the ``trajectory_publisher`` node (mode
    'waypoints': ``joints``, ``waypoints`` flat row-major, ``waypoint_times``) or, for a ``.csv`` path,
    as a table t, q_<joint>..., qd_<joint>..., qdd_<joint>.... The robot should start at rest at q[0]."""
    path = str(path)
    joint_names = list(joint_names)
    if path.endswith('.csv'):
        groups = [('q', q)] + [(p, v) for p, v in (('qd', qd), ('qdd', qdd)) if v is not None]
        header = ['t'] + [f"{p}_{j}" for p, _ in groups for j in joint_names]
        np.savetxt(path, np.column_stack([times] + [v for _, v in groups]), delimiter=',',
                   header=','.join(header), comments='')
        return
    params = {'mode': 'waypoints', 'joints': joint_names,
              'waypoint_times': [float(t) for t in times],
              'waypoints': [float(x) for x in np.asarray(q).reshape(-1)]}
    with open(path, 'w', encoding='utf-8') as f:
        for line in comment.splitlines():
            f.write(f"# {line}\n")
        yaml.safe_dump({'trajectory_publisher': {'ros__parameters': params}}, f, default_flow_style=None,
                       sort_keys=False, width=120)
