"""Contact-consistent inverse dynamics: joint torques that keep a floating-base robot on its feet (no ROS import).

Given the state (q, v) and a desired acceleration a_des (base block and joints), find the accelerations qdd, the
contact forces f (a 3-vector in world coordinates per foot in contact) and the joint torques tau with

    M(q) qdd + h(q, v) = S^T tau + J_c^T f       equations of motion; S picks the actuated (1-DOF) joints   (1)
    J_c qdd + Jdot_c v = 0                       the feet in contact do not accelerate                      (2)
    ||(f_x, f_y)|| <= mu f_z                     Coulomb's friction cone of each foot (f_z >= 0)             (3)
    |tau| <= the URDF effort limits                                                                         (4)

and qdd as close to a_des as they allow: minimise 1/2 ||qdd - a_des||^2 + 1/2 FORCE_WEIGHT ||f||^2 (the small
force term spreads the load over the feet). The base rows of (1) hold no tau: the contact forces alone must
move the base; the joint rows then give tau = M_j qdd + h_j - J_cj^T f. This is a second-order cone program in
(qdd, f), solved by Clarabel (an interior-point solver on PyPI, already the identification's): the friction
cone is exact, no pyramid.

The contact points' Jacobians J_c and accelerations Jdot_c v are the simulator's contact kinematics
(algorithms/point_kinematics.py, and point_acceleration.py for Jdot_c v, exact). ``ContactInverseDynamics`` keeps one
solver per model and updates its data in place each tick (Clarabel's ``DefaultSolver.update``: the same sparsity
pattern, so the KKT system's symbolic factorisation and allocations are kept); it sets the program up again only
when its shape changes (the number of feet in contact, or the rank of their Jacobian). Its program is in units of
the robot's weight W = m g: the forces as f / W and the rows of (1) divided by W, as the accelerations and (2) are
of order one (the same optimum; Clarabel takes 6 iterations on the public quadrupeds, against 7-13 in newtons, and
its tolerances then bound the load split W times tighter). ``contact_inverse_dynamics`` sets up a new solver every
call, in newtons, as the controller did before: the reference the tests compare with.
"""
from collections.abc import Sequence
import time

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import fast
from ..algorithms.backends import compiled, njit
from ..algorithms.point_acceleration import point_motion, point_motion_kernel
from ..algorithms.point_kinematics import PointKinematics, body_poses
from ..fast import bias_torques, crba
from ..model.configuration import difference
from ..model.model import Model
from ..spatial import pose_from_plucker

FORCE_WEIGHT = 1e-9      # (m/s^2)^2 per N^2: spreads the load; moves a feasible qdd by about FORCE_WEIGHT |f|
RANK_TOLERANCE = 1e-9    # singular values of the contact Jacobian below this fraction of the largest: dependent rows
STANDARD_GRAVITY = 9.81  # m/s^2: ContactInverseDynamics' unit of force is the weight m g under it (a unit only)


class ContactForceError(RuntimeError):
    """No accelerations, forces and torques satisfy (1)-(4) (the solver's status says why)."""


def _clarabel():
    try:
        import clarabel
    except ImportError:
        raise ImportError("contact_inverse_dynamics needs clarabel: pip install 'robot_dynamics_ros[legged]'",
                          name='clarabel') from None
    return clarabel


def point_kinematics(model: Model) -> PointKinematics:
    """The model's PointKinematics, made once per model (the simulator's contact kinematics)."""
    kinematics = model._cache.get('point_kinematics')
    if kinematics is None:
        kinematics = model._cache['point_kinematics'] = PointKinematics(model)
    return kinematics


def contact_points_on_bodies(model: Model, contacts: Sequence[tuple[str, ArrayLike]]):
    """(bodies (k,), offsets (k, 3)): the points at ``offset`` in their link's frame, on the bodies the links are
    fixed to, in those bodies' frames."""
    placements = model._cache.setdefault('link_in_body', {})   # link -> (body, R, p): the link frame in its body's
    bodies, offsets = np.empty(len(contacts), dtype=int), np.empty((len(contacts), 3))
    for i, (link, offset) in enumerate(contacts):
        placement = placements.get(link)
        if placement is None:
            frame = model.frames[link]
            if frame.body < 0:
                raise ValueError(f"contact link {link!r} is fixed to the world, not to a moving body")
            placement = placements[link] = (frame.body, *pose_from_plucker(frame.X_body))
        body, R, p = placement
        bodies[i], offsets[i] = body, p + R @ np.asarray(offset, dtype=float)
    return bodies, offsets


