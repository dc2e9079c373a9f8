"""MoveIt's semantic robot description (SRDF), the parts a simulated robot needs (no ROS import).

Read as MoveIt and Pinocchio (``loadReferenceConfigurations``) read them:

- ``<virtual_joint type="floating|planar|fixed" child_link=...>``: how the URDF's root link is joined to the world;
- ``<group_state name=...>``: named postures, ``<joint name value>`` each (a floating root takes its 7 coordinates
  x y z qx qy qz qw, a planar one Pinocchio's 4: x y cos sin);
- ``<end_effector parent_link=...>``: the links the end effectors hang from; for a legged robot, its feet.

Anything else (groups, disabled collisions, passive joints, Pinocchio's rotor parameters) is left alone. An SRDF
above SRDF_BYTES is refused before it is parsed; a root orientation that is no rotation (a zero quaternion) is
refused where the stance is read.
"""
import os
import xml.etree.ElementTree as ET
from typing import NamedTuple

import numpy as np

from ..errors import SRDFError
from .model import FREE_FLYER, NQ, PLANAR, Model

STANCE_NAMES = ('standing', 'home')   # the posture to stand in: the first of these, else the first group_state
ROOT_TYPES = {'floating': 'floating', 'planar': 'planar', 'fixed': None}
SRDF_BYTES = 5_000_000   # 40 times the largest SRDF example-robot-data ships (PR2's, 121 kB, mostly disabled pairs)


class VirtualJoint(NamedTuple):
    name: str
    type: str            # 'floating', 'planar' or 'fixed'
    parent_frame: str
    child_link: str


class GroupState(NamedTuple):
    name: str
    group: str
    joints: dict         # joint name -> tuple of values, in document order


class EndEffector(NamedTuple):
    name: str
    parent_link: str
    group: str


class SRDF(NamedTuple):
    robot: str
    virtual_joints: tuple
    group_states: tuple
    end_effectors: tuple

    @property
    def root_joint(self) -> str | None:
        """'floating', 'planar' or None (fixed, or no virtual joint): load_urdf's root_joint."""
        return ROOT_TYPES[self.virtual_joints[0].type] if self.virtual_joints else None

    def stance(self) -> GroupState | None:
        """The group_state named 'standing', else 'home', else the first one; None without any."""
        by_name = {state.name: state for state in self.group_states}
        for name in STANCE_NAMES:
            if name in by_name:
                return by_name[name]
        return self.group_states[0] if self.group_states else None

    @property
    def feet(self) -> list[str]:
        """The end effectors' parent links, each once, in document order."""
        return list(dict.fromkeys(effector.parent_link for effector in self.end_effectors))


def load_srdf(source: str | os.PathLike) -> SRDF:
    """An SRDF from a file path or an XML string; SRDFError naming the element if it is malformed."""
    source = os.fspath(source)
    if not source.lstrip().startswith('<'):
        try:
            _check_size(os.path.getsize(source), f"SRDF file {source!r}")
            with open(source, encoding='utf-8') as f:
                source = f.read()
        except OSError as e:
            raise SRDFError(f"cannot read SRDF file {source!r}: {e.strerror}") from None
    _check_size(len(source.encode()), 'the SRDF')
    try:
        robot = ET.fromstring(source)
    except ET.ParseError as e:
        raise SRDFError(f"malformed SRDF XML: {e}") from None
    if robot.tag != 'robot':
        raise SRDFError(f"SRDF root element is <{robot.tag}>, expected <robot>")
    virtual = tuple(_virtual_joint(element) for element in robot.findall('virtual_joint'))
    states = tuple(_group_state(element) for element in robot.findall('group_state'))
    effectors = tuple(EndEffector(_required(e, 'name', 'end_effector'), _required(e, 'parent_link', 'end_effector'),
                                  e.get('group', '')) for e in robot.findall('end_effector'))
    return SRDF(robot.get('name', ''), virtual, states, effectors)


def _check_size(size, what):
    if size > SRDF_BYTES:
        raise SRDFError(f"{what} has {size / 1e6:.1f} MB, more than the {SRDF_BYTES / 1e6:g} MB an SRDF may have")


def _required(element, attribute, where):
    value = element.get(attribute)
    if not value:
        name = element.get('name')
        raise SRDFError(f"SRDF <{where}{f' name={name!r}' if name else ''}> has no {attribute!r}")
    return value


