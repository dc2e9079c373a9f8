"""What a URDF looks like: its ``<visual>`` shapes, mesh files found on disk, ``<collision>`` primitives where a
link has no visual or its meshes are missing. No ROS and no viser import; trimesh loads the meshes.

Mesh file names are resolved as ROS tools resolve them: ``package://pkg/path`` from the URDF's folder (an
ancestor named ``pkg`` or holding a folder ``pkg``), then ``ROS_PACKAGE_PATH`` (folders that hold packages, or
packages), then ``AMENT_PREFIX_PATH`` (``<prefix>/share/pkg``); ``file://`` and plain paths as they are,
relative ones from the URDF's folder; a ``package://`` name that would leave its package is not looked for.
A mesh of more than VIEW_TRIANGLES triangles is drawn simplified (``decimate``), with a URDFWarning saying so: every
browser connected is sent every triangle.
"""
import os
import warnings
import xml.etree.ElementTree as ET
from typing import NamedTuple

import numpy as np

from .. import spatial
from ..errors import URDFWarning
from ..model.meshes import PACKAGE, grid_clusters, package_path
from ..model.urdf import URDFError, read_xml
from . import require

DEFAULT_COLOR = (0.35, 0.5, 0.8, 1.0)   # steel blue: unlike the white ground and grey grid
PRIMITIVES = ('box', 'cylinder', 'sphere')
VIEW_TRIANGLES = 100_000   # a mesh's triangles drawn at most (a 1M-triangle mesh took 1.6 GB for 20 browsers)


class Shape(NamedTuple):
    """One shape fixed to ``link``: ``origin`` (4, 4) pose in the link frame; ``kind`` 'mesh', 'box', 'cylinder' or
    'sphere'; ``size`` (box: x y z; cylinder: radius length; sphere: radius; mesh: scale x y z); ``path`` the mesh
    file; ``color`` RGBA in [0, 1]."""
    link: str
    origin: np.ndarray
    kind: str
    size: tuple
    path: str = ''
    color: tuple = DEFAULT_COLOR


class RobotGeometry(NamedTuple):
    """The shapes to draw, and the mesh files that were not found (link, file name as the URDF writes it)."""
    shapes: list
    missing: list

    def missing_message(self):
        """One line about the missing meshes ('' when none)."""
        if not self.missing:
            return ''
        links = sorted({link for link, _ in self.missing})
        return (f"{len(self.missing)} mesh file(s) not found (first: {self.missing[0][1]}); drawing the <collision> "
                f"primitives of {', '.join(links)} instead")


def resolve_mesh(filename, urdf_dir, environ=None):
    """The path of a URDF mesh ``filename`` on this machine, or None where it is not found (or is a ``package://``
    path that would leave its package, ``model.meshes.package_path``)."""
    environ = os.environ if environ is None else environ
    if filename.startswith(PACKAGE):
        try:
            package, rest = package_path(filename)
        except ValueError:   # it would leave its package: not looked for
            return None
        for root in _package_roots(package, urdf_dir, environ):
            candidate = os.path.join(root, rest)
            if os.path.isfile(candidate):
                return candidate
        return None
    if filename.startswith('file://'):
        filename = filename[len('file://'):]
    candidate = filename if os.path.isabs(filename) else os.path.join(urdf_dir, filename)
    return candidate if os.path.isfile(candidate) else None


def _package_roots(package, urdf_dir, environ):
    """Folders that may be the package ``package``, in search order."""
    folder = os.path.abspath(urdf_dir)
    while True:
        yield folder if os.path.basename(folder) == package else os.path.join(folder, package)
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    for entry in filter(None, environ.get('ROS_PACKAGE_PATH', '').split(os.pathsep)):
        yield entry if os.path.basename(os.path.normpath(entry)) == package else os.path.join(entry, package)
    for prefix in filter(None, environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep)):
        yield os.path.join(prefix, 'share', package)


def robot_geometry(source, environ=None, urdf_dir=None):
    """RobotGeometry of a URDF (path or XML string). Per link: its ``<visual>`` shapes; its ``<collision>``
    primitives where it has no visual or one of its visual meshes is not found. Relative mesh names are resolved
    from ``urdf_dir``, by default the URDF file's folder (the working folder for a string)."""
    robot = ET.fromstring(read_xml(source))
    if urdf_dir is None:
        is_xml = os.fspath(source).lstrip().startswith('<')
        urdf_dir = '.' if is_xml else os.path.dirname(os.path.abspath(source))
    colors = {m.get('name'): _color(m) for m in robot.findall('material') if m.get('name')}
    shapes, missing = [], []
    for link in robot.findall('link'):
        name = link.get('name')
        visuals = [_shape(name, v, urdf_dir, environ, colors) for v in link.findall('visual')]
        lost = [(name, filename) for shape, filename in visuals if shape is None]
        missing += lost
        if visuals and not lost:
            shapes += [shape for shape, _ in visuals]
        else:
            collisions = (_shape(name, c, urdf_dir, environ, colors) for c in link.findall('collision'))
            shapes += [shape for shape, _ in collisions if shape is not None and shape.kind in PRIMITIVES]
    return RobotGeometry(shapes, missing)


