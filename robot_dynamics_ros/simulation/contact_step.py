"""The simulator's ground-contact step (no ROS import).

Its stages: the free velocity, the joints' rows, the contact points' kinematics and candidate rows, M = U D U^T, the
Delassus matrix, the fixed point over certified patterns, the roles kept for the next step and the integration, each
a kernel of its own module, run over one step data (``step_data.StepData``, allocated once, passed as its five
arenas). ``contact_step`` runs them in one call, so that a step costs one call instead of some sixty NumPy and kernel
calls; the interior-point oracle of the tests (``GroundContact.oracle_rows``) solves the rows in place of its solve,
between two calls (its ``rows_only`` and ``solution`` arguments). The free acceleration M^-1 (tau - h) takes the
bias h from RNEA (qdd = 0) and M^-1 from Saha's sweeps on the step's U D U^T (``algorithms/inverse_mass``), which
the Delassus stage needs anyway, where ABA would compute the articulated-body inertias (U D U^T's pivots) a second
time; both recursions run in the world-aligned frame (``algorithms/world_frame``), on the bodies' poses and world
columns the contact stage needs anyway, with no joint transform between bodies (the two agree with ABA to rounding:
a test). Written as loops, as ``algorithms/``, so the plain-Python reference runs it and numba compiles it
(``step_data.stage_kernels``).

Any tree (a fixed, free-flyer or planar root, free-flyer and planar joints below it): only a free-flyer root has the
omega x v term and the whole-robot lift, and ``integrate_step`` moves each joint on its own manifold. With coupled
mimic joints (``model/mimic.py``) the kinematics and RNEA run on the tree's coordinates, M = G^T M_tree G is
factorised densely (``dense_udut.reduced_udut``) and the rows are J G. In the air (no point near the ground) the
joints' rows alone make the problem, solved by the same fixed point or sweeps as with contacts. A stop the solution
breaks enters as a row and the problem is solved again (constraint generation: at most one round per stop). A point
below the ground is removed first (``penetration``); where no pattern is certified, the bounded sweeps of
``bounded_solve`` take the step. A singular pattern (more held rows than freedoms: four sticking feet and the
joints' friction, drives or brakes) takes the least-squares impulses closest to the last solve's
(``contact_active_set.closest_held_rows``). A step that cannot be taken changes no state (only scratch buffers):
``ContactStep`` raises the error (a quaternion off unit norm, a non-finite state, a zero pivot), or, where the rows
outgrow the buffers, grows them and runs the step again.
"""
import numpy as np

from ..algorithms.backends import njit, shaped
from ..algorithms.dense_udut import reduced_udut
from ..algorithms.inverse_mass import inverse_mass_rows
from ..algorithms.packing import packed, spatial_gravity
from ..algorithms.point_kinematics import body_poses, world_columns
from ..algorithms.spatial_kernels import unit_quaternions
from ..algorithms.world_frame import world_rows
from ..algorithms.world_rnea import world_rnea
from ..algorithms.world_udut import world_udut
from ..errors import ContactSolverError
from ..model.configuration import QUATERNION_TOLERANCE, check_quaternions
from ..model.joints import FREE_FLYER
from .contact_rows import body_velocities, candidate_rows, points_near
from .integrate_step import integrate_joints
from .joint_bounds import applied_effort, drive_rows, joint_bounds
from .joint_friction import SLIDING
from .penetration import LIFT_DEPTH, projection
from .row_solve import CAPACITY, remember_solution, solve_rows
from .step_layout import BIAS, BOUND, CENTER, COMMAND_EFFORT, CONTINUOUS, COUNTS, DAMPING, DRIVEN, EFFORT_LIMIT, \
    EXTERNAL, FREE_VELOCITY, FRICTION, LOWER_V, N_SIZES, PIVOTS, POSITION_TARGET, QDD, SPEED, TAU, TAU_TOTAL, UPPER_V, \
    TREE_BIAS, TREE_D, TREE_QD, TREE_W, TREE_ZERO, V_AFTER, V_HI, V_LO, VELOCITY_TARGET, constant_buffers, \
    constant_sizes, model_buffers, row_buffers, tree_buffers

