"""Joint kinds and the checks every state argument passes: its shape for the model, and finite values (a leaf
module: the model, its configuration arithmetic and the layers above all import it)."""
import math

import numpy as np

REVOLUTE = 0
PRISMATIC = 1
FREE_FLYER = 2   # q = [x y z qx qy qz qw], v = [linear; angular] in the body frame (Pinocchio's layout)
PLANAR = 3       # q = [x y cos sin], v = [vx vy w] in the body frame, in the xy plane of the joint frame
NQ = {REVOLUTE: 1, PRISMATIC: 1, FREE_FLYER: 7, PLANAR: 4}   # coordinates of each joint type
NV = {REVOLUTE: 1, PRISMATIC: 1, FREE_FLYER: 6, PLANAR: 3}


def joint_columns(kind, axis):
    """The motion subspace columns of a joint type, in the order of its velocity coordinates: (angular, 3-vector)
    pairs, [angular part; 0] when angular, else [0; linear part]."""
    if kind in (REVOLUTE, PRISMATIC):
        return [(kind == REVOLUTE, np.asarray(axis, dtype=float))]
    e = np.eye(3)
    if kind == FREE_FLYER:
        return [(False, e[0]), (False, e[1]), (False, e[2]), (True, e[0]), (True, e[1]), (True, e[2])]
    return [(False, e[0]), (False, e[1]), (True, e[2])]


def _length(model, name):
    """The length a state argument needs: nq for a configuration (q), nv for velocities, accelerations, forces."""
    return model.nq if name == 'q' else model.nv


def _described(model):
    if model.fixed_base:
        return f"the {model.nv}-DOF model {model.name!r}"
    return f"the model {model.name!r} (nq = {model.nq}, nv = {model.nv})"


def check_state(model, **arrays):
    """Raise ValueError naming the first argument whose shape is not (nq,) for q, (nv,) for the others (f_ext:
    (nb, 6), one spatial force per body; None is skipped). Every backend validates its arguments with this, so a
    wrong length gives the same error everywhere."""
    for name, value in arrays.items():
        if value is None:
            continue
        expected = (model.nb, 6) if name == 'f_ext' else (_length(model, name),)
        shape = np.shape(value)
        if shape != expected:
            raise ValueError(f"{name} has shape {shape}; {_described(model)} needs {expected}")


def check_states(model, **arrays):
    """As ``check_state`` for batches: shape (N, nq) or (N, nv) with the same N for every array (f_ext: (nb, 6)
    or (N, nb, 6))."""
    n = model.nb
    count = None
    for name, value in arrays.items():
        if value is None:
            continue
        shape = np.shape(value)
        if name == 'f_ext':
            if shape != (n, 6) and not (len(shape) == 3 and shape[1:] == (n, 6) and shape[0] == count):
                raise ValueError(f"{name} has shape {shape}; {_described(model)} needs ({n}, 6) "
                                 f"or ({count}, {n}, 6)")
            continue
        count = shape[0] if count is None and len(shape) == 2 else count
        if shape != (count, _length(model, name)):
            raise ValueError(f"{name} has shape {shape}; {_described(model)} needs "
                             f"({count if count is not None else 'N'}, {_length(model, name)})")


def neutral_coordinates(joint_type, idx_q, lower, upper):
    """The neutral configuration (``configuration.neutral``) of joints of these kinds, starting at idx_q in q, with
    these limits (one per coordinate): zero displacement in every joint (identity quaternion, cos = 1), 1-DOF joints clipped into their limits."""
    q = np.clip(np.zeros(len(lower)), lower, upper)
    for kind, start in zip(joint_type, idx_q):
        if kind == FREE_FLYER:
            q[start:start + 7] = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0
        elif kind == PLANAR:
            q[start:start + 4] = 0.0, 0.0, 1.0, 0.0
    return q


def random_coordinates(joint_type, idx_q, lower, upper, rng):
    """A random configuration (``configuration.random_configuration``) of joints of these kinds, starting at idx_q
    in q, with these limits (one per coordinate): 1-DOF joints uniform in their limits; in [-pi, pi] (revolute) or [-1, 1] (prismatic) where unlimited, and
    over twice that span from the one limit a joint limited on one side has. Floating and planar joints: position
    uniform in [-1, 1] per axis, orientation uniform (a uniformly random unit quaternion; an angle in [-pi, pi])."""
    q = np.empty(len(lower))
    for kind, start in zip(joint_type, idx_q):
        if kind == FREE_FLYER:
            quaternion = rng.normal(size=4)
            q[start:start + 7] = *rng.uniform(-1.0, 1.0, 3), *(quaternion / np.linalg.norm(quaternion))
        elif kind == PLANAR:
            angle = rng.uniform(-np.pi, np.pi)
            q[start:start + 4] = *rng.uniform(-1.0, 1.0, 2), np.cos(angle), np.sin(angle)
        else:
            span = np.pi if kind == REVOLUTE else 1.0
            low, high = lower[start], upper[start]
            lo = low if np.isfinite(low) else min(-span, high - 2 * span)
            hi = high if np.isfinite(high) else max(span, low + 2 * span)
            q[start] = rng.uniform(lo, hi)
    return q


def all_finite(v):
    """Whether a float vector is all finite; a finite sum (one cheap call) settles it, else each element."""
    return math.isfinite(sum(v.tolist())) or bool(np.isfinite(v).all())


def as_finite_vector(name, value, n):
    """``value`` as a float array of length n, or ValueError saying what is wrong with it."""
    if type(value) is np.ndarray and value.dtype == np.float64 and value.ndim == 1:
        v = value   # the hot path: already a vector
    else:
        v = np.asarray(value, dtype=float).reshape(-1) if np.ndim(value) else np.full(n, float(value))
    if v.shape != (n,):
        raise ValueError(f'{name} has {v.size} values, expected {n}')
    if not all_finite(v):
        raise ValueError(f'{name} contains NaN or Inf: {v.tolist()}')
    return v
