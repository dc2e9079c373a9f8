"""The integrate stage of the step: q (+) dt v for a tree of 1-DOF joints under a fixed, free-flyer or planar root,
and a free-flyer root's linear velocity carried into its new frame (no ROS import).

Semi-implicit Euler advances each 1-DOF joint by q_i += dt v_i, a planar root (q = [x y cos sin], v = [vx vy w] in its
own frame) by SE(2)'s exponential as ``model.configuration.integrate`` does, and the free-flyer root (q = [p; x y z w],
v = [v_lin; omega] in the base frame) as MuJoCo's free joint does: its origin on the straight line p' = p + dt R v_lin, its
orientation by the exponential of the body-frame rotation, R' = R exp(dt [omega]x), as the unit quaternion
Q' = Q (x) [sin(theta/2) omega / |omega|; cos(theta/2)], theta = dt |omega| (the quaternion of exp, Shoemake 1985).
The linear velocity is then re-expressed in the new base frame, v_lin' = R'^T R v_lin = exp(dt [omega]x)^T v_lin.
Written as loops, as ``algorithms/``, so the plain-Python reference runs it and numba compiles it; free-flyer and
planar joints below the root take ``Simulator._integrate``'s general path (``model.configuration.integrate``).
"""
import numpy as np

from ..algorithms.backends import njit
from ..algorithms.spatial_kernels import quaternion_rotation
from ..model.joints import FREE_FLYER, PLANAR

# |theta| below which SE(2)'s left Jacobian is taken to first order (as ``model.configuration``'s)
SMALL_ANGLE = 1e-6


@njit()
def integrate_joints(joint_type, idx_q, idx_v, q, v, dt, q_out, v_out):
    """q_out = q (+) dt v and v_out = v, a free-flyer root's linear velocity in its new frame; joint 0 is the root
    (1-DOF, free flyer or planar), joints 1.. are 1-DOF (revolute, prismatic)."""
    start = 0 if joint_type[0] != FREE_FLYER and joint_type[0] != PLANAR else 1
    for i in range(start, idx_q.shape[0]):
        q_out[idx_q[i]] = q[idx_q[i]] + dt * v[idx_v[i]]
        v_out[idx_v[i]] = v[idx_v[i]]
    if joint_type[0] == FREE_FLYER:
        integrate_free_flyer(q, v, dt, q_out, v_out)
    elif joint_type[0] == PLANAR:
        integrate_planar(q, v, dt, q_out, v_out)


@njit()
def integrate_planar(q, v, dt, q_out, v_out):
    """The planar root at q[0:4] = [x y cos sin], v[0:3]: [x y] + R(theta) V(dt w) dt [vx vy], the angle's (cos, sin)
    turned by dt w (``configuration._exp2``; V is SE(2)'s left Jacobian)."""
    angle = dt * v[2]
    if abs(angle) < SMALL_ANGLE:
        V00, V01 = 1.0, -angle / 2.0
    else:
        V00, V01 = np.sin(angle) / angle, -(1.0 - np.cos(angle)) / angle
    vx, vy = dt * v[0], dt * v[1]
    dx, dy = V00 * vx + V01 * vy, -V01 * vx + V00 * vy   # V = [[V00, V01], [-V01, V00]]
    c, s, dc, ds = q[2], q[3], np.cos(angle), np.sin(angle)
    q_out[0] = q[0] + c * dx - s * dy
    q_out[1] = q[1] + s * dx + c * dy
    q_out[2], q_out[3] = c * dc - s * ds, s * dc + c * ds
    for k in range(3):
        v_out[k] = v[k]


@njit()
def integrate_free_flyer(q, v, dt, q_out, v_out):
    """The free-flyer root at q[0:7], v[0:6], as MuJoCo's free joint (the module's docstring)."""
    x, y, z, w = q[3], q[4], q[5], q[6]
    # R of Q, and p' = p + dt R v_lin
    R00, R01, R02, R10, R11, R12, R20, R21, R22 = quaternion_rotation(x, y, z, w)
    q_out[0] = q[0] + dt * (R00 * v[0] + R01 * v[1] + R02 * v[2])
    q_out[1] = q[1] + dt * (R10 * v[0] + R11 * v[1] + R12 * v[2])
    q_out[2] = q[2] + dt * (R20 * v[0] + R21 * v[1] + R22 * v[2])
    # dQ = exp(dt omega / 2), Q' = Q dQ (Hamilton product, [x y z w])
    theta = dt * np.sqrt(v[3] * v[3] + v[4] * v[4] + v[5] * v[5])
    if theta > 0.0:
        s = np.sin(0.5 * theta) * dt / theta
        a, b, c, d = s * v[3], s * v[4], s * v[5], np.cos(0.5 * theta)
    else:
        a, b, c, d = 0.0, 0.0, 0.0, 1.0
    qx = w * a + x * d + y * c - z * b
    qy = w * b - x * c + y * d + z * a
    qz = w * c + x * b - y * a + z * d
    qw = w * d - x * a - y * b - z * c
    norm = np.sqrt(qx * qx + qy * qy + qz * qz + qw * qw)
    q_out[3], q_out[4], q_out[5], q_out[6] = qx / norm, qy / norm, qz / norm, qw / norm
    # v_lin' = dR^T v_lin, dR the rotation of dQ
    D00, D01, D02, D10, D11, D12, D20, D21, D22 = quaternion_rotation(a, b, c, d)
    v_out[0] = D00 * v[0] + D10 * v[1] + D20 * v[2]
    v_out[1] = D01 * v[0] + D11 * v[1] + D21 * v[2]
    v_out[2] = D02 * v[0] + D12 * v[1] + D22 * v[2]
    for k in range(3, 6):
        v_out[k] = v[k]
