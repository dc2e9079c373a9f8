"""Control laws and reference trajectories for the controller node (no ROS import)."""
import functools
import math
from array import array
from bisect import bisect_right
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.interpolate import CubicHermiteSpline, CubicSpline

from . import fast
from .algorithms.backends import compiled
from .algorithms.packing import packed
from .fast import control_kernel as kernel
from .fast.control_kernel import govern_reference, integrate_error
from .model.model import REVOLUTE, Model

Vector = NDArray[np.float64]

CONTROL_MODES = ('computed_torque', 'pd_gravity', 'gravity_compensation')


def all_finite(v):
    """Whether a float vector is all finite; a finite sum (one cheap call) settles it, else each element."""
    return math.isfinite(sum(v.tolist())) or bool(np.isfinite(v).all())


def as_finite_vector(name, value, n):
    """``value`` as a float array of length n, or ValueError saying what is wrong with it."""
    if type(value) is np.ndarray and value.dtype == np.float64 and value.ndim == 1:
        v = value   # the hot path: already a vector
    else:
        v = np.asarray(value, dtype=float).reshape(-1) if np.ndim(value) else np.full(n, float(value))
    if v.shape != (n,):
        raise ValueError(f'{name} has {v.size} values, expected {n}')
    if not all_finite(v):
        raise ValueError(f'{name} contains NaN or Inf: {v.tolist()}')
    return v


LIMIT_MARGIN = 0.95   # fraction of a joint's velocity limit (and of the room to its position limits) references use


def sampled_loop_is_stable(kp: float, kd: float, ki: float, period: float) -> bool:
    """Whether the error dynamics of one joint under the law, e'' = -(kp e + kd e' + ki int e), stay stable when
    the loop is sampled every ``period`` seconds and each command acts one period after the state it answers
    (zero-order hold, one period of delay: what a controller answering joint states does): the spectral radius
    of the sampled closed loop on (int e, e, e', u) is below 1."""
    T = period
    A = np.array([[1.0, T, 0.0, 0.0],
                  [0.0, 1.0, T, 0.5 * T * T],
                  [0.0, 0.0, 1.0, T],
                  [-ki, -kp, -kd, 0.0]])
    if ki == 0.0:   # no integral action: its state is no part of the loop (an eigenvalue 1 that nothing drives)
        A = A[1:, 1:]
    return bool(np.max(np.abs(np.linalg.eigvals(A))) < 1.0)


def check_gains(model: Model, mode: str, kp: ArrayLike, kd: ArrayLike, ki: ArrayLike, period: float) -> None:
    """ValueError unless every joint's gains keep the sampled loop stable (``sampled_loop_is_stable``) at the
    joint-state period. In 'pd_gravity' mode the gains are efforts per error: divided by the smallest inertia
    the joint can meet, 1 / (M^-1)_ii at the middle of the limits (the others free), they are accelerations as in
    'computed_torque', where the model cancels the inertia."""
    n = model.nv
    kp, kd, ki = (as_finite_vector(name, value, n) for name, value in (('kp', kp), ('kd', kd), ('ki', ki)))
    if mode == 'gravity_compensation':
        return
    inertia = np.ones(n)
    if mode == 'pd_gravity':
        from .algorithms import mass_matrix_inverse
        inertia = 1.0 / np.diag(mass_matrix_inverse(model, model.middle_of_limits()))
    unstable = [name for name, p, d, i, m in zip(model.joint_names, kp, kd, ki, inertia)
                if not sampled_loop_is_stable(p / m, d / m, i / m, period)]
    if unstable:
        raise ValueError(f'gains kp, kd, ki make the loop unstable at {1.0 / period:g} joint states per second '
                         f'(a command acting one period after its state) for joints {unstable}; lower them')


ACCELERATION_SAMPLES = 200   # configurations (fixed seed) over which model_acceleration_limits holds


