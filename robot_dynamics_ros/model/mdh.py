"""Modified Denavit-Hartenberg view of a serial chain (Khalil-Kleinfinger 1986; Craig).

Frame j is placed from frame j-1 by T_j = Rx(alpha_j) Tx(a_j) Rz(theta_j) Tz(d_j); the joint variable is
theta_j = q_j + theta (revolute, sigma_j = 0) or d_j = q_j + d (prismatic, sigma_j = 1).
Gautier-Khalil write (alpha, d, theta, r) for our (alpha, a, theta, d).

Two views:
- ``mdh_from_model``: the URDF's own joint frames already follow MDH (every joint axis is +z of its frame,
  every fixed parent-to-joint transform is Rx(alpha) Tx(a) Rz(theta) Tz(d)); otherwise MDHError.
- ``mdh_description``: any serial chain. MDH frames are placed on the joint axes at q = 0 (Khalil-Kleinfinger):
  z_j along joint axis j, x_j along the common normal from axis j to axis j+1, origin where that normal leaves
  axis j. Parallel axes: the normal through the point where x_{j-1} meets axis j (d_j = 0); coinciding axes:
  x_j = x_{j-1}; the last frame: x_n = x_{n-1}, d_n = 0; frame 0 is frame 1 at q = 0. A prismatic joint's
  axis is the line through its URDF joint origin. The base offset and orientation (root -> frame 0) and each
  body's URDF frame -> MDH frame are constant transforms, returned with the table; a tool frame is a fixed
  frame merged into the last body and needs nothing.
Branches (a body with two children) raise MDHError: the MDH rows here describe serial chains only.
"""
from collections import namedtuple
from dataclasses import dataclass
from xml.sax.saxutils import quoteattr

import numpy as np

from .. import spatial
from ..errors import RobotDynamicsError
from .model import PRISMATIC, REVOLUTE

MDHJoint = namedtuple('MDHJoint', 'sigma alpha a theta d')
MDHJoint.__doc__ = "One MDH row: sigma (0 revolute, 1 prismatic), alpha, a, theta (offset), d (offset)."


class MDHError(RobotDynamicsError, ValueError):
    """The model cannot be written as a modified Denavit-Hartenberg table."""


def rot_x(angle):
    return spatial.rotation_about_axis(np.array([1.0, 0.0, 0.0]), angle)


def rot_z(angle):
    return spatial.rotation_about_axis(np.array([0.0, 0.0, 1.0]), angle)


def mdh_pose(alpha, a, theta, d):
    """(R, p) of frame j in frame j-1 for T = Rx(alpha) Tx(a) Rz(theta) Tz(d)."""
    R = rot_x(alpha) @ rot_z(theta)
    return R, np.array([a, 0.0, 0.0]) + d * R[:, 2]


def mdh_from_model(model, atol=1e-9):
    """The MDH table (tuple of MDHJoint, one per DOF in model order) of a serial chain in MDH frames."""
    _check_serial(model)
    table = []
    for j in range(model.nv):
        name = model.joint_names[j]
        if not np.allclose(model.axis[j], [0.0, 0.0, 1.0], atol=atol):
            raise MDHError(f"joint {name!r}: axis {model.axis[j].tolist()} is not +z of its frame")
        R, p = spatial.pose_from_plucker(model.X_tree[j])
        table.append(_mdh_row(model, j, R, p, atol))
    return tuple(table)


def _check_serial(model):
    if not model.fixed_base:
        raise MDHError(f"robot {model.name!r} has a floating or planar joint: MDH describes fixed-base serial chains "
                       "of revolute and prismatic joints only")
    for j in range(model.nv):
        if model.parent[j] != j - 1:
            raise MDHError(f"joint {model.joint_names[j]!r}: the model is not a serial chain (body {j} hangs on "
                           f"body {model.parent[j]}); MDH describes serial chains only")


def _mdh_row(model, j, R, p, atol):
    """MDHJoint of joint j from the pose (R, p) of MDH frame j in MDH frame j-1 at q = 0."""
    name = model.joint_names[j]
    if abs(R[0, 2]) > atol:
        raise MDHError(f"joint {name!r}: its z axis is not perpendicular to the parent's x axis")
    alpha = np.arctan2(-R[1, 2], R[2, 2])
    Rz = rot_x(alpha).T @ R
    theta = np.arctan2(Rz[1, 0], Rz[0, 0])
    d = p @ R[:, 2]
    R_mdh, p_mdh = mdh_pose(alpha, p[0], theta, d)
    if not (np.allclose(R, R_mdh, atol=atol) and np.allclose(p, p_mdh, atol=atol)):
        raise MDHError(f"joint {name!r}: origin transform is not Rx(alpha) Tx(a) Rz(theta) Tz(d) "
                       f"(offset {p.tolist()} has a component off the parent's x axis and the joint z axis)")
    assert model.joint_type[j] in (REVOLUTE, PRISMATIC)
    sigma = 0 if model.joint_type[j] == REVOLUTE else 1
    return MDHJoint(sigma, float(alpha), float(p[0]), float(theta), float(d))


