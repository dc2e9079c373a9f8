"""URDF (or xacro) -> Model.

Revolute, continuous and prismatic joints are the degrees of freedom; fixed joints are merged into their
parent body (inertia lumped) and their links stay addressable in ``model.frames``. The root link is fixed
to the world. Mimic joints are kept as independent degrees of freedom (a warning says so) and their
mimic relation is recorded in ``model.mimic``. Anything else that cannot be modelled raises URDFError
naming the element.
"""
import os
import warnings
import xml.etree.ElementTree as ET

import numpy as np

from .. import spatial
from .model import PRISMATIC, REVOLUTE, Frame, Model

DOF_TYPES = {'revolute': REVOLUTE, 'continuous': REVOLUTE, 'prismatic': PRISMATIC}
SUPPORTED = ('revolute', 'continuous', 'prismatic', 'fixed')


class URDFError(ValueError):
    """A URDF that cannot be turned into a model; the message names the offending element."""


def load_urdf(source):
    """Build a Model from a URDF file path, a ``.xacro`` file path, or a URDF XML string."""
    return parse_urdf(_read_xml(source))


def _read_xml(source):
    source = os.fspath(source)
    if source.lstrip().startswith('<'):
        return source
    if not os.path.isfile(source):
        raise URDFError(f"URDF file not found: {source!r}")
    if source.endswith('.xacro'):
        try:
            import xacro
        except ImportError:
            raise URDFError(f"{source!r} is a xacro file but the 'xacro' package is not installed") from None
        return xacro.process_file(source).toxml()
    with open(source, encoding='utf-8') as f:
        return f.read()


def parse_urdf(xml):
    """Build a Model from a URDF XML string."""
    try:
        robot = ET.fromstring(xml)
    except ET.ParseError as e:
        raise URDFError(f"malformed URDF XML: {e}") from None
    if robot.tag != 'robot':
        raise URDFError(f"root element is <{robot.tag}>, expected <robot>")

    links = {}
    for link in robot.findall('link'):
        name = _required(link, 'name', 'link')
        if name in links:
            raise URDFError(f"link {name!r} is defined twice")
        links[name] = link
    if not links:
        raise URDFError("the URDF has no <link>")

    joints, parent_joint, child_joints = {}, {}, {name: [] for name in links}
    for joint in robot.findall('joint'):
        name = _required(joint, 'name', 'joint')
        if name in joints:
            raise URDFError(f"joint {name!r} is defined twice")
        jtype = _required(joint, 'type', f"joint {name!r}")
        if jtype not in SUPPORTED:
            raise URDFError(f"joint {name!r} has type {jtype!r}; supported types are {', '.join(SUPPORTED)}")
        parent = _link_ref(joint, 'parent', name, links)
        child = _link_ref(joint, 'child', name, links)
        if child in parent_joint:
            raise URDFError(f"link {child!r} has two parents: joints {parent_joint[child]!r} and {name!r}")
        joints[name] = joint
        parent_joint[child] = name
        child_joints[parent].append(joint)

    roots = [name for name in links if name not in parent_joint]
    if not roots:
        raise URDFError("the joints form a cycle: every link has a parent, so there is no root link")
    if len(roots) > 1:
        raise URDFError(f"the URDF is not one tree: links {roots} have no parent joint")
    return _build(robot.get('name', ''), roots[0], links, child_joints)


def _build(robot_name, root, links, child_joints):
    names, bodies, parent, jtype, axis, X_tree, inertia = [], [], [], [], [], [], []
    lower, upper, effort, velocity, damping, friction = [], [], [], [], [], []
    frames, mimic = {}, {}
    root_inertia = np.zeros((6, 6))

    def add_inertia(body, I):
        nonlocal root_inertia
        if body < 0:
            root_inertia = root_inertia + I
        else:
            inertia[body] = inertia[body] + I

    def add_dof(joint, child, body, X_joint):
        name = joint.get('name')
        names.append(name)
        bodies.append(child)
        parent.append(body)
        jtype.append(DOF_TYPES[joint.get('type')])
        axis.append(_axis(joint, name))
        X_tree.append(X_joint)
        inertia.append(np.zeros((6, 6)))
        for values, value in zip((lower, upper, effort, velocity), _limits(joint, name)):
            values.append(value)
        dyn = joint.find('dynamics')
        damping.append(_float(dyn, 'damping', 0.0, f"joint {name!r} <dynamics>"))
        friction.append(_float(dyn, 'friction', 0.0, f"joint {name!r} <dynamics>"))
        m = joint.find('mimic')
        if m is not None:
            what = f"joint {name!r} <mimic>"
            mimic[name] = (m.get('joint'), _float(m, 'multiplier', 1.0, what), _float(m, 'offset', 0.0, what))
            warnings.warn(f"joint {name!r} mimics {m.get('joint')!r}; it is modelled as an independent "
                          "degree of freedom", stacklevel=4)

    # Depth first from the root, in document order: a body gets its index before its children.
    stack = [(root, -1, np.eye(6), None)]  # (link, parent body, link_X_parent-body, joint into link)
    visited = set()
    while stack:
        link, body, X_link, joint = stack.pop()
        if link in visited:
            raise URDFError(f"link {link!r} is reached twice: the joints form a cycle")
        visited.add(link)
        if joint is not None and joint.get('type') != 'fixed':
            add_dof(joint, link, body, X_link)
            body, X_link = len(names) - 1, np.eye(6)
        frames[link] = Frame(link, body, X_link)
        add_inertia(body, spatial.transform_inertia(spatial.inverse(X_link), _link_inertia(links[link])))
        for child_joint in reversed(child_joints[link]):  # reversed: the stack pops in document order
            X_joint = _origin(child_joint, f"joint {child_joint.get('name')!r}") @ X_link
            stack.append((child_joint.find('child').get('link'), body, X_joint, child_joint))
    unreached = [name for name in links if name not in visited]
    if unreached:
        raise URDFError(f"links {unreached} are not connected to the root link {root!r}")

    n = len(names)
    return Model(
        name=robot_name, root_link=root, joint_names=tuple(names), body_names=tuple(bodies),
        parent=np.array(parent, dtype=int), joint_type=np.array(jtype, dtype=int),
        axis=np.array(axis, dtype=float).reshape(n, 3), X_tree=np.array(X_tree).reshape(n, 6, 6),
        inertia=np.array(inertia).reshape(n, 6, 6), lower=np.array(lower, dtype=float),
        upper=np.array(upper, dtype=float), effort_limit=np.array(effort, dtype=float),
        velocity_limit=np.array(velocity, dtype=float), damping=np.array(damping, dtype=float),
        friction=np.array(friction, dtype=float), frames=frames, root_inertia=root_inertia, mimic=mimic)


