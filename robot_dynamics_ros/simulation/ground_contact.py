"""Hard ground contact with Coulomb friction at the velocity level, with joint friction and stops (no ROS import).

One step of semi-implicit Euler reaches the free velocity w = qd + dt M^-1 (tau - h). The velocity after the step,
v = w + M^-1 G^T lam, takes the impulses lam of constraint rows G (Moreau's time stepping; Stewart-Trinkle,
Anitescu-Potra) from the convex problem

    min_lam  1/2 lam^T (G M^-1 G^T) lam + lam^T (G w + beta)     lam in K                       (1)

the dual of  min_v 1/2 |v - w|_M^2 + sum_j b_j |v_j - c_j|  s.t. G_k v + beta_k in K*  (maximum dissipation).
The rows, and their cones K:
- a contact point i (height phi_i above the ground, normal e_z, tangents e_x, e_y; rows J_i, 3 x nv): the impulse
  lies in the Coulomb cone |lam_t| <= mu lam_n (a second-order cone: the true cone, not a pyramid); beta_n =
  max(phi_i, 0) / dt + s_i, beta_t = 0. With s_i = 0 the primal constraint is Anitescu's u_n + phi/dt >= mu |u_t|,
  which lifts a sliding body; with s_i = mu |u_t,i| (De Saxce's bipotential, solved by the fixed point on s of
  Acary-Cadoux, INRIA RR-8113, 2012) it is u_n + phi/dt >= 0: perfectly inelastic, no penetration within the step
  (phi > 0 is a gap the point may close, not cross), sliding contacts slide, sticking ones stick, and the friction
  impulse opposes the sliding velocity (maximum dissipation). The fixed point starts from s extrapolated from the
  last two steps and stops when s changes by less than FIXED_POINT_TOLERANCE (or after MAX_FIXED_POINT solves,
  keeping the last: Anitescu's relaxation with a lagged shift).
- joint Coulomb friction (or a servo drive about velocity c_j): |lam_j| <= b_j = dt F_j, beta = -c_j;
  a braked joint (v_lo = v_hi) is a bilateral row, lam free;
- a joint stop or velocity limit v_lo_j <= v_j (v_j <= v_hi_j): lam >= 0 with beta = -v_lo_j (row -e_j, beta =
  v_hi_j). Stops enter by constraint generation: those the free velocity w breaks first; any a solution breaks is
  added and the problem solved again (rows are only added, so this ends).
So contacts, joint friction, drives, brakes and stops are solved together, coupled through M^-1. On a model with
coupled mimic joints (``model/mimic.py``: qd_tree = G qd) a point's rows are the tree's J times G, so the Delassus
matrix is J G M^-1 G^T J^T with M the reduced mass matrix, and the rest is the same. Penetration left by the
step's linearisation (a point on a rotating body moves on an arc, not on the line dt J v; nanometres at 1 kHz), or a
robot placed below the ground, is removed at the start of the next step at the position level (``penetration``),
changing q, not v: by the smallest displacement in the metric M, or, deeper than LIFT_DEPTH, a floating robot lifted
as a whole. It adds no kinetic energy.

The step (``contact_step``) runs its stages in one call over one ``step_data.StepData``: kinematics and the contact
candidates' rows (``contact_rows``), Saha's M = U D U^T in the world-aligned frame (``algorithms/world_udut``), then
the rows' solve (``row_solve``): the Delassus matrix G M^-1 G^T over one row set of contacts and joints
(``delassus``: three sweeps per row on U and D), the solve on the last step's pattern with its certificate
(``contact_active_set``), iterated on the shift s (``pattern_fixed_point``); the kernels run compiled where numba is
installed, else as plain Python (``step_data.stage_kernels``). This module holds the contact points, the step's data
and warm start, and the oracle.

Solvers: the last step's pattern (which contacts stick, which are apart; which joints slide, which stops push) is
tried first with one Cholesky solve, and taken where the optimality conditions certify it (``contact_active_set``);
a sliding contact is certified on its slip direction (``sliding``); where no pattern is certified (a foot touching
down or lifting off), projected Gauss-Seidel with
De Saxce's correction over the same Delassus matrix, warm-started from the last step's impulses and bounded in its
sweeps, then its pattern certified where it can be (``bounded_solve``): no solver set-up inside a step, and a cost
bounded whatever the pattern does. The true Coulomb cone throughout (a friction pyramid of 8 sides would
under-estimate the friction by up to 1 - cos(pi/8) = 7.6 %). A frictionless ground (mu = 0) makes each cone the
normal half-line lam_n >= 0 with zero tangential impulses. The interior-point solver Clarabel (PyPI, Apache-2.0)
solves (1) with its certified optimum in place of the rows' solve when ``try_pattern`` is False (``oracle_rows``):
the oracle of the tests, not a step's path.
Its budget (SOLVER_ITERATIONS, SOLVER_SECONDS) bounds its solves; a program it cannot solve within it is a
ContactSolverError.
"""
import functools
from typing import NamedTuple

