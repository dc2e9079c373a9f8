"""Modified Denavit-Hartenberg view of a serial chain (Khalil-Kleinfinger 1986; Craig).

Frame j is placed from frame j-1 by T_j = Rx(alpha_j) Tx(a_j) Rz(theta_j) Tz(d_j); the joint variable is
theta_j = q_j + theta (revolute, sigma_j = 0) or d_j = q_j + d (prismatic, sigma_j = 1).
Gautier-Khalil write (alpha, d, theta, r) for our (alpha, a, theta, d).

Supported: serial chains (body i's parent is body i-1, body 0 on the root link) whose joint frames already
follow MDH: every joint axis is +z of its frame and every fixed parent-to-joint transform has the form
Rx(alpha) Tx(a) Rz(theta) Tz(d). Anything else (branches, an axis along x or -z, a joint origin with a
y offset after the x rotation) raises MDHError naming the joint; re-frame the URDF to use this view.
"""
from collections import namedtuple
from xml.sax.saxutils import quoteattr

import numpy as np

from .. import spatial
from .model import PRISMATIC, REVOLUTE

MDHJoint = namedtuple('MDHJoint', 'sigma alpha a theta d')
MDHJoint.__doc__ = "One MDH row: sigma (0 revolute, 1 prismatic), alpha, a, theta (offset), d (offset)."


class MDHError(ValueError):
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
    table = []
    for j in range(model.nv):
        name = model.joint_names[j]
        if model.parent[j] != j - 1:
            raise MDHError(f"joint {name!r}: the model is not a serial chain (body {j} hangs on body "
                           f"{model.parent[j]}); MDH describes serial chains only")
        if not np.allclose(model.axis[j], [0.0, 0.0, 1.0], atol=atol):
            raise MDHError(f"joint {name!r}: axis {model.axis[j].tolist()} is not +z of its frame")
        R, p = spatial.pose_from_plucker(model.X_tree[j])
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
        sigma = 0 if model.joint_type[j] == REVOLUTE else 1
        assert model.joint_type[j] in (REVOLUTE, PRISMATIC)
        table.append(MDHJoint(sigma, float(alpha), float(p[0]), float(theta), float(d)))
    return tuple(table)


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
