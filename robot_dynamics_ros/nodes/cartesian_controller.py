"""``cartesian_controller`` node: impedance or operational-space control of one link frame
(``control.cartesian.CartesianController``), with the parameter names of fzi's cartesian_controllers.

Subscribes ``joint_states`` (sensor_msgs/JointState), ``~/target_pose`` (geometry_msgs/PoseStamped in
``robot_base_link``, as crisp_controllers) and ``~/target_wrench`` (geometry_msgs/WrenchStamped: a feed-forward
wrench at the end effector's origin, in ``robot_base_link`` axes; held until the next); publishes
``effort_controller/commands`` (std_msgs/Float64MultiArray in `joints` order, as the computed-torque controller) once
per joint state, ``~/current_pose`` (PoseStamped, stamped as the joint state), ``~/pose_error`` (TwistStamped:
angular = rotation vector, rad, linear = position error, m; target minus current) and ``~/compute_time_us``
(std_msgs/Float64: mapping the joint state, sampling the target and the law, before publishing).

Until a target comes the frame holds the pose of the first joint state, and the nullspace posture (empty
``nullspace.posture``) is that state's. Target poses stamped zero take the last joint state's stamp; each target is
reached at its stamp, the reference interpolated between targets (``CartesianTarget``). Guards
(``CartesianController``): the end effector is driven at most at ``max_linear_speed`` and ``max_angular_speed`` (the
pose error clipped to them), joint speeds beyond 70 % of their URDF limits are braked, the feed-forward and then the
total wrench are bounded by max_force and max_torque; gains that the loop cannot realise at ``joint_state_rate``
are refused (``check_gains``) at start-up and at ``ros2 param set``, with the reason. Bad targets (non-finite,
not a unit quaternion, another frame) are rejected with a reason and the last target kept; joint states as the
computed-torque controller rejects them. No joint state for ``state_timeout``: one zero command, then silence until they are back.
With `mimic` true (the simulator's parameter) the model couples each URDF <mimic> joint to its master: the law runs on
the independent joints (Jacobian, Lambda and M^-1 on them), the mimic joints' entries in joint states are skipped,
and the commands are for the independent joints (`joints`), as the simulator with mimic true takes them.
With numba (the `fast` extra) each joint state is mapped, the target sampled and the law run in one compiled call
(control.cartesian_step.CartesianStep); the first state, and any the step refuses, take the NumPy path, which gives the
same efforts and rejects bad input with its message.
"""
import sys
import time
from array import array

import numpy as np
from geometry_msgs.msg import PoseStamped, TwistStamped, WrenchStamped

from .. import fast, spatial
from ..control.cartesian import (TARGET_BUFFER, CartesianController, CartesianTarget, check_gains,
                                 default_end_effector, speed_limits)
from ..control.cartesian_step import CartesianStep
from ..control.joint_states import JointStateMapper, coupled_mimic_joints, plausibility_bounds
from ..fast import choose_code
from ..model.joints import all_finite
from .messages import stamp_nanoseconds, stamp_seconds
from .model_source import joint_order
from .node_loop import Throttle, run
from .node_parameters import as_vector, default_as_none
from .parameter_schema import ConfigurationError
from .controller_base import ControllerBase

AXES = ('rot_x', 'rot_y', 'rot_z', 'trans_x', 'trans_y', 'trans_z')   # the law's row order [angular; linear]


def limit(value):
    """A bound from its parameter: a positive number, or 0 for none (infinite)."""
    return value or np.inf


def pose_of(msg):
    """(position, quaternion xyzw) of a geometry_msgs/Pose."""
    p, o = msg.position, msg.orientation
    return [p.x, p.y, p.z], [o.x, o.y, o.z, o.w]


