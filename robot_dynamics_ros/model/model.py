"""The rigid-body tree model: immutable flat arrays, built once from a URDF (see ``urdf.py``)."""
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from .. import spatial

REVOLUTE = 0
PRISMATIC = 1


@dataclass(frozen=True, eq=False)
class Frame:
    """A link frame: the moving body it is rigidly attached to (-1: the fixed root) and body_X_frame."""
    name: str
    body: int
    X_body: np.ndarray  # motion transform from the body frame to this link frame


@dataclass(frozen=True, eq=False)
class Model:
    """Rigid-body tree with one body per degree of freedom, numbered so that ``parent[i] < i``.

    Body i is the child link of joint i (after fixed joints are merged into it); its frame is the joint
    frame, which moves with the joint. ``joint_names[i]`` is the name of DOF i: the order of q, qd, tau.
    Bodies are numbered depth first in URDF document order.
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

    @property
    def nv(self):
        return len(self.joint_names)

    @property
    def nq(self):
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
        return np.array([self.joint_transform(i, q[i]) @ self.X_tree[i] for i in range(self.nv)])

    def neutral(self):
        """Zero configuration clipped into the position limits."""
        return np.clip(np.zeros(self.nv), self.lower, self.upper)

    def random_configuration(self, rng):
        """Uniform in the position limits; in [-pi, pi] (revolute) or [-1, 1] (prismatic) where unlimited,
        and over twice that span from the one limit a joint limited on one side has."""
        span = np.where(self.joint_type == REVOLUTE, np.pi, 1.0)
        lo = np.where(np.isfinite(self.lower), self.lower, np.minimum(-span, self.upper - 2 * span))
        hi = np.where(np.isfinite(self.upper), self.upper, np.maximum(span, self.lower + 2 * span))
        return rng.uniform(lo, hi)
