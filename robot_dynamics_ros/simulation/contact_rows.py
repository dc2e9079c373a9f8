"""The contact stage of the step: contact-point heights, the candidates and their constraint rows (no ROS import).

On the body poses R_i, p_i and the world columns of the motion subspace (``algorithms/point_kinematics.py``'s
``body_poses`` and ``world_columns``, Jain Lemma 2: a base-to-tips scatter), written as loops, so that the
plain-Python reference runs them and numba compiles them (``algorithms/backends.py``): a point x fixed on body b (a sphere's lowest point: centre - radius e_z) has height phi = x_z - h above the ground,
and velocity  xdot = sum_{k moves b} (c_lin_k + c_ang_k x x) qd_k                                                  (2)

with column k of the motion subspace in the world, c_ang_k = R_j s_ang_k, c_lin_k = R_j s_lin_k - c_ang_k x p_j
(the velocity of the world origin carried by the column). A point is a candidate of the step when its height plus
twice its approach under the free velocity w is below the margin (``candidate_rows``); its three rows (x, y, z of
eq. 2) go into the step's row set G. Most points of a robot with many (a mesh's hull vertices) are clear of the
margin by far: their bodies' velocities, summed once per body, pass them over without a row of their own, and a
body whose points are all clear by a bound over them (``near_bodies``: the broad phase) has none of its points'
heights computed.
"""
import numpy as np

from ..algorithms.backends import njit
from .step_layout import TREE_ROW, tree_buffers

CLEAR = 1e-12   # of the terms of a point's z-velocity: what a sum's rounding could be, many times over
BROAD_SLACK = 1e-9   # m: the broad phase's bound over the per-point test's (a height's rounding: 1e-15 m at 10 m)


def body_reach(nb, body, centre, radius):
    """(nb, 8) per body, of the contact points on it: the body-frame box [lo (3), hi (3)] of their sphere centres,
    their largest radius, and the largest distance of a centre from the body origin (zeros for a body without
    points): what ``near_bodies`` bounds their heights and velocities with."""
    reach = np.zeros((nb, 8))
    for b in np.unique(body):
        c = centre[body == b]
        reach[b, :3], reach[b, 3:6] = c.min(axis=0), c.max(axis=0)
        reach[b, 6], reach[b, 7] = radius[body == b].max(), np.linalg.norm(c, axis=1).max()
    return reach


@njit()
def points_near(moves, body, centre, radius, reach, height, margin, dt, w, R, p, C_ang, C_lin, bodies, near, x, phi):
    """The kinematics stage on the body poses R, p and world columns C_ang, C_lin at q: the bodies' velocities under
    w, the bodies near the ground (the broad phase, ``near_bodies``) and the heights of their points (phi = inf
    elsewhere); returns the lowest height, 0 if none is below 0 (``point_heights``)."""
    body_velocities(moves, C_ang, C_lin, w, bodies)
    near_bodies(reach, height, margin, dt, R, p, bodies, near)
    return point_heights(body, centre, radius, height, R, p, x, phi, near)


@njit()
def near_bodies(reach, height, margin, dt, R, p, bodies, near):
    """The broad phase: near[b] = 0 where no point of body b can be a candidate, 1 elsewhere. The lowest corner of
    the box of its sphere centres (``reach``, from ``body_reach``) rotated into the world, minus the largest radius,
    bounds its points' heights; its velocity (``bodies``, from ``body_velocities``) at the body origin, less
    |omega_x| + |omega_y| times the largest distance of a centre, bounds their approach. Where the bounds clear
    the margin by BROAD_SLACK, each point's own test in ``candidate_rows`` rejects it too (the same candidates)."""
    for b in range(R.shape[0]):
        lowest = p[b, 2] - reach[b, 6] - height
        for k in range(3):
            lowest += min(R[b, 2, k] * reach[b, k], R[b, 2, k] * reach[b, 3 + k])
        omega_x, omega_y, spread = bodies[b, 0], bodies[b, 1], reach[b, 7]
        approach = bodies[b, 2] + omega_x * p[b, 1] - omega_y * p[b, 0] - (abs(omega_x) + abs(omega_y)) * spread
        terms = bodies[b, 3] + bodies[b, 4] * (max(abs(p[b, 0]), abs(p[b, 1])) + spread)
        near[b] = lowest + 2.0 * dt * min(approach - CLEAR * terms, 0.0) < margin + BROAD_SLACK


