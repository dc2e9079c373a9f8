"""``legged_controller`` node: keeps a floating-base legged robot standing (control.standing.StandingController:
contact-consistent inverse dynamics, one cone program per update, its solver kept and updated in place).

Subscribes ``joint_states`` (sensor_msgs/JointState, the actuated joints by name), ``odom`` (nav_msgs/Odometry:
the base pose in the world frame; the twist in the base frame, linear velocity of the base origin and angular
velocity, which is the model's v[:6] = [linear; angular]) and ``~/joint_trajectory`` (trajectory_msgs/
JointTrajectory, as the computed-torque controller takes it: read on a worker thread, at most
`max_trajectory_points`, refused far beyond the joint limits, and followed governed into them); with `contact_topics` set, also
``<contact_topics><link>`` for each foot link (geometry_msgs/WrenchStamped, the ground's force on that foot, as the
simulator's ``~/contact/<link>``): a foot is in contact while its normal force exceeds `contact_force`; without
it, while it is within 2 mm of the ground by the measured state; with it, the controller commands nothing until a
foot first reports contact. With an SRDF (``robot_description_semantic`` or ``srdf_file``) its end effectors' links
are the default `feet` and its stance (group_state 'standing', else 'home', else the first) the default
`reference_positions`. Contact points: `contact_points`, as the simulator takes them, else the URDF's collision
geometry. Publishes ``effort_controller/commands``
(std_msgs/Float64MultiArray in `joints` order) and ``~/compute_time_us`` (std_msgs/Float64).

With `gait` 'trot' it walks instead (control.gait.GaitController: a trot with the stance feet in the same contact
program) at the velocity of ``~/cmd_vel`` (geometry_msgs/Twist in the base frame: linear.x, linear.y, angular.z, as
CHAMP, nav2 and teleop_twist_keyboard send it), bounded by `max_velocity` and `max_acceleration`; a command older than
`cmd_vel_timeout` counts as zero (the robot stops with its feet down), a non-finite one is rejected. Joint
trajectories are then refused.

Gains: `kp` and `kd` for the base and every joint, and per joint as ros2_controllers' joint_trajectory_controller
takes them, ``gains.<joint>.p`` and ``.d`` (declared once the model is known; at start-up a joint's map entry wins over
kp or kd, and the node says so once; at run time the latest set wins: kp or kd sets the base and every joint, and the
gains.* parameters always show the joints' gains in use). The law has no integral term: a ``gains.<joint>.i`` is
ignored with a warning.

It answers each state once, in the callback of the message that completes it: a joint state and an odometry (and,
with `contact_topics`, every foot's contact force) each received since the last update, the odometry stamped as the
joint state where the last answered pair was stamped alike (one source, a simulator: a copy of the last state's
odometry, republished while it waited, is not paired with the next joint state) (benchmarks/
bench_legged_controller.py measures an update). A command therefore depends only on the state it answers, not on
which message arrived first or on a timer's phase, so a lockstep simulator, which steps on every command, steps once
per state it published and two lockstep runs are bit-identical; each command names the state it answers
(messages.StateAnswers), so an answer to a copy of a state the simulator republished is not taken for the next one's.
All inputs must be younger than `state_timeout` (wall time of receipt), else it does not command. Reference times
are the joint states' stamps (a trajectory stamped zero starts at the last one), so simulated time reaches the
controller without use_sim_time. Bad messages are rejected with a throttled warning and the last command stands; an infeasible contact
problem is warned about and the last command stands too.
"""
import sys
import time

import numpy as np
from geometry_msgs.msg import Twist, WrenchStamped
from nav_msgs.msg import Odometry
from trajectory_msgs.msg import JointTrajectory

