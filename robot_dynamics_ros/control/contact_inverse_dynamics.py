"""Contact-consistent inverse dynamics: joint torques that keep a floating-base robot on its feet (no ROS import).

Given the state (q, v) and a desired acceleration a_des (base block and joints), find the accelerations qdd, the
contact forces f (a 3-vector in world coordinates per foot in contact) and the joint torques tau with

    M(q) qdd + h(q, v) = S^T tau + J_c^T f       equations of motion; S picks the actuated (1-DOF) joints   (1)
    J_c qdd + Jdot_c v = 0                       the feet in contact do not accelerate                      (2)
    ||(f_x, f_y)|| <= mu f_z                     Coulomb's friction cone of each foot (f_z >= 0)             (3)
    |tau| <= the URDF effort limits                                                                         (4)

and qdd as close to a_des as they allow: minimise 1/2 ||qdd - a_des||^2 + 1/2 FORCE_WEIGHT ||f||^2 (the small
force term spreads the load over the feet). The base rows of (1) hold no tau: the contact forces alone must
move the base; the joint rows then give tau = M_j qdd + h_j - J_cj^T f. This is a second-order cone program in
(qdd, f), solved by Clarabel (an interior-point solver on PyPI, already the identification's): the friction
cone is exact, no pyramid.
"""
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..algorithms.kinematics import frame_X_root, body_transforms, jacobian_from_transforms, placement_from_transform
from ..fast import bias_torques, crba
from ..model.configuration import difference, integrate
from ..model.model import Model
from ..spatial import skew

FORCE_WEIGHT = 1e-9      # (m/s^2)^2 per N^2: spreads the load; moves a feasible qdd by about FORCE_WEIGHT |f|
RANK_TOLERANCE = 1e-9    # singular values of the contact Jacobian below this fraction of the largest: dependent rows
DERIVATIVE_STEP = 1e-6   # s: central difference for Jdot_c v


def point_jacobians(model: Model, q: ArrayLike, contacts: Sequence[tuple[str, ArrayLike]],
                    X0=None) -> NDArray[np.float64]:
    """(3 len(contacts)) x nv: the Jacobians of the velocities, in world coordinates, of the points at ``offset``
    in their link's frame: v_p = v_o + omega x (R offset), so J_p = J_linear - [R offset]x J_angular. X0: the
    bodies' transforms at q where the caller has them (``body_transforms``)."""
    X0 = body_transforms(model, q) if X0 is None else X0
    rows = []
    for link, offset in contacts:
        J = jacobian_from_transforms(model, X0, link, 'local_world_aligned')   # [angular; linear] at the origin
        r = placement_from_transform(frame_X_root(model, X0, link)).R @ np.asarray(offset, dtype=float)
        rows.append(J[3:] - skew(r) @ J[:3])
    return np.vstack(rows) if rows else np.zeros((0, model.nv))


def point_acceleration_bias(model, q, v, contacts):
    """Jdot_p v of the points, their accelerations when qdd = 0, by a central difference of J_p along the motion
    (error about DERIVATIVE_STEP^2 |v|^3, well below the controller's tolerances)."""
    step = DERIVATIVE_STEP * np.asarray(v, dtype=float)
    ahead = point_jacobians(model, integrate(model, q, step), contacts)
    behind = point_jacobians(model, integrate(model, q, -step), contacts)
    return (ahead - behind) @ v / (2.0 * DERIVATIVE_STEP)


class ContactForceError(RuntimeError):
    """No accelerations, forces and torques satisfy (1)-(4) (the solver's status says why)."""


