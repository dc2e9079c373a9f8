"""The Cartesian controller's update for a joint state in one compiled call (numba), as the computed-torque
``ControlStep``: what ``JointStateMapper.map``, ``CartesianTarget.sample`` and ``CartesianController.update``
(control/cartesian.py, the NumPy path) compute, on the controller's and the target's own arrays (no ROS import). In
the node the three calls, with Python between them, took 25, 19 and 51 us on UR5 (medians, timed apart in bringup):
three to a hundred times their cost in a hot loop."""
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..algorithms.backends import compiled, njit
from ..fast.control_kernel import JOINT_ROWS, LOWER, MAX_SPEED, UPPER, kernel_vector, map_joint_state
from .cartesian import CartesianController, CartesianTarget, cartesian_law, sample_target
from .joint_states import JointStateMapper

NO_WRENCH = np.zeros(6)
NO_WRENCH.flags.writeable = False


@njit(cache=True)
def cartesian_step(positions, velocities, n_names, source, allow_missing_velocity, J, t, stamps, poses, ring,
                   R_ref, p_ref, velocity_ref, wrench, P, Wk, a0, f_ext, G, Gq, q_offset, T, M_tree, parent,
                   joint_type, idx_q, axis, E_T, r, column_body, S_ang, S_lin, moves, body, R_tip, p_tip, base_R,
                   base_p, law, gains, posture, effort_limit, speed_limit, damping, friction, row_scale, q, qd, refs,
                   R, p, Jac, Jdot_qd, R_bodies, p_bodies, C_ang, C_lin, V, A, J_tree, work, error, tau):
    """``CartesianStep``: map the joint state (``map_joint_state``, bounds in J's rows), sample the target
    (``sample_target``) and run ``cartesian_law`` with the feed-forward wrench; returns -1 where the NumPy path raises
    ValueError (a joint state it rejects, a wrench that is not finite), else whether Lambda was damped (0 or 1)."""
    if not map_joint_state(positions, velocities, n_names, source, allow_missing_velocity, J, q, qd):
        return -1
    for k in range(6):
        if not np.isfinite(wrench[k]):
            return -1
    sample_target(t, stamps, poses, ring, R_ref, p_ref, velocity_ref)
    refs[0, :3], refs[1, :3], refs[2:5, :3] = p_ref, 0.0, R_ref   # the rows ``CartesianController.update`` fills
    refs[0, 3:], refs[1, 3:] = velocity_ref[:3], velocity_ref[3:]
    refs[5], refs[6] = 0.0, wrench
    return int(cartesian_law(P, Wk, a0, f_ext, G, Gq, q_offset, T, M_tree, parent, joint_type, idx_q, axis, E_T, r,
                             column_body, S_ang, S_lin, moves, body, R_tip, p_tip, base_R, base_p, law, gains,
                             posture, effort_limit, speed_limit, damping, friction, row_scale, q, qd, refs, R, p, Jac,
                             Jdot_qd, R_bodies, p_bodies, C_ang, C_lin, V, A, J_tree, work, error, tau))


class CartesianStep:
    """A Cartesian controller update in one compiled call (numba; as the computed-torque ``ControlStep``): the q, qd
    of ``mapper.map``, the reference of ``target.sample(t)`` and ``controller.update`` on them with the wrench, on the
    controller's and the target's own arrays. Calling it returns tau (the controller's array, overwritten by the next
    call; ``controller.singular`` set) or None where the NumPy path raises ValueError, whose message the caller then
    gets by running it. Build a new one when the mapper or controller changes."""

    def __init__(self, mapper: JointStateMapper, controller: CartesianController) -> None:
        n = controller.model.nv
        self.mapper, self.controller = mapper, controller
        self._bounds = np.zeros((JOINT_ROWS, n))
        lower, upper, speed = mapper.bounds or (np.full(n, -np.inf), np.full(n, np.inf), np.full(n, np.inf))
        self._bounds[LOWER], self._bounds[UPPER], self._bounds[MAX_SPEED] = lower, upper, speed
        self._allow_missing_velocity = bool(mapper.allow_missing_velocity)
        self.q, self.qd = np.zeros(n), np.zeros(n)
        self._law = (*controller.law_constants, self.q, self.qd, *controller.law_outputs)
        self._kernel = compiled(cartesian_step)   # imports numba: only with the 'fast' extra

    def __call__(self, names: Sequence[str], positions: ArrayLike, velocities: ArrayLike | None,
                 target: CartesianTarget, t: float, wrench: NDArray | None = None) -> NDArray | None:
        try:
            source = self.mapper.source(names)
        except ValueError:
            return None
        status = self._kernel(kernel_vector(positions), kernel_vector(velocities if velocities is not None else []),
                              len(names), source, self._allow_missing_velocity, self._bounds, float(t), target.stamps,
                              target.poses, target.ring, target.R_ref, target.p_ref, target.velocity_ref,
                              NO_WRENCH if wrench is None else wrench, *self._law)
        if status < 0:
            return None
        self.controller.singular = bool(status)
        return self.controller.tau