def model_acceleration_limits(model: Model) -> Vector:
    """Joint accelerations the robot can make all at once, in any directions, against gravity, anywhere in its
    limits (URDF has no acceleration limits), per joint: the a > 0 that maximise sum_j log a_j (proportional
    fairness) with sum_j |M_ij(q)| a_j + |g_i(q)| <= E_i (effort limit) for every joint i at the middle of the limits
    and ACCELERATION_SAMPLES random configurations. A reference within them asks for efforts within the limits, so
    the computed-torque law keeps the joints decoupled; and a shoulder that gravity leaves little room slows the
    joints that load it in proportion to how much they load it, not the wrist (one common scale for all joints gave
    Kinova Gen3's shoulder 0.12 rad/s^2). A joint whose gravity load takes its whole effort at a configuration (it
    cannot hold the robot there) adds no bound from that configuration. Cached on the model (about 0.3 s)."""
    try:
        return model._cache['acceleration_limits'].copy()
    except KeyError:
        pass
    from scipy.optimize import LinearConstraint, minimize
    from .algorithms import crba
    rng = np.random.default_rng(0)
    rows, room = [], []
    for k in range(ACCELERATION_SAMPLES + 1):
        q = model.random_configuration(rng) if k else model.middle_of_limits()
        left = model.effort_limit - np.abs(fast.gravity_torques(model, q))
        rows.append(np.abs(crba(model, q))[left > 0])
        room.append(left[left > 0])
    A, b = np.vstack(rows), np.concatenate(room)
    with np.errstate(divide='ignore'):   # joints that load no row (massless) are not bounded: inf
        alone = np.min(b[:, None] / A, axis=0, initial=np.inf)   # each joint alone within every row
    bounded = np.isfinite(alone)
    A = A[:, bounded]
    # A feasible start: every joint at its alone value scaled by one common factor; then in units of the start
    # (well scaled: a wrist's and a shoulder's limits differ by 1e4).
    start = alone[bounded] * np.min(b / (A @ alone[bounded]), initial=1.0)
    limit = np.full(model.nv, np.inf)
    if bounded.any():
        result = minimize(lambda y: -np.sum(np.log(y)), np.ones(start.size), jac=lambda y: -1.0 / y, method='SLSQP',
                          constraints=[LinearConstraint(A * start, -np.inf, b)], bounds=[(1e-9, None)] * start.size,
                          options={'maxiter': 500, 'ftol': 1e-12})
        feasible = result.success and np.all(A @ (result.x * start) <= b * (1.0 + 1e-9))
        limit[bounded] = result.x * start if feasible else start
    model._cache['acceleration_limits'] = limit
    return limit.copy()


@functools.cache
def _control_law(backend):
    """The control law of ``fast.control_kernel``, compiled (numba) or as plain Python."""
    return compiled(kernel.control_law) if backend == 'numba' else kernel.control_law