# The applied effort and the joints' velocity bounds of the step (Simulator._effort, _joint_rows): the command
# within the effort limits; no effort, the joints braked (a stale command with on_command_timeout='brake'); no
# effort (a stale command otherwise); or the servo's effort targets and its drives (``joint_bounds.drive_rows``).
COMMAND, BRAKED, NO_EFFORT, SERVO = 0, 1, 2, 3
# Why the kernel did not take a step (it returns the fixed point's iterations or the sweeps, > 0, when it took it).
QUATERNION, NOT_FINITE, SINGULAR = -1, -2, -4   # (and row_solve.CAPACITY, -3)


@njit()
def contact_step(constants, constant_ints, floats, ints, row_floats, row_ints, row_flags, coupled, a0, height, mu, dt,
                 mode, q, qd, q_new, qd_new, forces, constraint_effort, applied, rows_only, solution):
    """One semi-implicit Euler step with ground contact (``ground_contact``'s problem (1) on the last step's
    pattern): q_new, qd_new, the points' forces over the step, the constraint effort G^T lam / dt and the applied
    effort written; returns the fixed point's iterations (> 0), or a reason (< 0) with the state and the warm start
    (roles, shifts, lam) unchanged. Where no certified pattern is found, the bounded sweeps (``bounded_solve``) take
    the step, from the last step's impulses. constants, constant_ints: the simulator's constants
    (``step_layout.constant_buffers``: the packed model for RNEA and U D U^T, the point kinematics, the contact
    points, the settings); floats .. row_flags: the step's data (``step_data.StepData``'s arenas, viewed as
    ``step_layout`` lays them out: its ``joints`` and ``joint_ints`` as ``step_layout`` names their rows);
    ``coupled``: None, or with coupled mimic joints their G, Gq, q_offset and the arena of
    ``step_layout.tree_buffers``; a0 the base acceleration -[0; g]; the rest as ``ContactStep``. For the
    interior-point oracle, which solves the rows in its place (``GroundContact.oracle_rows``), a step in two calls:
    ``rows_only`` True, the step's problem alone (returns the candidates' count nc); then ``solution``, the oracle's
    (1 and the counts of the bilateral, boxed, lower-stop and upper-stop rows; it wrote lam, v and the rows' data),
    the rest of the step (None: solved here)."""
    (P, work, axis, E_T, r, S_ang, S_lin, centre, radius, reach, lower, upper, settings, parent, joint_type, idx_q,
     column_body, moves, body, model_q, idx_v, q_of_v) = constant_buffers(constants, constant_ints)
    nv = qd.shape[0]
    (R, p, C_ang, C_lin, x, phi, bodies, G, impulses, v, shift, swept_shift, joint_impulse, slip, slope, U, joints,
     trial, gap, beta, q_start, which, contact_role, box_role, lower_role, upper_role, contact_roles, joint_ints,
     near) = \
        model_buffers(floats, ints, parent.shape[0], body.shape[0], nv, q.shape[0], column_body.shape[0])
    Y, A, L, c, lam, y, previous, rhs, swept, saved, F, free = row_buffers(row_floats, row_ints, row_flags, nv)
    tau, tau_total, qdd, w = joints[TAU], joints[TAU_TOTAL], joints[QDD], joints[FREE_VELOCITY]
    v_lo, v_hi, bound, center = joints[V_LO], joints[V_HI], joints[BOUND], joints[CENTER]
    D, v_after = joints[PIVOTS], joints[V_AFTER]
    if solution is None:   # the step's problem (numba compiles the oracle's second call apart: this branch pruned)
        margin, penetration = settings[0], settings[1]
        lam_capacity = lam.shape[0]
        for k in range(lam_capacity):               # the last solve's impulses, restored where the step fails
            saved[k] = lam[k]
        if mode == COMMAND or mode == SERVO:            # the applied effort (Simulator._effort)
            applied_effort(joints[COMMAND_EFFORT], joints[EFFORT_LIMIT], q_of_v, tau)
        else:
            tau[:] = 0.0
        # free velocity w = qd + dt qdd, qdd = M^-1 (tau - h) (h by RNEA at qdd = 0, M^-1 by the sweeps on M =
        # U D U^T, both in the world-aligned frame), the root's linear part carried as a point's; with coupled mimic
        # joints (``model/mimic.py``) the kinematics and RNEA run on the tree's coordinates, q_tree = Gq q + q_offset,
        # qd_tree = G qd, w_tree = G w, M = G^T M_tree G, and the rows are J G (numba compiles the step without
        # coupling apart: ``coupled`` None prunes these branches)
        bias = joints[BIAS]
        for j in range(nv):
            qdd[j] = 0.0
        kinematic_q = tree_positions(coupled, q)
        if not unit_quaternions(P, kinematic_q, QUATERNION_TOLERANCE):
            return QUATERNION
        world_dynamics(P, work, parent, joint_type, idx_q, axis, E_T, r, column_body, S_ang, S_lin, kinematic_q, R, p,
                       C_ang, C_lin, U, D, coupled)
        if coupled is None:
            world_rnea(P, work, a0, qd, qdd, bias)      # h
        else:
            tree_vectors = tree_buffers(coupled)[1]
            qd_tree, bias_tree, zero = tree_vectors[TREE_QD], tree_vectors[TREE_BIAS], tree_vectors[TREE_ZERO]
            multiply(coupled[0], qd, qd_tree)
            zero[:] = 0.0
            world_rnea(P, work, a0, qd_tree, zero, bias_tree)   # h = G^T h_tree(q_tree, G qd)
            multiply_transposed(coupled[0], bias_tree, bias)
        for j in range(nv):
            tau_total[j] = tau[j] - joints[DAMPING, j] * qd[j] + joints[EXTERNAL, j] - bias[j]
        inverse_mass_rows(U, D, joints[TAU_TOTAL:TAU_TOTAL + 1], 1, shaped(qdd, (nv, 1)))
        for j in range(nv):
            w[j] = qd[j] + dt * qdd[j]
        free_root = joint_type[0] == FREE_FLYER
        if free_root:
            w[0] += dt * (qd[4] * qd[2] - qd[5] * qd[1])    # dt omega x v
            w[1] += dt * (qd[5] * qd[0] - qd[3] * qd[2])
            w[2] += dt * (qd[3] * qd[1] - qd[4] * qd[0])
        if not finite(w):
            return NOT_FINITE
        w_tree = w
        if coupled is not None:
            w_tree = tree_buffers(coupled)[1][TREE_W]
            multiply(coupled[0], w, w_tree)
        # contact kinematics and candidate rows, the heights of the bodies near the ground only; a point below the
        # ground: q out of it first (penetration.py)
        deepest = points_near(moves, body, centre, radius, reach, height, margin, dt, w_tree, R, p, C_ang, C_lin,
                              bodies, near, x, phi)
        for k in range(q.shape[0]):
            q_start[k] = q[k]
        lift = free_root and deepest < -LIFT_DEPTH
        if lift:                                        # deep: the whole robot lifted (its root's height alone)
            q_start[2] -= deepest
            for b in range(p.shape[0]):
                p[b, 2] -= deepest
            for i in range(phi.shape[0]):
                x[i, 2] -= deepest
                phi[i] -= deepest
            world_columns(column_body, S_ang, S_lin, R, p, C_ang, C_lin)
            body_velocities(moves, C_ang, C_lin, w_tree, bodies)
        elif deepest < -penetration:                    # the smallest displacement in M, then the stages at the new q
            n_deep = 0
            for i in range(phi.shape[0]):
                n_deep += phi[i] < -penetration
            if n_deep > lam_capacity:
                joint_ints[COUNTS, 0] = n_deep
                return CAPACITY
            dq = joints[V_AFTER]
            projection(moves, body, x, phi, C_ang, C_lin, U, D, penetration, G, Y, A, L, F, free, c, previous, y, rhs,
                       dq, coupled)
            integrate_joints(joint_type, model_q, idx_v, q, dq, 1.0, q_start, qd_new)
            world_dynamics(P, work, parent, joint_type, idx_q, axis, E_T, r, column_body, S_ang, S_lin,
                           tree_positions(coupled, q_start), R, p, C_ang, C_lin, U, D, coupled)
            points_near(moves, body, centre, radius, reach, height, margin, dt, w_tree, R, p, C_ang, C_lin, bodies,
                        near, x, phi)
        # the joints' bounds and the servo's drives at the configuration stepped from, q_start (bounds from q before
        # the projection let the step carry a joint the projection moved past its stop, which the clip to the limits
        # then moved back unseen by the contacts: docs/simulator_and_contact.md)
        joint_bounds(joints[LOWER_V], joints[UPPER_V], joints[SPEED], joints[FRICTION], q_start, q_of_v, dt,
                     mode == BRAKED, v_lo, v_hi, bound, center)
        if mode == SERVO:
            drive_rows(joints[POSITION_TARGET], joints[VELOCITY_TARGET], joints[CONTINUOUS], joints[EFFORT_LIMIT], tau,
                       q_start, q_of_v, dt, v_lo, v_hi, bound, center, joints[DRIVEN])
        if coupled is None:                             # (0 in the air)
            nc = candidate_rows(moves, body, x, phi, C_ang, C_lin, w, dt, margin, which, G, bodies, near)
        else:                                           # the rows J on the tree, then J G
            tree_rows = tree_buffers(coupled)[5]
            nc = candidate_rows(moves, body, x, phi, C_ang, C_lin, w_tree, dt, margin, which, tree_rows, bodies, near)
            for row in range(3 * nc):
                multiply_transposed(coupled[0], tree_rows[row], G[row])
        joint_ints[COUNTS, 1] = nc
        if rows_only:
            return nc
        # the joints' rows, the Delassus matrix and the fixed point on the last step's pattern
        iterations, n_bilateral, n_boxed, n_lower, n_upper = solve_rows(
            U, D, w, phi, nc, dt, mu, v_lo, v_hi, bound, center, settings[2:], G, Y, A, L, F, free, c, lam, y,
            previous, rhs, swept, v, joints, joint_ints, which, trial, gap, beta, shift, swept_shift, impulses,
            joint_impulse, slip, slope, contact_role, box_role, lower_role, upper_role, contact_roles)
        if iterations == CAPACITY:
            return restore(lam, saved, CAPACITY)
    else:
        iterations, n_bilateral, n_boxed, n_lower, n_upper = solution
    m, nc = joint_ints[COUNTS, 0], joint_ints[COUNTS, 1]
    # v within the joints' bounds, the generalized impulse G^T lam, the integration (``integrate_step``)
    for j in range(nv):
        v_after[j] = min(max(v[j], v_lo[j]), v_hi[j])
        impulse = 0.0
        for row in range(m):
            impulse += G[row, j] * lam[row]
        constraint_effort[j] = impulse / dt
    integrate_joints(joint_type, model_q, idx_v, q_start, v_after, dt, q_new, qd_new)
    if not (finite(v_after) and finite(q_new) and finite(qd_new)):
        return restore(lam, saved, NOT_FINITE)
    for k in range(q_new.shape[0]):
        q_new[k] = min(max(q_new[k], lower[k]), upper[k])
    # the step is taken: the warm start of the next (shifts of the last two steps, impulses, roles)
    remember_solution(lam, nc, n_bilateral, n_boxed, n_lower, n_upper, mu, joints, joint_ints, which, trial, shift,
                      impulses, joint_impulse, contact_role, box_role, lower_role, upper_role, slip, slope)
    forces[:, :] = 0.0                              # (a point that is no candidate: no impulse, no force)
    for i in range(nc):
        for a in range(3):
            forces[which[i], a] = impulses[which[i], a] / dt
    for j in range(nv):   # the drives' constraint effort is applied effort (as Simulator._friction_and_stops)
        applied[j] = tau[j]
        if mode == SERVO and joints[DRIVEN, j] != 0.0:
            limit = joints[EFFORT_LIMIT, j]
            applied[j] = min(max(tau[j] + constraint_effort[j], -limit), limit)
    return iterations


