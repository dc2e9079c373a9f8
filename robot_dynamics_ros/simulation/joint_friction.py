"""One step of Coulomb friction and joint stops at the velocity level (no ROS import).

Given the velocity w a joint-space step would reach without friction and stops, the velocity after it is

    v = argmin_v  1/2 (v - w)^T M (v - w) + sum_i b_i |v_i|   subject to  v_lo <= v <= v_hi,

with b_i = dt F_i the friction impulse bound and [v_lo, v_hi] (which contains 0) the velocities that keep
q + dt v inside the joint limits. This is the maximum-dissipation principle for friction together with
perfectly inelastic unilateral stops (Moreau's sweeping process). Its optimality conditions say which joints
slide, which stick, which rest on a stop; with p = M (v - w) the generalized impulse of friction and stops
and s_i = sign(v_i) (any value in [-1, 1] where v_i = 0):

    sliding:     v_lo < v_i < v_hi, v_i != 0     p_i = -b_i s_i
    sticking:    v_i = 0 inside (v_lo, v_hi)     |p_i| <= b_i
    on a stop:   v_i = v_lo (v_hi)               p_i = -b_i s_i + lambda_i, lambda_i >= 0 (<= 0): a stop only pushes

Every joint is given one of these roles (a pattern); a pattern fixes the velocity of the sticking and stopped
joints, the sliding rows of M (v - w) + b sign(v) = 0 then give the others, and the pattern is right when
the conditions above hold. Projected coordinate descent (each v_i the clipped, soft-thresholded 1-D
minimiser) guesses the pattern; the guess is checked exactly after every sweep.
"""
import numpy as np

from .roles import AT_LOWER, AT_UPPER, SLIDE as SLIDING, STICK as STICKING   # one set of codes (roles.py)
MAX_PIVOTS = 50
MAX_SWEEPS = 200


def solve_velocity_step(M, w, impulse_bound, v_lo, v_hi, guess=None):
    """(v, pattern): the minimiser above and the role of each joint (SLIDING, STICKING, AT_LOWER, AT_UPPER).

    M: (n, n) positive definite mass matrix; w: (n,) free velocity; impulse_bound: (n,) dt * friction >= 0;
    v_lo <= 0 <= v_hi: (n,) velocity bounds, -inf / +inf where unbounded. guess: a pattern to try first
    (e.g. the previous step's). Pivoting moves every joint that breaks its condition to the role the
    candidate asks for (at most MAX_PIVOTS times); should that cycle, projected coordinate descent takes over
    (at most MAX_SWEEPS sweeps, each checked exactly). Exact whenever a pattern verifies; otherwise the
    last descent iterate, which lies within the bounds. Always finite for finite M and w.
    """
    b = impulse_bound
    if guess is not None and np.all(guess == SLIDING):
        v = _all_sliding(M, w, b, v_lo, v_hi)
        if v is not None:
            return v, guess
    v = np.clip(w, v_lo, v_hi) if guess is None else _velocity_of_pattern(guess, w, v_lo, v_hi)
    pattern, sign = _pattern_of(v, b, v_lo, v_hi), np.sign(v)
    tolerance = 1e-9 * (np.max(b) + np.max(np.abs(M @ w)) + 1e-300)
    for _ in range(MAX_PIVOTS):
        candidate, p = _solve_pattern(M, w, b, v_lo, v_hi, pattern, sign)
        broken = _broken_conditions(candidate, p, b, v_lo, v_hi, pattern, sign, tolerance)
        if not np.any(broken):
            return np.clip(candidate, v_lo, v_hi), pattern
        pattern, sign = _pivot(candidate, p, b, v_lo, v_hi, pattern, sign, broken)
    v = np.clip(w, v_lo, v_hi)
    for _ in range(MAX_SWEEPS):
        for i in range(w.size):   # one sweep of projected coordinate descent
            unconstrained = v[i] - M[i] @ (v - w) / M[i, i]
            shrunk = np.sign(unconstrained) * max(abs(unconstrained) - b[i] / M[i, i], 0.0)
            v[i] = min(max(shrunk, v_lo[i]), v_hi[i])
        pattern, sign = _pattern_of(v, b, v_lo, v_hi), np.sign(v)
        candidate, p = _solve_pattern(M, w, b, v_lo, v_hi, pattern, sign)
        if not np.any(_broken_conditions(candidate, p, b, v_lo, v_hi, pattern, sign, tolerance)):
            return np.clip(candidate, v_lo, v_hi), pattern
    return v, _pattern_of(v, b, v_lo, v_hi)


