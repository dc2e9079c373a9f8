"""Hostile inputs to the simulator and the model readers (issue 37): an external wrench beyond any push, files that
are not meshes or leave their package, inputs too large to use as they are, an SRDF orientation that is no rotation.
Each is refused with a reason, skipped with a warning, or reduced with a note; nothing crashes later."""
import os
import types
import warnings
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from conftest import ROOT, assert_one_line_error, cli
from robot_dynamics_ros import load_urdf
from robot_dynamics_ros.model.collision import contact_points_from_urdf
from robot_dynamics_ros.model.urdf import URDFWarning
from robot_dynamics_ros.simulation.simulator import Simulator

QUADRUPED = os.path.join(ROOT, 'urdf', 'quadruped.urdf')
STAND = np.tile([0.0, 0.8, -1.5], 4)
G = 9.81


def standing_quadruped():
    pytest.importorskip('clarabel')
    from robot_dynamics_ros.simulation.ground_contact import Ground
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', URDFWarning)
        model = load_urdf(QUADRUPED, root_joint='floating')
        points = contact_points_from_urdf(QUADRUPED)
    return Simulator(model, 1e-3, ground=Ground(0.0, 0.8), contact_points=points, initial_positions=STAND)


def quadruped_mass():
    """The sum of the URDF's <mass> values, read from the file (not from the model)."""
    return sum(float(mass.get('value')) for mass in ET.parse(QUADRUPED).getroot().iter('mass'))


# 1. External wrenches: bounded as pushes are, refused beyond, logged at most once per throttle period.

def test_a_wrench_beyond_ten_g_on_the_mass_is_refused_and_the_run_goes_on():
    """1e30 N on the trunk made the contact solver fail at the first step (Clarabel: DualInfeasible); 1e6 N failed
    in process after 20 steps. Both are refused, as a push is, and the held wrench stays; the quadruped, held in its
    stance by a PD law, keeps finite states and stands. The bound, 10 g on the URDF's mass (20.8 kg: 2040 N), holds
    for the force and (at a 1 m lever) for the torque, just below it accepted."""
    sim = standing_quadruped()
    bound = 10 * G * quadruped_mass()
    sim.apply_wrench('trunk', [0.0, 0.0, -20.0])
    held = sim.held_wrench
    for force, torque in (([1e30, 0.0, 1e30], [0.0, 0.0, 0.0]), ([1e6, 0.0, 0.0], [0.0, 0.0, 0.0]),
                          ([1.01 * bound, 0.0, 0.0], [0.0, 0.0, 0.0]), ([0.0, 0.0, 0.0], [0.0, 1.01 * bound, 0.0])):
        with pytest.raises(ValueError, match="wrench: .*10 g on the robot"):
            sim.apply_wrench('trunk', force, torque)
        assert sim.held_wrench is held
    for _ in range(100):
        sim.set_command(np.concatenate([np.zeros(6), 100.0 * (STAND - sim.q[7:]) - 2.0 * sim.qd[6:]]))
        sim.step()
        assert np.all(np.isfinite(sim.q)) and np.all(np.isfinite(sim.qd))
    assert np.max(np.abs(sim.qd)) < 1.0   # standing, not thrown: a 20 N load on a 20.8 kg robot
    sim.apply_wrench('trunk', [0.99 * bound, 0.0, 0.0], [0.0, 0.0, 0.99 * bound])
    assert sim.held_wrench[1] == pytest.approx([0.0, 0.0, 0.99 * bound, 0.99 * bound, 0.0, 0.0])


def test_a_stream_of_wrench_messages_is_logged_once_per_throttle_period():
    """The node's ~/wrench callback logged an INFO line per accepted wrench (5,018 lines in 5 s). 1,000 accepted
    wrenches with changing values are one line, 1,000 refused ones one warning, within one throttle period."""
    node = pytest.importorskip('robot_dynamics_ros.nodes.simulator')
    from geometry_msgs.msg import WrenchStamped
    from robot_dynamics_ros.nodes.common import Throttle

    class Logger:
        def __init__(self):
            self.lines = []

        def info(self, line):
            self.lines.append(('info', line))

        def warning(self, line):
            self.lines.append(('warning', line))
    logger = Logger()
    box = load_urdf(os.path.join(ROOT, 'test', 'urdf', 'box.urdf'), root_joint='floating')
    fake = types.SimpleNamespace(sim=Simulator(box, 1e-3), throttle=Throttle(logger, period=60.0),
                                 get_logger=lambda: logger)
    msg = WrenchStamped()
    msg.header.frame_id = 'box'
    for k in range(1000):
        msg.wrench.force.x = 1.0 + 0.01 * k
        node.SimulatorNode._on_wrench(fake, msg)
    assert fake.sim.held_wrench[1][3] == pytest.approx(1.0 + 0.01 * 999)   # every one was applied
    for k in range(1000):
        msg.wrench.force.x = 1e30 * (1 + k)
        node.SimulatorNode._on_wrench(fake, msg)
    assert fake.sim.held_wrench[1][3] == pytest.approx(1.0 + 0.01 * 999)   # none of these
    assert [kind for kind, _ in logger.lines] == ['info', 'warning'], logger.lines
    assert 'rejected wrench' in logger.lines[1][1] and '10 g' in logger.lines[1][1]