@njit()
def point_heights(body, centre, radius, height, R, p, x, phi, near):
    """x (count, 3): each point's lowest world point (its sphere's), phi (count,): its height above the ground; for
    a point on a body that is not ``near`` (``near_bodies``), phi = inf and x is not written. Returns the lowest
    height, 0 if none is below 0."""
    lowest = 0.0
    for i in range(body.shape[0]):
        b = body[i]
        if not near[b]:
            phi[i] = np.inf
            continue
        for a in range(3):
            x[i, a] = p[b, a] + R[b, a, 0] * centre[i, 0] + R[b, a, 1] * centre[i, 1] + R[b, a, 2] * centre[i, 2]
        x[i, 2] -= radius[i]
        phi[i] = x[i, 2] - height
        lowest = min(lowest, phi[i])
    return lowest


@njit()
def point_row(moves_b, C_ang, C_lin, x, axis, row):
    """row (nv,): component ``axis`` of eq. 2 for the point x on a body whose moving columns are moves_b."""
    for k in range(row.shape[0]):
        if not moves_b[k]:
            row[k] = 0.0
        elif axis == 0:
            row[k] = C_lin[0, k] + C_ang[1, k] * x[2] - C_ang[2, k] * x[1]
        elif axis == 1:
            row[k] = C_lin[1, k] + C_ang[2, k] * x[0] - C_ang[0, k] * x[2]
        else:
            row[k] = C_lin[2, k] + C_ang[0, k] * x[1] - C_ang[1, k] * x[0]


@njit()
def model_row(moves_b, C_ang, C_lin, x, axis, coupled, row):
    """row (nv,): ``point_row`` on the model's coordinates: the tree's row itself (``coupled`` None), or with coupled
    mimic joints (``coupled``: their G, tree_nv x nv, ``model/mimic.py``, and the arena of ``step_layout.tree_buffers``)
    the tree's row times G. (numba compiles the two cases apart: None prunes the other branch.)"""
    if coupled is None:
        point_row(moves_b, C_ang, C_lin, x, axis, row)
    else:
        G = coupled[0]
        tree_row = tree_buffers(coupled)[1][TREE_ROW]
        point_row(moves_b, C_ang, C_lin, x, axis, tree_row)
        for j in range(row.shape[0]):
            value = 0.0
            for k in range(tree_row.shape[0]):
                value += tree_row[k] * G[k, j]
            row[j] = value


@njit()
def candidate_rows(moves, body, x, phi, C_ang, C_lin, w, dt, margin, which, G, bodies, near):
    """The number n of candidates: points with phi + 2 dt min(xdot_z(w), 0) < margin; their indices in which[:n] and
    their rows x, y, z in G[3 j : 3 j + 3] (j < n). A point on a body not ``near`` (``near_bodies``), or clear of
    the margin by its body's velocity (eq. 2 summed per body first, ``body_velocities``: omega_x, omega_y and the
    origin's z-velocity in ``bodies`` (nb, 5), with bounds of the sums' terms) is passed over; any other is tested
    on its own row, so the candidates are those of that test alone."""
    n = 0
    for i in range(body.shape[0]):
        b = body[i]
        if not near[b]:
            continue
        approach = bodies[b, 2] + bodies[b, 0] * x[i, 1] - bodies[b, 1] * x[i, 0]
        terms = bodies[b, 3] + bodies[b, 4] * max(abs(x[i, 0]), abs(x[i, 1]))
        if phi[i] + 2.0 * dt * min(approach - CLEAR * terms, 0.0) >= margin:
            continue   # clear however the sum is rounded: 1e-12 of its terms is far beyond the rounding
        row = G[3 * n + 2]
        point_row(moves[body[i]], C_ang, C_lin, x[i], 2, row)
        approach = 0.0
        for k in range(w.shape[0]):
            approach += row[k] * w[k]
        if phi[i] + 2.0 * dt * min(approach, 0.0) < margin:
            point_row(moves[body[i]], C_ang, C_lin, x[i], 0, G[3 * n])
            point_row(moves[body[i]], C_ang, C_lin, x[i], 1, G[3 * n + 1])
            which[n] = i
            n += 1
    return n


