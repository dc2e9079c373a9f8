"""One controller update compiled: what ``JointStateMapper.map``, ``TrajectoryReference.sample`` and
``ComputedTorqueController.update`` (control.py, the NumPy path) compute for a joint state, in one call, with
RNEA from the table kernel (``reduced_rnea``: on a model with coupled mimic joints, the tree's RNEA projected with
the coupling's joint map G). ``control.computed_torque.ControlStep`` packs the arguments. The reference governor and
the integral action (``govern_reference``, ``integrate_error``) are written once, here: the NumPy path runs them as
plain Python, on the same state arrays.

The kernel returns False, leaving its results undefined, for every input on which the NumPy path raises
ValueError (a joint state of the wrong length, without velocities, non-finite or implausible; a non-finite
reference); the caller then runs the NumPy path, which raises with its message.
"""
import math
from array import array

import numpy as np

from ..algorithms.backends import njit
from ..algorithms.rnea import rnea_kernel

FRICTION_SMOOTHING_VELOCITY = 0.01  # rad/s or m/s: Coulomb feed-forward ramps in over this speed

# Rows of the per-joint constants J (model order): gains, URDF damping, friction and effort limit, the plausibility
# bounds of joint states (LOWER, UPPER, MAX_SPEED), continuous joints, and the limits the governed reference keeps
# to (position, velocity, acceleration; inf: none).
(KP, KD, KI, DAMPING, FRICTION, EFFORT_LIMIT, LOWER, UPPER, MAX_SPEED, CONTINUOUS,
 POSITION_LOW, POSITION_HIGH, VELOCITY_LIMIT, ACCELERATION_LIMIT) = range(14)
JOINT_ROWS = 14
# Rows of the controller's state S: the governed reference position and velocity, the integral of the error, and
# whether the governor limited the joint's reference at the last update (1.0) or passed it through (0.0).
GOVERNED_Q, GOVERNED_QD, INTEGRAL, LIMITED = range(4)
STATE_ROWS = 4
# The controller's clock C: [time of the last update (s), whether the governor has started, updates it limited]
LAST_TIME, STARTED, LIMITED_UPDATES = range(3)
# Rows of the results R: the measured state, the reference, the feedback and the acceleration RNEA gets, a row of
# zeros (never written), tau in model order and the command (tau in output order).
Q, QD, Q_REF, QD_REF, QDD_REF, FEEDBACK, ACCELERATION, ZERO, TAU, COMMAND = range(10)
RESULT_ROWS = 10
INTEGRAL_ARGUMENT = RESULT_ROWS   # ComputedTorqueController's row after them: the integral the law reads
# Control modes, in the order of control.CONTROL_MODES.
COMPUTED_TORQUE, PD_GRAVITY, GRAVITY_COMPENSATION = range(3)


def coupling_arrays(model):
    """(G, Gq, q_offset, T) for ``reduced_rnea``: a model's coupling of mimic joints (``model/mimic.py``) and the work
    rows T of the tree's q, qd, qdd, tau; empty arrays for a model without one (arrays of one type either way, so
    that both take the same compiled code)."""
    c = model.coupling
    if c is None:
        return np.zeros((0, 0)), np.zeros((0, 0)), np.zeros(0), np.zeros((4, 0))
    return np.array(c.G), np.array(c.Gq), np.array(c.q_offset), np.zeros((4, max(c.G.shape[0], c.Gq.shape[0])))


@njit(cache=True)
def _product_into(out, A, x):
    """out = A x for a dense A (the coupling's maps are a few dozen entries: no BLAS call)."""
    for i in range(A.shape[0]):
        total = 0.0
        for j in range(A.shape[1]):
            total += A[i, j] * x[j]
        out[i] = total