def _shape(link, element, urdf_dir, environ, colors):
    """(Shape, mesh file name) of a <visual> or <collision>; Shape None where its mesh file is not found."""
    geometry = element.find('geometry')
    if geometry is None or len(geometry) == 0:
        raise URDFError(f"link {link!r}: <{element.tag}> without <geometry>")
    g = geometry[0]
    origin = element.find('origin')
    pose = np.eye(4)
    if origin is not None:
        pose[:3, :3] = spatial.rpy_to_matrix(_numbers(origin.get('rpy', '0 0 0'), 3, link))
        pose[:3, 3] = _numbers(origin.get('xyz', '0 0 0'), 3, link)
    material = element.find('material')
    color = DEFAULT_COLOR
    if material is not None:
        color = _color(material) or colors.get(material.get('name')) or DEFAULT_COLOR
    if g.tag == 'mesh':
        filename = g.get('filename', '')
        path = resolve_mesh(filename, urdf_dir, environ)
        scale = tuple(_numbers(g.get('scale', '1 1 1'), 3, link))
        return (Shape(link, pose, 'mesh', scale, path, color) if path else None), filename
    sizes = {'box': ('size',), 'cylinder': ('radius', 'length'), 'sphere': ('radius',)}
    if g.tag not in sizes:
        raise URDFError(f"link {link!r}: unknown <{element.tag}> geometry <{g.tag}>")
    size = tuple(float(x) for attribute in sizes[g.tag] for x in _numbers(g.get(attribute, ''), None, link))
    return Shape(link, pose, g.tag, size, '', color), ''


def _color(material):
    color = material.find('color')
    return tuple(_numbers(color.get('rgba', ''), 4, 'material')) if color is not None else None


def _numbers(text, count, link):
    try:
        values = [float(x) for x in text.split()]
    except ValueError:
        raise URDFError(f"link {link!r}: {text!r} is not numbers") from None
    if not values or (count is not None and len(values) != count) or not np.all(np.isfinite(values)):
        raise URDFError(f"link {link!r}: {text!r} needs {count or 'some'} finite numbers")
    return np.array(values)


def shape_mesh(shape):
    """The shape as a trimesh.Trimesh in its link frame (the shape's origin applied); URDFError naming the link for a
    mesh file that cannot be read."""
    trimesh = require()[1]
    if shape.kind == 'mesh':
        try:
            mesh = trimesh.load(shape.path, force='mesh')
        except Exception as e:   # trimesh raises many kinds for a file it cannot read (or a reader it lacks)
            raise URDFError(f"link {shape.link!r}: cannot read mesh {shape.path!r}: {e}") from None
        if not isinstance(mesh, trimesh.Trimesh) or len(mesh.faces) == 0:
            raise URDFError(f"link {shape.link!r}: mesh {shape.path!r} has no triangles")
        mesh.apply_scale(shape.size)
        if len(mesh.faces) > VIEW_TRIANGLES:
            count = len(mesh.faces)
            mesh, within = decimate(mesh, VIEW_TRIANGLES)
            warnings.warn(f"link {shape.link!r}: mesh {shape.path!r} has {count} triangles; drawn with "
                          f"{len(mesh.faces)} (its vertices merged on a grid, each moved at most {1e3 * within:.3g} "
                          "mm, in the link's colour)", URDFWarning, stacklevel=2)
    elif shape.kind == 'box':
        mesh = trimesh.creation.box(extents=shape.size)
    elif shape.kind == 'cylinder':
        mesh = trimesh.creation.cylinder(radius=shape.size[0], height=shape.size[1], sections=24)
    else:
        mesh = trimesh.creation.icosphere(subdivisions=2, radius=shape.size[0])
    mesh.apply_transform(shape.origin)
    return mesh


def decimate(mesh, triangles):
    """(the mesh simplified to at most ``triangles`` triangles, the farthest a vertex moved) by vertex clustering
    (Rossignac and Borrel): its vertices merged per cell of a grid (``model.meshes.grid_clusters``), coarser until few
    enough triangles stay distinct (the triangles of a surface go as the square of the cells); the result has no
    colours of its own."""
    trimesh = require()[1]
    cells = 512
    while True:
        first, cluster, within = grid_clusters(np.asarray(mesh.vertices), cells)
        faces = cluster[mesh.faces]
        faces = faces[(faces[:, 0] != faces[:, 1]) & (faces[:, 1] != faces[:, 2]) & (faces[:, 2] != faces[:, 0])]
        faces = _distinct(faces, len(first))
        if len(faces) <= triangles or cells <= 2:
            return trimesh.Trimesh(mesh.vertices[first], faces, process=False), within
        cells = max(2, min(cells - 1, int(0.9 * cells * np.sqrt(triangles / len(faces)))))


def _distinct(faces, count):
    """The triangles ``faces`` (indices below ``count``) each once, written from their smallest index (orientation
    kept); sorted by one integer key per triangle where count^3 fits in 64 bits (sorting rows took most of the time)."""
    start = faces.argmin(axis=1)[:, None]
    faces = np.take_along_axis(faces, (start + np.arange(3)) % 3, axis=1)
    if count ** 3 > np.iinfo(np.int64).max:
        return np.unique(faces, axis=0)
    keys = (faces[:, 0].astype(np.int64) * count + faces[:, 1]) * count + faces[:, 2]
    return faces[np.unique(keys, return_index=True)[1]]
