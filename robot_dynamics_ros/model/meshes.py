"""Mesh files a URDF names: where they are (``package://``, ``file://``, relative paths) and their convex hulls.

``package://<pkg>/<path>`` is looked up as ROS does: ``<prefix>/share/<pkg>/<path>`` for each prefix in
``AMENT_PREFIX_PATH``, then ``<folder>/<pkg>/<path>`` (or ``<folder>/<path>`` when the folder itself is named <pkg>)
for each folder in ``ROS_PACKAGE_PATH``; failing those, in the URDF's own ancestor folders named <pkg> (a package
checked out or installed as a folder tree). Relative paths are relative to the URDF's folder.
"""
import os

import numpy as np

PACKAGE = 'package://'
FILE = 'file://'


def resolve(filename: str, urdf_folder: str | None = None) -> str:
    """The path of a mesh ``filename`` as a URDF writes it; FileNotFoundError saying where it was looked for."""
    if filename.startswith(FILE):
        candidates = [filename[len(FILE):]]
    elif filename.startswith(PACKAGE):
        package, _, path = filename[len(PACKAGE):].partition('/')
        candidates = _package_candidates(package, path, urdf_folder)
    elif os.path.isabs(filename) or urdf_folder is None:
        candidates = [filename]
    else:
        candidates = [os.path.join(urdf_folder, filename)]
    for candidate in candidates:
        if os.path.isfile(candidate):
            return candidate
    raise FileNotFoundError(f"not found (looked in {candidates or 'AMENT_PREFIX_PATH, ROS_PACKAGE_PATH'})")


def _package_candidates(package, path, urdf_folder):
    candidates = [os.path.join(prefix, 'share', package, path) for prefix in _entries('AMENT_PREFIX_PATH')]
    for folder in _entries('ROS_PACKAGE_PATH'):
        candidates.append(os.path.join(folder, path) if os.path.basename(folder.rstrip(os.sep)) == package
                          else os.path.join(folder, package, path))
    folder = urdf_folder
    while folder and os.path.dirname(folder) != folder:
        if os.path.basename(folder) == package:
            candidates.append(os.path.join(folder, path))
        folder = os.path.dirname(folder)
    return candidates


def _entries(variable):
    return [entry for entry in os.environ.get(variable, '').split(os.pathsep) if entry]


def hull_vertices(path: str) -> np.ndarray:
    """(k, 3) vertices of the convex hull of the mesh in ``path`` (any format trimesh reads; the ``legged``
    extra); ValueError for a file without triangles."""
    try:
        import trimesh
    except ImportError:
        raise ImportError("collision meshes need trimesh (pip install 'robot_dynamics_ros[legged]')",
                          name='trimesh') from None
    mesh = trimesh.load(path, force='mesh')
    if len(mesh.vertices) == 0:
        raise ValueError("the mesh has no vertices")
    return np.asarray(mesh.convex_hull.vertices, dtype=float)
