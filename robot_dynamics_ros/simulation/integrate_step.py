"""The integrate stage of the step: q (+) dt v for a tree of 1-DOF joints under a free-flyer root, and the root's
linear velocity carried into its new frame (no ROS import).

Semi-implicit Euler advances each 1-DOF joint by q_i += dt v_i and the free-flyer root (q = [p; x y z w], v = [v_lin;
omega] in the base frame) as MuJoCo's free joint does: its origin on the straight line p' = p + dt R v_lin, its
orientation by the exponential of the body-frame rotation, R' = R exp(dt [omega]x), as the unit quaternion
Q' = Q (x) [sin(theta/2) omega / |omega|; cos(theta/2)], theta = dt |omega| (the quaternion of exp, Shoemake 1985).
The linear velocity is then re-expressed in the new base frame, v_lin' = R'^T R v_lin = exp(dt [omega]x)^T v_lin.
Written as loops, as ``algorithms/``, so the plain-Python reference runs it and numba compiles it; planar and
nested free-flyer joints take ``Simulator._integrate``'s general path (``model.configuration.integrate``).
"""
import numpy as np

from ..algorithms.backends import njit
from ..algorithms.spatial_kernels import quaternion_rotation


@njit()
def integrate_free_root(idx_q, idx_v, q, v, dt, q_out, v_out):
    """q_out = q (+) dt v and v_out = v with the root's linear velocity in its new frame; joint 0 is the free
    flyer, joints 1.. are 1-DOF (revolute, prismatic)."""
    for i in range(1, idx_q.shape[0]):
        q_out[idx_q[i]] = q[idx_q[i]] + dt * v[idx_v[i]]
        v_out[idx_v[i]] = v[idx_v[i]]
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