@dataclass(frozen=True, eq=False)
class MDHDescription:
    """MDH table of a serial URDF chain and the constant transforms that tie it to the URDF frames.

    base_rotation, base_origin: pose of MDH frame 0 in the URDF root frame.
    to_mdh: (n, 6, 6) motion transforms mdh_j_X_urdf_j from body j's URDF frame to its MDH frame.
    """
    table: tuple
    base_rotation: np.ndarray
    base_origin: np.ndarray
    to_mdh: np.ndarray

    def gravity_in_frame0(self, gravity_root):
        return self.base_rotation.T @ np.asarray(gravity_root, dtype=float)

    def inertial_parameter_map(self):
        """(10 n, 10 n) block-diagonal L with pi_mdh = L pi_urdf: each body's 10 standard parameters about its
        MDH frame origin in MDH axes, from those about its URDF frame origin in URDF axes (rotate and shift,
        I_mdh = X^-T I_urdf X^-1)."""
        n = len(self.table)
        L = np.zeros((10 * n, 10 * n))
        for j, X in enumerate(self.to_mdh):
            L[10 * j:10 * j + 10, 10 * j:10 * j + 10] = np.column_stack([
                _parameters_of(spatial.transform_inertia(X, _inertia_of(e))) for e in np.eye(10)])
        return L


def mdh_description(model, atol=1e-9):
    """MDHDescription of any serial chain, from its joint axes and origins at q = 0 (see the module doc)."""
    _check_serial(model)
    n = model.nv
    R_urdf, p_urdf = [], []                               # URDF body frames at q = 0 in the root frame
    R, p = np.eye(3), np.zeros(3)
    for j in range(n):
        R_tree, p_tree = spatial.pose_from_plucker(model.X_tree[j])
        R, p = R @ R_tree, p + R @ p_tree
        R_urdf.append(R)
        p_urdf.append(p)
    z = [R_urdf[j] @ model.axis[j] / np.linalg.norm(model.axis[j]) for j in range(n)]
    origin, x = [None] * n, [None] * n
    foot = p_urdf[0]                                      # where x_{j-1} meets axis j (joint 1: its URDF origin)
    for j in range(n):
        if j == n - 1:                                    # last frame: x_n = x_{n-1}, d_n = 0
            origin[j], x[j] = foot, (x[j - 1] if j > 0 else _perpendicular(z[j]))
            break
        normal = np.cross(z[j], z[j + 1])
        if np.linalg.norm(normal) > atol:                 # skew or intersecting axes: the common normal
            origin[j], next_foot = _closest_points(foot, z[j], p_urdf[j + 1], z[j + 1])
            gap = next_foot - origin[j]
            x[j] = gap / np.linalg.norm(gap) if np.linalg.norm(gap) > atol else normal / np.linalg.norm(normal)
        else:                                             # parallel axes: the normal through foot (d_j = 0)
            origin[j] = foot
            gap = p_urdf[j + 1] - foot
            gap -= (gap @ z[j]) * z[j]
            next_foot = foot + gap
            if np.linalg.norm(gap) > atol:
                x[j] = gap / np.linalg.norm(gap)
            else:                                         # coinciding axes
                x[j] = x[j - 1] if j > 0 else _perpendicular(z[j])
        foot = next_foot
    frames = [(np.column_stack([x[j], np.cross(z[j], x[j]), z[j]]), origin[j]) for j in range(n)]
    table, previous = [], frames[0]                       # frame 0 is frame 1 at q = 0
    for j, (R_j, o_j) in enumerate(frames):
        R_prev, o_prev = previous
        table.append(_mdh_row(model, j, R_prev.T @ R_j, R_prev.T @ (o_j - o_prev), atol))
        previous = frames[j]
    to_mdh = np.array([spatial.plucker_from_pose(R_urdf[j].T @ R_j, R_urdf[j].T @ (o_j - p_urdf[j]))
                       for j, (R_j, o_j) in enumerate(frames)])
    return MDHDescription(tuple(table), frames[0][0], frames[0][1], to_mdh)


def _closest_points(p1, u1, p2, u2):
    """Feet of the common normal of the non-parallel lines p1 + s u1 and p2 + t u2 (unit u1, u2)."""
    w = p1 - p2
    b, d, e = u1 @ u2, u1 @ w, u2 @ w
    denominator = 1.0 - b * b
    s = (b * e - d) / denominator
    t = (e - b * d) / denominator
    return p1 + s * u1, p2 + t * u2


def _perpendicular(z):
    """A unit vector perpendicular to unit z (the x axis of frame z's first choice)."""
    helper = np.eye(3)[np.argmin(np.abs(z))]
    v = helper - (helper @ z) * z
    return v / np.linalg.norm(v)


