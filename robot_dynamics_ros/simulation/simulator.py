"""A simulated robot: articulated-body forward dynamics, integrated in fixed steps (no ROS import)."""
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
from numpy.typing import ArrayLike

from ..algorithms.embedded_aba import embedded_pivots
from ..algorithms.energy import kinetic_energy, potential_energy
from ..algorithms.kinematics import frame_jacobian
from ..algorithms.udut import innovations_factors
from ..errors import SingularMassMatrixError
from ..fast import aba, bias_torques, crba
from ..model.configuration import normalize
from ..model.joints import as_finite_vector
from ..model.model import FREE_FLYER, NQ, NV, REVOLUTE, Model
from .joint_bounds import POSITION_GAIN
from .joint_friction import SLIDING, solve_velocity_step

if TYPE_CHECKING:   # clarabel, the optional solver, is imported only with a ground
    from .ground_contact import Ground
    from ..model.collision import ContactPoint

INTEGRATORS = ('semi_implicit_euler', 'rk4')
TIMEOUT_BEHAVIOURS = ('brake', 'zero_effort')
# A pivot D_i of U D U^T at or below this fraction of the largest one is a singular mass matrix.
SINGULAR_PIVOT_RATIO = 1e-12
# A push or held external wrench accelerates the robot's whole mass by at most 10 g (a hard shove is a few g), its
# torque that force at a 1 m lever (longer than any link of the robots it serves): beyond, it is a fault in the sender.
PUSH_ACCELERATION = 10.0 * 9.81   # m/s^2
PUSH_LEVER = 1.0                  # m


class SimulationDiverged(ValueError):
    """The state after a step was not finite; the simulator kept the state before it, at rest."""


