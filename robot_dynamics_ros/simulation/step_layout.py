"""The layout of one simulator's step data (``step_data.StepData``) in five arrays, its arenas, and of the step's
constants in two more (no ROS import).

The one-call step (``contact_step``) takes the arenas as five arguments, not some thirty buffers (numba unboxes each
argument of a call: ~60 ns apiece), and views its buffers in them as ``StepData`` does, by these two functions: one
layout, read by both. Its constants (the packed model, the point kinematics, the contact points, the joints' maps
and bounds, the solver's settings) likewise come as two arrays, viewed by ``constant_buffers``. The viewing
functions are inlined where the step calls them (numba's inline='always'): a view returned from a call of its own
is counted in and out of its arena's reference count, ~20 ns apiece, some 60 a step.
"""
import numpy as np

from ..algorithms.backends import njit, shaped
from ..algorithms.packing import N_COLUMNS, WORK_WIDTH
from .sliding import SLIP_COLUMNS

# Rows of the per-joint float array ``joints`` of the one-call step (nv columns each): the simulator's constants,
# the step's inputs, then its scratch.
LOWER_V, UPPER_V, SPEED, EFFORT_LIMIT, DAMPING, FRICTION = range(6)         # constants
COMMAND_EFFORT, EXTERNAL, TAU, V_LO, V_HI, BOUND, CENTER = range(6, 13)      # inputs, the effort, the joints' rows
TAU_TOTAL, QDD, FREE_VELOCITY, PIVOTS, BOX_BOUND, V_AFTER, BIAS = range(13, 20)  # scratch
CONTINUOUS, POSITION_TARGET, VELOCITY_TARGET, DRIVEN = range(20, 24)   # the servo's: constant, inputs, scratch
JOINT_ROWS = 24
# Rows of the per-joint integer array ``joint_ints``: the row sets (4 rows), the stops broken (4 rows, as
# ``broken_stops`` writes them), the boxed rows' and the stops' roles revised by the fixed point, and the last
# step's counts: its rows m, contact candidates nc (``ContactStep.rows``), the bounded solve's sweeps (0: a
# certified pattern took the step) and 1 where they were cut off at their bound, neither converged nor certified (else
# 0). Its rows have nv columns, and at least N_COUNTS (the counts').
SETS, FOUND, BOX_ROLES, STOP_ROLES, COUNTS = 0, 4, 8, 9, 10
JOINT_INT_ROWS, N_COUNTS = 11, 4


# Rows of the tree's per-joint vectors (``tree_buffers``, with coupled mimic joints): its velocity, the free
# velocity's, the pivots and bias of its U D U^T and RNEA, a zero acceleration, a point's row on its coordinates.
TREE_QD, TREE_W, TREE_D, TREE_BIAS, TREE_ZERO, TREE_ROW = range(6)
TREE_ROWS = 6


def tree_size(nv, tree_nq, tree_nv, count):
    """The length of ``tree_buffers``' arena (``count`` contact points)."""
    return tree_nq + TREE_ROWS * tree_nv + tree_nv * tree_nv + tree_nv * nv + nv * nv + 3 * count * tree_nv


@njit()
def model_sizes(nb, count, nv, nq, tree_nv):
    """The sizes of ``model_buffers``' float views and int views, in their order."""
    return ((9 * nb, 3 * nb, 3 * tree_nv, 3 * tree_nv, 3 * count, count, 5 * nb, (3 * count + 3 * nv) * nv, 3 * count,
             nv, 2 * count, count, 4 * nv, SLIP_COLUMNS * count, count, nv * nv, JOINT_ROWS * nv, count, count, 3 * nv,
             nq),
            (count, count, nv, nv, nv, count, JOINT_INT_ROWS * max(nv, N_COUNTS), nb))


