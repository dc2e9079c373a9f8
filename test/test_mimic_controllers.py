"""The computed-torque and Cartesian controllers on models with coupled mimic joints (issue 41): their laws on the
independent coordinates against Pinocchio 4 ``mimic=True`` (Panda with its hand) and against the tree's dynamics
projected with a joint map written by hand (test_mimic.py's gripper, a mimic of a mimic and one across branches,
which Pinocchio refuses); joint states that name the mimic joints, and trajectories that name one."""
import numpy as np
import pytest

from conftest import example_robot_data
from test_mimic import GRIPPER, PUBLIC, gripper_positions, gripper_velocities, pinocchio_state, quietly

from robot_dynamics_ros import load_urdf
from robot_dynamics_ros.algorithms import frame_jacobian, rnea
from robot_dynamics_ros.control.cartesian import (CartesianController, EndEffector, default_end_effector,
                                                  dexterous_posture, speed_limits)
from robot_dynamics_ros.control.computed_torque import ComputedTorqueController, ControlStep, check_gains
from robot_dynamics_ros.control.joint_states import JointStateMapper, coupled_mimic_joints, plausibility_bounds
from robot_dynamics_ros.control.references import TrajectoryReference

KP, KD = 100.0, 20.0
STATES = 3
# The gripper's joint map written from its URDF (test_mimic.gripper_velocities is linear): column k moves every joint
# as independent coordinate k does.
GRIPPER_MAP = np.column_stack([gripper_velocities(e) for e in np.eye(4)])


@pytest.fixture(scope='module')
def panda():
    return load_urdf(example_robot_data(PUBLIC['panda'][0]), mimic=True)


@pytest.fixture(scope='module')
def gripper():
    return load_urdf(GRIPPER, mimic=True)


def tracking_state(model, rng):
    """(q, qd, q_ref, qd_ref, qdd_ref): a state and a reference near it (efforts well within Panda's limits)."""
    q = model.middle_of_limits() + 0.3 * rng.uniform(-1, 1, model.nv) * np.minimum(model.upper - model.lower, 2.0)
    qd = 0.2 * rng.normal(size=model.nv)
    return q, qd, q + 0.01 * rng.normal(size=model.nv), qd + 0.05 * rng.normal(size=model.nv), rng.normal(size=model.nv)


def test_computed_torque_on_panda_with_hand_agrees_with_pinocchio_mimic(panda):
    """tau = RNEA(q, qd, qdd_ref + Kd (qd_ref - qd) + Kp (q_ref - q)) of the coupled model (8 coordinates: the finger
    pair one) equal to Pinocchio 4's RNEA with mimic=True, in the NumPy path and in the compiled ControlStep."""
    pin = pytest.importorskip('pinocchio')
    oracle = pin.buildModelFromUrdf(example_robot_data(PUBLIC['panda'][0]), mimic=True)
    data, rng = oracle.createData(), np.random.default_rng(7)
    assert panda.nv == oracle.nv == 8
    for _ in range(STATES):
        q, qd, q_ref, qd_ref, qdd_ref = tracking_state(panda, rng)
        a = qdd_ref + KD * (qd_ref - qd) + KP * (q_ref - q)
        q_pin, (v_pin, a_pin), rows = pinocchio_state(oracle, panda, q, qd, a)
        expected = pin.rnea(oracle, data, q_pin, v_pin, a_pin)[rows]
        assert np.all(np.abs(expected) < panda.effort_limit)   # not clamped: the law itself is compared
        controller = ComputedTorqueController(panda, KP, KD)
        assert np.abs(controller.compute(q, qd, q_ref, qd_ref, qdd_ref) - expected).max() <= 1e-9


