"""Contact points from a URDF's ``<collision>`` geometry, for the simulator's ground contact (no ROS import).

A contact point is a sphere of ``radius`` (0: a point) whose centre is at ``offset`` in the frame of ``link``.
Spheres give one point (their centre, with their radius); boxes their 8 corners; cylinders ``RIM_POINTS`` points
on each of their two rims (the cylinder's polygon approximation: a rolling cylinder rolls on a polygon).
Meshes give at most ``MESH_POINTS`` vertices of their convex hull, spread by farthest-point sampling (the hull's
lowest vertex first), read with ``trimesh`` (the ``legged`` extra); their files are found as ``meshes.resolve``
finds them. A mesh that cannot be found or read is skipped with a URDFWarning naming it.
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


class ContactPoint(NamedTuple):
    """A sphere that can touch the ground: centre ``offset`` (3,) in the frame of ``link``, ``radius`` >= 0."""
    link: str
    offset: tuple
    radius: float = 0.0


def contact_points_from_urdf(source) -> list[ContactPoint]:
    """The contact points of every ``<collision>`` sphere, box and cylinder of a URDF (path or XML string),
    in document order; URDFError naming the link for a malformed one."""
    xml = read_xml(source)
    folder = None if xml is source or os.fspath(source).lstrip().startswith('<') else \
        os.path.dirname(os.path.abspath(source))
    robot = ET.fromstring(xml)
    points = []
    for link in robot.findall('link'):
        name = link.get('name')
        for collision in link.findall('collision'):
            points.extend(_geometry_points(name, collision, folder))
    return points


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
        vertices = meshes.hull_vertices(meshes.resolve(filename, folder))
    except (OSError, ValueError, ImportError) as e:
        warnings.warn(f"link {link!r}: collision mesh {filename!r} gives no contact points: {e}", URDFWarning,
                      stacklevel=4)
        return np.zeros((0, 3))
    return farthest_points(vertices * scale, MESH_POINTS)


def farthest_points(points, count):
    """``count`` of ``points`` (all if fewer) spread by farthest-point sampling, starting from the lowest (z)."""
    chosen = [int(np.argmin(points[:, 2]))]
    distance = np.linalg.norm(points - points[chosen[0]], axis=1)
    while len(chosen) < min(count, len(points)):
        chosen.append(int(np.argmax(distance)))
        distance = np.minimum(distance, np.linalg.norm(points - points[chosen[-1]], axis=1))
    return points[chosen]


def leaf_links(model: Model) -> set[str]:
    """The URDF links on bodies that have no child body (the feet of a legged robot, the tips of a tree)."""
    children = model.children
    return {name for name, frame in model.frames.items() if frame.body >= 0 and not children[frame.body]}