class ComputedTorqueController:
    """Joint-space control laws on the rigid-body model; efforts are clamped to the URDF effort limits.

    mode 'computed_torque': tau = RNEA(q, qd, qdd_ref + Kd (qd_ref - qd) + Kp (q_ref - q) + Ki int(q_ref - q))
    mode 'pd_gravity':      tau = Kp (q_ref - q) + Kd (qd_ref - qd) + Ki int(q_ref - q) + g(q)
    mode 'gravity_compensation': tau = g(q)
    kp, kd, ki: scalars or one gain per joint. On continuous joints (revolute, unlimited) the position error
    is wrapped into [-pi, pi) so that the controller takes the short way round.
    friction_compensation: in the first two modes, also add the URDF joint friction as feed-forward,
    damping * qd_ref + friction * tanh(qd_ref / FRICTION_SMOOTHING_VELOCITY) (from the reference, see the kernel).

    ``compute`` is the law alone (no integral); ``update`` is a control step as the node runs it, with state: the
    reference is governed into the joint limits (``fast.control_kernel.govern_reference``: position limits,
    LIMIT_MARGIN times the URDF velocity limits, ``acceleration_limit``, by default ``model_acceleration_limits``),
    however the trajectory's
    points are spaced; and the integral action removes the steady error that Coulomb friction and model errors
    leave (a PD law stops wherever the friction holds the joint), with conditional integration as anti-windup
    (``integrate_error``). Its state (``state``, ``clock``) is shared with ``ControlStep``.
    """

    def __init__(self, model: Model, kp: ArrayLike, kd: ArrayLike, mode: str = 'computed_torque',
                 gravity: ArrayLike | None = None, friction_compensation: bool = False, ki: ArrayLike = 0.0,
                 acceleration_limit: ArrayLike | None = None) -> None:
        if mode not in CONTROL_MODES:
            raise ValueError(f'unknown control mode {mode!r}; expected one of {CONTROL_MODES}')
        n = model.nv
        self.model = model
        self.mode = mode
        self.gravity = gravity
        self.friction_compensation = friction_compensation
        self.kp = as_finite_vector('kp', kp, n)
        self.kd = as_finite_vector('kd', kd, n)
        self.ki = as_finite_vector('ki', ki, n)
        if np.any(self.kp < 0) or np.any(self.kd < 0) or np.any(self.ki < 0):
            raise ValueError('gains kp, kd and ki must be non-negative')
        acceleration = model_acceleration_limits(model) if acceleration_limit is None else np.abs(
            as_finite_vector('acceleration_limit', acceleration_limit, n))
        J = self.constants = np.zeros((kernel.JOINT_ROWS, n))   # the per-joint constants both paths read
        J[kernel.KP], J[kernel.KD], J[kernel.KI] = self.kp, self.kd, self.ki
        J[kernel.DAMPING], J[kernel.FRICTION], J[kernel.EFFORT_LIMIT] = model.damping, model.friction, model.effort_limit
        J[kernel.LOWER], J[kernel.UPPER], J[kernel.MAX_SPEED] = -np.inf, np.inf, np.inf
        self._continuous = np.flatnonzero(set_limits(J, model, np.arange(n), np.arange(n), acceleration))
        self.state = np.zeros((kernel.STATE_ROWS, n))   # governed reference and integral (fast/control_kernel.py)
        self.clock = np.zeros(3)
        pack = packed(model)   # the law's RNEA runs on the packed model, as in ControlStep
        self._model_arrays = (pack.table, np.zeros_like(pack.data.work), pack.base_acceleration(gravity),
                              pack.no_external_force)
        self._results = np.zeros((kernel.RESULT_ROWS + 1, n))   # control_law's rows, and the integral it reads

    def take_state(self, other: 'ComputedTorqueController') -> None:
        """Continue from another controller's state (new gains for the same robot): no jump of the reference."""
        self.state[:], self.clock[:] = other.state, other.clock

    @property
    def limited_updates(self) -> int:
        """How many updates have had their reference limited by the governor."""
        return int(self.clock[kernel.LIMITED_UPDATES])

    def position_error(self, q_ref: Vector, q: Vector) -> Vector:
        """q_ref - q, wrapped into [-pi, pi) on continuous joints."""
        e = q_ref - q
        if self._continuous.size:
            e[self._continuous] = (e[self._continuous] + np.pi) % (2.0 * np.pi) - np.pi
        return e

    def _unclamped(self, q, qd, q_ref, qd_ref, qdd_ref, integral):
        """The law's tau before the effort limits: ``fast.control_kernel.control_law``, the one the compiled
        ControlStep runs, here compiled on its own where numba is installed, else as plain Python."""
        n = self.model.nv
        R = self._results
        for row, name, value in ((kernel.Q, 'q', q), (kernel.QD, 'qd', qd), (kernel.Q_REF, 'q_ref', q_ref),
                                 (kernel.QD_REF, 'qd_ref', qd_ref), (kernel.QDD_REF, 'qdd_ref', qdd_ref)):
            R[row] = as_finite_vector(name, value, n)
        R[kernel.INTEGRAL_ARGUMENT] = integral
        with np.errstate(all='ignore'):   # overflow gives a non-finite tau, refused below
            _control_law(fast.BACKEND)(CONTROL_MODES.index(self.mode), bool(self.friction_compensation), self.constants,
                                       *self._model_arrays, R[kernel.INTEGRAL_ARGUMENT], R)
        tau = R[kernel.TAU].copy()
        if not all_finite(tau):
            raise ValueError(f'the effort for this state and reference is not finite: {tau.tolist()}')
        return tau

    def compute(self, q: ArrayLike, qd: ArrayLike, q_ref: ArrayLike, qd_ref: ArrayLike, qdd_ref: ArrayLike) -> Vector:
        """Joint efforts of the law (no integral, no governor) for the measured state (q, qd) and the reference;
        ValueError on non-finite input or a non-finite effort (inputs so large that the dynamics overflow)."""
        limit = self.model.effort_limit
        return np.clip(self._unclamped(q, qd, q_ref, qd_ref, qdd_ref, 0.0), -limit, limit)

    def update(self, now: float, q: ArrayLike, qd: ArrayLike, q_ref: ArrayLike, qd_ref: ArrayLike,
               qdd_ref: ArrayLike) -> tuple[Vector, Vector, Vector, Vector]:
        """One control step at time ``now`` (s; the state's time): (tau, governed q_ref, qd_ref, qdd_ref), with the
        governor and the integral action (see the class); ValueError as ``compute``, leaving the state unchanged."""
        n = self.model.nv
        q, qd = as_finite_vector('q', q, n), as_finite_vector('qd', qd, n)
        q_ref, qd_ref, qdd_ref = (as_finite_vector(name, value, n).copy() for name, value in
                                  (('q_ref', q_ref), ('qd_ref', qd_ref), ('qdd_ref', qdd_ref)))
        saved = self.state.copy(), self.clock.copy()
        dt = govern_reference(float(now), self.constants, self.state, self.clock, q, qd, q_ref, qd_ref, qdd_ref)
        try:
            tau = self._unclamped(q, qd, q_ref, qd_ref, qdd_ref, self.state[kernel.INTEGRAL])
        except ValueError:
            self.state[:], self.clock[:] = saved
            raise
        if self.mode != 'gravity_compensation':
            integrate_error(dt, self.constants, self.state, self.position_error(q_ref, q), tau)
        limit = self.model.effort_limit
        return np.clip(tau, -limit, limit), q_ref, qd_ref, qdd_ref


