"""``computed_torque_controller`` node: tau = RNEA(q, qd, qdd_ref + Kd (qd_ref - qd) + Kp (q_ref - q) + Ki int(q_ref - q)),
the reference governed into the joint limits (control.ComputedTorqueController.update).

Subscribes ``joint_states`` (sensor_msgs/JointState) and ``~/joint_trajectory``
(trajectory_msgs/JointTrajectory, transient local so a trajectory published earlier still arrives);
publishes ``effort_controller/commands`` (std_msgs/Float64MultiArray in `joints` order) once per joint
state, ``~/tracking_error`` (sensor_msgs/JointState: position = q_ref - q, velocity = qd_ref - qd) and
``~/compute_time_us`` (std_msgs/Float64: mapping, reference sampling and the control law); these two only while
they have subscribers (checked every `state_timeout` / 2), as each publish costs about as much as the control law.
Serves ``~/follow_joint_trajectory`` (control_msgs/FollowJointTrajectory, ``trajectory_action.py``) for MoveIt.
With numba (the `fast` extra) each joint state is mapped, the reference sampled and the control law run in one
compiled call (control.ControlStep); a state it refuses, and the first one, take the NumPy path, which gives the
same results and rejects bad input with its message.
Gains: `kp`, `kd`, `ki` (a number for every joint, or one per joint in `joints` order), and per joint as
ros2_controllers' joint_trajectory_controller takes them, ``gains.<joint>.p``, ``.d``, ``.i`` (declared once the model
is known; at start-up a joint's map entry wins over the number or list, and the node says so once; at run time the
latest set wins: kp etc. set every joint, and the gains.* parameters always show the gains in use).
The reference is evaluated at each joint state's header stamp (joint states must be stamped), and a
trajectory stamped zero starts at the last joint state's stamp (one that comes before the first joint
state waits for it), so the controller follows the simulator's clock without use_sim_time.
With `mimic` true (the simulator's parameter) the model couples each URDF <mimic> joint to its master: the controller
runs on the independent joints, skips the mimic joints' entries in joint states (their state follows their masters'),
refuses a trajectory that names one, and commands the independent joints (`joints`), as the simulator with mimic
true takes them.
"""
import sys
import time
from array import array

import numpy as np
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory

from .. import fast
from ..algorithms import gravity_torques
from ..control.computed_torque import ComputedTorqueController, ControlStep, check_gains
from ..control.joint_states import JointStateMapper, coupled_mimic_joints, plausibility_bounds
from ..control.references import TrajectoryReference
from ..errors import RobotDynamicsError
from ..fast import choose_code
from .messages import stamp_nanoseconds
from .model_source import joint_order
from .node_loop import run
from .node_parameters import as_vector, default_as_none
from .parameter_schema import ConfigurationError
from .controller_base import ControllerBase
from .diagnostics import OK, WARN, warnings_by_kind
from .joint_trajectories import TrajectoryWorker, trajectory_fields, trajectory_reference

GAIN_TERMS = {'p': 'kp', 'd': 'kd', 'i': 'ki'}   # gains.<joint>.<term> (joint_trajectory_controller) -> parameter


