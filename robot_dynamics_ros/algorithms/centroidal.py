"""Centre of mass, its Jacobian and the centroidal momentum matrix (Orin, Goswami & Lee 2013), what legged-robot
controllers use. All in root (world) coordinates; spatial vectors in Featherstone's order: momentum
[angular; linear], so A_G = [angular rows; linear rows] (Pinocchio's ``computeCentroidalMap`` has the linear rows
first)."""
import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..model.model import NV, Model, check_state
from ..spatial import inverse, skew
from .kinematics import body_transforms


def _world_inertias(model, X0):
    """(nb, 6, 6) each body's spatial inertia in root coordinates: X0^T I X0 (X0 = i_X_0)."""
    return np.array([X.T @ I @ X for X, I in zip(X0, model.inertia)]).reshape(model.nb, 6, 6)


def _mass_and_com(I):
    """(mass, centre of mass) of a spatial inertia about the origin of its frame."""
    mass = I[5, 5]
    h = np.array([I[2, 4], I[0, 5], I[1, 3]])   # I[:3, 3:] = skew(m c)
    return mass, h / mass if mass > 0.0 else np.zeros(3)


def center_of_mass(model: Model, q: ArrayLike) -> NDArray[np.float64]:
    """The centre of mass of the moving bodies (the fixed root body left out, as in Pinocchio), in root coordinates."""
    mass, com = _mass_and_com(np.sum(_world_inertias(model, body_transforms(model, q)), axis=0))
    if mass <= 0.0:
        raise ValueError(f"the model {model.name!r} has no moving mass: it has no centre of mass")
    return com


def _world_motion_columns(model, X0):
    """(nv, 6) each velocity coordinate's motion subspace column in root coordinates, 0_X_j S_k."""
    S = model.motion_subspace
    columns = np.empty((model.nv, 6))
    for j in range(model.nb):
        block = slice(model.idx_v[j], model.idx_v[j] + NV[model.joint_type[j]])
        columns[block] = S[block] @ inverse(X0[j]).T
    return columns


def centroidal_momentum_matrix(model: Model, q: ArrayLike) -> NDArray[np.float64]:
    """A_G (6, nv): the spatial momentum [angular about the centre of mass; linear] of the robot, in root-aligned
    coordinates, is A_G qd. Column k of joint j is Ic_j (0_X_j S_k) with Ic_j the composite inertia of j's subtree in
    root coordinates (gathered tips to base, as in CRBA), then moved from the root origin to the centre of mass."""
    check_state(model, q=q)
    if model.coupling is not None:   # mimic joints: A_G of the tree times the joint map G
        return centroidal_momentum_matrix(model.tree, model.coupling.tree_positions(q)) @ model.coupling.G
    X0 = body_transforms(model, q)
    Ic = _world_inertias(model, X0)
    for i in reversed(range(model.nb)):   # gather, tips to base: composite inertias
        if model.parent[i] >= 0:
            Ic[model.parent[i]] += Ic[i]
    columns = _world_motion_columns(model, X0)
    A0 = np.empty((6, model.nv))
    for j in range(model.nb):
        block = slice(model.idx_v[j], model.idx_v[j] + NV[model.joint_type[j]])
        A0[:, block] = Ic[j] @ columns[block].T
    mass, com = _mass_and_com(np.sum(Ic[model.parent < 0], axis=0))
    if mass <= 0.0:
        raise ValueError(f"the model {model.name!r} has no moving mass: it has no centroidal momentum")
    A0[:3] -= skew(com) @ A0[3:]   # moment about the centre of mass: n_c = n_0 - c x f
    return A0


def centroidal_momentum(model: Model, q: ArrayLike, qd: ArrayLike) -> NDArray[np.float64]:
    """h_G = A_G qd: [angular momentum about the centre of mass; linear momentum], root-aligned coordinates."""
    check_state(model, qd=qd)
    return centroidal_momentum_matrix(model, q) @ np.asarray(qd, dtype=float)


def center_of_mass_jacobian(model: Model, q: ArrayLike) -> NDArray[np.float64]:
    """J_com (3, nv): the velocity of the centre of mass is J_com qd (the linear rows of A_G over the mass)."""
    mass = sum(I[5, 5] for I in model.inertia)
    return centroidal_momentum_matrix(model, q)[3:] / mass
