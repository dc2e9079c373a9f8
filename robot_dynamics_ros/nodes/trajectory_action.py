"""``~/follow_joint_trajectory`` (control_msgs/FollowJointTrajectory) on the computed-torque controller, as
ros2_controllers' joint_trajectory_controller serves it, for MoveIt's moveit_simple_controller_manager.

A goal names every joint of the controller once, in any order (as ``~/joint_trajectory``; no multi-DOF joints); one
that does not, or whose points the topic would refuse, is rejected. An accepted goal's trajectory takes the topic's
path (the same reference, from the next joint state on: a header stamp of zero starts it then), and is checked at
every joint state:
- path tolerance (position, velocity per joint, until the trajectory's end): exceeded -> aborted,
  PATH_TOLERANCE_VIOLATED, and the arm holds where it is;
- goal tolerance, from the end on: within it -> succeeded, SUCCESSFUL; still outside it goal_time_tolerance after the
  end -> aborted, GOAL_TOLERANCE_VIOLATED, holding (a goal_time_tolerance of zero waits, as the controller's does).
A tolerance of 0 is unspecified (none), -1 erased (none); accelerations are not measured, their tolerances unchecked.
Feedback (desired, actual, error in the controller's joint order) is sent `action_monitor_rate` times per second.
A new goal, a trajectory on ``~/joint_trajectory`` or a new robot model ends the running goal: aborted, INVALID_GOAL
(joint_trajectory_controller reports it canceled; rclpy lets a server cancel only what a client asked to). A cancel
request is granted: the arm holds where it is, the goal is canceled with SUCCESSFUL."""
import time

import numpy as np
from control_msgs.action import FollowJointTrajectory
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.serialization import serialize_message
from rclpy.task import Future
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from .messages import stamp_nanoseconds, stamp_seconds

Result = FollowJointTrajectory.Result
START_TIMEOUT = 5.0   # wall seconds an accepted goal's trajectory may take to reach the controller


def tolerances(entries, joint_names, what):
    """(positions, velocities) arrays in ``joint_names`` order from JointTolerance entries, inf where none;
    ValueError for an unknown joint."""
    limits = np.full((2, len(joint_names)), np.inf)
    for entry in entries:
        if entry.name not in joint_names:
            raise ValueError(f"{what} names joint {entry.name!r}, not one of {list(joint_names)}")
        for row, value in enumerate((entry.position, entry.velocity)):
            limits[row, joint_names.index(entry.name)] = value if value > 0 else np.inf
    return limits


def exceeded(limits, position_error, velocity_error, joint_names):
    """A line naming each joint and quantity beyond its limit, or '' when within."""
    lines = []
    for name, values, limit in (('position', position_error, limits[0]), ('velocity', velocity_error, limits[1])):
        for i in np.flatnonzero(np.abs(values) > limit):
            lines.append(f"{joint_names[i]} {name} error {values[i]:.4g} beyond {limit[i]:.4g}")
    return '; '.join(lines)


class Goal:
    """An accepted goal being executed: its tolerances, its trajectory's hand-over to the controller, its outcome."""

    def __init__(self, handle, joint_names, submitted):
        request = handle.request
        self.handle = handle
        self.path = tolerances(request.path_tolerance, joint_names, 'path_tolerance')
        self.goal = tolerances(request.goal_tolerance, joint_names, 'goal_tolerance')
        self.goal_time = stamp_seconds(request.goal_time_tolerance)
        self.times = np.array([stamp_seconds(point.time_from_start) for point in request.trajectory.points])
        self.submitted = submitted   # the worker's count of trajectories received, with this goal's
        self.accepted_at = time.monotonic()
        self.started = False
        self.outcome = Future()   # (event: 'succeed', 'abort' or 'canceled', Result)


