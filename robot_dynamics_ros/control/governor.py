"""The reference governor: joint references kept within position, velocity and acceleration limits, and the
acceleration limits a robot can meet (no ROS import)."""
import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import fast
from ..algorithms.backends import compiled
from ..fast import control_kernel as kernel
from ..fast.control_kernel import govern_reference
from ..model.model import REVOLUTE, Model

Vector = NDArray[np.float64]


LIMIT_MARGIN = 0.95   # fraction of a joint's velocity limit (and of the room to its position limits) references use


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
    from ..algorithms import crba
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


def set_limits(J, model: Model, joints_q: ArrayLike, joints_v: ArrayLike, acceleration_limit: ArrayLike) -> Vector:
    """Fill the governor's rows of the per-joint constants J (fast.control_kernel) for the model's 1-DOF joints at
    these q and v indices: position limits, LIMIT_MARGIN times the velocity limits (none where 0), acceleration
    limits, and the continuous joints (revolute without limits: the short way round), whose mask it returns."""
    lower, upper, speed = model.lower[joints_q], model.upper[joints_q], model.velocity_limit[joints_v]
    revolute = np.zeros(model.nv, dtype=bool)
    bodies = model.coordinate_bodies   # (not those of coupled mimic joints: their idx_v is their master's)
    revolute[model.idx_v[bodies[model.joint_type[bodies] == REVOLUTE]]] = True
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
        # numba's machine code where installed (as ComputedTorqueController's kernel), else the plain Python
        self._govern = compiled(govern_reference) if fast.BACKEND == 'numba' else govern_reference

    @property
    def limited_updates(self) -> int:
        """How many updates have had their reference limited."""
        return int(self.clock[kernel.LIMITED_UPDATES])

    def __call__(self, now: float, q: ArrayLike, qd: ArrayLike, q_ref: ArrayLike, qd_ref: ArrayLike,
                 qdd_ref: ArrayLike) -> tuple[Vector, Vector, Vector]:
        """(q_ref, qd_ref, qdd_ref) governed, at time ``now`` (s) and the measured joint state (q, qd)."""
        q, qd, q_ref, qd_ref, qdd_ref = (np.array(x, dtype=float) for x in (q, qd, q_ref, qd_ref, qdd_ref))
        self._govern(float(now), self.constants, self.state, self.clock, q, qd, q_ref, qd_ref, qdd_ref)
        return q_ref, qd_ref, qdd_ref
