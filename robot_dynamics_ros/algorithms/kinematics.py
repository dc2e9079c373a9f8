"""Forward kinematics of every link frame, and frame Jacobians (Jain Lemma 2: base-to-tips scatter)."""
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import spatial
from ..model.configuration import check_quaternions
from ..model.model import NV, Model
from ..spatial import inverse

REFERENCES = ('local', 'world', 'local_world_aligned')


class Placement(NamedTuple):
    """Pose of a frame in the root frame: rotation R (frame -> root coordinates) and origin p."""
    R: np.ndarray
    p: np.ndarray


def body_transforms(model, q):
    """(nb, 6, 6) motion transforms i_X_0 from the root frame to each body frame."""
    check_quaternions(model, q)
    Xup = model.parent_transforms(q)
    X0 = np.empty_like(Xup)
    # Scatter, base to tips: i_X_0 = i_X_p p_X_0.
    for i in range(model.nb):
        p = model.parent[i]
        X0[i] = Xup[i] @ X0[p] if p >= 0 else Xup[i]
    return X0


def frame_placements(model: Model, q: ArrayLike) -> dict[str, Placement]:
    """Placement of every URDF link frame, fixed-joint links included: dict link name -> Placement."""
    X0 = body_transforms(model, q)
    return {name: placement_from_transform(frame_X_root(model, X0, name)) for name in model.frames}


def frame_placement(model: Model, q: ArrayLike, link_name: str) -> Placement:
    """Placement (R, p) of one link frame in the root frame."""
    return placement_from_transform(frame_X_root(model, body_transforms(model, q), link_name))


def frame_jacobian(model: Model, q: ArrayLike, link_name: str,
                   reference: str = 'local_world_aligned') -> NDArray[np.float64]:
    """6 x nv Jacobian [angular; linear] of the link frame, J qd = velocity of the frame.

    reference: 'local' - the frame's spatial velocity at its origin, in its own coordinates;
    'world' - the spatial velocity at the root origin, in root coordinates;
    'local_world_aligned' - angular velocity and the velocity of the frame origin, in root coordinates.
    These are Pinocchio's LOCAL, WORLD and LOCAL_WORLD_ALIGNED, with the rows in our [angular; linear] order.
    """
    if reference not in REFERENCES:
        raise ValueError(f"reference must be one of {REFERENCES}, got {reference!r}")
    return jacobian_from_transforms(model, body_transforms(model, q), link_name, reference)


def jacobian_from_transforms(model, X0, link_name, reference):
    """``frame_jacobian`` from the bodies' transforms X0 (``body_transforms``): several frames at one q share them."""
    if model.coupling is not None:   # mimic joints: the tree's Jacobian times the joint map, J_tree G
        return jacobian_from_transforms(model.tree, X0, link_name, reference) @ model.coupling.G
    F_X_0 = frame_X_root(model, X0, link_name)
    S = model.motion_subspace
    J = np.zeros((6, model.nv))
    # Columns of the joints between the frame's body and the root: 0_X_j S_j (every column of joint j is in body j's
    # frame).
    j = link_frame(model, link_name).body
    while j >= 0:
        columns = slice(model.idx_v[j], model.idx_v[j] + NV[model.joint_type[j]])
        J[:, columns] = inverse(X0[j]) @ S[columns].T
        j = model.parent[j]
    if reference == 'world':
        return J
    J = F_X_0 @ J
    if reference == 'local':
        return J
    R = F_X_0[:3, :3].T  # frame orientation in the root frame
    return np.vstack([R @ J[:3], R @ J[3:]])


def link_frame(model, link_name):
    """model.frames[link_name], or a KeyError that lists the link names."""
    try:
        return model.frames[link_name]
    except KeyError:
        raise KeyError(f"no link named {link_name!r}; the model has {sorted(model.frames)}") from None


def frame_X_root(model, X0, link_name):
    frame = link_frame(model, link_name)
    return frame.X_body @ X0[frame.body] if frame.body >= 0 else frame.X_body


def placement_from_transform(F_X_0):
    """Pose (R, p) of frame F in the root frame, from the motion transform F_X_0."""
    return Placement(*spatial.pose_from_plucker(F_X_0))