class TrajectoryActionServer:
    """The action server of ``node`` (a computed_torque_controller ControllerNode); ``on_state`` after each joint
    state the controller acted on. ``read_trajectory``: the topic's reader of a serialized JointTrajectory, (stamp,
    names, times, fields)."""

    def __init__(self, node, monitor_rate, read_trajectory):
        self.node, self.read_trajectory = node, read_trajectory
        self.feedback_period = 1.0 / monitor_rate
        self.fed_back = -np.inf   # wall time of the last feedback
        self.active = None        # the Goal being executed
        self.outcomes = {}        # goal id -> Future of its (event, Result), until its execute callback takes it
        self.server = ActionServer(node, FollowJointTrajectory, '~/follow_joint_trajectory', self._execute,
                                   goal_callback=self._check_goal, handle_accepted_callback=self._accepted,
                                   cancel_callback=lambda _: CancelResponse.ACCEPT)

    def _check_goal(self, request):
        """Reject a goal the topic would refuse (joint names, points, limits: the same checks), one with a multi-DOF
        part or with tolerances for joints the controller does not have, as joint_trajectory_controller does."""
        node = self.node
        try:
            if node.model is None or node.reference is None:
                raise ValueError("no joint state received yet")
            if request.multi_dof_trajectory.joint_names or request.multi_dof_trajectory.points:
                raise ValueError("multi-DOF trajectories are not supported")
            node._trajectory_reference(*self.read_trajectory(serialize_message(request.trajectory))[1:])
            for entries, what in ((request.path_tolerance, 'path_tolerance'),
                                  (request.goal_tolerance, 'goal_tolerance')):
                tolerances(entries, list(node.model.joint_names), what)
        except ValueError as e:
            node.get_logger().warning(f"rejected a FollowJointTrajectory goal: {e}")
            return GoalResponse.REJECT
        return GoalResponse.ACCEPT

    def _accepted(self, handle):
        """Preempt the running goal, hand the trajectory to the controller (the topic's path), execute."""
        self._end('abort', Result.INVALID_GOAL, "preempted by a new goal")
        node = self.node
        node._on_trajectory(serialize_message(handle.request.trajectory))
        self.active = Goal(handle, list(node.model.joint_names), node.trajectories.received)
        self.outcomes[bytes(handle.goal_id.uuid)] = self.active.outcome
        handle.execute()

    async def _execute(self, handle):
        """Wait for the goal's outcome (a later goal may have ended it before this runs), report it."""
        event, result = await self.outcomes.pop(bytes(handle.goal_id.uuid))
        getattr(handle, event)()
        return result

    def _end(self, event, code, text, hold=None):
        """Finish the running goal (if any): the controller holds ``hold`` (model order) when given."""
        goal, self.active = self.active, None
        if goal is None:
            return
        if hold is not None:
            self._hold(hold)
        past = {'succeed': 'succeeded', 'abort': 'aborted', 'canceled': 'canceled'}[event]
        self.node.get_logger().info(f"FollowJointTrajectory goal {past}" + (f": {text}" if text else ''))
        goal.outcome.set_result((event, Result(error_code=code, error_string=text)))

    def _hold(self, q):
        """Hold q (model order) through the topic's path, as the controller does for a new trajectory."""
        hold = JointTrajectory(joint_names=list(self.node.model.joint_names),
                               points=[JointTrajectoryPoint(positions=q.tolist())])
        self.node.trajectories.submit(serialize_message(hold))

    def on_state(self, stamp, q, qd):
        """After the controller acted on a joint state (positions, velocities in model order): check and report the
        running goal."""
        goal = self.active
        if goal is None:
            return
        node, worker = self.node, self.node.trajectories
        if goal.handle.is_cancel_requested:
            return self._end('canceled', Result.SUCCESSFUL, "canceled", hold=q)
        if worker.received != goal.submitted:
            return self._end('abort', Result.INVALID_GOAL, "superseded by another trajectory or robot model")
        if not goal.started:
            # started once the controller follows this goal's own hand-over: not an earlier trajectory that the
            # worker handed over while this goal was being accepted (a preempted goal's)
            with worker.handover:
                incoming, number = worker.incoming, worker.incoming_number
            goal.started = node.applied is incoming and number == goal.submitted
            if not goal.started:
                if time.monotonic() - goal.accepted_at > START_TIMEOUT:
                    self._end('abort', Result.INVALID_GOAL, "the trajectory did not reach the controller")
                return
        t = (stamp_nanoseconds(stamp) - node.reference_start) * 1e-9
        # Desired: the trajectory itself, not the reference the controller governs into the joint limits (a goal the
        # arm cannot follow within them violates the path tolerance).
        q_des, qd_des, _ = node.reference.sample(t)
        position_error = node.controller.position_error(q_des, q)
        velocity_error = qd_des - qd
        names = node.model.joint_names
        now = time.monotonic()
        if now - self.fed_back >= self.feedback_period:
            self.fed_back = now
            self._feedback(goal, stamp, t, q, qd, q_des, qd_des, position_error, velocity_error)
        end = node.reference.duration
        if t <= end:
            violation = exceeded(goal.path, position_error, velocity_error, names)
            if violation:
                self._end('abort', Result.PATH_TOLERANCE_VIOLATED, violation, hold=q)
            return
        violation = exceeded(goal.goal, position_error, velocity_error, names)
        if not violation:
            self._end('succeed', Result.SUCCESSFUL, '')
        elif goal.goal_time > 0 and t > end + goal.goal_time:
            self._end('abort', Result.GOAL_TOLERANCE_VIOLATED,
                      f"{violation}, {t - end:.3f} s after the trajectory's end", hold=q)

    def _feedback(self, goal, stamp, t, q, qd, q_des, qd_des, position_error, velocity_error):
        index = self.node.index   # model order -> `joints` order
        feedback = FollowJointTrajectory.Feedback(joint_names=list(self.node.joint_names))
        feedback.header.stamp = stamp
        elapsed = max(t, 0.0)
        for point, positions, velocities in ((feedback.desired, q_des, qd_des), (feedback.actual, q, qd),
                                             (feedback.error, position_error, velocity_error)):
            point.positions, point.velocities = positions[index].tolist(), velocities[index].tolist()
            point.time_from_start.sec, point.time_from_start.nanosec = int(elapsed), int(elapsed % 1 * 1e9)
        if hasattr(feedback, 'index'):   # Kilted's control_msgs: the point being executed
            feedback.index = max(int(np.searchsorted(goal.times, t, side='right')) - 1, 0)
        goal.handle.publish_feedback(feedback)