class Simulator:
    """Stand-in robot: takes joint commands, advances (t, q, qd) by fixed steps of ``dt`` seconds.

    Inputs (the later call replaces the earlier one's mode):
    - ``set_command(tau)``: whole-vector joint efforts. Older than ``command_timeout`` seconds of simulated
      time it is stale: ``on_command_timeout='brake'`` (default) holds every joint still (an ideal brake:
      v = 0 exactly, zero motor effort) until the next command; ``'zero_effort'`` applies zero effort.
    - ``set_joint_command(position, velocity, effort)``: per-joint servo targets, held until replaced
      (never stale); see there.
    Each integration step (and RK4 stage) applies the effort of the active input clamped to the URDF effort limits,
    minus URDF viscous damping; forward dynamics by ABA, integrated by semi-implicit (symplectic) Euler or classical
    RK4. Semi-implicit Euler takes the damping implicitly (stable however stiff the damping is for its link; see
    ``_implicitly_damped_acceleration``), except with contact points on a ground, whose contact solve works on M
    (the static contact forces would be off by M (M + dt B)^-1); RK4 explicitly. Coulomb friction and the position
    limits are then taken together at the velocity level (``joint_friction.solve_velocity_step``): a joint whose net
    effort is below its friction sticks at exactly zero velocity, a joint reaching a limit stops on it (perfectly
    inelastic, the impulse shared through the mass matrix), a stop only pushes, and a joint leaves its stop when the
    dynamics pull it away. Joints with infinite limits are unbounded. q never leaves [lower, upper]. Joint speeds
    saturate at the URDF velocity limits, solved in the same step (``limit_velocity=False`` turns that off).
    ``paused`` is a flag for the node that drives the simulator; ``step()`` itself ignores it.

    Floating and planar joints (e.g. ``load_urdf(urdf, root_joint='floating')``): q has nq coordinates and is
    advanced on the configuration manifold (``integrate``); commands, velocities and efforts have nv; the
    coordinates of floating and planar joints are not actuated (their command entries are ignored) and have no
    limits. Such models take semi-implicit Euler only. ``initial_positions`` is then either a whole configuration
    (nq values: the base pose is given) or the 1-DOF joint positions alone (``joint_names`` order): the base then
    starts at the origin, upright, lifted so that its lowest contact point touches the ground (at the origin when
    there is no ground).

    Ground contact (off unless ``ground`` is given, so fixed-base arms and free-floating models behave as before):
    ``ground`` = ``ground_contact.Ground(height, friction)``, the plane z = height with Coulomb friction mu, and
    ``contact_points`` = ``ContactPoint``s (``model.collision.contact_points_from_urdf`` gives the URDF's collision
    spheres, box corners and cylinder rims; add your own for mesh-only robots). Contact is hard, perfectly
    inelastic, with the Coulomb cone and maximum dissipation, solved in one problem with joint friction, stops,
    brakes and servo drives (``ground_contact``); ``contact_forces`` holds each point's world force over the step.
    The contact step's stages run compiled where numba is installed; ``stages='python'`` runs the same kernels as plain
    Python (the reference, ``step_data.stage_kernels``), in one call (``contact_step``) whatever the joints (coupled
    mimic joints too). A ground without contact points changes nothing: the step is the one without a ground.
    """

    def __init__(self, model: Model, dt: float, integrator: str = 'semi_implicit_euler',
                 gravity: ArrayLike | None = None, initial_positions: ArrayLike | None = None,
                 apply_damping: bool = True, apply_friction: bool = True, command_timeout: float | None = None,
                 on_command_timeout: str = 'brake', limit_velocity: bool = True, ground: 'Ground | None' = None,
                 contact_points: Sequence['ContactPoint'] = (), stages: str | None = None) -> None:
        if not (np.isfinite(dt) and dt > 0):
            raise ValueError(f'time step dt must be positive and finite, got {dt}')
        if integrator not in INTEGRATORS:
            raise ValueError(f'unknown integrator {integrator!r}; expected one of {INTEGRATORS}')
        if command_timeout is not None and not command_timeout > 0:
            raise ValueError(f'command_timeout must be positive or None, got {command_timeout}')
        if on_command_timeout not in TIMEOUT_BEHAVIOURS:
            raise ValueError(f'unknown on_command_timeout {on_command_timeout!r}; expected one of {TIMEOUT_BEHAVIOURS}')
        if integrator != 'semi_implicit_euler' and ground is not None:
            raise ValueError(f"integrator {integrator!r}: ground contact is solved at the velocity level in "
                             "'semi_implicit_euler' steps; use that integrator with a ground")
        if integrator != 'semi_implicit_euler' and not model.fixed_base:
            raise ValueError(f"integrator {integrator!r} is for fixed-base models; a model with floating or planar "
                             "joints takes 'semi_implicit_euler'")
        self.model = model
        self.dt = float(dt)
        # Per velocity coordinate: the q index of a 1-DOF joint (-1 for floating and planar joints), its limits.
        self._q_of_v = np.full(model.nv, -1)
        for kind, iq, iv in zip(model.joint_type, model.idx_q, model.idx_v):
            if NQ[kind] == NV[kind] == 1:
                self._q_of_v[iv] = iq
        self._actuated = self._q_of_v >= 0
        self._free_root = model.joint_type[0] == FREE_FLYER
        # the stage kernels (step_data.py): compiled where numba is; the effort, the joints' bounds and the integration
        # for every simulator (joint_bounds.py, integrate_step.py), the contact step's with a ground
        from .step_data import stage_kernels
        self._stages = stage_kernels(stages)
        self._joint_type = np.ascontiguousarray(model.joint_type, dtype=np.int64)
        self._idx_q = np.ascontiguousarray(model.idx_q, dtype=np.int64)
        self._idx_v = np.ascontiguousarray(model.idx_v, dtype=np.int64)
        self._lower_v = np.where(self._actuated, model.lower[np.maximum(self._q_of_v, 0)], -np.inf)
        self._upper_v = np.where(self._actuated, model.upper[np.maximum(self._q_of_v, 0)], np.inf)
        if ground is not None:
            from .ground_contact import GroundContact
            self.contact = GroundContact(model, contact_points, ground, stages)
        else:
            self.contact = None
        self.integrator = integrator
        self.gravity = gravity
        self.damping = model.damping if apply_damping else np.zeros(model.nv)
        self.friction = model.friction if apply_friction else np.zeros(model.nv)
        limit = model.velocity_limit
        self.velocity_limit = np.where(limit_velocity & np.isfinite(limit) & (limit > 0), limit, np.inf)
        revolute = np.zeros(model.nv, dtype=bool)
        revolute[model.idx_v[model.joint_type == REVOLUTE]] = True
        # 1.0 on a continuous joint (revolute, no limits): the servo's position error wrapped into [-pi, pi)
        self._continuous = (revolute & ~np.isfinite(self._lower_v) & ~np.isfinite(self._upper_v)).astype(float)
        # the contact step (contact_step.py), where there are contact points
        self.contact_step = None
        if self.contact is not None and self.contact.count:
            from .contact_step import ContactStep
            from .ground_contact import CONTACT_MARGIN, PENETRATION_TOLERANCE, ROW_SETTINGS
            self.contact_step = ContactStep(self, self._stages, (CONTACT_MARGIN, PENETRATION_TOLERANCE, *ROW_SETTINGS))
        self.command_timeout = command_timeout
        self.on_command_timeout = on_command_timeout
        self.initial_positions = self._within_limits(initial_positions)
        self._check_positive_definite(self.initial_positions)
        self.paused = False
        self.reset()

    def _within_limits(self, positions):
        """Positions as a checked array clipped into the joint limits (the neutral configuration for None)."""
        model = self.model
        if model.fixed_base:
            if positions is None:
                return model.neutral()
            return np.clip(as_finite_vector('initial positions', positions, model.nv), model.lower, model.upper)
        if positions is not None and np.size(positions) == model.nq:   # a whole configuration, base pose given
            q = as_finite_vector('initial positions', positions, model.nq)
            return normalize(model, np.clip(q, model.lower, model.upper))
        q = model.neutral()
        if positions is not None:
            joints = as_finite_vector(f'initial positions (nq = {model.nq} values, or the {len(model.joint_names)} '
                                      'joint positions)', positions, len(model.joint_names))
            q[model.joint_q_index] = np.clip(joints, model.lower[model.joint_q_index], model.upper[model.joint_q_index])
        if self.contact is not None and self.contact.count and model.joint_type[0] == FREE_FLYER:
            q[model.idx_q[0] + 2] -= self.contact.lowest_height(q)   # spawn with the lowest point on the ground
        return q

    def _check_positive_definite(self, q, where='at the initial state'):
        """ValueError naming the joint unless every pivot D_i of M(q) = U D U^T (Saha eqs. 25-27) is positive."""
        try:
            D = innovations_factors(self.model, q).D if self.model.coupling is None else embedded_pivots(self.model, q)
        except SingularMassMatrixError as e:   # a pivot <= 0
            raise ValueError(f'mass matrix is not positive definite {where}: {e}') from None
        threshold = SINGULAR_PIVOT_RATIO * np.max(np.abs(D[np.isfinite(D)]), initial=0.0)
        for i in reversed(range(self.model.nv)):   # the gather's order: the first failure is the cause
            if not (np.isfinite(D[i]) and D[i] > threshold):
                raise ValueError(
                    f'mass matrix is not positive definite {where}: joint '
                    f'{self.model.joint_names[i]!r} (body {self.model.body_names[i]!r}) moves no inertia '
                    f'(articulated-body inertia D = {D[i]:.3g}); give the bodies it moves mass and inertia')

    def reset(self, positions: ArrayLike | None = None) -> None:
        """Back to rest at ``positions`` (default: the initial positions), t = 0, zero effort command."""
        q = self.initial_positions.copy() if positions is None else self._within_limits(positions)
        if positions is not None:
            self._check_positive_definite(q)
        self.q = q
        self.qd = np.zeros(self.model.nv)
        self.t = 0.0
        self.contact_forces = np.zeros((self.contact.count if self.contact else 0, 3))
        if self.contact is not None:
            self.contact.reset()   # no warm start from before the reset
        self.set_command(np.zeros(self.model.nv), t=0.0)
        self.applied_effort = np.zeros(self.model.nv)
        self.constraint_effort = np.zeros(self.model.nv)
        self._pattern = np.full(self.model.nv, SLIDING)
        self._step_inertia = None   # M + dt B of the current step when the damping is implicit
        self.push_wrench = None   # (link, [torque; force] in world coordinates, sim time it ends)
        self.held_wrench = None   # (link, [torque; force] in world coordinates) of apply_wrench, until replaced

    def push(self, link: str, force: ArrayLike, torque: ArrayLike = (0.0, 0.0, 0.0), duration: float = 0.1) -> None:
        """Apply a force (N) at the origin of ``link`` and a torque (N m), both in world coordinates, for
        ``duration`` sim seconds from now (a push, for tests and demos); it replaces any push still acting.
        ValueError beyond the bound of ``_external_wrench``, and the push acting stays."""
        wrench = self._external_wrench('push', link, force, torque)
        if not (np.isfinite(duration) and duration > 0):
            raise ValueError(f'push duration must be positive and finite, got {duration}')
        self.push_wrench = (link, wrench, self.t + duration)

    def apply_wrench(self, link: str, force: ArrayLike, torque: ArrayLike = (0.0, 0.0, 0.0)) -> None:
        """Apply a force (N) at the origin of ``link`` and a torque (N m), both in world coordinates, from now until
        the next call (an external load, held); a zero wrench removes it. ValueError for an unknown link,
        non-finite values or beyond the bound of ``_external_wrench`` (as a push's), and the wrench acting stays."""
        wrench = self._external_wrench('wrench', link, force, torque)
        self.held_wrench = (link, wrench) if np.any(wrench) else None

    def _external_wrench(self, kind, link, force, torque):
        """[torque; force] of a push or held wrench on ``link``; ValueError for an unknown link, non-finite values,
        or beyond PUSH_ACCELERATION times the robot's mass (and that at PUSH_LEVER for the torque): refused, not
        clipped, since a sender that far off is at fault and a clipped wrench would act in its name."""
        if link not in self.model.frames:
            raise ValueError(f"{kind}: no link {link!r} in {self.model.name!r}")
        wrench = np.concatenate([as_finite_vector(f'{kind} torque', torque, 3),
                                 as_finite_vector(f'{kind} force', force, 3)])
        mass = sum(inertia[5, 5] for inertia in self.model.inertia)
        limit = PUSH_ACCELERATION * mass
        force_norm, torque_norm = np.linalg.norm(wrench[3:]), np.linalg.norm(wrench[:3])
        if force_norm > limit or torque_norm > limit * PUSH_LEVER:
            raise ValueError(f"{kind}: force {force_norm:.4g} N, torque {torque_norm:.4g} N m: at most {limit:.4g} N "
                             f"and {limit * PUSH_LEVER:.4g} N m (10 g on the robot's {mass:.4g} kg, at a "
                             f"{PUSH_LEVER:g} m lever)")
        return wrench

    def _external_effort(self, q):
        """The generalized force of the active push and of the held wrench, J^T [torque; force] (J: the link's
        Jacobian at its origin, world-aligned, [angular; linear]); zero when none acts."""
        effort = 0.0
        if self.held_wrench is not None:
            link, wrench = self.held_wrench
            effort = frame_jacobian(self.model, q, link).T @ wrench
        if self.push_wrench is None or self.t >= self.push_wrench[2] - 0.5 * self.dt:
            self.push_wrench = None
            return effort
        link, wrench, _ = self.push_wrench
        return effort + frame_jacobian(self.model, q, link).T @ wrench

    def set_command(self, tau: ArrayLike, t: float | None = None) -> None:
        """Joint efforts to apply from now on, stamped with sim time t (default: now); clears servo targets.

        Raises ValueError for a wrong length or NaN/Inf and keeps the previous command.
        """
        self.command = as_finite_vector('effort command', tau, self.model.nv)
        self.command_time = self.t if t is None else float(t)
        nan = np.full(self.model.nv, np.nan)
        self.position_target, self.velocity_target, self.effort_target = nan, nan.copy(), nan.copy()
        self.servo_mode = False

    def set_joint_command(self, position: ArrayLike | None = None, velocity: ArrayLike | None = None,
                          effort: ArrayLike | None = None, t: float | None = None) -> None:
        """Per-joint servo targets in model order (ros2_control's position / velocity / effort interfaces).

        Each given field is an array of length nv where NaN means "no new value for this joint": the
        field's previous value for that joint is kept (NaN until one is given). None leaves a field as it is.
        A joint left without any target (no field ever named it) holds its current position, as
        gz_ros2_control holds the joints a command does not name: a command for one joint lets no other go limp.
        As gz_ros2_control's joints: a joint with a position target is driven at the velocity
        velocity_i + POSITION_GAIN (position_i - q_i) / dt (velocity_i 0 where not given; position errors on
        continuous joints wrapped into [-pi, pi)), one with a velocity target alone at that velocity; the drive
        holds that velocity with any effort within the effort limit (a velocity-level constraint solved with the
        stops, friction and velocity limits each step: no steady error while the effort needed is within the
        limit); an effort target is applied as it is, and the drive's effort bound is what the effort target
        leaves of the limit. Targets are held until a new command: they never go stale (``command_timeout``
        concerns ``set_command`` only), and ``set_command`` clears them. Targets beyond the joint's limits are
        held at them: positions clamped into the position limits, velocities and efforts into the URDF velocity
        and effort limits. ValueError for a wrong length, +-Inf, or targets too large to be numbers once scaled
        (e.g. a position of 1e308 with a velocity of -1e308), keeping every previous target: a command is taken
        whole or not at all.
        """
        fields = []
        for name, value, previous in (('position', position, self.position_target),
                                      ('velocity', velocity, self.velocity_target),
                                      ('effort', effort, self.effort_target)):
            if value is None:
                fields.append(previous)
                continue
            value = np.asarray(value, dtype=float).reshape(-1)
            if value.shape != (self.model.nv,):
                raise ValueError(f'{name} command has {value.size} values, expected {self.model.nv}')
            if np.any(np.isinf(value)):
                raise ValueError(f'{name} command contains Inf: {value.tolist()}')
            fields.append(np.where(np.isnan(value), previous, value))
        untargeted = np.isnan(fields[0]) & np.isnan(fields[1]) & np.isnan(fields[2]) & self._actuated
        fields[0] = np.where(untargeted, self._positions_v(self.q), fields[0])
        with np.errstate(over='ignore', invalid='ignore'):
            drive = fields[1] + POSITION_GAIN * (fields[0] - self._positions_v(self.q)) / self.dt
        if np.any(np.isinf(drive)) or np.any(np.isnan(drive) & ~np.isnan(fields[0]) & ~np.isnan(fields[1])):
            raise ValueError(f'the drive velocity for these targets is not finite (position {fields[0].tolist()}, '
                             f'velocity {fields[1].tolist()})')
        self.servo_mode = True
        limit = self.model.velocity_limit
        speed = np.where(np.isfinite(limit) & (limit > 0), limit, np.inf)
        self.position_target = np.clip(fields[0], self._lower_v, self._upper_v)   # NaN stays NaN
        self.velocity_target = np.clip(fields[1], -speed, speed)
        self.effort_target = np.clip(fields[2], -self.model.effort_limit, self.model.effort_limit)
        self.command = np.zeros(self.model.nv)
        self.command_time = self.t if t is None else float(t)

    def command_is_stale(self) -> bool:
        """True when the last ``set_command`` is older than ``command_timeout`` (never for servo targets)."""
        return (not self.servo_mode and self.command_timeout is not None
                and self.t - self.command_time > self.command_timeout)

    def braking(self) -> bool:
        """True while the brakes hold the joints (a stale command with on_command_timeout='brake')."""
        return self.on_command_timeout == 'brake' and self.command_is_stale()

    def _effort(self, q, qd):
        """Motor effort at the state (q, qd) outside the velocity servo: the command, or the servo's effort targets,
        clamped to the effort limits."""
        if self.servo_mode:
            command = np.where(np.isnan(self.effort_target), 0.0, self.effort_target)
        elif self.command_is_stale():
            return np.zeros(self.model.nv)
        else:
            command = self.command
        tau = np.empty(self.model.nv)
        self._stages.applied_effort(command, self.model.effort_limit, self._q_of_v, tau)
        return tau

    def _positions_v(self, q):
        """The 1-DOF joint positions at their velocity coordinates (0 at floating and planar ones)."""
        return q if self.model.fixed_base else np.where(self._actuated, q[np.maximum(self._q_of_v, 0)], 0.0)

    def step(self) -> None:
        """Advance the state by one dt; SimulationDiverged (a ValueError) if it would become non-finite."""
        if self.contact_step is not None:
            self.contact_step.step(self)
            return
        dt = self.dt
        self.applied_effort = np.zeros(self.model.nv) if self.braking() else self._effort(self.q, self.qd)
        if self.integrator == 'semi_implicit_euler':
            qd = self._friction_and_stops(self.q, self._free_velocity())
            q, qd = (self.q + dt * qd, qd) if self.model.fixed_base else self._integrate(self.q, self._finite(qd))
        else:
            q_free, free_velocity = (self._finite(x) for x in self._rk4(self.q, self.qd))
            qd = self._friction_and_stops(self.q, free_velocity)
            q = q_free + 0.5 * dt * (qd - free_velocity)  # the impulse spread evenly over the step
            held = self._pattern != SLIDING   # sticking, braked or on a stop: no creep from the RK4 stages
            q[held] = self.q[held] + dt * qd[held]
        self._finite(q)
        self._finite(qd)
        self.q, self.qd = np.clip(q, self.model.lower, self.model.upper), qd
        self.t += dt

    def _free_velocity(self):
        """qd + dt qdd by ABA (semi-implicit Euler's velocity before constraints). A floating root's linear velocity is
        carried in the base frame at the start of the step: ABA's body-frame rate v' plus omega x v (the classical
        acceleration), so that the base origin moves in the world as a point does; ``_integrate`` expresses it in
        the new base frame. (Euler on v' = a - omega x v in the moving frame would grow |v| by (omega dt)^2 / 2 per
        step: a spinning ball rolling on the ground would speed up.)"""
        if self.damping.any():
            w = self._finite(self.qd + self.dt * self._implicitly_damped_acceleration(self.q, self.qd))
        else:
            w = self._finite(self.qd + self.dt * self._acceleration(self.q, self.qd))
            self._step_inertia = None
        if self._free_root:   # omega x v, written out (np.cross costs ~30 us on 3-vectors)
            (wx, wy, wz), (vx, vy, vz) = self.qd[3:6], self.qd[:3]
            w[:3] += self.dt * np.array([wy * vz - wz * vy, wz * vx - wx * vz, wx * vy - wy * vx])
        return w

    def _implicitly_damped_acceleration(self, q, qd):
        """(w - qd) / dt with the viscous damping taken at the end of the step, as MuJoCo's Euler integrator takes
        it: M (w - qd) = dt (tau - h(q, qd) - B w), so (M + dt B)(w - qd) = dt (tau - h - B qd). Explicit damping
        multiplies a joint's velocity by 1 - dt b / m each step, which flips and grows it once dt b / m > 2 (Unitree
        Z1's wrist: b = 1 N m s/rad on 1.8e-4 kg m^2, dt b / m = 5.5 at 1 kHz); the implicit step only slows it.
        Keeps M + dt B for the velocity-level friction and stops of the same step (``_friction_and_stops``)."""
        tau = self.applied_effort if not self.servo_mode else self._effort(q, qd)
        self._step_inertia = crba(self.model, q) + np.diag(self.dt * self.damping)
        force = tau - self.damping * qd + self._external_effort(q) - bias_torques(self.model, q, qd, self.gravity)
        return np.linalg.solve(self._step_inertia, force)

    def _integrate(self, q, v):
        """(q (+) dt v, v in the new frames) (``integrate``), except for a floating root: its origin moves on the
        straight line dt R v_linear, as MuJoCo's free joint, not on the screw of exp(dt v) (the linearised contact
        velocity J v is then exact for points at the base origin: a rolling ball does not dip by omega |v| dt^2 / 2
        each step), and its linear velocity is re-expressed in the base frame at the end of the step, R'^T R v. The
        integrate stage (integrate_step.py), compiled where numba is."""
        result, v_new = np.empty(self.model.nq), np.empty(self.model.nv)
        self._stages.integrate_joints(self._joint_type, self._idx_q, self._idx_v, np.ascontiguousarray(q, dtype=float),
                                      np.ascontiguousarray(v, dtype=float), self.dt, result, v_new)
        return result, v_new

    def _finite(self, x):
        """x, or SimulationDiverged with the state kept and the arm held still."""
        if not np.isfinite(x).all():
            self.qd = np.zeros(self.model.nv)
            raise SimulationDiverged(f'the state became non-finite at t = {self.t:.6g} s ({x.tolist()}); '
                                     'kept the previous positions, at rest')
        return x

    def _acceleration(self, q, qd):
        """qdd from ABA under the motor effort at (q, qd) and viscous damping."""
        tau = self.applied_effort if not self.servo_mode else self._effort(q, qd)
        return aba(self.model, q, qd, tau - self.damping * qd + self._external_effort(q), self.gravity)

    def _rk4(self, q, qd):
        """One classical Runge-Kutta step of (q, qd)' = (qd, qdd)."""
        dt = self.dt
        k1q, k1v = qd, self._acceleration(q, qd)
        k2q = qd + 0.5 * dt * k1v
        k2v = self._acceleration(q + 0.5 * dt * k1q, k2q)
        k3q = qd + 0.5 * dt * k2v
        k3v = self._acceleration(q + 0.5 * dt * k2q, k3q)
        k4q = qd + dt * k3v
        k4v = self._acceleration(q + dt * k3q, k4q)
        return (q + dt / 6.0 * (k1q + 2.0 * k2q + 2.0 * k3q + k4q),
                qd + dt / 6.0 * (k1v + 2.0 * k2v + 2.0 * k3v + k4v))

    def _friction_and_stops(self, q, free_velocity):
        """Velocity after Coulomb friction, the position limits, the brakes and the servo's drives act for one step
        (no ground contact).

        Bounds (lower - q)/dt <= v <= (upper - q)/dt keep q + dt v within the limits (v >= 0 / v <= 0 on a
        stop), and |v| <= the URDF velocity limit (the drives saturate there, as Gazebo's joints do; unless
        ``limit_velocity=False``); braked joints are bounded to v = 0. A driven joint (``joint_bounds.drive_rows``) is
        held at its drive velocity c (within those bounds) by an impulse of at most dt times what its effort
        target leaves of the effort limit: the same problem as friction, about c instead of 0, so it is solved in
        the shifted velocity v - c (its Coulomb friction is taken within that bound: the drive overcomes it).
        ``joint_friction.solve_velocity_step`` does the rest, starting from the previous step's pattern, on M + dt B where
        the damping is implicit. Sets ``constraint_effort`` = M (v - w) / dt (M + dt B there), the generalized force friction, stops, brakes and drives applied over
        the step, and adds the drives' part to ``applied_effort``.
        """
        dt = self.dt
        v_lo, v_hi, impulse_bound, driven, center = self._joint_rows(q)
        if (not np.any(impulse_bound > 0) and not driven.any() and np.all(free_velocity > v_lo)
                and np.all(free_velocity < v_hi)):
            self.constraint_effort = np.zeros(self.model.nv)
            self._pattern = np.full(self.model.nv, SLIDING)
            return free_velocity
        M = crba(self.model, q) if self._step_inertia is None else self._step_inertia
        shifted, self._pattern = solve_velocity_step(M, free_velocity - center, impulse_bound, v_lo - center,
                                                     v_hi - center, self._pattern)
        v = shifted + center
        self.constraint_effort = M @ (v - free_velocity) / dt
        limit = self.model.effort_limit   # (the drive's impulse is bounded; the clip removes rounding)
        self.applied_effort = np.clip(self.applied_effort + np.where(driven, self.constraint_effort, 0.0), -limit, limit)
        return v

    def _joint_rows(self, q):
        """(v_lo, v_hi, impulse_bound, driven, center) of the joints for this step; see ``_friction_and_stops``."""
        dt, nv = self.dt, self.model.nv
        v_lo, v_hi, impulse_bound, center, driven = np.empty(nv), np.empty(nv), np.empty(nv), np.empty(nv), np.zeros(nv)
        q = np.ascontiguousarray(q, dtype=float)
        self._stages.joint_bounds(self._lower_v, self._upper_v, self.velocity_limit, self.friction, q, self._q_of_v,
                                  dt, self.braking(), v_lo, v_hi, impulse_bound, center)
        if self.servo_mode:
            self._stages.drive_rows(self.position_target, self.velocity_target, self._continuous,
                                    self.model.effort_limit, self.applied_effort, q, self._q_of_v, dt, v_lo, v_hi,
                                    impulse_bound, center, driven)
        return v_lo, v_hi, impulse_bound, driven != 0.0, center

    def total_energy(self) -> float:
        """Kinetic plus potential energy of the current state (J)."""
        return kinetic_energy(self.model, self.q, self.qd) + potential_energy(self.model, self.q, self.gravity)
