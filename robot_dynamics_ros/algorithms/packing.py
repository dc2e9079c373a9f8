"""A Model packed once into one flat contiguous array for the recursions (``backends.py``).

Row i of ``PackedModel.table`` holds everything the recursions need about velocity coordinate i, and the column
slices below name the fields. A 1-DOF joint is one row: its body. A joint of several degrees of freedom (floating,
planar) is one row per column of its motion subspace S, a chain in the one body frame: the first row carries the
joint transform X_J(q) (TRANSFORM, from the coordinates at Q_INDEX), the others continue it (TRANSFORM =
CONTINUED: the identity), each adds one column of S (a unit vector in the body frame, see
``model.joint_columns``), and the last carries the body's inertia and its children. Each recursion then runs as
written for 1-DOF joints, with one change: the velocity-product term of a joint, v_i x S_i qd_i, is taken with the
velocity the joint's first row receives from the parent, v_in (work field 'vin'), which for a 1-DOF joint gives the
same value (v_i = v_in + S_i qd_i and S_i qd_i x S_i qd_i = 0) and for a multi-DOF joint gives
v_in x S qd = v x S qd, the term of its constant body-frame S (Featherstone RBDA Sec. 4.4: c_J = 0). In the
articulated-body and U D U^T gathers the rows of one joint eliminate its w x w pivot block D_i = S^T IA S column by
column (the block's own L D L^T), so D stays diagonal (M = U D U^T, U unit upper triangular; the free-flyer's 6x6
block pivot is six scalar pivots). The parent transform X_tree = plucker(E, r) is kept as rotation E and translation r, and the
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

from ..model.mimic import unsupported
from ..model.model import NQ, NV, PRISMATIC, REVOLUTE, read_only, joint_columns
from ..spatial import unskew, skew

STANDARD_GRAVITY = np.array([0.0, 0.0, -9.81])

PARENT, JOINT_TYPE, AXIS_INDEX = 0, 1, 2
AXIS = slice(3, 6)
E_TREE = slice(6, 15)    # row-major 3x3
R_TREE = slice(15, 18)
MASS = 18
FIRST_MOMENT = slice(19, 22)
IBAR = slice(22, 31)     # row-major 3x3
SPATIAL_INERTIA = slice(31, 67)   # the same inertia as a row-major 6x6 matrix
TRANSFORM = 67           # the joint transform of the row: REVOLUTE, PRISMATIC, FREE_FLYER, PLANAR or CONTINUED
Q_INDEX = 68             # where the row's joint coordinates start in q
Q_END = 69               # where they end (so the last row's Q_END is nq)
N_COLUMNS = 70
CONTINUED = 4            # TRANSFORM of the rows after the first of a multi-DOF joint (the identity)


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


KINEMATICS = dict(X=12, v=6, a=6, vJ=6, aJ=6, vin=6)   # RNEA's scatter (kinematic_scatter), shared by the regressor
RNEA = work_fields(**KINEMATICS, Iv=6, f=6)
REGRESSOR = work_fields(**KINEMATICS, A=60, X_i_from_j=12, composed=12, S_j=6, S_j_in_i=6)   # A: 6x10 column-major
CRBA = work_fields(X=12, Ic=13, F=6, F_parent=6)                   # Ic: [mass, h, Ibar]
ABA = work_fields(X=12, v=6, c=6, pA=6, IA=36, U=6, D=1, u=1, a=6, vJ=6, Iv=6, pa=6, vin=6)
UDUT = work_fields(X=12, IA=36, psi=6)
WORLD = work_fields(S=6, I=13, v=6, a=6, vin=6, Iv=6, f=6, IA=36, psi=6)   # world_frame, world_rnea, world_udut
WORK_WIDTH = max(fields['width'] for fields in (RNEA, REGRESSOR, CRBA, ABA, UDUT, WORLD))


class Data:
    """Per-call work buffers of the compiled kernels for one model (Pinocchio's Data): ``work`` has one row per
    body and WORK_WIDTH columns; each kernel reads its named fields (RNEA, CRBA, ABA, ...) from it."""

    def __init__(self, nv):
        self.work = np.zeros((nv, WORK_WIDTH))


class PackedModel:
    """Flat arrays of one Model, its kernels' Data, the default gravity and a zero f_ext, built once per Model.
    ``body_row[b]``: the row of body b (the last of its joint's rows)."""

    def __init__(self, model):
        n = model.nv
        table = np.zeros((n, N_COLUMNS))
        self.body_row = read_only(model.idx_v + np.array([NV[t] for t in model.joint_type], dtype=int) - 1)
        for b in range(model.nb):
            kind, first = model.joint_type[b], model.idx_v[b]
            q_start = model.idx_q[b]
            for k, (angular, axis) in enumerate(joint_columns(kind, model.axis[b])):
                row = first + k
                table[row, PARENT] = (self.body_row[model.parent[b]] if model.parent[b] >= 0 else -1) if k == 0 \
                    else row - 1
                table[row, JOINT_TYPE] = REVOLUTE if angular else PRISMATIC
                table[row, AXIS] = axis
                table[row, AXIS_INDEX] = _axis_index(axis)
                table[row, TRANSFORM] = kind if k == 0 else CONTINUED
                table[row, Q_INDEX], table[row, Q_END] = q_start, q_start + NQ[kind]
                table[row, E_TREE] = np.eye(3).ravel()
        for i, b in enumerate(self.body_row):
            first = model.idx_v[i]
            E = model.X_tree[i][:3, :3]
            table[first, E_TREE] = _rounding_noise_to_zero(E.ravel())
            table[first, R_TREE] = _rounding_noise_to_zero(unskew(-E.T @ model.X_tree[i][3:, :3]))  # X[3:, :3] = -E [r]x
            I = model.inertia[i]
            mass, h, Ibar = I[3, 3], unskew(I[:3, 3:]), I[:3, :3]   # I[:3, 3:] = [h]x
            h, Ibar = _rounding_noise_to_zero(h, mass), _rounding_noise_to_zero(Ibar, np.abs(Ibar).max())
            table[b, MASS] = mass
            table[b, FIRST_MOMENT] = h
            table[b, IBAR] = Ibar.ravel()
            rebuilt = np.block([[Ibar, skew(h)], [skew(h).T, mass * np.eye(3)]]).ravel()
            table[b, SPATIAL_INERTIA] = rebuilt
            if not np.allclose(rebuilt, I.ravel(), rtol=0.0, atol=1e-12 * max(1.0, np.abs(I).max())):
                raise ValueError(f"body {model.body_names[i]!r}: inertia lacks the [[Ibar, h x], [h x^T, m 1]] form")
        self.row_body = read_only(np.repeat(np.arange(model.nb), [NV[t] for t in model.joint_type]))
        self.table = table
        self.data = Data(n)
        self.nv, self.nq = n, model.nq
        self.angles = [int(table[i, Q_INDEX]) for i in range(n) if table[i, TRANSFORM] == REVOLUTE]   # q of revolutes
        self.rows_are_bodies = model.nb == n
        self.default_base_acceleration = spatial_gravity(None)
        self.no_external_force = np.zeros((n, 6))

    def base_acceleration(self, gravity):
        """a_0 for the kernels: the precomputed default, or -[0; gravity]."""
        return self.default_base_acceleration if gravity is None else spatial_gravity(gravity)

    def external_force(self, f_ext):
        """f_ext for the kernels, one force per row: zeros for None; the (..., nb, 6) forces on the bodies put on
        the body rows."""
        if f_ext is None:
            return self.no_external_force
        if self.rows_are_bodies:
            return f_ext
        f_ext = np.asarray(f_ext, dtype=float)
        rows = np.zeros(f_ext.shape[:-2] + (self.nv, 6))
        rows[..., self.body_row, :] = f_ext
        return rows

    def rows(self, values):
        """The body-row entries of a per-row array (axis 0): the values of the bodies."""
        return values if self.rows_are_bodies else values[self.body_row]

    def work(self):
        """A work array of its own for one call of a kernel run as plain Python (which, unlike compiled code,
        lets other threads run in between)."""
        return np.zeros_like(self.data.work)


def transforms_6x6(X):
    """(n, 6, 6) Plücker matrices of the kernels' (n, 12) transforms [E (row-major); r]."""
    out = np.zeros((len(X), 6, 6))
    for i, row in enumerate(X):
        E = row[:9].reshape(3, 3)
        out[i, :3, :3] = out[i, 3:, 3:] = E
        out[i, 3:, :3] = -E @ skew(row[9:12])
    return out


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
    """The PackedModel of ``model``, built on first use and cached on the (immutable) Model instance. Not for a
    model with coupled mimic joints (its coordinates move several bodies): pack ``model.tree``."""
    if model.coupling is not None:
        raise unsupported(model)
    try:
        return model._cache['packed']
    except KeyError:
        pack = model._cache['packed'] = PackedModel(model)
        return pack
