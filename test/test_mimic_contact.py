"""Ground contact on a model with coupled mimic joints (issue 41): the contact rows are the tree's J times the
coupling G, so the Delassus matrix is J G M^-1 G^T J^T on the reduced coordinates and the same solver takes it. And
the commands that do not take coupled joints say so, naming --no-mimic."""
import os

import numpy as np
import pytest
import yaml

from conftest import TEST_DIR, assert_one_line_error, cli
from robot_dynamics_ros import load_urdf
from robot_dynamics_ros.model.collision import contact_points_from_urdf
from robot_dynamics_ros.simulation.simulator import Simulator

pytest.importorskip('clarabel')
from robot_dynamics_ros.simulation.ground_contact import Ground  # noqa: E402  (needs clarabel)

DT = 1e-3
G = 9.81
# A palm with two fingers that swing out about x, mirror images of each other: right_finger mimics left_finger with
# multiplier -1. Each finger stands on two tip spheres.
FINGER = '''<link name="{side}_finger">
    <inertial><origin xyz="0 0 -0.03"/><mass value="0.1"/><inertia ixx="3e-5" iyy="3e-5" izz="1e-5" ixy="0" ixz="0" iyz="0"/></inertial>
    <collision><origin xyz="0.04 0 -0.06"/><geometry><sphere radius="0.01"/></geometry></collision>
    <collision><origin xyz="-0.04 0 -0.06"/><geometry><sphere radius="0.01"/></geometry></collision></link>'''
GRIPPER = f'''<robot name="gripper"><link name="palm">
    <inertial><mass value="0.8"/><inertia ixx="4e-4" iyy="1e-3" izz="1.2e-3" ixy="0" ixz="0" iyz="0"/></inertial></link>
  {FINGER.format(side='left')}
  {FINGER.format(side='right')}
  <joint name="left_finger" type="revolute"><parent link="palm"/><child link="left_finger"/>
    <origin xyz="0 0.02 -0.02"/><axis xyz="1 0 0"/><limit lower="0" upper="0.6" effort="20" velocity="100"/>
    <dynamics damping="0.01" friction="0.005"/></joint>
  <joint name="right_finger" type="revolute"><parent link="palm"/><child link="right_finger"/>
    <origin xyz="0 -0.02 -0.02"/><axis xyz="1 0 0"/><limit lower="-0.6" upper="0" effort="20" velocity="100"/>
    <dynamics damping="0.01" friction="0.005"/><mimic joint="left_finger" multiplier="-1"/></joint>
</robot>'''
MASS = 0.8 + 2 * 0.1


def simulators(stages=None):
    """The gripper with its fingers coupled, and the same gripper with every joint free (mimic=False), both standing on
    the ground with the fingers 0.3 rad apart (``stages``: the simulator's)."""
    points = contact_points_from_urdf(GRIPPER)
    coupled = Simulator(load_urdf(GRIPPER, root_joint='floating', mimic=True), DT, ground=Ground(0.0, 0.5),
                        contact_points=points, initial_positions=[0.3], stages=stages)
    with pytest.warns(UserWarning, match='independent'):
        tree = load_urdf(GRIPPER, root_joint='floating', mimic=False)
    free = Simulator(tree, DT, ground=Ground(0.0, 0.5), contact_points=points, initial_positions=[0.3, -0.3],
                     stages=stages)
    return coupled, free


def test_coupled_gripper_on_the_ground_carries_its_weight_and_moves_as_the_mirrored_free_one():
    """Standing, the normal forces carry the weight; closed by an effort on the master, the coupled gripper moves as
    the free one under mirrored efforts (by symmetry the free one's fingers stay mirror images, so both are the same
    mechanism: the master's effort is the virtual work of the two, 2 e), while its tips slide on the ground."""
    coupled, free = simulators()
    assert coupled.model.nv == free.model.nv - 1 == 7
    for _ in range(200):
        coupled.step()
        free.step()
    # at rest the ground carries the weight: vertical momentum balance, to the rounding of the solve
    np.testing.assert_allclose(coupled.contact_forces[:, 2].sum(), MASS * G, rtol=1e-9)
    np.testing.assert_allclose(np.abs(coupled.qd).max(), 0.0, atol=1e-9)
    effort = -0.4   # N m on each finger: closes them, the tips sliding inwards on the ground
    worst = 0.0
    for _ in range(300):
        coupled.set_command(np.r_[np.zeros(6), 2 * effort])
        free.set_command(np.r_[np.zeros(6), effort, -effort])
        coupled.step()
        free.step()
        # the free gripper stays mirrored, and the coupled one moves as it does
        worst = max(worst, abs(free.q[7] + free.q[8]), abs(coupled.q[7] - free.q[7]), abs(coupled.q[2] - free.q[2]))
    assert coupled.q[7] < 0.25   # it did close
    assert worst < 1e-6   # rad and m: the solves' shifts converge to FIXED_POINT_TOLERANCE (1e-6 m/s), far below


