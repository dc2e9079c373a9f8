"""URDF (or xacro) -> Model.

Revolute, continuous and prismatic joints are 1-DOF joints; floating joints (6 DOF) and planar joints (3 DOF, in
the xy plane of the joint frame: the axis must be z, as Pinocchio reads them) have Pinocchio's layouts
(``model.py``); fixed joints are merged into their parent body (inertia lumped) and their links stay addressable
in ``model.frames``. The root link is fixed to the world, or joined to it by ``root_joint`` ('floating' or
'planar', named 'root_joint', as Pinocchio's ``buildModelFromUrdf(filename, root_joint)``). A ``<mimic>`` joint
is a coupled coordinate by default, q = multiplier q_master + offset (``mimic.py``; a mimic of a mimic resolves to
the root master), as in MoveIt, gz, MuJoCo (an equality constraint) and Pinocchio's ``buildModelFromUrdf(filename,
mimic=True)``: nq and nv count the independent joints. With ``mimic=False`` (Pinocchio's default) it is an
independent degree of freedom (a warning says so) and the relation is only recorded in ``model.mimic``. Anything
else that cannot be modelled raises URDFError naming the element.

The contract: whatever ``load_urdf`` returns runs. Every number is checked (finite, within physical
bounds, non-negative where it must be), so inverse dynamics is finite at every state within the limits.
Inconsistent but finite inertias (not positive definite, or violating the triangle inequality, as CAD
exports often are), equal lower and upper limits, zero effort or velocity limits, and a moving subtree without
mass load with a URDFWarning naming the element, as in Pinocchio and KDL; ``strict=True`` refuses the inertias
instead. An inertia with one principal moment and the others zero to round-off (HyQ's feet) loads silently.
"""
import os
import warnings
import xml.etree.ElementTree as ET

import numpy as np

from .. import spatial
from ..errors import URDFError, URDFWarning
from .mimic import couple, resolve_masters
from .model import FREE_FLYER, NQ, NV, PLANAR, PRISMATIC, REVOLUTE, Frame, Model

DOF_TYPES = {'revolute': REVOLUTE, 'continuous': REVOLUTE, 'prismatic': PRISMATIC, 'floating': FREE_FLYER,
             'planar': PLANAR}
SUPPORTED = ('revolute', 'continuous', 'prismatic', 'fixed', 'floating', 'planar')
ROOT_JOINTS = {None: None, 'floating': FREE_FLYER, 'planar': PLANAR}
ROOT_JOINT_NAME = 'root_joint'   # Pinocchio's name for it

# Physical bounds, far beyond any robot and far below floating-point overflow (1e308), so that products
# such as m |r|^2 qd^2 summed over a tree stay finite.
MAX_LENGTH = 1e6                          # m: origins, centres of mass; joint limits (m or rad) beyond
                                          # it mean no limit (some URDFs write 1e16 for that)
MAX_MASS = 1e9                            # kg
MAX_INERTIA = MAX_MASS * MAX_LENGTH ** 2  # kg m^2
# Relative tolerance of the inertia checks: values exported in single precision (7 digits) pass.
INERTIA_RTOL = 1e-6


def load_urdf(source: str | os.PathLike, strict: bool = False, root_joint: str | None = None,
              mimic: bool = True) -> Model:
    """Build a Model from a URDF file path, a ``.xacro`` file path, or a URDF XML string.

    strict: raise URDFError for an inertia that is not physically consistent (not positive
    semidefinite, or violating the triangle inequality) instead of loading it with a warning.
    root_joint: None (the root link is fixed to the world), 'floating' or 'planar': the joint between the world and
    the root link, named 'root_joint', whose coordinates come first in q and qd.
    mimic: True (default, as MoveIt, gz and MuJoCo) couples each <mimic> joint to its master; False (Pinocchio's
    default) makes it an independent degree of freedom, with a warning.
    """
    model, messages = _parse(read_xml(source), strict, root_joint, mimic)
    for message in messages:
        warnings.warn(message, URDFWarning, stacklevel=2)
    return model


