"""The joints' inputs to a step's solve, written once (no ROS import): the applied effort (the command within the
effort limits), each joint's velocity bounds and friction box, and the servo's drives, for the one-call contact step
(``contact_step``) and ``Simulator``. Written as loops, as ``algorithms/``: compiled by numba where it is
installed (``step_data.stage_kernels``), the same code as plain Python otherwise.
"""
import numpy as np

from ..algorithms.backends import njit

# The position servo as gz_ros2_control's: each step the joint is driven at the velocity that closes this fraction
# of its position error (its position_proportional_gain, default 0.1): a first-order response with time constant
# dt / POSITION_GAIN (10 ms at the default 1 kHz), held by the drive with up to the effort limit.
POSITION_GAIN = 0.1


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
    ``drive_rows``)."""
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


@njit()
def drive_rows(position_target, velocity_target, continuous, effort_limit, tau, q, q_of_v, dt, v_lo, v_hi, bound,
               center, driven):
    """The servo's drives on the joints' rows from q (after ``joint_bounds``): a 1-DOF joint with a position or a
    velocity target (NaN: none) is driven at c = its velocity target + POSITION_GAIN (position error) / dt, within
    [v_lo, v_hi] (the error wrapped into [-pi, pi) on a ``continuous`` joint), by an impulse within dt times what its
    applied effort tau leaves of the effort limit (``Simulator.set_joint_command``); ``driven`` 1.0 there, else 0.0."""
    for j in range(v_lo.shape[0]):
        has_position, has_velocity = not np.isnan(position_target[j]), not np.isnan(velocity_target[j])
        driven[j] = 1.0 if q_of_v[j] >= 0 and (has_position or has_velocity) else 0.0
        if driven[j] == 0.0:
            continue
        error = position_target[j] - q[q_of_v[j]] if has_position else 0.0
        if continuous[j] != 0.0:
            error = (error + np.pi) % (2.0 * np.pi) - np.pi
        velocity = (velocity_target[j] if has_velocity else 0.0) + POSITION_GAIN * error / dt
        center[j] = min(max(velocity, v_lo[j]), v_hi[j])
        bound[j] = dt * (effort_limit[j] - abs(tau[j]))
