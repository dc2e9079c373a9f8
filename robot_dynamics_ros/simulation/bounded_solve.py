"""The contact step's solve where no certified pattern is found: projected Gauss-Seidel over the Delassus matrix, a
bounded number of sweeps, warm-started from the last step's impulses, then its pattern certified where it can be
(no ROS import).

The problem is ``ground_contact``'s: y = A lam + c (each row's velocity plus its offset; c = G w + beta, the
contacts' normal rows with the gap velocity max(phi, 0) / dt), and per block

    contact:   lam_n >= 0, y_n >= 0, lam_n y_n = 0;   |lam_t| <= mu lam_n, and where |lam_t| < mu lam_n, y_t = 0,
               else lam_t = -mu lam_n y_t / |y_t|    (Coulomb's law with maximum dissipation, inelastic)
    bilateral: y = 0                 boxed: |lam| <= b, y = 0 inside, y <= 0 at +b, y >= 0 at -b
    stop:      lam >= 0, y >= 0, lam y = 0

the conditions De Saxce's fixed point on the shift s = mu |y_t| reaches (``ground_contact``'s problem (1) with s:
y + s e_n in the dual cone is y_n >= 0 where lam is on the cone). Each sweep visits the blocks in order and solves
each one's convex problem (1) with the others held and the shift taken at the current velocity (Gauss-Seidel with De
Saxce's correction, as Pinocchio's PGS, Le Lidec, Carpentier et al. 2024; Acary et al. 2018): a contact's 3 x 3
block by its unconstrained minimiser where that lies in the cone (sticking), else by BLOCK_STEPS projected gradient
steps onto the cone (step 1 / a Gershgorin bound of the block's largest eigenvalue); a joint row lam = lam - y /
A_rr clipped to its box or half-line. A fixed point of the sweep solves every block's problem at its own shift:
the conditions above. y is kept by one column of A per change, so a sweep costs m^2. (A sweep on the split
conditions, the normal row alone and then the friction disk, cycled on a quadruped's knee sliding at 0.4 m/s with
mu 0.8, leaving it 0.1 m/s into the ground; De Saxce's block converged in 22 sweeps to the interior-point
solver's fixed point.)

Bounded: at most the sweeps the step allows (``row_solve``: the work of MAX_SWEEPS sweeps of SWEPT_ROWS rows), stopping
when the conditions hold within SWEEP_TOLERANCE in velocity (``residual``: a sweep's own changes can be small far
from the solution, where many contacts share a load). Every iterate is admissible (inside every cone and box), so a
step cut short still has admissible impulses. No set-up: the Delassus matrix the step forms is all it reads. The
converged sweeps' roles are then tried as a pattern (``pattern_fixed_point``, with its revisions): where the
optimality conditions certify it, its exact solution is taken (a sliding contact on the sweeps' slip direction,
``sliding``). Sweeps cut short are taken as they are: their roles are unsettled, and a refused pattern with its
revisions costs as much as the sweeps (0.6 ms on TALOS lying on 42 points). Written as loops, as
``algorithms/``, so the plain-Python reference runs it and numba compiles it.
"""
import numpy as np

from ..algorithms.backends import njit
from .contact_active_set import GUESS_TOLERANCE, IMPULSE_TOLERANCE, LEAST_SQUARES_TOLERANCE, contact_role_of
from .pattern_fixed_point import pattern_fixed_point
from .roles import AT_LOWER, AT_UPPER, IDLE, INSIDE, PUSHING, SLIDE
from .sliding import planar_length, slip_of

MAX_SWEEPS = 200          # the bound on a step's sweeps of up to SWEPT_ROWS rows
SWEPT_ROWS = 64           # more rows m: fewer sweeps, as many as cost MAX_SWEEPS of SWEPT_ROWS (a sweep costs m^2)
SWEEP_TOLERANCE = LEAST_SQUARES_TOLERANCE   # m/s or rad/s: the conditions hold within this (``residual``): converged
BLOCK_STEPS = 8           # projected gradient steps on a contact's block where its minimiser leaves the cone


