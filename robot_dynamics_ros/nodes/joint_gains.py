"""Per-joint gains as ros2_controllers take them.

joint_trajectory_controller's PID gains are a map per joint, gains.<joint>.p, .d, .i (its parameter file); the
controllers here also take one number or list per term (kp, kd, ki). Both forms are accepted: see JointGains.
"""
import numpy as np
from rclpy.parameter import Parameter

from .node_parameters import RuntimeParameters, as_float, declare_spec, given_value
from .parameter_schema import ConfigurationError

GAINS_PREFIX = 'gains.'


def gain_name(joint, term):
    """The parameter of one joint's gain, as joint_trajectory_controller names it: gains.<joint>.<term>."""
    return f'{GAINS_PREFIX}{joint}.{term}'


def split_gain_name(name):
    """(joint, term) of a parameter named gains.<joint>.<term>, else None. Joint names may hold dots; the term
    may not."""
    if not name.startswith(GAINS_PREFIX):
        return None
    joint, dot, term = name[len(GAINS_PREFIX):].rpartition('.')
    return (joint, term) if dot and joint and term else None


def joint_gain(name, value):
    """One joint's gain: a finite number >= 0 (an integer is taken as a float, as YAML writes 400 for 400.0), not
    a boolean; else ConfigurationError."""
    if isinstance(value, bool):
        raise ConfigurationError(f"parameter {name!r} must be a number, not a boolean: got {value!r}")
    if isinstance(value, (list, tuple)):
        raise ConfigurationError(f"parameter {name!r} is one joint's gain: a number, got {value!r}")
    if not isinstance(value, (int, float)):
        raise ConfigurationError(f"parameter {name!r} must be a number, got {value!r}")
    value = as_float(name, value)
    if value < 0:
        raise ConfigurationError(f"parameter {name!r} must be non-negative, got {value}")
    return value


def merge_joint_gains(joints, terms, fallback, given):
    """Per-joint gains in `joints` order: ``fallback`` ({term: array}, from the number-or-list parameters) with
    the map entries of ``given`` ({parameter name: value}) replacing their joints' values, each checked
    (joint_gain). Returns ({term: array}, names of ``given`` that name no (joint, term) here)."""
    gains = {term: np.array(fallback[term], dtype=float) for term in terms}
    position = {joint: k for k, joint in enumerate(joints)}
    unknown = []
    for name, value in given.items():
        parts = split_gain_name(name)
        if parts is None or parts[0] not in position or parts[1] not in gains:
            unknown.append(name)
            continue
        gains[parts[1]][position[parts[0]]] = joint_gain(name, value)
    return gains, unknown


class JointGains:
    """The per-joint gains gains.<joint>.<term> (joint_trajectory_controller's names: p, d, i) beside a node's
    number-or-list gain parameters (``terms``: {term: parameter}, e.g. {'p': 'kp', 'd': 'kd', 'i': 'ki'}).

    ``declare(joints, fallback)``, once the model is known, declares gains.<joint>.<term> for every joint and term
    (settable at run time; type, description and validators from the node schema's ``gains: __map_joints``; an entry
    for a joint the model lacks is not asked for, so it is not declared) and returns the gains in use, {term: array in
    `joints` order}: a joint's map entry given in a params file or with -p wins over the number or list (a node given both says once which wins); a joint
    without one takes the number or list's value, or, declared for an earlier model, keeps the value it has.
    The gains.* parameters always hold the gains in use: setting one at run time changes that joint (the node's
    ``apply({term: array})`` checks the whole set as at start-up and takes it, or raises ConfigurationError, the
    refusal's reason, and nothing changes); a node whose number or list is set at run time (every joint) calls
    ``mirror``, which writes the new values into the map. ``serve(joints)`` once the node runs the model."""

    def __init__(self, node, terms, apply):
        self._node, self._terms, self._apply = node, dict(terms), apply
        self.joints = []        # joints order of the model the node runs
        self._names = set()     # the gains.* parameters declared (RuntimeParameters reads this set as it grows)
        self._mirroring = False
        self._told = False
        RuntimeParameters(node, self._on_set, self._names)

    def declare(self, joints, fallback):
        node = self._node
        names = [gain_name(joint, term) for joint in joints for term in self._terms]
        declared = {name: node.get_parameter(name).value for name in names if name in self._names}
        given = {name: value for name in names if name not in self._names
                 for value in [given_value(node, name)] if value is not None}
        gains, _ = merge_joint_gains(joints, self._terms, fallback, {**given, **declared})
        if not self._told:
            self._tell(given)
        specs = node.node_parameters.schema.joint_maps[GAINS_PREFIX.rstrip('.')]
        for k, joint in enumerate(joints):
            for term in self._terms:
                name = gain_name(joint, term)
                if name not in self._names:
                    declare_spec(node, specs[term], name=name, given=float(gains[term][k]))
                    self._names.add(name)
        return gains

    def _tell(self, given):
        """Once: which form wins where a joint is given both."""
        self._told = True
        given_forms = self._node.node_parameters.given
        both = sorted(name for name in given if self._terms[split_gain_name(name)[1]] in given_forms)
        if both:
            parameters = sorted({self._terms[split_gain_name(name)[1]] for name in both})
            self._node.get_logger().info(f"gains given both ways: the per-joint {both} win over {parameters} for "
                                         "their joints")

    def serve(self, joints):
        self.joints = list(joints)

    def values(self):
        """{term: array in `joints` order} of the gains.* parameters of the joints served."""
        return {term: np.array([self._node.get_parameter(gain_name(joint, term)).value for joint in self.joints],
                               dtype=float) for term in self._terms}

    def mirror(self, gains):
        """Write {term: array in `joints` order} into the gains.* parameters (values the node already took)."""
        self._mirroring = True
        try:
            self._node.set_parameters([Parameter(gain_name(joint, term), value=float(value))
                                       for term, column in gains.items() for joint, value in zip(self.joints, column)])
        finally:
            self._mirroring = False

    def _on_set(self, changes):
        if self._mirroring:
            return
        gains = self.values()
        position = {joint: k for k, joint in enumerate(self.joints)}
        for name, value in changes.items():
            joint, term = split_gain_name(name)
            if joint not in position:
                raise ConfigurationError(f"parameter {name!r}: {joint!r} is not a joint of the robot the node runs")
            gains[term][position[joint]] = joint_gain(name, value)
        self._apply(gains)
