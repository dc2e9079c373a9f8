"""A sliding contact in a certified pattern: Coulomb's law linearised about its slip direction (no ROS import).

A contact slides where its impulse lies on the cone's surface, lam_t = -mu lam_n d, d = y_t / |y_t| (maximum
dissipation), and its velocity on the dual cone's, y_n = mu |y_t| (``contact_active_set``'s conditions with y = A
lam + c). Not linear in y_t, so a pattern with a sliding contact is solved on the law linearised about the last
iterate's slip direction d and speed |y_t| (a Newton step on lam_t = -mu lam_n y_t / |y_t|):

    lam = lam_n (-mu d, 1) + lam_p (d_perp, 0)      d_perp = (-d_y, d_x)
    y_n - mu d . y_t = 0                             (the normal row held along the cone's surface)
    d_perp . y_t + k lam_p = 0                       k = |y_t| / (mu lam_n): the law's slope across d

Its two unknowns (lam_n, lam_p) replace the contact's three rows; the held rows' system is the Delassus matrix in
that basis, symmetric positive definite where the plain one is (k > 0 adds to its diagonal). A contact that starts
to slide (from sticking: no slip speed yet) takes k = inf: lam_p = 0, the friction at the cone's surface against d,
its velocity free (a Picard step, the first). The step's fixed point (``pattern_fixed_point``) iterates d and k
with De Saxce's shift until the slip across d is within its tolerance: then lam_p -> 0 and the contact meets the
exact conditions within that tolerance. A pattern whose sliding contact reverses (d . y_t < 0) sticks; one whose
normal impulse pulls is apart (``contact_active_set.revise_roles``). ``slip`` holds (d_x, d_y, k) per candidate,
and the last shift iterate, the shift its solution gave and the secant's slope (``next_shift``).

A sliding contact's shift s = mu |y_t| converges slowly by itself: raising s lowers the normal impulse and with it
the friction, which speeds the slip, by a factor g' = mu^2 a / (a_nn + mu^2 a) for a foot whose tangential and
normal mobilities are a and a_nn (0.39 at mu = 0.8 where they are equal): the trot's sliding steps took 7-8
iterations. ``next_shift`` takes the secant step on s = g(s) from the last two iterates (Newton's with the slope
measured), the slope held within [0, MAX_SLOPE]. g' changes little from one step to the next (the mobilities
follow the pose), so a step's first iterate takes the last slope measured at its point.
"""
import numpy as np

from ..algorithms.backends import njit
from ..algorithms.cholesky import cholesky_factor, cholesky_solve
from ..algorithms.least_norm import least_norm_semidefinite
from .roles import SLIDE

# slip's columns per candidate: d_x, d_y, k, the last shift iterate and the shift its solution gave, the secant's slope
SLIP_COLUMNS = 6
PIVOT_RATIO = 1e-12   # as contact_active_set's: smallest / largest pivot below this is singular
MAX_SLOPE = 0.9       # of the secant on the shift: a step at most ten times the fixed point's own
# The fixed point's iterations a pattern with a sliding contact may take before the bounded sweeps take the step: the
# trot's sliding steps take 3-5 (A1, Go1: 98 % within 5, 99.7 % within 9); a robot lying on many points near the
# cone's edge may not converge at all, and each iteration is a solve
SLIDING_ITERATIONS = 10
# The least-squares solves (iterations and revisions) such a pattern may take where its held rows are singular
# (more than the robot's freedoms): each is O(n^3) in the held rows; a box sliding on its four corners takes 1 a
# step, ANYmal C lying on 22 points spent 0.3 ms a step on solves that did not certify
SINGULAR_SLIDING_SOLVES = 3


@njit()
def planar_length(x, y):
    """|(x, y)| as the square root of the sum of squares: np.hypot guards against overflow at several times the
    cost (a third of a sweep of ``bounded_solve``), and impulses and velocities are far from it."""
    return np.sqrt(x * x + y * y)


@njit()
def slip_of(fx, fy, fn, slip_speed, mu, slip, i):
    """slip[i] = (d, k) of a contact whose impulse is (fx, fy, fn) and slip speed |y_t| (the friction opposes the
    slip: d = -lam_t / |lam_t|; k = inf where lam_n or the speed is zero)."""
    radius = planar_length(fx, fy)
    slip[i, 0], slip[i, 1] = (-fx / radius, -fy / radius) if radius > 0.0 else (1.0, 0.0)
    slip[i, 2] = slip_speed / (mu * fn) if fn > 0.0 and mu > 0.0 and slip_speed > 0.0 else np.inf
    slip[i, 3] = np.nan                             # no shift iterate yet (``next_shift``)
    slip[i, 5] = 0.0                                # no secant slope measured: the fixed point's own step


