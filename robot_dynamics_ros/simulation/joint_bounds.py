"""The joints' inputs to a step's solve, written once (no ROS import): the applied effort (the command within the
effort limits) and each joint's velocity bounds and friction box, for the one-call contact step (``contact_step``)
and ``Simulator``, which adds the servo's drives. Written as loops, as ``algorithms/``: compiled by numba where it is
installed (``step_data.stage_kernels``), the same code as plain Python otherwise.
"""
import numpy as np

from ..algorithms.backends import njit


@njit()
def applied_effort(command, effort_limit, q_of_v, tau):
    """tau = the command within the effort limits on the 1-DOF joints' velocity coordinates (q_of_v[j] >= 0: their
    coordinate in q), zero on a floating or planar joint's."""
    for j in range(tau.shape[0]):
        limit = effort_limit[j]
        tau[j] = min(max(command[j], -limit), limit) if q_of_v[j] >= 0 else 0.0


@njit()
def joint_bounds(lower_v, upper_v, speed, friction, q, q_of_v, dt, braked, v_lo, v_hi, bound, center):
    """The joints' rows of a step from q: v_lo <= v <= v_hi keeps q + dt v within the position limits (lower_v,
    upper_v per velocity coordinate) and |v| within the velocity limit ``speed`` (braked: v = 0 on the 1-DOF joints);
    the Coulomb friction's impulse within dt * friction about ``center`` = 0 (a servo's drives change both:
    ``Simulator._joint_rows``)."""
    for j in range(v_lo.shape[0]):
        actuated = q_of_v[j] >= 0
        if braked:
            v_lo[j] = 0.0 if actuated else -np.inf
            v_hi[j] = 0.0 if actuated else np.inf
        else:
            position = q[q_of_v[j]] if actuated else 0.0
            v_lo[j] = max((lower_v[j] - position) / dt, -speed[j])
            v_hi[j] = min((upper_v[j] - position) / dt, speed[j])
        bound[j] = dt * friction[j]
        center[j] = 0.0
