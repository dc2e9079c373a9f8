"""Configuration-space arithmetic for models with floating and planar joints (Pinocchio's ``integrate``,
``difference``, ``neutral``, ``randomConfiguration``, ``normalize``), with Pinocchio's layouts: a floating joint
has q = [x y z qx qy qz qw] (position in the parent frame, orientation as a unit quaternion) and
v = [linear; angular] velocity in its own frame, so it integrates on SE(3): M(q + v) = M(q) exp(v); a planar
joint has q = [x y cos sin], v = [vx vy w] in its own frame, integrated on SE(2). 1-DOF joints add.
"""
import numpy as np
from numpy.typing import ArrayLike, NDArray

from .. import spatial
from .joints import FREE_FLYER, PLANAR, check_state
from .model import Model

QUATERNION_TOLERANCE = 1e-6   # | |quaternion| - 1 | beyond this is an error


def check_quaternions(model: Model, q) -> None:
    """Raise ValueError naming the joint whose quaternion in q is off unit norm by more than 1e-6 (or whose q has
    the wrong shape)."""
    if not model.quaternions:
        return
    check_state(model, q=q)
    for name, k in model.quaternions:
        norm = float(np.sqrt(q[k] * q[k] + q[k + 1] * q[k + 1] + q[k + 2] * q[k + 2] + q[k + 3] * q[k + 3]))
        if not abs(norm - 1.0) <= QUATERNION_TOLERANCE:
            raise ValueError(f"q[{k}:{k + 4}], the quaternion of joint {name!r}, has norm {norm!r}; it must be 1 "
                             f"within {QUATERNION_TOLERANCE:g} (normalize(model, q) makes it so)")


def check_quaternion_rows(model: Model, Q) -> None:
    """``check_quaternions`` for a batch: rows of Q are configurations."""
    for name, k in model.quaternions:
        norms = np.linalg.norm(np.asarray(Q)[:, k:k + 4], axis=1)
        bad = np.flatnonzero(~(np.abs(norms - 1.0) <= QUATERNION_TOLERANCE))
        if bad.size:
            raise ValueError(f"row {bad[0]}: q[{k}:{k + 4}], the quaternion of joint {name!r}, has norm "
                             f"{norms[bad[0]]!r}; it must be 1 within {QUATERNION_TOLERANCE:g}")


def neutral(model: Model) -> NDArray[np.float64]:
    """Zero displacement in every joint (identity quaternion, cos = 1), 1-DOF joints clipped into their limits."""
    return model.neutral()


def random_configuration(model: Model, rng: np.random.Generator) -> NDArray[np.float64]:
    """1-DOF joints uniform in their limits; in [-pi, pi] (revolute) or [-1, 1] (prismatic) where unlimited, and
    over twice that span from the one limit a joint limited on one side has. Floating and planar joints: position
    uniform in [-1, 1] per axis, orientation uniform (a uniformly random unit quaternion; an angle in [-pi, pi])."""
    return model.random_configuration(rng)


def normalize(model: Model, q: ArrayLike) -> NDArray[np.float64]:
    """q with each quaternion and each planar (cos, sin) pair scaled to unit norm."""
    check_state(model, q=q)
    q = np.array(q, dtype=float)
    for kind, start in zip(model.joint_type, model.idx_q):
        if kind in (FREE_FLYER, PLANAR):
            block = slice(start + 3, start + 7) if kind == FREE_FLYER else slice(start + 2, start + 4)
            q[block] /= np.linalg.norm(q[block])
    return q


def integrate(model: Model, q: ArrayLike, v: ArrayLike) -> NDArray[np.float64]:
    """The configuration reached from q by moving with the constant velocity v for unit time (q (+) v)."""
    check_state(model, q=q, v=v)
    check_quaternions(model, q)
    q, v = np.asarray(q, dtype=float), np.asarray(v, dtype=float)
    result = q + 0.0
    result[model.joint_q_index] += v[model.joint_v_index]   # the 1-DOF joints
    for i in np.flatnonzero((model.joint_type == FREE_FLYER) | (model.joint_type == PLANAR)):
        qs, vs = model.idx_q[i], model.idx_v[i]
        if model.joint_type[i] == FREE_FLYER:
            R, p = spatial.quaternion_to_matrix(q[qs + 3:qs + 7]), q[qs:qs + 3]
            dR, dp = _exp6(v[vs:vs + 6])
            result[qs:qs + 3] = p + R @ dp
            result[qs + 3:qs + 7] = _same_hemisphere(spatial.matrix_to_quaternion(R @ dR), q[qs + 3:qs + 7])
        else:   # PLANAR
            (c, s), p = q[qs + 2:qs + 4], q[qs:qs + 2]
            dc, ds, dp = _exp2(v[vs:vs + 3])
            result[qs:qs + 2] = p + np.array([[c, -s], [s, c]]) @ dp
            result[qs + 2:qs + 4] = c * dc - s * ds, s * dc + c * ds
    return result


