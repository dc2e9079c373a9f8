"""The rigid-body tree model: immutable flat arrays, built once from a URDF (see ``urdf.py``)."""
from dataclasses import dataclass, field, fields, replace
from functools import cached_property

import numpy as np

from .. import spatial
from .joints import (FREE_FLYER, NQ, NV, PLANAR, PRISMATIC, REVOLUTE, check_state, check_states,  # noqa: F401
                     joint_columns, neutral_coordinates, random_coordinates)
from .mimic import unsupported


def read_only(array):
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
    parent_link: str | None = None   # the URDF link this one hangs from (None for the root link)

    def __post_init__(self):
        object.__setattr__(self, 'X_body', read_only(self.X_body))


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

    With mimic joints as coupled coordinates (``coupling``, see ``mimic.py``), q and qd hold the independent
    joints only, in body order; a mimic joint's body keeps its frame, and ``idx_q``/``idx_v`` of its body give
    its master's coordinate. ``tree`` is the model in which every joint is a degree of freedom, and
    ``joint_positions`` gives every joint's position (for /joint_states).

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
    mimic: dict = field(default_factory=dict)  # joint name -> (master joint, multiplier, offset) of URDF <mimic>
    body_joint_names: tuple = None   # the joint of each body; None: joint_names (every joint has 1 DOF)
    coupling: object = None   # mimic.Coupling when mimic joints are coupled coordinates, else None

    def __post_init__(self):
        if self.body_joint_names is None:
            object.__setattr__(self, 'body_joint_names', tuple(self.joint_names))
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, np.ndarray):
                object.__setattr__(self, f.name, read_only(value))
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
        if self.coupling is not None:
            return self.coupling.body_q
        return read_only(np.cumsum([0] + [NQ[t] for t in self.joint_type])[:-1].astype(int))

    @cached_property
    def idx_v(self):
        """(nb,) first coordinate of each joint in qd, qdd, tau."""
        if self.coupling is not None:
            return self.coupling.body_v
        return read_only(np.cumsum([0] + [NV[t] for t in self.joint_type])[:-1].astype(int))

    @cached_property
    def nq(self) -> int:
        if self.coupling is not None:
            return self.coupling.Gq.shape[1]
        return int(sum(NQ[t] for t in self.joint_type))

    @cached_property
    def nv(self) -> int:
        if self.coupling is not None:
            return self.coupling.G.shape[1]
        return int(sum(NV[t] for t in self.joint_type))

    @cached_property
    def joint_v_index(self):
        """(len(joint_names),) the coordinate of each 1-DOF joint in qd (and q: ``joint_q_index``)."""
        return read_only(np.array([self.idx_v[self.body_joint_names.index(name)] for name in self.joint_names],
                                   dtype=int))

    @cached_property
    def joint_q_index(self):
        return read_only(np.array([self.idx_q[self.body_joint_names.index(name)] for name in self.joint_names],
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

    @cached_property
    def coordinate_bodies(self):
        """The bodies whose joints own coordinates of q and qd: all but those of coupled mimic joints."""
        return read_only(np.array([b for b in range(self.nb) if self.coupling is None
                                   or self.body_joint_names[b] not in self.mimic], dtype=int))

    @property
    def tree(self):
        """The model in which every joint is a degree of freedom: this one unless mimic joints are coupled (then
        built from this model's bodies, so that a ``dataclasses.replace`` of them reaches it)."""
        if self.coupling is None:
            return self
        if 'tree' not in self._cache:
            self._cache['tree'] = replace(self, coupling=None, **self.coupling.tree_joints)
        return self._cache['tree']

    @property
    def all_joint_names(self):
        """Every 1-DOF joint, mimic joints included, in the order of ``joint_positions``."""
        return self.tree.joint_names

    def joint_positions(self, q, qd=None):
        """(positions, velocities) of every 1-DOF joint (``all_joint_names``, mimic joints included) at (q, qd);
        velocities None when qd is None."""
        tree = self.tree
        q_tree = q if self.coupling is None else self.coupling.tree_positions(q)
        qd_tree = qd if self.coupling is None or qd is None else self.coupling.tree_velocities(qd)
        return (np.asarray(q_tree, dtype=float)[tree.joint_q_index],
                None if qd is None else np.asarray(qd_tree, dtype=float)[tree.joint_v_index])

    @property
    def motion_subspace(self):
        """(nv, 6) the motion subspace column of each coordinate of qd in its body frame: [axis; 0] for revolute,
        [0; axis] for prismatic; a floating joint's are [0; e_k] then [e_k; 0], a planar one's [0; e_x], [0; e_y],
        [e_z; 0] (Pinocchio's velocity layouts). Not defined with coupled mimic joints (see ``tree``)."""
        if self.coupling is not None:
            raise unsupported(self)
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
        if self.coupling is not None:
            return self.tree.joint_coordinates(self.coupling.tree_positions(q), i)
        start = self.idx_q[i]
        return q[start] if NQ[self.joint_type[i]] == 1 else q[start:start + NQ[self.joint_type[i]]]

    def parent_transforms(self, q):
        """(nb, 6, 6) Xup[i] = X_J(q_i) X_tree[i], the motion transform from body parent[i] to body i."""
        check_state(self, q=q)
        if self.coupling is not None:
            return self.tree.parent_transforms(self.coupling.tree_positions(q))
        q = np.asarray(q, dtype=float)
        return np.array([self.joint_transform(i, self.joint_coordinates(q, i)) @ self.X_tree[i]
                         for i in range(self.nb)]).reshape(self.nb, 6, 6)

    def neutral(self):
        """The neutral configuration (``configuration.neutral``)."""
        bodies = self.coordinate_bodies
        return neutral_coordinates(self.joint_type[bodies], self.idx_q[bodies], self.lower, self.upper)

    def middle_of_limits(self):
        """The middle of each joint's position limits; 0 where a joint is unlimited, clipped into the one limit
        a joint limited on one side has."""
        finite = np.isfinite(self.lower) & np.isfinite(self.upper)
        middle = 0.5 * (np.where(finite, self.lower, 0.0) + np.where(finite, self.upper, 0.0))
        return np.clip(middle, self.lower, self.upper)

    def random_configuration(self, rng):
        """A random configuration (``configuration.random_configuration``)."""
        bodies = self.coordinate_bodies
        return random_coordinates(self.joint_type[bodies], self.idx_q[bodies], self.lower, self.upper, rng)
