"""The solve of one step's rows, contacts and joints, and the warm start it leaves (no ROS import).

The contact step (``contact_step``) calls it on its step data (the interior-point oracle of the tests,
``GroundContact.oracle_rows``, solves the same problem in its place). Given M = U D U^T, the free velocity w and the
contact candidates' rows in G, it adds the joints' rows (``contact_rows.joint_rows``), builds the Delassus matrix
(``delassus``) and solves problem (1) of ``ground_contact``: the fixed point over certified patterns from the last
step's pattern (``pattern_fixed_point``), or, where none is certified, the bounded sweeps from the last step's
impulses (``bounded_solve``), at most as many as cost MAX_SWEEPS sweeps of SWEPT_ROWS rows over the step (a sweep
of m rows costs m^2: a robot lying on many points takes fewer sweeps, no more work). A stop the solution breaks
enters as a row and the problem is solved again (constraint generation: rows are only added, at most one round per
stop), from the last round's impulses and roles (``remember_round``); where the sweeps took the last round, they take
this one too (their roles are the sweeps', no pattern to try: TALOS falling limp breaks its joints' speed limits
over 3-5 rounds a step, and a refused pattern cost 0.25 ms a round). Then the solution's roles, impulses and shifts
become the next step's warm start (``remember_solution``).
"""
from ..algorithms.backends import njit
from .bounded_solve import SWEPT_ROWS, bounded_step, remember_joint_impulses, warm_start
from .contact_active_set import remember_roles
from .contact_rows import broken_stops, joint_row_sets, joint_rows
from .delassus import delassus
from .pattern_fixed_point import pattern_fixed_point
from .roles import PUSHING
from .sliding import guess_slip
from .step_layout import BOX_BOUND, BOX_ROLES, COUNTS, FOUND, SETS, STOP_ROLES

CAPACITY = -3   # (as ``contact_step.CAPACITY``) the rows outgrow the row buffers: ``StepData.reserve``, then again