def test_coupled_gripper_placed_into_the_ground_is_projected_out():
    """0.5 mm into the ground (less than LIFT_DEPTH: the smallest displacement in the metric M, on the rows J G) the
    step starts from a configuration with every tip on the ground, the fingers still coupled."""
    coupled, _ = simulators()
    q = coupled.q.copy()
    q[2] -= 5e-4
    coupled.reset(q)
    assert coupled.contact.lowest_height(coupled.q) < -4e-4
    coupled.step()
    assert coupled.contact.lowest_height(coupled.q) > -1e-6   # the step's linearisation leaves nanometres
    positions, _ = coupled.model.joint_positions(coupled.q, coupled.qd)
    assert positions[1] == -positions[0]   # right_finger = -left_finger


def test_the_coupled_grippers_compiled_step_equals_the_plain_one():
    """A coupled model's step: the kinematics and RNEA on the tree at q_tree = Gq q + q_offset, M = G^T M_tree G
    factorised densely, the rows J G. From 0.5 mm in the ground (projected out on the rows J_n G) the gripper opens and
    closes its fingers under 0.3 N m at 1 Hz, the tips sliding (2 s): each step, from the plain-Python reference's
    state, leaves the same motion, generalized constraint effort and net contact force compiled as plain, to
    rounding. The four tips' forces one by one are not unique: a balanced pair of tangential forces on the two
    fingers squeezes them against each other through the coupling and moves nothing, and a tie-break (the impulses
    closest to the last solve's, through the fixed point's iterates) may pick another such pair on rounding."""
    pytest.importorskip('numba')
    from test_contact_step import synchronise
    compiled, plain = simulators(stages='numba')[0], simulators(stages='python')[0]
    assert not compiled.contact_step.plain and plain.contact_step.plain
    for sim in (compiled, plain):
        sim.q[2] -= 5e-4
    for k in range(2000):
        for sim in (compiled, plain):
            sim.set_command(np.r_[np.zeros(6), 0.3 * np.sin(2 * np.pi * k * DT)])
            sim.step()
        for name in ('q', 'qd'):
            np.testing.assert_allclose(getattr(compiled, name), getattr(plain, name), rtol=0, atol=1e-12,
                                       err_msg=f'{name} at step {k}')
        for name, ours, theirs in (('constraint effort', compiled.constraint_effort, plain.constraint_effort),
                                   ('net contact force', compiled.contact_forces.sum(0), plain.contact_forces.sum(0))):
            np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-12 * max(1.0, np.abs(theirs).max()),
                                       err_msg=f'{name} at step {k}')
        synchronise(compiled, plain)
    assert compiled.contact_step.steps == 2000
    assert compiled.contact.solves['bounded'] > 0   # the tips slid: some steps took the bounded sweeps


def test_commands_name_no_mimic_where_coupled_joints_are_not_taken(tmp_path):
    """bringup's legged controller does not take coupled mimic joints, and record refuses a trajectory that names
    one (excited with --no-mimic): each one line, exit 2, naming --no-mimic."""
    arm = os.path.join(TEST_DIR, 'urdf', 'mimic_gripper.urdf')
    assert_one_line_error(cli('bringup', '--urdf', arm, '--root-joint', 'floating'),
                          'legged controller', '--no-mimic')
    pytest.importorskip('rclpy')
    pytest.importorskip('rosbags')
    names = ['shoulder', 'elbow', 'wrist', 'left_finger', 'right_finger', 'right_tip', 'counterweight']
    trajectory = tmp_path / 'traj.yaml'
    trajectory.write_text(yaml.safe_dump({'trajectory_publisher': {'ros__parameters': {
        'joints': names, 'waypoint_times': [0.0, 1.0], 'waypoints': [0.0] * 2 * len(names)}}}))
    assert_one_line_error(cli('record', str(trajectory), '-o', str(tmp_path / 'rec'), '--urdf', arm),
                          "mimic joints ['counterweight', 'right_finger', 'right_tip']", '--no-mimic')
