"""A floating-base robot standing on the ground: forward dynamics with hard contact, in fixed steps (no ROS import).

Each step (semi-implicit Euler on the configuration manifold):

    w = v + dt ABA(q, v, S^T (tau - damping qd_joints))       the velocity without contact
    v+ = w + M^-1 J_c^T lambda                                 lambda: ``ground_contact.contact_impulses``
    q+ = integrate(q, dt v+)

M^-1 J_c^T is one ABA per contact row (zero velocity, zero gravity, the row as the generalized force; one batched
call): O(n) per contact, without forming M^-1 (Jain's contact-space inverse inertia, seed 002); W = J_c M^-1 J_c^T.
"""
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from .algorithms.energy import kinetic_energy, potential_energy
from .algorithms.kinematics import body_transforms
from .fast import aba, aba_batch
from .ground_contact import ContactPoint, contact_impulses, lowest_points
from .legged_control import point_jacobians
from .model.configuration import integrate
from .model.model import Model

CONTACT_MARGIN = 0.05   # m: points nearer the ground than this enter the step's contact problem


class FloatingBaseSimulator:
    """A robot with a floating root on a horizontal ground (height ``ground_height``, friction coefficient
    ``ground_friction``), touching it at ``contact_points`` (``ground_contact.contact_points_from_urdf``).
    ``set_command(tau)`` takes efforts for ``model.joint_names`` (clamped to the effort limits). The robot spawns at
    ``base_pose`` ([x, y, z, qx, qy, qz, qw]), or upright above the origin with its lowest contact point on the
    ground. Joint limits and joint Coulomb friction are not simulated here (the arm's Simulator has them)."""

    def __init__(self, model: Model, dt: float, contact_points: Sequence[ContactPoint], gravity: ArrayLike | None = None,
                 ground_height: float = 0.0, ground_friction: float = 0.8, initial_positions: ArrayLike | None = None,
                 base_pose: ArrayLike | None = None, apply_damping: bool = True) -> None:
        if model.nq == model.nv or model.idx_v[0] != 0 or model.nq - model.nv != 1:
            raise ValueError(f"robot {model.name!r} has no floating root: load it with root_joint='floating'")
        if not (np.isfinite(dt) and dt > 0):
            raise ValueError(f'time step dt must be positive and finite, got {dt}')
        if not ground_friction >= 0:
            raise ValueError(f'ground friction must be non-negative, got {ground_friction}')
        if not contact_points:
            raise ValueError(f"robot {model.name!r} has no contact points: give <collision> spheres or boxes in its "
                             "URDF, or contact_points")
        self.model, self.dt, self.gravity = model, float(dt), gravity
        self.points = list(contact_points)
        self.ground_height, self.ground_friction = float(ground_height), float(ground_friction)
        self.joints = np.asarray(model.joint_v_index)
        self.damping = model.damping[self.joints] if apply_damping else np.zeros(len(self.joints))
        self.initial_positions = (np.zeros(len(self.joints)) if initial_positions is None
                                  else np.asarray(initial_positions, dtype=float))
        self.base_pose = None if base_pose is None else np.asarray(base_pose, dtype=float)
        self.reset()

    def reset(self) -> None:
        """Back to the spawn pose at rest, t = 0, zero effort command."""
        q = self.model.neutral()
        q[np.asarray(self.model.joint_q_index)] = self.initial_positions
        if self.base_pose is not None:
            q[:7] = self.base_pose
        else:
            q[2] = self.ground_height - min(self.point_heights(q))
        self.q, self.v, self.t = q, np.zeros(self.model.nv), 0.0
        self.command = np.zeros(len(self.joints))
        self.contact_forces = np.zeros((0, 3))
        self._guess = {}

    def set_command(self, tau: ArrayLike) -> None:
        tau = np.asarray(tau, dtype=float).reshape(-1)
        if tau.shape != self.command.shape or not np.all(np.isfinite(tau)):
            raise ValueError(f'effort command must be {len(self.joints)} finite numbers, got {tau.tolist()}')
        limit = self.model.effort_limit[self.joints]
        self.command = np.clip(tau, -limit, limit)

    def point_heights(self, q):
        return [height for _, _, height in lowest_points(self.model, q, self.points)]

    def step(self) -> None:
        """Advance by one dt (module docstring)."""
        model, dt = self.model, self.dt
        tau = np.zeros(model.nv)
        tau[self.joints] = self.command - self.damping * self.v[self.joints]
        w = self.v + dt * aba(model, self.q, self.v, tau, self.gravity)
        X0 = body_transforms(model, self.q)
        near = [(i, link, offset, height - self.ground_height)
                for i, (link, offset, height) in enumerate(lowest_points(model, self.q, self.points, X0))
                if height - self.ground_height < CONTACT_MARGIN]
        v, forces = w, np.zeros((0, 3))
        if near:
            J = point_jacobians(model, self.q, [(link, offset) for _, link, offset, _ in near], X0)
            rows = len(J)
            MinvJT = aba_batch(model, np.tile(self.q, (rows, 1)), np.zeros((rows, model.nv)), J, np.zeros(3)).T
            guess = np.array([self._guess.get(i, np.zeros(3)) for i, _, _, _ in near])
            impulses = contact_impulses(J @ MinvJT, J @ w, np.array([gap for *_, gap in near]), dt,
                                        self.ground_friction, guess)
            v = w + MinvJT @ impulses.reshape(-1)
            self._guess = {i: impulse for (i, *_), impulse in zip(near, impulses)}
            forces = impulses / dt
        q = integrate(model, self.q, dt * v)
        if not (np.all(np.isfinite(q)) and np.all(np.isfinite(v))):
            raise ValueError(f'the state became non-finite at t = {self.t:.6g} s')
        self.q, self.v, self.t = q, v, self.t + dt
        self.contact_forces = forces

    def total_energy(self) -> float:
        """Kinetic plus potential energy (J)."""
        return kinetic_energy(self.model, self.q, self.v) + potential_energy(self.model, self.q, self.gravity)
