"""The controller node's compiled per-update path (control.ControlStep) against its NumPy path, in process: two
nodes get the same joint states, trajectories and parameter changes (one with the compiled path switched off),
and must publish the same commands and tracking errors and reject the same states."""
import math
import time

import numpy as np
import pytest

from conftest import BUNDLED_URDF
from ros_helpers import domain_id, in_process_ros

from rclpy.parameter import Parameter  # noqa: E402  (ros_helpers skips the module without rclpy)
from rclpy.serialization import serialize_message  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

from robot_dynamics_ros import fast, load_urdf  # noqa: E402
from robot_dynamics_ros.nodes.computed_torque_controller import ControllerNode  # noqa: E402


MODEL = load_urdf(BUNDLED_URDF)
NAMES = list(MODEL.joint_names)
JOINTS = NAMES[3:] + NAMES[:3]   # the command order: not the model's


class Recorder:
    """Stands in for a publisher: keeps a copy of what each message carries."""

    def __init__(self, fields):
        self.fields, self.messages = fields, []

    def publish(self, msg):
        self.messages.append([np.array(getattr(msg, field), dtype=float) for field in self.fields])


def recorded_node(compiled):
    node = ControllerNode()
    assert (node.step is not None) == (fast.BACKEND == 'numba')
    if not compiled:
        node.step = None
    node.command_pub = node.answers.publisher = Recorder(['data'])   # (StateAnswers publishes the commands)
    node.error_pub = Recorder(['position', 'velocity'])
    node.compute_time_pub = Recorder(['data'])
    node.listened = (True, True)
    node.numpy_updates = 0
    numpy_update = node._numpy_update

    def counted(*args):
        node.numpy_updates += 1
        return numpy_update(*args)
    node._numpy_update = counted
    return node


def joint_state(k, rng, bad=None):
    """The k-th state (stamp 1 s + k ms), joints in a random order; bad: which field to spoil."""
    q, qd = MODEL.neutral() + 0.2 * rng.normal(size=MODEL.nv), rng.normal(size=MODEL.nv)
    order = rng.permutation(MODEL.nv)
    names, positions, velocities = [NAMES[i] for i in order], list(q[order]), list(qd[order])
    if bad == 'nan':
        positions[2] = math.nan
    elif bad == 'implausible':
        velocities[1] = 1e155
    elif bad == 'unknown':
        names[0] = 'elbow'
    elif bad == 'short':
        velocities = velocities[:-1]
    msg = JointState(name=names, position=positions, velocity=velocities)
    msg.header.stamp.sec, msg.header.stamp.nanosec = 1, k * 1_000_000
    return msg


def trajectory(rng):
    msg = JointTrajectory(joint_names=NAMES)
    for seconds in (0.005, 0.012, 0.02):
        msg.points.append(JointTrajectoryPoint(positions=list(MODEL.neutral() + 0.3 * rng.normal(size=MODEL.nv)),
                                               velocities=list(rng.normal(size=MODEL.nv))))
        msg.points[-1].time_from_start.nanosec = int(seconds * 1e9)
    return serialize_message(msg)


@pytest.fixture
def nodes():
    args = ['--ros-args', '-p', f'urdf_file:={BUNDLED_URDF}', '-p', f'joints:=[{",".join(JOINTS)}]',
            '-p', 'state_timeout:=1000.0']
    with in_process_ros(args, domain_id(__name__)):
        pair = [recorded_node(compiled=True), recorded_node(compiled=False)]
        yield pair
        for node in pair:
            node.trajectories.shutdown()
            node.destroy_node()


def test_compiled_and_numpy_paths_command_alike(nodes):
    if fast.BACKEND != 'numba':
        pytest.skip('the compiled path needs numba')
    compiled, numpy_path = nodes
    rng = np.random.default_rng(8)
    bad_states = {3: 'nan', 5: 'implausible', 9: 'unknown', 14: 'short', 30: 'nan'}
    changes = {20: [Parameter('kp', value=[50.0, 60.0, 70.0, 80.0, 90.0, 100.0, 110.0])],
               # kd 20 N m s/rad would make the wrist's sampled loop unstable in pd_gravity mode (refused): 5 first
               26: [Parameter('kd', value=5.0), Parameter('mode', value='pd_gravity'),
                    Parameter('friction_compensation', value=True)],
               32: [Parameter('mode', value='gravity_compensation')]}
    raw = trajectory(rng)
    for k in range(40):
        msg = joint_state(k, rng, bad_states.get(k))
        if k == 7:   # a trajectory stamped zero: it starts at the next joint state, after the worker built it
            for node in nodes:
                node._on_trajectory(raw)
            deadline = time.monotonic() + 30.0
            while any(node.trajectories.incoming is None for node in nodes) and time.monotonic() < deadline:
                time.sleep(0.01)
            assert all(node.trajectories.incoming is not None for node in nodes), 'the worker built no reference'
        for node in nodes:
            if k in changes:
                assert all(result.successful for result in node.set_parameters(changes[k]))
            node._on_joint_state(msg)
    assert compiled.rejected == numpy_path.rejected == len(bad_states)
    assert compiled.commands == numpy_path.commands == 40 - len(bad_states)
    # The NumPy path served the compiled node's first state and the states it refused, no others.
    assert compiled.numpy_updates == 1 + len(bad_states)
    assert numpy_path.numpy_updates == 40
    for name in ('command_pub', 'error_pub'):
        ours, theirs = getattr(compiled, name).messages, getattr(numpy_path, name).messages
        assert len(ours) == len(theirs) == 40 - len(bad_states)
        for fields, expected in zip(ours, theirs):
            for value, reference_value in zip(fields, expected):
                scale = max(1.0, np.abs(reference_value).max())
                np.testing.assert_allclose(value, reference_value, rtol=0, atol=1e-12 * scale, err_msg=name)
    assert compiled.state_ns == numpy_path.state_ns == 1_000_000_000 + 39 * 1_000_000
    assert compiled.reference is not None and compiled.reference.duration == pytest.approx(0.02)
    assert len(compiled.compute_time_pub.messages) == 40 - len(bad_states)
