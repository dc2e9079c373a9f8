"""Penetration removed at the start of a step, at the position level (no ROS import).

A point below the ground is left by the step's linearisation (a point on a rotating body moves on an arc, not on
the line dt J v: nanometres at 1 kHz) or by a robot placed into the ground. Either is removed before the step by
changing q, not v, so no kinetic energy is added; the potential energy returned is what the overshoot took:

- up to LIFT_DEPTH deep, by the smallest displacement in the metric M that lifts the points below the ground onto
  it, dq = M^-1 J_n^T (J_n M^-1 J_n^T)^+ (-phi) over those points (one linearised projection, Cline and Pai 2003);
- deeper (a placement, not an overshoot), a free-flyer root is lifted with the whole robot by the depth of its
  lowest point: exact for a translation, and no joint bends. (The smallest displacement lifted a quadruped placed
  0.5 m deep by folding its light legs, whose PD then threw it out at 2.9 m/s.)

Written as loops, as ``algorithms/``, so the plain-Python reference runs it and numba compiles it.
"""
from ..algorithms.backends import njit
from .contact_active_set import closest_held_rows, held_rows
from .contact_rows import model_row
from .delassus import delassus

LIFT_DEPTH = 1e-3   # m: deeper than this, the whole robot is lifted (a placement), else the smallest displacement


@njit()
def projection(moves, body, x, phi, C_ang, C_lin, U, D, tolerance, G, Y, A, L, F, free, c, z, scratch, rhs, dq,
               coupled):
    """dq, the smallest displacement in the metric M = U D U^T that lifts the points deeper than ``tolerance`` onto
    the ground (the linearised projection of the module's docstring); returns their number k (G, Y, A, L, F, free,
    c, z, scratch, rhs: buffers of the step's data, overwritten; at least k rows; the rows J_n on the model's
    coordinates, ``contact_rows.model_row``). Where J_n M^-1 J_n^T is singular (more points than freedoms), its
    least-norm solution."""
    k = 0
    for i in range(phi.shape[0]):
        if phi[i] < -tolerance:
            model_row(moves[body[i]], C_ang, C_lin, x[i], 2, coupled, G[k])
            c[k] = phi[i]                           # J_n M^-1 J_n^T z = -phi
            free[k] = True
            k += 1
    delassus(U, D, G, k, Y, A)                      # Y = M^-1 J_n^T, A = J_n M^-1 J_n^T
    if held_rows(A, c, k, z, free, L, F) < 0:
        for r in range(k):
            scratch[r] = 0.0
        closest_held_rows(A, c, k, z, free, scratch, L, F, rhs)
    for j in range(dq.shape[0]):
        value = 0.0
        for r in range(k):
            value += Y[j, r] * z[r]
        dq[j] = value
    return k