def point_jacobians(model: Model, q: ArrayLike, contacts: Sequence[tuple[str, ArrayLike]]) -> NDArray[np.float64]:
    """(3 len(contacts)) x nv: the Jacobians of the velocities, in world coordinates, of the points at ``offset``
    in their link's frame (PointKinematics, the simulator's)."""
    return point_motion(point_kinematics(model), np.asarray(q, dtype=float), np.zeros(model.nv),
                        *contact_points_on_bodies(model, contacts))[1]


def point_acceleration_bias(model: Model, q: ArrayLike, v: ArrayLike,
                            contacts: Sequence[tuple[str, ArrayLike]]) -> NDArray[np.float64]:
    """Jdot_p v of the points, their accelerations when qdd = 0 (exact: point_acceleration.py)."""
    return point_motion(point_kinematics(model), np.asarray(q, dtype=float), np.asarray(v, dtype=float),
                        *contact_points_on_bodies(model, contacts))[2]


class ContactInverseDynamics:
    """(1)-(4) for one model, the solver kept from call to call (see the module docstring).

    Calling it with (q, v, desired acceleration, contacts) returns (tau, qdd, f) as ``contact_inverse_dynamics``.
    ``setups`` counts the solvers set up (a change of the feet in contact), ``updates`` the in-place updates,
    ``solve_time`` is the last call's seconds in Clarabel's solve."""

    def __init__(self, model: Model, friction: float, gravity: ArrayLike | None = None) -> None:
        self.clarabel = _clarabel()
        self.model, self.friction, self.gravity = model, float(friction), gravity
        self.kinematics = point_kinematics(model)
        # the kinematics and the rank test as loops compiled by numba where installed (the same arithmetic)
        numba = fast.BACKEND == 'numba'
        self._body_poses = compiled(body_poses) if numba else body_poses
        self._point_motion = compiled(point_motion_kernel) if numba else point_motion_kernel
        self._fill_program = compiled(fill_program) if numba else fill_program
        functions = fast.functions(model)   # fast.crba and bias_torques (rnea with qdd = 0), bound once, into buffers
        self._crba, self._rnea = functions.crba, functions.rnea
        self.M, self.h, self._no_acceleration = np.zeros((model.nv, model.nv)), np.zeros(model.nv), np.zeros(model.nv)
        self.R, self.p = np.zeros((model.nb, 3, 3)), np.zeros((model.nb, 3))
        self.C_ang, self.C_lin = np.zeros((3, model.nv)), np.zeros((3, model.nv))
        mass = sum(inertia[5, 5] for inertia in model.inertia)
        self.weight = STANDARD_GRAVITY * mass if mass > 0.0 else 1.0   # the program's unit of force, N
        self.joints = np.asarray(model.joint_v_index)
        self.base = np.setdiff1d(np.arange(model.nv), self.joints)   # the rows (1) without actuation
        limit = model.effort_limit[self.joints]
        self.limited = np.flatnonzero(np.isfinite(limit))            # (4) for the joints with a finite limit
        self.limit = limit[self.limited]
        self.rows = np.ascontiguousarray(self.joints[self.limited], dtype=np.int64)   # their rows of (1)
        self.settings = self.clarabel.DefaultSettings()
        self.settings.verbose = False
        self.settings.presolve_enable = False            # Clarabel refuses data updates after a presolve ...
        self.settings.input_sparse_dropzeros = False     # ... or where it dropped the pattern's explicit zeros
        # Clarabel scales the data at set-up and an update reuses that scaling: without it, an updated solver
        # takes the same iterations as a new one on the same data (the same solution, to the last bit); the
        # program is scaled by its units instead (the weight, see the module docstring)
        self.settings.equilibrate_enable = False
        # Without iterative refinement of each KKT solve a solve takes two thirds of the time (the bundled
        # quadruped: ~180 us against ~280 us); the result meets the same tolerances (Clarabel's status checks the
        # residuals of the data, not of the factorisation)
        self.settings.iterative_refinement_enable = False
        self.solver, self.shape, self.pattern = None, None, None
        self.setups = self.updates = 0
        self.solve_time = 0.0

    def poses(self, q: NDArray[np.float64]):
        """PointKinematics.poses(q) (q: float array), in this object's buffers (overwritten by the next call)."""
        self._body_poses(*self.kinematics.tree, q, self.R, self.p)
        return self.R, self.p

    def __call__(self, q: ArrayLike, v: ArrayLike, desired_acceleration: ArrayLike,
                 contacts: Sequence[tuple[str, ArrayLike]], poses=None, points=None):
        """(tau for model.joint_names, qdd, f: (len(contacts), 3) contact forces in world coordinates) of (1)-(4);
        contacts: (link, offset in the link frame) of each foot in contact; poses: PointKinematics.poses(q) and
        points: contact_points_on_bodies(contacts), where the caller has them. ContactForceError when the problem
        has no solution. The program's matrices are kept per shape and filled in place."""
        model, nv = self.model, self.model.nv
        q, v = np.asarray(q, dtype=float), np.asarray(v, dtype=float)
        k = len(contacts)
        M = self._crba(q, out=self.M)
        h = self._rnea(q, v, self._no_acceleration, self.gravity, out=self.h)   # bias_torques
        bodies, offsets = contact_points_on_bodies(model, contacts) if points is None else points
        R, p = self.poses(q) if poses is None else poses
        Jc, bias = np.empty((3 * k, nv)), np.empty(3 * k)
        self._point_motion(*self.kinematics.column_constants, R, p, v, np.ascontiguousarray(bodies, dtype=np.int64),
                           np.ascontiguousarray(offsets, dtype=float).reshape(k, 3), self.C_ang, self.C_lin,
                           np.empty((k, 3)), Jc, bias)
        held = independent_rows(Jc)                      # (2), on a basis of its rows (several points of one foot)
        shape = (k, len(held))
        if shape != self.shape:
            self._allocate(shape)
        A, b, objective = self.A, self.b, self.objective
        zero_rows, torque_rows = len(self.base) + len(held), len(self.limited)
        updating = self.solver is not None   # else a new solver: no pattern yet
        data = np.empty(len(self.pattern) if updating else 0)
        self._fill_program(M, h, Jc, bias, held, self.base, self.rows, self.limit, self.weight,
                           np.asarray(desired_acceleration, dtype=float), A, b, objective,
                           self.pattern if updating else np.zeros(0, dtype=np.int64), data)
        if not updating:
            self._set_up(A, b, objective, shape, zero_rows, torque_rows, bodies)
        else:
            # Lists: Clarabel reads a NumPy array's 700 values one by one, 40 us, a list's in 18 us (with
            # tolist's 9)
            self.solver.update(q=objective.tolist(), A=data.tolist(), b=b.tolist())
            self.updates += 1
        started = time.perf_counter()
        solution = self.solver.solve()
        self.solve_time = time.perf_counter() - started
        if str(solution.status) not in ('Solved', 'AlmostSolved'):
            raise ContactForceError(f"no contact forces hold the robot within its friction cones and effort "
                                    f"limits ({solution.status})")
        x = np.asarray(solution.x)
        qdd, forces = x[:nv], self.weight * x[nv:]
        joints = self.joints
        tau = M[joints] @ qdd - Jc[:, joints].T @ forces + h[joints]
        return tau, qdd, forces.reshape(k, 3)

    def _allocate(self, shape):
        """The program's A (with the cones' constant entries), b and objective for `shape` (feet, held rows)."""
        nv, (k, held) = self.model.nv, shape
        zero_rows, torque_rows = len(self.base) + held, len(self.limited)
        self.A = np.zeros((zero_rows + 2 * torque_rows + 3 * k, nv + 3 * k))
        cones = np.arange(k)                                                      # (3): (mu f_z, f_x, f_y) in SOC
        first = zero_rows + 2 * torque_rows + 3 * cones
        self.A[first, nv + 3 * cones + 2], self.A[first + 1, nv + 3 * cones], self.A[first + 2, nv + 3 * cones + 1] = \
            -self.friction, -1.0, -1.0
        self.b = np.zeros(len(self.A))
        self.objective = np.zeros(nv + 3 * k)
        self.solver = None

    def _set_up(self, A, b, objective, shape, zero_rows, torque_rows, bodies):
        """A new solver for this shape. The pattern: every entry the tree lets be non-zero (M_ij where joint i
        is an ancestor of joint j or j of i; J_c's columns of the joints that move the point; the combined rows of
        (2) whole; the cones' three entries), kept as explicit zeros where a value is zero now."""
        from scipy import sparse
        clarabel, nv, k = self.clarabel, self.model.nv, shape[0]
        moves, column_body = self.kinematics.moves, self.kinematics.column_body
        related = moves[column_body].T | moves[column_body]               # M's structure: related[i, j]
        dynamics = np.hstack([related, np.repeat(moves[bodies], 3, axis=0).T])   # [M, -J_c^T]
        structure = np.zeros(A.shape, dtype=bool)
        structure[:len(self.base)] = dynamics[self.base]
        structure[len(self.base):zero_rows, :nv] = True
        actuated = dynamics[self.joints[self.limited]]
        structure[zero_rows:zero_rows + 2 * torque_rows] = np.vstack([actuated, actuated])
        structure |= A != 0.0                                           # the cone entries
        columns = structure.T                                           # CSC: column by column, rows ascending
        self.pattern = np.flatnonzero(columns.ravel())
        indptr = np.concatenate([[0], np.cumsum(columns.sum(axis=1))])
        indices = np.nonzero(columns)[1]
        matrix = sparse.csc_matrix((A.T.ravel()[self.pattern], indices, indptr), shape=A.shape)
        cones = [clarabel.ZeroConeT(zero_rows)]
        if torque_rows:
            cones.append(clarabel.NonnegativeConeT(2 * torque_rows))
        cones += [clarabel.SecondOrderConeT(3) for _ in range(k)]
        P = sparse.diags(np.concatenate([np.ones(nv), np.full(3 * k, FORCE_WEIGHT * self.weight ** 2)])).tocsc()
        self.solver = clarabel.DefaultSolver(P, objective, matrix, b, cones, self.settings)
        self.shape = shape
        self.setups += 1