@njit(cache=True)
def reduced_rnea(P, W, a0, f_ext, G, Gq, q_offset, T, q, qd, qdd, tau):
    """tau = RNEA(q, qd, qdd) on the model's coordinates: RNEA on the packed model P itself, or, with coupled mimic
    joints (G has rows), tau = G^T RNEA_tree(Gq q + q_offset, G qd, G qdd) on the tree's packed model P (the
    master's effort sums its mimic joints' efforts times their multipliers: virtual work)."""
    if G.shape[0] == 0:
        rnea_kernel(P, W, a0, f_ext, q, qd, qdd, tau)
        return
    nq, nv = Gq.shape[0], G.shape[0]
    q_tree, qd_tree, qdd_tree, tau_tree = T[0, :nq], T[1, :nv], T[2, :nv], T[3, :nv]
    _product_into(q_tree, Gq, q)
    for i in range(nq):
        q_tree[i] += q_offset[i]
    _product_into(qd_tree, G, qd)
    _product_into(qdd_tree, G, qdd)
    rnea_kernel(P, W, a0, f_ext, q_tree, qd_tree, qdd_tree, tau_tree)
    for j in range(G.shape[1]):
        total = 0.0
        for i in range(nv):
            total += G[i, j] * tau_tree[i]
        tau[j] = total


def kernel_vector(values):
    """values for the compiled kernel: rclpy's float64[] fields (array('d')) as they are (numba reads the buffer),
    anything else as a contiguous float64 vector (as JointStateMapper.map reads it)."""
    if isinstance(values, array) and values.typecode == 'd':
        return values
    return np.ascontiguousarray(values, dtype=float).reshape(-1)


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
def governed_change(error, v_target, velocity, v_max, a_max, dt):
    """The governed velocity's change over one step: toward v_target plus the speed from which a_max stops the
    remaining error (v = sqrt(2 a_max |error|)), within v_max, by at most a_max dt."""
    wanted = min(max(v_target + math.copysign(math.sqrt(2.0 * a_max * abs(error)), error), -v_max), v_max)
    return min(max(wanted - velocity, -a_max * dt), a_max * dt)


