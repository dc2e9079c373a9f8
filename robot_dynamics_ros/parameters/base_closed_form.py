"""Closed-form base parameters of serial chains in modified DH frames (Gautier & Khalil 1990).

1. Parameters with no effect (Sec. III-B, rules 1-3), with r1 the first revolute joint and r2 the first
   revolute joint not parallel to r1.
2. Regrouping from link n down to link 1: revolute joint j (eq. 15) moves YY_j, MZ_j, M_j onto link j-1
   and XXR_j = XX_j - YY_j; prismatic joint j (eqs. 16-17) moves the inertia tensor onto link j-1.
   Whatever reaches link 0 (the fixed base) has no effect.
3. Prismatic links between r1 and r2 parallel to r1 (eqs. 19-20): MZ_j has no effect, MX_j and MY_j
   move onto link j-1. Other prismatic links between r1 and r2 (neither parallel nor perpendicular to
   the previous joint) need eq. (5) case by case and raise NotImplementedError.
Per-joint extras: Fv, Fc, offset are always base parameters; the rotor inertia Ia_j of a revolute joint
regroups into ZZR_j when the angular velocity of link j-1 is always perpendicular to z_j (j <= r1, or
j <= r2 with z_j perpendicular to z_r1); a prismatic joint's Ia_j is always kept, which is not minimal
in special cases (e.g. a prismatic joint parallel to a horizontal r1 between r1 and r2: Ia_j regroups with
the masses); the numeric method finds those.

Any serial URDF chain: when the URDF's frames are not MDH frames, ``mdh_description`` places MDH frames on
its joint axes; each body's standard parameters are mapped into its MDH frame (pi_mdh = L pi_urdf), the
rules run there, and the result is returned in URDF terms: beta = K_mdh L pi_urdf, Y_base = Y L^-1 E with
E selecting the kept MDH columns. Names (and regrouping relations) then name MDH-frame parameters.
Trees (a body with two or more children) are not covered: MDHError, use the numeric method.
Geometric tests (parallel, perpendicular, vertical) compare sines with tol, so that an axis tilted by
1e-6 rad, as in CAD exports with rounded angles, counts as tilted, as it does for the numeric rank.
"""
from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike

from ..algorithms.regressor import JOINT_PARAMETERS, chain_parameter_names, inertia_parameters
from ..algorithms.rnea import STANDARD_GRAVITY
from ..model.mdh import MDHError, MDHJoint, mdh_description, mdh_from_model, mdh_pose, rot_x, rot_z
from ..model.model import Model
from .. import spatial
from .base import BaseParameters, base_from_K

XX, XY, XZ, YY, YZ, ZZ, MX, MY, MZ, M = range(10)
INERTIA = [XX, XY, XZ, YY, YZ, ZZ]


def closed_form_base_parameters(model_or_table: Model | Sequence[MDHJoint], gravity: ArrayLike | None = None,
                                tol: float = 1e-9, rotor_inertia: bool = False, viscous: bool = False,
                                coulomb: bool = False, offset: bool = False) -> BaseParameters:
    """BaseParameters of a serial chain: a Model (any serial URDF chain) or an MDH table.

    gravity: 3-vector in the base (root) frame (default 9.81 along -z); only its direction matters.
    A Model whose frames already follow MDH is used as it is; otherwise see the module doc.
    """
    g = STANDARD_GRAVITY if gravity is None else np.asarray(gravity, dtype=float)
    extras = dict(rotor_inertia=rotor_inertia, viscous=viscous, coulomb=coulomb, offset=offset)
    if not hasattr(model_or_table, 'X_tree'):
        return _closed_form(tuple(MDHJoint(*row) for row in model_or_table), g, tol, **extras)
    if model_or_table.coupling is not None:
        raise MDHError(f"model {model_or_table.name!r} couples mimic joints: its coordinates are no serial chain's")
    try:
        return _closed_form(mdh_from_model(model_or_table), g, tol, **extras)
    except MDHError:
        description = mdh_description(model_or_table)    # MDHError again for a tree
    base = _closed_form(description.table, description.gravity_in_frame0(g), tol, **extras)
    return in_urdf_frames(base, description.inertial_parameter_map())


