"""The contact stage of the step: body poses, contact-point heights, the candidates and their constraint rows
(no ROS import).

The kinematics of ``algorithms/point_kinematics.py`` (Jain Lemma 2: a base-to-tips scatter) written as loops, so
that the plain-Python reference runs them and numba compiles them (``algorithms/backends.py``):

    R_i = R_p E_i^T R_J(q_i),   p_i = p_p + R_p (r_i + E_i^T p_J(q_i))          (X_tree[i] = plucker(E_i, r_i))  (1)

a point x fixed on body b (a sphere's lowest point: centre - radius e_z) has height phi = x_z - h above the ground,
and velocity  xdot = sum_{k moves b} (c_lin_k + c_ang_k x x) qd_k                                                  (2)

with column k of the motion subspace in the world, c_ang_k = R_j s_ang_k, c_lin_k = R_j s_lin_k - c_ang_k x p_j
(the velocity of the world origin carried by the column). A point is a candidate of the step when its height plus
twice its approach under the free velocity w is below the margin (``candidate_rows``); its three rows (x, y, z of
eq. 2) go into the step's row set G.
"""
import numpy as np

from ..algorithms.backends import njit
from ..model.joints import FREE_FLYER, PLANAR, PRISMATIC, REVOLUTE


@njit()
def joint_pose(kind, axis, q, k, R_J, p_J):
    """R_J, p_J: the pose of a body's frame in its joint frame at the coordinates q[k:] (revolute by Rodrigues'
    formula R_J = I + sin(q) K + (1 - cos(q)) K^2, K = skew(axis); free flyer [x y z qx qy qz qw]; planar
    [x y cos sin])."""
    for a in range(3):
        p_J[a] = 0.0
        for b in range(3):
            R_J[a, b] = 1.0 if a == b else 0.0
    if kind == REVOLUTE:
        s, c1 = np.sin(q[k]), 1.0 - np.cos(q[k])
        x, y, z = axis[0], axis[1], axis[2]
        # K = [[0, -z, y], [z, 0, -x], [-y, x, 0]], K^2 = a a^T - |a|^2 I
        R_J[0, 0] += c1 * (x * x - 1.0)
        R_J[1, 1] += c1 * (y * y - 1.0)
        R_J[2, 2] += c1 * (z * z - 1.0)
        R_J[0, 1] += -s * z + c1 * x * y
        R_J[1, 0] += s * z + c1 * x * y
        R_J[0, 2] += s * y + c1 * x * z
        R_J[2, 0] += -s * y + c1 * x * z
        R_J[1, 2] += -s * x + c1 * y * z
        R_J[2, 1] += s * x + c1 * y * z
    elif kind == PRISMATIC:
        for a in range(3):
            p_J[a] = axis[a] * q[k]
    elif kind == FREE_FLYER:
        x, y, z, w = q[k + 3], q[k + 4], q[k + 5], q[k + 6]
        R_J[0, 0], R_J[0, 1], R_J[0, 2] = 1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)
        R_J[1, 0], R_J[1, 1], R_J[1, 2] = 2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)
        R_J[2, 0], R_J[2, 1], R_J[2, 2] = 2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)
        for a in range(3):
            p_J[a] = q[k + a]
    elif kind == PLANAR:
        c, s = q[k + 2], q[k + 3]
        R_J[0, 0], R_J[0, 1], R_J[1, 0], R_J[1, 1] = c, -s, s, c
        p_J[0], p_J[1] = q[k], q[k + 1]


@njit()
def body_poses(parent, kind, idx_q, axis, E_T, r, q, R_J, p_J, R, p):
    """R (nb, 3, 3), p (nb, 3): the world pose of every body, base to tips (eq. 1); R_J, p_J: (3, 3), (3,) scratch."""
    for i in range(parent.shape[0]):
        joint_pose(kind[i], axis[i], q, idx_q[i], R_J, p_J)
        j = parent[i]
        for a in range(3):
            t_a = r[i, a]
            for b in range(3):
                t_a += E_T[i, a, b] * p_J[b]
            for b in range(3):   # A = E^T R_J: body i in its parent's frame
                A_ab = 0.0
                for c in range(3):
                    A_ab += E_T[i, a, c] * R_J[c, b]
                R[i, a, b] = A_ab   # (held in R[i] until the parent's rotation is applied)
            p[i, a] = t_a
        if j >= 0:
            for a in range(3):
                R_J[a, 0], R_J[a, 1], R_J[a, 2] = R[i, a, 0], R[i, a, 1], R[i, a, 2]
                p_J[a] = p[i, a]
            for a in range(3):
                p[i, a] = p[j, a] + R[j, a, 0] * p_J[0] + R[j, a, 1] * p_J[1] + R[j, a, 2] * p_J[2]
                for b in range(3):
                    R[i, a, b] = R[j, a, 0] * R_J[0, b] + R[j, a, 1] * R_J[1, b] + R[j, a, 2] * R_J[2, b]


@njit()
def point_heights(body, centre, radius, height, R, p, x, phi):
    """x (count, 3): each point's lowest world point (its sphere's), phi (count,): its height above the ground."""
    for i in range(body.shape[0]):
        b = body[i]
        for a in range(3):
            x[i, a] = p[b, a] + R[b, a, 0] * centre[i, 0] + R[b, a, 1] * centre[i, 1] + R[b, a, 2] * centre[i, 2]
        x[i, 2] -= radius[i]
        phi[i] = x[i, 2] - height


@njit()
def world_columns(column_body, S_ang, S_lin, R, p, C_ang, C_lin):
    """C_ang, C_lin (3, nv): what qd_k adds to the angular velocity and to the velocity of the world origin (eq. 2)."""
    for k in range(column_body.shape[0]):
        b = column_body[k]
        for a in range(3):
            C_ang[a, k] = R[b, a, 0] * S_ang[k, 0] + R[b, a, 1] * S_ang[k, 1] + R[b, a, 2] * S_ang[k, 2]
            C_lin[a, k] = R[b, a, 0] * S_lin[k, 0] + R[b, a, 1] * S_lin[k, 1] + R[b, a, 2] * S_lin[k, 2]
        C_lin[0, k] -= C_ang[1, k] * p[b, 2] - C_ang[2, k] * p[b, 1]
        C_lin[1, k] -= C_ang[2, k] * p[b, 0] - C_ang[0, k] * p[b, 2]
        C_lin[2, k] -= C_ang[0, k] * p[b, 1] - C_ang[1, k] * p[b, 0]


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
def candidate_rows(moves, body, x, phi, C_ang, C_lin, w, dt, margin, which, G):
    """The number n of candidates: points with phi + 2 dt min(xdot_z(w), 0) < margin; their indices in which[:n] and
    their rows x, y, z in G[3 j : 3 j + 3] (j < n)."""
    n = 0
    for i in range(body.shape[0]):
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
def joint_row_sets(v_lo, v_hi, bound, w, sets):
    """The joints with a row in the step, by kind, in the rows of ``sets`` (4 x nv): braked (v_lo = v_hi: bilateral);
    where v_lo < v_hi, boxed (impulse bound > 0), on a finite lower stop the free velocity w reaches (w <= v_lo), on a
    finite upper one (w >= v_hi). Returns the four counts."""
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
        if np.isfinite(v_lo[j]) and w[j] <= v_lo[j]:
            sets[2, n_lower] = j
            n_lower += 1
        if np.isfinite(v_hi[j]) and w[j] >= v_hi[j]:
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