@njit()
def solve_rows(U, D, w, phi, nc, dt, mu, v_lo, v_hi, bound, center, settings, G, Y, A, L, F, free, c, lam, y, previous,
               rhs, swept, v, joints, joint_ints, which, trial, gap, beta, shift, swept_shift, impulses, joint_impulse,
               slip, slope, contact_role, box_role, lower_role, upper_role, contact_roles):
    """Problem (1) over the nc candidates' rows (G's first 3 nc rows, ``which`` their points, phi every point's
    height) and the joints' rows (v_lo, v_hi, bound, center per velocity coordinate); v = w + M^-1 G^T lam written.
    Returns (the fixed point's iterations, the sweeps' where they took a round, and the counts of the bilateral,
    boxed, lower-stop and upper-stop rows; ``joint_ints[COUNTS]`` holds m, nc, the sweeps of the last bounded round,
    0 if none, and 1 where they were cut off at their bound), or CAPACITY first with nothing but scratch written.
    settings: the fixed point's iterations and tolerance, the sweeps' count (of SWEPT_ROWS rows) and tolerance. The
    rest: ``step_data.StepData``'s buffers (``joints``: its per-joint rows, ``step_layout``)."""
    max_iterations, tolerance, max_sweeps, sweep_tolerance = int(settings[0]), settings[1], int(settings[2]), \
        settings[3]
    box_bound = joints[BOX_BOUND]
    sets, found = joint_ints[SETS:SETS + 4], joint_ints[FOUND:FOUND + 4]
    n_bilateral, n_boxed, n_lower, n_upper = joint_row_sets(v_lo, v_hi, bound, w, joint_impulse, sets)
    bilateral, boxed = sets[0, :n_bilateral], sets[1, :n_boxed]
    for i in range(nc):                             # De Saxce's shift extrapolated from the last two steps
        point = which[i]
        trial[i] = max(2.0 * shift[1, point] - shift[0, point], 0.0)
        gap[i] = max(phi[point], 0.0) / dt
    total_iterations = 0
    work = max_sweeps * SWEPT_ROWS * SWEPT_ROWS     # the sweeps' bound over the step's rounds, in rows^2
    joint_ints[COUNTS, 2] = joint_ints[COUNTS, 3] = 0
    sweeping = False                                # whether the sweeps took a round
    while True:                                     # constraint generation: a stop the solution breaks enters
        lower_rows, upper_rows = sets[2, :n_lower], sets[3, :n_upper]
        m = joint_rows(bilateral, boxed, lower_rows, upper_rows, 3 * nc, G)
        joint_ints[COUNTS, 0], joint_ints[COUNTS, 1] = m, nc
        if m > lam.shape[0]:
            return CAPACITY, 0, 0, 0, 0
        delassus(U, D, G, m, Y, A)                  # Y = M^-1 G^T, A = G M^-1 G^T
        box_roles, stop_roles = joint_ints[BOX_ROLES, :n_boxed], joint_ints[STOP_ROLES, :n_lower + n_upper]
        s = 0                                       # beta of the joint rows: -v_lo, -center, -v_lo, v_hi
        for j in bilateral:
            beta[s] = -v_lo[j]
            s += 1
        for b in range(n_boxed):
            beta[s] = -center[boxed[b]]
            box_bound[b] = bound[boxed[b]]
            box_roles[b] = box_role[boxed[b]]
            s += 1
        for k in range(n_lower):
            beta[s] = -v_lo[lower_rows[k]]
            stop_roles[k] = lower_role[lower_rows[k]]
            s += 1
        for k in range(n_upper):
            beta[s] = v_hi[upper_rows[k]]
            stop_roles[n_lower + k] = upper_role[upper_rows[k]]
            s += 1
        for i in range(nc):
            contact_roles[i] = contact_role[which[i]]
        guess_slip(impulses, which, nc, trial, mu, contact_roles, slip, slope)
        iterations = 0
        if not sweeping:                            # (after a round of sweeps, their roles: on with the sweeps)
            iterations = pattern_fixed_point(A, G, Y, w, m, nc, n_bilateral, beta, gap[:nc], box_bound[:n_boxed], mu,
                                             contact_roles[:nc], box_roles, stop_roles, trial[:nc], slip, lam, free,
                                             y, L, F, c, v, max_iterations, tolerance, True, previous, rhs)
        if iterations == 0:                         # no certified pattern: the bounded sweeps from the last impulses
            sweeping = True
            warm_start(impulses, joint_impulse, which, nc, bilateral, boxed, lower_rows, upper_rows, lam)
            allowed = min(max_sweeps, max(work // max(m * m, 1), 1))
            sweeps = bounded_step(A, G, Y, w, m, nc, n_bilateral, beta, gap[:nc], box_bound[:n_boxed], mu,
                                  contact_roles[:nc], box_roles, stop_roles, trial[:nc], slip, lam, free, y, L, F, c, v,
                                  allowed, sweep_tolerance, max_iterations, tolerance, previous, rhs, swept,
                                  swept_shift)
            work -= abs(sweeps) * m * m
            iterations = joint_ints[COUNTS, 2] = abs(sweeps)
            joint_ints[COUNTS, 3] = sweeps == allowed     # cut off: neither converged nor certified
        total_iterations += iterations
        n_lower_broken, n_upper_broken = broken_stops(v, v_lo, v_hi, lower_rows, upper_rows, found)
        if not (n_lower_broken or n_upper_broken):
            return total_iterations, n_bilateral, n_boxed, n_lower, n_upper
        remember_round(lam, nc, which, bilateral, boxed, lower_rows, upper_rows, found[2, :n_lower_broken],
                       found[3, :n_upper_broken], contact_roles, box_roles, stop_roles, impulses, joint_impulse,
                       contact_role, box_role, lower_role, upper_role)
        n_lower = merge_sorted(sets[2], n_lower, found[2], n_lower_broken)
        n_upper = merge_sorted(sets[3], n_upper, found[3], n_upper_broken)


@njit()
def remember_solution(lam, nc, n_bilateral, n_boxed, n_lower, n_upper, mu, joints, joint_ints, which, trial, shift,
                      impulses, joint_impulse, contact_role, box_role, lower_role, upper_role, slip, slope):
    """The next step's warm start from the solution of ``solve_rows`` (its counts of rows by kind): the shifts of the
    last two steps, each point's secant slope (``sliding.next_shift``) and impulse (zero for a point that was no
    candidate), the roles of every point, box and stop (``contact_active_set.remember_roles``: points not in the
    problem are apart, stops not in it push when they enter) and the joint rows' impulses."""
    sets = joint_ints[SETS:SETS + 4]
    bilateral, boxed, lower_rows, upper_rows = sets[0, :n_bilateral], sets[1, :n_boxed], sets[2, :n_lower], \
        sets[3, :n_upper]
    shift[0, :] = shift[1, :]
    shift[1, :] = 0.0
    impulses[:, :] = 0.0
    slope[:] = 0.0
    for i in range(nc):
        shift[1, which[i]] = trial[i]
        slope[which[i]] = slip[i, 5]
        for a in range(3):
            impulses[which[i], a] = lam[3 * i + a]
    remember_roles(lam, joint_ints[COUNTS, 0], which[:nc], nc, n_bilateral, boxed, joints[BOX_BOUND, :n_boxed],
                   lower_rows, upper_rows, mu, shift[1], contact_role, box_role, lower_role, upper_role)
    remember_joint_impulses(lam, nc, bilateral, boxed, lower_rows, upper_rows, joint_impulse)


@njit()
def remember_round(lam, nc, which, bilateral, boxed, lower, upper, broken_lower, broken_upper, contact_roles, box_roles,
                   stop_roles, impulses, joint_impulse, contact_role, box_role, lower_role, upper_role):
    """A round's solution as the warm start of the next round (the same rows, and the stops it broke): its impulses
    (``warm_start`` reads them) and roles (the pattern tried first, where a pattern took the round) written where the
    last step's are, by point and joint; a stop that enters (``broken_lower``, ``broken_upper``) starts at zero
    impulse, pushing.
    ``remember_solution`` writes the step's own at its end."""
    for i in range(nc):
        contact_role[which[i]] = contact_roles[i]
        for a in range(3):
            impulses[which[i], a] = lam[3 * i + a]
    for b in range(boxed.shape[0]):
        box_role[boxed[b]] = box_roles[b]
    for k in range(lower.shape[0]):
        lower_role[lower[k]] = stop_roles[k]
    for k in range(upper.shape[0]):
        upper_role[upper[k]] = stop_roles[lower.shape[0] + k]
    for j in broken_lower:
        lower_role[j] = PUSHING
    for j in broken_upper:
        upper_role[j] = PUSHING
    remember_joint_impulses(lam, nc, bilateral, boxed, lower, upper, joint_impulse)


@njit()
def merge_sorted(rows, n, added, n_added):
    """rows[:n] and added[:n_added], both ascending and disjoint, merged into rows[:n + n_added] in ascending
    order; returns n + n_added."""
    i, k = n - 1, n_added - 1
    for out in range(n + n_added - 1, -1, -1):
        if k < 0 or (i >= 0 and rows[i] > added[k]):
            rows[out] = rows[i]
            i -= 1
        else:
            rows[out] = added[k]
            k -= 1
    return n + n_added