@njit()
def guess_slip(impulses, which, nc, shift, mu, contact_roles, slip, slope):
    """(d, k) of each sliding candidate from the last step's impulse of its point and its shift s = mu |y_t|, and
    the last secant slope measured at its point (``slope``, per point: 0 where none was, or the point was no
    candidate in the last step)."""
    for i in range(nc):
        if contact_roles[i] == SLIDE:
            f = impulses[which[i]]
            slip_of(f[0], f[1], f[2], shift[i] / mu if mu > 0.0 else 0.0, mu, slip, i)
        slip[i, 5] = slope[which[i]]


@njit()
def any_sliding(contact_roles):
    """Whether a contact of the pattern slides."""
    for role in contact_roles:
        if role == SLIDE:
            return True
    return False


@njit()
def expansion(r, nc, contact_roles, slip, mu):
    """The original rows and coefficients of the unknown held in row r (``fix_pattern``: a sliding contact holds
    lam_p in its x row, where k is finite, and lam_n in its normal row): (count, rows, coefficients), three of each
    (values: no buffer), the first ``count`` used."""
    i = r // 3
    if r < 3 * nc and contact_roles[i] == SLIDE:
        dx, dy = slip[i, 0], slip[i, 1]
        if r == 3 * i + 2:          # lam_n: (-mu d, 1)
            return 3, (3 * i, 3 * i + 1, r), (-mu * dx, -mu * dy, 1.0)
        return 2, (3 * i, 3 * i + 1, r), (-dy, dx, 0.0)   # lam_p: (d_perp, 0)
    return 1, (r, r, r), (1.0, 0.0, 0.0)