@njit()
def world_dynamics(P, work, parent, joint_type, idx_q, axis, E_T, r, column_body, S_ang, S_lin, q, R, p, C_ang, C_lin,
                   U, D, coupled):
    """The bodies' world poses R, p and columns C_ang, C_lin at the tree's q (``point_kinematics``), the rows'
    columns and inertias in the world-aligned frame (``world_frame``) and M = U D U^T there (``world_udut``). With
    coupled mimic joints (``coupled`` not None: ``contact_step``) the tree's M_tree = U_tree D_tree U_tree^T, and U,
    D of the model's M = G^T M_tree G (``dense_udut.reduced_udut``)."""
    body_poses(parent, joint_type, idx_q, axis, E_T, r, q, R, p)
    world_columns(column_body, S_ang, S_lin, R, p, C_ang, C_lin)
    world_rows(P, work, column_body, R, p, C_ang, C_lin)
    if coupled is None:
        world_udut(P, work, U, D)
    else:
        _, tree_vectors, U_tree, B, M, _ = tree_buffers(coupled)
        world_udut(P, work, U_tree, tree_vectors[TREE_D])
        reduced_udut(U_tree, tree_vectors[TREE_D], coupled[0], B, M, U, D)


@njit()
def tree_positions(coupled, q):
    """The tree's coordinates: q itself (``coupled`` None), or with coupled mimic joints q_tree = Gq q + q_offset
    (``model/mimic.py``), written into its buffer (``step_layout.tree_buffers``)."""
    if coupled is None:
        return q
    _, Gq, q_offset, _ = coupled
    q_tree = tree_buffers(coupled)[0]
    multiply(Gq, q, q_tree)
    for k in range(q_tree.shape[0]):
        q_tree[k] += q_offset[k]
    return q_tree


