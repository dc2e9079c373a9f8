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
(algorithms/point_kinematics.py, and point_acceleration.py for Jdot_c v, exact). ``contact_inverse_dynamics`` sets up
this program in (qdd, f) with a new solver every call, as the controller did before: the reference the tests compare
with. ``ContactInverseDynamics``, the controller's, solves the same problem in fewer variables and keeps its solver:

  - units of the robot's weight W = m g: the forces as f / W and the rows of (1) divided by W, so that they are of
    order one as the accelerations and (2) are (Clarabel then takes 6 iterations on the public quadrupeds, against
    7-13 in newtons, and lands closer to the optimum: torques within 1e-3 N m of a tightly solved one, against up
    to 8 N m);
  - the equalities eliminated: (2) and the base rows of (1) are linear in x = [qdd; f / W], and their solutions
    are x0 + Z y for any y, Z an orthonormal basis of their null space (two SVDs, ``eliminate_equalities``); the
    cone program is in y (nv - 6 variables with point feet: 12 for a quadruped, against 30) with only the cones
    and the torque limits as constraints, and tau follows from the joint rows of (1) after the solve. Clarabel's
    iterations are the same, each about half the time;
  - one solver per program shape (the number of feet in contact and the rank of their Jacobian), its data updated
    in place each tick (Clarabel's ``DefaultSolver.update``: the same sparsity pattern, here dense, so the KKT
    system's symbolic factorisation and allocations are kept); a shape seen before takes its solver back (a trot
    alternates between four feet and two: a set-up, about 0.16 ms on A1, at each switch would be spent again);
  - first the objective's minimiser alone (a 12 x 12 Cholesky solve, ``unconstrained_optimum``): where it meets the
    cones and the torque limits, as when a robot stands with its feet's forces inside their cones, it is the
    program's solution, exactly (the KKT conditions hold with zero multipliers), and Clarabel is not called.
