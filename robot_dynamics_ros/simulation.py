"""A simulated robot: articulated-body forward dynamics, integrated in fixed steps (no ROS import)."""
import numpy as np

from .fast import aba, crba
from .algorithms.energy import kinetic_energy, potential_energy
from .control import as_finite_vector

INTEGRATORS = ('semi_implicit_euler', 'rk4')
FRICTION_MAX_SWEEPS = 200


class Simulator:
    """Stand-in robot: takes joint efforts, advances (t, q, qd) by fixed steps of ``dt`` seconds.

    Each step applies the last command (zero when it is older than ``command_timeout`` seconds of
    simulated time), clamped to the URDF effort limits, minus URDF viscous damping; forward dynamics by
    ABA, integrated by semi-implicit (symplectic) Euler or classical RK4. Coulomb friction is then taken
    implicitly at the velocity level, so a joint whose net effort is below its friction sticks at exactly
    zero velocity instead of chattering. Position limits are hard stops: a joint that would pass one is
    put on it and its velocity into the limit is zeroed (a perfectly inelastic stop).
    ``paused`` is a flag for the node that drives the simulator; ``step()`` itself ignores it.
    """

    def __init__(self, model, dt, integrator='semi_implicit_euler', gravity=None, initial_positions=None,
                 apply_damping=True, apply_friction=True, command_timeout=None):
        if not (np.isfinite(dt) and dt > 0):
            raise ValueError(f'time step dt must be positive and finite, got {dt}')
        if integrator not in INTEGRATORS:
            raise ValueError(f'unknown integrator {integrator!r}; expected one of {INTEGRATORS}')
        if command_timeout is not None and not command_timeout > 0:
            raise ValueError(f'command_timeout must be positive or None, got {command_timeout}')
        self.model = model
        self.dt = float(dt)
        self.integrator = integrator
        self.gravity = gravity
        self.damping = model.damping if apply_damping else np.zeros(model.nv)
        self.friction = model.friction if apply_friction else np.zeros(model.nv)
        self.command_timeout = command_timeout
        self.initial_positions = self._within_limits(initial_positions)
        self.paused = False
        self.reset()

    def _within_limits(self, positions):
        """Positions as a checked array clipped into the joint limits (the neutral configuration for None)."""
        if positions is None:
            return self.model.neutral()
        q = as_finite_vector('initial positions', positions, self.model.nv)
        return np.clip(q, self.model.lower, self.model.upper)

    def reset(self, positions=None):
        """Back to rest at ``positions`` (default: the initial positions), t = 0, zero command."""
        self.q = self.initial_positions.copy() if positions is None else self._within_limits(positions)
        self.qd = np.zeros(self.model.nv)
        self.t = 0.0
        self.command = np.zeros(self.model.nv)
        self.command_time = 0.0
        self.applied_effort = np.zeros(self.model.nv)
        self._stuck = np.zeros(self.model.nv, dtype=bool)

    def set_command(self, tau, t=None):
        """Joint efforts to apply from now on, stamped with sim time t (default: now).

        Raises ValueError for a wrong length or NaN/Inf and keeps the previous command.
        """
        self.command = as_finite_vector('effort command', tau, self.model.nv)
        self.command_time = self.t if t is None else float(t)

    def command_is_stale(self):
        return self.command_timeout is not None and self.t - self.command_time > self.command_timeout

    def step(self):
        """Advance the state by one dt."""
        tau = np.zeros(self.model.nv) if self.command_is_stale() else self.command
        self.applied_effort = np.clip(tau, -self.model.effort_limit, self.model.effort_limit)
        dt = self.dt
        if self.integrator == 'semi_implicit_euler':
            qd = self._stick_or_slip(self.q, self.qd + dt * self._acceleration(self.q, self.qd))
            q = self.q + dt * qd
        else:
            q_free, qd_free = self._rk4(self.q, self.qd)
            qd = self._stick_or_slip(self.q, qd_free)
            q = q_free + 0.5 * dt * (qd - qd_free)  # friction impulse spread evenly over the step
        self.q, self.qd = self._hard_stops(q, qd)
        self.t += dt

    def _acceleration(self, q, qd):
        """qdd from ABA under the applied effort and viscous damping."""
        return aba(self.model, q, qd, self.applied_effort - self.damping * qd, self.gravity)

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

    def _stick_or_slip(self, q, w):
        """Velocity v after Coulomb friction acts for one step on velocity w (maximum dissipation).

        v = argmin 1/2 (v - w)^T M (v - w) + dt sum_i F_i |v_i|: sliding joints lose dt F_i sign(v_i)
        of generalized momentum, sticking joints stop at v_i = 0 because friction up to F_i holds them.
        Coordinate descent (each v_i a soft-thresholded 1-D minimiser) finds which joints stick and
        which way the others slide; that pattern is then solved exactly. The first guess is the
        previous step's sticking joints with every other joint sliding the way it goes.
        """
        bound = self.dt * self.friction
        if not np.any(bound > 0):
            return w
        M = crba(self.model, q)
        v = np.where(self._stuck, 0.0, w)
        for _ in range(FRICTION_MAX_SWEEPS):
            exact = self._friction_pattern_solution(M, w, bound, v)
            if exact is not None:
                v = exact
                break
            for i in range(self.model.nv):
                unconstrained = v[i] - M[i] @ (v - w) / M[i, i]
                v[i] = np.sign(unconstrained) * max(abs(unconstrained) - bound[i] / M[i, i], 0.0)
        self._stuck = (v == 0.0) & (bound > 0)
        return v

    @staticmethod
    def _friction_pattern_solution(M, w, bound, v):
        """The exact minimiser if the joints with v_i = 0 stick and the others slide with sign(v_i), else None.

        Sliding rows of M (v - w) + F dt sign(v) = 0 with v = 0 on the sticking joints give v on the
        sliding ones; the pattern is right when their signs hold and the sticking joints need no more
        than their friction bound.
        """
        stuck = (v == 0.0) & (bound > 0)
        slide = ~stuck
        sign = np.sign(v)
        exact = np.zeros_like(w)
        exact[slide] = w[slide] + np.linalg.solve(M[np.ix_(slide, slide)],
                                                  M[np.ix_(slide, stuck)] @ w[stuck] - bound[slide] * sign[slide])
        holding = M @ (w - exact)
        signs_hold = np.all(np.sign(exact) == sign, where=slide & (bound > 0))
        return exact if signs_hold and np.all(np.abs(holding[stuck]) <= bound[stuck] * (1.0 + 1e-9)) else None

    def _hard_stops(self, q, qd):
        """Clip q into the position limits; zero the velocity of a joint at a limit moving into it."""
        above, below = q > self.model.upper, q < self.model.lower
        qd = qd.copy()
        qd[above] = np.minimum(qd[above], 0.0)
        qd[below] = np.maximum(qd[below], 0.0)
        return np.clip(q, self.model.lower, self.model.upper), qd

    def total_energy(self):
        """Kinetic plus potential energy of the current state (J)."""
        return kinetic_energy(self.model, self.q, self.qd) + potential_energy(self.model, self.q, self.gravity)
