"""The rigid-body tree model: immutable flat arrays, built once from a URDF (see ``urdf.py``)."""
from dataclasses import dataclass, field, fields
from functools import cached_property

import numpy as np

from .. import spatial

REVOLUTE = 0
PRISMATIC = 1


def _read_only(array):
    """A read-only array: ``array`` itself when it already is one that owns its data, else a read-only copy (so
    that no caller keeps a writable view of model data)."""
    if isinstance(array, np.ndarray) and not array.flags.writeable and array.base is None:
        return array
    array = np.array(array)
    array.flags.writeable = False
    return array


@dataclass(frozen=True, eq=False)
class Frame:
    """A link frame: the moving body it is rigidly attached to (-1: the fixed root) and body_X_frame."""
    name: str
    body: int
    X_body: np.ndarray  # motion transform from the body frame to this link frame

    def __post_init__(self):
        object.__setattr__(self, 'X_body', _read_only(self.X_body))


@dataclass(frozen=True, eq=False)
class Model:
    """Rigid-body tree with one body per degree of freedom, numbered so that ``parent[i] < i``.

    Body i is the child link of joint i (after fixed joints are merged into it); its frame is the joint
    frame, which moves with the joint. ``joint_names[i]`` is the name of DOF i: the order of q, qd, tau.
    Bodies are numbered depth first in URDF document order.

    The arrays are read-only (a write raises ValueError): derived data (the packed tables and generated code
    of ``fast``) is cached on the instance, so a changed model is a new Model (``dataclasses.replace``).
    """
    name: str
    root_link: str
    joint_names: tuple
    body_names: tuple           # the URDF child link of each joint
    parent: np.ndarray          # (n,) int, -1 for the fixed root
    joint_type: np.ndarray      # (n,) REVOLUTE or PRISMATIC
    axis: np.ndarray            # (n, 3) unit joint axes in the joint frame
    X_tree: np.ndarray          # (n, 6, 6) parent body frame -> joint frame at q = 0
    inertia: np.ndarray         # (n, 6, 6) spatial inertia of body i (fixed children lumped) in its frame
    lower: np.ndarray           # (n,) position limits, -inf / +inf where unlimited
    upper: np.ndarray
    effort_limit: np.ndarray    # (n,) +inf where the URDF gives none
    velocity_limit: np.ndarray
    damping: np.ndarray         # (n,) viscous damping N*m*s/rad or N*s/m
    friction: np.ndarray        # (n,) Coulomb friction N*m or N
    frames: dict                # link name -> Frame, every URDF link
    root_inertia: np.ndarray = field(default_factory=lambda: np.zeros((6, 6)))  # fixed root body (no effect)
    mimic: dict = field(default_factory=dict)  # joint name -> (mimicked joint, multiplier, offset), kept as data only

    def __post_init__(self):
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, np.ndarray):
                object.__setattr__(self, f.name, _read_only(value))
        object.__setattr__(self, '_cache', {})   # derived data of this instance (fast.packing, fast.codegen)

    def __getstate__(self):   # copies and pickles rebuild the derived data instead of sharing it
        return {name: value for name, value in self.__dict__.items() if name != '_cache'}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.__post_init__()

    @cached_property
    def nv(self) -> int:
        return len(self.joint_names)

    @cached_property
    def nq(self) -> int:
        return len(self.joint_names)

    @property
    def motion_subspace(self):
        """(n, 6) joint motion subspace S_i: [axis; 0] for revolute, [0; axis] for prismatic."""
        S = np.zeros((self.nv, 6))
        rev = self.joint_type == REVOLUTE
        S[rev, :3] = self.axis[rev]
        S[~rev, 3:] = self.axis[~rev]
        return S

    @cached_property
    def massless_joints(self):
        """Names of the joints whose moving subtree (the body and all its descendants) has no mass and no
        inertia: their articulated inertia is zero, so M(q) is singular and forward dynamics undefined."""
        massless = [not np.any(I) for I in self.inertia]
        for i in reversed(range(self.nv)):  # gather, tips to base: a subtree is massless if all its bodies are
            p = self.parent[i]
            if p >= 0 and not massless[i]:
                massless[p] = False
        return tuple(name for name, empty in zip(self.joint_names, massless) if empty)

    @property
    def children(self):
        """children[i]: the bodies whose parent is i (i = -1 is not included; see ``root_children``)."""
        kids = [[] for _ in range(self.nv)]
        for i, p in enumerate(self.parent):
            if p >= 0:
                kids[p].append(i)
        return kids

    def joint_index(self, name):
        try:
            return self.joint_names.index(name)
        except ValueError:
            raise KeyError(f"no degree of freedom named {name!r}; the model has {list(self.joint_names)}") from None

    def joint_transform(self, i, qi):
        """X_J(q_i): joint frame at q = 0 -> body frame at q_i."""
        if self.joint_type[i] == REVOLUTE:
            return spatial.plucker(spatial.rotation_about_axis(self.axis[i], qi).T, np.zeros(3))
        return spatial.plucker(np.eye(3), self.axis[i] * qi)

    def parent_transforms(self, q):
        """(n, 6, 6) Xup[i] = X_J(q_i) X_tree[i], the motion transform from body parent[i] to body i."""
        check_state(self, q=q)
        return np.array([self.joint_transform(i, q[i]) @ self.X_tree[i] for i in range(self.nv)])

    def neutral(self):
        """Zero configuration clipped into the position limits."""
        return np.clip(np.zeros(self.nv), self.lower, self.upper)

    def middle_of_limits(self):
        """The middle of each joint's position limits; 0 where a joint is unlimited, clipped into the one limit
        a joint limited on one side has."""
        finite = np.isfinite(self.lower) & np.isfinite(self.upper)
        middle = 0.5 * (np.where(finite, self.lower, 0.0) + np.where(finite, self.upper, 0.0))
        return np.clip(middle, self.lower, self.upper)

    def random_configuration(self, rng):
        """Uniform in the position limits; in [-pi, pi] (revolute) or [-1, 1] (prismatic) where unlimited,
        and over twice that span from the one limit a joint limited on one side has."""
        span = np.where(self.joint_type == REVOLUTE, np.pi, 1.0)
        lo = np.where(np.isfinite(self.lower), self.lower, np.minimum(-span, self.upper - 2 * span))
        hi = np.where(np.isfinite(self.upper), self.upper, np.maximum(span, self.lower + 2 * span))
        return rng.uniform(lo, hi)


