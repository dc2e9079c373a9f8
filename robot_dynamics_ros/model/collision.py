"""Contact points from a URDF's ``<collision>`` geometry, for the simulator's ground contact (no ROS import).

A contact point is a sphere of ``radius`` (0: a point) whose centre is at ``offset`` in the frame of ``link``.
Spheres give one point (their centre, with their radius); boxes their 8 corners; cylinders ``RIM_POINTS`` points
on each of their two rims (the cylinder's polygon approximation: a rolling cylinder rolls on a polygon).
Meshes give at most ``MESH_POINTS`` vertices of their convex hull, spread by farthest-point sampling (the hull's
lowest vertex first), read with ``trimesh`` (the ``legged`` extra); their files are found as ``meshes.resolve``
finds them, and a large one is reduced first (``meshes.hull_vertices``, a URDFWarning says how). A mesh that cannot
be found or read (not a mesh, too large, a ``package://`` path leaving its package) is skipped with a URDFWarning
naming the link and the file.

Each link's points are then de-duplicated and reduced (``reduce_points``), so that a URDF with thousands of collision
spheres on a link gives a contact problem of bounded size: a ground plane touches a union of spheres only at spheres
whose (centre, radius) is a vertex of the convex hull of the link's (centre, radius) points, and at most
``LINK_POINTS`` of those are kept.
"""
import os
import warnings
import xml.etree.ElementTree as ET
from typing import NamedTuple

import numpy as np

from .. import spatial
from ..errors import URDFWarning
from . import meshes
from .model import Model
from .urdf import URDFError, read_xml

RIM_POINTS = 8   # points on each rim of a cylinder
MESH_POINTS = 32  # convex-hull vertices kept per collision mesh (16 leave Solo12's round front feet 3 mm high)
LINK_POINTS = MESH_POINTS   # contact points kept per link (the same bound as a mesh's: a link may be one mesh)
DUPLICATE_TOLERANCE = 1e-6  # m: spheres whose centres and radii agree to this (on one grid) are one sphere


class ContactPoint(NamedTuple):
    """A sphere that can touch the ground: centre ``offset`` (3,) in the frame of ``link``, ``radius`` >= 0."""
    link: str
    offset: tuple
    radius: float = 0.0


def contact_points_from_urdf(source, reduce: bool = True) -> list[ContactPoint]:
    """The contact points of every ``<collision>`` sphere, box, cylinder and mesh of a URDF (path or XML string),
    in document order; URDFError naming the link for a malformed one. ``reduce`` (default): each link's points
    de-duplicated and reduced to at most LINK_POINTS (``reduce_points``); False: every point, as the URDF gives it."""
    xml = read_xml(source)
    folder = None if xml is source or os.fspath(source).lstrip().startswith('<') else \
        os.path.dirname(os.path.abspath(source))
    robot = ET.fromstring(xml)
    points = []
    for link in robot.findall('link'):
        name = link.get('name')
        for collision in link.findall('collision'):
            points.extend(_geometry_points(name, collision, folder))
    return reduce_points(points) if reduce else points