@njit(inline='always')
def tree_buffers(coupled):
    """The step's buffers on the tree's coordinates where mimic joints are coupled (``model/mimic.py``; ``coupled``:
    their G, Gq, q_offset and an arena of ``tree_size``), as views of its arena: q_tree, the per-joint vectors (rows
    TREE_QD ..), U of M_tree = U D U^T, B = U^T G, the reduced M = G^T M_tree G and the contact candidates' rows J on
    the tree's coordinates (3 per point)."""
    G, Gq, _, tree = coupled
    tree_nv, nv, tree_nq = G.shape[0], G.shape[1], Gq.shape[0]
    o = tree_nq + TREE_ROWS * tree_nv
    vectors = shaped(tree[tree_nq:o], (TREE_ROWS, tree_nv))
    U_tree = shaped(tree[o:o + tree_nv * tree_nv], (tree_nv, tree_nv))
    o += tree_nv * tree_nv
    B = shaped(tree[o:o + tree_nv * nv], (tree_nv, nv))
    o += tree_nv * nv
    M = shaped(tree[o:o + nv * nv], (nv, nv))
    o += nv * nv
    rows = tree[o:]
    return tree[:tree_nq], vectors, U_tree, B, M, shaped(rows, (rows.shape[0] // tree_nv, tree_nv))


@njit(inline='always')
def model_buffers(floats, ints, nb, count, nv, nq, tree_nv):
    """The step's buffers sized by the model, as views of its two arenas (floats, ints), in this order: body poses
    R, p; world columns C_ang, C_lin; points x, heights phi; body velocities; the row set G (3 per point, 3 per
    joint); each point's impulse; the velocity v; the shifts of the last two steps; the sweeps' shifts; the joint
    rows' impulses; the sliding candidates' slip; each point's last secant slope (``sliding.next_shift``); the
    one-call step's U of M = U D U^T, its per-joint ``joints`` (D among them), the candidates' trial shifts and gap
    velocities, the joint rows' offsets beta, q lifted out of the ground; then the candidates ``which``, the roles
    of the points, boxes and stops, the candidates' roles, the per-joint ``joint_ints`` and the bodies ``near`` the
    ground (``model_sizes``)."""
    sizes, int_sizes = model_sizes(nb, count, nv, nq, tree_nv)
    R, o = take(floats, 0, sizes[0])
    p, o = take(floats, o, sizes[1])
    C_ang, o = take(floats, o, sizes[2])
    C_lin, o = take(floats, o, sizes[3])
    x, o = take(floats, o, sizes[4])
    phi, o = take(floats, o, sizes[5])
    bodies, o = take(floats, o, sizes[6])
    G, o = take(floats, o, sizes[7])
    impulses, o = take(floats, o, sizes[8])
    v, o = take(floats, o, sizes[9])
    shift, o = take(floats, o, sizes[10])
    swept_shift, o = take(floats, o, sizes[11])
    joint_impulse, o = take(floats, o, sizes[12])
    slip, o = take(floats, o, sizes[13])
    slope, o = take(floats, o, sizes[14])
    U, o = take(floats, o, sizes[15])
    joints, o = take(floats, o, sizes[16])
    trial, o = take(floats, o, sizes[17])
    gap, o = take(floats, o, sizes[18])
    beta, o = take(floats, o, sizes[19])
    q_start, o = take(floats, o, sizes[20])
    which, o = take(ints, 0, int_sizes[0])
    contact_role, o = take(ints, o, int_sizes[1])
    box_role, o = take(ints, o, int_sizes[2])
    lower_role, o = take(ints, o, int_sizes[3])
    upper_role, o = take(ints, o, int_sizes[4])
    contact_roles, o = take(ints, o, int_sizes[5])
    joint_ints, o = take(ints, o, int_sizes[6])
    near, o = take(ints, o, int_sizes[7])
    R, p, C_ang, C_lin, x = shaped(R, (nb, 3, 3)), shaped(p, (nb, 3)), shaped(C_ang, (3, tree_nv)), \
        shaped(C_lin, (3, tree_nv)), shaped(x, (count, 3))
    bodies, G, impulses = shaped(bodies, (nb, 5)), shaped(G, (3 * count + 3 * nv, nv)), shaped(impulses, (count, 3))
    shift, joint_impulse, slip = shaped(shift, (2, count)), shaped(joint_impulse, (4, nv)), \
        shaped(slip, (count, SLIP_COLUMNS))
    U, joints, joint_ints = shaped(U, (nv, nv)), shaped(joints, (JOINT_ROWS, nv)), \
        shaped(joint_ints, (JOINT_INT_ROWS, max(nv, N_COUNTS)))
    return (R, p, C_ang, C_lin, x, phi, bodies, G, impulses, v, shift, swept_shift, joint_impulse, slip, slope, U,
            joints, trial, gap, beta, q_start, which, contact_role, box_role, lower_role, upper_role, contact_roles,
            joint_ints, near)


def row_floats(nv, m):
    """The length of ``row_buffers``' float arena for up to m rows."""
    return nv * m + 2 * m * m + 7 * m


@njit(inline='always')
def row_buffers(floats, ints, flags, nv):
    """The step's buffers for up to m rows (m = len(flags)), as views of its three arenas: Y = M^-1 G^T, the
    Delassus matrix A, the held rows' Cholesky factor L, then c, lam, y, the singular patterns' least squares
    (previous, rhs), the sweeps' impulses, the last solve's impulses (restored on a fall-back); the held rows F; the
    rows held ``free``."""
    m = flags.shape[0]
    Y = shaped(floats[:nv * m], (nv, m))
    A = shaped(floats[nv * m:nv * m + m * m], (m, m))
    L = shaped(floats[nv * m + m * m:nv * m + 2 * m * m], (m, m))
    o = nv * m + 2 * m * m
    c, lam, y, previous = floats[o:o + m], floats[o + m:o + 2 * m], floats[o + 2 * m:o + 3 * m], \
        floats[o + 3 * m:o + 4 * m]
    rhs, swept, saved = floats[o + 4 * m:o + 5 * m], floats[o + 5 * m:o + 6 * m], floats[o + 6 * m:o + 7 * m]
    return Y, A, L, c, lam, y, previous, rhs, swept, saved, ints[:m], flags


N_SETTINGS, N_SIZES = 6, 5   # the settings at the end of the constants' float arena, the sizes first in their ints


@njit()
def constant_sizes(nb, count, nv, nq, tree_nv):
    """The sizes of ``constant_buffers``' float views and int views, in their order."""
    return ((tree_nv * N_COLUMNS, tree_nv * WORK_WIDTH, 3 * nb, 9 * nb, 3 * nb, 3 * tree_nv, 3 * tree_nv, 3 * count,
             count, 8 * nb, nq, nq, N_SETTINGS),
            (N_SIZES, nb, nb, nb, tree_nv, nb * tree_nv, count, nb, nb, nv))


@njit(inline='always')
def take(arena, start, size):
    """arena[start:start + size] and the offset after it."""
    return arena[start:start + size], start + size


@njit(inline='always')
def constant_buffers(floats, ints):
    """The one-call step's constants as views of their two arenas, in this order: the packed model's table, its work
    rows; the point kinematics' joint axes, E^T and r of the tree transforms, the motion subspace's
    columns (angular, linear); the contact points' centres and radii, and their reach per body
    (``contact_rows.body_reach``); the position bounds lower, upper; the settings (margin, penetration, the fixed
    point's iterations and tolerance, the sweeps' count and tolerance: ``ContactStep``); then the sizes (nb, count,
    nv, nq, tree_nv: the int arena's first entries), the tree's parents, joint types and coordinate offsets, each
    column's body, which columns move each body, each point's body, the bodies' coordinate and velocity offsets in
    the model's q and v (with coupled mimic joints, not the tree's) and each velocity's coordinate (-1 for the
    root's)."""
    nb, count, nv, nq, tree_nv = ints[0], ints[1], ints[2], ints[3], ints[4]
    sizes, int_sizes = constant_sizes(nb, count, nv, nq, tree_nv)
    o = 0
    P, o = take(floats, o, sizes[0])
    work, o = take(floats, o, sizes[1])
    axis, o = take(floats, o, sizes[2])
    E_T, o = take(floats, o, sizes[3])
    r, o = take(floats, o, sizes[4])
    S_ang, o = take(floats, o, sizes[5])
    S_lin, o = take(floats, o, sizes[6])
    centre, o = take(floats, o, sizes[7])
    radius, o = take(floats, o, sizes[8])
    reach, o = take(floats, o, sizes[9])
    lower, o = take(floats, o, sizes[10])
    upper, o = take(floats, o, sizes[11])
    settings, o = take(floats, o, sizes[12])
    o = int_sizes[0]
    parent, o = take(ints, o, int_sizes[1])
    joint_type, o = take(ints, o, int_sizes[2])
    idx_q, o = take(ints, o, int_sizes[3])
    column_body, o = take(ints, o, int_sizes[4])
    moves, o = take(ints, o, int_sizes[5])
    body, o = take(ints, o, int_sizes[6])
    model_q, o = take(ints, o, int_sizes[7])
    idx_v, o = take(ints, o, int_sizes[8])
    q_of_v, o = take(ints, o, int_sizes[9])
    return (shaped(P, (tree_nv, N_COLUMNS)), shaped(work, (tree_nv, WORK_WIDTH)), shaped(axis, (nb, 3)),
            shaped(E_T, (nb, 3, 3)), shaped(r, (nb, 3)), shaped(S_ang, (tree_nv, 3)), shaped(S_lin, (tree_nv, 3)),
            shaped(centre, (count, 3)), radius, shaped(reach, (nb, 8)), lower, upper, settings, parent, joint_type,
            idx_q, column_body, shaped(moves, (nb, tree_nv)), body, model_q, idx_v, q_of_v)