def contact_inverse_dynamics(model: Model, q: ArrayLike, v: ArrayLike, desired_acceleration: ArrayLike,
                             contacts: Sequence[tuple[str, ArrayLike]], friction: float,
                             gravity: ArrayLike | None = None):
    """(tau for model.joint_names, qdd, f: (len(contacts), 3) contact forces in world coordinates) of (1)-(4),
    with a new solver set up for this call (a controller keeps a ContactInverseDynamics instead).

    contacts: (link, offset in the link frame) of each foot in contact. Raises ContactForceError when the
    problem has no solution (e.g. torque limits too low to hold the robot)."""
    clarabel = _clarabel()
    from scipy import sparse
    q, v = np.asarray(q, dtype=float), np.asarray(v, dtype=float)
    nv, k = model.nv, len(contacts)
    joints = np.asarray(model.joint_v_index)
    base = np.setdiff1d(np.arange(nv), joints)   # the rows (1) without actuation
    M = crba(model, q)
    h = bias_torques(model, q, v) if gravity is None else bias_torques(model, q, v, gravity)
    _, Jc, bias = point_motion(point_kinematics(model), q, v, *contact_points_on_bodies(model, contacts))
    n = nv + 3 * k                                # x = [qdd; f]
    dynamics = np.hstack([M, -Jc.T])              # rows of (1): dynamics @ x + h = S^T tau
    rows, b, cones = [], [], []
    rows.append(dynamics[base])                   # (1), base rows: = -h_base
    b.append(-h[base])
    held = independent_rows(Jc)                   # (2), on a basis of its rows: several points of one foot
    rows.append(np.hstack([held @ Jc, np.zeros((len(held), 3 * k))]))   # repeat constraints, which rounding
    b.append(-held @ bias)                                              # would make inconsistent
    cones.append(clarabel.ZeroConeT(len(base) + len(held)))
    limit = model.effort_limit[joints]
    rows += [dynamics[joints], -dynamics[joints]]             # (4): tau_j = dynamics_j x + h_j within +-limit
    b += [limit - h[joints], limit + h[joints]]
    cones.append(clarabel.NonnegativeConeT(2 * len(joints)))
    for c in range(k):                                         # (3): (mu f_z, f_x, f_y) in the second-order cone
        cone = np.zeros((3, n))
        f = nv + 3 * c
        cone[0, f + 2], cone[1, f], cone[2, f + 1] = -friction, -1.0, -1.0
        rows.append(cone)
        b.append(np.zeros(3))
        cones.append(clarabel.SecondOrderConeT(3))
    P = sparse.diags(np.concatenate([np.ones(nv), np.full(3 * k, FORCE_WEIGHT)])).tocsc()
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    solution = clarabel.DefaultSolver(P, -np.concatenate([np.asarray(desired_acceleration, dtype=float),
                                                          np.zeros(3 * k)]),
                                      sparse.csc_matrix(np.vstack(rows)), np.concatenate(b), cones, settings).solve()
    if str(solution.status) not in ('Solved', 'AlmostSolved'):
        raise ContactForceError(f"no contact forces hold the robot within its friction cones and effort limits "
                                f"({solution.status})")
    x = np.asarray(solution.x)
    qdd, f = x[:nv], x[nv:].reshape(k, 3)
    tau = dynamics[joints] @ x + h[joints]
    return tau, qdd, f