def read_xml(source):
    source = os.fspath(source)
    if source.lstrip().startswith('<'):
        return source
    if os.path.isdir(source):
        raise URDFError(f"{source!r} is a directory, not a URDF file")
    if not os.path.isfile(source):
        raise URDFError(f"{source!r} is neither a URDF file (not found) nor URDF XML (which starts with '<')")
    if source.endswith('.xacro'):
        try:
            import xacro
        except ImportError:
            raise URDFError(f"{source!r} is a xacro file but the 'xacro' package is not installed") from None
        try:
            return xacro.process_file(source).toxml()
        except Exception as e:  # xacro raises many types (XacroException, NameError, ExpatError, ...)
            raise URDFError(f"xacro could not expand {source!r}: {e}") from None
    try:
        with open(source, encoding='utf-8-sig') as f:
            text = f.read()
    except UnicodeDecodeError as e:
        raise URDFError(f"{source!r} is not UTF-8 text: {e}") from None
    if not text.lstrip().startswith('<'):
        raise URDFError(f"URDF file {source!r} does not hold XML (its text does not start with '<')")
    return text


def parse_urdf(xml, strict=False, root_joint=None, mimic=True):
    """Build a Model from a URDF XML string; ``strict``, ``root_joint`` and ``mimic`` as in ``load_urdf``."""
    model, messages = _parse(xml, strict, root_joint, mimic)
    for message in messages:
        warnings.warn(message, URDFWarning, stacklevel=2)
    return model


def _parse(xml, strict, root_joint=None, mimic=True):
    """(model, warning messages) from a URDF XML string."""
    if root_joint not in ROOT_JOINTS:
        raise ValueError(f"root_joint must be None, 'floating' or 'planar', got {root_joint!r}")
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
    messages = []
    if root_joint is not None and ROOT_JOINT_NAME in joints:
        raise URDFError(f"the URDF has a joint named {ROOT_JOINT_NAME!r}, the name of the root joint it is asked for")
    model = _build(robot.get('name', ''), roots[0], links, child_joints, set(joints), strict, messages,
                   ROOT_JOINTS[root_joint], mimic)
    if mimic and model.mimic:
        model = couple(model, resolve_masters(model.mimic, model.body_joint_names))
    if model.massless_joints:
        body = model.body_joint_names.index
        top = [name for name in model.massless_joints
               if model.parent[body(name)] < 0
               or model.body_joint_names[model.parent[body(name)]] not in model.massless_joints]
        messages.append(f"joints {top} move no mass or inertia (every link from them to the leaves is "
                        "massless): forward dynamics raises an error on this model; inverse dynamics works")
    return model, messages


