"""Robots as their packages ship them (example-robot-data: URDF, SRDF, meshes), over DDS: `bringup --srdf` stands Go1
(sphere feet) and Solo12 (mesh feet) in their SRDF 'standing' posture at the base height where Pinocchio's forward
kinematics of that posture puts their feet on the ground; a robot spawned resting on a link that is not a foot is
warned about. The legged controller reads `contact_points` as the simulator does, and with `contact_topics`
waits for a foot to report contact before it commands."""
import json

import pytest

from conftest import ROOT, cli, example_robot_data
from oracle import standing_height
from ros_helpers import domain_id, ros_domain, start  # noqa: F401  (fixtures)
from test_mesh_contacts import SHARE, uncovered

from robot_dynamics_ros import load_srdf, load_urdf
from robot_dynamics_ros.model.collision import contact_points_from_urdf
from robot_dynamics_ros.model.srdf import stance_configuration
from robot_dynamics_ros.resources import legged_parameter_files

pytest.importorskip('clarabel')
pytest.importorskip('trimesh')
STARTUP = 300.0   # s: the first start of a robot compiles its contact kernels
SETTLED = 2e-3    # m: a standing robot's base height, as test_legged_loop.py holds the quadruped and ANYmal
ROBOTS = {   # robot -> URDF, SRDF, bringup arguments
    'go1': ('go1_description/urdf/go1.urdf', 'go1_description/srdf/go1.srdf', []),
    'solo12': ('solo_description/robots/solo12.urdf', 'solo_description/srdf/solo.srdf',
               ['--root-joint', 'floating']),   # Solo's SRDF has no virtual_joint
}


@pytest.mark.parametrize('robot', sorted(ROBOTS))
def test_bringup_stands_the_robot_in_its_srdf_stance_at_pinocchios_height(robot, tmp_path):
    urdf, srdf_path = (example_robot_data(path) for path in ROBOTS[robot][:2])
    report = tmp_path / 'report.json'
    # lockstep: the loop runs as slowly as the machine needs (Go1 has 404 contact points, a step costs ms)
    result = cli('bringup', '--urdf', urdf, '--srdf', srdf_path, *ROBOTS[robot][2], '--duration', '3', '--isolated',
                 '--domain-id', str(domain_id(__name__ + ' bringup')),
                 '--sync', 'lockstep',
                 '--startup-timeout', str(STARTUP), '--report', str(report))
    assert result.returncode == 0, result.stdout + result.stderr
    summary = json.loads(report.read_text())
    srdf = load_srdf(srdf_path)
    height, meshes = standing_height(urdf, srdf_path, 'standing', [SHARE()], srdf.feet)
    model = load_urdf(urdf, root_joint='floating')
    # mesh feet: our contact points are some of the hull's vertices, at most this much above its lowest point
    slack = uncovered(model, stance_configuration(model, srdf)[1], contact_points_from_urdf(urdf), srdf.feet,
                      meshes) if meshes else 0.0
    final = summary['base_height']['final']
    assert height - slack - SETTLED <= final <= height + SETTLED, (final, height, slack)
    assert summary['base_height']['max'] - summary['base_height']['min'] < SETTLED
    assert summary['base_tilt_deg']['max'] < 0.5
    assert summary['exit_codes'] == {'simulator': 0, 'legged_controller': 0}


QUADRUPED = f'{ROOT}/urdf/quadruped.urdf'


def test_a_robot_spawned_resting_on_a_link_that_is_not_a_foot_is_warned_about(ros_domain, start):  # noqa: F811
    """The bundled quadruped with its legs folded up spawns on its trunk (its feet, the leaf links, are the calves);
    standing, it spawns on its feet and nothing is said."""
    folded = start('simulator', params=[('urdf_file', QUADRUPED), ('initial_positions', str([0.0, 0.0, -2.6] * 4))],
                   extra_args=quadruped_args())
    assert folded.wait_for_log('simulating', STARTUP), folded.log()
    assert "'quadruped' spawns resting on ['trunk'], not on its feet" in folded.log()
    assert folded.stop() == 0
    standing = start('simulator', params=[('urdf_file', QUADRUPED), ('initial_positions', str([0.0, 0.6, -1.2] * 4))],
                     extra_args=quadruped_args())
    assert standing.wait_for_log('simulating', STARTUP), standing.log()
    assert 'spawns resting on' not in standing.log()
    assert standing.stop() == 0


def quadruped_args():
    return [arg for file in legged_parameter_files(QUADRUPED) for arg in ('--params-file', file)]


def test_with_contact_topics_the_controller_waits_for_a_foot_to_report_contact(ros_domain, start):  # noqa: F811
    """The simulator reports the forces of a robot at rest on the ground before its first step, so the controller's
    first update already has its four feet in contact. With a threshold above the robot's weight no foot ever
    reports contact: the controller never commands and the simulator, waiting for a first command, never steps."""
    simulator = start('simulator', params=[('urdf_file', QUADRUPED)], extra_args=quadruped_args())
    weight = load_urdf(QUADRUPED).inertia[:, 5, 5].sum() * 9.81
    controller_args = quadruped_args() + ['-r', 'odom:=/simulator/odom']
    waiting = start('legged_controller', params=[('urdf_file', QUADRUPED), ('contact_topics', '/simulator/contact/'),
                                                 ('contact_force', 1.5 * weight)], extra_args=controller_args)
    assert waiting.wait_for_log('no foot has reported contact yet', STARTUP), waiting.log()
    assert 'standing' not in waiting.log() and 'first command received' not in simulator.log()
    assert waiting.stop() == 0
    controller = start('legged_controller', extra_args=controller_args,
                       params=[('urdf_file', QUADRUPED), ('contact_topics', '/simulator/contact/')])
    assert controller.wait_for_log('standing: 4 feet in contact', STARTUP), controller.log()
    assert controller.stop() == 0 and simulator.stop() == 0


def test_the_legged_controller_reads_contact_points(ros_domain, start):  # noqa: F811
    """The parameter the simulator takes: a malformed entry stops the controller too (it used to be ignored), and
    points given there are its feet's (the quadruped's URDF puts its contact spheres on the calves)."""
    bad = start('legged_controller', params=[('urdf_file', QUADRUPED), ('contact_points', "['FL_calf 0 0']")])
    assert bad.process.wait(STARTUP) == 1
    assert "parameter 'contact_points': 'FL_calf 0 0' is not 'link x y z radius'" in bad.log()
    assert 'FL_hip' not in {p.link for p in contact_points_from_urdf(QUADRUPED)}
    points = [f"'{leg}_hip 0 0 0 0.01'" for leg in ('FL', 'FR', 'RL', 'RR')]
    given = start('legged_controller', params=[('urdf_file', QUADRUPED), ('contact_points', f"[{', '.join(points)}]"),
                                               ('feet', "['FL_hip', 'FR_hip', 'RL_hip', 'RR_hip']")])
    assert given.wait_for_log("feet ['FL_hip', 'FR_hip', 'RL_hip', 'RR_hip']", STARTUP), given.log()
    assert given.stop() == 0