@njit()
def body_velocities(moves, C_ang, C_lin, w, bodies):
    """Per body b (``bodies`` row b): omega_x, omega_y and the z-velocity of the world origin carried by the body
    under the velocity w (eq. 2's sums over the columns that move b), then sum |c_lin_z,k w_k| and
    sum (|c_ang_x,k| + |c_ang_y,k|) |w_k|: bounds of the terms of a point's z-velocity."""
    for b in range(moves.shape[0]):
        omega_x = omega_y = origin_z = linear = angular = 0.0
        for k in range(w.shape[0]):
            if moves[b, k]:
                omega_x += C_ang[0, k] * w[k]
                omega_y += C_ang[1, k] * w[k]
                origin_z += C_lin[2, k] * w[k]
                linear += abs(C_lin[2, k] * w[k])
                angular += (abs(C_ang[0, k]) + abs(C_ang[1, k])) * abs(w[k])
        bodies[b, 0], bodies[b, 1], bodies[b, 2], bodies[b, 3], bodies[b, 4] = omega_x, omega_y, origin_z, linear, \
            angular


@njit()
def joint_row_sets(v_lo, v_hi, bound, w, last_impulse, sets):
    """The joints with a row in the step, by kind, in the rows of ``sets`` (4 x nv): braked (v_lo = v_hi: bilateral);
    where v_lo < v_hi, boxed (impulse bound > 0), on a finite lower stop the free velocity w reaches (w <= v_lo) or
    that pushed in the last step (``last_impulse``: ``bounded_solve.remember_joint_impulses``' rows), on a finite
    upper one likewise (w >= v_hi). A stop that pushed last step is likely to push again (a leg folded onto it, a
    knee at its limit under load); as a row from the start it spares the solve found breaking it a second round, and
    where it does not push its impulse is zero: the same solution. Returns the four counts."""
    n_bilateral = n_boxed = n_lower = n_upper = 0
    for j in range(w.shape[0]):
        if v_lo[j] == v_hi[j]:
            sets[0, n_bilateral] = j
            n_bilateral += 1
        if not v_lo[j] < v_hi[j]:
            continue
        if bound[j] > 0.0:
            sets[1, n_boxed] = j
            n_boxed += 1
        if np.isfinite(v_lo[j]) and (w[j] <= v_lo[j] or last_impulse[2, j] > 0.0):
            sets[2, n_lower] = j
            n_lower += 1
        if np.isfinite(v_hi[j]) and (w[j] >= v_hi[j] or last_impulse[3, j] > 0.0):
            sets[3, n_upper] = j
            n_upper += 1
    return n_bilateral, n_boxed, n_lower, n_upper


@njit()
def broken_stops(v, v_lo, v_hi, lower, upper, sets):
    """The stops the velocity v crosses (beyond 1e-9) that are not rows yet (``lower``, ``upper``), in rows 2 and 3
    of ``sets``; returns their counts (constraint generation: they enter the problem and it is solved again)."""
    n_lower = n_upper = 0
    for j in range(v.shape[0]):
        if v_lo[j] < v_hi[j] and np.isfinite(v_lo[j]) and v[j] < v_lo[j] - 1e-9 and not np.any(lower == j):
            sets[2, n_lower] = j
            n_lower += 1
        if v_lo[j] < v_hi[j] and np.isfinite(v_hi[j]) and v[j] > v_hi[j] + 1e-9 and not np.any(upper == j):
            sets[3, n_upper] = j
            n_upper += 1
    return n_lower, n_upper


@njit()
def joint_rows(bilateral, boxed, lower, upper, start, G):
    """The joints' rows of G from row ``start``: e_j for a braked (bilateral), boxed (friction, drive) or lower stop
    row, -e_j for an upper stop (lam >= 0 pushes the velocity down). Returns the row after the last."""
    r = start
    for j in bilateral:
        r = unit_row(G, r, j, 1.0)
    for j in boxed:
        r = unit_row(G, r, j, 1.0)
    for j in lower:
        r = unit_row(G, r, j, 1.0)
    for j in upper:
        r = unit_row(G, r, j, -1.0)
    return r


@njit()
def unit_row(G, r, j, sign):
    """G[r] = sign e_j; returns r + 1."""
    G[r, :] = 0.0
    G[r, j] = sign
    return r + 1