import numpy as np
import scipy.sparse as sparse

from .. import spatial
from ..algorithms.point_kinematics import PointKinematics
from ..errors import ContactSolverError
from .bounded_solve import MAX_SWEEPS, SWEEP_TOLERANCE
from .contact_rows import body_reach
from .step_data import StepData, stage_kernels
from .step_layout import BOUND, BOX_BOUND, CENTER, COUNTS, FREE_VELOCITY, PIVOTS, V_HI, V_LO, tree_size

# m/s: the De Saxce shift s has converged. A sliding point's normal velocity is then within this of zero: it may lift
# by FIXED_POINT_TOLERANCE dt per step (1 nm at 1 kHz), which the gap term max(phi, 0) / dt takes back the next step.
FIXED_POINT_TOLERANCE = 1e-6
MAX_FIXED_POINT = 30
CONTACT_MARGIN = 5e-3          # m: points this high (plus twice the step's approach) enter the problem
PENETRATION_TOLERANCE = 1e-9   # m: deeper is projected out at the start of the next step
# The interior-point solver's budget per cone program, so that a step always ends: the standing quadruped takes ~14
# iterations (~0.1 ms); Clarabel's default is 200 iterations and no time limit. The time limit is wall-clock, so it
# is a last resort well above what a loaded machine needs (a first solve took 0.6 s at a load of 16 on 2 cores).
SOLVER_ITERATIONS = 100
SOLVER_SECONDS = 5.0
# row_solve.solve_rows' settings: the fixed point's iterations and tolerance, the sweeps' count and tolerance
ROW_SETTINGS = np.array([MAX_FIXED_POINT, FIXED_POINT_TOLERANCE, MAX_SWEEPS, SWEEP_TOLERANCE], dtype=float)


class Ground(NamedTuple):
    """The plane z = height of the world frame, friction coefficient mu (restitution is zero)."""
    height: float = 0.0
    friction: float = 1.0


def _clarabel():
    try:
        import clarabel
    except ImportError:
        raise ImportError("ground contact needs the Clarabel solver: pip install clarabel "
                          "(or robot_dynamics_ros[legged])") from None
    return clarabel


