"""Kinetic and potential energy of the tree, O(n)."""
import numpy as np
from numpy.typing import ArrayLike

from ..model.configuration import check_quaternions
from ..model.model import NV, Model, check_state
from .kinematics import body_transforms, placement_from_transform
from .rnea import STANDARD_GRAVITY


def kinetic_energy(model: Model, q: ArrayLike, qd: ArrayLike) -> float:
    """T = 1/2 sum_i v_i^T I_i v_i = 1/2 qd^T M(q) qd."""
    check_state(model, q=q, qd=qd)
    check_quaternions(model, q)
    if model.coupling is not None:   # mimic joints: the tree moving with the coupled velocities
        c = model.coupling
        return kinetic_energy(model.tree, c.tree_positions(q), c.tree_velocities(qd))
    S, qd = model.motion_subspace, np.asarray(qd, dtype=float)
    Xup = model.parent_transforms(q)
    v = np.zeros((model.nb, 6))
    energy = 0.0
    # Scatter, base to tips: body velocities v_i = i_X_p v_p + S_i qd_i.
    for i in range(model.nb):
        p = model.parent[i]
        columns = slice(model.idx_v[i], model.idx_v[i] + NV[model.joint_type[i]])
        v[i] = (Xup[i] @ v[p] if p >= 0 else 0.0) + qd[columns] @ S[columns]
        energy += 0.5 * v[i] @ model.inertia[i] @ v[i]
    return energy


def potential_energy(model: Model, q: ArrayLike, gravity: ArrayLike | None = None) -> float:
    """V = -sum_i m_i g . c_i, c_i the centre of mass of body i in the root frame (zero at the root origin).

    The fixed root body (and links welded to it) is left out, as in Pinocchio: its energy does not change.
    gravity: 3-vector in the root frame (default 9.81 m/s^2 along -z).
    """
    g = STANDARD_GRAVITY if gravity is None else np.asarray(gravity, dtype=float)
    energy = 0.0
    for I, X0 in zip(model.inertia, body_transforms(model, q)):
        R, p = placement_from_transform(X0)
        mass = I[5, 5]
        mass_times_com = np.array([I[2, 4], I[0, 5], I[1, 3]])  # I[:3, 3:] = m skew(c), c in the body frame
        energy -= g @ (mass * p + R @ mass_times_com)
    return energy
