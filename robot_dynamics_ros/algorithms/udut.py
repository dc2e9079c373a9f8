"""Saha's M = U D U^T decomposition and O(n) forward dynamics in three sweeps, on trees.

Saha (IEEE T-RA 1997) eliminates the mass matrix in reverse order (last joint first, eqs. 20-24) and finds
that the pivots are articulated-body inertias: with M^_{k,k+1} the articulated-body inertia of body k and
p_k its joint's motion subspace,

    psi^_k = M^_{k,k+1} p_k,  m^_k = p_k^T psi^_k,  psi_k = psi^_k / m^_k          (eqs. 25-26)
    M^_{k-1,k} = M_{k-1} + B^T (M^_{k,k+1} - psi_k psi^_k^T) B                     (eq. 27)
    D = diag(m^_k),  U_ik = p_i^T B_ki^T psi_k  for i an ancestor of k, U_kk = 1   (eqs. 12-13, 24)

For trees this is Jain's innovations factorization M = [I + H phi K] D [I + H phi K]^* (Part II, Lemma 11,
eq. 49) with the Kalman gain K carrying psi_k to the parent; U_ik is zero unless i is an ancestor of k, so
with canonical numbering (parent[i] < i) U is unit upper triangular. Here B^T is the force transform
``Xup[k].T`` and M^_{k,k+1} is Featherstone's I^A_k.
"""
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import SingularMassMatrixError
from ..model.model import Model, check_state
from .rnea import rnea


class InnovationsFactors(NamedTuple):
    """The articulated-body quantities of Saha eqs. 25-27 (Jain Lemma 7) at one configuration."""
    Xup: np.ndarray        # (n, 6, 6) parent -> body motion transforms
    S: np.ndarray          # (n, 6) joint motion subspaces (Saha's p_k, Jain's H^*)
    psi_hat: np.ndarray    # (n, 6) I^A_k S_k (Saha's psi^_k)
    D: np.ndarray          # (n,) S_k^T I^A_k S_k (Saha's m^_k, Jain's D(k))

    @property
    def psi(self):
        """(n, 6) psi^_k / m^_k (Saha eq. 26): the Kalman gain before it is carried to the parent."""
        return self.psi_hat / self.D[:, None]


def innovations_factors(model, q):
    """Articulated-body inertias projected on each joint: the Riccati gather of Jain Lemma 7, eq. 33."""
    S = model.motion_subspace
    Xup = model.parent_transforms(q)
    IA = model.inertia.copy()
    psi_hat = np.zeros((model.nv, 6))
    D = np.zeros(model.nv)
    # Gather, tips to base.
    for k in reversed(range(model.nv)):
        psi_hat[k] = IA[k] @ S[k]                                    # eq. 25
        D[k] = S[k] @ psi_hat[k]
        if D[k] <= 0.0:
            raise singular_mass_matrix(model, k, D[k])
        p = model.parent[k]
        if p >= 0:
            IA[p] += Xup[k].T @ (IA[k] - np.outer(psi_hat[k], psi_hat[k]) / D[k]) @ Xup[k]  # eq. 27
    return InnovationsFactors(Xup, S, psi_hat, D)


def singular_mass_matrix(model, k, D_k):
    """The error for a pivot D_k <= 0 (joint k's articulated inertia): M(q) is not positive definite."""
    name = model.joint_names[k]
    if name in model.massless_joints:
        while model.parent[k] >= 0 and model.joint_names[model.parent[k]] in model.massless_joints:
            k = model.parent[k]  # name the joint at the top of the massless subtree
        name = model.joint_names[k]
        return SingularMassMatrixError(
            f"forward dynamics is undefined: joint {name!r} moves no mass or inertia (every link from it to "
            "the leaves is massless), so the mass matrix is singular; give those links an <inertial>")
    return SingularMassMatrixError(
        f"forward dynamics is undefined: the mass matrix is not positive definite at this configuration "
        f"(the articulated inertia about joint {name!r} is {D_k:.3g}); check the inertias it moves")


def udut(model: Model, q: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(U, D) with M(q) = U diag(D) U^T, U unit upper triangular, D > 0 (Saha eqs. 12-13, 24-27)."""
    f = innovations_factors(model, q)
    psi = f.psi
    U = np.eye(model.nv)
    # Column k: carry psi_k to each ancestor i with force transforms, then project on joint i (eq. 24).
    for k in range(model.nv):
        force, i = psi[k], k
        while model.parent[i] >= 0:
            force = f.Xup[i].T @ force
            i = model.parent[i]
            U[i, k] = f.S[i] @ force
    return U, f.D


def udut_solve(model, factors, rhs):
    """M^{-1} rhs from the factors, for rhs of shape (n,) or (n, m): Saha's three sweeps (eqs. 15-19).

    The sweeps are Jain's M^{-1} = [I - H psi K]^* D^{-1} [I - H psi K] (Lemma 11, eq. 51) applied to rhs.
    """
    f = factors
    psi = f.psi
    rhs = np.asarray(rhs, dtype=float)
    columns = rhs.reshape(model.nv, -1)
    n, m = columns.shape
    # 1) U tau^ = tau, gather tips to base (eqs. 16-17): tau^_i = tau_i - p_i^T eta_{i,i+1},
    #    eta_i = psi_i tau^_i + eta_{i,i+1}, and the parent receives eta_{p,i} = B^T eta_i.
    eta_from_children = np.zeros((n, 6, m))
    tau_hat = np.zeros((n, m))
    for i in reversed(range(n)):
        tau_hat[i] = columns[i] - f.S[i] @ eta_from_children[i]
        p = model.parent[i]
        if p >= 0:
            eta_from_children[p] += f.Xup[i].T @ (np.outer(psi[i], tau_hat[i]) + eta_from_children[i])
    # 2) D tau^^ = tau^.
    tau_hat_hat = tau_hat / f.D[:, None]
    # 3) U^T qdd = tau^^, scatter base to tips (eqs. 18-19): qdd_i = tau^^_i - psi_i^T mu_{i,i-1},
    #    mu_i = p_i qdd_i + mu_{i,i-1}, and the child receives mu_{c,i} = B mu_i.
    mu = np.zeros((n, 6, m))
    qdd = np.zeros((n, m))
    for i in range(n):
        p = model.parent[i]
        mu_from_parent = f.Xup[i] @ mu[p] if p >= 0 else np.zeros((6, m))
        qdd[i] = tau_hat_hat[i] - psi[i] @ mu_from_parent
        mu[i] = np.outer(f.S[i], qdd[i]) + mu_from_parent
    return qdd.reshape(rhs.shape)


def forward_dynamics_udut(model: Model, q: ArrayLike, qd: ArrayLike, tau: ArrayLike, gravity: ArrayLike | None = None,
                          f_ext: ArrayLike | None = None) -> NDArray[np.float64]:
    """Joint accelerations by Saha's O(n) scheme: M qdd = tau - h(q, qd) solved with U D U^T (eq. 15).

    h comes from RNEA with qdd = 0 (Saha Sec. IV); arguments as in ``aba``, and the result equals ABA's.
    """
    check_state(model, q=q, qd=qd, tau=tau, f_ext=f_ext)
    h = rnea(model, q, qd, np.zeros(model.nv), gravity, f_ext)
    return udut_solve(model, innovations_factors(model, q), np.asarray(tau, dtype=float) - h)

