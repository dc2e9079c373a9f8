"""A Model packed once into one flat contiguous array for the compiled kernels (no numba import here).

Row i of ``PackedModel.table`` holds everything the recursions need about body i; the column slices below
name the fields. The parent transform X_tree = plucker(E, r) is kept as rotation E and translation r, and the
spatial inertia as mass m, first moment h = m c and rotational inertia Ibar about the body origin, so the
kernels use 3D rotations and cross products instead of 6x6 matrix products. AXIS_INDEX is k when the joint
axis is +-e_k (most URDF axes), so kernels touch one component; -1 for a general axis.

Columns from WORK on are the kernels' per-body work space (transforms, velocities, inertias, ...): a
single call writes there instead of allocating. Kernels hold the GIL (numba's default), so Python threads
that share a Model never run them at the same time; the batched kernels work in their own copy of the table.
"""
import weakref

import numpy as np

from ..algorithms.rnea import spatial_gravity
from ..spatial import _unskew, skew

PARENT, JOINT_TYPE, AXIS_INDEX = 0, 1, 2
AXIS = slice(3, 6)
E_TREE = slice(6, 15)    # row-major 3x3
R_TREE = slice(15, 18)
MASS = 18
FIRST_MOMENT = slice(19, 22)
IBAR = slice(22, 31)     # row-major 3x3
WORK = 31
WORK_COLUMNS = 156       # the widest kernel's need (regressor, see regressor_kernel.py)
N_COLUMNS = WORK + WORK_COLUMNS


class PackedModel:
    """Flat arrays of one Model, plus the default gravity and a zero f_ext, built once per Model."""

    def __init__(self, model):
        n = model.nv
        table = np.zeros((n, N_COLUMNS))
        table[:, PARENT] = model.parent
        table[:, JOINT_TYPE] = model.joint_type
        table[:, AXIS] = model.axis
        table[:, AXIS_INDEX] = [_axis_index(axis) for axis in model.axis]
        for i in range(n):
            E = model.X_tree[i][:3, :3]
            table[i, E_TREE] = E.ravel()
            table[i, R_TREE] = _unskew(-E.T @ model.X_tree[i][3:, :3])  # X[3:, :3] = -E skew(r)
            I = model.inertia[i]
            mass, h = I[3, 3], _unskew(I[:3, 3:])                 # I[:3, 3:] = skew(h)
            table[i, MASS] = mass
            table[i, FIRST_MOMENT] = h
            table[i, IBAR] = I[:3, :3].ravel()
            rebuilt = np.block([[I[:3, :3], skew(h)], [skew(h).T, mass * np.eye(3)]])
            if not np.allclose(rebuilt, I, rtol=0.0, atol=1e-12 * max(1.0, np.abs(I).max())):
                raise ValueError(f"body {model.body_names[i]!r}: inertia lacks the [[Ibar, h x], [h x^T, m 1]] form")
        self.table = table
        self.nv = n
        self.default_base_acceleration = spatial_gravity(None)
        self.no_external_force = np.zeros((n, 6))

    def base_acceleration(self, gravity):
        """a_0 for the kernels: the precomputed default, or -[0; gravity]."""
        return self.default_base_acceleration if gravity is None else spatial_gravity(gravity)



def _axis_index(axis):
    """k when axis is +-e_k, else -1."""
    for k in range(3):
        if abs(axis[k]) == 1.0 and np.count_nonzero(axis) == 1:
            return k
    return -1


_packs = weakref.WeakKeyDictionary()
_last = (None, None)


def packed(model):
    """The PackedModel of ``model``, built on first use and cached per Model instance."""
    global _last
    last_model, pack = _last
    if last_model is model:
        return pack
    pack = _packs.get(model)
    if pack is None:
        pack = _packs[model] = PackedModel(model)
    _last = (model, pack)
    return pack