def reduce_points(points: list[ContactPoint]) -> list[ContactPoint]:
    """The points that matter for contact with a plane, per link (in their order; a URDFWarning, once, when
    duplicates were dropped or a link kept only LINK_POINTS of its hull's vertices):

    1. duplicates dropped: points of one link whose centre and radius round to the same multiples of
       DUPLICATE_TOLERANCE (exact: a duplicate adds a row, no geometry, and makes the contact problem degenerate);
    2. only the vertices of the convex hull of the link's points (centre, radius) in R^4 kept (exact for any radii):
       a plane of upward normal n (in the link frame) touches the sphere (c, r) at height n.c - r, a linear function
       of (c, r); a sphere whose (c, r) is a convex combination of others' is never lower than all of them, and when
       it touches the plane, so do they, and its contact point is the same combination of theirs: any force on it
       is forces on them with the same resultant and moment. (For equal radii: the vertices of the hull of the
       centres.) Points in a lower-dimensional set (a plane, a line) take the hull in that set. Conservative: a
       sphere inside another is never lower than it, yet its (centre, radius) may be a vertex, and it stays;
    3. at most LINK_POINTS of those, spread by farthest-point sampling in (centre, radius), starting from the lowest
       in the link frame (as a mesh's, ``farthest_points``): a dropped point is then within d of a kept one, its
       height above a plane in any orientation within sqrt(2) d of that one's (|n.dc| + |dr|); the warning says d.
    """
    order, by_link = [], {}
    for index, point in enumerate(points):
        if point.link not in by_link:
            order.append(point.link)
            by_link[point.link] = []
        by_link[point.link].append(index)
    keep, notes = [], []
    for link in order:
        indices = np.array(by_link[link])
        lifted = np.array([[*points[i].offset, points[i].radius] for i in indices], dtype=float)
        distinct = _distinct(lifted)
        hull = distinct[_hull_vertices(lifted[distinct])]
        kept = hull
        note = f"{link!r}: {len(indices)} points, {len(indices) - len(distinct)} duplicates, {len(hull)} hull vertices"
        if len(hull) > LINK_POINTS:
            start = int(np.argmin(lifted[hull, 2] - lifted[hull, 3]))
            chosen = hull[farthest_indices(lifted[hull], LINK_POINTS, start)]
            dropped = np.setdiff1d(hull, chosen)
            reach = np.linalg.norm(lifted[dropped][:, None] - lifted[chosen][None], axis=2).min(axis=1).max()
            notes.append(f"{note} -> {LINK_POINTS} kept (every dropped one within {1e3 * reach:.3g} mm of a kept one)")
            kept = chosen
        elif len(distinct) < len(indices):
            notes.append(f"{note} kept")
        keep.extend(indices[kept])
    if notes:
        warnings.warn("collision geometry reduced to the contact points that matter for a ground plane (at most "
                      f"{LINK_POINTS} convex-hull vertices per link): " + '; '.join(notes), URDFWarning, stacklevel=3)
    return [points[i] for i in sorted(keep)]


def _distinct(lifted):
    """Indices (ascending) of the first of each group of rows of ``lifted`` that round to the same multiples of
    DUPLICATE_TOLERANCE."""
    keys = np.round(lifted / DUPLICATE_TOLERANCE).astype(np.int64)
    return np.sort(np.unique(keys, axis=0, return_index=True)[1])


def _hull_vertices(lifted):
    """Indices (ascending) of the rows of ``lifted`` (k, d) that are vertices of their convex hull, taken in the
    affine span of the rows (its dimension from their SVD); all of them where Qhull fails (conservative)."""
    from scipy.spatial import ConvexHull, QhullError
    if len(lifted) <= 2:
        return np.arange(len(lifted))
    centred = lifted - lifted.mean(axis=0)
    _, singular, axes = np.linalg.svd(centred, full_matrices=False)
    rank = int(np.sum(singular > 1e-9 * singular[0])) if singular[0] > 0 else 0
    if rank == 0:
        return np.arange(1)
    coordinates = centred @ axes[:rank].T
    if rank == 1:
        return np.unique([np.argmin(coordinates[:, 0]), np.argmax(coordinates[:, 0])])
    try:
        return np.sort(ConvexHull(coordinates).vertices)
    except QhullError:
        return np.arange(len(lifted))