def _all_sliding(M, w, b, v_lo, v_hi):
    """The first try of the loop below for a guess where every joint slides (the common case in motion),
    without its general bookkeeping: v = w - M^-1 b sign(v), or None when that pattern does not verify."""
    v0 = np.clip(w, v_lo, v_hi)
    sign = np.sign(v0)
    rubbing = b > 0
    if ((v0 <= v_lo) | (v0 >= v_hi) | (rubbing & (v0 == 0.0))).any():
        return None   # not every joint slides
    v = w + np.linalg.solve(M, -b * sign)
    slack = 1e-12 * (1.0 + np.abs(v))
    if ((v < v_lo - slack) | (v > v_hi + slack) | (rubbing & (np.sign(v) != sign))).any():
        return None
    return np.clip(v, v_lo, v_hi)


def _velocity_of_pattern(pattern, w, v_lo, v_hi):
    """Velocities with the roles of ``pattern``: 0 when sticking, the bound on a stop, else w (clipped).
    A stop whose bound is now infinite (e.g. a continuous joint after the brakes let go) is no stop."""
    v = np.clip(w, v_lo, v_hi)
    v[pattern == STICKING] = 0.0
    on_lower, on_upper = (pattern == AT_LOWER) & np.isfinite(v_lo), (pattern == AT_UPPER) & np.isfinite(v_hi)
    v[on_lower] = v_lo[on_lower]
    v[on_upper] = v_hi[on_upper]
    return v


def _pattern_of(v, impulse_bound, v_lo, v_hi):
    pattern = np.full(v.size, SLIDING)
    pattern[(v == 0.0) & (impulse_bound > 0)] = STICKING
    pattern[v <= v_lo] = AT_LOWER
    pattern[v >= v_hi] = AT_UPPER
    return pattern


def _solve_pattern(M, w, impulse_bound, v_lo, v_hi, pattern, sign):
    """(v, p) for ``pattern`` with sliding directions ``sign``: held joints fixed, sliding rows solved."""
    v = _velocity_of_pattern(pattern, w, v_lo, v_hi)
    held, free = pattern != SLIDING, pattern == SLIDING
    if np.any(free):
        # Sliding rows: M_ff (v_f - w_f) + M_fh (v_h - w_h) + b_f sign_f = 0.
        rhs = M[np.ix_(free, held)] @ (w[held] - v[held]) - impulse_bound[free] * sign[free]
        v[free] = w[free] + np.linalg.solve(M[np.ix_(free, free)], rhs)
    return v, M @ (v - w)


def _impulse_range(v, b, v_lo, v_hi):
    """[low, high] allowed for p_i at v_i: friction's -b sign(v) ([-b, b] at 0), widened by a stop."""
    low = np.where(v >= v_hi, -np.inf, np.where(v < 0, b, -b))   # an upper stop adds any lambda <= 0
    high = np.where(v <= v_lo, np.inf, np.where(v > 0, -b, b))   # a lower stop any lambda >= 0
    return low, high


def _broken_conditions(v, p, b, v_lo, v_hi, pattern, sign, tolerance):
    """Joints whose optimality condition fails: sliding out of bounds or against its sign, or held by an
    impulse outside its range."""
    free = pattern == SLIDING
    slack = 1e-12 * (1.0 + np.abs(v))
    broken = free & ((v < v_lo - slack) | (v > v_hi + slack) | ((b > 0) & (np.sign(v) != sign)))
    low, high = _impulse_range(v, b, v_lo, v_hi)   # used on the held joints, whose v is their role's value
    return broken | (~free & ((p < low - tolerance) | (p > high + tolerance)))


def _pivot(v, p, b, v_lo, v_hi, pattern, sign, broken):
    """New roles for the broken joints: a sliding one stops at the bound it passed or sticks where its
    sign flipped; a held one is released to slide the way its impulse would push it."""
    pattern, sign = pattern.copy(), sign.copy()
    for i in np.flatnonzero(broken):
        if pattern[i] == SLIDING:
            pattern[i] = AT_LOWER if v[i] < v_lo[i] else AT_UPPER if v[i] > v_hi[i] else STICKING
            if pattern[i] == STICKING and (v_lo[i] == 0 or v_hi[i] == 0):
                pattern[i] = AT_LOWER if v_lo[i] == 0 else AT_UPPER
        else:
            low, _ = _impulse_range(v[i:i + 1], b[i:i + 1], v_lo[i:i + 1], v_hi[i:i + 1])
            direction = 1.0 if p[i] < low[0] else -1.0   # an impulse too low for the hold: it moves up
            pattern[i] = SLIDING
            sign[i] = np.sign(v[i]) if v[i] != 0 else direction
    return pattern, sign