from ..control.contact_inverse_dynamics import ContactForceError
from ..control.gait import GaitController
from ..control.joint_states import JointStateMapper, plausibility_bounds
from ..control.standing import StandingController
from ..model import URDFError
from ..model.collision import contact_points_from_urdf
from .messages import stamp_seconds
from .model_source import contact_point, joint_order, semantic_description, stance
from .node_loop import Throttle, run
from .node_parameters import as_vector, default_as_none
from .parameter_schema import ConfigurationError
from .controller_base import ControllerBase
from .diagnostics import OK, WARN, warnings_by_kind
from .joint_trajectories import TrajectoryWorker, trajectory_reference


GAIN_TERMS = {'p': 'kp', 'd': 'kd'}   # gains.<joint>.<term> (joint_trajectory_controller's names) -> parameter


class StaleState(Exception):
    """An input the update needs is missing or older than `state_timeout`."""


def warm_up(controller):
    """One update of a controller made for this (then dropped), standing upright on all its feet: the first update
    in a process imports and sets up the solver, ~10x an update's time (a lockstep simulator waiting for its first
    command republishes its first state meanwhile)."""
    model = controller.model
    q = model.neutral()
    q[2] = controller.standing_height(q[controller.joints_q])
    try:
        controller.update(q, np.zeros(model.nv), 0.0, {foot.link for foot in controller.feet})
    except (ContactForceError, ValueError):
        pass   # a posture the feet cannot hold: the solver was set up all the same


