"""A Model packed once into one flat contiguous array for the recursions (``backends.py``).

Row i of ``PackedModel.table`` holds everything the recursions need about body i; the column slices below
name the fields. The parent transform X_tree = plucker(E, r) is kept as rotation E and translation r, and the
spatial inertia as mass m, first moment h = m c and rotational inertia Ibar about the body origin, so the
kernels use 3D rotations and cross products instead of 6x6 matrix products. AXIS_INDEX is k when the joint
axis is +-e_k (most URDF axes), so kernels touch one component; -1 for a general axis.

The table is constant after packing. The kernels' per-body work space (transforms, velocities, inertias, ...)
is the separate ``Data.work`` array, one row per body, whose named fields each kernel module declares with
``work_fields`` (the column offsets are computed there, never counted by hand): a call writes there instead
of allocating. Compiled kernels hold the GIL (numba's default), so Python threads that share a Model's Data never
run them at the same time; the batched kernels and the plain-Python reference work in their own copy of it.
"""
import numpy as np

from ..spatial import _unskew, skew

STANDARD_GRAVITY = np.array([0.0, 0.0, -9.81])

PARENT, JOINT_TYPE, AXIS_INDEX = 0, 1, 2
AXIS = slice(3, 6)
E_TREE = slice(6, 15)    # row-major 3x3
R_TREE = slice(15, 18)
MASS = 18
FIRST_MOMENT = slice(19, 22)
IBAR = slice(22, 31)     # row-major 3x3
SPATIAL_INERTIA = slice(31, 67)   # the same inertia as a row-major 6x6 matrix
N_COLUMNS = 67


def spatial_gravity(gravity):
    """Base acceleration that stands in for gravity: a_0 = -[0; g] (the base accelerates upwards)."""
    g = STANDARD_GRAVITY if gravity is None else np.asarray(gravity, dtype=float)
    return np.concatenate([np.zeros(3), -g])


def work_fields(**widths):
    """{name: first column} for per-body work fields of the given widths laid side by side, and 'width': the
    columns they take together. A kernel module names its fields with this (numba reads the offsets as
    constants), so no column offset is counted by hand."""
    offsets, start = {}, 0
    for name, width in widths.items():
        offsets[name] = start
        start += width
    offsets['width'] = start
    return offsets


KINEMATICS = dict(X=12, v=6, a=6, vJ=6, aJ=6)   # RNEA's scatter (kinematic_scatter), shared by the regressor
RNEA = work_fields(**KINEMATICS, Iv=6, f=6)
REGRESSOR = work_fields(**KINEMATICS, A=60, X_i_from_j=12, composed=12, S_j=6, S_j_in_i=6)   # A: 6x10 column-major
CRBA = work_fields(X=12, Ic=13, F=6, F_parent=6, T=18)                   # Ic: [mass, h, Ibar]
ABA = work_fields(X=12, v=6, c=6, pA=6, IA=36, U=6, D=1, u=1, a=6, vJ=6, Iv=6, pa=6, scratch=45)
UDUT = work_fields(X=12, IA=36, psi=6, force=6, carried=6, scratch=45)
WORK_WIDTH = max(fields['width'] for fields in (RNEA, REGRESSOR, CRBA, ABA, UDUT))


class Data:
    """Per-call work buffers of the compiled kernels for one model (Pinocchio's Data): ``work`` has one row per
    body and WORK_WIDTH columns; each kernel reads its named fields (RNEA, CRBA, ABA, ...) from it."""

    def __init__(self, nv):
        self.work = np.zeros((nv, WORK_WIDTH))


class PackedModel:
    """Flat arrays of one Model, its kernels' Data, the default gravity and a zero f_ext, built once per Model."""

    def __init__(self, model):
        n = model.nv
        table = np.zeros((n, N_COLUMNS))
        table[:, PARENT] = model.parent
        table[:, JOINT_TYPE] = model.joint_type
        table[:, AXIS] = model.axis
        table[:, AXIS_INDEX] = [_axis_index(axis) for axis in model.axis]
        for i in range(n):
            E = model.X_tree[i][:3, :3]
            table[i, E_TREE] = _rounding_noise_to_zero(E.ravel())
            table[i, R_TREE] = _rounding_noise_to_zero(_unskew(-E.T @ model.X_tree[i][3:, :3]))  # X[3:, :3] = -E [r]x
            I = model.inertia[i]
            mass, h, Ibar = I[3, 3], _unskew(I[:3, 3:]), I[:3, :3]   # I[:3, 3:] = [h]x
            h, Ibar = _rounding_noise_to_zero(h, mass), _rounding_noise_to_zero(Ibar, np.abs(Ibar).max())
            table[i, MASS] = mass
            table[i, FIRST_MOMENT] = h
            table[i, IBAR] = Ibar.ravel()
            rebuilt = np.block([[Ibar, skew(h)], [skew(h).T, mass * np.eye(3)]]).ravel()
            table[i, SPATIAL_INERTIA] = rebuilt
            if not np.allclose(rebuilt, I.ravel(), rtol=0.0, atol=1e-12 * max(1.0, np.abs(I).max())):
                raise ValueError(f"body {model.body_names[i]!r}: inertia lacks the [[Ibar, h x], [h x^T, m 1]] form")
        self.table = table
        self.data = Data(n)
        self.nv = n
        self.default_base_acceleration = spatial_gravity(None)
        self.no_external_force = np.zeros((n, 6))

    def base_acceleration(self, gravity):
        """a_0 for the kernels: the precomputed default, or -[0; gravity]."""
        return self.default_base_acceleration if gravity is None else spatial_gravity(gravity)

    def external_force(self, f_ext):
        """f_ext for the kernels: zeros for None."""
        return self.no_external_force if f_ext is None else f_ext

    def work(self):
        """A work array of its own for one call of a kernel run as plain Python (which, unlike compiled code,
        lets other threads run in between)."""
        return np.zeros_like(self.data.work)


def _rounding_noise_to_zero(values, scale=1.0):
    """values with entries below 1e-14 scale set to zero: the 6e-17 that cos(pi/2) leaves in a rotation (URDF rpy
    of +-pi/2 are common) would cost the generated code a product each, for a change of the results near 1e-17."""
    return np.where(np.abs(values) < 1e-14 * scale, 0.0, values)


def _axis_index(axis):
    """k when axis is +-e_k, else -1."""
    for k in range(3):
        if abs(axis[k]) == 1.0 and np.count_nonzero(axis) == 1:
            return k
    return -1


def as_float_arrays(*arrays):
    """C-contiguous, writable float64 arrays (copies where needed: compiled kernels take no read-only arrays, such
    as a Model's own arrays)."""
    return [np.require(x, dtype=float, requirements=['C', 'W']) for x in arrays]


def packed(model):
    """The PackedModel of ``model``, built on first use and cached on the (immutable) Model instance."""
    try:
        return model._cache['packed']
    except KeyError:
        pack = model._cache['packed'] = PackedModel(model)
        return pack