@njit()
def fill_program(M, h, Jc, bias, held, base, rows, limit, weight, desired, A, b, objective, pattern, data):
    """The state's data of the program into A, b, objective, in units of ``weight`` (N): the rows of (1) divided by
    it are [M / weight, -Jc^T] @ x + h / weight = S^T tau / weight, x = [qdd; f / weight]; (1)'s base rows
    (= -h_base / weight), (2) on the basis ``held`` of J_c's rows (= -held Jdot_c v), (4) for the joints ``rows``
    with a finite ``limit`` twice (tau_j / weight = (1)_j x + h_j / weight within +-limit / weight); the cones' rows
    (3) are constant (ContactInverseDynamics._allocate). And A's entries at ``pattern`` (indices into A^T raveled:
    column-major, CSC's order) into data."""
    nv, m, nb, r, t = M.shape[0], Jc.shape[0], base.shape[0], held.shape[0], rows.shape[0]
    zero_rows = nb + r
    for i in range(nb):
        j = base[i]
        for c in range(nv):
            A[i, c] = M[j, c] / weight
        for c in range(m):
            A[i, nv + c] = -Jc[c, j]
        b[i] = -h[j] / weight
    for i in range(r):
        for c in range(nv):
            total = 0.0
            for k in range(m):
                total += held[i, k] * Jc[k, c]
            A[nb + i, c] = total
        total = 0.0
        for k in range(m):
            total += held[i, k] * bias[k]
        b[nb + i] = -total
    for i in range(t):
        j = rows[i]
        for c in range(nv):
            A[zero_rows + i, c], A[zero_rows + t + i, c] = M[j, c] / weight, -M[j, c] / weight
        for c in range(m):
            A[zero_rows + i, nv + c], A[zero_rows + t + i, nv + c] = -Jc[c, j], Jc[c, j]
        b[zero_rows + i], b[zero_rows + t + i] = (limit[i] - h[j]) / weight, (limit[i] + h[j]) / weight
    for c in range(nv):
        objective[c] = -desired[c]
    height = A.shape[0]
    for e in range(pattern.shape[0]):
        data[e] = A[pattern[e] % height, pattern[e] // height]


def independent_rows(J: NDArray[np.float64]) -> NDArray[np.float64]:
    """(r, m) orthonormal combinations of the m rows of J that span its row space (SVD; r its numerical rank). (A
    compiled pivoted Gram-Schmidt, ~20 us faster, was tried and reverted: with it Solo12's base moved 3-5 mm while
    standing in its SRDF bringup, against under 2 mm with the SVD; why was not found.)"""
    if len(J) == 0:
        return np.zeros((0, 0))
    U, s, _ = np.linalg.svd(J, full_matrices=False)
    return U[:, s > RANK_TOLERANCE * s[0]].T


def base_error(model: Model, q: ArrayLike, q_reference: ArrayLike) -> NDArray[np.float64]:
    """difference(q, q_reference) on the base block (zero on the joints): the velocity that takes the base to its
    reference pose in unit time, in the base frame as v is."""
    error = difference(model, q, q_reference)
    error[np.asarray(model.joint_v_index)] = 0.0
    return error