def contact_inverse_dynamics(model: Model, q: ArrayLike, v: ArrayLike, desired_acceleration: ArrayLike,
                             contacts: Sequence[tuple[str, ArrayLike]], friction: float,
                             gravity: ArrayLike | None = None):
    """(tau for model.joint_names, qdd, f: (len(contacts), 3) contact forces in world coordinates) of (1)-(4).

    contacts: (link, offset in the link frame) of each foot in contact. Raises ContactForceError when the
    problem has no solution (e.g. torque limits too low to hold the robot)."""
    try:
        import clarabel
    except ImportError:
        raise ImportError("contact_inverse_dynamics needs clarabel: pip install 'robot_dynamics_ros[legged]'",
                          name='clarabel') from None
    from scipy import sparse
    q, v = np.asarray(q, dtype=float), np.asarray(v, dtype=float)
    nv, k = model.nv, len(contacts)
    joints = np.asarray(model.joint_v_index)
    base = np.setdiff1d(np.arange(nv), joints)   # the rows (1) without actuation
    M = crba(model, q)
    h = bias_torques(model, q, v) if gravity is None else bias_torques(model, q, v, gravity)
    Jc = point_jacobians(model, q, contacts)
    bias = point_acceleration_bias(model, q, v, contacts)
    n = nv + 3 * k                                # x = [qdd; f]
    dynamics = np.hstack([M, -Jc.T])              # rows of (1): dynamics @ x + h = S^T tau
    rows, b, cones = [], [], []
    rows.append(dynamics[base])                   # (1), base rows: = -h_base
    b.append(-h[base])
    held = independent_rows(Jc)                   # (2), on a basis of its rows: several points of one foot
    rows.append(np.hstack([held @ Jc, np.zeros((len(held), 3 * k))]))   # repeat constraints, which rounding
    b.append(-held @ bias)                                              # would make inconsistent
    cones.append(clarabel.ZeroConeT(len(base) + len(held)))
    limit = model.effort_limit[joints]
    rows += [dynamics[joints], -dynamics[joints]]             # (4): tau_j = dynamics_j x + h_j within +-limit
    b += [limit - h[joints], limit + h[joints]]
    cones.append(clarabel.NonnegativeConeT(2 * len(joints)))
    for c in range(k):                                         # (3): (mu f_z, f_x, f_y) in the second-order cone
        cone = np.zeros((3, n))
        f = nv + 3 * c
        cone[0, f + 2], cone[1, f], cone[2, f + 1] = -friction, -1.0, -1.0
        rows.append(cone)
        b.append(np.zeros(3))
        cones.append(clarabel.SecondOrderConeT(3))
    P = sparse.diags(np.concatenate([np.ones(nv), np.full(3 * k, FORCE_WEIGHT)])).tocsc()
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    solution = clarabel.DefaultSolver(P, -np.concatenate([np.asarray(desired_acceleration, dtype=float),
                                                          np.zeros(3 * k)]),
                                      sparse.csc_matrix(np.vstack(rows)), np.concatenate(b), cones, settings).solve()
    if str(solution.status) not in ('Solved', 'AlmostSolved'):
        raise ContactForceError(f"no contact forces hold the robot within its friction cones and effort limits "
                                f"({solution.status})")
    x = np.asarray(solution.x)
    qdd, f = x[:nv], x[nv:].reshape(k, 3)
    tau = dynamics[joints] @ x + h[joints]
    return tau, qdd, f


def independent_rows(J: NDArray[np.float64]) -> NDArray[np.float64]:
    """(r, m) orthonormal combinations of the m rows of J that span its row space (SVD; r its numerical rank)."""
    if len(J) == 0:
        return np.zeros((0, 0))
    U, s, _ = np.linalg.svd(J, full_matrices=False)
    return U[:, s > RANK_TOLERANCE * s[0]].T


def base_error(model: Model, q: ArrayLike, q_reference: ArrayLike) -> NDArray[np.float64]:
    """difference(q, q_reference) on the base block (zero on the joints): the velocity that takes the base to its
    reference pose in unit time, in the base frame as v is."""
    error = difference(model, q, q_reference)
    error[np.asarray(model.joint_v_index)] = 0.0
    return error