def in_urdf_frames(base, L):
    """BaseParameters computed on MDH-frame parameters, expressed on URDF-frame ones (pi_mdh = L pi_urdf for
    the body parameters; joint parameters are the same in both): K = K_mdh L, Y_base = Y L^-1 E."""
    p = len(base.parameter_names)
    L_full = np.eye(p)
    L_full[:len(L), :len(L)] = L
    columns = np.linalg.inv(L_full)[:, base.independent]
    return BaseParameters(base.names, base.independent, base.K @ L_full, base.regrouping, base.pivot_gap,
                          base.parameter_names, columns=columns, to_mdh=L_full)


def _closed_form(table, g, tol, rotor_inertia, viscous, coulomb, offset):
    """The Gautier-Khalil rules on an MDH table; gravity g in MDH frame 0."""
    n = len(table)
    extras = [name for name, on in zip(JOINT_PARAMETERS, (rotor_inertia, viscous, coulomb, offset))
              if on is not None and on is not False]
    names = chain_parameter_names(n, rotor_inertia, viscous, coulomb, offset)

    def index(j, k):                            # column of parameter k of link j (0-based); link -1 is the base
        return 10 * j + k if j >= 0 else None

    def extra_index(j, name):
        return 10 * n + len(extras) * j + extras.index(name)

    r1, r2, u = _rotation_axes(table, tol)
    no_effect = _no_effect(table, g, r1, r2, u, tol)
    G = np.eye(len(names))                      # row k: grouped parameter k as a combination of standard ones
    eliminated = set(no_effect)

    def move(source, target_coefficients):
        """Regroup parameter `source` onto `target_coefficients` {column: coefficient}, eq. (6)."""
        eliminated.add(source)
        if source in no_effect:
            return
        for target, c in target_coefficients.items():
            if target is not None and abs(c) > tol:
                G[target] += c * G[source]

    for j in reversed(range(n)):
        row = table[j]
        if row.sigma == 0:
            # eq. (15): a z-symmetric piece (inertia diag(YY_j, YY_j, 0), first moment MZ_j z, mass M_j) moves
            # rigidly onto link j-1; XXR_j = XX_j - YY_j.
            if index(j, YY) not in no_effect:
                G[index(j, XX)] -= G[index(j, YY)]
            for k, piece in ((YY, (XX, YY)), (MZ, (MZ,)), (M, (M,))):
                coefficients = _moved_onto_parent(row, piece)
                move(index(j, k), {index(j - 1, i): c for i, c in enumerate(coefficients)})
        else:
            # eqs. (16)-(17): J R_{j-1} += A J_j A^T with A the orientation of frame j in frame j-1.
            for k in INERTIA:
                coefficients = _moved_onto_parent(row, (k,))
                move(index(j, k), {index(j - 1, i): coefficients[i] for i in INERTIA})
            if r1 is not None and r1 < j < r2 and np.hypot(u[j][0], u[j][1]) < tol:
                _particular_regrouping(row, j, index, move, tol)

    if rotor_inertia is not None and rotor_inertia is not False:
        for j in range(n):
            if table[j].sigma == 0 and (j <= r1 or (j <= r2 and abs(u[j][2]) < tol)):
                move(extra_index(j, 'Ia'), {index(j, ZZ): 1.0})       # ZZR_j = ZZ_j + Ia_j

    independent = [k for k in range(len(names)) if k not in eliminated]
    K = G[independent]
    K[np.abs(K) < tol] = 0.0
    return base_from_K(K, independent, names)


def _moved_onto_parent(row, piece):
    """Standard parameters, in frame j-1, of a piece of link j whose parameters `piece` are 1 (the others 0),
    fixed to frame j at q_j = 0."""
    R, p = mdh_pose(row.alpha, row.a, row.theta, row.d)
    XX_, XY_, XZ_, YY_, YZ_, ZZ_, MX_, MY_, MZ_, m = np.isin(np.arange(10), piece).astype(float)
    I = np.zeros((6, 6))
    I[:3, :3] = [[XX_, XY_, XZ_], [XY_, YY_, YZ_], [XZ_, YZ_, ZZ_]]
    I[:3, 3:] = spatial.skew([MX_, MY_, MZ_])
    I[3:, :3] = I[:3, 3:].T
    I[3:, 3:] = m * np.eye(3)
    X = spatial.plucker_from_pose(R, p)               # frame j-1 -> frame j
    return inertia_parameters(X.T @ I @ X)            # I_{j-1} = X^T I_j X