@njit()
def warm_start(impulses, joint_impulse, which, nc, bilateral, boxed, lower, upper, lam):
    """lam of the step's rows from the last step's impulses: each candidate's world impulse (its point's, zero for a
    point that was not touching) and each joint row's (``remember_joint_impulses``; zero for a row it did not have)."""
    for i in range(nc):
        for a in range(3):
            lam[3 * i + a] = impulses[which[i], a]
    r = 3 * nc
    for j in bilateral:
        lam[r] = joint_impulse[0, j]
        r += 1
    for j in boxed:
        lam[r] = joint_impulse[1, j]
        r += 1
    for j in lower:
        lam[r] = joint_impulse[2, j]
        r += 1
    for j in upper:
        lam[r] = joint_impulse[3, j]
        r += 1


@njit()
def remember_joint_impulses(lam, nc, bilateral, boxed, lower, upper, joint_impulse):
    """Each joint row's impulse of the step, by kind (bilateral, boxed, lower stop, upper stop) and joint: the warm
    start of the next step's sweeps."""
    joint_impulse[:, :] = 0.0
    r = 3 * nc
    for j in bilateral:
        joint_impulse[0, j] = lam[r]
        r += 1
    for j in boxed:
        joint_impulse[1, j] = lam[r]
        r += 1
    for j in lower:
        joint_impulse[2, j] = lam[r]
        r += 1
    for j in upper:
        joint_impulse[3, j] = lam[r]
        r += 1


@njit()
def cone_projection(t0, t1, n, mu):
    """The nearest point of the Coulomb cone |t| <= mu n to (t0, t1, n) (Euclidean; mu = 0: the half-line n >= 0)."""
    radius = planar_length(t0, t1)
    if radius <= mu * n:
        return t0, t1, n
    if mu * radius <= -n:                                # in the polar cone
        return 0.0, 0.0, 0.0
    normal = (mu * radius + n) / (mu * mu + 1.0)
    scale = mu * normal / radius
    return scale * t0, scale * t1, normal


@njit()
def add_column(A, m, r, change, y):
    """y += A[:, r] change (A symmetric: its row r)."""
    for s in range(m):
        y[s] += A[r, s] * change


