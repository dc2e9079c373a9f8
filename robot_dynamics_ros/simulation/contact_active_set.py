"""The contact step's cone program solved on a guessed active set, and certified (no ROS import).

Problem (1) of ``ground_contact``: min_lam 1/2 lam^T A lam + c^T lam over lam in K, the product of Coulomb cones
|lam_t| <= mu lam_n (contacts, 3 rows each), free rows (bilateral), boxes |lam| <= b (joint friction, drives) and
half-lines lam >= 0 (stops). With y = A lam + c (each row's velocity plus its offset beta), its optimality (KKT)
conditions are, block by block:

    contact sticking:  y_i = 0,  mu lam_n >= |lam_t|         contact apart:  lam_i = 0,  y_n >= mu |y_t|
    bilateral:         y = 0
    boxed inside:      y = 0,  |lam| <= b                    boxed at +b (-b):  lam = +b (-b),  y <= 0 (>= 0)
    stop pushing:      y = 0,  lam >= 0                      stop idle:  lam = 0,  y >= 0

A pattern gives each block one of these roles. It fixes lam on the rows whose role fixes it and asks y = 0 on the
others (F): one linear solve A_FF lam_F = -(c_F + A_FX lam_X), by Cholesky, or, where A_FF is singular (more held
rows than freedoms: a box on four corners, a robot whose feet and joints all stick), the least-norm solution. When
the result meets every condition above it is the optimum: the problem is convex, so the KKT conditions are
sufficient (where A_FF is singular the optimal impulses are not unique: this is one of them, the velocity is). A
robot standing or walking keeps its pattern from one step to the next, so the last step's pattern, certified,
replaces the interior-point solve on most steps. A sliding contact (lam on the cone's surface: a non-linear
condition), or a pattern that no longer holds (or whose least-norm impulses leave a box or a cone where other
optimal ones would not) is left to the interior-point solver.
"""
import numpy as np

STICK, APART, SLIDE = 0, 1, 2        # contact roles (SLIDE: not certifiable here)
INSIDE, AT_UPPER, AT_LOWER = 0, 1, -1  # boxed rows: lam inside the box, at +b, at -b
IDLE, PUSHING = 0, 1                 # stops

VELOCITY_TOLERANCE = 1e-10   # m/s or rad/s: a condition on y holds within this
IMPULSE_TOLERANCE = 1e-12    # N s or N m s, plus 1e-9 of the largest impulse: a condition on lam holds within this
GUESS_TOLERANCE = 1e-6      # of the largest impulse: a solution this close to a bound is taken to be on it
PIVOT_RATIO = 1e-12          # smallest / largest pivot (or singular value) of A_FF below this: singular


def solve_on_pattern(A, c, nc, n_bilateral, bound, n_stops, mu, contact_roles, box_roles, stop_roles):
    """lam, the optimum of problem (1) over the rows [contacts | bilateral | boxed | stops], if the pattern (roles
    per contact, per boxed row, per stop) certifies it; else None."""
    m = len(c)
    if np.any(contact_roles == SLIDE):
        return None
    start_box = 3 * nc + n_bilateral
    start_stop = start_box + len(bound)
    lam, fixed = np.zeros(m), np.zeros(m, dtype=bool)
    apart = np.flatnonzero(contact_roles == APART)
    fixed[(3 * apart[:, None] + np.arange(3)).reshape(-1)] = True
    at_bound = np.flatnonzero(box_roles != INSIDE)
    lam[start_box + at_bound] = box_roles[at_bound] * bound[at_bound]
    fixed[start_box + at_bound] = True
    fixed[start_stop + np.flatnonzero(stop_roles == IDLE)] = True
    if fixed.any():
        F = np.flatnonzero(~fixed)
        A_FF, rhs = A[np.ix_(F, F)], -(c[F] + A[np.ix_(F, np.flatnonzero(fixed))] @ lam[fixed])
    else:   # every row held: the common case of a robot standing on its feet
        F, A_FF, rhs = slice(None), A, -c
    if A_FF.size:
        lam[F] = _solve_held_rows(A_FF, rhs)
    y = A @ lam + c
    return lam if _optimal(lam, y, ~fixed, nc, start_box, start_stop, bound, mu, box_roles) else None


def _solve_held_rows(A_FF, rhs):
    """A solution of A_FF lam_F = rhs: by Cholesky, or, where A_FF is singular (more held rows than the robot has
    freedoms: feet and joints all sticking), the least-norm one; whether it solves the system is checked after."""
    try:
        pivots = np.diagonal(np.linalg.cholesky(A_FF)) ** 2
        if pivots.min() >= PIVOT_RATIO * pivots.max():
            return np.linalg.solve(A_FF, rhs)
    except np.linalg.LinAlgError:
        pass
    return np.linalg.lstsq(A_FF, rhs, rcond=PIVOT_RATIO)[0]


def _optimal(lam, y, free, nc, start_box, start_stop, bound, mu, box_roles):
    """The KKT conditions above, within the tolerances."""
    impulse_tolerance = IMPULSE_TOLERANCE + 1e-9 * np.max(np.abs(lam), initial=0.0)
    if np.any(np.abs(y[free]) > VELOCITY_TOLERANCE):
        return False
    contact_lam, contact_y = lam[:3 * nc].reshape(-1, 3), y[:3 * nc].reshape(-1, 3)
    touching = free[:3 * nc:3]
    tangential = np.hypot(contact_lam[:, 0], contact_lam[:, 1])
    if np.any(tangential[touching] > mu * contact_lam[touching, 2] + impulse_tolerance):
        return False
    apart_y = contact_y[~touching]
    if np.any(mu * np.hypot(apart_y[:, 0], apart_y[:, 1]) > apart_y[:, 2] + VELOCITY_TOLERANCE):
        return False
    box_lam, box_y = lam[start_box:start_stop], y[start_box:start_stop]
    if np.any(np.abs(box_lam[box_roles == INSIDE]) > bound[box_roles == INSIDE] + impulse_tolerance):
        return False
    if np.any(box_y[box_roles == AT_UPPER] > VELOCITY_TOLERANCE) or \
            np.any(box_y[box_roles == AT_LOWER] < -VELOCITY_TOLERANCE):
        return False
    stop_lam, stop_y, stop_free = lam[start_stop:], y[start_stop:], free[start_stop:]
    return not (np.any(stop_lam[stop_free] < -impulse_tolerance)
                or np.any(stop_y[~stop_free] < -VELOCITY_TOLERANCE))


def roles_of(lam, nc, n_bilateral, bound, mu):
    """(contact roles, box roles, stop roles) of a solution: the pattern to try first on the next step. The
    interior-point solver stops within ~1e-8 of a bound: a guess takes GUESS_TOLERANCE (the check stays strict)."""
    impulse_tolerance = IMPULSE_TOLERANCE + GUESS_TOLERANCE * np.max(np.abs(lam), initial=0.0)
    contact = lam[:3 * nc].reshape(-1, 3)
    tangential = np.hypot(contact[:, 0], contact[:, 1])
    contact_roles = np.where(contact[:, 2] <= impulse_tolerance, APART,
                             np.where(tangential < mu * contact[:, 2] - impulse_tolerance, STICK, SLIDE))
    start_box = 3 * nc + n_bilateral
    box = lam[start_box:start_box + len(bound)]
    box_roles = np.where(box >= bound - impulse_tolerance, AT_UPPER,
                         np.where(box <= -bound + impulse_tolerance, AT_LOWER, INSIDE))
    stop_roles = np.where(lam[start_box + len(bound):] > impulse_tolerance, PUSHING, IDLE)
    return contact_roles, box_roles, stop_roles
