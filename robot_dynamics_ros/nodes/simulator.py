"""``simulator`` node: a stand-in robot. Steps the ABA forward-dynamics Simulator in (scaled) real time,
takes effort commands like ros2_control's JointGroupEffortController, publishes joint states.

Topics: subscribes ``effort_controller/commands`` (std_msgs/Float64MultiArray, in `joints` order) and
``~/joint_commands`` (sensor_msgs/JointState by joint name: position / velocity targets for a servo in the
simulator, and efforts; what ros2_control's topic-based JointStateTopicSystem publishes); publishes ``joint_states`` (sensor_msgs/JointState, effort = applied effort) and ``/clock`` when
`publish_clock`, `clock_rate` times per sim second (as Gazebo's ROS plugin throttles it; use_sim_time nodes wake
for every message). Services ``~/reset`` (std_srvs/Trigger), ``~/pause`` (std_srvs/SetBool: while paused sim time
stands still and nothing is published, as gz; ``publish_while_paused`` republishes the state). ``/tf`` and
``/tf_static`` as robot_state_publisher publishes them, odom -> base for a floating root (``transforms.py``;
`publish_tf`).

A robot with a floating root (parameter ``root_joint`` 'floating') stands on a ground (``ground_contact``: height
and friction as parameters, contact points from the URDF's <collision> spheres, boxes and cylinders or the
``contact_points`` parameter) and spawns with its lowest contact point on it unless ``initial_base_pose`` is given.
With an SRDF (``robot_description_semantic`` or ``srdf_file``) its virtual joint gives the root joint and its stance
(group_state 'standing', else 'home', else the first) the initial posture, the base pose where the stance gives
one (lowered onto the ground); a floating robot spawned resting on a link that is not a foot (the SRDF's end
effectors, else the leaf links) is warned about. Until the first command, ``~/contact/<link>`` carries the forces
of one zero-effort step from the spawn pose (the robot at rest on the ground), so that a controller that reads
them sees the feet in contact.
It also publishes ``~/odom``, ``~/imu`` and ``~/contact/<link>`` (``base_state.py``) and takes ``~/push``
(geometry_msgs/WrenchStamped: ``header.frame_id`` names the link, empty for the base; force and torque in world
coordinates, applied at the link origin for ``push_duration`` sim seconds). ``~/wrench`` (geometry_msgs/WrenchStamped,
any robot: force and torque in world coordinates at the origin of the link ``header.frame_id`` names) is held until
the next message; a zero wrench removes it. Both are refused beyond ``Simulator.push``'s bound (10 g on the mass).
joint_states and commands hold the actuated joints only.

A step that fails (the contact solver's ``ContactSolverError``: no certified solution) ends the run: one error line
naming the cause, then the node stops with exit code 1 (``bringup`` says "the simulation stopped" and exits 1). A step
that would diverge (``SimulationDiverged``) is refused and the last finite state kept, at rest, as before.
"""
import sys
import time
from array import array

import numpy as np
from rosgraph_msgs.msg import Clock
from geometry_msgs.msg import WrenchStamped
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from std_srvs.srv import SetBool, Trigger

from ..fast import choose_code
from ..model.collision import reduce_points
from ..model.model import FREE_FLYER
from ..simulation.pacing import KEEP_UP_FRACTION, Pacing
from ..simulation.scene import SceneError, SceneSettings, build_scene
from ..simulation.simulator import SimulationDiverged
from .messages import STATE_LABEL, answered_state, stamp_nanoseconds
from .model_source import ModelSource, contact_point, joint_order, semantic_description
from .node_loop import GuardedNode, STEADY_CLOCK, Throttle, run
from .node_parameters import as_vector, declare_parameters, default_as_none
from .parameter_schema import ConfigurationError
from .diagnostics import ERROR, OK, WARN, Diagnostics, warnings_by_kind