def _rotation_axes(table, tol):
    """r1, r2 (0-based; r2 = n when every revolute joint is parallel to r1) and, for links j <= r2, the
    direction u_j of z_r1 in frame j (constant there, as the joints between r1 and j are parallel to it)."""
    n = len(table)
    revolute = [j for j, row in enumerate(table) if row.sigma == 0]
    if not revolute:
        return None, n, [None] * n
    r1 = revolute[0]
    u = [None] * n
    u[r1] = np.array([0.0, 0.0, 1.0])
    r2 = n
    for j in range(r1 + 1, n):
        A = rot_x(table[j].alpha) @ rot_z(table[j].theta)   # orientation of frame j in j-1 (theta_j at offset)
        u[j] = A.T @ u[j - 1]
        if table[j].sigma == 0 and np.hypot(u[j][0], u[j][1]) > tol:         # sine of the angle to z_r1
            r2 = j
            break
    return r1, r2, u


def _no_effect(table, g, r1, r2, u, tol):
    """Columns of parameters with no effect on the dynamic model (Sec. III-B)."""
    n = len(table)
    zero = set()
    last = r1 if r1 is not None else n
    for j in range(last):                                 # rule 1: links before r1 do not rotate
        zero.update(10 * j + k for k in INERTIA + [MX, MY, MZ])
    if r1 is None:
        return zero
    z_r1 = _axis_in_base(table, r1)                       # fixed: the joints before r1 are prismatic
    parallel_before = all(np.linalg.norm(np.cross(_axis_in_base(table, j), z_r1)) < tol for j in range(r1))
    if np.linalg.norm(np.cross(z_r1, g)) < tol * np.linalg.norm(g) and parallel_before:
        zero.update({10 * r1 + MX, 10 * r1 + MY})         # rule 2: r1 vertical, its link's moments
    if r1 == 0:
        zero.add(10 * r1 + M)                             # rule 2: m_1 of a first revolute joint
    for j in range(r1, r2):                               # rule 3: links rotating about the fixed axis z_r1
        axis = np.flatnonzero([np.hypot(*np.delete(u[j], k)) < tol for k in range(3)])
        if axis.size != 1:
            raise NotImplementedError(f"link {j + 1}: z_r1 is not along an axis of its frame; eq. (5) needed")
        k = int(axis[0])
        diagonal = (XX, YY, ZZ)[k]
        zero.update(10 * j + i for i in INERTIA if i != diagonal)
        zero.add(10 * j + (MX, MY, MZ)[k])
    return zero


def _axis_in_base(table, j):
    """z_j in the base frame, for j <= r1 (only prismatic joints before it, so independent of q)."""
    R = np.eye(3)
    for row in table[:j + 1]:
        R = R @ rot_x(row.alpha) @ rot_z(row.theta)
    return R[:, 2]


def _particular_regrouping(row, j, index, move, tol):
    """eqs. (19)-(20): prismatic link j between r1 and r2, parallel to r1: MX_j, MY_j onto link j-1."""
    sa, ca = np.sin(row.alpha), np.cos(row.alpha)
    st, ct = np.sin(row.theta), np.cos(row.theta)
    d = row.a                                             # the paper's d_j (along x_{j-1})

    def previous(k):
        return index(j - 1, k)
    if abs(sa) < tol:                                     # eq. (19)
        move(index(j, MX), {previous(ZZ): 2 * d * ct, previous(MX): ct, previous(MY): st * ca})
        move(index(j, MY), {previous(ZZ): -2 * d * st, previous(MX): -st, previous(MY): ct * ca})
    elif abs(ca) < tol:                                   # eq. (20)
        move(index(j, MX), {previous(YY): 2 * d * ct, previous(MX): ct, previous(MZ): sa * st})
        move(index(j, MY), {previous(YY): -2 * d * st, previous(MX): -st, previous(MZ): sa * ct})
    else:
        raise NotImplementedError(f"link {j + 1}: prismatic between r1 and r2 with alpha neither 0 nor "
                                  "+-pi/2; eq. (5) needed")