@njit()
def multiply(A, x, out):
    """out = A x (the coupling's maps: a few dozen entries)."""
    for i in range(A.shape[0]):
        value = 0.0
        for j in range(A.shape[1]):
            value += A[i, j] * x[j]
        out[i] = value


@njit()
def multiply_transposed(A, x, out):
    """out = A^T x."""
    for j in range(A.shape[1]):
        value = 0.0
        for i in range(A.shape[0]):
            value += A[i, j] * x[i]
        out[j] = value


@njit()
def finite(values):
    """Whether every entry of a vector is finite."""
    for value in values:
        if not np.isfinite(value):
            return False
    return True


@njit()
def restore(lam, saved, reason):
    """lam back to the last solve's impulses; returns ``reason``."""
    for k in range(lam.shape[0]):
        lam[k] = saved[k]
    return reason


def _as_vector(name, x, n):
    """x as a C-contiguous float64 array of length n (what the compiled kernel takes without a new compilation);
    ValueError for another length."""
    if type(x) is np.ndarray and x.dtype == np.float64 and x.shape == (n,) and x.flags.c_contiguous:
        return x
    x = np.ascontiguousarray(x, dtype=float)
    if x.shape != (n,):
        raise ValueError(f"the simulator's {name} has shape {x.shape}, expected ({n},)")
    return x


