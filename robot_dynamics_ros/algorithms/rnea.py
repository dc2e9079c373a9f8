"""Recursive Newton-Euler inverse dynamics, O(n) on trees (Jain Alg. 3.1; Featherstone Table 5.1)."""
import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..model.model import Model, check_state
from ..spatial import cross_force, cross_motion

STANDARD_GRAVITY = np.array([0.0, 0.0, -9.81])


def spatial_gravity(gravity):
    """Base acceleration that stands in for gravity: a_0 = -[0; g] (the base accelerates upwards)."""
    g = STANDARD_GRAVITY if gravity is None else np.asarray(gravity, dtype=float)
    return np.concatenate([np.zeros(3), -g])


def kinematic_scatter(model, Xup, qd, qdd, a0):
    """Base to tips (Jain Lemma 2, eq. 8): the velocity v and acceleration a of every body, the scatter of Jain
    Alg. 3.1 (eq. 10) in Featherstone's symbols (RBDA Table 5.1). Jain's V, alpha, H^*, phi^* and a(k) are v, a,
    S, Xup and v x S qd here; a_0 = -[0; g] stands in for gravity. Shared by ``rnea`` and the regressor."""
    n, S = model.nv, model.motion_subspace
    v, a = np.zeros((n, 6)), np.zeros((n, 6))
    for i in range(n):
        p = model.parent[i]
        vJ = S[i] * qd[i]
        v[i] = (Xup[i] @ v[p] if p >= 0 else 0.0) + vJ                     # V(k) = phi^* V(k+1) + H^* qd(k)
        a[i] = Xup[i] @ (a[p] if p >= 0 else a0) + S[i] * qdd[i]           # alpha(k) = phi^* alpha(k+1) + H^* qdd(k)
        a[i] += cross_motion(v[i]) @ vJ                                     #     + a(k)
    return v, a


def rnea(model: Model, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike, gravity: ArrayLike | None = None,
         f_ext: ArrayLike | None = None) -> NDArray[np.float64]:
    """Joint forces tau = M(q) qdd + C(q, qd) qd + g(q) - sum J^T f_ext.

    gravity: 3-vector in the root frame (default 9.81 m/s^2 along -z).
    f_ext: optional (n, 6) spatial forces [moment; force] acting on each body, in the body's frame.
    """
    check_state(model, q=q, qd=qd, qdd=qdd, f_ext=f_ext)
    n = model.nv
    S = model.motion_subspace
    Xup = model.parent_transforms(q)
    v, a = kinematic_scatter(model, Xup, qd, qdd, spatial_gravity(gravity))
    # The net force on each body, Jain's M(k) alpha(k) + b(k) (Alg. 3.1, eq. 10), b(k) = v x* I v.
    f = np.array([I @ a[i] + cross_force(v[i]) @ (I @ v[i]) for i, I in enumerate(model.inertia)]).reshape(n, 6)
    if f_ext is not None:
        f -= f_ext
    # Gather, tips to base (Lemma 1, eq. 5): joint forces and the force each body passes to its parent.
    tau = np.zeros(n)
    for i in reversed(range(n)):
        tau[i] = S[i] @ f[i]                                                # T(k) = H(k) f(k)
        p = model.parent[i]
        if p >= 0:
            f[p] += Xup[i].T @ f[i]                                         # f(parent) += phi f(k)
    return tau


def gravity_torques(model: Model, q: ArrayLike, gravity: ArrayLike | None = None) -> NDArray[np.float64]:
    """g(q): the joint forces that hold the robot still."""
    zero = np.zeros(model.nv)
    return rnea(model, q, zero, zero, gravity)


def bias_torques(model: Model, q: ArrayLike, qd: ArrayLike, gravity: ArrayLike | None = None) -> NDArray[np.float64]:
    """h(q, qd) = C(q, qd) qd + g(q): Coriolis, centrifugal and gravity forces."""
    return rnea(model, q, qd, np.zeros(model.nv), gravity)
