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
Xup_k^T, M^_{k,k+1} is Featherstone's I^A_k and m^_k is D_k. ``udut_kernel`` is the one recursion
(``backends.py``); ``udut`` runs it as plain Python, and ``udut_solve`` runs Saha's sweeps on its factors.
With coupled mimic joints M = G^T M_tree G is no tree's: ``udut`` and ``forward_dynamics_udut`` then factor the dense
M (``dense_udut.py``, O(n^3)).
"""
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..errors import SingularMassMatrixError
from ..model.configuration import check_quaternions
from ..model.model import Model, check_state
from .backends import njit
from .crba import crba
from .dense_udut import coupled_udut, unit_upper_inverse
from .packing import AXIS, AXIS_INDEX, CONTINUED, JOINT_TYPE, PARENT, SPATIAL_INERTIA, TRANSFORM, UDUT, \
    as_float_arrays, packed, transforms_6x6
from .rnea import rnea
from .spatial_kernels import REVOLUTE, add_congruence, configuration_size, parent_transform, project_on_joint, \
    transposed_force

SIGNATURE = 'void(f8[:, ::1], f8[:, ::1], f8[::1], f8[:, ::1], f8[::1])'
X_, IA_, PSI_ = UDUT['X'], UDUT['IA'], UDUT['psi']


@njit()
def articulated_inertia_on_joint(P, i, IA_i, U_i):
    """U_i = IA_i S_i (IA_i row-major 6x6, symmetric; Saha's psi^_i, eq. 25); returns D_i = S_i^T U_i (m^_i)."""
    lin = 0 if P[i, JOINT_TYPE] == REVOLUTE else 3
    k = int(P[i, AXIS_INDEX])
    for row in range(6):
        if k >= 0:
            U_i[row] = IA_i[6 * row + lin + k] * P[i, AXIS.start + k]
        else:
            U_i[row] = IA_i[6 * row + lin] * P[i, AXIS.start] + IA_i[6 * row + lin + 1] * P[i, AXIS.start + 1] \
                + IA_i[6 * row + lin + 2] * P[i, AXIS.start + 2]
    return project_on_joint(P, i, U_i)


@njit()
def articulated_inertia_gather(P, i, X, IA, U):
    """One step of the Riccati gather (Jain Lemma 7, eq. 33; Saha eqs. 25, 27), shared by ABA and U D U^T:
    U_i = IA_i S_i, D_i = S_i^T U_i, and for a body with a parent Ia_i = IA_i - U_i U_i^T / D_i (in place of IA_i)
    and IA_p += Xup_i^T Ia_i Xup_i (a plain sum where Xup_i is the identity: the rows that continue a multi-DOF joint,
    ``packing``). Returns D_i."""
    D = articulated_inertia_on_joint(P, i, IA[i], U[i])
    p = int(P[i, PARENT])
    if p >= 0:
        inv_D = 1.0 / D
        for row in range(6):
            for col in range(row, 6):
                IA[i, 6 * row + col] -= U[i, row] * U[i, col] * inv_D
                IA[i, 6 * col + row] = IA[i, 6 * row + col]
        if P[i, TRANSFORM] == CONTINUED:
            for e in range(36):
                IA[p, e] += IA[i, e]
        else:
            add_congruence(X[i], IA[i], IA[p])
    return D


@njit()
def parent_transforms(P, W, q):
    """Xup_k of every row into the work field X of W."""
    X = W[:, X_:X_ + 12]
    for k in range(P.shape[0]):
        parent_transform(P, k, q, X[k])


@njit()
def pivots_gather(P, W, D):
    """psi_k (work field psi of W) and the pivots D_k, tips to base (Jain Lemma 7, eq. 33), on the transforms in
    the work field X."""
    X, IA, psi = W[:, X_:X_ + 12], W[:, IA_:IA_ + 36], W[:, PSI_:PSI_ + 6]
    for k in range(P.shape[0]):
        IA[k, :] = P[k, SPATIAL_INERTIA.start:SPATIAL_INERTIA.stop]
    for k in range(P.shape[0] - 1, -1, -1):
        D[k] = articulated_inertia_gather(P, k, X, IA, psi)           # psi^_k, m^_k (eq. 25); M^_p (eq. 27)
        for row in range(6):
            psi[k, row] /= D[k]                                       # psi_k = psi^_k / m^_k (eq. 26)


@njit()
def innovations_gather(P, W, q, D):
    """Xup_k, psi_k (work fields X, psi of W) and the pivots D_k at q."""
    parent_transforms(P, W, q)
    pivots_gather(P, W, D)


@njit(SIGNATURE)
def udut_kernel(P, W, q, U, D):
    """U (unit upper triangular) and D with M(q) = U diag(D) U^T; P is PackedModel.table, W its Data.work."""
    n = P.shape[0]
    if q.shape[0] != configuration_size(P) or U.shape[0] != n or U.shape[1] != n or D.shape[0] != n:
        raise ValueError('udut: q needs length nq, D length nv and U shape (nv, nv)')
    innovations_gather(P, W, q, D)
    X, psi = W[:, X_:X_ + 12], W[:, PSI_:PSI_ + 6]
    # Column k: carry psi_k to each ancestor i with force transforms (none within a multi-DOF joint, whose rows share
    # one frame), then project on joint i (eq. 24).
    for k in range(n):
        for i in range(n):
            U[i, k] = 1.0 if i == k else 0.0
        f = (psi[k, 0], psi[k, 1], psi[k, 2], psi[k, 3], psi[k, 4], psi[k, 5])
        i = k
        while P[i, PARENT] >= 0:
            if P[i, TRANSFORM] != CONTINUED:
                f = transposed_force(X[i], f)
            i = int(P[i, PARENT])
            U[i, k] = project_on_joint(P, i, f)


def singular_mass_matrix(model, row, D_k):
    """The error for a pivot D_k <= 0 (of velocity coordinate ``row``, the articulated inertia of its joint): M(q) is
    not positive definite."""
    k = packed(model).row_body[row]
    name = model.body_joint_names[k]
    if name in model.massless_joints:
        while model.parent[k] >= 0 and model.body_joint_names[model.parent[k]] in model.massless_joints:
            k = model.parent[k]  # name the joint at the top of the massless subtree
        name = model.body_joint_names[k]
        return SingularMassMatrixError(
            f"forward dynamics is undefined: joint {name!r} moves no mass or inertia (every link from it to "
            "the leaves is massless), so the mass matrix is singular; give those links an <inertial>")
    return SingularMassMatrixError(
        f"forward dynamics is undefined: the mass matrix is not positive definite at this configuration "
        f"(the articulated inertia about joint {name!r} is {D_k:.3g}); check the inertias it moves")


def run_with_pivots(model, kernel, arguments, D):
    """Run a kernel that divides by the pivots D (filled by the tips-to-base gather) as plain Python, then raise
    the named error for the first pivot D_k <= 0 the gather met (the highest such k)."""
    with np.errstate(divide='ignore', invalid='ignore'):   # a zero pivot is reported below, not warned about
        kernel(*arguments)
    singular = np.flatnonzero(D <= 0.0)
    if singular.size:
        raise singular_mass_matrix(model, singular[-1], D[singular[-1]])


class InnovationsFactors(NamedTuple):
    """The articulated-body quantities of Saha eqs. 25-27 (Jain Lemma 7) at one configuration, per row of the packed
    model (per velocity coordinate: a multi-DOF joint is a chain of rows in its body frame, see ``packing``)."""
    parent: np.ndarray     # (n,) the parent row, -1 at the root
    Xup: np.ndarray        # (n, 6, 6) parent -> body motion transforms
    S: np.ndarray          # (n, 6) joint motion subspaces (Saha's p_k, Jain's H^*)
    psi: np.ndarray        # (n, 6) I^A_k S_k / D_k (Saha's psi_k, eq. 26): the Kalman gain before it is carried
    D: np.ndarray          # (n,) S_k^T I^A_k S_k (Saha's m^_k, Jain's D(k))


def innovations_factors(model, q):
    """The factors at q for Jain's operators (``udut_solve``, the operational-space inertia): ``innovations_gather``
    run as plain Python, with 6x6 parent transforms."""
    check_state(model, q=q)
    check_quaternions(model, q)
    pack, D = packed(model), np.empty(model.nv)
    W = pack.work()
    run_with_pivots(model, innovations_gather, (pack.table, W, *as_float_arrays(q), D), D)
    return InnovationsFactors(pack.table[:, PARENT].astype(int), transforms_6x6(W[:, X_:X_ + 12]),
                              model.motion_subspace, W[:, PSI_:PSI_ + 6].copy(), D)


def udut(model: Model, q: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """(U, D) with M(q) = U diag(D) U^T, U unit upper triangular, D > 0 (Saha eqs. 12-13, 24-27). A joint of w
    degrees of freedom has a w x w pivot block S^T IA S; it is factored here as its own L D L^T (w scalar pivots,
    see ``packing``), so D is diagonal for every model. With coupled mimic joints: the dense M's (O(n^3))."""
    check_state(model, q=q)
    check_quaternions(model, q)
    if model.coupling is not None:
        return coupled_udut(model, crba(model, q))
    pack, U, D = packed(model), np.empty((model.nv, model.nv)), np.empty(model.nv)
    run_with_pivots(model, udut_kernel, (pack.table, pack.work(), *as_float_arrays(q), U, D), D)
    return U, D


def udut_solve(model, factors, rhs):
    """M^{-1} rhs from the factors, for rhs of shape (n,) or (n, m): Saha's three sweeps (eqs. 15-19).

    The sweeps are Jain's M^{-1} = [I - H psi K]^* D^{-1} [I - H psi K] (Lemma 11, eq. 51) applied to rhs.
    """
    f = factors
    rhs = np.asarray(rhs, dtype=float)
    columns = rhs.reshape(model.nv, -1)
    n, m = columns.shape
    # 1) U tau^ = tau, gather tips to base (eqs. 16-17): tau^_i = tau_i - p_i^T eta_{i,i+1},
    #    eta_i = psi_i tau^_i + eta_{i,i+1}, and the parent receives eta_{p,i} = B^T eta_i.
    eta_from_children = np.zeros((n, 6, m))
    tau_hat = np.zeros((n, m))
    for i in reversed(range(n)):
        tau_hat[i] = columns[i] - f.S[i] @ eta_from_children[i]
        p = f.parent[i]
        if p >= 0:
            eta_from_children[p] += f.Xup[i].T @ (np.outer(f.psi[i], tau_hat[i]) + eta_from_children[i])
    # 2) D tau^^ = tau^.
    tau_hat_hat = tau_hat / f.D[:, None]
    # 3) U^T qdd = tau^^, scatter base to tips (eqs. 18-19): qdd_i = tau^^_i - psi_i^T mu_{i,i-1},
    #    mu_i = p_i qdd_i + mu_{i,i-1}, and the child receives mu_{c,i} = B mu_i.
    mu = np.zeros((n, 6, m))
    qdd = np.zeros((n, m))
    for i in range(n):
        p = f.parent[i]
        mu_from_parent = f.Xup[i] @ mu[p] if p >= 0 else np.zeros((6, m))
        qdd[i] = tau_hat_hat[i] - f.psi[i] @ mu_from_parent
        mu[i] = np.outer(f.S[i], qdd[i]) + mu_from_parent
    return qdd.reshape(rhs.shape)


def forward_dynamics_udut(model: Model, q: ArrayLike, qd: ArrayLike, tau: ArrayLike, gravity: ArrayLike | None = None,
                          f_ext: ArrayLike | None = None) -> NDArray[np.float64]:
    """Joint accelerations by Saha's O(n) scheme: M qdd = tau - h(q, qd) solved with U D U^T (eq. 15).

    h comes from RNEA with qdd = 0 (Saha Sec. IV); arguments as in ``aba``, and the result equals ABA's. With
    coupled mimic joints: U D U^T of the dense M (O(n^3)).
    """
    check_state(model, q=q, qd=qd, tau=tau, f_ext=f_ext)
    check_quaternions(model, q)
    h = rnea(model, q, qd, np.zeros(model.nv), gravity, f_ext)
    if model.coupling is not None:
        return coupled_inverse(model, q) @ (np.asarray(tau, dtype=float) - h)
    return udut_solve(model, innovations_factors(model, q), np.asarray(tau, dtype=float) - h)


def coupled_inverse(model, q):
    """M(q)^-1 = U^-T D^-1 U^-1 of a model with coupled mimic joints, from the dense M's factors (O(n^3))."""
    U, D = coupled_udut(model, crba(model, q))
    V = unit_upper_inverse(U)
    return V.T @ (V / D[:, None])