class ContactStep:
    """``contact_step`` for one simulator with a ground (``stages``: the stage kernels, ``step_data.stage_kernels``;
    ``settings``: ``ground_contact``'s CONTACT_MARGIN, PENETRATION_TOLERANCE, then its ROW_SETTINGS, those of
    ``row_solve.solve_rows``): its constants (the simulator's at construction, in two arrays laid out by
    ``step_layout.constant_buffers``; its data are the ground contact's ``StepData``). ``step`` takes a step: one
    call, or, with the ground contact's ``try_pattern`` False, two around the interior-point oracle
    (``GroundContact.oracle_rows``). ``steps`` counts the steps taken."""

    def __init__(self, simulator, stages, settings):
        sim, contact = simulator, simulator.contact
        model, kin, count = sim.model, contact.kinematics, contact.count
        nv = model.nv
        self.kernel, self.plain, self.pack = stages.contact_step, stages.backend == 'python', packed(model.tree)
        integer = np.int64
        d = contact.data
        self.joints, self.joint_ints = d.joints, d.joint_ints
        self.joints[LOWER_V], self.joints[UPPER_V], self.joints[SPEED] = sim._lower_v, sim._upper_v, \
            sim.velocity_limit
        self.joints[EFFORT_LIMIT], self.joints[DAMPING], self.joints[FRICTION] = model.effort_limit, sim.damping, \
            sim.friction
        self.joints[CONTINUOUS] = sim._continuous
        self.sliding = np.full(nv, SLIDING)   # the joints' pattern after a contact step (never written)
        self.sliding.flags.writeable = False
        sizes = (len(contact._tree[0]), count, nv, model.nq, model.tree.nv)
        assert d.sizes == sizes
        float_sizes, int_sizes = constant_sizes(*sizes)
        self.constants = np.zeros(sum(float_sizes)), np.zeros(sum(int_sizes), dtype=integer)
        self.constants[1][:N_SIZES] = sizes
        views = constant_buffers(*self.constants)
        values = (self.pack.table, 0.0, *contact._tree[3:], *contact._columns[1:], contact.centre, contact.radius,
                  contact._reach, model.lower, model.upper, settings,
                  *contact._tree[:3], contact._columns[0], kin.moves, contact.body, model.idx_q, model.idx_v,
                  sim._q_of_v)
        for view, value in zip(views, values, strict=True):
            view[...] = value
        if not self.plain:   # the machine code loaded (once: compiled) now, not by the first step (~50 ms)
            from numba import typeof
            q, qd = np.empty(model.nq), np.empty(nv)
            example = (*self.constants, *d.arenas, contact.coupled, self.pack.default_base_acceleration, 0.0, 0.0,
                       float(sim.dt), COMMAND, q, qd, q, qd, np.empty((count, 3)), qd, qd, False, None)
            self.kernel.compile(tuple(typeof(value) for value in example))
        self.steps = 0
        # the state arrays the last step wrote; whether the external effort row may be nonzero
        self.written, self.forces_shape, self.external = (None, None), (count, 3), True

    @property
    def rows(self):
        """(m, nc): the rows of the last step the kernel reached its rows in, and its contact candidates."""
        return int(self.joint_ints[COUNTS, 0]), int(self.joint_ints[COUNTS, 1])

    def _run(self, d, step_inputs, rows_only=False, solution=None):
        """The kernel on the step data ``d`` and the step's inputs (``rows_only``, ``solution``: ``contact_step``'s);
        returns its status."""
        arguments = (*self.constants, *d.arenas, *step_inputs, rows_only, solution)
        try:
            if self.plain:   # (as fast._run: a zero pivot raises, as numba's division does)
                with np.errstate(divide='raise'):
                    return self.kernel(*arguments)
            return self.kernel(*arguments)
        except (ZeroDivisionError, FloatingPointError):   # a zero pivot
            d.lam[:] = d.saved
            return SINGULAR

    def _take(self, contact, step_inputs):
        """The step's status: the one call, or with ``try_pattern`` False the interior-point oracle in place of the
        rows' solve."""
        if contact.try_pattern:
            return self._run(contact.data, step_inputs)
        nc = self._run(contact.data, step_inputs, rows_only=True)
        if nc < 0:
            return nc
        counts = contact.oracle_rows(nc, step_inputs[4])
        return self._run(contact.data, step_inputs, solution=(1, *counts))

    def step(self, sim):
        """One step of the simulator ``sim``: its state, forces and efforts written. Where the step cannot be taken
        (a quaternion off unit norm, a non-finite state, a zero pivot) the simulator's error, the state unchanged."""
        contact, model = sim.contact, sim.model
        nv = model.nv
        last_q, last_qd = self.written   # (arrays the kernel wrote are what it takes: no need to check them again)
        q = sim.q if sim.q is last_q else _as_vector('q', sim.q, model.nq)
        qd = sim.qd if sim.qd is last_qd else _as_vector('qd', sim.qd, nv)
        joints, dt = self.joints, sim.dt
        if sim.servo_mode:
            effort = sim.effort_target
            joints[COMMAND_EFFORT] = np.where(np.isnan(effort), 0.0, effort)
            joints[POSITION_TARGET], joints[VELOCITY_TARGET] = sim.position_target, sim.velocity_target
            mode = SERVO
        elif sim.command_is_stale():
            mode = BRAKED if sim.on_command_timeout == 'brake' else NO_EFFORT
        else:
            joints[COMMAND_EFFORT] = sim.command
            mode = COMMAND
        if sim.held_wrench is not None or sim.push_wrench is not None or self.external:
            joints[EXTERNAL] = sim._external_effort(q)   # (else zero, as written the last time)
            self.external = sim.held_wrench is not None or sim.push_wrench is not None
        a0 = self.pack.default_base_acceleration if sim.gravity is None else spatial_gravity(sim.gravity)
        empty = np.empty
        q_new, qd_new, forces, constraint_effort, applied = empty(model.nq), empty(nv), empty(self.forces_shape), \
            empty(nv), empty(nv)
        ground = contact.ground
        step_inputs = (contact.coupled, a0, float(ground.height), float(ground.friction), dt, mode, q, qd, q_new,
                       qd_new, forces, constraint_effort, applied)
        status = self._take(contact, step_inputs)
        if status == CAPACITY:   # room for the rows (once: the buffers double), and again
            contact.data.reserve(int(self.joint_ints[COUNTS, 0]))
            status = self._take(contact, step_inputs)
        if status == QUATERNION:   # a ValueError naming the joint
            check_quaternions(model, q)
        elif status == NOT_FINITE:   # SimulationDiverged with the state kept, at rest
            for x in (joints[FREE_VELOCITY], joints[V_AFTER], q_new, qd_new):   # (written where w is finite)
                sim._finite(x)
        elif status == SINGULAR:   # the mass matrix's pivot names its joint; else the held rows were singular
            sim._check_positive_definite(q, f'at t = {sim.t:.6g} s')
            raise ContactSolverError(f'the contact problem of the step at t = {sim.t:.6g} s had a zero pivot; '
                                     'kept the state before it')
        if status <= 0:   # (a reason the checks above let pass, at their tolerance's edge, or the rows again too many)
            raise ContactSolverError(f'the step at t = {sim.t:.6g} s was not taken ({status}); kept the state '
                                     'before it')
        self.steps += 1
        if contact.try_pattern:
            contact.count_solve(status)
        sim.contact_forces, sim.constraint_effort, sim.applied_effort = forces, constraint_effort, applied
        sim._step_inertia, sim._pattern = None, self.sliding
        sim.q, sim.qd = self.written = q_new, qd_new
        sim.t += dt