def set_limits(J, model: Model, joints_q: ArrayLike, joints_v: ArrayLike, acceleration_limit: ArrayLike) -> Vector:
    """Fill the governor's rows of the per-joint constants J (fast.control_kernel) for the model's 1-DOF joints at
    these q and v indices: position limits, LIMIT_MARGIN times the velocity limits (none where 0), acceleration
    limits, and the continuous joints (revolute without limits: the short way round), whose mask it returns."""
    lower, upper, speed = model.lower[joints_q], model.upper[joints_q], model.velocity_limit[joints_v]
    revolute = np.zeros(model.nv, dtype=bool)
    revolute[model.idx_v[model.joint_type == REVOLUTE]] = True
    continuous = revolute[joints_v] & ~np.isfinite(lower) & ~np.isfinite(upper)
    J[kernel.CONTINUOUS] = continuous
    J[kernel.POSITION_LOW], J[kernel.POSITION_HIGH] = lower, upper
    J[kernel.VELOCITY_LIMIT] = np.where(np.isfinite(speed) & (speed > 0), LIMIT_MARGIN * speed, np.inf)
    J[kernel.ACCELERATION_LIMIT] = acceleration_limit
    return continuous


class ReferenceGovernor:
    """A joint reference governed into the joint limits as ComputedTorqueController.update governs its own (the same
    kernel, ``govern_reference``), for controllers that run another law: the model's 1-DOF joints at q indices
    joints_q and v indices joints_v, no acceleration limit unless given."""

    def __init__(self, model: Model, joints_q: ArrayLike, joints_v: ArrayLike,
                 acceleration_limit: ArrayLike = np.inf) -> None:
        n = len(joints_v)
        self.constants = np.zeros((kernel.JOINT_ROWS, n))
        set_limits(self.constants, model, joints_q, joints_v, acceleration_limit)
        self.state = np.zeros((kernel.STATE_ROWS, n))
        self.clock = np.zeros(3)

    @property
    def limited_updates(self) -> int:
        """How many updates have had their reference limited."""
        return int(self.clock[kernel.LIMITED_UPDATES])

    def __call__(self, now: float, q: ArrayLike, qd: ArrayLike, q_ref: ArrayLike, qd_ref: ArrayLike,
                 qdd_ref: ArrayLike) -> tuple[Vector, Vector, Vector]:
        """(q_ref, qd_ref, qdd_ref) governed, at time ``now`` (s) and the measured joint state (q, qd)."""
        q, qd, q_ref, qd_ref, qdd_ref = (np.array(x, dtype=float) for x in (q, qd, q_ref, qd_ref, qdd_ref))
        govern_reference(float(now), self.constants, self.state, self.clock, q, qd, q_ref, qd_ref, qdd_ref)
        return q_ref, qd_ref, qdd_ref