def test_control_step_takes_masters_and_skips_mimic_joint_states(panda):
    """A joint state naming every joint (as the simulator with mimic true publishes it): the compiled step and the
    NumPy path read the masters and give the same command; the mimic joint's entry is no input (another value
    changes nothing); without ``followers`` such a state is refused as naming an unknown joint."""
    rng = np.random.default_rng(8)
    q, qd, q_ref, _, _ = tracking_state(panda, rng)
    names = list(panda.all_joint_names)
    assert names[-1] == 'panda_finger_joint2' and coupled_mimic_joints(panda) == {'panda_finger_joint2':
                                                                                  'panda_finger_joint1'}
    positions, velocities = panda.joint_positions(q, qd)
    mapper = JointStateMapper(panda.joint_names, bounds=plausibility_bounds(panda),
                              followers=coupled_mimic_joints(panda))
    mapped_q, mapped_qd = mapper.map(names, positions, velocities)
    assert np.array_equal(mapped_q, q) and np.array_equal(mapped_qd, qd)
    with pytest.raises(ValueError, match='unknown joints'):
        JointStateMapper(panda.joint_names).map(names, positions, velocities)
    reference = TrajectoryReference.hold(q_ref)
    numpy_controller = ComputedTorqueController(panda, KP, KD)
    expected, _, _, _ = numpy_controller.update(0.0, q, qd, *reference.sample(0.0))
    order = np.arange(panda.nv)[::-1]   # commands in another order than the model's
    for mimic_entry in (positions[-1], positions[-1] + 0.03):
        controller = ComputedTorqueController(panda, KP, KD)
        step = ControlStep(mapper, controller, order)
        shifted = positions.copy()
        shifted[-1] = mimic_entry
        assert step(names, shifted, velocities, reference, 0.0, 0.0)
        assert np.abs(step.command - expected[order]).max() <= 1e-12


def test_computed_torque_on_gripper_is_the_projected_tree_dynamics(gripper):
    """On the gripper (a mimic of a mimic, a mimic across branches): the law's tau equals G^T RNEA_tree at the
    coupled motion, G written by hand from the URDF."""
    tree, rng = quietly(load_urdf, GRIPPER, mimic=False), np.random.default_rng(9)
    controller = ComputedTorqueController(gripper, KP, KD)
    for _ in range(STATES):
        q, qd, q_ref, qd_ref, qdd_ref = tracking_state(gripper, rng)
        a = qdd_ref + KD * (qd_ref - qd) + KP * (q_ref - q)
        expected = GRIPPER_MAP.T @ rnea(tree, gripper_positions(q), gripper_velocities(qd), gripper_velocities(a))
        assert np.all(np.abs(expected) < gripper.effort_limit)
        assert np.abs(controller.compute(q, qd, q_ref, qd_ref, qdd_ref) - expected).max() <= 1e-10


def test_pd_gravity_gain_check_on_a_coupled_model(panda):
    """check_gains in pd_gravity mode needs M^-1 (Jain's operators run on a tree): on the coupled model it inverts
    M = G^T M_tree G, accepts gains the loop can take and names the joints of ones it cannot."""
    check_gains(panda, 'pd_gravity', 1.0, 0.1, 0.0, 1e-3)
    with pytest.raises(ValueError, match='panda_finger_joint1'):   # the light fingers fail first
        check_gains(panda, 'pd_gravity', 1e5, 0.1, 0.0, 1e-3)


def test_trajectory_naming_a_mimic_joint_is_refused_with_a_reason(panda):
    pytest.importorskip('rclpy')
    from robot_dynamics_ros.nodes.joint_trajectories import model_columns
    names = list(panda.all_joint_names)
    fields = {'positions': np.zeros((1, len(names))), 'velocities': None, 'accelerations': None}
    with pytest.raises(ValueError, match=r"\['panda_finger_joint2'\] are mimic joints, which follow their masters "
                                         r"\['panda_finger_joint1'\]"):
        model_columns(names, fields, panda.joint_names, coupled_mimic_joints(panda))
    fields['positions'] = np.zeros((1, panda.nv))
    positions, _, _ = model_columns(list(panda.joint_names), fields, panda.joint_names, coupled_mimic_joints(panda))
    assert positions.shape == (1, panda.nv)


