"""The robot in a viser scene, placed by our forward kinematics (``frame_placements``): one scene frame per URDF
link, its shapes fixed in it; link axes, centre of mass and contact points shown on demand."""
import numpy as np

from .. import spatial
from ..algorithms.centroidal import center_of_mass
from ..algorithms.kinematics import frame_placements
from ..model.collision import contact_points_from_urdf
from .geometry import DEFAULT_COLOR, shape_mesh

COM_COLOR = (230, 30, 30)
CONTACT_COLOR = (250, 160, 0)
BONE_COLOR = (60, 60, 70)


def wxyz(R):
    """viser's quaternion order (w, x, y, z) of a rotation matrix."""
    x, y, z, w = spatial.matrix_to_quaternion(R)
    return np.array([w, x, y, z])


def robot_size(model):
    """A length for markers: the spread of the link origins at the neutral posture (at least 0.2 m)."""
    origins = np.array([p for _, p in frame_placements(model, model.neutral()).values()])
    return max(0.2, float(np.ptp(origins, axis=0).max()))


def bounds(model, meshes, q):
    """(low, high) corners of the box around the link origins and the shapes (link, trimesh) at q."""
    placements = frame_placements(model, q)
    points = [p for _, p in placements.values()]
    for link, mesh in meshes:
        R, p = placements[link]
        points += list(mesh.bounds @ R.T + p)
    points = np.array(points)
    return points.min(axis=0), points.max(axis=0)


def look_at_robot(server, low, high):
    """Start the camera looking at the box (low, high) from the front right, above."""
    centre, size = 0.5 * (low + high), max(0.2, float(np.linalg.norm(high - low)))
    server.initial_camera.position = tuple(centre + size * np.array([1.4, -1.4, 0.8]))
    server.initial_camera.look_at = tuple(centre)
    server.initial_camera.up = (0.0, 0.0, 1.0)


class RobotScene:
    """The robot under scene node ``name``. ``show(q)`` moves it; ``opacity`` and ``color`` draw a ghost (every
    shape in one colour). ``urdf`` (path or XML) gives the contact points; None: none shown."""

    def __init__(self, server, model, geometry, name='/robot', urdf=None, opacity=None, color=None):
        self.server, self.model = server, model
        size = robot_size(model)
        scene = server.scene
        self.frames = {link: scene.add_frame(f'{name}/{_node(link)}', show_axes=False, axes_length=0.15 * size,
                                             axes_radius=0.005 * size)
                       for link in model.frames}
        meshes = []
        for k, shape in enumerate(geometry.shapes):
            mesh = shape_mesh(shape)
            meshes.append((shape.link, mesh))
            node = f'{name}/{_node(shape.link)}/shape{k}'
            own_colours = shape.kind == 'mesh' and shape.color == DEFAULT_COLOR and mesh.visual.defined
            if color is not None or not own_colours:   # a ghost, a primitive, a material, a mesh without colours
                rgb = color if color is not None else tuple(int(255 * c) for c in shape.color[:3])
                scene.add_mesh_simple(node, mesh.vertices, mesh.faces, color=rgb,
                                      opacity=opacity if opacity is not None else shape.color[3])
            else:   # the mesh's own colours (a .dae, .obj, .glb with materials)
                scene.add_mesh_trimesh(node, mesh)
        # Bones from each moving body's parent to it, and from each link to its shapes away from its origin: the
        # legs of a robot that declares only its feet still show.
        origin = np.zeros(3)
        self.bones = [((model.body_names[p] if p >= 0 else model.root_link, origin), (model.body_names[i], origin))
                      for i, p in enumerate(model.parent)]
        self.bones += [((shape.link, origin), (shape.link, shape.origin[:3, 3])) for shape in geometry.shapes
                       if shape.link in self.frames and np.any(shape.origin[:3, 3])]
        self.skeleton = scene.add_line_segments(f'{name}_bones', np.zeros((len(self.bones), 2, 3)),
                                                color if color is not None else BONE_COLOR, thickness=0.01 * size)
        self.com = scene.add_icosphere(f'{name}_com', radius=0.04 * size, color=COM_COLOR, visible=False)
        points = contact_points_from_urdf(urdf) if urdf is not None else []
        # a little larger than the contact sphere, so that it shows through the shape it sits in
        self.contacts = [scene.add_icosphere(f'{name}/{_node(p.link)}/contact{k}', color=CONTACT_COLOR,
                                             radius=max(1.2 * p.radius, 0.012 * size), position=p.offset, visible=False)
                         for k, p in enumerate(points) if p.link in self.frames]

        self.bounds = bounds(model, meshes, model.neutral())

    def show(self, q):
        """Place every link frame (and the centre of mass when shown) at configuration q."""
        placements = frame_placements(self.model, q)
        with self.server.atomic():
            for link, (R, p) in placements.items():
                frame = self.frames[link]
                frame.wxyz = wxyz(R)
                frame.position = p
            self.skeleton.points = np.array([[placements[link].p + placements[link].R @ offset for link, offset in bone]
                                             for bone in self.bones])
            if self.com.visible:
                self.com.position = center_of_mass(self.model, q)
        return placements

    def show_axes(self, on):
        for frame in self.frames.values():
            frame.show_axes = on

    def show_com(self, on, q):
        self.com.visible = on
        if on:
            self.com.position = center_of_mass(self.model, q)

    def show_contacts(self, on):
        for sphere in self.contacts:
            sphere.visible = on



def _node(link):
    """A scene node name for a link ('/' separates scene nodes)."""
    return link.replace('/', '_')