# The runtime ones (ros2 param set) are validated by _apply_settings as at start-up.
class ControllerNode(ControllerBase):
    gain_terms = GAIN_TERMS

    def __init__(self) -> None:
        super().__init__('computed_torque_controller')
        # Trajectories become references on a worker thread; the joint-state callback swaps the newest in.
        self.trajectories = TrajectoryWorker(self, self.throttle, self._trajectory_reference)
        self._load_model()

    def _use(self, settings, gains):
        self.controller = self._make_controller(self.model, self.index, settings, gains)

    def _fallback_gains(self, nv):
        """{term: array in `joints` order} from kp, kd and ki (a number, or one per joint)."""
        return {term: as_vector(parameter, self.settings[parameter], nv) for term, parameter in GAIN_TERMS.items()}

    def _make_controller(self, model, index, settings, gains):
        """A controller with these settings and gains ({term: array in `joints` order}; ConfigurationError for gains
        that are negative or that make the loop unstable at joint_state_rate); it continues the running
        controller's state when the robot is the same."""
        order = np.argsort(index)   # per-joint lists: `joints` order -> model order
        kp, kd, ki = (np.asarray(gains[term], dtype=float)[order] for term in ('p', 'd', 'i'))
        limits = self.parameters['acceleration_limits']
        acceleration = as_vector('acceleration_limits', limits, model.nv, allow_scalar=False)[order] if len(limits) \
            else None
        try:
            controller = ComputedTorqueController(model, kp, kd, settings['mode'], self.gravity,
                                                  settings['friction_compensation'], ki, acceleration)
            check_gains(model, settings['mode'], kp, kd, ki, 1.0 / self.parameters['joint_state_rate'])
        except ValueError as e:
            raise ConfigurationError(str(e)) from None
        if self.controller is not None and self.controller.model is model:
            controller.take_state(self.controller)
        return controller

    def _start(self, model):
        """Build the controller for the model (ConfigurationError if it cannot run it), then switch to it: the
        first model creates the ROS interfaces; a later one (a new /robot_description) restarts the
        controller on it: it holds the next joint state until a trajectory comes, those for the old model
        are dropped."""
        joint_names, index = joint_order(model, self.parameters['joints'])
        self.gravity = default_as_none(as_vector('gravity', self.parameters['gravity'], 3, allow_scalar=False))
        self.get_logger().info(f"dynamics: {choose_code(model)}")
        gains = self.joint_gains.declare(joint_names, self._fallback_gains(model.nv))
        controller = self._make_controller(model, index, self.settings, gains)
        rest = np.zeros(model.nv)
        try:
            controller.compute(model.neutral(), rest, model.neutral(), rest, rest)  # warm-up (compiled paths)
        except (ValueError, ArithmeticError, RobotDynamicsError) as e:
            raise ConfigurationError(f"cannot compute efforts for {model.name!r}: {e}") from None
        bounds = plausibility_bounds(model)
        mapper = JointStateMapper(model.joint_names, ignore_unknown=self.parameters['ignore_unknown_joints'],
                                  bounds=bounds, followers=coupled_mimic_joints(model))
        step = None   # ControlStep for the controller, with numba
        if fast.BACKEND == 'numba':   # warm-up: load (once: compile) the kernel for rclpy's array('d') fields
            step = ControlStep(mapper, controller, index)
            q, qd = array('d', model.neutral().tobytes()), array('d', bytes(8 * model.nv))
            step(list(model.joint_names), q, qd, TrajectoryReference.hold(model.neutral()), 0.0, 0.0)
            controller.state[:], controller.clock[:] = 0.0, 0.0   # the warm-up leaves no state behind
        first = self.model is None
        self.trajectories.drop()   # a trajectory in the worker is for the old model
        self.applied = None
        self.model, self.controller, self.joint_names, self.index = model, controller, joint_names, index
        self.bounds, self.mapper, self.step, self.gains = bounds, mapper, step, gains
        self.joint_gains.serve(joint_names)
        self.reference = None        # TrajectoryReference, set by the first joint state or trajectory
        self.reference_start = None  # ns: time at which the reference's t = 0
        self.pending_trajectory = None  # a trajectory (serialized) that came before the first joint state
        # Messages are built once and refilled (rclpy serializes on publish).
        self.error_msg = JointState(name=list(model.joint_names))
        self.state_ns = self.last_state = None
        self.held_q = None           # q of the last valid joint state
        self.stale = False
        self.limited_updates = 0
        if first:
            self._create_interfaces()
        self._answer_states()
        self.get_logger().info(f"{self.settings['mode']} control of {model.name!r} ({model.nv} DOF), state timeout "
                               f"{self.parameters['state_timeout']:g} s, on stale: {self.settings['stale_behavior']}")

    def _restart(self):
        self.controller.restart()

    def _create_interfaces(self):
        """Publishers, subscriptions, the stale-state timer and the action server: once, for every model."""
        self._create_controller_interfaces(self._on_joint_state, 'computed-torque control')
        self.error_pub = self.create_publisher(JointState, '~/tracking_error', 10)
        self.listened = (False, False)   # whether error_pub, compute_time_pub have subscribers
        # Default QoS (reliable, volatile, depth 10), as joint_trajectory_controller: any publisher connects.
        # Raw: the worker thread deserializes it (see _on_trajectory).
        self.create_subscription(JointTrajectory, '~/joint_trajectory', self._on_trajectory, 10, raw=True)
        self.action = self._action_server()

    def _diagnostic_status(self):
        """/diagnostics: commands per second over the last period, and the counts since the start."""
        values = {**self._diagnostic_values(), 'reference limited to the joint limits': self.limited_updates,
                  **warnings_by_kind(self.throttle)}
        if self.last_state is None:
            return OK, 'waiting for joint states', values
        if self.stale:
            return WARN, f"joint states stale: {self.settings['stale_behavior']}", values
        return OK, 'commanding', values

    def _action_server(self):
        """~/follow_joint_trajectory (``trajectory_action.py``), or None where control_msgs is not installed (said
        once: the topic remains)."""
        try:
            from .trajectory_action import TrajectoryActionServer
        except ImportError as e:
            self.get_logger().warning(f"no ~/follow_joint_trajectory action: {e} (control_msgs comes with ROS "
                                      "installs); ~/joint_trajectory takes trajectories")
            return None
        return TrajectoryActionServer(self, self.parameters['action_monitor_rate'], trajectory_fields)

    def _reference_time(self):
        """Reference time of the last joint state: the reference is evaluated at the measurement's stamp,
        so sim time reaches the controller through the stamps, without /clock."""
        return (self.state_ns - self.reference_start) * 1e-9

    def _on_joint_state(self, msg):
        if not self.active:
            return
        started = time.perf_counter()
        stamp = msg.header.stamp
        update = self._compiled_update(msg, stamp) if self.step is not None else None
        if update is None:
            update = self._numpy_update(msg)
            if update is None:   # rejected
                return
        q, qd, q_ref, qd_ref, command = update
        compute_us = (time.perf_counter() - started) * 1e6
        if self.controller.limited_updates > self.limited_updates:
            self.limited_updates = self.controller.limited_updates
            self.throttle.warn('limited', "the reference leaves the joint position or velocity limits: following "
                                          f"it within them ({self.limited_updates} updates so far)")
        self._state_answered()
        self.held_q = q.copy()
        if not self._publish_efforts(command):
            return
        self.commands += 1
        if self.action is not None:
            self.action.on_state(stamp, q, qd)
        error_listened, compute_time_listened = self.listened
        if error_listened:
            error = self.error_msg
            error.header.stamp = stamp
            error.position = array('d', self.controller.position_error(q_ref, q).tobytes())
            error.velocity = array('d', (qd_ref - qd).tobytes())
            self.error_pub.publish(error)
        if compute_time_listened:
            self.compute_time_msg.data = compute_us
            self.compute_time_pub.publish(self.compute_time_msg)

    def _numpy_update(self, msg):
        """Map the joint state, take the newest reference, sample it and run the control law in NumPy:
        (q, qd, q_ref, qd_ref, efforts in `joints` order), or None for a state rejected with a warning."""
        state = self._map_joint_state(msg)
        if state is None:
            return None
        q, qd = state
        if self.reference is None:   # nothing to track yet: hold where the robot is
            self.reference = TrajectoryReference.hold(q)
            self.reference_start = self.state_ns
            if self.pending_trajectory is not None:
                self._on_trajectory(self.pending_trajectory)
        self.reference, self.reference_start, self.applied = self._newest_reference(self.state_ns)
        q_ref, qd_ref, qdd_ref = self.reference.sample(self._reference_time())
        try:
            tau, q_ref, qd_ref, _ = self.controller.update(self.state_ns * 1e-9, q, qd, q_ref, qd_ref, qdd_ref)
        except ValueError as e:
            self.throttle.warn('compute', f"no command: {e}")
            return None
        return q, qd, q_ref, qd_ref, tau[self.index]

    def _compiled_update(self, msg, stamp):
        """_numpy_update in one compiled call (ControlStep, rebuilt when the controller changes), or None where
        the NumPy path must run: the first joint state (its reference holds the state) and every state the
        step refuses (the NumPy path rejects it with its message). Node state changes only once it computed."""
        if self.reference is None:
            return None
        step = self.step
        if step.controller is not self.controller:   # new gains or mode (_apply_settings)
            step = self.step = ControlStep(self.mapper, self.controller, self.index)
        state_time = stamp_nanoseconds(stamp)
        reference, reference_start, applied = self._newest_reference(state_time)
        if not step(msg.name, msg.position, msg.velocity, reference, (state_time - reference_start) * 1e-9,
                    state_time * 1e-9):
            return None
        self.state_ns, self.reference, self.reference_start, self.applied = (state_time, reference,
                                                                             reference_start, applied)
        return step.q, step.qd, step.q_ref, step.qd_ref, step.command

    def _newest_reference(self, state_time):
        """(reference, its start in ns, the worker's hand-over it comes from): the one the worker has built
        since the last joint state (a trajectory stamped zero starts at state_time), else the current one."""
        incoming = self.trajectories.incoming
        if incoming is self.applied:
            return self.reference, self.reference_start, incoming
        reference, stamp_ns = incoming
        return reference, stamp_ns or state_time, incoming

    def _publish_command(self, tau):
        """Publish tau (model order) in `joints` order (see _publish_efforts). Returns whether it was published."""
        return self._publish_efforts(tau[self.index])

    def _on_trajectory(self, raw):
        """A serialized JointTrajectory: hand it to the worker (a newer one supersedes those queued)."""
        if self.reference is None:   # it starts from where the robot is: wait for the first joint state
            self.pending_trajectory = raw
            self.get_logger().info("trajectory received before the first joint state; it starts from there")
            return
        self.pending_trajectory = None
        self.trajectories.submit(raw)

    def _trajectory_reference(self, names, times, fields):
        """On the worker: TrajectoryReference in model order (``checked_columns``); when the first point lies in
        the future, the trajectory starts from the current reference."""
        return trajectory_reference(names, times, fields, self.model.joint_names, self.bounds,
                                    self.parameters['max_trajectory_points'],
                                    lambda: self.reference.sample(self._reference_time()),
                                    coupled_mimic_joints(self.model))

    def _check_stale(self):
        """Stale joint states (ControllerBase); and, as the timer runs anyway, whether anyone listens to the tracking
        error and compute time."""
        self.listened = (self.error_pub.get_subscription_count() > 0,
                         self.compute_time_pub.get_subscription_count() > 0)
        super()._check_stale()

    def _on_stale(self, first):
        """The configured behaviour: one zero command, or gravity compensation at the last valid state each time."""
        zero = self.settings['stale_behavior'] == 'zero'
        if first:
            self.get_logger().warning(f"no valid joint state for {self.parameters['state_timeout']:g} s; "
                                      + ("commanding zero effort once" if zero
                                         else "commanding gravity compensation at the last valid state"))
            if zero:
                self._publish_command(np.zeros(self.model.nv))
        if not zero:
            limit = self.model.effort_limit
            self._publish_command(np.clip(gravity_torques(self.model, self.held_q, self.gravity), -limit, limit))


def main(args: list[str] | None = None) -> int:
    return run(ControllerNode, 'computed_torque_controller', args)


if __name__ == '__main__':
    sys.exit(main())