def difference(model: Model, q0: ArrayLike, q1: ArrayLike) -> NDArray[np.float64]:
    """The velocity v with integrate(model, q0, v) = q1 (q1 (-) q0; the shortest rotation)."""
    check_state(model, q=q0)
    check_state(model, q=q1)
    check_quaternions(model, q0)
    check_quaternions(model, q1)
    q0, q1 = np.asarray(q0, dtype=float), np.asarray(q1, dtype=float)
    v = np.empty(model.nv)
    for kind, qs, vs in zip(model.joint_type, model.idx_q, model.idx_v):
        if kind == FREE_FLYER:
            R0, R1 = (spatial.quaternion_to_matrix(q[qs + 3:qs + 7]) for q in (q0, q1))
            v[vs:vs + 6] = _log6(R0.T @ R1, R0.T @ (q1[qs:qs + 3] - q0[qs:qs + 3]))
        elif kind == PLANAR:
            (c0, s0), (c1, s1) = q0[qs + 2:qs + 4], q1[qs + 2:qs + 4]
            angle = np.arctan2(c0 * s1 - s0 * c1, c0 * c1 + s0 * s1)
            dp = np.array([[c0, s0], [-s0, c0]]) @ (q1[qs:qs + 2] - q0[qs:qs + 2])
            v[vs:vs + 3] = *np.linalg.solve(_planar_V(angle), dp), angle
        else:
            v[vs] = q1[qs] - q0[qs]
    return v


def _same_hemisphere(quaternion, reference):
    """quaternion or -quaternion (the same rotation), whichever is closer to reference (continuous in time)."""
    return quaternion if quaternion @ reference >= 0.0 else -quaternion


def _V(w):
    """The left Jacobian of SO(3) at w: exp of [v; w] in se(3) has translation V(w) v."""
    theta = np.linalg.norm(w)
    W = spatial.skew(w)
    if theta < 1e-4:   # Taylor series, error below theta^4 / 120
        return np.eye(3) + W / 2.0 + W @ W / 6.0
    return np.eye(3) + (1.0 - np.cos(theta)) / theta ** 2 * W + (theta - np.sin(theta)) / theta ** 3 * (W @ W)


def _exp6(v):
    """(R, p) = exp of the twist [linear; angular] v."""
    w = v[3:]
    theta = np.linalg.norm(w)
    return spatial.rotation_about_axis(w / theta if theta > 0.0 else np.array([1.0, 0.0, 0.0]), theta), _V(w) @ v[:3]


def _log6(R, p):
    """The twist [linear; angular] v with exp(v) = (R, p), rotation angle in [0, pi]."""
    angle = np.arccos(np.clip((np.trace(R) - 1.0) / 2.0, -1.0, 1.0))
    axis_sin = np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1]]) / 2.0   # axis sin(angle)
    if angle < 1e-8:
        w = axis_sin
    elif angle > np.pi - 1e-6:   # near pi: the axis from the symmetric part, R + 1 = 2 a a^T
        B = (R + np.eye(3)) / 2.0
        axis = B[:, np.argmax(np.diag(B))]
        axis = axis / np.linalg.norm(axis)
        w = angle * (axis if axis @ axis_sin >= 0.0 else -axis)
    else:
        w = angle / np.sin(angle) * axis_sin
    return np.concatenate([np.linalg.solve(_V(w), p), w])


def _planar_V(angle):
    """SE(2)'s left Jacobian: exp([vx vy w]) has translation V(w) [vx vy]."""
    if abs(angle) < 1e-6:
        return np.array([[1.0, -angle / 2.0], [angle / 2.0, 1.0]])
    s, c = np.sin(angle) / angle, (1.0 - np.cos(angle)) / angle
    return np.array([[s, -c], [c, s]])


def _exp2(v):
    """(cos, sin, translation) of exp([vx vy w]) on SE(2)."""
    return np.cos(v[2]), np.sin(v[2]), _planar_V(v[2]) @ v[:2]
