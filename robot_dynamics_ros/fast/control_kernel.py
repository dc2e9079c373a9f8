"""One controller update compiled: what ``JointStateMapper.map``, ``TrajectoryReference.sample`` and
``ComputedTorqueController.compute`` (control.py, the NumPy path) compute for a joint state, in one call, with
RNEA from the table kernel. ``control.ControlStep`` packs the arguments.

The kernel returns False, leaving its results undefined, for every input on which the NumPy path raises
ValueError (a joint state of the wrong length, without velocities, non-finite or implausible; a non-finite
reference); the caller then runs the NumPy path, which raises with its message.
"""
import numpy as np

from ..algorithms.backends import njit
from ..algorithms.rnea import rnea_kernel
from ..control import FRICTION_SMOOTHING_VELOCITY

# Rows of the per-joint constants J (model order).
KP, KD, DAMPING, FRICTION, EFFORT_LIMIT, LOWER, UPPER, MAX_SPEED, CONTINUOUS = range(9)
JOINT_ROWS = 9
# Rows of the results R: the measured state, the reference, the feedback and the acceleration RNEA gets, a row of
# zeros (never written), tau in model order and the command (tau in output order).
Q, QD, Q_REF, QD_REF, QDD_REF, FEEDBACK, ACCELERATION, ZERO, TAU, COMMAND = range(10)
RESULT_ROWS = 10
# Control modes, in the order of control.CONTROL_MODES.
COMPUTED_TORQUE, PD_GRAVITY, GRAVITY_COMPENSATION = range(3)


@njit(cache=True)
def map_joint_state(positions, velocities, n_names, source, allow_missing_velocity, J, q, qd):
    """q_i = positions[source_i], qd_i = velocities[source_i] (zero without velocities, where allowed); False
    for arrays of the wrong length and values that are not finite or beyond the bounds J[LOWER], J[UPPER],
    J[MAX_SPEED] (JointStateMapper.map)."""
    if len(positions) != n_names:
        return False
    if len(velocities) == 0:
        if not allow_missing_velocity:
            return False
    elif len(velocities) != n_names:
        return False
    for i in range(q.shape[0]):
        q[i] = positions[source[i]]
        qd[i] = velocities[source[i]] if len(velocities) else 0.0
        if not (np.isfinite(q[i]) and np.isfinite(qd[i])
                and J[LOWER, i] <= q[i] <= J[UPPER, i] and abs(qd[i]) <= J[MAX_SPEED, i]):
            return False
    return True


@njit(cache=True)
def sample_reference(t, times, waypoints, coefficients, segment, q_ref, qd_ref, qdd_ref):
    """(q_ref, qd_ref, qdd_ref) at time t (TrajectoryReference.sample): the first waypoint at rest up to times[0],
    the last one from times[-1] on, else segment i's polynomial q = sum_j a_j dt^j (dt = t - times[i]) and its
    derivatives. segment[0]: the segment used last, kept when t is still in it."""
    held = coefficients.shape[0] == 0 or t <= times[0] or t >= times[-1]
    if held:
        waypoint = waypoints[0] if coefficients.shape[0] == 0 or t <= times[0] else waypoints[-1]
        for k in range(q_ref.shape[0]):
            q_ref[k], qd_ref[k], qdd_ref[k] = waypoint[k], 0.0, 0.0
        return
    i = segment[0]
    if not (i < coefficients.shape[0] and times[i] <= t < times[i + 1]):
        i = segment[0] = np.searchsorted(times, t, side='right') - 1
    dt = t - times[i]
    for k in range(q_ref.shape[0]):
        q_ref[k], qd_ref[k], qdd_ref[k] = 0.0, 0.0, 0.0
    for j in range(coefficients.shape[1]):
        # d^r/dt^r (a_j dt^j) = j!/(j - r)! a_j dt^(j - r), r = 0, 1, 2
        power = dt ** j
        first = j * dt ** (j - 1) if j >= 1 else 0.0
        second = j * (j - 1) * dt ** (j - 2) if j >= 2 else 0.0
        for k in range(q_ref.shape[0]):
            a = coefficients[i, j, k]
            q_ref[k] += power * a
            qd_ref[k] += first * a
            qdd_ref[k] += second * a


@njit(cache=True)
def control_law(mode, friction_compensation, J, P, W, a0, f_ext, R):
    """tau = R[TAU] for the state and reference in R (ComputedTorqueController.compute):
    computed_torque:      tau = RNEA(q, qd, qdd_ref + Kd (qd_ref - qd) + Kp (q_ref - q))
    pd_gravity:           tau = Kp (q_ref - q) + Kd (qd_ref - qd) + g(q)
    gravity_compensation: tau = g(q) = RNEA(q, 0, 0)
    friction compensation (first two modes): + damping qd + friction tanh(qd_ref / FRICTION_SMOOTHING_VELOCITY);
    then tau is clamped to the effort limits."""
    q, qd, q_ref, qd_ref, qdd_ref = R[Q], R[QD], R[Q_REF], R[QD_REF], R[QDD_REF]
    feedback, acceleration, zero, tau = R[FEEDBACK], R[ACCELERATION], R[ZERO], R[TAU]
    n = q.shape[0]
    if mode == GRAVITY_COMPENSATION:
        rnea_kernel(P, W, a0, f_ext, q, zero, zero, tau)
    else:
        for i in range(n):
            error = q_ref[i] - q[i]
            if J[CONTINUOUS, i]:   # wrapped into [-pi, pi): the short way round
                error = (error + np.pi) % (2.0 * np.pi) - np.pi
            feedback[i] = J[KP, i] * error + J[KD, i] * (qd_ref[i] - qd[i])
            acceleration[i] = qdd_ref[i] + feedback[i]
        if mode == COMPUTED_TORQUE:
            rnea_kernel(P, W, a0, f_ext, q, qd, acceleration, tau)
        else:
            rnea_kernel(P, W, a0, f_ext, q, zero, zero, tau)
            for i in range(n):
                tau[i] = feedback[i] + tau[i]
        if friction_compensation:
            for i in range(n):
                tau[i] += J[DAMPING, i] * qd[i] + J[FRICTION, i] * np.tanh(qd_ref[i] / FRICTION_SMOOTHING_VELOCITY)
    for i in range(n):   # comparisons keep a NaN, as np.clip does
        if tau[i] > J[EFFORT_LIMIT, i]:
            tau[i] = J[EFFORT_LIMIT, i]
        elif tau[i] < -J[EFFORT_LIMIT, i]:
            tau[i] = -J[EFFORT_LIMIT, i]


@njit(cache=True)
def control_step(positions, velocities, n_names, source, allow_missing_velocity, t, times, waypoints, coefficients,
                 segment, mode, friction_compensation, J, P, W, a0, f_ext, output_order, R):
    """Map the joint state, sample the reference at t, run the control law and write R[COMMAND][k] =
    tau[output_order[k]]; False (nothing to command) where the NumPy path raises ValueError."""
    if not map_joint_state(positions, velocities, n_names, source, allow_missing_velocity, J, R[Q], R[QD]):
        return False
    sample_reference(t, times, waypoints, coefficients, segment, R[Q_REF], R[QD_REF], R[QDD_REF])
    for row in (Q_REF, QD_REF, QDD_REF):
        for k in range(R.shape[1]):
            if not np.isfinite(R[row, k]):
                return False
    control_law(mode, friction_compensation, J, P, W, a0, f_ext, R)
    for k in range(R.shape[1]):
        R[COMMAND, k] = R[TAU, output_order[k]]
    return True