class TrajectoryReference:
    """A joint trajectory through waypoints, sampled at any time t (relative to the trajectory start).

    With velocities and accelerations: piecewise quintic Hermite; with velocities: piecewise cubic Hermite;
    positions only: a C2 cubic spline that starts and ends at rest (zero end velocities), so that it joins
    the hold before the start and after the end without a velocity jump. Before the first time the first
    point is held, after the last time the last point, both with zero velocity and acceleration.

    Construction is vectorised over the segments (100k points in tens of ms); each segment is stored as
    power-series coefficients q(t) = sum_j a_j (t - t_i)^j, and `sample` evaluates the segment that holds
    t (the last one used, when t is still in it, as for a controller sampling forward in time).
    """

    def __init__(self, times: ArrayLike, positions: ArrayLike, velocities: ArrayLike | None = None,
                 accelerations: ArrayLike | None = None) -> None:
        times = np.ascontiguousarray(times, dtype=float).reshape(-1)   # ControlStep's kernel is compiled for C order
        positions = np.atleast_2d(np.ascontiguousarray(positions, dtype=float))
        if positions.shape[0] != times.size:
            raise ValueError(f'{times.size} times but {positions.shape[0]} position waypoints')
        if times.size == 0:
            raise ValueError('a trajectory needs at least one point')
        if not (np.all(np.isfinite(times)) and np.all(np.isfinite(positions))):
            raise ValueError('trajectory times and positions must be finite')
        if np.any(np.diff(times) <= 0):
            raise ValueError('trajectory times must be strictly increasing')
        derivatives = [positions]
        for name, values in (('velocities', velocities), ('accelerations', accelerations)):
            if values is None:
                break
            values = np.atleast_2d(np.asarray(values, dtype=float))
            if values.shape != positions.shape:
                raise ValueError(f'{name} have shape {values.shape}, positions {positions.shape}')
            if not np.all(np.isfinite(values)):
                raise ValueError(f'trajectory {name} must be finite')
            derivatives.append(values)
        if accelerations is not None and velocities is None:
            raise ValueError('accelerations need velocities as well')
        self.times = times
        self.positions = positions
        self._segment = 0
        if times.size == 1:
            self._coefficients = None
        elif len(derivatives) == 3:
            self._coefficients = quintic_hermite_coefficients(times, *derivatives)
        else:
            spline = (CubicHermiteSpline(times, positions, derivatives[1]) if len(derivatives) == 2
                      else CubicSpline(times, positions, bc_type='clamped'))
            self._coefficients = np.ascontiguousarray(spline.c[::-1].transpose(1, 0, 2))  # (segment, j, joint)
        if self._coefficients is not None:
            if not np.all(np.isfinite(self._coefficients)):
                raise ValueError('trajectory too steep: its polynomial coefficients overflow')
            order = self._coefficients.shape[1]
            j = np.arange(order)
            # Row r of factor * dt**exponent, times a_j, gives the r-th derivative: j!/(j-r)! a_j dt^(j-r).
            self._exponent = np.stack([np.maximum(j - r, 0) for r in range(3)]).astype(float)
            self._factor = np.stack([np.ones(order), j, j * (j - 1)]).astype(float)

    @classmethod
    def hold(cls, q: ArrayLike) -> 'TrajectoryReference':
        """A constant reference at q."""
        return cls([0.0], [np.asarray(q, dtype=float)])

    @property
    def duration(self) -> float:
        return self.times[-1]

    def sample(self, t: float) -> tuple[Vector, Vector, Vector]:
        """(q_ref, qd_ref, qdd_ref) at time t."""
        times = self.times
        if self._coefficients is None or t <= times[0]:
            zero = np.zeros(self.positions.shape[1])
            return self.positions[0].copy(), zero, zero.copy()
        if t >= times[-1]:
            zero = np.zeros(self.positions.shape[1])
            return self.positions[-1].copy(), zero, zero.copy()
        i = self._segment
        if not times[i] <= t < times[i + 1]:
            i = self._segment = bisect_right(times, t) - 1
        q, qd, qdd = (self._factor * (t - times[i]) ** self._exponent) @ self._coefficients[i]
        return q, qd, qdd


def quintic_hermite_coefficients(times, p, v, a):
    """Power-series coefficients (segment, j = 0..5, joint) of the quintic through position, velocity and
    acceleration at both ends of every segment, all segments at once."""
    h = np.diff(times)[:, None]
    inverse = 1.0 / h                 # products instead of powers: this runs on 100k-point trajectories
    p0, p1, v0, v1, a0, a1 = p[:-1], p[1:], v[:-1], v[1:], a[:-1], a[1:]
    coefficients = np.empty((len(h), 6, p.shape[1]))
    coefficients[:, 0], coefficients[:, 1], coefficients[:, 2] = p0, v0, 0.5 * a0
    dp = (p1 - p0) * inverse          # in units of velocity, and the accelerations times h
    ah0, ah1 = a0 * h, a1 * h
    coefficients[:, 3] = (20.0 * dp - 8.0 * v1 - 12.0 * v0 - 3.0 * ah0 + ah1) * (0.5 * inverse * inverse)
    coefficients[:, 4] = (-30.0 * dp + 14.0 * v1 + 16.0 * v0 + 3.0 * ah0 - 2.0 * ah1) * (0.5 * inverse**3)
    coefficients[:, 5] = (12.0 * dp - 6.0 * (v1 + v0) + ah1 - ah0) * (0.5 * inverse**4)
    return coefficients