def _inertia_of(params):
    """6x6 spatial inertia of the 10 standard parameters XX XY XZ YY YZ ZZ MX MY MZ M."""
    XX, XY, XZ, YY, YZ, ZZ, MX, MY, MZ, m = params
    I = np.zeros((6, 6))
    I[:3, :3] = [[XX, XY, XZ], [XY, YY, YZ], [XZ, YZ, ZZ]]
    I[:3, 3:] = spatial.skew([MX, MY, MZ])
    I[3:, :3] = I[:3, 3:].T
    I[3:, 3:] = m * np.eye(3)
    return I


def _parameters_of(I):
    """The 10 standard parameters of a 6x6 spatial inertia (inverse of _inertia_of)."""
    return np.array([I[0, 0], I[0, 1], I[0, 2], I[1, 1], I[1, 2], I[2, 2], I[2, 4], I[0, 5], I[1, 3], I[5, 5]])


def matrix_to_rpy(R):
    """URDF roll-pitch-yaw of a rotation matrix (inverse of ``spatial.rpy_to_matrix``)."""
    pitch = np.arctan2(-R[2, 0], np.hypot(R[0, 0], R[1, 0]))
    if np.hypot(R[0, 0], R[1, 0]) < 1e-12:             # gimbal lock: put all of the yaw into roll
        return np.array([np.arctan2(-R[1, 2], R[1, 1]), pitch, 0.0])
    return np.array([np.arctan2(R[2, 1], R[2, 2]), pitch, np.arctan2(R[1, 0], R[0, 0])])


def default_inertial_parameters(n):
    """Generic (no accidental symmetry) standard parameters, 10 per link: XX XY XZ YY YZ ZZ MX MY MZ M."""
    params = []
    for j in range(n):
        m = 1.0 + 0.1 * j
        com = np.array([0.03, -0.02, 0.05]) * (1 + 0.1 * j)
        I_com = np.array([[0.02, 0.001, -0.002], [0.001, 0.03, 0.0015], [-0.002, 0.0015, 0.025]])
        I = spatial.spatial_inertia(m, com, I_com)
        params.append([I[0, 0], I[0, 1], I[0, 2], I[1, 1], I[1, 2], I[2, 2], *(m * com), m])
    return np.array(params)


def mdh_to_urdf(table, inertial_params=None, name='mdh_robot'):
    """URDF XML of the serial chain: links link0 (fixed base) .. link<n>, joints joint1 .. joint<n>.

    inertial_params: (n, 10) standard parameters per link about its MDH frame origin
    (XX XY XZ YY YZ ZZ MX MY MZ M); default ``default_inertial_parameters``.
    """
    table = [MDHJoint(*row) for row in table]
    params = default_inertial_parameters(len(table)) if inertial_params is None else np.asarray(inertial_params)
    lines = [f'<robot name={quoteattr(name)}>', '  <link name="link0"/>']
    for j, (row, pi) in enumerate(zip(table, params), start=1):
        XX, XY, XZ, YY, YZ, ZZ, MX, MY, MZ, m = pi
        com = np.array([MX, MY, MZ]) / m if m > 0 else np.zeros(3)
        C = spatial.skew(com)
        I_com = np.array([[XX, XY, XZ], [XY, YY, YZ], [XZ, YZ, ZZ]]) - m * C @ C.T   # parallel axis theorem
        R, p = mdh_pose(row.alpha, row.a, row.theta, row.d)
        kind, lower, upper = ('prismatic', -1.0, 1.0) if row.sigma else ('revolute', -np.pi, np.pi)
        lines += [
            f'  <link name="link{j}">',
            '    <inertial>',
            f'      <origin xyz="{_xyz(com)}" rpy="0 0 0"/>',
            f'      <mass value="{float(m):.17g}"/>',
            f'      <inertia ixx="{I_com[0, 0]:.17g}" ixy="{I_com[0, 1]:.17g}" ixz="{I_com[0, 2]:.17g}" '
            f'iyy="{I_com[1, 1]:.17g}" iyz="{I_com[1, 2]:.17g}" izz="{I_com[2, 2]:.17g}"/>',
            '    </inertial>',
            '  </link>',
            f'  <joint name="joint{j}" type="{kind}">',
            f'    <parent link="link{j - 1}"/>',
            f'    <child link="link{j}"/>',
            f'    <origin xyz="{_xyz(p)}" rpy="{_xyz(matrix_to_rpy(R))}"/>',
            '    <axis xyz="0 0 1"/>',
            f'    <limit lower="{lower:.17g}" upper="{upper:.17g}" effort="1000" velocity="10"/>',
            '  </joint>',
        ]
    lines.append('</robot>')
    return '\n'.join(lines) + '\n'


def _xyz(v):
    return ' '.join(f'{float(x):.17g}' for x in v)
