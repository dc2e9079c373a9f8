"""A Model packed once into one flat contiguous array for the compiled kernels (no numba import here).

Row i of ``PackedModel.table`` holds everything the recursions need about body i; the column slices below
name the fields. The parent transform X_tree = plucker(E, r) is kept as rotation E and translation r, and the
spatial inertia as mass m, first moment h = m c and rotational inertia Ibar about the body origin, so the
kernels use 3D rotations and cross products instead of 6x6 matrix products.
"""
import weakref

import numpy as np

from ..algorithms.rnea import spatial_gravity
from ..spatial import _unskew, skew

PARENT, JOINT_TYPE = 0, 1
AXIS = slice(2, 5)
E_TREE = slice(5, 14)    # row-major 3x3
R_TREE = slice(14, 17)
MASS = 17
FIRST_MOMENT = slice(18, 21)
IBAR = slice(21, 30)     # row-major 3x3
N_COLUMNS = 30


class PackedModel:
    """Flat arrays of one Model, plus the default gravity and a zero f_ext, built once per Model."""

    def __init__(self, model):
        n = model.nv
        table = np.zeros((n, N_COLUMNS))
        table[:, PARENT] = model.parent
        table[:, JOINT_TYPE] = model.joint_type
        table[:, AXIS] = model.axis
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
        self.base_acceleration = spatial_gravity(None)
        self.no_external_force = np.zeros((n, 6))

    def base_acceleration_for(self, gravity):
        return self.base_acceleration if gravity is None else spatial_gravity(gravity)


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
