"""What every controller node shares, as ros2_controllers' ControllerInterface: a lifecycle node (unconfigured ->
inactive -> active, through the standard ``~/change_state`` and ``~/get_state`` services, so ``ros2 lifecycle set
<node> deactivate`` works) whose parameters come from its schema and whose model comes from ``ModelSource``; joint-state
intake by name, the efforts it publishes on ``effort_controller/commands`` (each naming the joint state it answers,
and never a non-finite one), the stale-state timer and ``~/compute_time_us``.

An inactive controller takes no joint state and commands nothing, not even on stale states (a simulator then acts on
a stale command: brakes, with its `on_command_timeout`); only /diagnostics goes on, saying it is inactive. With `autostart` (the default)
the node configures and activates itself as it starts, so that users who ignore lifecycle see a controller that
commands from the first joint state on. Configuring does nothing more than the state: the model is loaded as the
node starts; activating again forgets the states before (the next joint state starts the stale timer again).
"""
import time

from rclpy.lifecycle import LifecycleNode
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64, Float64MultiArray

from .joint_gains import JointGains
from .messages import StateAnswers, stamp_nanoseconds
from .model_source import ModelSource
from .node_loop import GuardedNode, STEADY_CLOCK, Throttle
from .node_parameters import as_vector, declare_parameters
from .diagnostics import OK, Diagnostics

