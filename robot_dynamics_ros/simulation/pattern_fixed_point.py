"""The step's fixed point on De Saxce's shift over certified patterns, as one loop (no ROS import).

Problem (1) of ``ground_contact`` with the shift s: each iteration forms c = G w + beta (beta_n = max(phi, 0) / dt + s
on the contacts' normal rows), solves on the pattern (revised where its conditions fail: ``contact_active_set``),
takes v = w + Y lam and the new shift s_i = mu |u_t,i| from the contact velocities u = G v, until s changes by less
than the tolerance. Written as loops, as ``algorithms/``, so the plain-Python reference runs it and numba compiles it:
a standing or walking robot's step then runs its solve without a NumPy call. Where the held rows are singular it
takes the least-squares impulses closest to the last solve's (``contact_active_set.closest_held_rows``); where a
pattern is refused it stops, and the step takes the bounded sweeps (``row_solve``).
"""
import numpy as np

from ..algorithms.backends import njit
from .contact_active_set import LEAST_SQUARES_TOLERANCE, PATTERN_REVISIONS, VELOCITY_TOLERANCE, certified, \
    closest_held_rows, fix_pattern, held_rows, more_held_than_freedoms, revise_roles
from .roles import SLIDE, STICK
from .sliding import SINGULAR_SLIDING_SOLVES, SLIDING_ITERATIONS, any_sliding, closest_sliding_held_rows, \
    next_shift, onto_cones, planar_length, sliding_held_rows, update_slip


@njit()
def pattern_fixed_point(A, G, Y, w, m, nc, n_bilateral, beta_joints, gap_velocity, bound, mu, contact_roles,
                        box_roles, stop_roles, shift, slip, lam, free, y, L, F, c, v, max_iterations, tolerance,
                        least_squares, previous, rhs):
    """The fixed point over certified patterns from the shift ``shift`` (written back): the iterations it took, with
    lam and v written, or 0 where an iteration's pattern was refused, or singular without ``least_squares`` (lam and
    v are then not a solution). With ``least_squares``, a singular pattern takes the impulses closest to the last
    solve's (``closest_held_rows``, ``previous`` and ``rhs``: buffers of m). A sliding contact is solved on its
    slip direction (``sliding``; ``slip``: (d, k) per candidate, from the last step or a revision), iterated with
    the shift until its slip across d is within the tolerance too, within SLIDING_ITERATIONS and, where its held
    rows are singular, SINGULAR_SLIDING_SOLVES (else 0: its impulse may leave the cone by the linearisation). Not
    converged within max_iterations: the last iterate (Anitescu's relaxation with a lagged shift)."""
    nv = w.shape[0]
    singular_solves = 0                                 # least-squares solves of a singular sliding pattern
    for iteration in range(max_iterations):
        if least_squares:
            for r in range(m):                          # the last solve's impulses
                previous[r] = lam[r]
        for r in range(m):                              # c = G w + beta
            value = 0.0
            for j in range(nv):
                value += G[r, j] * w[j]
            c[r] = value + (beta_joints[r - 3 * nc] if r >= 3 * nc else 0.0)
        for i in range(nc):
            c[3 * i + 2] += gap_velocity[i] + shift[i]
        taken = False
        for revision in range(PATTERN_REVISIONS + 1):
            fix_pattern(nc, n_bilateral, bound, mu, contact_roles, box_roles, stop_roles, lam, free, True, slip)
            velocity_tolerance = VELOCITY_TOLERANCE
            if mu > 0.0 and any_sliding(contact_roles):
                if more_held_than_freedoms(free, m, nv) or \
                        sliding_held_rows(A, c, m, lam, free, L, F, nc, contact_roles, slip, mu, rhs) < 0:
                    if not least_squares or singular_solves == SINGULAR_SLIDING_SOLVES:
                        return 0
                    closest_sliding_held_rows(A, c, m, lam, free, previous, L, F, nc, contact_roles, slip, mu, rhs)
                    singular_solves += 1
                    velocity_tolerance = LEAST_SQUARES_TOLERANCE
            elif more_held_than_freedoms(free, m, nv) or held_rows(A, c, m, lam, free, L, F) < 0:
                if not least_squares:
                    return 0
                closest_held_rows(A, c, m, lam, free, previous, L, F, rhs)
                velocity_tolerance = LEAST_SQUARES_TOLERANCE
            if certified(A, c, m, lam, free, nc, 3 * nc + n_bilateral, bound, mu, contact_roles, box_roles, slip, y,
                         velocity_tolerance):
                taken = True
                break
            if not revise_roles(A, c, m, lam, nc, n_bilateral, bound, mu, contact_roles, box_roles, stop_roles, slip,
                                y, velocity_tolerance):
                return 0
        if not taken:
            return 0
        onto_cones(lam, nc, mu, contact_roles)
        for j in range(nv):                             # v = w + Y lam
            value = w[j]
            for r in range(m):
                value += Y[j, r] * lam[r]
            v[j] = value
        converged = True
        for i in range(nc):                             # s_i = mu |u_t,i|, u = G v
            ux, uy = 0.0, 0.0
            for j in range(nv):
                ux += G[3 * i, j] * v[j]
                uy += G[3 * i + 1, j] * v[j]
            new_shift = mu * planar_length(ux, uy) if contact_roles[i] != STICK else 0.0   # (held: u_t = 0)
            converged = converged and abs(new_shift - shift[i]) <= tolerance
            if contact_roles[i] == SLIDE and mu > 0.0:
                converged = update_slip(i, ux, uy, lam, mu, slip, tolerance) and converged
                new_shift = next_shift(i, shift[i], new_shift, slip)
            shift[i] = new_shift
        if converged:
            return iteration + 1
        if iteration + 1 == SLIDING_ITERATIONS and mu > 0.0 and any_sliding(contact_roles):
            return 0
    return max_iterations