@njit()
def projected_gauss_seidel(A, c, m, nc, n_bilateral, bound, mu, lam, y, max_sweeps, tolerance):
    """lam solving the module's conditions from the lam given (clipped into its cones and boxes first), y = A lam + c;
    returns the sweeps taken (max_sweeps where the tolerance was not reached)."""
    start_box = 3 * nc + n_bilateral
    start_stop = start_box + bound.shape[0]
    for i in range(nc):                                  # a feasible start
        n = 3 * i + 2
        lam[n] = max(lam[n], 0.0)
        norm = planar_length(lam[n - 2], lam[n - 1])
        if norm > mu * lam[n]:
            scale = mu * lam[n] / norm
            lam[n - 2] *= scale
            lam[n - 1] *= scale
    for b in range(bound.shape[0]):
        lam[start_box + b] = min(max(lam[start_box + b], -bound[b]), bound[b])
    for r in range(start_stop, m):
        lam[r] = max(lam[r], 0.0)
    for r in range(m):                                   # y = A lam + c
        value = c[r]
        for s in range(m):
            value += A[r, s] * lam[s]
        y[r] = value
    for sweep in range(max_sweeps):
        for i in range(nc):
            r = 3 * i
            shift = mu * planar_length(y[r], y[r + 1])   # De Saxce's shift at the current velocity
            a00, a01, a02, a11, a12, a22 = A[r, r], A[r, r + 1], A[r, r + 2], A[r + 1, r + 1], A[r + 1, r + 2], \
                A[r + 2, r + 2]
            g0, g1, g2 = y[r], y[r + 1], y[r + 2] + shift
            # the block's unconstrained minimiser lam_i - A_ii^-1 g (Cramer's rule), taken where it is in the cone
            c00, c01, c02 = a11 * a22 - a12 * a12, a02 * a12 - a01 * a22, a01 * a12 - a02 * a11
            determinant = a00 * c00 + a01 * c01 + a02 * c02
            inside = False
            if determinant > 1e-12 * a00 * a11 * a22:
                c11, c12, c22 = a00 * a22 - a02 * a02, a01 * a02 - a00 * a12, a00 * a11 - a01 * a01
                x0 = lam[r] - (c00 * g0 + c01 * g1 + c02 * g2) / determinant
                x1 = lam[r + 1] - (c01 * g0 + c11 * g1 + c12 * g2) / determinant
                x2 = lam[r + 2] - (c02 * g0 + c12 * g1 + c22 * g2) / determinant
                inside = planar_length(x0, x1) <= mu * x2
            if not inside:   # else projected gradient steps on the block, step 1 / (a bound on its largest value)
                sigma = max(abs(a00) + abs(a01) + abs(a02), abs(a01) + abs(a11) + abs(a12),
                            abs(a02) + abs(a12) + abs(a22))
                if not sigma > 0.0:
                    continue
                x0, x1, x2 = lam[r], lam[r + 1], lam[r + 2]
                step = 1.0 / sigma
                for _ in range(BLOCK_STEPS):
                    d0, d1, d2 = x0 - lam[r], x1 - lam[r + 1], x2 - lam[r + 2]
                    x0 -= (g0 + a00 * d0 + a01 * d1 + a02 * d2) * step
                    x1 -= (g1 + a01 * d0 + a11 * d1 + a12 * d2) * step
                    x2 -= (g2 + a02 * d0 + a12 * d1 + a22 * d2) * step
                    x0, x1, x2 = cone_projection(x0, x1, x2, mu)
            for a, value in ((0, x0), (1, x1), (2, x2)):
                change = value - lam[r + a]
                if change != 0.0:
                    lam[r + a] = value
                    add_column(A, m, r + a, change, y)
        for r in range(3 * nc, m):                       # the joints' rows
            if not A[r, r] > 0.0:
                continue
            new = lam[r] - y[r] / A[r, r]
            if r >= start_stop:
                new = max(new, 0.0)
            elif r >= start_box:
                b = bound[r - start_box]
                new = min(max(new, -b), b)
            change = new - lam[r]
            if change != 0.0:
                lam[r] = new
                add_column(A, m, r, change, y)
        if residual(A, y, lam, m, nc, n_bilateral, bound, mu) <= tolerance:
            return sweep + 1
    return max_sweeps


@njit()
def residual(A, y, lam, m, nc, n_bilateral, bound, mu):
    """How far lam is from the module's conditions, in velocity (m/s, rad/s): the largest over the blocks of
    sigma |lam_i - proj(lam_i - (y_i + s_i e_n) / sigma)|, the step a projected gradient step would take (sigma: the
    block's diagonal, a contact's largest; s_i = mu |y_t,i|); zero exactly at a solution."""
    largest = 0.0
    for i in range(nc):
        r = 3 * i
        sigma = max(A[r, r], A[r + 1, r + 1], A[r + 2, r + 2])
        if not sigma > 0.0:
            continue
        shift = mu * planar_length(y[r], y[r + 1])
        x0, x1, x2 = cone_projection(lam[r] - y[r] / sigma, lam[r + 1] - y[r + 1] / sigma,
                                     lam[r + 2] - (y[r + 2] + shift) / sigma, mu)
        largest = max(largest, sigma * max(abs(x0 - lam[r]), abs(x1 - lam[r + 1]), abs(x2 - lam[r + 2])))
    start_box = 3 * nc + n_bilateral
    start_stop = start_box + bound.shape[0]
    for r in range(3 * nc, m):
        if not A[r, r] > 0.0:
            continue
        new = lam[r] - y[r] / A[r, r]
        if r >= start_stop:
            new = max(new, 0.0)
        elif r >= start_box:
            new = min(max(new, -bound[r - start_box]), bound[r - start_box])
        largest = max(largest, A[r, r] * abs(new - lam[r]))
    return largest