def _build(robot_name, root, links, child_joints, joint_names, strict, messages, root_joint=None, couple_mimic=False):
    names, bodies, parent, jtype, axis, X_tree, inertia = [], [], [], [], [], [], []
    lower, upper, effort, velocity, damping, friction = [], [], [], [], [], []
    frames, mimic, joint_names_1dof = {}, {}, []
    root_inertia = np.zeros((6, 6))

    def add_inertia(body, I):
        nonlocal root_inertia
        if body < 0:
            root_inertia = root_inertia + I
        else:
            inertia[body] = inertia[body] + I

    def add_joint(name, kind, child, body, X_joint):
        names.append(name)
        bodies.append(child)
        parent.append(body)
        jtype.append(kind)
        X_tree.append(X_joint)
        inertia.append(np.zeros((6, 6)))

    def add_multi_dof(name, kind, child, body, X_joint):
        """A floating or planar joint: no axis, limits, damping or friction (as Pinocchio reads them)."""
        add_joint(name, kind, child, body, X_joint)
        axis.append(np.zeros(3))
        for values, value, count in ((lower, -np.inf, NQ[kind]), (upper, np.inf, NQ[kind]), (effort, np.inf, NV[kind]),
                                     (velocity, np.inf, NV[kind]), (damping, 0.0, NV[kind]), (friction, 0.0, NV[kind])):
            values.extend([value] * count)

    def add_dof(joint, child, body, X_joint):
        name = joint.get('name')
        kind = DOF_TYPES[joint.get('type')]
        if kind == PLANAR:
            a = _axis(joint, name) if joint.find('axis') is not None else np.array([0.0, 0.0, 1.0])
            if not np.array_equal(a, [0.0, 0.0, 1.0]):
                raise URDFError(f"planar joint {name!r} has <axis xyz={joint.find('axis').get('xyz')!r}>: the plane "
                                "must be the xy plane of the joint frame (axis 0 0 1); rotate the joint <origin> instead")
        if kind in (FREE_FLYER, PLANAR):
            add_multi_dof(name, kind, child, body, X_joint)
            return
        joint_names_1dof.append(name)
        add_joint(name, kind, child, body, X_joint)
        axis.append(_axis(joint, name))
        for values, value in zip((lower, upper, effort, velocity), _limits(joint, name, messages)):
            values.append(value)
        dyn = joint.find('dynamics')
        damping.append(_float(dyn, 'damping', 0.0, f"joint {name!r} <dynamics>", minimum=0.0))
        friction.append(_float(dyn, 'friction', 0.0, f"joint {name!r} <dynamics>", minimum=0.0))
        m = joint.find('mimic')
        if m is not None:
            what = f"joint {name!r} <mimic>"
            relation = (_required(m, 'joint', what), _float(m, 'multiplier', 1.0, what),
                        _float(m, 'offset', 0.0, what))
            if relation[0] not in joint_names:
                messages.append(f"{what} names joint {relation[0]!r}, which is not defined; the mimic "
                                "relation is ignored")
            else:
                mimic[name] = relation
                if not couple_mimic:
                    messages.append(f"joint {name!r} mimics {relation[0]!r}; it is modelled as an independent "
                                    "degree of freedom (mimic=False)")

    # Depth first from the root, in document order: a body gets its index before its children.
    stack = [(root, -1, np.eye(6), None)]  # (link, parent body, link_X_parent-body, joint into link)
    visited = set()
    while stack:
        link, body, X_link, joint = stack.pop()
        if link in visited:
            raise URDFError(f"link {link!r} is reached twice: the joints form a cycle")
        visited.add(link)
        if joint is None and root_joint is not None:
            add_multi_dof(ROOT_JOINT_NAME, root_joint, link, -1, np.eye(6))
            body = 0
        elif joint is not None and joint.get('type') != 'fixed':
            add_dof(joint, link, body, X_link)
            body, X_link = len(names) - 1, np.eye(6)
        frames[link] = Frame(link, body, X_link, None if joint is None else joint.find('parent').get('link'))
        I_link = spatial.transform_inertia(spatial.inverse(X_link), _link_inertia(links[link], strict, messages))
        if not np.all(np.isfinite(I_link)):
            raise URDFError(f"link {link!r} <inertial>: its inertia is not finite in the frame of joint "
                            f"{joint.get('name') if joint is not None else root!r}")
        add_inertia(body, I_link)
        for child_joint in reversed(child_joints[link]):  # reversed: the stack pops in document order
            X_joint = _origin(child_joint, f"joint {child_joint.get('name')!r}") @ X_link
            stack.append((child_joint.find('child').get('link'), body, X_joint, child_joint))
    unreached = [name for name in links if name not in visited]
    if unreached:
        raise URDFError(f"links {unreached} are not connected to the root link {root!r}")

    n = len(names)
    return Model(
        name=robot_name, root_link=root, joint_names=tuple(joint_names_1dof), body_names=tuple(bodies),
        parent=np.array(parent, dtype=int), joint_type=np.array(jtype, dtype=int),
        axis=np.array(axis, dtype=float).reshape(n, 3), X_tree=np.array(X_tree).reshape(n, 6, 6),
        inertia=np.array(inertia).reshape(n, 6, 6), lower=np.array(lower, dtype=float),
        upper=np.array(upper, dtype=float), effort_limit=np.array(effort, dtype=float),
        velocity_limit=np.array(velocity, dtype=float), damping=np.array(damping, dtype=float),
        friction=np.array(friction, dtype=float), frames=frames, root_inertia=root_inertia, mimic=mimic,
        body_joint_names=tuple(names))


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


def _float(element, attribute, default, what, minimum=-np.inf, maximum=np.inf):
    """The attribute as a finite number in [minimum, maximum], or default when it is absent."""
    if element is None or element.get(attribute) is None:
        return default
    text = element.get(attribute)
    try:
        value = float(text) + 0.0  # + 0.0 turns -0 into 0, so that e.g. uniform(-v, v) works for v = 0
    except ValueError:
        raise URDFError(f"{what}: {attribute}={text!r} is not a number") from None
    if not np.isfinite(value):
        raise URDFError(f"{what}: {attribute}={text!r} is not finite")
    if value < minimum:
        raise URDFError(f"{what}: {attribute}={text!r} must be at least {minimum:g}")
    if value > maximum:
        raise URDFError(f"{what}: {attribute}={text!r} is beyond the physical bound {maximum:g}")
    return value


def _vector(element, attribute, default, what, bound=np.inf):
    """The attribute as three finite numbers of magnitude <= bound, or default when it is absent."""
    if element is None or element.get(attribute) is None:
        return np.array(default, dtype=float)
    try:
        v = np.array([float(x) for x in element.get(attribute).split()])
    except ValueError:
        v = np.array([])
    if v.shape != (3,) or not np.all(np.isfinite(v)):
        raise URDFError(f"{what}: {attribute}={element.get(attribute)!r} is not three finite numbers")
    if np.max(np.abs(v)) > bound:
        raise URDFError(f"{what}: {attribute}={element.get(attribute)!r} is beyond the physical bound {bound:g}")
    return v


