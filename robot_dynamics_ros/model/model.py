"""The rigid-body tree model: immutable flat arrays, built once from a URDF (see ``urdf.py``)."""
from dataclasses import dataclass, field, fields
from functools import cached_property

import numpy as np

from .. import spatial

REVOLUTE = 0
PRISMATIC = 1
FREE_FLYER = 2   # q = [x y z qx qy qz qw], v = [linear; angular] in the body frame (Pinocchio's layout)
PLANAR = 3       # q = [x y cos sin], v = [vx vy w] in the body frame, in the xy plane of the joint frame
NQ = {REVOLUTE: 1, PRISMATIC: 1, FREE_FLYER: 7, PLANAR: 4}   # coordinates of each joint type
NV = {REVOLUTE: 1, PRISMATIC: 1, FREE_FLYER: 6, PLANAR: 3}


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
    """Rigid-body tree with one body per moving joint, numbered so that ``parent[i] < i``.

    Body i is the child link of joint i (after fixed joints are merged into it); its frame is the joint
    frame, which moves with the joint. Bodies are numbered depth first in URDF document order (a floating or
    planar root joint first). Joint i has ``NQ[joint_type[i]]`` coordinates in q from ``idx_q[i]`` on and
    ``NV[joint_type[i]]`` in qd, qdd, tau from ``idx_v[i]`` on, in body order, as Pinocchio's. ``joint_names``
    are the 1-DOF joints (revolute, continuous, prismatic) in the order of their coordinates: for a model
    without floating or planar joints, the order of q, qd, tau. ``body_joint_names[i]`` names the joint of
    body i, whatever its type. Position limits are per coordinate of q, the other joint arrays per coordinate
    of qd (unlimited, no damping on floating and planar joints).

    The arrays are read-only (a write raises ValueError): derived data (the packed tables and generated code
    of ``fast``) is cached on the instance, so a changed model is a new Model (``dataclasses.replace``).
    """
    name: str
    root_link: str
    joint_names: tuple
    body_names: tuple           # the URDF child link of each joint
    parent: np.ndarray          # (n,) int, -1 for the fixed root
    joint_type: np.ndarray      # (nb,) REVOLUTE, PRISMATIC, FREE_FLYER or PLANAR
    axis: np.ndarray            # (nb, 3) unit joint axes in the joint frame (zero for floating and planar)
    X_tree: np.ndarray          # (nb, 6, 6) parent body frame -> joint frame at q = 0
    inertia: np.ndarray         # (nb, 6, 6) spatial inertia of body i (fixed children lumped) in its frame
    lower: np.ndarray           # (nq,) position limits, -inf / +inf where unlimited
    upper: np.ndarray
    effort_limit: np.ndarray    # (nv,) +inf where the URDF gives none
    velocity_limit: np.ndarray
    damping: np.ndarray         # (nv,) viscous damping N*m*s/rad or N*s/m
    friction: np.ndarray        # (nv,) Coulomb friction N*m or N
    frames: dict                # link name -> Frame, every URDF link
    root_inertia: np.ndarray = field(default_factory=lambda: np.zeros((6, 6)))  # fixed root body (no effect)
    mimic: dict = field(default_factory=dict)  # joint name -> (mimicked joint, multiplier, offset), kept as data only
    body_joint_names: tuple = None   # the joint of each body; None: joint_names (every joint has 1 DOF)

    def __post_init__(self):
        if self.body_joint_names is None:
            object.__setattr__(self, 'body_joint_names', tuple(self.joint_names))
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
    def nb(self) -> int:
        """The number of bodies (moving joints)."""
        return len(self.parent)

    @cached_property
    def idx_q(self):
        """(nb,) first coordinate of each joint in q."""
        return _read_only(np.cumsum([0] + [NQ[t] for t in self.joint_type])[:-1].astype(int))

    @cached_property
    def idx_v(self):
        """(nb,) first coordinate of each joint in qd, qdd, tau."""
        return _read_only(np.cumsum([0] + [NV[t] for t in self.joint_type])[:-1].astype(int))

    @cached_property
    def nq(self) -> int:
        return int(sum(NQ[t] for t in self.joint_type))

    @cached_property
    def nv(self) -> int:
        return int(sum(NV[t] for t in self.joint_type))

    @cached_property
    def joint_v_index(self):
        """(len(joint_names),) the coordinate of each 1-DOF joint in qd (and q: ``joint_q_index``)."""
        return _read_only(np.array([self.idx_v[self.body_joint_names.index(name)] for name in self.joint_names],
                                   dtype=int))

    @cached_property
    def joint_q_index(self):
        return _read_only(np.array([self.idx_q[self.body_joint_names.index(name)] for name in self.joint_names],
                                   dtype=int))

    @cached_property
    def fixed_base(self) -> bool:
        """Every joint has one degree of freedom (no floating or planar joint): q, qd, tau follow joint_names."""
        return self.nq == self.nv == len(self.joint_names)

    @cached_property
    def quaternions(self):
        """((joint name, first index in q), ...) of the unit quaternions in q (one per floating joint)."""
        return tuple((self.body_joint_names[i], int(self.idx_q[i]) + 3)
                     for i in range(self.nb) if self.joint_type[i] == FREE_FLYER)

    @property
    def motion_subspace(self):
        """(nv, 6) the motion subspace column of each coordinate of qd in its body frame: [axis; 0] for revolute,
        [0; axis] for prismatic; a floating joint's are [0; e_k] then [e_k; 0], a planar one's [0; e_x], [0; e_y],
        [e_z; 0] (Pinocchio's velocity layouts)."""
        S = np.zeros((self.nv, 6))
        for i, (kind, axis, v) in enumerate(zip(self.joint_type, self.axis, self.idx_v)):
            for k, (angular, column) in enumerate(joint_columns(kind, axis)):
                S[v + k, (0 if angular else 3):(3 if angular else 6)] = column
        return S

    @cached_property
    def massless_joints(self):
        """Names of the joints whose moving subtree (the body and all its descendants) has no mass and no
        inertia: their articulated inertia is zero, so M(q) is singular and forward dynamics undefined."""
        massless = [not np.any(I) for I in self.inertia]
        for i in reversed(range(self.nb)):  # gather, tips to base: a subtree is massless if all its bodies are
            p = self.parent[i]
            if p >= 0 and not massless[i]:
                massless[p] = False
        return tuple(name for name, empty in zip(self.body_joint_names, massless) if empty)

    @property
    def children(self):
        """children[i]: the bodies whose parent is i (i = -1 is not included; see ``root_children``)."""
        kids = [[] for _ in range(self.nb)]
        for i, p in enumerate(self.parent):
            if p >= 0:
                kids[p].append(i)
        return kids

    def joint_index(self, name):
        try:
            return self.joint_names.index(name)
        except ValueError:
            raise KeyError(f"no degree of freedom named {name!r}; the model has {list(self.joint_names)}") from None

    def joint_transform(self, i, q_i):
        """X_J(q_i): joint frame at q = 0 -> body frame, for the coordinates q_i of joint i (a scalar for a 1-DOF
        joint)."""
        kind = self.joint_type[i]
        if kind == REVOLUTE:
            return spatial.plucker(spatial.rotation_about_axis(self.axis[i], q_i).T, np.zeros(3))
        if kind == PRISMATIC:
            return spatial.plucker(np.eye(3), self.axis[i] * q_i)
        if kind == FREE_FLYER:
            return spatial.plucker_from_pose(spatial.quaternion_to_matrix(q_i[3:7]), q_i[:3])
        c, s = q_i[2], q_i[3]
        return spatial.plucker_from_pose(np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]),
                                         np.array([q_i[0], q_i[1], 0.0]))

    def joint_coordinates(self, q, i):
        """The coordinates of joint i in q: a scalar for a 1-DOF joint, else the block."""
        start = self.idx_q[i]
        return q[start] if NQ[self.joint_type[i]] == 1 else q[start:start + NQ[self.joint_type[i]]]

    def parent_transforms(self, q):
        """(nb, 6, 6) Xup[i] = X_J(q_i) X_tree[i], the motion transform from body parent[i] to body i."""
        check_state(self, q=q)
        q = np.asarray(q, dtype=float)
        return np.array([self.joint_transform(i, self.joint_coordinates(q, i)) @ self.X_tree[i]
                         for i in range(self.nb)]).reshape(self.nb, 6, 6)

    def neutral(self):
        """The neutral configuration (``configuration.neutral``)."""
        from .configuration import neutral
        return neutral(self)

    def middle_of_limits(self):
        """The middle of each joint's position limits; 0 where a joint is unlimited, clipped into the one limit
        a joint limited on one side has."""
        finite = np.isfinite(self.lower) & np.isfinite(self.upper)
        middle = 0.5 * (np.where(finite, self.lower, 0.0) + np.where(finite, self.upper, 0.0))
        return np.clip(middle, self.lower, self.upper)

    def random_configuration(self, rng):
        """A random configuration (``configuration.random_configuration``)."""
        from .configuration import random_configuration
        return random_configuration(self, rng)


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