def _smoothstep(s):
    """Quintic smoothstep S(s) = 10 s^3 - 15 s^4 + 6 s^5 on [0, 1] (1 beyond) and its first two derivatives."""
    s = np.clip(s, 0.0, 1.0)
    return (s**3 * (10.0 - 15.0 * s + 6.0 * s**2),
            30.0 * s**2 * (1.0 - s)**2,
            60.0 * s * (1.0 - s) * (1.0 - 2.0 * s))


SMOOTHSTEP_MAX_SLOPE = 1.875  # max of S'(s), at s = 1/2
SMOOTHSTEP_MAX_CURVATURE = 10.0 / np.sqrt(3.0)   # max of |S''(s)|, at s = 1/2 -+ sqrt(3)/6


def sinusoid_reference(model: Model, amplitude: ArrayLike, frequency: ArrayLike, duration: float,
                       center: ArrayLike | None = None, rate: float = 100.0) -> 'TrajectoryReference':
    """Sinusoids q_i(t) = c_i + a_i sin(2 pi f_i t) e(t) sampled at ``rate`` Hz, as (times, q, qd, qdd).

    The envelope e(t) rises from 0 to 1 and falls back to 0 with quintic smoothsteps, each as long as the
    slowest period (at most a quarter of the duration), so the motion starts and ends at rest at the centre.
    The centre defaults to the middle of the limits (0 where unlimited). Amplitudes are scaled down so
    that the motion stays within the position limits and, with the envelope's slope and curvature bounds,
    within the velocity limits and ``model_acceleration_limits`` (so the controller's governor passes it through).
    """
    n = model.nv
    frequency = as_finite_vector('frequency', frequency, n)
    if np.any(frequency <= 0) or duration <= 0 or rate <= 0:
        raise ValueError('frequency, duration and rate must be positive')
    if center is None:
        center = model.middle_of_limits()
    center = np.clip(as_finite_vector('center', center, n), model.lower, model.upper)
    amplitude = np.abs(as_finite_vector('amplitude', amplitude, n))
    omega = 2.0 * np.pi * frequency
    ramp = min(1.0 / frequency.min(), 0.25 * duration)
    room = LIMIT_MARGIN * np.minimum(model.upper - center, center - model.lower)
    peak_speed_per_amplitude = omega + 2.0 * SMOOTHSTEP_MAX_SLOPE / ramp
    amplitude = np.minimum(amplitude, room)
    amplitude = np.minimum(amplitude, LIMIT_MARGIN * model.velocity_limit / peak_speed_per_amplitude)
    peak_acceleration_per_amplitude = (omega**2 + 2.0 * omega * SMOOTHSTEP_MAX_SLOPE / ramp
                                       + SMOOTHSTEP_MAX_CURVATURE / ramp**2)
    amplitude = np.minimum(amplitude, LIMIT_MARGIN * model_acceleration_limits(model) / peak_acceleration_per_amplitude)

    times = np.linspace(0.0, duration, int(round(duration * rate)) + 1)
    rise, rise_d, rise_dd = _smoothstep(times / ramp)
    fall, fall_d, fall_dd = _smoothstep((duration - times) / ramp)
    envelope = rise * fall
    envelope_d = (rise_d * fall - rise * fall_d) / ramp
    envelope_dd = (rise_dd * fall - 2.0 * rise_d * fall_d + rise * fall_dd) / ramp**2
    phase = np.outer(times, omega)
    s, c = np.sin(phase), np.cos(phase)
    e, ed, edd = envelope[:, None], envelope_d[:, None], envelope_dd[:, None]
    positions = center + amplitude * s * e
    velocities = amplitude * (omega * c * e + s * ed)
    accelerations = amplitude * (-omega**2 * s * e + 2.0 * omega * c * ed + s * edd)
    return times, positions, velocities, accelerations


PLAUSIBLE_VELOCITY_FACTOR = 10.0  # a joint moving faster than this multiple of its URDF velocity limit is a bad input
LIMIT_MARGIN_RAD = 0.5             # rad or m a position may lie beyond a joint limit before it is a bad input
MAX_MAGNITUDE = 1e6                # no position, velocity or acceleration of a joint is larger than this


