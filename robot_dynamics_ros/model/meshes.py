"""Mesh files a URDF names: where they are (``package://``, ``file://``, relative paths) and their convex hulls.

``package://<pkg>/<path>`` is looked up as ROS does: ``<prefix>/share/<pkg>/<path>`` for each prefix in
``AMENT_PREFIX_PATH``, then ``<folder>/<pkg>/<path>`` (or ``<folder>/<path>`` when the folder itself is named <pkg>)
for each folder in ``ROS_PACKAGE_PATH``; failing those, in the URDF's own ancestor folders named <pkg> (a package
checked out or installed as a folder tree). A ``package://`` path stays inside its package: one whose ``..`` (or a
leading ``/``) would leave it is refused (a symbolic link inside the package, as colcon's ``--symlink-install``
makes, is followed). Relative paths are relative to the URDF's folder.

Large meshes are bounded before use: a file above MESH_FILE_BYTES is refused; a mesh of more than HULL_VERTICES
vertices has its convex hull taken over one vertex per cell of a grid of GRID_CELLS cells along its longest side
(``grid_clusters``), every dropped vertex within one cell diagonal of a kept one.
"""
import os

import numpy as np

PACKAGE = 'package://'
FILE = 'file://'
MESH_FILE_BYTES = 100_000_000   # a 2M-triangle binary STL; beyond, not read
HULL_VERTICES = 100_000         # beyond, the hull is taken over a grid's worth of them (a 33k-triangle STL has 100k)
GRID_CELLS = 128                # cells along a large mesh's longest side: its hull within 1.4 % of that side


def resolve(filename: str, urdf_folder: str | None = None) -> str:
    """The path of a mesh ``filename`` as a URDF writes it; FileNotFoundError saying where it was looked for."""
    if filename.startswith(FILE):
        candidates = [filename[len(FILE):]]
    elif filename.startswith(PACKAGE):
        package, path = package_path(filename)
        candidates = _package_candidates(package, path, urdf_folder)
    elif os.path.isabs(filename) or urdf_folder is None:
        candidates = [filename]
    else:
        candidates = [os.path.join(urdf_folder, filename)]
    for candidate in candidates:
        if os.path.isfile(candidate):
            return candidate
    raise FileNotFoundError(f"not found (looked in {candidates or 'AMENT_PREFIX_PATH, ROS_PACKAGE_PATH'})")


def package_path(filename: str) -> tuple[str, str]:
    """(package, path inside it) of a ``package://`` name; ValueError where the path would leave the package (a
    ``..`` above it, a leading ``/``) or the package name is empty, ``.`` or ``..``. Slashes before the package name
    are dropped: example-robot-data's TALOS writes ``package:///example-robot-data/...``, as Pinocchio reads it."""
    package, _, path = filename[len(PACKAGE):].lstrip('/').partition('/')
    inside = os.path.normpath(path)
    if package in ('', '.', '..') or os.path.isabs(path) or inside == '..' or inside.startswith('..' + os.sep):
        raise ValueError(f"{filename!r} leaves its package: refused")
    return package, path


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


def hull_vertices(path: str) -> tuple[np.ndarray, str]:
    """(k, 3) vertices of the convex hull of the mesh in ``path`` (any format trimesh reads; the ``legged``
    extra), and a note ('' if none) when the mesh was reduced first (see the module's docstring); ValueError for a
    file above MESH_FILE_BYTES, without vertices or with non-finite ones."""
    try:
        import trimesh
    except ImportError:
        raise ImportError("collision meshes need trimesh (pip install 'robot_dynamics_ros[legged]')",
                          name='trimesh') from None
    size = os.path.getsize(path)
    if size > MESH_FILE_BYTES:
        raise ValueError(f"the file has {size / 1e6:.0f} MB, above the {MESH_FILE_BYTES / 1e6:.0f} MB read")
    vertices = _binary_stl_vertices(path, size)
    if vertices is None:
        vertices = np.asarray(trimesh.load(path, force='mesh', process=False).vertices, dtype=float)
    if len(vertices) == 0:
        raise ValueError("the mesh has no vertices")
    if not np.all(np.isfinite(vertices)):
        raise ValueError("the mesh has non-finite vertices")
    note = ''
    if len(vertices) > HULL_VERTICES:
        kept, _, within = grid_clusters(vertices, GRID_CELLS)
        note = (f"hull of {len(kept)} of its {len(vertices)} vertices, one per cell of a {GRID_CELLS}-cell grid "
                f"(every vertex within {1e3 * within:.3g} mm of a kept one)")
        vertices = vertices[kept]
    return np.asarray(trimesh.convex.convex_hull(vertices).vertices, dtype=float), note


def _binary_stl_vertices(path, size):
    """(3 n, 3) vertices of a binary STL (n triangles: an 84-byte header, then 50 bytes a triangle), read as they
    are stored (a third of the memory trimesh takes to load it); None for any other file."""
    with open(path, 'rb') as f:
        header = f.read(84)
    if len(header) < 84 or size != 84 + 50 * int(np.frombuffer(header, '<u4', 1, 80)[0]):
        return None
    triangles = np.fromfile(path, np.dtype([('normal', '<f4', 3), ('corners', '<f4', (3, 3)), ('attribute', '<u2')]),
                            offset=84)
    return triangles['corners'].reshape(-1, 3).astype(float)


def grid_clusters(vertices: np.ndarray, cells: int) -> tuple[np.ndarray, np.ndarray, float]:
    """Vertex clustering on a grid of ``cells`` cubes along the longest side of the vertices' bounding box:
    (index of the first vertex in each occupied cell, the cell of each vertex as an index into those, the cell
    diagonal: the farthest any vertex is from its cell's first)."""
    low, side = vertices.min(axis=0), float(np.ptp(vertices, axis=0).max())
    size = side / cells if side > 0 else 1.0
    keys = np.minimum(((vertices - low) / size).astype(np.int64), cells - 1)
    flat = (keys[:, 0] * cells + keys[:, 1]) * cells + keys[:, 2]
    _, first, cluster = np.unique(flat, return_index=True, return_inverse=True)
    return first, cluster.reshape(-1), size * np.sqrt(3) if side > 0 else 0.0