def _origin(element, what):
    """Motion transform child_X_parent from an <origin xyz rpy> element."""
    o = element.find('origin')
    xyz = _vector(o, 'xyz', (0, 0, 0), f"{what} <origin>", bound=MAX_LENGTH)
    rpy = _vector(o, 'rpy', (0, 0, 0), f"{what} <origin>")
    return spatial.plucker_from_pose(spatial.rpy_to_matrix(rpy), xyz)


def _axis(joint, name):
    a = _vector(joint.find('axis'), 'xyz', (1, 0, 0), f"joint {name!r} <axis>")
    scale = np.max(np.abs(a))  # scaled before the norm, which would overflow for 1e200
    if scale == 0.0:
        raise URDFError(f"joint {name!r} has a zero <axis>")
    a = a / scale
    return a / np.linalg.norm(a)


def _limits(joint, name, messages):
    lim = joint.find('limit')
    what = f"joint {name!r} <limit>"
    lower = _float(lim, 'lower', -np.inf, what, maximum=MAX_LENGTH)
    upper = _float(lim, 'upper', np.inf, what, minimum=-MAX_LENGTH)
    effort = _float(lim, 'effort', np.inf, what, minimum=0.0)
    velocity = _float(lim, 'velocity', np.inf, what, minimum=0.0)
    if joint.get('type') != 'continuous':
        if lower > upper:
            raise URDFError(f"{what}: lower {lower} is above upper {upper}")
        lower = -np.inf if lower < -MAX_LENGTH else lower
        upper = np.inf if upper > MAX_LENGTH else upper
    else:
        lower, upper = -np.inf, np.inf
    # Zeros, as CAD exports write for "not set", are taken as written: one warning per joint says what they do.
    effects = ["effort 0: no drive can move it (it moves only under gravity and contact)"] * (effort == 0.0) + [
        "velocity 0: references hold it still (the simulator reads 0 as no limit)"] * (velocity == 0.0) + [
        f"lower == upper == {lower:g}: its limits hold it at this one position"] * (lower == upper)
    if effects:
        messages.append(f"{what}: {'; '.join(effects)} (a URDF that means other limits must say them)")
    return lower, upper, effort, velocity


def _link_inertia(link, strict, messages):
    """Spatial inertia of a link about its own frame (zero when it has no <inertial>)."""
    name = link.get('name')
    inertial = link.find('inertial')
    if inertial is None:
        return np.zeros((6, 6))
    what = f"link {name!r} <inertial>"
    mass = _float(inertial.find('mass'), 'value', 0.0, what + " <mass>", maximum=MAX_MASS)
    if mass < 0:
        raise URDFError(f"{what}: mass {mass} must be non-negative")
    el = inertial.find('inertia')
    ixx, ixy, ixz, iyy, iyz, izz = (_float(el, k, 0.0, what + " <inertia>", -MAX_INERTIA, MAX_INERTIA)
                                    for k in ('ixx', 'ixy', 'ixz', 'iyy', 'iyz', 'izz'))
    I = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    problem = _inconsistency(I)
    if problem:
        message = f"{what}: the inertia {problem}"
        if strict:
            raise URDFError(message)
        messages.append(message + "; loaded as given, as Pinocchio and KDL do (strict=True refuses it)")
    o = inertial.find('origin')
    R = spatial.rpy_to_matrix(_vector(o, 'rpy', (0, 0, 0), what + " <origin>"))
    com = _vector(o, 'xyz', (0, 0, 0), what + " <origin>", bound=MAX_LENGTH)
    return spatial.spatial_inertia(mass, com, R @ I @ R.T)


def _inconsistency(I):
    """Why the rotational inertia I (about the centre of mass) is not physically consistent, or ''.

    Consistent: positive semidefinite, and its principal moments obey the triangle inequality
    e1 + e2 >= e3 (mass is spread in space, so no moment exceeds the sum of the other two).
    """
    e = np.linalg.eigvalsh(I)
    tolerance = INERTIA_RTOL * np.max(np.abs(e))
    if e[0] < -tolerance:
        return f"is not positive semidefinite (eigenvalues {e[0]:.6g}, {e[1]:.6g}, {e[2]:.6g})"
    if e[0] + e[1] < e[2] - tolerance and e[1] > tolerance:   # (not one moment alone, others zero to round-off)
        return (f"violates the triangle inequality (principal moments {e[0]:.6g} + {e[1]:.6g} < "
                f"{e[2]:.6g})")
    return 