@njit(cache=True)
def govern_reference(now, J, S, C, q, qd, q_ref, qd_ref, qdd_ref):
    """Replace the sampled reference (q_ref, qd_ref, qdd_ref) by one that keeps to the joint limits, and return
    the time step since the last update (0 at the first). Per joint: the target is q_ref clamped into
    [POSITION_LOW, POSITION_HIGH] (at rest there); while the governed reference S[GOVERNED_Q] can reach it within
    one step at a speed within VELOCITY_LIMIT, it is the reference itself (qdd_ref kept where within
    ACCELERATION_LIMIT); otherwise it moves toward the target at the velocity limit and, with an acceleration
    limit, accelerates and brakes within it (braking in time not to overshoot: v = sqrt(2 a |e|)), its
    feed-forward the acceleration of the coming step. The first update starts it at the measured state, clamped
    into the limits, and holds it there; so does an update at the same time as the last one.
    C[LIMITED_UPDATES] counts the updates on which some joint was limited."""
    n = q.shape[0]
    dt = 0.0
    if C[STARTED] == 0.0:
        for i in range(n):
            S[GOVERNED_Q, i] = min(max(q[i], J[POSITION_LOW, i]), J[POSITION_HIGH, i])
            S[GOVERNED_QD, i] = min(max(qd[i], -J[VELOCITY_LIMIT, i]), J[VELOCITY_LIMIT, i])
        C[STARTED] = 1.0
    else:
        dt = max(now - C[LAST_TIME], 0.0)
    C[LAST_TIME] = now
    limited = False
    for i in range(n):
        low, high = J[POSITION_LOW, i], J[POSITION_HIGH, i]
        v_max, a_max = J[VELOCITY_LIMIT, i], J[ACCELERATION_LIMIT, i]
        inside = low < q_ref[i] < high
        target = min(max(q_ref[i], low), high)
        v_target = qd_ref[i] if inside else 0.0
        a_target = qdd_ref[i] if inside else 0.0
        error = target - S[GOVERNED_Q, i]
        if J[CONTINUOUS, i]:   # the short way round (unlimited revolute joint)
            error = (error + math.pi) % (2.0 * math.pi) - math.pi
            target = S[GOVERNED_Q, i] + error
        reachable = (dt > 0.0 and abs(v_target) <= v_max and abs(a_target) <= a_max
                     and abs(error) <= v_max * dt + 1e-12 and abs(v_target - S[GOVERNED_QD, i]) <= 2.0 * a_max * dt)
        S[LIMITED, i] = 0.0 if reachable else 1.0
        if reachable:
            S[GOVERNED_Q, i], S[GOVERNED_QD, i] = target, v_target
            q_ref[i], qd_ref[i], qdd_ref[i] = target, v_target, a_target
            continue
        limited = True
        if dt == 0.0:   # the first update, or one at the time of the last: hold
            q_ref[i], qd_ref[i], qdd_ref[i] = S[GOVERNED_Q, i], S[GOVERNED_QD, i], 0.0
            continue
        if a_max == math.inf:   # a velocity limit alone: straight to the target at v_max
            step = min(max(error, -v_max * dt), v_max * dt)
            velocity, acceleration = step / dt, 0.0
        else:   # toward the speed from which a_max stops at the target (within v_max), changing within a_max
            velocity = S[GOVERNED_QD, i] + governed_change(error, v_target, S[GOVERNED_QD, i], v_max, a_max, dt)
            step = velocity * dt
            if abs(step) > abs(error) and step * error > 0.0:   # arrives within this step
                step, velocity = error, v_target
            # the feed-forward: the acceleration of the coming step (the command acts over it), not the last one's
            acceleration = governed_change(error - step, v_target, velocity, v_max, a_max, dt) / dt
        position = S[GOVERNED_Q, i] + step
        if position <= low or position >= high:   # on a limit: at rest there
            position, velocity, acceleration = min(max(position, low), high), 0.0, 0.0
        S[GOVERNED_Q, i], S[GOVERNED_QD, i] = position, velocity
        q_ref[i], qd_ref[i], qdd_ref[i] = position, velocity, acceleration
    if limited:
        C[LIMITED_UPDATES] += 1.0
    return dt


@njit(cache=True)
def integrate_error(dt, J, S, position_error, tau):
    """The integral action's anti-windup by conditional integration: S[INTEGRAL] += error dt for each joint whose
    reference the governor passed through and whose effort tau (before clamping) is within its effort limit, or
    whose error would take it back inside; a joint held at its effort limit, or following a limited reference
    (a slew, whose lag is no steady error), integrates nothing."""
    for i in range(tau.shape[0]):
        saturated = abs(tau[i]) >= J[EFFORT_LIMIT, i]
        if S[LIMITED, i] == 0.0 and (not saturated or position_error[i] * tau[i] < 0.0):
            S[INTEGRAL, i] += position_error[i] * dt


