"""6D spatial algebra in Featherstone's convention.

Motion vectors are [angular; linear], force vectors are [moment; force].
``plucker(E, r)`` is the transform B_X_A from frame A to frame B, where E rotates A coordinates into B
coordinates and r is the origin of B expressed in A. Force vectors transform with X^{-T}.
"""
import numpy as np


def skew(v):
    """3x3 matrix with skew(v) @ w == cross(v, w)."""
    return np.array([[0.0, -v[2], v[1]], [v[2], 0.0, -v[0]], [-v[1], v[0], 0.0]])


def rotation_about_axis(axis, angle):
    """Rotation matrix of a right-handed rotation by ``angle`` about unit ``axis`` (Rodrigues)."""
    k = skew(axis)
    return np.eye(3) + np.sin(angle) * k + (1.0 - np.cos(angle)) * (k @ k)


def rpy_to_matrix(rpy):
    """URDF roll-pitch-yaw: R = Rz(yaw) Ry(pitch) Rx(roll), mapping child coordinates into the parent's."""
    r, p, y = rpy
    cr, sr, cp, sp, cy, sy = np.cos(r), np.sin(r), np.cos(p), np.sin(p), np.cos(y), np.sin(y)
    return np.array([
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ])


def quaternion_to_matrix(quaternion):
    """Rotation matrix of the unit quaternion [x, y, z, w] (ROS and Pinocchio order)."""
    x, y, z, w = quaternion
    return np.array(quaternion_rotation(x, y, z, w)).reshape(3, 3)


def quaternion_rotation(x, y, z, w):
    """``quaternion_to_matrix`` as nine numbers, row by row: the one copy of the formula, also compiled by numba
    for the kernels of ``algorithms/``, ``simulation/`` and ``control/`` (marked in ``algorithms/spatial_kernels``)."""
    return (1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - z * w), 2.0 * (x * z + y * w),
            2.0 * (x * y + z * w), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z - x * w),
            2.0 * (x * z - y * w), 2.0 * (y * z + x * w), 1.0 - 2.0 * (x * x + y * y))


def matrix_to_quaternion(R):
    """The unit quaternion [x, y, z, w] with w >= 0 of a rotation matrix (Shepperd's method)."""
    trace = np.trace(R)
    k = int(np.argmax([R[0, 0], R[1, 1], R[2, 2], trace]))
    if k == 3:
        w = 0.5 * np.sqrt(1.0 + trace)
        q = np.array([R[2, 1] - R[1, 2], R[0, 2] - R[2, 0], R[1, 0] - R[0, 1], 0.0]) / (4.0 * w)
        q[3] = w
    else:
        i, j, m = k, (k + 1) % 3, (k + 2) % 3
        q = np.zeros(4)
        q[i] = 0.5 * np.sqrt(max(1.0 + R[i, i] - R[j, j] - R[m, m], 0.0))
        q[j] = (R[j, i] + R[i, j]) / (4.0 * q[i])
        q[m] = (R[m, i] + R[i, m]) / (4.0 * q[i])
        q[3] = (R[m, j] - R[j, m]) / (4.0 * q[i])
    return q if q[3] >= 0.0 else -q


def plucker(E, r):
    """Motion transform B_X_A = [[E, 0], [-E skew(r), E]]."""
    X = np.zeros((6, 6))
    X[:3, :3] = E
    X[3:, 3:] = E
    X[3:, :3] = -E @ skew(r)
    return X


def plucker_from_pose(R, p):
    """Transform from parent frame A to child frame B, given B's pose in A (rotation R, origin p)."""
    return plucker(R.T, p)


def pose_from_plucker(X):
    """Inverse of ``plucker_from_pose``: (R, p) of frame B in frame A, from B_X_A."""
    E = X[:3, :3]
    return E.T, -unskew(E.T @ X[3:, :3])  # E^T X[3:, :3] = -skew(r)


def unskew(S):
    return np.array([S[2, 1], S[0, 2], S[1, 0]])


def inverse(X):
    """A_X_B from B_X_A."""
    E = X[:3, :3]
    Xi = np.zeros((6, 6))
    Xi[:3, :3] = E.T
    Xi[3:, 3:] = E.T
    Xi[3:, :3] = X[3:, :3].T
    return Xi


def spatial_inertia(mass, com, inertia_at_com):
    """Spatial inertia about a frame's origin, from mass, centre of mass and rotational inertia at the CoM."""
    C = skew(com)
    I = np.zeros((6, 6))
    I[:3, :3] = inertia_at_com + mass * C @ C.T
    I[:3, 3:] = mass * C
    I[3:, :3] = mass * C.T
    I[3:, 3:] = mass * np.eye(3)
    return I


def transform_inertia(X, I_A):
    """Inertia in frame B from inertia in frame A, X = B_X_A: I_B = X^{-T} I_A X^{-1}."""
    Xi = inverse(X)
    return Xi.T @ I_A @ Xi