def plausibility_bounds(model: Model) -> tuple[Vector, Vector, Vector]:
    """(lower, upper, max |velocity|) in model order that joint states and trajectory points must keep to:
    the position limits widened by LIMIT_MARGIN_RAD, PLAUSIBLE_VELOCITY_FACTOR times the velocity limits,
    and MAX_MAGNITUDE where the URDF gives no limit. Values beyond them overflow the dynamics (1e155 rad/s
    squares to inf) or are sensor faults; rejecting them keeps non-finite numbers out of commands."""
    lower = np.where(np.isfinite(model.lower), model.lower - LIMIT_MARGIN_RAD, -MAX_MAGNITUDE)
    upper = np.where(np.isfinite(model.upper), model.upper + LIMIT_MARGIN_RAD, MAX_MAGNITUDE)
    velocity = np.where(np.isfinite(model.velocity_limit) & (model.velocity_limit > 0),
                        PLAUSIBLE_VELOCITY_FACTOR * model.velocity_limit, MAX_MAGNITUDE)
    return lower, upper, np.minimum(velocity, MAX_MAGNITUDE)


class JointStateMapper:
    """Maps named joint values (as in sensor_msgs/JointState) into the model's DOF order.

    ignore_unknown: joints the model does not have are skipped instead of rejected.
    allow_missing_velocity: an empty velocity array gives zero velocities instead of an error.
    bounds: optional (lower, upper, max |velocity|) in model order (see plausibility_bounds); values
    beyond them are rejected. The index map of the last name list is kept, so a stream of messages with
    the same names costs one list comparison each.
    """

    def __init__(self, joint_names: Sequence[str], ignore_unknown: bool = False, allow_missing_velocity: bool = False,
                 bounds: tuple[Vector, Vector, Vector] | None = None) -> None:
        self.joint_names = tuple(joint_names)
        self._index = {name: i for i, name in enumerate(self.joint_names)}
        self.ignore_unknown = ignore_unknown
        self.allow_missing_velocity = allow_missing_velocity
        self.bounds = bounds
        self._names = None     # the name list of the last valid message ...
        self._source = None    # ... and, for each model joint, its index in that list

    def _source_of(self, names):
        """For each model joint, its index in `names`; ValueError for duplicate, unknown or missing joints."""
        if len(set(names)) != len(names):
            raise ValueError(f'duplicate joint names in {names}')
        unknown = [name for name in names if name not in self._index]
        if unknown and not self.ignore_unknown:
            raise ValueError(f'unknown joints {unknown}; the model has {list(self.joint_names)}')
        missing = [name for name in self.joint_names if name not in names]
        if missing:
            raise ValueError(f'joint state lacks joints {missing}')
        return np.array([names.index(name) for name in self.joint_names])

    def source(self, names: Sequence[str]) -> np.ndarray:
        """For each model joint, its index in `names` (kept for the last name list); ValueError for duplicate,
        unknown or missing joints."""
        if names != self._names:
            names = list(names)
            self._source = self._source_of(names)
            self._names = names
        return self._source

    def _reject(self, q, qd):
        """ValueError naming the joints whose values are not finite or beyond the bounds."""
        if not (np.isfinite(q).all() and np.isfinite(qd).all()):
            bad = [name for name, a, b in zip(self.joint_names, q, qd) if not (np.isfinite(a) and np.isfinite(b))]
            raise ValueError(f'non-finite position or velocity for joints {bad}')
        lower, upper, speed = self.bounds
        bad = [f'{name} (q {a:.6g}, qd {b:.6g})' for name, a, b, lo, hi, s
               in zip(self.joint_names, q, qd, lower, upper, speed) if not (lo <= a <= hi and abs(b) <= s)]
        raise ValueError(f'implausible position or velocity for joints {bad}: beyond the limits by more than '
                         f'{LIMIT_MARGIN_RAD} or faster than {PLAUSIBLE_VELOCITY_FACTOR:g}x the velocity limit')

    def map(self, names: Sequence[str], positions: ArrayLike, velocities: ArrayLike | None) -> tuple[Vector, Vector]:
        """(q, qd) in model order; ValueError naming the problem for any inconsistent message."""
        positions = (np.frombuffer(positions, dtype=float) if isinstance(positions, array) and positions.typecode == "d"
                     else np.asarray(positions, dtype=float).reshape(-1))
        velocities = (np.frombuffer(velocities, dtype=float) if isinstance(velocities, array) and velocities.typecode == "d"
                      else np.asarray(velocities if velocities is not None else [], dtype=float).reshape(-1))
        if positions.size != len(names):
            raise ValueError(f'{len(names)} joint names but {positions.size} positions')
        if velocities.size == 0:
            if not self.allow_missing_velocity:
                raise ValueError('joint state has no velocities')
            velocities = np.zeros(len(names))
        elif velocities.size != len(names):
            raise ValueError(f'{len(names)} joint names but {velocities.size} velocities')
        source = self.source(names)
        q, qd = positions[source], velocities[source]
        if self.bounds is None:
            plausible = np.isfinite(q).all() and np.isfinite(qd).all()
        else:   # NaN fails every comparison, so this also rejects non-finite values
            lower, upper, speed = self.bounds
            plausible = ((lower <= q) & (q <= upper) & (np.abs(qd) <= speed)).all()
        if not plausible:
            self._reject(q, qd)
        return q, qd