def test_cartesian_quantities_on_panda_with_hand_agree_with_pinocchio_mimic(panda):
    """J, Lambda and the operational-space law's tau on the 8 coupled coordinates: J from Pinocchio's frame Jacobian
    (LOCAL_WORLD_ALIGNED, rows [linear; angular] reordered), M and g from Pinocchio, Lambda = (J M^-1 J^T)^-1 and
    tau = J^T Lambda Kp e + g + (I - J^T Lambda J M^-1) Kn (posture - q) at rest, all dense."""
    pin = pytest.importorskip('pinocchio')
    oracle = pin.buildModelFromUrdf(example_robot_data(PUBLIC['panda'][0]), mimic=True)
    data, rng = oracle.createData(), np.random.default_rng(10)
    link = default_end_effector(panda)
    assert link == 'panda_hand'
    kp, kn, offset = 100.0, 10.0, np.array([0.01, -0.005, 0.008])
    for _ in range(STATES):
        q = tracking_state(panda, rng)[0]
        posture = q + 0.1 * rng.normal(size=panda.nv)
        controller = CartesianController(panda, link, 'operational_space', [kp] * 6, 1.0, kn, posture)
        q_pin, (zero_pin,), rows = pinocchio_state(oracle, panda, q, np.zeros(panda.nv))
        J_pin = pin.computeFrameJacobian(oracle, data, q_pin, oracle.getFrameId(link), pin.LOCAL_WORLD_ALIGNED)
        J = J_pin[[3, 4, 5, 0, 1, 2]][:, rows]
        M = pin.crba(oracle, data, q_pin)
        M = (np.triu(M) + np.triu(M, 1).T)[np.ix_(rows, rows)]
        g = pin.computeGeneralizedGravity(oracle, data, q_pin)[rows]
        M_inverse = np.linalg.inv(M)
        Lambda = np.linalg.inv(J @ M_inverse @ J.T)
        controller.ee.update(q, np.zeros(panda.nv))
        assert np.abs(controller.ee.J - J).max() <= 1e-12
        Lambda_ours, damped = controller.task_inertia(q)
        assert not damped
        assert np.abs(Lambda_ours - Lambda).max() <= 1e-8 * np.abs(Lambda).max()
        R, p = controller.ee.R.copy(), controller.ee.p.copy()
        e = np.concatenate([np.zeros(3), offset])
        tau0 = kn * (posture - q)
        expected = J.T @ Lambda @ (kp * e) + g + tau0 - J.T @ Lambda @ J @ M_inverse @ tau0
        assert np.all(np.abs(expected) < panda.effort_limit)
        tau = controller.update(q, np.zeros(panda.nv), R, p + offset, np.zeros(6))
        assert np.abs(tau - expected).max() <= 1e-8 * np.abs(expected).max()


def test_cartesian_jacobian_on_gripper_fingertip_is_the_projected_tree_jacobian(gripper):
    """A frame that mimic joints move (the right fingertip: right_finger mimics left_finger, right_tip mimics
    right_finger): J = J_tree G with G written by hand, and Jdot qd from finite differences of J qd."""
    tree, rng = quietly(load_urdf, GRIPPER, mimic=False), np.random.default_rng(11)
    ee = EndEffector(gripper, 'right_tip_link')
    assert ee.moving.tolist() == [True, True, True, True]   # the fingertip moves with left_finger too
    for _ in range(STATES):
        q, qd = tracking_state(gripper, rng)[:2]
        ee.update(q, qd)
        J = frame_jacobian(tree, gripper_positions(q), 'right_tip_link', 'local_world_aligned') @ GRIPPER_MAP
        assert np.abs(ee.J - J).max() <= 1e-12
        h = 1e-6
        ahead = EndEffector(gripper, 'right_tip_link')
        ahead.update(q + h * qd, qd)
        behind = EndEffector(gripper, 'right_tip_link')
        behind.update(q - h * qd, qd)
        assert np.abs(ee.Jdot_qd - (ahead.J - behind.J) @ qd / (2 * h)).max() <= 1e-6


def test_speed_limits_and_posture_on_panda_with_hand(panda):
    """The guards of the coupled model are the tree's on the arm (the fingers do not move panda_hand), and the
    start posture is one of its configurations."""
    tree = quietly(load_urdf, example_robot_data(PUBLIC['panda'][0]), mimic=False)
    angular, linear, joint_speed = speed_limits(panda, 'panda_hand')
    tree_angular, tree_linear, tree_joint_speed = speed_limits(tree, 'panda_hand')
    assert (angular, linear) == (tree_angular, tree_linear)
    assert np.array_equal(joint_speed, tree_joint_speed[:panda.nv])
    posture = dexterous_posture(panda, 'panda_hand')
    assert posture.shape == (panda.nv,)
    assert np.all((panda.lower <= posture) & (posture <= panda.upper))
