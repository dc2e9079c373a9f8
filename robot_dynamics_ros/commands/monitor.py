"""The in-process monitor node of ``robot-dynamics bringup``."""
import time

import numpy as np
import rclpy
from rclpy.executors import SingleThreadedExecutor
from rclpy.signals import SignalHandlerOptions
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64, Float64MultiArray
from std_srvs.srv import SetBool

from ..nodes.messages import answered_state
from ..nodes.node_loop import EventsExecutor
from .node_runs import JointStateIntake

PAUSE_RESEND_AFTER = 2.0   # s without an answer before the pause request is sent again


class InProcessNode:
    """An rclpy node in the command's own process, spun by the command while it waits."""

    def __init__(self, name):
        rclpy.init(args=[], signal_handler_options=SignalHandlerOptions.NO)   # the command's own handlers
        self.node = rclpy.create_node(name)
        # One executor for the node's life (rclpy.spin_once adds and removes the node on every call, too slow
        # for 1 kHz of joint states), the EventsExecutor where rclpy has it, as the nodes use.
        self.executor = EventsExecutor() if EventsExecutor is not None else SingleThreadedExecutor()
        self.executor.add_node(self.node)
        self.pause_client = self.node.create_client(SetBool, 'simulator/pause')
        self.pause_call = None
        self.pause_sent = 0.0   # time.monotonic() of the request in flight

    def request_pause(self, paused):
        """Ask the simulator to pause (or resume); call until it returns True: the call was answered. A request
        unanswered for PAUSE_RESEND_AFTER s is sent again: Fast DDS drops the answer to a first call when the
        simulator has not yet matched this node's response reader (it waits 100 ms), as on a busy machine."""
        if self.pause_call is not None and not self.pause_call.done() \
                and time.monotonic() - self.pause_sent > PAUSE_RESEND_AFTER:
            self.pause_client.remove_pending_request(self.pause_call)
            self.pause_call = None
        if self.pause_call is None:
            if not self.pause_client.service_is_ready():
                return False
            self.pause_call = self.pause_client.call_async(SetBool.Request(data=paused))
            self.pause_sent = time.monotonic()
        if not self.pause_call.done():
            return False
        self.pause_call = None
        return True

    def spin_until(self, condition, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if condition():
                return True
            self.executor.spin_once(timeout_sec=0.05)
        return condition()

    def close(self):
        self.executor.shutdown()
        self.node.destroy_node()
        rclpy.try_shutdown()


class Recorder(InProcessNode):
    """In-process monitor node: records the robot's joint states (``JointStateIntake``), tracking error and
    controller compute time."""

    def __init__(self, joint_names):
        super().__init__('bringup_monitor')
        node = self.node
        self.intake = JointStateIntake(joint_names)
        self.states = []        # (receipt wall time, stamp s, positions in state_names order)
        self.errors = []        # (receipt wall time, stamp s, q_ref - q in the model's joint order)
        self.compute_us = []
        self.state_names = list(joint_names)
        # Deep queues: a lockstep loop runs as fast as the simulator and the controller go, not this process.
        node.create_subscription(JointState, 'joint_states', self._on_state, 1000)
        node.create_subscription(JointState, 'computed_torque_controller/tracking_error', self._on_error, 1000)
        node.create_subscription(Float64, 'computed_torque_controller/compute_time_us',
                                 lambda msg: self.compute_us.append(msg.data), 100)

    @staticmethod
    def _stamp(msg):
        return msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec

    def _on_state(self, msg):
        stamp = self._stamp(msg)
        order = self.intake.take(list(msg.name), stamp)
        if order is not None:
            self.states.append((time.monotonic(), stamp, np.array(msg.position)[order]))

    def _on_error(self, msg):
        self.errors.append((time.monotonic(), self._stamp(msg), np.array(msg.position)))


class BaseRecorder(InProcessNode):
    """In-process monitor node of a robot on the ground: the robot's joint-state stamps (``JointStateIntake``), the
    base pose from the simulator's odometry, the controller's commands and compute time (``controller``: its node
    name, or None)."""

    def __init__(self, robot, joint_names, controller):
        super().__init__('bringup_monitor')
        from nav_msgs.msg import Odometry   # only for robots with a floating base
        self.robot = robot
        self.intake = JointStateIntake(joint_names)
        self.states = []        # (receipt wall time, stamp s)
        self.odom = []          # (receipt wall time, stamp s, [x, y, z, qx, qy, qz, qw])
        self.commands = []      # (receipt wall time, stamp s of the joint state it answers, or None)
        self.compute_us = []
        node = self.node
        node.create_subscription(JointState, 'joint_states', lambda msg: take_state(self, msg), 1000)
        node.create_subscription(Odometry, 'simulator/odom', self._on_odom, 1000)
        node.create_subscription(Float64MultiArray, 'effort_controller/commands', self._on_command, 1000)
        if controller:
            node.create_subscription(Float64, f'{controller}/compute_time_us',
                                     lambda msg: self.compute_us.append(msg.data), 100)

    def _on_command(self, msg):
        answered = answered_state(msg)
        self.commands.append((time.monotonic(), None if answered is None else 1e-9 * answered))

    def _on_odom(self, msg):
        p, o = msg.pose.pose.position, msg.pose.pose.orientation
        self.odom.append((time.monotonic(), Recorder._stamp(msg), [p.x, p.y, p.z, o.x, o.y, o.z, o.w]))

    def sim_time_since(self, first):
        """Sim time from the joint state with index `first` to the newest one."""
        return self.states[-1][1] - self.states[first][1] if len(self.states) > first + 1 else 0.0


class CartesianRecorder(InProcessNode):
    """In-process monitor node of the Cartesian loop: joint-state stamps, the end effector's pose and its error from
    the Cartesian controller, and its compute time."""

    def __init__(self, joint_names):
        super().__init__('bringup_monitor')
        from geometry_msgs.msg import PoseStamped, TwistStamped
        self.intake = JointStateIntake(joint_names)
        self.states = []        # (receipt wall time, stamp s)
        self.poses = {}         # stamp s -> [x, y, z]
        self.errors = []        # (receipt wall time, stamp s, [rotation vector; position error])
        self.compute_us = []
        node = self.node
        node.create_subscription(JointState, 'joint_states', lambda msg: take_state(self, msg), 1000)
        node.create_subscription(PoseStamped, 'cartesian_controller/current_pose', self._on_pose, 1000)
        node.create_subscription(TwistStamped, 'cartesian_controller/pose_error', self._on_error, 1000)
        node.create_subscription(Float64, 'cartesian_controller/compute_time_us',
                                 lambda msg: self.compute_us.append(msg.data), 1000)

    def _on_pose(self, msg):
        p = msg.pose.position
        self.poses[Recorder._stamp(msg)] = [p.x, p.y, p.z]

    def _on_error(self, msg):
        a, v = msg.twist.angular, msg.twist.linear
        self.errors.append((time.monotonic(), Recorder._stamp(msg), [a.x, a.y, a.z, v.x, v.y, v.z]))

    def sim_time_since(self, first):
        """Sim time from the joint state with index `first` to the newest one."""
        return self.states[-1][1] - self.states[first][1] if len(self.states) > first + 1 else 0.0


def take_state(recorder, msg):
    """Append (receipt wall time, stamp s) of a joint state to ``recorder.states`` when its intake takes it."""
    stamp = Recorder._stamp(msg)
    if recorder.intake.take(list(msg.name), stamp) is not None:
        recorder.states.append((time.monotonic(), stamp))
