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
    return E.T, -_unskew(E.T @ X[3:, :3])  # E^T X[3:, :3] = -skew(r)


def _unskew(S):
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