@njit()
def sliding_system(A, c, m, lam, free, L, F, nc, contact_roles, slip, mu, rhs):
    """The held unknowns' system K x = rhs of a pattern with sliding contacts (lam_n, lam_p of a sliding contact, a
    row's lam otherwise, in F): K = E^T A E plus k on each lam_p, rhs = -E^T (c + A_X lam_X), K whole in L; returns
    the number of held unknowns."""
    n = 0
    for r in range(m):
        if free[r]:
            F[n] = r
            n += 1
    counts, rows, coefficients = np.empty(n, dtype=np.int64), np.empty((n, 3), dtype=np.int64), np.empty((n, 3))
    for a in range(n):                              # each unknown's rows, once (not once per entry of K)
        counts[a], rows_a, coefficients_a = expansion(F[a], nc, contact_roles, slip, mu)
        for k in range(3):
            rows[a, k], coefficients[a, k] = rows_a[k], coefficients_a[k]
    for a in range(n):
        value = 0.0
        for k in range(counts[a]):
            row = rows[a, k]
            fixed = c[row]
            for s in range(m):
                if not free[s]:
                    fixed += A[row, s] * lam[s]
            value -= coefficients[a, k] * fixed
        rhs[a] = value
        for b in range(a + 1):
            entry = 0.0
            for k in range(counts[a]):
                for j in range(counts[b]):
                    entry += coefficients[a, k] * coefficients[b, j] * A[rows[a, k], rows[b, j]]
            L[a, b] = L[b, a] = entry
        r = F[a]
        if r < 3 * nc and r % 3 == 0 and contact_roles[r // 3] == SLIDE:
            L[a, a] += slip[r // 3, 2]
    return n


@njit()
def sliding_held_rows(A, c, m, lam, free, L, F, nc, contact_roles, slip, mu, rhs):
    """``contact_active_set.held_rows`` on a pattern with sliding contacts: the held unknowns by Cholesky of
    ``sliding_system`` (in L), lam then written in the contact's rows (``contact_rows``). The number of held
    unknowns, or -1 where the system is singular."""
    n = sliding_system(A, c, m, lam, free, L, F, nc, contact_roles, slip, mu, rhs)
    index = np.arange(n)
    if not cholesky_factor(L, index, L, n, 0.0, PIVOT_RATIO):
        return -1
    cholesky_solve(L, n, rhs, index)
    for a in range(n):
        lam[F[a]] = rhs[a]
    contact_rows(lam, nc, contact_roles, slip, mu)
    return n


@njit()
def closest_sliding_held_rows(A, c, m, lam, free, previous, L, F, nc, contact_roles, slip, mu, rhs):
    """``contact_active_set.closest_held_rows`` on a pattern with sliding contacts (a singular ``sliding_system``):
    of its solutions, the one closest to the last solve's impulses ``previous`` (in the held unknowns: a sliding
    contact's lam_n and lam_p = d_perp . lam_t)."""
    n = sliding_system(A, c, m, lam, free, L, F, nc, contact_roles, slip, mu, rhs)
    start = np.empty(n)
    for a in range(n):
        r = F[a]
        start[a] = previous[r]
        if r < 3 * nc and r % 3 == 0 and contact_roles[r // 3] == SLIDE:
            start[a] = -slip[r // 3, 1] * previous[r] + slip[r // 3, 0] * previous[r + 1]
    for a in range(n):
        for b in range(n):
            rhs[a] -= L[a, b] * start[b]
    step = np.empty(n)
    if not least_norm_semidefinite(L[:n, :n], rhs[:n], step, PIVOT_RATIO):
        step = np.linalg.lstsq(L[:n, :n], rhs[:n], PIVOT_RATIO)[0]
    for a in range(n):
        lam[F[a]] = start[a] + step[a]
    contact_rows(lam, nc, contact_roles, slip, mu)


@njit()
def contact_rows(lam, nc, contact_roles, slip, mu):
    """A sliding contact's (lam_p, 0, lam_n) in its rows back to its impulse: lam_t = -mu lam_n d + lam_p d_perp."""
    for i in range(nc):
        if contact_roles[i] == SLIDE:
            normal, across = lam[3 * i + 2], lam[3 * i]
            dx, dy = slip[i, 0], slip[i, 1]
            lam[3 * i] = -mu * normal * dx - across * dy
            lam[3 * i + 1] = -mu * normal * dy + across * dx


@njit()
def sliding_certified(i, lam, y, mu, slip, impulse_tolerance, velocity_tolerance):
    """A sliding contact's conditions at its slip direction: the normal row held along the cone (y_n = mu d . y_t),
    lam_n >= 0, and sliding along d (d . y_t >= 0)."""
    n = 3 * i + 2
    along = slip[i, 0] * y[n - 2] + slip[i, 1] * y[n - 1]
    return abs(y[n] - mu * along) <= velocity_tolerance and lam[n] >= -impulse_tolerance and \
        along >= -velocity_tolerance


@njit()
def update_slip(i, ux, uy, lam, mu, slip, tolerance):
    """After an iteration of the fixed point, the sliding contact i's slip (d, k) at its velocity u_t = (ux, uy);
    whether the last one held: its slip across d within the tolerance (mu |d_perp . u_t|, as the shift's), from a
    linearisation with k finite (k = inf: not yet a Newton step)."""
    across = -slip[i, 1] * ux + slip[i, 0] * uy
    converged = slip[i, 2] < np.inf and mu * abs(across) <= tolerance
    speed = planar_length(ux, uy)
    if speed > 0.0:
        slip[i, 0], slip[i, 1] = ux / speed, uy / speed
    normal = lam[3 * i + 2]
    slip[i, 2] = speed / (mu * normal) if normal > 0.0 and speed > 0.0 else np.inf
    return converged


@njit()
def onto_cones(lam, nc, mu, contact_roles):
    """A sliding contact's impulse onto its cone's surface, |lam_t| = mu lam_n, its direction kept: lam_p leaves it
    outside by (lam_p / mu lam_n)^2 / 2 of mu lam_n, which the fixed point drives to zero."""
    for i in range(nc):
        if contact_roles[i] == SLIDE:
            radius, limit = planar_length(lam[3 * i], lam[3 * i + 1]), mu * max(lam[3 * i + 2], 0.0)
            if radius > limit:
                scale = limit / radius
                lam[3 * i] *= scale
                lam[3 * i + 1] *= scale


@njit()
def next_shift(i, shift, solved_shift, slip):
    """The sliding candidate i's next shift iterate from this one, ``shift``, and the one its solution gave,
    ``solved_shift`` = mu |u_t| (the fixed point's own next iterate): the secant step on s = g(s), its slope
    measured from the last two iterates (within [0, MAX_SLOPE], kept in slip[i, 5]) or, at the step's first
    iterate, the last one measured at its point (0: the fixed point's own step); at least zero."""
    last, last_solved = slip[i, 3], slip[i, 4]
    slip[i, 3], slip[i, 4] = shift, solved_shift
    if not (np.isnan(last) or shift == last):
        slip[i, 5] = min(max((solved_shift - last_solved) / (shift - last), 0.0), MAX_SLOPE)
    return max(shift + (solved_shift - shift) / (1.0 - slip[i, 5]), 0.0)