def _virtual_joint(element):
    joint = VirtualJoint(*(_required(element, a, 'virtual_joint') for a in ('name', 'type', 'parent_frame',
                                                                            'child_link')))
    if joint.type not in ROOT_TYPES:
        raise SRDFError(f"SRDF <virtual_joint name={joint.name!r}> has type {joint.type!r}; expected one of "
                        f"{list(ROOT_TYPES)}")
    return joint


def _group_state(element):
    name = _required(element, 'name', 'group_state')
    joints = {}
    for joint in element.findall('joint'):
        joint_name = _required(joint, 'name', f"group_state name={name!r}> <joint")
        text = _required(joint, 'value', f"group_state name={name!r}> <joint")
        try:
            values = tuple(float(word) for word in text.split())
        except ValueError:
            values = ()
        if not values or not np.all(np.isfinite(values)):
            raise SRDFError(f"SRDF <group_state name={name!r}> <joint name={joint_name!r}> value={text!r} is not "
                            "finite numbers")
        joints[joint_name] = values
    return GroupState(name, element.get('group', ''), joints)


def configuration(model: Model, state: GroupState, srdf: SRDF) -> tuple[np.ndarray, bool]:
    """(q, base given): the model's neutral configuration with the group_state's joint values; a floating or planar
    root takes the values of the SRDF's virtual joint (or of the model's root joint name). SRDFError for a joint
    the model lacks, a value of the wrong length or a root orientation that is zero."""
    q = model.neutral()
    root_names = {model.body_joint_names[0]} | {joint.name for joint in srdf.virtual_joints}
    floating_root = model.joint_type[0] in (FREE_FLYER, PLANAR)
    base_given = False
    for name, values in state.joints.items():
        if name in model.mimic and model.coupling is not None:   # follows its master, as in MoveIt
            continue
        if floating_root and name in root_names:
            start, count = model.idx_q[0], NQ[model.joint_type[0]]
            base_given = True
        elif name in model.joint_names:
            start, count = model.joint_q_index[model.joint_names.index(name)], 1
        else:
            raise SRDFError(f"SRDF <group_state name={state.name!r}> names joint {name!r}, which robot "
                            f"{model.name!r} does not have as a moving joint")
        if len(values) != count:
            raise SRDFError(f"SRDF <group_state name={state.name!r}> <joint name={name!r}> has {len(values)} "
                            f"values; the joint has {count} coordinates")
        if count > 1:
            _check_orientation(state, name, values)
        q[start:start + count] = values
    return q, base_given


def _check_orientation(state, name, values):
    """SRDFError where a root joint's orientation, the quaternion (qx qy qz qw) of a floating one's 7 values or the
    (cos, sin) of a planar one's 4, is zero: it is no rotation (normalizing it gives NaN)."""
    orientation, kind = (values[3:], 'quaternion (qx qy qz qw)') if len(values) == 7 else (values[2:], '(cos, sin)')
    if not np.linalg.norm(orientation) > 0:
        raise SRDFError(f"SRDF <group_state name={state.name!r}> <joint name={name!r}> has the {kind} "
                        f"{orientation}, which is no orientation")


def check_links(model: Model, srdf: SRDF) -> None:
    """SRDFError unless the virtual joint joins the model's root link and the end effectors hang from its links."""
    for joint in srdf.virtual_joints:
        if joint.child_link != model.root_link:
            raise SRDFError(f"SRDF <virtual_joint name={joint.name!r}> child_link {joint.child_link!r} is not the "
                            f"root link {model.root_link!r} of robot {model.name!r}")
    for effector in srdf.end_effectors:
        if effector.parent_link not in model.frames:
            raise SRDFError(f"SRDF <end_effector name={effector.name!r}> parent_link {effector.parent_link!r} is not "
                            f"a link of robot {model.name!r}")


def stance_configuration(model: Model, srdf: SRDF) -> tuple[str, np.ndarray, bool] | None:
    """(name, q, base given) of the SRDF's stance (``SRDF.stance``, by ``configuration``), None without a
    group_state; SRDFError where the SRDF does not fit the model (``check_links``, ``configuration``)."""
    check_links(model, srdf)
    state = srdf.stance()
    return None if state is None else (state.name, *configuration(model, state, srdf))
