"""The robot model a node runs: its URDF from a parameter, a file or the robot_description topic, its root joint, its
SRDF (root joint, stance, feet) and the order of its joints.
"""
import numpy as np
from std_msgs.msg import String

from ..errors import SRDFError
from ..model import URDFError, load_urdf
from ..model.collision import ContactPoint
from ..model.srdf import load_srdf, stance_configuration
from ..model.urdf import parse_urdf
from .messages import LATCHED_QOS
from .parameter_schema import ConfigurationError


def joint_order(model, joints):
    """Model indices of the `joints` parameter (empty: model order), checked against the model."""
    names = [str(name) for name in joints] or list(model.joint_names)
    unknown = [name for name in names if name not in model.joint_names]
    if unknown:
        raise ConfigurationError(f"parameter 'joints' names {unknown}, not degrees of freedom of "
                                 f"{model.name!r}: {list(model.joint_names)}")
    if sorted(names) != sorted(model.joint_names):
        raise ConfigurationError(f"parameter 'joints' must list each of {list(model.joint_names)} once, "
                                 f"got {names}")
    return names, np.array([model.joint_names.index(name) for name in names], dtype=int)


def _fixed_base_only(on_model):
    """on_model, refusing (ConfigurationError) a model with a floating or planar joint inside the URDF: with
    root_joint '' the node runs fixed-base robots."""
    def accept(model, *urdf):
        if not model.fixed_base:
            raise ConfigurationError(f"robot {model.name!r} has a floating or planar joint: set the parameter "
                                     "'root_joint' ('floating' or 'planar') to run a robot that moves its base")
        on_model(model, *urdf)
    return accept


def semantic_description(node):
    """From the parameters `robot_description_semantic` (SRDF XML, MoveIt's name) and `srdf_file`: returns the SRDF
    they give (model.srdf.SRDF), None for neither, ConfigurationError for an invalid one."""
    xml = node.get_parameter('robot_description_semantic').value
    path = node.get_parameter('srdf_file').value
    if not (xml or path):
        return None
    try:
        return load_srdf(xml or path)
    except SRDFError as e:
        raise ConfigurationError(f"invalid SRDF from {'robot_description_semantic' if xml else repr(path)}: {e}") \
            from None


def stance(model, srdf):
    """model.srdf.stance_configuration as ConfigurationError; None without an SRDF."""
    try:
        return None if srdf is None else stance_configuration(model, srdf)
    except SRDFError as e:
        raise ConfigurationError(str(e)) from None


def contact_point(entry):
    """A ContactPoint from a 'link x y z radius' entry of the parameter `contact_points`."""
    words = str(entry).split()
    try:
        if len(words) != 5:
            raise ValueError
        x, y, z, radius = map(float, words[1:])
    except ValueError:
        raise ConfigurationError(f"parameter 'contact_points': {entry!r} is not 'link x y z radius'") from None
    return ContactPoint(words[0], (x, y, z), radius)


def _fitting(on_model, srdf):
    """on_model, refusing (ConfigurationError) a model the SRDF does not fit."""
    def accept(model, *urdf):
        stance(model, srdf)
        on_model(model, *urdf)
    return accept


class ModelSource:
    """Reads `robot_description` and `urdf_file` (declared from the node's schema) and calls on_model(model): once,
    right away, with the parameter (URDF XML) or the file; else with each URDF on the `robot_description` topic that
    the node can run, the latest winning, as with robot_state_publisher and ros2_control's controller manager.
    on_model builds everything the node needs for the model before it changes any of the node's state (the executor
    thread runs it between two callbacks, so none sees half a switch), or raises ConfigurationError (e.g. joints the
    configuration does not name): that URDF, like an invalid one, is logged and skipped, and the node keeps the model
    it runs. An invalid URDF from a parameter is a ConfigurationError.

    `root_joint` (its default is the node's schema's): '' builds a fixed-base model and refuses one with a floating
    or planar joint; 'floating' or 'planar' is passed to load_urdf / parse_urdf as the root joint (as Pinocchio's
    buildModelFromUrdf(filename, root_joint)). ``with_urdf``: call on_model(model, urdf) with the URDF it came from
    (XML, or the file's path) for nodes that read more of it (collision geometry). ``srdf`` (model.srdf.SRDF, from
    ``semantic_description``): its floating or planar virtual joint is the root joint where `root_joint` is ''; a
    model it does not fit (links, stance joints) is refused as above."""

    def __init__(self, node, on_model, with_urdf=False, srdf=None):
        self._node = node
        self._with_urdf = with_urdf
        self._root_joint = node.get_parameter('root_joint').value or (srdf.root_joint if srdf is not None else None)
        if srdf is not None:
            on_model = _fitting(on_model, srdf)
        self._on_model = _fixed_base_only(on_model) if self._root_joint is None else on_model
        self._running = None   # (URDF XML, model) the node runs, when it came from the topic
        self._mimic = node.get_parameter('mimic').value
        xml = node.get_parameter('robot_description').value
        path = node.get_parameter('urdf_file').value
        if xml or path:
            try:
                model = (parse_urdf(xml, root_joint=self._root_joint, mimic=self._mimic) if xml
                         else load_urdf(path, root_joint=self._root_joint, mimic=self._mimic))
            except URDFError as e:
                source = "parameter 'robot_description'" if xml else f"urdf_file {path!r}"
                raise ConfigurationError(f"invalid URDF from {source}: {e}") from None
            self._offer(model, xml or path)
            return
        self._subscription = node.create_subscription(String, 'robot_description', self._on_message,
                                                      LATCHED_QOS)
        node.get_logger().info(f"waiting for a URDF on {self._subscription.topic_name}")

    def _offer(self, model, urdf):
        if self._with_urdf:
            self._on_model(model, urdf)
        else:
            self._on_model(model)

    def _on_message(self, msg):
        if self._running is not None and msg.data == self._running[0]:
            return   # the same URDF again (a publisher restarted)
        topic = self._subscription.topic_name
        keeping = (f"keeping robot model {self._running[1].name!r}" if self._running is not None
                   else "waiting for another one")
        try:
            model = parse_urdf(msg.data, root_joint=self._root_joint, mimic=self._mimic)
        except URDFError as e:
            self._node.get_logger().error(f"invalid URDF on {topic}: {e}; {keeping}")
            return
        try:
            self._offer(model, msg.data)
        except ConfigurationError as e:
            self._node.get_logger().error(f"cannot run with the URDF on {topic}: {e}; {keeping}")
            return
        line = f"robot model {model.name!r} ({model.nv} DOF) from {topic}"
        if self._running is not None:
            line = f"switched to {line}, replacing {self._running[1].name!r}"
        self._running = (msg.data, model)
        self._node.get_logger().info(line)
