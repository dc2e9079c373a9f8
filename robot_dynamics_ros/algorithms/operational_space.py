"""Operational-space inertia of several link frames through Jain's compliance Omega (Part II, Sec. 6.2).

Omega = psi^* H^* D^{-1} H psi (eq. 60) is the extended operational-space compliance: Omega(a, b) maps a
spatial force on body b to the spatial acceleration it causes at body a (robot at rest, no gravity), i.e.
J_a M^{-1} J_b^T with body Jacobians in body coordinates. Its diagonal blocks follow the backward
Lyapunov scatter of Lemma 5 (eq. 24),

    Omega(k, k) = psi(p, k)^* Omega(p, p) psi(p, k) + S_k D_k^{-1} S_k^T,   Omega(root) = 0,

with the articulated force transform psi(p, k) = B^T (I - psi_k S_k^T) from Saha's psi_k = I^A_k S_k / D_k,
and the other blocks follow eq. 25: Omega(a, b) = psi(c, a)^* Omega(c, c) psi(c, b) with c the nearest
common ancestor of a and b (zero when there is none). Lambda = (T Omega T^T)^{-1}, T taking body motion to
the chosen frame coordinates. With coupled mimic joints the reduced M is no tree's: Lambda = (J M^-1 J^T)^-1 is
then formed from the frame Jacobians (J_tree G) and the dense M^-1 (``dense_udut.py``, O(n^3)).
"""
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import RobotDynamicsError
from ..model.model import Model
from ..spatial import inverse
from .packing import packed
from .kinematics import REFERENCES, body_transforms, jacobian_from_transforms, link_frame, placement_from_transform
from .udut import coupled_inverse, innovations_factors


class SingularTaskError(RobotDynamicsError, np.linalg.LinAlgError):
    """The selected task rows are not independent: the operational-space inertia does not exist."""


def operational_space_inertia(model: Model, q: ArrayLike, link_names: Sequence[str],
                              reference: str = 'local_world_aligned',
                              rows: Sequence[int] | None = None) -> NDArray[np.float64]:
    """Lambda = (J M^{-1} J^T)^{-1} for the stacked 6-row Jacobians J of the given link frames.

    Rows are [angular; linear] per frame, in the coordinates of ``frame_jacobian``'s ``reference``.
    rows: optional indices into the 6 * len(link_names) stacked rows (e.g. [3, 4, 5] for the position of
    one frame); needed when the full task has more rows than the robot can move independently.
    Raises SingularTaskError when the selected rows are dependent (e.g. 6 rows on a robot with 4 DOF).
    """
    if reference not in REFERENCES:
        raise ValueError(f"reference must be one of {REFERENCES}, got {reference!r}")
    frames = [link_frame(model, name) for name in link_names]
    if model.coupling is not None:
        X0 = body_transforms(model, q)
        J = np.vstack([jacobian_from_transforms(model, X0, name, reference) for name in link_names])
        return _inverse_of_independent(J @ coupled_inverse(model, q) @ J.T, rows, link_names)
    body_rows = [packed(model).body_row[frame.body] if frame.body >= 0 else -1 for frame in frames]
    f = innovations_factors(model, q)
    psi_projected = _articulated_force_transforms(model, f)
    Omega_diag = _compliance_diagonal(model, f, psi_projected)
    X0 = body_transforms(model, q)
    T = [_body_to_task(frame, X0, reference) for frame in frames]
    m = len(frames)
    compliance = np.zeros((6 * m, 6 * m))
    for a in range(m):
        for b in range(a, m):
            block = T[a] @ _compliance(f, psi_projected, Omega_diag, body_rows[a], body_rows[b]) @ T[b].T
            compliance[6 * a:6 * a + 6, 6 * b:6 * b + 6] = block
            compliance[6 * b:6 * b + 6, 6 * a:6 * a + 6] = block.T
    return _inverse_of_independent(compliance, rows, link_names)


def _inverse_of_independent(compliance, rows, link_names):
    """Lambda: the inverse of the compliance's selected rows and columns, which must be independent."""
    if rows is not None:
        compliance = compliance[np.ix_(rows, rows)]
    _require_independent_rows(compliance, link_names)
    return np.linalg.inv(compliance)


def _articulated_force_transforms(model, f):
    """(n, 6, 6) psi(p, k) = Xup_k^T (I - psi_k S_k^T): force on articulated body k as felt by its parent."""
    return np.array([f.Xup[k].T @ (np.eye(6) - np.outer(f.psi[k], f.S[k])) for k in range(model.nv)])


def _compliance_diagonal(model, f, psi_projected):
    """(n, 6, 6) Omega(k, k), scatter base to tips (Jain Lemma 5, eq. 24), per row of the packed model."""
    Omega = np.zeros((model.nv, 6, 6))
    for k in range(model.nv):
        p = f.parent[k]
        Omega[k] = np.outer(f.S[k], f.S[k]) / f.D[k]
        if p >= 0:
            Omega[k] += psi_projected[k].T @ Omega[p] @ psi_projected[k]
    return Omega


def _compliance(f, psi_projected, Omega_diag, a, b):
    """Omega(a, b) = psi(c, a)^* Omega(c, c) psi(c, b), c the nearest common ancestor row (Jain eq. 25)."""
    ancestors_of_a = _path_to_root(f, a)
    c = next((k for k in _path_to_root(f, b) if k in ancestors_of_a), -1)
    if c < 0:
        return np.zeros((6, 6))  # a frame on the fixed root, or bodies on independent trees
    return _psi(f, psi_projected, c, a).T @ Omega_diag[c] @ _psi(f, psi_projected, c, b)


def _path_to_root(f, k):
    path = []
    while k >= 0:
        path.append(k)
        k = f.parent[k]
    return path


def _psi(f, psi_projected, ancestor, k):
    """psi(ancestor, k): the product of psi(p, k) along the path from k up to its ancestor."""
    transform = np.eye(6)
    while k != ancestor:
        transform = psi_projected[k] @ transform
        k = f.parent[k]
    return transform


def _body_to_task(frame, X0, reference):
    """Motion transform from the frame's body coordinates to the task coordinates of ``reference``."""
    if frame.body < 0:
        return np.zeros((6, 6))  # the fixed root does not move
    if reference == 'world':
        return inverse(X0[frame.body])
    if reference == 'local':
        return frame.X_body
    R, _ = placement_from_transform(frame.X_body @ X0[frame.body])
    rotate = np.zeros((6, 6))
    rotate[:3, :3] = rotate[3:, 3:] = R
    return rotate @ frame.X_body


def _require_independent_rows(compliance, link_names):
    eigenvalues = np.linalg.eigvalsh(compliance)
    rank = int(np.sum(eigenvalues > 1e-10 * max(eigenvalues[-1], 0.0))) if eigenvalues[-1] > 0 else 0
    if rank < len(compliance):
        raise SingularTaskError(
            f"the operational-space task of links {list(link_names)} has {len(compliance)} rows but only "
            f"{rank} independent ones at this configuration (not enough degrees of freedom, or a "
            "singularity); pass rows=[...] to select independent rows")