@njit(cache=True)
def control_law(mode, friction_compensation, J, P, W, a0, f_ext, G, Gq, q_offset, T, integral, R):
    """tau = R[TAU] for the state and reference in R (ComputedTorqueController.compute):
    computed_torque:      tau = RNEA(q, qd, qdd_ref + Kd (qd_ref - qd) + Kp (q_ref - q) + Ki integral)
    pd_gravity:           tau = Kp (q_ref - q) + Kd (qd_ref - qd) + Ki integral + g(q)
    gravity_compensation: tau = g(q) = RNEA(q, 0, 0)
    friction compensation (first two modes): + damping qd_ref + friction tanh(qd_ref / FRICTION_SMOOTHING_VELOCITY),
    both from the reference: damping times the measured qd is positive velocity feedback, unstable once a command
    acts late or is held on a joint whose damping is stiff for its inertia (Unitree Z1's wrist).
    R[ACCELERATION] keeps tau before the effort limits clamp it (for integrate_error); R[FEEDBACK] the position
    error. RNEA: ``reduced_rnea`` with (P, W, a0, f_ext, G, Gq, q_offset, T)."""
    q, qd, q_ref, qd_ref, qdd_ref = R[Q], R[QD], R[Q_REF], R[QD_REF], R[QDD_REF]
    feedback, acceleration, zero, tau = R[FEEDBACK], R[ACCELERATION], R[ZERO], R[TAU]
    n = q.shape[0]
    if mode == GRAVITY_COMPENSATION:
        reduced_rnea(P, W, a0, f_ext, G, Gq, q_offset, T, q, zero, zero, tau)
        for i in range(n):
            feedback[i] = 0.0
    else:
        for i in range(n):
            error = q_ref[i] - q[i]
            if J[CONTINUOUS, i]:   # wrapped into [-pi, pi): the short way round
                error = (error + np.pi) % (2.0 * np.pi) - np.pi
            acceleration[i] = qdd_ref[i] + J[KP, i] * error + J[KD, i] * (qd_ref[i] - qd[i]) + J[KI, i] * integral[i]
            feedback[i] = error
        if mode == COMPUTED_TORQUE:
            reduced_rnea(P, W, a0, f_ext, G, Gq, q_offset, T, q, qd, acceleration, tau)
        else:
            reduced_rnea(P, W, a0, f_ext, G, Gq, q_offset, T, q, zero, zero, tau)
            for i in range(n):
                tau[i] += acceleration[i] - qdd_ref[i]
        if friction_compensation:
            for i in range(n):
                tau[i] += J[DAMPING, i] * qd_ref[i] + J[FRICTION, i] * np.tanh(qd_ref[i] / FRICTION_SMOOTHING_VELOCITY)
    for i in range(n):   # comparisons keep a NaN, as np.clip does
        acceleration[i] = tau[i]
        if tau[i] > J[EFFORT_LIMIT, i]:
            tau[i] = J[EFFORT_LIMIT, i]
        elif tau[i] < -J[EFFORT_LIMIT, i]:
            tau[i] = -J[EFFORT_LIMIT, i]


@njit(cache=True)
def control_step(positions, velocities, n_names, source, allow_missing_velocity, t, now, times, waypoints,
                 coefficients, segment, mode, friction_compensation, J, S, C, P, W, a0, f_ext, G, Gq, q_offset, T,
                 output_order, R):
    """Map the joint state, sample the reference at t, govern it (the state's time: now), run the control law,
    integrate the error and write R[COMMAND][k] = tau[output_order[k]]; False (nothing to command, no state
    changed) where the NumPy path raises ValueError."""
    if not map_joint_state(positions, velocities, n_names, source, allow_missing_velocity, J, R[Q], R[QD]):
        return False
    sample_reference(t, times, waypoints, coefficients, segment, R[Q_REF], R[QD_REF], R[QDD_REF])
    for row in (Q_REF, QD_REF, QDD_REF):
        for k in range(R.shape[1]):
            if not np.isfinite(R[row, k]):
                return False
    saved_state, saved_clock = S.copy(), C.copy()
    dt = govern_reference(now, J, S, C, R[Q], R[QD], R[Q_REF], R[QD_REF], R[QDD_REF])
    control_law(mode, friction_compensation, J, P, W, a0, f_ext, G, Gq, q_offset, T, S[INTEGRAL], R)
    for k in range(R.shape[1]):
        if not np.isfinite(R[ACCELERATION, k]):   # a non-finite effort: the NumPy path raises
            S[:], C[:] = saved_state, saved_clock
            return False
    if mode != GRAVITY_COMPENSATION:
        integrate_error(dt, J, S, R[FEEDBACK], R[ACCELERATION])
    for k in range(R.shape[1]):
        R[COMMAND, k] = R[TAU, output_order[k]]
    return True