def _required(element, attribute, what):
    value = element.get(attribute)
    if not value:
        raise URDFError(f"{what} has no '{attribute}' attribute")
    return value


def _link_ref(joint, tag, joint_name, links):
    ref = joint.find(tag)
    if ref is None or not ref.get('link'):
        raise URDFError(f"joint {joint_name!r} has no <{tag} link=...>")
    if ref.get('link') not in links:
        raise URDFError(f"joint {joint_name!r} names {tag} link {ref.get('link')!r}, which is not defined")
    return ref.get('link')


def _float(element, attribute, default, what):
    if element is None or element.get(attribute) is None:
        return default
    try:
        return float(element.get(attribute))
    except ValueError:
        raise URDFError(f"{what}: {attribute}={element.get(attribute)!r} is not a number") from None


def _vector(element, attribute, default, what):
    if element is None or element.get(attribute) is None:
        return np.array(default, dtype=float)
    try:
        v = np.array([float(x) for x in element.get(attribute).split()])
    except ValueError:
        v = np.array([])
    if v.shape != (3,) or not np.all(np.isfinite(v)):
        raise URDFError(f"{what}: {attribute}={element.get(attribute)!r} is not three finite numbers")
    return v


def _origin(element, what):
    """Motion transform child_X_parent from an <origin xyz rpy> element."""
    o = element.find('origin')
    xyz = _vector(o, 'xyz', (0, 0, 0), f"{what} <origin>")
    rpy = _vector(o, 'rpy', (0, 0, 0), f"{what} <origin>")
    return spatial.plucker_from_pose(spatial.rpy_to_matrix(rpy), xyz)


def _axis(joint, name):
    a = _vector(joint.find('axis'), 'xyz', (1, 0, 0), f"joint {name!r} <axis>")
    norm = np.linalg.norm(a)
    if norm < 1e-12:
        raise URDFError(f"joint {name!r} has a zero <axis>")
    return a / norm


def _limits(joint, name):
    lim = joint.find('limit')
    what = f"joint {name!r} <limit>"
    lower, upper = _float(lim, 'lower', -np.inf, what), _float(lim, 'upper', np.inf, what)
    if joint.get('type') == 'continuous':
        lower, upper = -np.inf, np.inf
    effort, velocity = _float(lim, 'effort', np.inf, what), _float(lim, 'velocity', np.inf, what)
    if lower > upper:
        raise URDFError(f"{what}: lower {lower} is above upper {upper}")
    if effort < 0 or velocity < 0:
        raise URDFError(f"{what}: effort and velocity limits must be non-negative")
    return lower, upper, effort, velocity


def _link_inertia(link):
    """Spatial inertia of a link about its own frame (zero when it has no <inertial>)."""
    name = link.get('name')
    inertial = link.find('inertial')
    if inertial is None:
        return np.zeros((6, 6))
    what = f"link {name!r} <inertial>"
    mass = _float(inertial.find('mass'), 'value', 0.0, what + " <mass>")
    if not np.isfinite(mass) or mass < 0:
        raise URDFError(f"{what}: mass {mass} must be finite and non-negative")
    el = inertial.find('inertia')
    ixx, ixy, ixz, iyy, iyz, izz = (_float(el, k, 0.0, what + " <inertia>")
                                    for k in ('ixx', 'ixy', 'ixz', 'iyy', 'iyz', 'izz'))
    I = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    if not np.all(np.isfinite(I)):
        raise URDFError(f"{what}: the inertia has non-finite entries")
    eig = np.linalg.eigvalsh(I)
    if eig[0] < -1e-12 * max(1.0, abs(eig[-1])):
        raise URDFError(f"{what}: the inertia is not positive definite (eigenvalues {eig})")
    o = inertial.find('origin')
    R = spatial.rpy_to_matrix(_vector(o, 'rpy', (0, 0, 0), what + " <origin>"))
    com = _vector(o, 'xyz', (0, 0, 0), what + " <origin>")
    return spatial.spatial_inertia(mass, com, R @ I @ R.T)