def _geometry_points(link, collision, folder=None):
    """Contact points of one <collision> in the link frame: its origin (xyz, rpy) applied to the shape's points."""
    origin = collision.find('origin')
    xyz = _numbers(origin, 'xyz', 3, link) if origin is not None else np.zeros(3)
    rpy = _numbers(origin, 'rpy', 3, link) if origin is not None else np.zeros(3)
    R = spatial.rpy_to_matrix(rpy)
    geometry = collision.find('geometry')
    if geometry is None or len(geometry) == 0:
        raise URDFError(f"link {link!r}: <collision> without <geometry>")
    shape = geometry[0]
    if shape.tag == 'sphere':
        centres, radius = np.zeros((1, 3)), _positive(shape, 'radius', link)
    elif shape.tag == 'box':
        half = 0.5 * _numbers(shape, 'size', 3, link)
        signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=float)
        centres, radius = signs * half, 0.0
    elif shape.tag == 'cylinder':   # axis along z, centred at the origin
        r, half_length = _positive(shape, 'radius', link), 0.5 * _positive(shape, 'length', link)
        angles = 2.0 * np.pi * np.arange(RIM_POINTS) / RIM_POINTS
        rim = np.stack([r * np.cos(angles), r * np.sin(angles), np.zeros(RIM_POINTS)], axis=1)
        centres, radius = np.concatenate([rim + [0, 0, -half_length], rim + [0, 0, half_length]]), 0.0
    elif shape.tag == 'mesh':
        centres, radius = _mesh_points(link, shape, folder), 0.0
    else:   # an unknown shape: no points; declare them with ContactPoint
        return []
    return [ContactPoint(link, tuple(float(x) for x in xyz + R @ c), float(radius)) for c in centres]


def _numbers(element, attribute, count, link):
    text = element.get(attribute)
    if text is None:
        if element.tag == 'origin':
            return np.zeros(count)
        raise URDFError(f"link {link!r}: <collision> <{element.tag}> has no {attribute!r}")
    try:
        values = np.array([float(x) for x in text.split()])
    except ValueError:
        raise URDFError(f"link {link!r}: <collision> <{element.tag}> {attribute}={text!r} is not numbers") from None
    if values.shape != (count,) or not np.all(np.isfinite(values)):
        raise URDFError(f"link {link!r}: <collision> <{element.tag}> {attribute}={text!r} needs {count} finite numbers")
    return values


def _positive(element, attribute, link):
    value = _numbers(element, attribute, 1, link)[0]
    if not value > 0:
        raise URDFError(f"link {link!r}: <collision> <{element.tag}> {attribute}={value!r} must be positive")
    return value


def _mesh_points(link, mesh, folder):
    """Up to MESH_POINTS convex-hull vertices of a <mesh> (scaled), in the collision frame; none where the file
    cannot be found or read (a URDFWarning names it)."""
    filename = mesh.get('filename')
    if not filename:
        raise URDFError(f"link {link!r}: <collision> <mesh> has no 'filename'")
    scale = _numbers(mesh, 'scale', 3, link) if mesh.get('scale') else np.ones(3)
    try:
        vertices, note = meshes.hull_vertices(meshes.resolve(filename, folder))
    except Exception as e:   # any failure to read it (trimesh raises many kinds for a file that is not a mesh)
        warnings.warn(f"link {link!r}: collision mesh {filename!r} gives no contact points: {e}", URDFWarning,
                      stacklevel=4)
        return np.zeros((0, 3))
    if note:
        warnings.warn(f"link {link!r}: collision mesh {filename!r} is large: {note}", URDFWarning, stacklevel=4)
    return farthest_points(vertices * scale, MESH_POINTS)


def farthest_points(points, count):
    """``count`` of ``points`` (all if fewer) spread by farthest-point sampling, starting from the lowest (z)."""
    return points[farthest_indices(points, count, int(np.argmin(points[:, 2])))]


def farthest_indices(points, count, start):
    """Indices of ``count`` rows of ``points`` (all if fewer) by farthest-point sampling from row ``start``."""
    chosen = [start]
    distance = np.linalg.norm(points - points[start], axis=1)
    while len(chosen) < min(count, len(points)):
        chosen.append(int(np.argmax(distance)))
        distance = np.minimum(distance, np.linalg.norm(points - points[chosen[-1]], axis=1))
    return np.array(chosen)


def leaf_links(model: Model) -> set[str]:
    """The URDF links on bodies that have no child body (the feet of a legged robot, the tips of a tree)."""
    children = model.children
    return {name for name, frame in model.frames.items() if frame.body >= 0 and not children[frame.body]}
