"""The computed-torque law (with its PD-plus-gravity and gravity-compensation modes), its gain check, and
``ControlStep``, the compiled update from a joint state to an effort command (no ROS import)."""
import functools
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import fast
from ..algorithms.backends import compiled
from ..algorithms.packing import packed
from ..fast import control_kernel as kernel
from ..fast.control_kernel import coupling_arrays, govern_reference, integrate_error
from ..model.joints import all_finite, as_finite_vector
from ..model.model import Model
from .governor import model_acceleration_limits, set_limits
from .joint_states import JointStateMapper
from .references import TrajectoryReference

Vector = NDArray[np.float64]


CONTROL_MODES = ('computed_torque', 'pd_gravity', 'gravity_compensation')


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
        from ..algorithms import mass_matrix_inverse
        inertia = 1.0 / np.diag(mass_matrix_inverse(model, model.middle_of_limits()))
    unstable = [name for name, p, d, i, m in zip(model.joint_names, kp, kd, ki, inertia)
                if not sampled_loop_is_stable(p / m, d / m, i / m, period)]
    if unstable:
        raise ValueError(f'gains kp, kd, ki make the loop unstable at {1.0 / period:g} joint states per second '
                         f'(a command acting one period after its state) for joints {unstable}; lower them')


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
    is wrapped into [-pi, pi) so that the controller takes the short way round. On a model with coupled mimic joints
    q, qd and tau are its independent coordinates (RNEA projected with the coupling, ``reduced_rnea``).
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
        pack = packed(model.tree)   # the law's RNEA runs on the packed model (its tree's), as in ControlStep
        self._model_arrays = (pack.table, np.zeros_like(pack.data.work), pack.base_acceleration(gravity),
                              pack.no_external_force, *coupling_arrays(model))
        self._results = np.zeros((kernel.RESULT_ROWS + 1, n))   # control_law's rows, and the integral it reads

    def take_state(self, other: 'ComputedTorqueController') -> None:
        """Continue from another controller's state (new gains for the same robot): no jump of the reference."""
        self.state[:], self.clock[:] = other.state, other.clock

    def restart(self) -> None:
        """Start again at the next update, as a new controller does (the governed reference at that state, no
        integral: a pause between two updates is no time to integrate over); the count of limited updates stays."""
        self.state[:] = 0.0
        self.clock[kernel.STARTED] = 0.0

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


class ControlStep:
    """A controller update in one compiled call (numba; ``fast/control_kernel.py``): the q, qd of
    ``mapper.map``, the reference of ``reference.sample(t)`` and what ``controller.update`` returns (governed
    reference, tau), equal to what those NumPy methods return, on the controller's own state arrays, and tau in
    output order (``output_order``: model index of each output, default model order). RNEA runs on the table
    kernel of the packed model (``reduced_rnea``).

    Calling it returns True with the results in the row views q, qd, q_ref, qd_ref, qdd_ref, tau, command
    (overwritten by the next call), or False where the NumPy path raises ValueError (bad names or values, a
    non-finite reference or effort; the controller's state is then unchanged); the caller then runs the NumPy
    path for its error. Build a new one when the mapper or controller changes (gains, mode): they are read once.
    """

    def __init__(self, mapper: JointStateMapper, controller: ComputedTorqueController,
                 output_order: Sequence[int] | None = None) -> None:
        model = controller.model
        n = model.nv
        self.mapper, self.controller = mapper, controller
        self._allow_missing_velocity = bool(mapper.allow_missing_velocity)
        J = controller.constants.copy()
        if mapper.bounds is not None:
            J[kernel.LOWER], J[kernel.UPPER], J[kernel.MAX_SPEED] = mapper.bounds
        pack = packed(model.tree)
        self._model = (pack.table, np.zeros_like(pack.data.work), pack.base_acceleration(controller.gravity),
                       pack.no_external_force, *coupling_arrays(model))
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
        positions = kernel.kernel_vector(positions)
        velocities = kernel.kernel_vector(velocities if velocities is not None else [])
        return self._kernel(positions, velocities, len(names), source, self._allow_missing_velocity, float(t),
                            float(now), reference.times, reference.positions, coefficients, self._segment,
                            *self._mode, *self._model, self._order, self._results)