class ControllerBase(GuardedNode, LifecycleNode):
    """A controller node named ``name`` with the parameters of its schema (nodes/parameters/<name>.yaml, with
    `autostart`), ``self.parameters`` by name and the runtime ones (not read-only) in ``self.settings``. A subclass
    finishes its own set-up and then calls ``_load_model``; its ``_start(model, ...)`` builds its law for each model,
    and ``_use(settings, gains)`` applies runtime settings and gains to the running law. ``gain_terms`` ({term:
    parameter}, as joint_gains.JointGains takes them) are its gains, also per joint as gains.<joint>.<term>;
    ``rejected_what`` names what ``rejected`` counts."""

    gain_terms = {}
    rejected_what = 'joint states'

    def __init__(self, name):
        super().__init__(name)
        self.model = self.controller = None
        self.settings = {}
        self.gains = {}   # {term: array in `joints` order}: the gains in use, once the model is known
        self.parameters = declare_parameters(self, name, self._apply_settings)
        self.settings = {name: self.parameters[name] for name, spec in self.node_parameters.schema.parameters.items()
                         if not spec.read_only}
        if self.gain_terms:
            self.joint_gains = JointGains(self, self.gain_terms, self._apply_joint_gains)
        self.throttle = Throttle(self.get_logger())
        self.commands = self.rejected = 0
        self.active = False
        self.state_ns = None     # stamp of the last valid joint state
        self.last_state = None   # monotonic receipt time of the last valid joint state
        self.stale = False

    def _apply_settings(self, changes):
        """Take the runtime settings with ``changes`` (each already checked by its schema's validators) applied, or
        raise ConfigurationError (``_use`` refuses them) and keep the old ones. A gain parameter set at run time sets
        every joint's gain (and gains.<joint>.<term>)."""
        settings, changed = dict(self.settings, **changes), {}
        if self.controller is not None:
            changed = {term: as_vector(parameter, changes[parameter], len(self.index))
                       for term, parameter in self.gain_terms.items() if parameter in changes}
            gains = {**self.gains, **changed}
            self._use(settings, gains)
            self.gains = gains
        self.settings = settings
        if changed:
            self.joint_gains.mirror(changed)

    def _apply_joint_gains(self, gains):
        """gains.<joint>.<term> set at run time: {term: array in `joints` order}, checked as _apply_settings does."""
        self._use(self.settings, gains)
        self.gains = gains

    def _use(self, settings, gains):
        raise NotImplementedError

    def _load_model(self, **model_source):
        """Load the model (model_source.ModelSource with these options: now, or when robot_description comes), then,
        with `autostart`, configure and activate."""
        ModelSource(self, self._start, **model_source)
        if self.parameters['autostart']:
            self.trigger_configure()
            self.trigger_activate()

    # --- lifecycle ---------------------------------------------------------------------------------------------
    def on_activate(self, state):
        self.last_state, self.stale = None, False
        if self.controller is not None:
            self._restart()
        self.active = True
        self.get_logger().info("active: commanding")
        return super().on_activate(state)

    def _restart(self):
        """Activated again: the law starts afresh at the next state (a subclass whose law keeps state resets it)."""

    def on_deactivate(self, state):
        self.active = False
        self.get_logger().info("inactive: commanding nothing")
        return super().on_deactivate(state)

    def on_shutdown(self, state):
        self.active = False
        return super().on_shutdown(state)

    def lifecycle_state(self):
        """The label of the lifecycle state ('unconfigured', 'inactive', 'active', ...)."""
        return self._state_machine.current_state[1]

    # --- interfaces --------------------------------------------------------------------------------------------
    def _create_controller_interfaces(self, on_joint_state, task=None, stale_timer=True):
        """The effort and compute-time publishers and the joint-state subscription (depth 1: when the controller
        falls behind it acts on the newest state, not on a queue of old ones); with ``stale_timer``, the timer of
        ``_check_stale``; with a ``task``, /diagnostics (``_diagnostic_status``). Once, for every model."""
        self.command_pub = self.create_publisher(Float64MultiArray, 'effort_controller/commands', 10)
        self.compute_time_pub = self.create_publisher(Float64, '~/compute_time_us', 10)
        self.compute_time_msg = Float64()
        self.create_subscription(JointState, 'joint_states', on_joint_state, 1)
        if stale_timer:
            self.create_timer(min(0.1, self.parameters['state_timeout'] / 2), self._check_stale, clock=STEADY_CLOCK)
        if task is not None:
            self.diagnostics = Diagnostics(self, task, self._health, lambda: self.model.name)

    def _answer_states(self):
        """Efforts from now on for the joints of ``self.index`` (`joints` order -> model order)."""
        self.answers = StateAnswers(self.command_pub, len(self.index), self.throttle)

    def _map_joint_state(self, msg):
        """(q, qd) of a JointState by name (``self.mapper``), its stamp taken as the last valid state's; None for one
        rejected (counted, with a throttled warning) or while inactive."""
        if not self.active:
            return None
        try:
            q, qd = self.mapper.map(msg.name, msg.position, msg.velocity)
        except ValueError as e:
            self.rejected += 1
            self.throttle.warn(Throttle.reason(e), f"rejected joint state: {e}")
            return None
        self.state_ns = stamp_nanoseconds(msg.header.stamp)
        return q, qd

    def _publish_efforts(self, values):
        """Publish efforts in `joints` order, named as the answer to the last valid joint state (StateAnswers), unless
        they are not finite (the last check before every command, whatever produced it) or the controller is
        inactive. Returns whether they were published."""
        return self.active and self.answers.publish(self.state_ns, values)

    def _publish_compute_time(self, compute_us):
        """~/compute_time_us: the update's microseconds, from the state's intake to the efforts, without their send."""
        self.compute_time_msg.data = float(compute_us)
        self.compute_time_pub.publish(self.compute_time_msg)

    # --- stale joint states ------------------------------------------------------------------------------------
    def _state_answered(self):
        """A valid joint state was answered: stale states are over."""
        if self.stale:
            self.get_logger().info("joint states are back; commanding again")
            self.stale = False
        self.last_state = time.monotonic()

    def _check_stale(self):
        """No valid joint state for `state_timeout`: ``_on_stale(first)``, first when it has just become stale."""
        if not self.active or self.last_state is None:
            return
        if time.monotonic() - self.last_state <= self.parameters['state_timeout']:
            return
        first = not self.stale
        self.stale = True
        self._on_stale(first)

    def _on_stale(self, first):
        raise NotImplementedError

    # --- reports -----------------------------------------------------------------------------------------------
    def _diagnostic_values(self):
        """/diagnostics figures every controller has: commands per second over the last period and counts since the
        start."""
        return {'commands per second': self.diagnostics.rate('commands', self.commands), 'commands': self.commands,
                f'rejected {self.rejected_what}': self.rejected}

    def _health(self):
        """The subclass's ``_diagnostic_status()`` and the lifecycle state; while not active, that says it all."""
        level, message, values = self._diagnostic_status()
        values['lifecycle state'] = self.lifecycle_state()
        if not self.active:
            return OK, f"{self.lifecycle_state()}: commanding nothing", values
        return level, message, values

    def summary(self):
        if self.controller is None:
            return "no model was loaded"
        return f"{self.commands} commands, {self.rejected} rejected {self.rejected_what}"
