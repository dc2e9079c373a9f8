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
rows than freedoms: a box on four corners, a robot whose feet and joints all stick), the solution closest to the
last solve's impulses (the impulses are then not unique, and a robot standing keeps the last ones best). When
the result meets every condition above it is the optimum: the problem is convex, so the KKT conditions are
sufficient (where A_FF is singular the optimal impulses are not unique: this is one of them, the velocity is). A
robot standing or walking keeps its pattern from one step to the next, so the last step's pattern, certified,
replaces the interior-point solve on most steps. A pattern the conditions refuse is revised where they fail (a
primal-dual active-set step, Hintermueller, Ito and Kunisch, SIAM J. Optim. 13(3), 2002): a row whose impulse broke
its bound is fixed at it, a fixed row whose velocity pulls it off its bound is held, a held contact that pulls is
apart and an apart one that approaches is held; the revised pattern is solved and checked again, at most
PATTERN_REVISIONS times. The certificate alone decides: a pattern is taken only where the conditions hold. A sliding
contact (lam on the cone's surface: a non-linear condition) is solved and checked at its slip direction, which the
step's fixed point iterates (``sliding``; ``pattern_solve`` alone refuses it); a pattern the revisions do not certify
is left to the bounded sweeps. (The revisions matter where the feet and the joints' friction all hold: more held rows
than freedoms, least-norm impulses that leave a box, and an interior-point answer whose boxes near their bounds read
as inside.)

On a frictionless ground (mu = 0) the cone is the normal half-line: a touching contact's tangential impulses are
fixed at zero and its normal row is held (y_n = 0, lam_n >= 0), an apart one has y_n >= 0; the condition is linear
in every role, so every pattern is certifiable (STICK then means touching).

More held rows than the robot's freedoms nv (A = G M^-1 G^T has rank <= nv) are singular without a Cholesky to show
it (``more_held_than_freedoms``): its pivots can miss that by rounding (on a settling Go1, 19 held rows once passed).
The pattern's rows are fixed (``fix_pattern``), the held rows solved by Cholesky (``held_rows``), the conditions
checked (``certified``) and a refused pattern revised (``revise_roles``) by loops that the plain-Python reference runs and numba compiles (``algorithms/backends``);
a singular A_FF takes the least-norm solution: in the step (``closest_held_rows``, from ``pattern_fixed_point``) a
pivoted Cholesky that gives the SVD's solution where a check shows its rank (``algorithms/least_norm``), else the
SVD's; in ``solve_on_pattern``, these kernels composed in Python for the tests, the SVD's least squares.
"""
import numpy as np

from ..algorithms.backends import njit
from ..algorithms.cholesky import cholesky_factor, cholesky_solve
from ..algorithms.least_norm import least_norm_semidefinite
from .roles import APART, AT_LOWER, AT_UPPER, IDLE, INSIDE, PUSHING, SLIDE, STICK  # noqa: F401 (one set: roles.py)
from .sliding import SLIP_COLUMNS, planar_length, slip_of, sliding_certified

VELOCITY_TOLERANCE = 1e-10   # m/s or rad/s: a condition on y holds within this
# m/s or rad/s: the same where the held rows took the least-squares solve (more held rows than freedoms: their
# velocities cannot all be held where the rows' offsets, the gaps phi / dt and the shifts, are not consistent to
# the last digit, as a robot lying on many points has them); the bounded sweeps' tolerance, so that a pattern so
# certified is never further from the conditions than the sweeps it replaces
LEAST_SQUARES_TOLERANCE = 1e-7
IMPULSE_TOLERANCE = 1e-12    # N s or N m s, plus 1e-9 of the largest impulse: a condition on lam holds within this
GUESS_TOLERANCE = 1e-6      # of the largest impulse: a solution this close to a bound is taken to be on it
PIVOT_RATIO = 1e-12          # smallest / largest pivot (or singular value) of A_FF below this: singular
PATTERN_REVISIONS = 4        # revisions of a refused pattern before the bounded sweeps take the problem


def solve_on_pattern(A, c, nc, n_bilateral, bound, n_stops, mu, contact_roles, box_roles, stop_roles, kernels=None):
    """lam, the optimum of problem (1) over the rows [contacts | bilateral | boxed | stops], if the pattern (roles
    per contact, per boxed row, per stop) certifies it; else None. ``kernels``: the functions of ``KERNELS`` to run
    (compiled ones, ``StepKernels``), default these as plain Python."""
    k = kernels or PLAIN
    m = len(c)
    lam, free, y = np.zeros(m), np.zeros(m, dtype=np.bool_), np.empty(m)
    L, F = np.empty((m, m)), np.empty(m, dtype=np.int64)
    bound = np.ascontiguousarray(bound, dtype=float)
    status = pattern_solve(k, A, c, m, nc, n_bilateral, bound, mu, np.array(contact_roles, dtype=np.int64),
                           np.array(box_roles, dtype=np.int64), np.array(stop_roles, dtype=np.int64), lam, free,
                           y, L, F)
    return lam if status else None


def pattern_solve(k, A, c, m, nc, n_bilateral, bound, mu, contact_roles, box_roles, stop_roles, lam, free, y, L, F,
                  freedoms=None):
    """True when the pattern, or one of its revisions, certifies lam (written in lam); the stages of
    ``solve_on_pattern`` on given buffers, with the kernels ``k`` (a namespace of ``fix_pattern``, ``held_rows``,
    ``certified``, ``revise_roles``). The role arrays are revised in place. ``freedoms``: the columns of G (nv),
    where A = G M^-1 G^T (``more_held_than_freedoms``)."""
    previous = lam[:m].copy()   # the last solve's impulses (of this step's fixed point, or of the last step)
    slip = np.zeros((nc, SLIP_COLUMNS))   # (a sliding contact is refused here: it needs the fixed point's d)
    for revision in range(PATTERN_REVISIONS + 1):
        if not k.fix_pattern(nc, n_bilateral, bound, mu, contact_roles, box_roles, stop_roles, lam, free, False, slip):
            return False   # a sliding contact: not certifiable here
        singular = freedoms is not None and more_held_than_freedoms(free, m, freedoms)
        n_free = -1 if singular else k.held_rows(A, c, m, lam, free, L, F)
        tolerance = VELOCITY_TOLERANCE if n_free >= 0 else LEAST_SQUARES_TOLERANCE
        if n_free < 0:   # A_FF singular: of the solutions, the one closest to the previous impulses
            F_ = np.flatnonzero(free[:m])
            X = np.flatnonzero(~free[:m])
            A_FF = A[np.ix_(F_, F_)]
            rhs = -(c[F_] + A[np.ix_(F_, X)] @ lam[X])
            lam[F_] = previous[F_] + np.linalg.lstsq(A_FF, rhs - A_FF @ previous[F_], rcond=PIVOT_RATIO)[0]
        if k.certified(A, c, m, lam, free, nc, 3 * nc + n_bilateral, bound, mu, contact_roles, box_roles, slip, y,
                       tolerance):
            return True
        if revision == PATTERN_REVISIONS or not k.revise_roles(A, c, m, lam, nc, n_bilateral, bound, mu,
                                                               contact_roles, box_roles, stop_roles, slip, y,
                                                               tolerance):
            return False
    return False


@njit()
def fix_pattern(nc, n_bilateral, bound, mu, contact_roles, box_roles, stop_roles, lam, free, sliding, slip):
    """lam on the rows the pattern fixes (apart contacts: 0; boxes at an end: +-b; idle stops: 0; on a frictionless
    ground the tangential rows of touching contacts: 0), free = the rows it holds at y = 0; a sliding contact holds
    its lam_n in its normal row and, where its slope k (``slip``) is finite, its lam_p in its x row (``sliding``).
    False for a sliding contact where ``sliding`` is False (lam on the cone's surface: not a linear condition
    without a slip direction)."""
    for i in range(nc):
        role = contact_roles[i]
        if role == SLIDE and mu > 0.0 and not sliding:
            return False
        for a in range(3):
            lam[3 * i + a] = 0.0
            free[3 * i + a] = role != APART and (a == 2 or mu > 0.0)
        if role == SLIDE and mu > 0.0:
            free[3 * i], free[3 * i + 1] = slip[i, 2] < np.inf, False
    start_box = 3 * nc + n_bilateral
    for r in range(3 * nc, start_box):
        lam[r], free[r] = 0.0, True
    for b in range(bound.shape[0]):
        lam[start_box + b] = box_roles[b] * bound[b]
        free[start_box + b] = box_roles[b] == INSIDE
    start_stop = start_box + bound.shape[0]
    for s in range(stop_roles.shape[0]):
        lam[start_stop + s] = 0.0
        free[start_stop + s] = stop_roles[s] != IDLE
    return True


@njit()
def more_held_than_freedoms(free, m, nv):
    """Whether more of the m rows are held than the nv freedoms: then A_FF = G_F M^-1 G_F^T (rank <= nv) is
    singular, whatever its Cholesky's pivots show in rounding (a last pivot just above PIVOT_RATIO of the largest
    would give impulses of rounding's size over it), and the held rows take the least-squares solve."""
    held = 0
    for r in range(m):
        if free[r]:
            held += 1
    return held > nv


@njit()
def held_rows(A, c, m, lam, free, L, F):
    """lam_F solving A_FF lam_F = -(c_F + A_FX lam_X) by Cholesky A_FF = L L^T (in L): the number of held rows, or -1
    where A_FF is singular (a pivot <= 0 or below PIVOT_RATIO of the largest: more held rows than freedoms)."""
    n = 0
    for r in range(m):
        if free[r]:
            F[n] = r
            n += 1
    for a in range(n):                        # the right-hand side, in lam_F
        r = F[a]
        rhs = -c[r]
        for s in range(m):
            if not free[s]:
                rhs -= A[r, s] * lam[s]
        lam[r] = rhs
    if not cholesky_factor(A, F, L, n, 0.0, PIVOT_RATIO):   # A_FF = L L^T
        return -1
    cholesky_solve(L, n, lam, F)
    return n


@njit()
def closest_held_rows(A, c, m, lam, free, previous, L, F, rhs):
    """Where A_FF is singular (``held_rows`` returned -1): of the lam_F solving A_FF lam_F = -(c_F + A_FX lam_X), the
    one closest to ``previous`` (the last solve's impulses), lam_F = previous_F + the least-norm solution of
    A_FF d = -(c_F + A_FX lam_X) - A_FF previous_F (singular values below PIVOT_RATIO of the largest taken as zero):
    ``pattern_solve``'s least squares, with A_FF gathered in L. By ``least_norm_semidefinite`` where its check shows
    the SVD's rank, else by the SVD (np.linalg.lstsq)."""
    n = 0
    for r in range(m):
        if free[r]:
            F[n] = r
            n += 1
    for a in range(n):
        r = F[a]
        fixed = 0.0
        for s in range(m):
            if not free[s]:
                fixed += A[r, s] * lam[s]
        held = 0.0
        for b in range(n):
            L[a, b] = A[r, F[b]]
            held += L[a, b] * previous[F[b]]
        rhs[a] = -(c[r] + fixed) - held
    step = np.empty(n)
    if not least_norm_semidefinite(L[:n, :n], rhs[:n], step, PIVOT_RATIO):
        step = np.linalg.lstsq(L[:n, :n], rhs[:n], PIVOT_RATIO)[0]
    for a in range(n):
        lam[F[a]] = previous[F[a]] + step[a]


@njit()
def velocities(A, c, m, lam, y):
    """y = A lam + c (each row's velocity plus its offset) over the first m rows; returns the largest |lam|."""
    largest = 0.0
    for r in range(m):
        largest = max(largest, abs(lam[r]))
        v = c[r]
        for s in range(m):
            v += A[r, s] * lam[s]
        y[r] = v
    return largest


@njit()
def certified(A, c, m, lam, free, nc, start_box, bound, mu, contact_roles, box_roles, slip, y, velocity_tolerance):
    """The KKT conditions of the module's docstring, within the tolerances (a sliding contact's at its slip
    direction: ``sliding``; velocity_tolerance: VELOCITY_TOLERANCE, or LEAST_SQUARES_TOLERANCE where the held rows
    took the least-squares solve); y = A lam + c on the way."""
    impulse_tolerance = IMPULSE_TOLERANCE + 1e-9 * velocities(A, c, m, lam, y)
    for i in range(nc):
        n = 3 * i + 2
        if contact_roles[i] == SLIDE and mu > 0.0:
            if not sliding_certified(i, lam, y, mu, slip, impulse_tolerance, velocity_tolerance):
                return False
        elif free[n]:  # touching: y = 0, lam in the cone
            if abs(y[n]) > velocity_tolerance or (mu > 0.0 and max(abs(y[n - 2]), abs(y[n - 1])) > velocity_tolerance):
                return False
            if planar_length(lam[n - 2], lam[n - 1]) > mu * lam[n] + impulse_tolerance or lam[n] < -impulse_tolerance:
                return False
        elif mu * planar_length(y[n - 2], y[n - 1]) > y[n] + velocity_tolerance:   # apart: y in the dual cone
            return False
    for r in range(3 * nc, m):
        if free[r] and abs(y[r]) > velocity_tolerance:
            return False
    start_stop = start_box + bound.shape[0]
    for b in range(bound.shape[0]):
        r, role = start_box + b, box_roles[b]
        if role == INSIDE and abs(lam[r]) > bound[b] + impulse_tolerance:
            return False
        if (role == AT_UPPER and y[r] > velocity_tolerance) or (role == AT_LOWER and y[r] < -velocity_tolerance):
            return False
    for r in range(start_stop, m):
        if (free[r] and lam[r] < -impulse_tolerance) or (not free[r] and y[r] < -velocity_tolerance):
            return False
    return True


@njit()
def revise_roles(A, c, m, lam, nc, n_bilateral, bound, mu, contact_roles, box_roles, stop_roles, slip, y,
                 velocity_tolerance):
    """The roles of a refused solution lam revised where the conditions fail (a primal-dual active-set step): a held
    contact whose normal impulse pulls is apart, an apart one whose velocity leaves the dual cone is held; a box
    broken at +b (-b) is fixed there, one fixed at an end whose velocity pulls it inside is inside; a pushing stop that
    pulls is idle, an idle one that is crossed pushes. A held contact outside its cone slides, against its impulse
    (``sliding``: d = -lam_t / |lam_t|, k = inf); a sliding one whose normal impulse pulls is apart, one that slides
    back against d sticks. True when some role changed."""
    impulse_tolerance = IMPULSE_TOLERANCE + 1e-9 * velocities(A, c, m, lam, y)
    changed = False
    for i in range(nc):
        n, role = 3 * i + 2, contact_roles[i]
        if role == APART and mu * planar_length(y[n - 2], y[n - 1]) > y[n] + velocity_tolerance:
            contact_roles[i] = STICK
        elif role == STICK and lam[n] < -impulse_tolerance:
            contact_roles[i] = APART
        elif role == STICK and planar_length(lam[n - 2], lam[n - 1]) > mu * lam[n] + impulse_tolerance:
            contact_roles[i] = SLIDE
            slip_of(lam[n - 2], lam[n - 1], lam[n], 0.0, mu, slip, i)
        elif role == SLIDE and lam[n] < -impulse_tolerance:
            contact_roles[i] = APART
        elif role == SLIDE and slip[i, 0] * y[n - 2] + slip[i, 1] * y[n - 1] < -velocity_tolerance:
            contact_roles[i] = STICK
        changed = changed or contact_roles[i] != role
    start_box = 3 * nc + n_bilateral
    for b in range(bound.shape[0]):
        r, role = start_box + b, box_roles[b]
        if role == INSIDE and lam[r] > bound[b] + impulse_tolerance:
            box_roles[b] = AT_UPPER
        elif role == INSIDE and lam[r] < -bound[b] - impulse_tolerance:
            box_roles[b] = AT_LOWER
        elif (role == AT_UPPER and y[r] > velocity_tolerance) or (role == AT_LOWER and y[r] < -velocity_tolerance):
            box_roles[b] = INSIDE
        changed = changed or box_roles[b] != role
    start_stop = start_box + bound.shape[0]
    for s in range(stop_roles.shape[0]):
        r, role = start_stop + s, stop_roles[s]
        if role == PUSHING and lam[r] < -impulse_tolerance:
            stop_roles[s] = IDLE
        elif role == IDLE and y[r] < -velocity_tolerance:
            stop_roles[s] = PUSHING
        changed = changed or stop_roles[s] != role
    return changed


@njit()
def contact_role_of(lam, i, mu, shift, impulse_tolerance):
    """Candidate i's role in a solution lam with De Saxce's shift s = mu |u_t| (``remember_roles``): apart, sliding
    (on the cone's surface, and slipping: s above LEAST_SQUARES_TOLERANCE; at rest on the surface it is guessed to
    stick), or sticking. On a frictionless ground a touching contact is STICK (its tangential impulses are zero)."""
    normal = lam[3 * i + 2]
    if normal <= impulse_tolerance:
        return APART
    if mu == 0.0 or planar_length(lam[3 * i], lam[3 * i + 1]) < mu * normal - impulse_tolerance or \
            shift <= mu * LEAST_SQUARES_TOLERANCE:
        return STICK
    return SLIDE


@njit()
def remember_roles(lam, m, which, nc, n_bilateral, boxed, bound, lower, upper, mu, shift, contact_role, box_role,
                   lower_role, upper_role):
    """The roles of a solution lam (the pattern to try first on the next step), written into the warm start by point
    and joint: every point apart but the candidates ``which`` (``contact_role_of``, with each point's shift
    ``shift``), the boxed joints' roles, the stops in the problem (``lower``, ``upper``) pushing or idle, the others
    pushing. The interior-point solver stops within ~1e-8 of a bound: a guess takes GUESS_TOLERANCE (the check stays
    strict)."""
    largest = 0.0
    for r in range(m):
        largest = max(largest, abs(lam[r]))
    impulse_tolerance = IMPULSE_TOLERANCE + GUESS_TOLERANCE * largest
    contact_role[:] = APART
    for i in range(nc):
        contact_role[which[i]] = contact_role_of(lam, i, mu, shift[which[i]], impulse_tolerance)
    start_box = 3 * nc + n_bilateral
    for b in range(boxed.shape[0]):
        value = lam[start_box + b]
        if value >= bound[b] - impulse_tolerance:
            box_role[boxed[b]] = AT_UPPER
        elif value <= -bound[b] + impulse_tolerance:
            box_role[boxed[b]] = AT_LOWER
        else:
            box_role[boxed[b]] = INSIDE
    lower_role[:] = PUSHING
    upper_role[:] = PUSHING
    r = start_box + boxed.shape[0]
    for j in lower:
        lower_role[j] = PUSHING if lam[r] > impulse_tolerance else IDLE
        r += 1
    for j in upper:
        upper_role[j] = PUSHING if lam[r] > impulse_tolerance else IDLE
        r += 1


class _Plain:
    """The kernels as plain Python (the reference)."""
    fix_pattern, held_rows, certified = staticmethod(fix_pattern), staticmethod(held_rows), staticmethod(certified)
    revise_roles = staticmethod(revise_roles)


PLAIN = _Plain()