class GroundContact:
    """The contact points of one model on one ground: their geometry, the step's data and warm start, and the
    interior-point oracle (``oracle_rows``); ``contact_step.ContactStep`` takes the steps."""
    try_pattern = True   # the patterns, then the bounded sweeps (False: the interior-point solver alone, the oracle)

    def __init__(self, model, points, ground, backend=None):
        if not (np.isfinite(ground.height) and np.isfinite(ground.friction) and ground.friction >= 0):
            raise ValueError(f'ground height must be finite and friction >= 0, got {ground}')
        self.clarabel = _clarabel()
        # the kinematics run on the tree, every joint a body of its own; with coupled mimic joints a point's rows are
        # then projected onto the model's coordinates, J G (``model/mimic.py``)
        self.model, self.ground, self.kinematics = model, ground, PointKinematics(model.tree)
        self.coupling = model.coupling
        body, centre, radius, links = [], [], [], []
        for point in points:
            frame = model.frames.get(point.link)
            if frame is None:
                raise KeyError(f'contact point on link {point.link!r}: no such link; the model has {sorted(model.frames)}')
            if not (np.all(np.isfinite(point.offset)) and np.isfinite(point.radius) and point.radius >= 0):
                raise ValueError(f'contact point on link {point.link!r}: offset and radius must be finite, radius >= 0')
            if frame.body < 0:
                continue   # fixed to the world: it cannot touch the ground by moving
            R, p = spatial.pose_from_plucker(frame.X_body)   # the link frame in its body's frame
            body.append(frame.body)
            centre.append(p + R @ np.asarray(point.offset, dtype=float))
            radius.append(float(point.radius))
            links.append(point.link)
        self.body, self.centre = np.array(body, dtype=int), np.array(centre).reshape(-1, 3)
        self.radius, self.links = np.array(radius), tuple(links)
        # how the steps' problems were solved: the certified patterns' solves, the bounded sweeps' steps (and of
        # those, the ones cut off at their bound, neither converged nor certified: their admissible last iterate), and
        # the interior-point solves (the oracle, try_pattern = False)
        self.solves = {'pattern': 0, 'bounded': 0, 'unconverged': 0, 'interior point': 0}
        # the step's buffers and warm start (step_data.StepData), the stage kernels (compiled or plain Python)
        self.data, self.kernels = StepData(model, len(body)), stage_kernels(backend)
        k = self.kinematics
        self._tree = k.tree
        # None, or the coupling of mimic joints (G, Gq, q_offset) and an arena of the step's buffers on the tree's
        # coordinates (``step_layout.tree_buffers``), as the step takes them
        c, tree = self.coupling, model.tree
        self.coupled = None if c is None else (*(np.ascontiguousarray(a) for a in (c.G, c.Gq, c.q_offset)),
                                               np.zeros(tree_size(model.nv, tree.nq, tree.nv, len(body))))
        self._columns = (np.ascontiguousarray(k.column_body, dtype=np.int64), np.ascontiguousarray(k.S_ang),
                         np.ascontiguousarray(k.S_lin))
        self._every_body = np.ones(model.tree.nb, dtype=np.int64)   # (``points``: every body's points)
        self._reach = body_reach(model.tree.nb, self.body, self.centre, self.radius)   # (the step's broad phase)
        self._solver = None   # (structure, Clarabel solver) of the last interior-point solve: set up once per structure

    def reset(self):
        """Forget the warm start (the last steps' roles and shifts): ``Simulator.reset`` calls it."""
        self.data.reset()
        self._solver = None

    # the warm start lives in the step's data
    contact_role = property(lambda self: self.data.contact_role)
    box_role = property(lambda self: self.data.box_role)
    lower_role = property(lambda self: self.data.lower_role)
    upper_role = property(lambda self: self.data.upper_role)
    shift = property(lambda self: self.data.shift)

    @property
    def count(self):
        return len(self.body)

    def points(self, q):
        """(phi, x, R, p): each point's height above the ground, its lowest world point (the sphere's), and the body
        poses at q (copies: the step's own buffers are overwritten by the next step)."""
        d, k = self.data, self.kernels
        q = q if self.coupling is None else self.coupling.tree_positions(q)
        k.body_poses(*self._tree, np.ascontiguousarray(q, dtype=float), d.R, d.p)
        k.point_heights(self.body, self.centre, self.radius, float(self.ground.height), d.R, d.p, d.x, d.phi,
                        self._every_body)
        return d.phi.copy(), d.x.copy(), d.R.copy(), d.p.copy()

    def lowest_height(self, q):
        """The height of the lowest contact point above the ground (inf without points)."""
        return float(np.min(self.points(q)[0], initial=np.inf))

    def count_solve(self, iterations):
        """Count a step's solve by ``row_solve.solve_rows`` (its iterations) in ``solves``."""
        sweeps = int(self.data.joint_ints[COUNTS, 2])
        if sweeps:
            self.solves['bounded'] += 1
            self.solves['unconverged'] += int(self.data.joint_ints[COUNTS, 3])
        else:
            self.solves['pattern'] += iterations

    def oracle_rows(self, nc, dt):
        """``row_solve.solve_rows``' problem with the interior-point solver (the oracle of the tests, ``try_pattern``
        False), on the step's data as ``contact_step`` leaves it with ``rows_only`` (M = U D U^T, w, the joints'
        rows, the nc candidates' rows): lam, v, the trial shifts, the row sets and m written as ``solve_rows`` writes
        them; returns the counts of the bilateral, boxed, lower-stop and upper-stop rows."""
        d, k = self.data, self.kernels
        U, D, w = d.U, d.joints[PIVOTS], d.joints[FREE_VELOCITY]
        v_lo, v_hi, b, center = d.joints[V_LO], d.joints[V_HI], d.joints[BOUND], d.joints[CENTER]
        which, mu = d.which[:nc], float(self.ground.friction)
        phi = d.phi[which]
        n_bilateral, n_boxed, n_lo, n_hi = k.joint_row_sets(v_lo, v_hi, b, w, d.joint_impulse, d.sets)
        bilateral, boxed = d.sets[0, :n_bilateral].copy(), d.sets[1, :n_boxed].copy()
        lo, hi = d.sets[2, :n_lo].copy(), d.sets[3, :n_hi].copy()
        bound = b[boxed]
        shift = np.maximum(2.0 * d.shift[1, which] - d.shift[0, which], 0.0)   # (as solve_rows extrapolates it)
        gap_velocity = np.maximum(phi, 0.0) / dt
        while True:
            m = k.joint_rows(bilateral, boxed, lo, hi, 3 * nc, d.G)
            d.reserve(m)
            G, A, Y = d.G, d.A, d.Y
            k.delassus(U, D, G, m, Y, A)                # Y = M^-1 G^T, A = G M^-1 G^T
            beta_joints = np.concatenate([-v_lo[bilateral], -center[boxed], -v_lo[lo], v_hi[hi]])
            lam, v, shift = self._fixed_point(A, G, Y, w, m, nc, len(bilateral), beta_joints, gap_velocity, bound, mu,
                                              shift)
            n_lo, n_hi = k.broken_stops(v, v_lo, v_hi, lo, hi, d.sets)
            if not (n_lo or n_hi):
                break
            lo, hi = np.union1d(lo, d.sets[2, :n_lo]), np.union1d(hi, d.sets[3, :n_hi])
        for row, rows in enumerate((bilateral, boxed, lo, hi)):
            d.sets[row, :len(rows)] = rows
        d.joints[BOX_BOUND, :len(boxed)] = bound
        d.joint_ints[COUNTS, :2] = m, nc
        d.trial[:nc], d.v[:] = shift, v
        return len(bilateral), len(boxed), len(lo), len(hi)

    def _fixed_point(self, A, G, Y, w, m, nc, n_bilateral, beta_joints, gap_velocity, bound, mu, shift):
        """(lam, v, shift): De Saxce's fixed point on the shift with the interior-point solver (the oracle)."""
        d = self.data
        c = d.c
        program = self._cone_program(A[:m, :m], nc, n_bilateral, bound, m - 3 * nc - n_bilateral - len(bound))
        for _ in range(MAX_FIXED_POINT):
            c[:m] = G[:m] @ w
            c[3 * nc:m] += beta_joints
            c[2:3 * nc:3] += gap_velocity + shift
            d.lam[:m] = program(c[:m])
            self.solves['interior point'] += 1
            lam = d.lam[:m]
            v = w + Y[:, :m] @ lam
            u = (G[:3 * nc] @ v).reshape(-1, 3)
            new_shift = mu * np.hypot(u[:, 0], u[:, 1])
            converged = np.all(np.abs(new_shift - shift) <= FIXED_POINT_TOLERANCE)
            shift = new_shift
            if converged:
                break
        return lam, v, shift

    def _cone_program(self, A, nc, n_bilateral, bound, n_stops):
        """A function c -> lam minimising 1/2 lam^T A lam + c^T lam over [contacts (Coulomb cones) | bilateral
        (free) | boxed |lam| <= bound | stops lam >= 0]: Clarabel with constraints A_c lam + s = b_c, s in the cones,
        set up once per structure (the rows' kinds and counts) and kept from step to step: a step of the same
        structure updates its data in place (the fixed point on s changes c only)."""
        clarabel = self.clarabel
        m = A.shape[0]
        n_box, start_box = len(bound), 3 * nc + n_bilateral
        n_rows = 2 * n_box + n_stops + 3 * nc
        if n_rows == 0:   # (bilateral rows alone, or none)
            return lambda c: np.linalg.lstsq(A, -c, rcond=None)[0] if m else np.zeros(0)
        mu = float(self.ground.friction)
        row, column, indptr = _upper_triangle(m)
        P_data = A[row, column]   # the upper triangle of A, column by column (CSC)
        b_c = np.concatenate([np.zeros(2 * nc), bound, bound, np.zeros(n_stops), np.zeros(nc)]) if mu == 0 else \
            np.concatenate([bound, bound, np.zeros(n_stops), np.zeros(3 * nc)])

        def setup(c):
            """A new Clarabel solver for this structure."""
            # A_c column by column (CSC): contact i's columns (x, y, n) hold -1 (row of s_x), -1 (s_y), -mu (s_0) in the
            # cone rows; a boxed column +1 and -1 in its two rows; a stop column -1; bilateral columns are empty.
            # Frictionless (mu = 0) the cone is the half-line lam_n >= 0: rows -lam_x, -lam_y in the zero cone (first),
            # -lam_n in the nonnegative one.
            first_cone = 2 * n_box + n_stops
            shift = 2 * nc if mu == 0 else 0   # the zero cone's rows come first
            rows, values, counts = [], [], np.zeros(m, dtype=int)
            for i in range(nc):
                if mu == 0:
                    rows += [2 * i, 2 * i + 1, shift + first_cone + i]
                    values += [-1.0, -1.0, -1.0]
                else:
                    r = first_cone + 3 * i
                    rows += [r + 1, r + 2, r]
                    values += [-1.0, -1.0, -mu]
                counts[3 * i:3 * i + 3] = 1
            for k in range(n_box):
                rows += [shift + k, shift + n_box + k]
                values += [1.0, -1.0]
                counts[start_box + k] = 2
            for k in range(n_stops):
                rows.append(shift + 2 * n_box + k)
                values.append(-1.0)
                counts[start_box + n_box + k] = 1
            A_c = _csc(np.array(values), np.array(rows, dtype=np.int64), np.concatenate([[0], np.cumsum(counts)]),
                       (n_rows, m))
            P = _csc(P_data, row, indptr, (m, m))
            if mu == 0:
                cones = ([clarabel.ZeroConeT(2 * nc)] if nc else []) + [clarabel.NonnegativeConeT(first_cone + nc)]
            else:
                cones = ([clarabel.NonnegativeConeT(2 * n_box + n_stops)] if first_cone else []) \
                    + [clarabel.SecondOrderConeT(3)] * nc
            return clarabel.DefaultSolver(P, c, A_c, b_c, cones, settings)

        settings = clarabel.DefaultSettings()
        settings.verbose = False
        settings.max_iter = SOLVER_ITERATIONS
        settings.time_limit = SOLVER_SECONDS
        structure = (nc, n_bilateral, n_box, n_stops, mu)   # what A_c and the cones depend on
        solver = None

        def solve(c):
            nonlocal solver
            if solver is None and self._solver is not None and self._solver[0] == structure:
                solver = self._solver[1]   # the last step's solver: its data updated in place
                solver.update(P=P_data, q=c, b=b_c)
            elif solver is None:
                solver = setup(c)
                self._solver = (structure, solver)
            else:
                solver.update(q=c)
            solution = solver.solve()
            if str(solution.status) not in ('Solved', 'AlmostSolved'):
                raise ContactSolverError(
                    f'the contact problem of the step ({nc} contact points, {m - 3 * nc} joint rows, mu = {mu:g}) '
                    f'was not solved: Clarabel says {solution.status} after {solution.iterations} iterations, '
                    f'{solution.solve_time * 1e3:.3g} ms (budget {SOLVER_ITERATIONS} iterations, '
                    f'{SOLVER_SECONDS * 1e3:g} ms)')
            return np.asarray(solution.x)
        return solve

@functools.cache
def _upper_triangle(m):
    """(rows, columns, indptr) of the upper triangle of an m x m matrix in CSC order (column by column)."""
    column = np.repeat(np.arange(m), np.arange(1, m + 1))
    row = np.concatenate([np.arange(j + 1) for j in range(m)]).astype(np.int64)
    return row, column, np.concatenate([[0], np.cumsum(np.arange(1, m + 1))]).astype(np.int64)


def _csc(data, indices, indptr, shape):
    """A scipy CSC matrix from its arrays, built without scipy's checks (ours are canonical by construction)."""
    matrix = sparse.csc_matrix(shape)
    matrix.data, matrix.indices, matrix.indptr = data, indices, indptr
    return matrix