class CartesianControllerNode(ControllerBase):
    rejected_what = 'joint states and targets'

    def __init__(self) -> None:
        super().__init__('cartesian_controller')
        self._load_model()

    def _use(self, settings, gains):
        controller = self._make_controller(settings, self.controller.posture)
        if self.step is not None:
            self.step = CartesianStep(self.mapper, controller)
        self.controller = controller

    def _make_controller(self, settings, posture):
        """A controller with these settings, or ConfigurationError: also for gains that make the loop unstable at
        joint_state_rate (``check_gains``, at start-up and at every set)."""
        stiffness = [settings[f'stiffness.{axis}'] for axis in AXES]
        period = 1.0 / self.parameters['joint_state_rate']
        angular, linear, joint_speed = speed_limits(self.model, self.end_effector)
        try:
            check_gains(self.model, self.end_effector, settings['law'], stiffness, settings['damping_ratio'],
                        settings['nullspace.stiffness'], period, self.base)
            return CartesianController(
                self.model, self.end_effector, settings['law'], stiffness, settings['damping_ratio'],
                settings['nullspace.stiffness'], posture, limit(settings['max_force']), limit(settings['max_torque']),
                self.gravity,
                self.max_effort, self.base, settings['friction_compensation'],
                settings['max_angular_speed'] or angular, settings['max_linear_speed'] or linear, joint_speed, period)
        except ValueError as e:
            raise ConfigurationError(str(e)) from None

    def _start(self, model):
        p = self.parameters
        joint_names, index = joint_order(model, p['joints'])
        order = np.argsort(index)   # `joints` order -> model order
        self.gravity = default_as_none(as_vector('gravity', p['gravity'], 3, allow_scalar=False))
        self.max_effort = (as_vector('max_effort', p['max_effort'], model.nv, allow_scalar=False)[order]
                           if len(p['max_effort']) else None)
        posture = (as_vector('nullspace.posture', p['nullspace.posture'], model.nv, allow_scalar=False)[order]
                   if len(p['nullspace.posture']) else None)
        self.end_effector = p['end_effector_link'] or default_end_effector(model)
        self.base = p['robot_base_link'] or model.root_link
        self.model = model
        controller = self._make_controller(self.settings, model.neutral() if posture is None else posture)
        q = model.neutral()   # warm-up: loads (once: compiles) the law's kernel before the first joint state
        try:
            controller.ee.update(q, q)
            warm = CartesianTarget(controller.ee.R, controller.ee.p, 0.0)   # and the target's sampling
            warm.set(controller.ee.p, spatial.matrix_to_quaternion(controller.ee.R), 0.01)
            controller.update(q, q, *warm.sample(0.005))
        except (ValueError, ArithmeticError, np.linalg.LinAlgError) as e:
            raise ConfigurationError(f"cannot compute efforts for {model.name!r}: {e}") from None
        first = self.controller is None
        self.controller, self.index, self.posture_given = controller, index, posture is not None
        self.mapper = JointStateMapper(model.joint_names, ignore_unknown=p['ignore_unknown_joints'],
                                       bounds=plausibility_bounds(model), followers=coupled_mimic_joints(model))
        self.step = self._make_step(controller, warm)
        self.target = None       # CartesianTarget, from the first joint state on
        self.wrench = None       # feed-forward [torque; force] from ~/target_wrench
        self.state_time = self.state_ns = self.last_state = None   # state_time: s, as state_ns
        self.stale = False
        if first:
            self._create_interfaces()
        self._answer_states()
        self.get_logger().info(f"dynamics: {choose_code(model)}")
        self.get_logger().info(f"{self.settings['law']} control of {self.end_effector!r} in {self.base!r} frame, "
                               f"{model.name!r} ({model.nv} DOF)")

    def _make_step(self, controller, target):
        """CartesianStep for the controller with numba (loaded, once compiled, for rclpy's array('d') fields), else
        None."""
        if fast.BACKEND != 'numba':
            return None
        step = CartesianStep(self.mapper, controller)
        q = array('d', self.model.neutral().tobytes())
        step(list(self.model.joint_names), q, array('d', bytes(len(q) * 8)), target, 0.005)
        return step

    def _create_interfaces(self):
        self._create_controller_interfaces(self._on_joint_state)
        self.pose_msg = PoseStamped()
        self.error_msg = TwistStamped()
        self.pose_pub = self.create_publisher(PoseStamped, '~/current_pose', 10)
        self.error_pub = self.create_publisher(TwistStamped, '~/pose_error', 10)
        # as deep as the targets the law buffers: a stream stamped ahead (the demo's) may come in a burst
        self.create_subscription(PoseStamped, '~/target_pose', self._on_target, TARGET_BUFFER)
        self.create_subscription(WrenchStamped, '~/target_wrench', self._on_wrench, 10)

    def _check_frame(self, frame_id):
        if frame_id not in ('', self.base):
            raise ValueError(f"frame {frame_id!r} is not robot_base_link {self.base!r}")

    def _on_target(self, msg):
        if self.target is None:
            self.throttle.warn('early target', "target pose before the first joint state: ignored")
            return
        stamp = stamp_seconds(msg.header.stamp)
        try:
            self._check_frame(msg.header.frame_id)
            self.target.set(*pose_of(msg.pose), stamp or self.state_time)
        except ValueError as e:
            self.rejected += 1
            self.throttle.warn(Throttle.reason(e), f"rejected target pose: {e}")

    def _on_wrench(self, msg):
        f, t = msg.wrench.force, msg.wrench.torque
        wrench = np.array([t.x, t.y, t.z, f.x, f.y, f.z])
        try:
            self._check_frame(msg.header.frame_id)
            if not all_finite(wrench):
                raise ValueError(f"wrench is not finite: {wrench.tolist()}")
        except ValueError as e:
            self.throttle.warn(Throttle.reason(e), f"rejected target wrench: {e}")
            return
        self.wrench = wrench if np.any(wrench) else None

    def _update(self, msg, state_time):
        """Efforts (model order) for a joint state at state_time, or None for a state rejected. The first state sets
        the target (the frame's pose then) and the nullspace posture (that state, unless given): the NumPy path, as is
        any state the compiled step refuses (it rejects it with its message)."""
        controller = self.controller
        if self.step is not None and self.target is not None and self.active:
            tau = self.step(msg.name, msg.position, msg.velocity, self.target, state_time, self.wrench)
            if tau is not None:
                self.state_ns = stamp_nanoseconds(msg.header.stamp)
                self.state_time = state_time
                return tau
        state = self._map_joint_state(msg)
        if state is None:
            return None
        q, qd = state
        self.state_time = state_time
        if self.target is None:   # hold the first pose; the nullspace posture is this state unless given
            if not self.posture_given:
                controller.posture = q
            controller.ee.update(q, qd)
            self.target = CartesianTarget(controller.ee.R.copy(), controller.ee.p.copy(), state_time)
        return controller.update(q, qd, *self.target.sample(state_time), None, self.wrench)

    def _on_joint_state(self, msg):
        started = time.perf_counter()
        stamp = msg.header.stamp
        try:
            tau = self._update(msg, stamp_seconds(stamp))
        except (ValueError, ArithmeticError, np.linalg.LinAlgError) as e:
            self.throttle.warn(Throttle.reason(e), f"no command: {e}")
            return
        if tau is None:   # rejected
            return
        controller = self.controller
        if controller.singular:
            self.throttle.warn('singular', "near a singular posture: the task inertia is damped")
        compute_us = (time.perf_counter() - started) * 1e6   # mapping, target and law, as the computed-torque node
        self._state_answered()
        if not self._publish_efforts(tau[self.index]):
            return
        self.commands += 1
        self._publish_pose(stamp, controller)
        self._publish_compute_time(compute_us)

    def _publish_pose(self, stamp, controller):
        pose = self.pose_msg
        pose.header.stamp, pose.header.frame_id = stamp, self.base
        x, y, z, w = spatial.matrix_to_quaternion(controller.ee.R)
        p = controller.ee.p
        pose.pose.position.x, pose.pose.position.y, pose.pose.position.z = float(p[0]), float(p[1]), float(p[2])
        o = pose.pose.orientation
        o.x, o.y, o.z, o.w = float(x), float(y), float(z), float(w)
        self.pose_pub.publish(pose)
        error = self.error_msg
        error.header.stamp, error.header.frame_id = stamp, self.base
        e = controller.error
        error.twist.angular.x, error.twist.angular.y, error.twist.angular.z = float(e[0]), float(e[1]), float(e[2])
        error.twist.linear.x, error.twist.linear.y, error.twist.linear.z = float(e[3]), float(e[4]), float(e[5])
        self.error_pub.publish(error)

    def _on_stale(self, first):
        if first:
            self.get_logger().warning(f"no valid joint state for {self.parameters['state_timeout']:g} s; commanding "
                                      "zero effort once")
            self._publish_efforts(np.zeros(len(self.index)))


def main(args: list[str] | None = None) -> int:
    return run(CartesianControllerNode, 'cartesian_controller', args)


if __name__ == '__main__':
    sys.exit(main())