def _kernel_vector(values):
    """values for the compiled kernel: rclpy's float64[] fields (array('d')) as they are (numba reads the buffer),
    anything else as a contiguous float64 vector (as JointStateMapper.map reads it)."""
    if isinstance(values, array) and values.typecode == 'd':
        return values
    return np.ascontiguousarray(values, dtype=float).reshape(-1)


class ControlStep:
    """A controller update in one compiled call (numba; ``fast/control_kernel.py``): the q, qd of
    ``mapper.map``, the reference of ``reference.sample(t)`` and what ``controller.update`` returns (governed
    reference, tau), equal to what those NumPy methods return, on the controller's own state arrays, and tau in
    output order (``output_order``: model index of each output, default model order). RNEA runs on the table
    kernel of the packed model.

    Calling it returns True with the results in the row views q, qd, q_ref, qd_ref, qdd_ref, tau, command
    (overwritten by the next call), or False where the NumPy path raises ValueError (bad names or values, a
    non-finite reference or effort; the controller's state is then unchanged); the caller then runs the NumPy
    path for its error. Build a new one when the mapper or controller changes (gains, mode): they are read once.
    """

    def __init__(self, mapper: 'JointStateMapper', controller: ComputedTorqueController,
                 output_order: Sequence[int] | None = None) -> None:
        from .algorithms.backends import compiled
        from .algorithms.packing import packed
        model = controller.model
        n = model.nv
        self.mapper, self.controller = mapper, controller
        self._allow_missing_velocity = bool(mapper.allow_missing_velocity)
        J = controller.constants.copy()
        if mapper.bounds is not None:
            J[kernel.LOWER], J[kernel.UPPER], J[kernel.MAX_SPEED] = mapper.bounds
        pack = packed(model)
        self._model = (pack.table, np.zeros_like(pack.data.work), pack.base_acceleration(controller.gravity),
                       pack.no_external_force)
        self._mode = (CONTROL_MODES.index(controller.mode), bool(controller.friction_compensation), J,
                      controller.state, controller.clock)
        self._order = np.arange(n) if output_order is None else np.array(output_order, dtype=np.int64)
        self._segment = np.zeros(1, dtype=np.int64)   # the reference segment used last
        self._no_segments = np.zeros((0, 1, n))       # the coefficients of a one-point (hold) reference
        self._kernel = compiled(kernel.control_step)   # imports numba: only with the 'fast' extra
        self._results = R = np.zeros((kernel.RESULT_ROWS, n))
        self.q, self.qd, self.q_ref, self.qd_ref, self.qdd_ref, self.tau, self.command = (
            R[kernel.Q], R[kernel.QD], R[kernel.Q_REF], R[kernel.QD_REF], R[kernel.QDD_REF], R[kernel.TAU],
            R[kernel.COMMAND])

    def __call__(self, names: Sequence[str], positions: ArrayLike, velocities: ArrayLike | None,
                 reference: TrajectoryReference, t: float, now: float) -> bool:
        """One update for a joint state (names, positions, velocities as JointStateMapper.map takes them) at time
        ``now`` (s) and ``reference`` at its time t; whether it computed (False: run the NumPy path)."""
        try:
            source = self.mapper.source(names)
        except ValueError:
            return False
        coefficients = self._no_segments if reference._coefficients is None else reference._coefficients
        positions = _kernel_vector(positions)
        velocities = _kernel_vector(velocities if velocities is not None else [])
        return self._kernel(positions, velocities, len(names), source, self._allow_missing_velocity, float(t),
                            float(now), reference.times, reference.positions, coefficients, self._segment,
                            *self._mode, *self._model, self._order, self._results)