RATE_LOG_PERIOD = 5.0    # seconds between debug logs of the achieved step rate
LOCKSTEP_REPUBLISH = 0.1  # s wall between republished states while a lockstep simulator waits to start
# Lockstep's command queue: deep enough that the answer a lockstep simulator waits for is not overwritten by other
# commands on the topic (another publisher's, wrong lengths) before the executor takes it (with depth 1, a flood of
# 129 wrong-label commands/s took the loop from 457 to 8 states/s). Real time keeps depth 1: the newest command wins.
LOCKSTEP_COMMAND_DEPTH = 100


class SimulatorNode(GuardedNode):
    def __init__(self) -> None:
        super().__init__('simulator')
        p = declare_parameters(self, 'simulator')
        self.rate, self.integrator, self.gravity_param = p['rate'], p['integrator'], p['gravity']
        self.initial_positions, self.joints_param = p['initial_positions'], p['joints']
        self.real_time_factor = p['real_time_factor']
        self.apply_damping, self.apply_friction, self.limit_velocity = (
            p['apply_damping'], p['apply_friction'], p['limit_velocity'])
        self.wait_for_command = self.waiting = p['wait_for_command']
        self.publish_clock, self.clock_rate = p['publish_clock'], p['clock_rate']
        self.publish_rate = min(p['publish_rate'], self.rate) if p['publish_rate'] > 0 else self.rate
        self.command_timeout = p['command_timeout'] if p['command_timeout'] > 0 else None
        self.on_command_timeout, self.sync = p['on_command_timeout'], p['sync']
        self.lockstep_timeout, self.pause_at_time = p['lockstep_timeout'], p['pause_at_time']
        self.publish_while_paused = p['publish_while_paused']
        self.joint_states_depth = p['joint_states_depth']
        self.ground, self.ground_height, self.ground_friction = p['ground'], p['ground_height'], p['ground_friction']
        self.contact_points_param, self.initial_base_pose = p['contact_points'], p['initial_base_pose']
        self.push_duration, self.world_frame = p['push_duration'], p['world_frame']
        self.ft_sensors_param = p['ft_sensors']
        self.ft_publishers = {}   # joint -> its ~/ft/<joint> publisher (kept across models)
        self.throttle = Throttle(self.get_logger())
        self.sim = None
        self.failure = None   # why the run cannot go on (``fail``)
        self.base_state = None
        self.steps = 0
        self.srdf = semantic_description(self)
        self.transforms = self._transform_publisher(p)
        ModelSource(self, self._start, with_urdf=True, srdf=self.srdf)

    def _start(self, model, urdf):
        """Build the scene for the model (simulation/scene.py; ConfigurationError if it cannot run it), then switch
        to it: the first model creates the ROS interfaces; a later one (a new /robot_description) restarts the node
        from its initial state on the new model, sim time running on."""
        joint_names, index = joint_order(model, self.joints_param)
        self.get_logger().info(f"dynamics: {choose_code(model)}")
        settings = self._scene_settings(model, index)
        try:
            scene = build_scene(model, urdf, settings, self.srdf)
        except SceneError as e:
            raise ConfigurationError(str(e)) from None
        for note in scene.notes:
            self.get_logger().info(note)
        for warning in scene.warnings:
            self.get_logger().warning(warning)
        sim, ft_sensors, self.resting_forces = scene.sim, scene.ft_sensors, scene.resting_forces
        if self.sim is not None:
            sim.t = self.sim.t   # a clock that jumps back upsets ROS time users
        if self.transforms is not None:
            self.transforms.attach(model, urdf, self.get_clock().now().to_msg())
        first = self.sim is None
        self.sim, self.joint_names, self.ft_sensors = sim, joint_names, ft_sensors
        self.q_index, self.v_index = model.joint_q_index[index], model.joint_v_index[index]
        self.model_index = {name: i for i, name in enumerate(model.joint_names)}
        # mimic joints follow the joints, as gz publishes them and robot_state_publisher needs them
        self.mimic_joints = ([name for name in model.all_joint_names if name in model.mimic]
                             if model.coupling is not None else [])
        self.mimic_index = [model.all_joint_names.index(name) for name in self.mimic_joints]
        self.state_msg = JointState(name=list(joint_names) + self.mimic_joints)   # filled and published again and again
        self.waiting = self.wait_for_command
        self.answered = True       # lockstep: the command answering the last state has arrived
        if first:
            self._create_interfaces()
        if model.joint_type[0] != FREE_FLYER:
            self.base_state = None
        elif self.base_state is None:
            from .base_state import BaseStatePublisher   # nav_msgs: only for robots with a floating root
            self.base_state = BaseStatePublisher(self, sim, settings.gravity, self.world_frame)
        else:
            self.base_state.attach(sim, settings.gravity)
        self._anchor()
        if sim.contact is not None:
            self.get_logger().info(f"ground at z = {self.ground_height:g} m, friction {self.ground_friction:g}, "
                                   f"{sim.contact.count} contact points on {sorted(set(sim.contact.links))}")
        self.get_logger().info(
            f"simulating {model.name!r} ({model.nv} DOF), {self.integrator} at {self.rate:g} Hz, "
            f"joint_states every {self.steps_per_publish} steps, "
            + ("lockstep with the controller" if self.sync == 'lockstep' else "real-time factor "
               f"{'max' if self.real_time_factor <= 0 else f'{self.real_time_factor:g}'}"))
        self._publish()

    def _create_interfaces(self):
        """Publishers, subscriptions, services and the stepping timer: once, for every model."""
        self.state_pub = self.create_publisher(JointState, 'joint_states', self.joint_states_depth)
        self.clock_pub = self.create_publisher(Clock, '/clock', 10) if self.publish_clock else None
        self.create_subscription(Float64MultiArray, 'effort_controller/commands', self._on_command,
                                 LOCKSTEP_COMMAND_DEPTH if self.sync == 'lockstep' else 1)
        self.create_subscription(JointState, '~/joint_commands', self._on_joint_command, 1)
        self.create_service(Trigger, '~/reset', self._on_reset)
        self.create_service(SetBool, '~/pause', self._on_pause)
        self.create_subscription(WrenchStamped, '~/push', self._on_push, 10)
        self.create_subscription(WrenchStamped, '~/wrench', self._on_wrench, 10)
        self.steps_per_publish = max(1, round(self.rate / self.publish_rate))
        as_fast_as_possible = self.real_time_factor <= 0 or self.sync == 'lockstep'
        period = 0.0 if as_fast_as_possible else self.steps_per_publish / (self.rate * self.real_time_factor)
        self.clock_msg = Clock()
        self.clock_period_ns = int(1e9 / self.clock_rate) if self.clock_rate > 0 else 0
        self.clock_published_ns = None   # sim time of the last /clock message
        self.published_at = 0.0    # lockstep: wall time of the last state
        self.published_ns = None   # lockstep: its stamp; a command naming another state does not answer it
        self.ignored_commands = 0  # lockstep: commands ignored for naming another state
        self.commands_received = 0
        self.late_ticks = 0        # real time: timer ticks that stepped more than one publish period (catching up)
        self.diagnostics = Diagnostics(self, 'simulation', self._diagnostic_status, lambda: self.sim.model.name)
        self.pacing = Pacing(self.real_time_factor, self.steps_per_publish * (1.0 / self.rate))
        self._anchor()
        self.wall_start = self.pacing.anchor[0]
        self.warned_slow = False
        self.rate_log = (self.wall_start, 0)    # (wall time, steps) of the last rate log
        if self.sync == 'lockstep':
            self.create_timer(LOCKSTEP_REPUBLISH / 10, self._on_lockstep_timer, clock=STEADY_CLOCK)
        else:
            self.create_timer(period, self._on_timer, clock=STEADY_CLOCK)

    def _transform_publisher(self, p):
        """The /tf publisher (``transforms.py``), or None: publish_tf false, or tf2_msgs not installed (said once)."""
        if not p['publish_tf']:
            return None
        try:
            from .transforms import TransformPublisher
        except ImportError as e:
            self.get_logger().warning(f"no /tf or /tf_static: {e} (tf2_msgs comes with every ROS install)")
            return None
        return TransformPublisher(self, p['odom_frame'], p['base_frame'], p['tf_rate'])

    def _scene_settings(self, model, index):
        """The parameters that shape the scene; `index`: the `joints` in model.joint_names."""
        contact_points = (reduce_points([contact_point(entry) for entry in self.contact_points_param])
                          if self.contact_points_param else None)
        base_pose = (as_vector('initial_base_pose', self.initial_base_pose, 7, allow_scalar=False)
                     if len(self.initial_base_pose) else None)
        return SceneSettings(
            rate=self.rate, integrator=self.integrator,
            gravity=default_as_none(as_vector('gravity', self.gravity_param, 3, allow_scalar=False)),
            initial_positions=self._in_model_order(model, index, 'initial_positions', self.initial_positions),
            initial_base_pose=base_pose, apply_damping=self.apply_damping, apply_friction=self.apply_friction,
            limit_velocity=self.limit_velocity, command_timeout=self.command_timeout,
            on_command_timeout=self.on_command_timeout, ground=self.ground, ground_height=self.ground_height,
            ground_friction=self.ground_friction, contact_points=contact_points, ft_sensors=self.ft_sensors_param)

    def _in_model_order(self, model, index, name, values):
        """A per-joint list parameter in `joints` order (`index`: their indices in model.joint_names) -> that
        order; None when empty."""
        if not len(values):
            return None
        result = np.zeros(len(model.joint_names))
        result[index] = as_vector(name, values, len(result), allow_scalar=False)
        return result

    def _anchor(self):
        """Tie the current sim time to the current wall time; stepping catches up with the wall from here."""
        self.pacing.tie(time.monotonic(), self.sim.t)

    def _republishing(self):
        """Whether the state is sent again while sim time stands still: waiting for the first command, unless
        paused (then only with publish_while_paused)."""
        return not self.sim.paused or self.publish_while_paused

    def _on_timer(self):
        if self.sim.paused or self.waiting:   # time stands still
            self._anchor()
            if self._republishing():
                self._publish()
        else:
            periods = self.pacing.periods_due(time.monotonic(), self.sim.t)
            self.late_ticks += periods > 1
            if periods:
                self._advance(periods * self.steps_per_publish)
                self._publish()
                self._check_keeping_up()
        self._log_rate()

    def fail(self, message):
        """Log the error that ends the run and set ``failure``: ``node_loop.run`` stops the node after this callback,
        exit code 1 (a simulator whose time stood still would leave its controller and bringup waiting forever)."""
        self.get_logger().error(message)
        self.failure = message.split(':')[0]

    def _advance(self, steps):
        if self.failure:
            return
        if self.steps == 0:   # the step rate counts from the first step, not from a wait or pause before it
            self.wall_start = self.pacing.anchor[0]
        for _ in range(steps):
            if 0 < self.pause_at_time <= self.sim.t + 0.5 * self.sim.dt:
                self.sim.paused, self.pause_at_time = True, 0.0   # once: ~/pause resumes
                self.get_logger().info(f"paused at sim time {self.sim.t:.3f} s (pause_at_time)")
                break
            if self.ft_sensors is not None:
                self.ft_sensors.before_step()
            try:
                self.sim.step()
            except SimulationDiverged as e:   # the Simulator kept the last finite state, at rest
                self.throttle.warn('diverged', f"simulation step refused: {e}")
                break
            except ValueError as e:   # e.g. ground_contact.ContactSolverError: the run cannot go on
                self.fail(f"simulation step failed: {e} (at sim time {self.sim.t:.6g} s); the simulator stops")
                break
            self.steps += 1

    def _check_keeping_up(self):
        """Warn once when the achieved real-time factor falls short of the target (simulation/pacing.py)."""
        shortfall = self.pacing.shortfall(time.monotonic(), self.sim.t)
        if shortfall is not None and not self.warned_slow:
            self.warned_slow = True
            self.get_logger().warning(f"cannot keep up: achieved real-time factor {shortfall[0]:.2f} of "
                                      f"{self.real_time_factor:g} over {shortfall[1]:.1f} s (machine too slow "
                                      "or loaded); sim time runs slower than asked")

    def _on_lockstep_timer(self):
        """Lockstep: republish while waiting (or paused, with publish_while_paused); step with the last command
        when the answer is late."""
        now = time.monotonic()
        if self.sim.paused or self.waiting:
            if self._republishing() and now - self.published_at >= LOCKSTEP_REPUBLISH:
                self._publish()
        elif not self.answered and now - self.published_at > self.lockstep_timeout:
            self.throttle.warn('lockstep', f"lockstep: no command within {self.lockstep_timeout:g} s of the "
                                           "last joint state; stepping with the last command")
            self._lockstep_step()

    def _lockstep_step(self):
        self._advance(self.steps_per_publish)
        self._publish()

    def _publish(self):
        """Publish the joint state (and /clock), unless a value is not finite: the last check before every
        publish. In lockstep, the next command answers this state."""
        q, qd, effort = self.sim.q[self.q_index], self.sim.qd[self.v_index], self.sim.applied_effort[self.v_index]
        if self.mimic_joints:   # their positions and velocities from their masters'; no motor effort of their own
            positions, velocities = self.sim.model.joint_positions(self.sim.q, self.sim.qd)
            q, qd = np.concatenate([q, positions[self.mimic_index]]), np.concatenate([qd, velocities[self.mimic_index]])
            effort = np.concatenate([effort, np.zeros(len(self.mimic_joints))])
        if not (np.isfinite(q).all() and np.isfinite(qd).all() and np.isfinite(effort).all()
                and np.isfinite(self.sim.t) and (self.base_state is None or self.base_state.finite())):
            self.throttle.warn('non-finite', "not publishing a non-finite simulation state; call ~/reset")
            return
        msg = self.state_msg
        if self.publish_clock:
            ns = int(round(self.sim.t * 1e9))
            msg.header.stamp.sec, msg.header.stamp.nanosec = ns // 1_000_000_000, ns % 1_000_000_000
            if self.clock_published_ns is None or ns - self.clock_published_ns >= self.clock_period_ns \
                    or ns < self.clock_published_ns:
                self.clock_msg.clock = msg.header.stamp
                self.clock_pub.publish(self.clock_msg)
                self.clock_published_ns = ns
        else:
            msg.header.stamp = self.get_clock().now().to_msg()
        msg.position = array('d', q.tobytes())
        msg.velocity = array('d', qd.tobytes())
        msg.effort = array('d', effort.tobytes())
        self.state_pub.publish(msg)
        if self.base_state is not None:
            self.base_state.publish(msg.header.stamp)
        if self.ft_sensors is not None:
            self._publish_wrenches(msg.header.stamp)
        if self.transforms is not None:
            self.transforms.publish(self.sim.q, msg.header.stamp)
        self.answered = False
        self.published_at = time.monotonic()
        self.published_ns = stamp_nanoseconds(msg.header.stamp)

    def _publish_wrenches(self, stamp):
        """~/ft/<joint> for each force/torque sensor, unless a value is not finite."""
        for joint, link, wrench in zip(self.ft_sensors.joints, self.ft_sensors.links, self.ft_sensors.read()):
            if not np.isfinite(wrench).all():
                self.throttle.warn('non-finite wrench', f"not publishing a non-finite wrench of joint {joint!r}")
                continue
            if joint not in self.ft_publishers:
                self.ft_publishers[joint] = self.create_publisher(WrenchStamped, f'~/ft/{joint}', 10)
            msg = WrenchStamped()
            msg.header.stamp, msg.header.frame_id = stamp, link
            (msg.wrench.torque.x, msg.wrench.torque.y, msg.wrench.torque.z,
             msg.wrench.force.x, msg.wrench.force.y, msg.wrench.force.z) = map(float, wrench)
            self.ft_publishers[joint].publish(msg)

    def _answers_last_state(self, msg):
        """Lockstep: whether an effort command answers the state published last: it names that state, or it names
        none (a third-party controller's). One naming another state (a late answer to a copy republished while
        waiting, another publisher's) or carrying our label unreadably does not."""
        stamp = answered_state(msg)
        if stamp is None:
            return not any(dim.label.startswith(STATE_LABEL) for dim in msg.layout.dim)
        return stamp == self.published_ns

    def _on_command(self, msg):
        if self.sync == 'lockstep' and not self._answers_last_state(msg):
            self.ignored_commands += 1
            return
        values = np.asarray(msg.data, dtype=float)
        if values.shape != (len(self.joint_names),):
            self.throttle.warn('length', f"rejected effort command: {values.size} values for "
                                         f"{len(self.joint_names)} joints {self.joint_names}; "
                                         "keeping the last safe command")
            return
        tau = np.zeros(self.sim.model.nv)
        tau[self.v_index] = values
        try:
            self.sim.set_command(tau, t=self.sim.t)
        except ValueError as e:
            self.throttle.warn('invalid', f"rejected effort command: {e}; keeping the last safe command")
            return
        self._command_received()

    def _on_joint_command(self, msg):
        """A sensor_msgs/JointState command as ros2_control's JointStateTopicSystem sends it: joints by name
        (any subset, any order), position / velocity / effort fields each empty or one per name, NaN
        meaning no command for that joint in that field. Held until the next one (never stale)."""
        try:
            fields = self._joint_command_fields(msg)
            self.sim.set_joint_command(**fields, t=self.sim.t)
        except ValueError as e:
            self.throttle.warn(Throttle.reason(e), f"rejected joint command: {e}; keeping the last command")
            return
        self._command_received()

    def _joint_command_fields(self, msg):
        """{'position': array or None, ...} in model order, NaN where not commanded; ValueError if bad."""
        names = list(msg.name)
        mimic = {name: self.sim.model.mimic[name][0] for name in names if name in self.mimic_joints}
        if mimic:
            raise ValueError(f"joints {sorted(mimic)} are mimic joints, which follow their masters "
                             f"{sorted(set(mimic.values()))}: command those instead")
        unknown = [name for name in names if name not in self.model_index]
        if unknown or len(set(names)) != len(names):
            raise ValueError(f"joint names {names} must be distinct joints of the model (unknown: {unknown})")
        rows = [self.sim.model.joint_v_index[self.model_index[name]] for name in names]
        fields = {}
        for field in ('position', 'velocity', 'effort'):
            values = np.asarray(getattr(msg, field), dtype=float)
            if values.size == 0:
                fields[field] = None
                continue
            if values.size != len(names):
                raise ValueError(f"{field} has {values.size} values for {len(names)} names")
            if np.any(np.isinf(values)):
                raise ValueError(f"{field} contains Inf: {values.tolist()}")
            fields[field] = np.full(self.sim.model.nv, np.nan)
            fields[field][rows] = values
        return fields

    def _command_received(self):
        self.commands_received += 1
        if self.waiting:
            self.get_logger().info("first command received; simulation time starts")
            self.waiting = False
            self._anchor()
        if self.sync == 'lockstep' and not self.sim.paused and not self.answered:
            self.answered = True
            self._lockstep_step()

    def _on_reset(self, request, response):
        """Back to the initial state with zero effort; sim time keeps running forward (a clock that jumps
        back upsets ROS time users), and with wait_for_command it stands still until the next command."""
        t = self.sim.t
        self.sim.reset()
        self.sim.t = t
        self.sim.contact_forces[:] = self.resting_forces
        self.waiting = self.wait_for_command
        self._anchor()
        response.success = True
        response.message = f"reset to {self.sim.q[self.q_index].tolist()}"
        return response

    def _on_push(self, msg):
        """Push the link named by header.frame_id (empty: the base) with the message's wrench (world coordinates,
        at the link origin) for push_duration sim seconds; one beyond Simulator.push's bound is rejected. Logged at
        most once per throttle period (a stream of pushes is one line)."""
        link = msg.header.frame_id or self.sim.model.root_link
        force, torque = msg.wrench.force, msg.wrench.torque
        try:
            self.sim.push(link, [force.x, force.y, force.z], [torque.x, torque.y, torque.z], self.push_duration)
        except ValueError as e:
            self.throttle.warn(Throttle.reason(e), f"rejected push: {e}")
            return
        self.throttle.info('push', f"pushing {link!r} with force {[force.x, force.y, force.z]} N for "
                                   f"{self.push_duration:g} s")

    def _on_wrench(self, msg):
        """Hold the message's wrench (world coordinates, at the origin of the link header.frame_id names) on the link
        until the next message; a zero wrench removes it; one beyond Simulator.apply_wrench's bound (a push's) is
        rejected. Logged at most once per throttle period (a stream of wrenches is one line)."""
        force, torque = msg.wrench.force, msg.wrench.torque
        try:
            self.sim.apply_wrench(msg.header.frame_id, [force.x, force.y, force.z], [torque.x, torque.y, torque.z])
        except ValueError as e:
            self.throttle.warn(Throttle.reason(e), f"rejected wrench: {e}")
            return
        if self.sim.held_wrench:
            line = (f"external wrench on {msg.header.frame_id!r}: force {[force.x, force.y, force.z]} N, torque "
                    f"{[torque.x, torque.y, torque.z]} N m")
            self.throttle.info('wrench', line)
        else:
            self.throttle.info('wrench removed', "external wrench removed")

    def _on_pause(self, request, response):
        self.sim.paused = bool(request.data)
        self._anchor()
        if self.sync == 'lockstep' and not self.sim.paused:
            self._publish()   # the loop resumes with the answer to this state
        response.success = True
        response.message = 'paused' if self.sim.paused else 'running'
        return response

    def _diagnostic_status(self):
        """/diagnostics: the step rate and real-time factor over the last period, and the counts since the start."""
        steps_per_second = self.diagnostics.rate('steps', self.steps)
        achieved = steps_per_second * self.sim.dt
        values = {'steps per second': steps_per_second, 'real-time factor': achieved, 'sim time': self.sim.t,
                  'sync': self.sync, 'late ticks': self.late_ticks, 'commands received': self.commands_received,
                  'commands naming another state ignored': self.ignored_commands, **warnings_by_kind(self.throttle)}
        if self.failure:
            return ERROR, f"stopped: {self.failure}", values
        if self.sim.paused or self.waiting:
            return OK, 'paused' if self.sim.paused else 'waiting for the first command', values
        if self.sim.command_is_stale():
            return WARN, f"no command for over command_timeout: {self.on_command_timeout}", values
        if self.sync == 'realtime' and 0 < self.real_time_factor and achieved < KEEP_UP_FRACTION * self.real_time_factor:
            return WARN, f"cannot keep up: real-time factor {achieved:.2f} of {self.real_time_factor:g}", values
        return OK, 'running', values

    def _log_rate(self):
        now = time.monotonic()
        wall, steps = self.rate_log
        if now - wall >= RATE_LOG_PERIOD:
            self.get_logger().debug(f"{(self.steps - steps) / (now - wall):.0f} steps/s")
            self.rate_log = (now, self.steps)

    def summary(self):
        if self.sim is None:
            return "no model was loaded"
        elapsed = time.monotonic() - self.wall_start
        target = ("lockstep" if self.sync == 'lockstep' else f"{self.rate * self.real_time_factor:g}"
                  if self.real_time_factor > 0 else "max")
        return (f"{self.steps} steps in {elapsed:.1f} s wall ({self.steps / elapsed:.0f} steps/s, target "
                f"{target}), sim time {self.sim.t:.3f} s (real-time factor "
                f"{self.steps / self.rate / elapsed:.2f})"
                + (f", {self.ignored_commands} commands naming another state ignored" if self.ignored_commands
                   else ""))


def main(args: list[str] | None = None) -> int:
    return run(SimulatorNode, 'simulator', args)


if __name__ == '__main__':
    sys.exit(main())
