"""What a bringup run says first when it went wrong: a robot that fell, a simulation that stopped (issue 27)."""
from types import SimpleNamespace

import numpy as np

from robot_dynamics_ros.commands import legged_bringup
from robot_dynamics_ros.commands.node_runs import JointStateIntake, simulation_stopped

# A simulator log as rclpy writes it (RCUTILS_CONSOLE_OUTPUT_FORMAT's default '[{severity}] [{time}] [{name}]: ...').
STOPPED_LOG = """[INFO] [1764090000.100000000] [simulator]: dynamics: table kernels
[WARN] [1764090003.500000000] [simulator]: simulation step failed: the contact solver reported DualInfeasible; the state is kept (call ~/reset)
[INFO] [1764090009.000000000] [simulator]: stopping (SIGINT): 3500 steps (1000 steps/s, real-time factor 1.00)
"""


def base_run(final_tilt_deg, seconds=5.0):
    """A recorder of a legged run at 1 kHz whose base turns about x from upright to ``final_tilt_deg``."""
    stamps = np.arange(0.0, seconds, 1e-3)
    half = np.radians(np.linspace(0.0, final_tilt_deg, stamps.size)) / 2
    odom = [(t, t, [0.0, 0.0, 0.3, np.sin(a), 0.0, 0.0, np.cos(a)]) for t, a in zip(stamps, half)]
    return SimpleNamespace(robot='quadruped', odom=odom, states=[(t, t) for t in stamps], commands=[], compute_us=[],
                           intake=JointStateIntake([]))


def test_a_robot_that_fell_is_said_first():
    result = legged_bringup.summary(base_run(90.0), 0.0, 5.0, '', floating=True)
    lines = legged_bringup.report(result, 5.0)
    assert result['fell'] and lines[0] == 'the robot fell: its base tilted 90 deg (more than 45)', lines
    standing = legged_bringup.summary(base_run(10.0), 0.0, 5.0, '', floating=True)
    assert not standing['fell'] and legged_bringup.report(standing, 5.0)[0].startswith('ran 5.00 s')


def test_a_simulation_that_stopped_is_said_first_with_the_simulators_reason():
    assert simulation_stopped(STOPPED_LOG) == ('simulation step failed: the contact solver reported DualInfeasible; '
                                               'the state is kept (call ~/reset)')
    assert simulation_stopped(STOPPED_LOG.replace('step failed', 'step went well')) is None
    result = legged_bringup.summary(base_run(0.0, seconds=3.5), 0.0, 10.0, STOPPED_LOG, floating=True)
    assert legged_bringup.report(result, 5.0)[0].startswith('the simulation stopped: simulation step failed: the '
                                                            'contact solver reported DualInfeasible')
