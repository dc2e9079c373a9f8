"""The simulator node with mimic joints (test_mimic.py has the model and the algorithms): /joint_states names every
joint, mimic joints after the joints; a ~/joint_commands naming a mimic joint is refused with a reason; a command
to the master closes both fingers."""
import numpy as np
from sensor_msgs.msg import JointState

from ros_helpers import ros_domain, start  # noqa: F401  (fixtures)
from test_mimic import GRIPPER, gripper_positions

from robot_dynamics_ros import load_urdf


def test_simulator_node_publishes_mimic_joints_and_refuses_their_commands(ros_domain, start):
    _, probe = ros_domain
    states = []
    probe.node.create_subscription(JointState, 'joint_states', states.append, 100)
    commands = probe.node.create_publisher(JointState, 'simulator/joint_commands', 10)
    sim = start('simulator', params=[('urdf_file', GRIPPER), ('publish_rate', 100.0)])   # coupled by default
    assert probe.spin_until(lambda: states, 60.0), sim.log()
    model = load_urdf(GRIPPER, mimic=True)
    assert list(states[-1].name) == list(model.joint_names) + ['right_finger', 'right_tip', 'counterweight']

    def refused():
        commands.publish(JointState(name=['right_finger'], position=[-0.02]))
        probe.spin_for(0.05)
        return "joints ['right_finger'] are mimic joints" in sim.log()
    assert probe.spin_until(refused, 30.0), sim.log()

    def closed():
        commands.publish(JointState(name=['left_finger'], position=[0.03]))
        probe.spin_for(0.05)
        last = dict(zip(states[-1].name, states[-1].position))
        return abs(last['left_finger'] - 0.03) < 1e-3 and abs(last['right_finger'] + 0.03) < 1e-3
    assert probe.spin_until(closed, 30.0), sim.log()
    last = states[-1]
    positions = dict(zip(last.name, last.position))
    expected = gripper_positions([positions[name] for name in model.joint_names])
    assert np.abs(np.array([positions[name] for name in model.all_joint_names]) - expected).max() <= 1e-12
    assert sim.alive()