def check_state(model, **arrays):
    """Raise ValueError naming the first argument whose shape is not (nv,) (f_ext: (nv, 6); None is skipped).
    Every backend validates its arguments with this, so a wrong length gives the same error everywhere."""
    n = model.nv
    for name, value in arrays.items():
        if value is None:
            continue
        expected = (n, 6) if name == 'f_ext' else (n,)
        shape = np.shape(value)
        if shape != expected:
            raise ValueError(f"{name} has shape {shape}; the {n}-DOF model {model.name!r} needs {expected}")


def check_states(model, **arrays):
    """As ``check_state`` for batches: shape (N, nv) with the same N for every array (f_ext: (nv, 6) or
    (N, nv, 6))."""
    n = model.nv
    count = None
    for name, value in arrays.items():
        if value is None:
            continue
        shape = np.shape(value)
        if name == 'f_ext':
            if shape != (n, 6) and not (len(shape) == 3 and shape[1:] == (n, 6) and shape[0] == count):
                raise ValueError(f"{name} has shape {shape}; the {n}-DOF model {model.name!r} needs ({n}, 6) "
                                 f"or ({count}, {n}, 6)")
            continue
        count = shape[0] if count is None and len(shape) == 2 else count
        if shape != (count, n):
            raise ValueError(f"{name} has shape {shape}; the {n}-DOF model {model.name!r} needs "
                             f"({count if count is not None else 'N'}, {n})")
