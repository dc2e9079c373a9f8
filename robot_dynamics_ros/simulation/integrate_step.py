"""The integrate stage of the step: q (+) dt v for every joint of a tree, and a free-flyer root's linear velocity
carried into its new frame (no ROS import).

Semi-implicit Euler advances each 1-DOF joint by q_i += dt v_i, a planar joint (q = [x y cos sin], v = [vx vy w] in
its own frame) by SE(2)'s exponential and a free-flyer joint below the root by SE(3)'s (its origin on the screw,
p' = p + R V(dt omega) dt v_lin), as ``model.configuration.integrate`` does, and the free-flyer root (q = [p; x y z w],
v = [v_lin; omega] in the base frame) as MuJoCo's free joint does: its origin on the straight line p' = p + dt R v_lin,
and its linear velocity then re-expressed in the new base frame, v_lin' = R'^T R v_lin = exp(dt [omega]x)^T v_lin
(``Simulator._integrate`` says why). Every free flyer turns by the exponential of its body-frame rotation,
R' = R exp(dt [omega]x), as the unit quaternion Q' = Q (x) [sin(theta/2) omega / |omega|; cos(theta/2)], theta =
dt |omega| (the quaternion of exp, Shoemake 1985). Written as loops, as ``algorithms/``, so the plain-Python
reference runs it and numba compiles it.
"""
import numpy as np

from ..algorithms.backends import njit
from ..algorithms.spatial_kernels import quaternion_rotation
from ..model.joints import FREE_FLYER, PLANAR

# |theta| below which SE(2)'s and SO(3)'s left Jacobians are taken by their series (as ``model.configuration``'s)
SMALL_ANGLE, SMALL_ROTATION = 1e-6, 1e-4


@njit()
def integrate_joints(joint_type, idx_q, idx_v, q, v, dt, q_out, v_out):
    """q_out = q (+) dt v and v_out = v, a free-flyer root's linear velocity in its new frame (joint 0 is the
    root; ``idx_q``, ``idx_v``: each joint's first coordinate in q and in v)."""
    for i in range(idx_q.shape[0]):
        k, j = idx_q[i], idx_v[i]
        if joint_type[i] == FREE_FLYER:
            integrate_free_flyer(q, v, dt, k, j, i > 0, q_out, v_out)
        elif joint_type[i] == PLANAR:
            integrate_planar(q, v, dt, k, j, q_out, v_out)
        else:
            q_out[k] = q[k] + dt * v[j]
            v_out[j] = v[j]


@njit()
def integrate_planar(q, v, dt, k, j, q_out, v_out):
    """A planar joint at q[k:k + 4] = [x y cos sin], v[j:j + 3]: [x y] + R(theta) V(dt w) dt [vx vy], the angle's
    (cos, sin) turned by dt w (``configuration._exp2``; V is SE(2)'s left Jacobian)."""
    angle = dt * v[j + 2]
    if abs(angle) < SMALL_ANGLE:
        V00, V01 = 1.0, -angle / 2.0
    else:
        V00, V01 = np.sin(angle) / angle, -(1.0 - np.cos(angle)) / angle
    vx, vy = dt * v[j], dt * v[j + 1]
    dx, dy = V00 * vx + V01 * vy, -V01 * vx + V00 * vy   # V = [[V00, V01], [-V01, V00]]
    c, s, dc, ds = q[k + 2], q[k + 3], np.cos(angle), np.sin(angle)
    q_out[k] = q[k] + c * dx - s * dy
    q_out[k + 1] = q[k + 1] + s * dx + c * dy
    q_out[k + 2], q_out[k + 3] = c * dc - s * ds, s * dc + c * ds
    for a in range(3):
        v_out[j + a] = v[j + a]


@njit()
def integrate_free_flyer(q, v, dt, k, j, screw, q_out, v_out):
    """A free flyer at q[k:k + 7], v[j:j + 6] (the module's docstring): the root as MuJoCo's free joint, a joint below
    it (``screw``) by SE(3)'s exponential."""
    x, y, z, w = q[k + 3], q[k + 4], q[k + 5], q[k + 6]
    R00, R01, R02, R10, R11, R12, R20, R21, R22 = quaternion_rotation(x, y, z, w)
    theta = dt * np.sqrt(v[j + 3] * v[j + 3] + v[j + 4] * v[j + 4] + v[j + 5] * v[j + 5])
    if screw:   # p' = p + R V(dt omega) dt v_lin, V = I + first W + second W^2 (W = [dt omega]x)
        ox, oy, oz = dt * v[j + 3], dt * v[j + 4], dt * v[j + 5]
        dx, dy, dz = dt * v[j], dt * v[j + 1], dt * v[j + 2]
        if theta < SMALL_ROTATION:
            first, second = 0.5, 1.0 / 6.0
        else:
            first, second = (1.0 - np.cos(theta)) / theta ** 2, (theta - np.sin(theta)) / theta ** 3
        cx, cy, cz = oy * dz - oz * dy, oz * dx - ox * dz, ox * dy - oy * dx              # W d
        ex, ey, ez = oy * cz - oz * cy, oz * cx - ox * cz, ox * cy - oy * cx              # W^2 d
        dx, dy, dz = dx + first * cx + second * ex, dy + first * cy + second * ey, dz + first * cz + second * ez
        q_out[k] = q[k] + (R00 * dx + R01 * dy + R02 * dz)
        q_out[k + 1] = q[k + 1] + (R10 * dx + R11 * dy + R12 * dz)
        q_out[k + 2] = q[k + 2] + (R20 * dx + R21 * dy + R22 * dz)
    else:       # p' = p + dt R v_lin
        q_out[k] = q[k] + dt * (R00 * v[j] + R01 * v[j + 1] + R02 * v[j + 2])
        q_out[k + 1] = q[k + 1] + dt * (R10 * v[j] + R11 * v[j + 1] + R12 * v[j + 2])
        q_out[k + 2] = q[k + 2] + dt * (R20 * v[j] + R21 * v[j + 1] + R22 * v[j + 2])
    # dQ = exp(dt omega / 2), Q' = Q dQ (Hamilton product, [x y z w])
    if theta > 0.0:
        s = np.sin(0.5 * theta) * dt / theta
        a, b, c, d = s * v[j + 3], s * v[j + 4], s * v[j + 5], np.cos(0.5 * theta)
    else:
        a, b, c, d = 0.0, 0.0, 0.0, 1.0
    qx = w * a + x * d + y * c - z * b
    qy = w * b - x * c + y * d + z * a
    qz = w * c + x * b - y * a + z * d
    qw = w * d - x * a - y * b - z * c
    norm = np.sqrt(qx * qx + qy * qy + qz * qz + qw * qw)
    q_out[k + 3], q_out[k + 4], q_out[k + 5], q_out[k + 6] = qx / norm, qy / norm, qz / norm, qw / norm
    for i in range(6):
        v_out[j + i] = v[j + i]
    if not screw:   # the root's v_lin' = dR^T v_lin, dR the rotation of dQ
        D00, D01, D02, D10, D11, D12, D20, D21, D22 = quaternion_rotation(a, b, c, d)
        v_out[j] = D00 * v[j] + D10 * v[j + 1] + D20 * v[j + 2]
        v_out[j + 1] = D01 * v[j] + D11 * v[j + 1] + D21 * v[j + 2]
        v_out[j + 2] = D02 * v[j] + D12 * v[j + 1] + D22 * v[j + 2]