class LeggedControllerNode(ControllerBase):
    gain_terms = GAIN_TERMS
    rejected_what = 'messages'

    def __init__(self) -> None:
        super().__init__('legged_controller')
        self.contact_subscribed = set()
        # Trajectories become references on a worker thread; the update swaps the newest in.
        self.trajectories = TrajectoryWorker(self, self.throttle, self._trajectory_reference)
        self.srdf = semantic_description(self)
        self._load_model(with_urdf=True, srdf=self.srdf)

    def _use(self, settings, gains):
        self.controller.kp, self.controller.kd = self._gain_vectors(settings, gains)
        self.controller.set_mode(settings['mode'])

    def _gain_vectors(self, settings, gains):
        """(kp, kd) per coordinate of v, as StandingController's (1) takes them: the base's from the kp and kd
        parameters, each joint's from its gains.<joint>.p and .d."""
        joints_v = np.asarray(self.model.joint_v_index)[self.index]   # `joints` order -> v
        vectors = []
        for term, parameter in GAIN_TERMS.items():
            vector = np.full(self.model.nv, float(settings[parameter]))
            vector[joints_v] = gains[term]
            vectors.append(vector)
        return tuple(vectors)

    def _start(self, model, urdf):
        """Build the controller for the model and its URDF's contact points (ConfigurationError if it cannot run
        it); the first model creates the ROS interfaces."""
        if model.fixed_base or model.nq != model.nv + 1:
            raise ConfigurationError(f"robot {model.name!r} has no floating base: set root_joint to 'floating'")
        p = self.parameters
        joint_names, index = joint_order(model, p['joints'])
        gains = self.joint_gains.declare(joint_names, {term: np.full(len(joint_names), float(self.settings[parameter]))
                                                       for term, parameter in GAIN_TERMS.items()})
        try:
            points = ([contact_point(entry) for entry in p['contact_points']] if p['contact_points']
                      else contact_points_from_urdf(urdf))
            feet = list(p['feet']) or (self.srdf.feet if self.srdf is not None else []) or None

            gravity = default_as_none(as_vector('gravity', p['gravity'], 3, allow_scalar=False))

            def make():
                if p['gait'] == 'trot':
                    controller = GaitController(
                        model, points, p['ground_height'], p['friction'], self.settings['kp'], self.settings['kd'],
                        feet, gravity, period=p['gait_period'] or None, duty=p['duty_factor'],
                        swing_height=p['swing_height'] or None, max_velocity=list(p['max_velocity']) or None,
                        max_acceleration=list(p['max_acceleration']) or None)
                    controller.set_mode(self.settings['mode'])
                    return controller
                return StandingController(model, points, p['ground_height'], p['friction'], self.settings['kp'],
                                          self.settings['kd'], feet, gravity, self.settings['mode'])
            controller = make()
        except (ValueError, ImportError, URDFError) as e:
            raise ConfigurationError(f"cannot control {model.name!r}: {e}") from None
        warm_up(make())
        if len(p['reference_positions']):
            reference = as_vector('reference_positions', p['reference_positions'], len(index), allow_scalar=False)
            controller.set_joint_reference(reference[np.argsort(index)])
        elif self.srdf is not None and self.srdf.stance() is not None:
            name, q, _ = stance(model, self.srdf)
            controller.set_joint_reference(q[model.joint_q_index])
            self.get_logger().info(f"reference posture: the SRDF's group_state {name!r}")
        lower, upper, speed = plausibility_bounds(model)
        joints_q, joints_v = np.asarray(model.joint_q_index), np.asarray(model.joint_v_index)
        first = self.controller is None
        self.model, self.controller, self.joint_names, self.index = model, controller, joint_names, index
        self.gains = gains
        controller.kp, controller.kd = self._gain_vectors(self.settings, gains)
        self.joint_gains.serve(joint_names)
        self.bounds = (lower[joints_q], upper[joints_q], speed[joints_v])
        self.mapper = JointStateMapper(model.joint_names, bounds=self.bounds)
        self.trajectories.drop()   # a trajectory in the worker is for the old model
        self.applied = None        # the worker's hand-over the controller follows
        self.joint_state = None   # (monotonic receipt time, stamp s, q joints, v joints)
        self.odometry = None      # (monotonic receipt time, stamp s, q base (7), v base (6))
        feet = sorted({foot.link for foot in controller.feet})
        self.contact_forces = {link: None for link in feet}   # link -> (monotonic receipt time, stamp s, normal force N)
        self.answered = None      # the inputs of the last update (_inputs): each state is answered once
        self.cmd_vel = None       # (monotonic receipt time, (vx, vy, wz)) of the last valid ~/cmd_vel
        self.reference_start = None   # s: the joint-state stamp at which the reference's t = 0
        self.started = False
        self.touched_down = False   # contact_topics: a foot has reported contact
        if first:   # stale inputs are not commanded on (_answer): no stale timer
            self._create_controller_interfaces(self._on_joint_state, 'legged control', stale_timer=False)
            self.create_subscription(Odometry, 'odom', self._on_odometry, 1)
            self.create_subscription(JointTrajectory, '~/joint_trajectory', self._on_trajectory, 10, raw=True)
            self.create_subscription(Twist, '~/cmd_vel', self._on_cmd_vel, 10)
        self.problem = None   # why the last state got no command (stale inputs, no feasible contact forces), if so
        self._answer_states()
        if p['contact_topics']:
            for link in feet:
                if link not in self.contact_subscribed:
                    self.create_subscription(WrenchStamped, p['contact_topics'] + link,
                                             lambda msg, link=link: self._on_contact(link, msg), 10)
                    self.contact_subscribed.add(link)
        self.get_logger().info(f"{self.settings['mode']} control of {model.name!r} ({len(joint_names)} joints) at "
                               f"each state once, feet {feet}, friction {p['friction']:g}")

    def _on_joint_state(self, msg):
        state = self._map_joint_state(msg)
        if state is None:
            return
        q, v = state
        self.joint_state = (time.monotonic(), stamp_seconds(msg.header.stamp), q.copy(), v.copy())
        self._answer()

    def _on_odometry(self, msg):
        pose, twist = msg.pose.pose, msg.twist.twist
        q = np.array([pose.position.x, pose.position.y, pose.position.z, pose.orientation.x, pose.orientation.y,
                      pose.orientation.z, pose.orientation.w])
        v = np.array([twist.linear.x, twist.linear.y, twist.linear.z,
                      twist.angular.x, twist.angular.y, twist.angular.z])
        norm = np.linalg.norm(q[3:7])
        if not (np.all(np.isfinite(q)) and np.all(np.isfinite(v))) or abs(norm - 1.0) > 0.1:
            self.rejected += 1
            self.throttle.warn('odometry', f"rejected odometry: non-finite or not a unit quaternion "
                                           f"(pose {q.tolist()}, twist {v.tolist()})")
            return
        q[3:7] /= norm
        self.odometry = (time.monotonic(), stamp_seconds(msg.header.stamp), q, v)
        self._answer()

    def _on_cmd_vel(self, msg):
        command = (msg.linear.x, msg.linear.y, msg.angular.z)
        if not np.all(np.isfinite(command)):
            self.rejected += 1
            self.throttle.warn('cmd_vel', f"rejected cmd_vel: non-finite {list(command)}")
            return
        self.cmd_vel = (time.monotonic(), command)

    def _walk_command(self, now):
        """The trot's command: the last ~/cmd_vel, zero once older than `cmd_vel_timeout`."""
        if self.cmd_vel is None or now - self.cmd_vel[0] > self.parameters['cmd_vel_timeout']:
            return (0.0, 0.0, 0.0)
        return self.cmd_vel[1]

    def _on_contact(self, link, msg):
        if link not in self.contact_forces:   # a foot of an earlier model
            return
        force = msg.wrench.force.z
        if not np.isfinite(force):
            self.rejected += 1
            self.throttle.warn('contact', f"rejected contact force on {link}: {force}")
            return
        self.contact_forces[link] = (time.monotonic(), stamp_seconds(msg.header.stamp), force)
        self._answer()

    def _feet_in_contact(self, now):
        """The feet whose contact force exceeds `contact_force`; None without `contact_topics` (contact by the
        controller's kinematics). StaleState where a foot's force is missing or stale (_stale)."""
        if not self.parameters['contact_topics']:
            return None
        if any(entry is None or self._stale(entry, now) for entry in self.contact_forces.values()):
            raise StaleState("contact forces are missing or stale")
        in_contact = {link for link, (_, _, force) in self.contact_forces.items()
                      if force > self.parameters['contact_force']}
        if not (self.touched_down or in_contact):
            raise StaleState("no foot has reported contact yet (waiting for the first contact forces)")
        self.touched_down = True
        return in_contact

    def _on_trajectory(self, raw):
        """A serialized JointTrajectory: hand it to the worker (a newer one supersedes those queued); the next
        update follows it (from the current reference when its first point lies in the future)."""
        if self.joint_state is None:
            self.throttle.warn('early trajectory', "rejected joint trajectory: no joint state yet")
            return
        if self.parameters['gait'] != 'stand':
            self.throttle.warn('trajectory while walking', "rejected joint trajectory: followed with gait 'stand' "
                                                           "only")
            return
        self.trajectories.submit(raw)

    def _trajectory_reference(self, names, times, fields):
        """On the worker: the joint TrajectoryReference in model order (checked_columns, as the computed-torque
        controller takes it)."""
        def start():
            if self.controller.reference:
                return self.controller.reference.sample(self._reference_time())
            return self.joint_state[2], np.zeros(len(names)), np.zeros(len(names))
        return trajectory_reference(names, times, fields, self.model.joint_names, self.bounds,
                                    self.parameters['max_trajectory_points'], start)

    def _take_newest_trajectory(self):
        """Follow the trajectory the worker built last, if the controller does not yet (a trajectory stamped zero
        starts at the last joint state)."""
        incoming = self.trajectories.incoming
        if incoming is None or incoming is self.applied:
            return
        reference, stamp = incoming
        self.controller.set_trajectory(reference)
        self.reference_start = stamp * 1e-9 if stamp else self.joint_state[1]   # stamp: ns
        self.applied = incoming

    def _reference_time(self):
        if self.reference_start is None:
            return 0.0
        return self.joint_state[1] - self.reference_start

    def _inputs(self):
        """(joint state, odometry, contact force of each foot with `contact_topics`): the entries an update reads."""
        if not self.parameters['contact_topics']:
            return self.joint_state, self.odometry
        return (self.joint_state, self.odometry, *self.contact_forces.values())

    def _stale(self, entry, now):
        """Whether an input (receipt time, stamp, ...) is older than `state_timeout`; those stamped as the joint
        state are one measurement, received when the last of them was (a pause between their callbacks, e.g. the
        garbage collector's, does not make a lockstep state stale)."""
        stamp = self.joint_state[1]
        if entry[1] == stamp:
            received = max(e[0] for e in self._inputs() if e is not None and e[1] == stamp)
        else:
            received = entry[0]
        return now - received > self.parameters['state_timeout']

    def _answer(self):
        """One update once every input has been received since the last update (each message makes a new entry),
        from those alone, all fresh; until then the last command stands."""
        if not self.active or self.joint_state is None or self.odometry is None:
            return
        inputs = self._inputs()
        if self.answered is not None and (inputs[0] is self.answered[0] or inputs[1] is self.answered[1]):
            return   # no new state: the last command stands
        if self.answered is not None and self.answered[0][1] == self.answered[1][1] \
                and self.joint_state[1] != self.odometry[1]:
            return   # one source stamps both alike (a simulator): this joint state's odometry is still to come
        now = time.monotonic()
        try:
            if self._stale(self.joint_state, now) or self._stale(self.odometry, now):
                raise StaleState("joint states or odometry are stale")
            feet_in_contact = self._feet_in_contact(now)
        except StaleState as e:
            self.throttle.warn('stale', f"{e}: not commanding")
            self.problem = str(e)
            return
        if self.answered is not None and any(new is old for new, old in zip(inputs[2:], self.answered[2:])):
            return   # a foot's contact force of this state is still to come
        started = time.perf_counter()
        self.answered = inputs
        self._take_newest_trajectory()
        q = np.concatenate([self.odometry[2], np.zeros(self.model.nq - 7)])
        v = np.concatenate([self.odometry[3], np.zeros(self.model.nv - 6)])
        q[np.asarray(self.model.joint_q_index)] = self.joint_state[2]
        v[np.asarray(self.model.joint_v_index)] = self.joint_state[3]
        if isinstance(self.controller, GaitController):
            self.controller.set_command(*self._walk_command(now))
        try:
            tau = self.controller.update(q, v, self._reference_time(), feet_in_contact, now=self.joint_state[1])
        except (ContactForceError, ValueError) as e:
            self.throttle.warn(Throttle.reason(e), f"no command: {e}")
            self.problem = f"no command: {e}"
            return
        compute_us = (time.perf_counter() - started) * 1e6   # inputs, reference and law, as the other controllers
        if not self._publish_efforts(tau[self.index]):
            return
        self.commands += 1
        self.problem = None
        if not self.started:
            self.started = True
            self.get_logger().info(f"standing: {len(self.controller.contacts)} feet in contact, base at height "
                                   f"{q[2]:.3f} m, mode {self.controller.mode}")
        self._publish_compute_time(compute_us)

    def _diagnostic_status(self):
        """/diagnostics: commands per second over the last period, and the counts since the start."""
        values = {**self._diagnostic_values(), **warnings_by_kind(self.throttle)}
        if self.joint_state is not None and time.monotonic() - self.joint_state[0] > self.parameters['state_timeout']:
            return WARN, 'joint states stale: not commanding', values
        if self.problem is not None:
            return WARN, self.problem[:200], values
        if not self.started:
            return OK, 'waiting for joint states and odometry', values
        return OK, f"{self.controller.mode} control", values


def main(args: list[str] | None = None) -> int:
    return run(LeggedControllerNode, 'legged_controller', args)


if __name__ == '__main__':
    sys.exit(main())