@njit()
def pattern_of(lam, m, nc, n_bilateral, bound, mu, shift, contact_roles, box_roles, stop_roles):
    """The roles of the rows' impulses lam (``contact_active_set``'s pattern; ``remember_roles``'s tolerance): a
    contact apart, sticking or sliding (``contact_role_of``, with its shift), a box inside or at an end, a stop
    pushing or idle."""
    largest = 0.0
    for r in range(m):
        largest = max(largest, abs(lam[r]))
    tolerance = IMPULSE_TOLERANCE + GUESS_TOLERANCE * largest
    for i in range(nc):
        contact_roles[i] = contact_role_of(lam, i, mu, shift[i], tolerance)
    start_box = 3 * nc + n_bilateral
    for b in range(bound.shape[0]):
        value = lam[start_box + b]
        box_roles[b] = AT_UPPER if value >= bound[b] - tolerance else AT_LOWER if value <= -bound[b] + tolerance \
            else INSIDE
    for s in range(stop_roles.shape[0]):
        stop_roles[s] = PUSHING if lam[start_box + bound.shape[0] + s] > tolerance else IDLE


@njit()
def bounded_step(A, G, Y, w, m, nc, n_bilateral, beta_joints, gap_velocity, bound, mu, contact_roles, box_roles,
                 stop_roles, shift, slip, lam, free, y, L, F, c, v, max_sweeps, sweep_tolerance, max_iterations,
                 tolerance, previous, rhs, swept, swept_shift):
    """The step's solve by ``projected_gauss_seidel`` from the impulses in lam, then its pattern certified where it
    can be: c = G w + beta, lam, v = w + Y lam and the shift s_i = mu |u_t,i| of the contact velocities u = G v
    (written into ``shift``, the warm start of the next step's patterns). Where they converged within max_sweeps,
    the sweeps' roles (``pattern_of``) are tried as a pattern (``pattern_fixed_point``, with its revisions, from the
    sweeps' shift): where it is certified, its exact solution replaces the sweeps' (a sliding contact from the
    sweeps' slip direction, ``sliding``). Returns the sweeps taken, negated where the pattern took the step.
    ``swept``, ``swept_shift``: buffers of m and nc."""
    nv = w.shape[0]
    for r in range(m):                                   # c = G w + beta (no shift)
        value = 0.0
        for j in range(nv):
            value += G[r, j] * w[j]
        c[r] = value + (beta_joints[r - 3 * nc] if r >= 3 * nc else 0.0)
    for i in range(nc):
        c[3 * i + 2] += gap_velocity[i]
    sweeps = projected_gauss_seidel(A, c, m, nc, n_bilateral, bound, mu, lam, y, max_sweeps, sweep_tolerance)
    velocity(w, Y, m, lam, v)
    for i in range(nc):
        ux, uy = 0.0, 0.0
        for j in range(nv):
            ux += G[3 * i, j] * v[j]
            uy += G[3 * i + 1, j] * v[j]
        shift[i] = mu * planar_length(ux, uy)
    for r in range(m):
        swept[r] = lam[r]
    for i in range(nc):
        swept_shift[i] = shift[i]
    pattern_of(lam, m, nc, n_bilateral, bound, mu, shift, contact_roles, box_roles, stop_roles)
    for i in range(nc):
        if contact_roles[i] == SLIDE:
            slip_of(lam[3 * i], lam[3 * i + 1], lam[3 * i + 2], shift[i] / mu, mu, slip, i)
    if sweeps == max_sweeps or pattern_fixed_point(A, G, Y, w, m, nc, n_bilateral, beta_joints, gap_velocity, bound,
                                                   mu, contact_roles, box_roles, stop_roles, shift, slip, lam, free,
                                                   y, L, F, c, v, max_iterations, tolerance, True, previous,
                                                   rhs) == 0:
        for r in range(m):                               # not certified: the sweeps' solution
            lam[r] = swept[r]
        for i in range(nc):
            shift[i] = swept_shift[i]
        velocity(w, Y, m, lam, v)
        return sweeps
    return -sweeps


@njit()
def velocity(w, Y, m, lam, v):
    """v = w + Y lam over the first m rows."""
    for j in range(w.shape[0]):
        value = w[j]
        for r in range(m):
            value += Y[j, r] * lam[r]
        v[j] = value