"""
from collections.abc import Sequence
import time

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import fast
from ..algorithms.backends import compiled, njit
from ..algorithms.cholesky import cholesky_factor, cholesky_solve
from ..algorithms.point_acceleration import point_motion, point_motion_kernel
from ..algorithms.point_kinematics import PointKinematics, body_poses
from ..fast import bias_torques, crba
from ..model.configuration import difference
from ..model.model import Model
from ..spatial import pose_from_plucker

FORCE_WEIGHT = 1e-9      # (m/s^2)^2 per N^2: spreads the load; moves a feasible qdd by about FORCE_WEIGHT |f|
RANK_TOLERANCE = 1e-9    # singular values of the contact Jacobian below this fraction of the largest: dependent rows
FEASIBILITY_TOLERANCE = 1e-8   # the base rows of (1), in units of the weight, met within this (Clarabel's tol_feas)
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
    ``certified`` the programs solved by their objective's minimiser, ``solve_time`` is the last call's seconds in
    the solve (the minimiser's, and Clarabel's where it ran). certify=False: Clarabel solves every program."""

    def __init__(self, model: Model, friction: float, gravity: ArrayLike | None = None, certify: bool = True) -> None:
        self.clarabel = _clarabel()
        self.certify = certify
        self.model, self.friction, self.gravity = model, float(friction), gravity
        self.kinematics = point_kinematics(model)
        # the kinematics, the elimination and the program's fill as loops compiled by numba where installed
        numba = fast.BACKEND == 'numba'
        self._body_poses = compiled(body_poses) if numba else body_poses
        self._point_motion = compiled(point_motion_kernel) if numba else point_motion_kernel
        self._eliminate = compiled(eliminate_equalities) if numba else eliminate_equalities
        self._fill_program = compiled(fill_program) if numba else fill_program
        self._solution = compiled(solution) if numba else solution
        self._unconstrained = compiled(unconstrained_optimum) if numba else unconstrained_optimum
        functions = fast.functions(model)   # fast.crba and bias_torques (rnea with qdd = 0), bound once, into buffers
        self._crba, self._rnea = functions.crba, functions.rnea
        self.M, self.h, self._no_acceleration = np.zeros((model.nv, model.nv)), np.zeros(model.nv), np.zeros(model.nv)
        self.R, self.p = np.zeros((model.nb, 3, 3)), np.zeros((model.nb, 3))
        self.C_ang, self.C_lin = np.zeros((3, model.nv)), np.zeros((3, model.nv))
        mass = sum(inertia[5, 5] for inertia in model.inertia)
        self.weight = STANDARD_GRAVITY * mass if mass > 0.0 else 1.0   # the program's unit of force, N
        self.joints = np.asarray(model.joint_v_index, dtype=np.int64)
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
        # Without iterative refinement of each KKT solve a solve takes about two thirds of the time; the result
        # meets the same tolerances (Clarabel's status checks the residuals of the data, not of the factorisation)
        self.settings.iterative_refinement_enable = False
        self.solver, self.shape = None, None
        self.programs = {}   # shape -> its data and solver (_allocate)
        self.setups = self.updates = self.certified = 0
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
        has no solution. The program's data are kept per shape and filled in place."""
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
        x0, Z, residual = self._eliminate(M, h, Jc, bias, self.base, self.weight)
        if not residual <= FEASIBILITY_TOLERANCE:
            raise ContactForceError(f"no contact forces move the base as the equations of motion ask (their "
                                    f"residual {residual:.3g})")
        shape = (k, Z.shape[1])
        if shape != self.shape:
            self._allocate(shape)
        P, objective, A, b = self.P, self.objective, self.A, self.b
        self._fill_program(M, h, Jc, x0, Z, self.rows, self.limit, self.weight, self.friction, FORCE_WEIGHT,
                           np.asarray(desired_acceleration, dtype=float), P, objective, A, b)
        set_up = self.solver is None
        if set_up:   # per shape, certified or not: the first solve that needs it does not wait for it
            self._set_up(shape)
        started = time.perf_counter()
        y = np.empty(shape[1])
        if self.certify and self._unconstrained(P, objective, A, b, len(self.limited), self.L, y):
            self.certified += 1   # the cones and limits hold at the objective's minimiser: the program's solution
        else:
            y = self._solve(update=not set_up)
        self.solve_time = time.perf_counter() - started
        tau, qdd, forces = np.empty(len(self.joints)), np.empty(nv), np.empty(3 * k)
        self._solution(x0, Z, y, M, h, Jc, self.joints, self.weight, tau, qdd, forces)
        return tau, qdd, forces.reshape(k, 3)

    def _solve(self, update):
        """Clarabel's solution y of the program in self.P, objective, A, b (ContactForceError if none); update:
        whether the solver's data are to be updated to them (not where it was just set up with them)."""
        if update:
            # Lists: Clarabel reads a NumPy array's values one by one, a list's about twice as fast
            self.solver.update(P=self.P.tolist(), q=self.objective.tolist(), A=self.A.tolist(), b=self.b.tolist())
            self.updates += 1
        solution = self.solver.solve()
        if str(solution.status) not in ('Solved', 'AlmostSolved'):
            raise ContactForceError(f"no contact forces hold the robot within its friction cones and effort "
                                    f"limits ({solution.status})")
        return np.asarray(solution.x)

    def _allocate(self, shape):
        """The program's data for `shape` (feet, variables y): P's upper triangle and A (dense) in CSC order, and its
        solver (None until set up); those kept for the shape where it was seen before."""
        if self.shape is not None:
            self.programs[self.shape] = self.P, self.L, self.objective, self.A, self.b, self.solver
        if shape not in self.programs:
            k, n = shape
            self.programs[shape] = (np.zeros(n * (n + 1) // 2), np.zeros((n, n)), np.zeros(n),
                                    np.zeros((2 * len(self.limited) + 3 * k) * n),
                                    np.zeros(2 * len(self.limited) + 3 * k), None)
        self.P, self.L, self.objective, self.A, self.b, self.solver = self.programs[shape]
        self.shape = shape

    def _set_up(self, shape):
        """A new solver for this shape: P and A dense (every entry kept, zero or not)."""
        from scipy import sparse
        clarabel, (k, n), torque_rows = self.clarabel, shape, len(self.limited)
        height = len(self.b)
        P = sparse.csc_matrix((self.P, np.concatenate([np.arange(c + 1) for c in range(n)]).astype(np.int64),
                               np.cumsum(np.arange(n + 1))), shape=(n, n))
        A = sparse.csc_matrix((self.A, np.tile(np.arange(height), n), np.arange(0, height * n + 1, height)),
                              shape=(height, n))
        cones = [clarabel.NonnegativeConeT(2 * torque_rows)] if torque_rows else []
        cones += [clarabel.SecondOrderConeT(3) for _ in range(k)]
        self.solver = clarabel.DefaultSolver(P, self.objective, A, self.b, cones, self.settings)
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
def eliminate_equalities(M, h, Jc, bias, base, weight):
    """(x0, Z, residual): the points x = [qdd; f / weight] = x0 + Z y, for any y, that satisfy (2) and the base
    rows of (1) divided by weight, [M_b / weight, -J_cb^T] x = -h_b / weight; Z has orthonormal columns. First (2),
    on a basis of J_c's rows (an SVD; rank r by RANK_TOLERANCE, as independent_rows): qdd = qdd_p + N z, qdd_p the
    least-norm solution, N the last nv - r right singular vectors. Then the base rows in (z, f / weight), G w = g,
    G = [M_b N / weight, -J_cb^T], by an SVD of G: w = w0 + N_G y. residual: the largest |G w0 - g| (not zero only
    where G's rows are dependent and g is not in their span: no solution)."""
    nv, m, nb = M.shape[0], Jc.shape[0], base.shape[0]
    if m > 0:
        U, s, Vt = np.linalg.svd(Jc)
    else:
        U, s, Vt = np.zeros((0, 0)), np.zeros(0), np.eye(nv)
    r = 0
    while r < s.shape[0] and s[r] > RANK_TOLERANCE * s[0]:
        r += 1
    nz = nv - r
    qdd_p = np.zeros(nv)
    for i in range(r):
        c = 0.0
        for a in range(m):
            c += U[a, i] * bias[a]
        for j in range(nv):
            qdd_p[j] -= c / s[i] * Vt[i, j]
    G, g = np.empty((nb, nz + m)), np.empty(nb)
    for i in range(nb):
        row = base[i]
        for c in range(nz):
            total = 0.0
            for j in range(nv):
                total += M[row, j] * Vt[r + c, j]
            G[i, c] = total / weight
        for c in range(m):
            G[i, nz + c] = -Jc[c, row]
        total = h[row]
        for j in range(nv):
            total += M[row, j] * qdd_p[j]
        g[i] = -total / weight
    Ug, sg, Vgt = np.linalg.svd(G)
    rg = 0
    while rg < sg.shape[0] and sg[rg] > RANK_TOLERANCE * sg[0]:
        rg += 1
    w0 = np.zeros(nz + m)
    for i in range(rg):
        c = 0.0
        for a in range(nb):
            c += Ug[a, i] * g[a]
        for j in range(nz + m):
            w0[j] += c / sg[i] * Vgt[i, j]
    residual = 0.0
    for i in range(nb):
        total = -g[i]
        for j in range(nz + m):
            total += G[i, j] * w0[j]
        residual = max(residual, abs(total))
    ny = nz + m - rg
    x0, Z = np.empty(nv + m), np.empty((nv + m, ny))
    for j in range(nv):   # qdd = qdd_p + N w[:nz]
        x0[j] = qdd_p[j]
        for c in range(nz):
            x0[j] += Vt[r + c, j] * w0[c]
        for y in range(ny):
            total = 0.0
            for c in range(nz):
                total += Vt[r + c, j] * Vgt[rg + y, c]
            Z[j, y] = total
    for a in range(m):    # f / weight = w[nz:]
        x0[nv + a] = w0[nz + a]
        for y in range(ny):
            Z[nv + a, y] = Vgt[rg + y, nz + a]
    return x0, Z, residual


@njit()
def fill_program(M, h, Jc, x0, Z, rows, limit, weight, friction, force_weight, desired, P, objective, A, b):
    """The program in y, x = [qdd; f / weight] = x0 + Z y (eliminate_equalities), into P (its upper triangle),
    objective, A (dense; both in CSC's order, column by column) and b: the objective 1/2 x^T D x - [a_des; 0]^T x,
    D = diag(1 for qdd, force_weight weight^2 for f / weight); (4) for the joints ``rows`` with a finite ``limit``
    twice, tau_j / weight = T_j x + h_j / weight within +-limit / weight, T_j = [M_j / weight, -J_cj^T]; (3) as
    s = (mu f_z, f_x, f_y) / weight = S x in the second-order cone: s = b - A y with A = -S Z, b = S x0."""
    nv, m, ny, t = M.shape[0], Jc.shape[0], Z.shape[1], rows.shape[0]
    height = 2 * t + m
    scale = force_weight * weight * weight
    e = 0
    for col in range(ny):
        for row in range(col + 1):
            moving, pushing = 0.0, 0.0
            for i in range(nv):
                moving += Z[i, row] * Z[i, col]
            for i in range(nv, nv + m):
                pushing += Z[i, row] * Z[i, col]
            P[e] = moving + scale * pushing
            e += 1
        moving, pushing = 0.0, 0.0
        for i in range(nv):
            moving += Z[i, col] * (x0[i] - desired[i])
        for i in range(nv, nv + m):
            pushing += Z[i, col] * x0[i]
        objective[col] = moving + scale * pushing
    for i in range(t):
        j = rows[i]
        torque = h[j] / weight
        for a in range(nv):
            torque += M[j, a] / weight * x0[a]
        for a in range(m):
            torque -= Jc[a, j] * x0[nv + a]
        b[i], b[t + i] = limit[i] / weight - torque, limit[i] / weight + torque
        for col in range(ny):
            total = 0.0
            for a in range(nv):
                total += M[j, a] * Z[a, col]
            total /= weight
            for a in range(m):
                total -= Jc[a, j] * Z[nv + a, col]
            A[col * height + i], A[col * height + t + i] = total, -total
    for c in range(m // 3):
        f, row = nv + 3 * c, 2 * t + 3 * c
        b[row], b[row + 1], b[row + 2] = friction * x0[f + 2], x0[f], x0[f + 1]
        for col in range(ny):
            A[col * height + row] = -friction * Z[f + 2, col]
            A[col * height + row + 1] = -Z[f, col]
            A[col * height + row + 2] = -Z[f + 1, col]


@njit()
def unconstrained_optimum(P, objective, A, b, torque_rows, L, y):
    """Whether the minimiser of the objective alone, y = -P^-1 objective, meets every constraint of the program
    (fill_program's P, objective, A, b: s = b - A y with its first 2 torque_rows entries >= 0 and each following
    (mu f_z, f_x, f_y) in the second-order cone); it is then the program's solution (KKT with zero multipliers:
    the objective is strictly convex), written into y. P = L L^T (Cholesky, L overwritten; P is positive definite:
    Z's columns are orthonormal, so P >= min(1, force_weight weight^2) I)."""
    n, height = y.shape[0], b.shape[0]
    e = 0
    for col in range(n):   # P's upper triangle, column by column, into the lower triangle of L
        for row in range(col + 1):
            L[col, row] = P[e]
            e += 1
    rows = np.arange(n)
    if not cholesky_factor(L, rows, L, n, 0.0, 0.0):   # P = L L^T, in place
        return False
    for i in range(n):     # y = -P^-1 objective
        y[i] = -objective[i]
    cholesky_solve(L, n, y, rows)
    s = np.empty(height)
    for row in range(height):
        s[row] = b[row]
        for col in range(n):
            s[row] -= A[col * height + row] * y[col]
    for row in range(2 * torque_rows):
        if s[row] < 0.0:
            return False
    for row in range(2 * torque_rows, height, 3):
        if s[row] * s[row] < s[row + 1] * s[row + 1] + s[row + 2] * s[row + 2] or s[row] < 0.0:
            return False
    return True


@njit()
def solution(x0, Z, y, M, h, Jc, joints, weight, tau, qdd, forces):
    """The program's solution y into qdd and forces (N), x = [qdd; forces / weight] = x0 + Z y, and the joint
    rows of (1) into tau: tau = M_j qdd + h_j - J_cj^T f."""
    nv = M.shape[0]
    for i in range(x0.shape[0]):
        total = x0[i]
        for c in range(y.shape[0]):
            total += Z[i, c] * y[c]
        if i < nv:
            qdd[i] = total
        else:
            forces[i - nv] = weight * total
    for i in range(joints.shape[0]):
        j = joints[i]
        total = h[j]
        for a in range(nv):
            total += M[j, a] * qdd[a]
        for a in range(forces.shape[0]):
            total -= Jc[a, j] * forces[a]
        tau[i] = total


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
