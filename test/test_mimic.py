"""URDF mimic joints as coupled coordinates (q_m = multiplier q_master + offset): the reduced model, its algorithms
against Pinocchio 4 ``mimic=True`` on public robots, and against oracles of our own on a gripper Pinocchio refuses
(a mimic of a mimic, a mimic across branches), the simulator and the simulator node."""
import os
import warnings

import numpy as np
import pytest

from conftest import ROOT, example_robot_data

from robot_dynamics_ros import fast, load_urdf
from robot_dynamics_ros.model.urdf import parse_urdf
from robot_dynamics_ros.algorithms import (aba, crba, frame_jacobian, frame_placement, kinetic_energy,
                                           potential_energy, rnea)
from robot_dynamics_ros.errors import URDFError, URDFWarning
from robot_dynamics_ros.simulation.simulator import Simulator

GRIPPER = os.path.join(ROOT, 'test', 'urdf', 'mimic_gripper.urdf')
# Public robots with <mimic> joints: (path in example-robot-data, DOF with every joint free, DOF with mimic coupled).
# The second is today's (mimic=False) count and the issue's table; the third is Pinocchio 4's with mimic=True.
PUBLIC = {'panda': ('panda_description/urdf/panda.urdf', 9, 8),
          'baxter': ('baxter_description/urdf/baxter.urdf', 19, 17),
          'pr2': ('pr2_description/urdf/pr2.urdf', 30, 20),
          'tiago_pro': ('tiago_pro_description/robots/tiago_pro.urdf', 33, 23)}
STATES = 3


def quietly(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        return function(*args, **kwargs)


def gripper_positions(q):
    """Every joint of mimic_gripper.urdf from its independent q = (shoulder, elbow, wrist, left_finger), written from
    the URDF's <mimic> elements by hand: right_finger = -left; right_tip = 5 right_finger + 0.1; counterweight =
    -10 left + 0.2."""
    shoulder, elbow, wrist, left = q
    return np.array([shoulder, elbow, wrist, left, -left, 5 * -left + 0.1, -10 * left + 0.2])


def gripper_velocities(qd):
    shoulder, elbow, wrist, left = qd
    return np.array([shoulder, elbow, wrist, left, -left, -5 * left, -10 * left])


@pytest.fixture(scope='module')
def gripper():
    return load_urdf(GRIPPER, mimic=True)


@pytest.fixture(scope='module')
def gripper_tree():
    return quietly(load_urdf, GRIPPER, mimic=False)


def pinocchio_state(pin_model, model, q, *velocities):
    """Pinocchio's (q, v...) for our reduced state, joints matched by name (continuous joints as cos, sin), and the
    permutation of Pinocchio's v indices into our order."""
    q_pin, rows = np.zeros(pin_model.nq), []
    v_pin = [np.zeros(pin_model.nv) for _ in velocities]
    for k, name in enumerate(model.joint_names):
        joint = pin_model.joints[pin_model.getJointId(name)]
        q_pin[joint.idx_q:joint.idx_q + joint.nq] = [q[k]] if joint.nq == 1 else [np.cos(q[k]), np.sin(q[k])]
        for v, qd in zip(v_pin, velocities):
            v[joint.idx_v] = qd[k]
        rows.append(joint.idx_v)
    return q_pin, v_pin, rows


@pytest.mark.parametrize('robot', sorted(PUBLIC))
def test_public_robots_agree_with_pinocchio_mimic(robot):
    """Pinocchio's nv and its independent joints; RNEA and CRBA equal to Pinocchio 4 mimic=True to 1e-10 at random
    states; ABA equal to solve(CRBA, tau - h); mimic=False keeps every joint a degree of freedom."""
    pin = pytest.importorskip('pinocchio')
    path, all_dof, coupled_dof = PUBLIC[robot]
    path = example_robot_data(path)
    model, tree = quietly(load_urdf, path, mimic=True), quietly(load_urdf, path, mimic=False)
    oracle = pin.buildModelFromUrdf(path, mimic=True)
    assert (tree.nv, model.nv, model.nq) == (all_dof, coupled_dof, coupled_dof)
    assert model.nv == oracle.nv and tree.nv == pin.buildModelFromUrdf(path).nv
    independent = {name for name, joint in zip(oracle.names[1:], oracle.joints[1:])   # [0]: the universe
                   if joint.shortname() != 'JointModelMimic'}
    assert set(model.joint_names) == independent
    assert set(model.all_joint_names) == set(tree.joint_names)
    data, rng = oracle.createData(), np.random.default_rng(41)
    for _ in range(STATES):
        q, qd, qdd, tau = model.random_configuration(rng), *rng.normal(size=(3, model.nv))
        q_pin, (v_pin, a_pin), rows = pinocchio_state(oracle, model, q, qd, qdd)
        expected_tau = pin.rnea(oracle, data, q_pin, v_pin, a_pin)[rows]
        M_pin = pin.crba(oracle, data, q_pin)
        M_pin = (np.triu(M_pin) + np.triu(M_pin, 1).T)[np.ix_(rows, rows)]
        assert np.abs(rnea(model, q, qd, qdd) - expected_tau).max() <= 1e-10
        M = crba(model, q)
        assert np.abs(M - M_pin).max() <= 1e-10
        h = rnea(model, q, qd, np.zeros(model.nv))
        expected_qdd = np.linalg.solve(M, tau - h)
        assert np.abs(aba(model, q, qd, tau) - expected_qdd).max() <= 1e-10 * max(1.0, np.abs(expected_qdd).max())


def test_panda_hand_aggregates_only_its_fingers():
    """Constraint embedding keeps ABA O(n): Panda's one mimic pair (two finger bodies hanging from the hand) makes one
    aggregate of those two bodies with one column; every other node is one body."""
    from robot_dynamics_ros.algorithms.embedded_aba import embedding
    model = load_urdf(example_robot_data(PUBLIC['panda'][0]), mimic=True)
    E = embedding(model)
    nodes = E.nodes   # rows of the tree's packed model (one per velocity coordinate)
    aggregates = [[model.body_joint_names[E.pack.row_body[r]] for r in rows] for rows in nodes if len(rows) > 1]
    assert aggregates == [['panda_finger_joint1', 'panda_finger_joint2']]
    assert len(nodes) == model.nv


def test_gripper_model_counts_independent_joints_and_resolves_chains(gripper, gripper_tree):
    assert gripper.nq == gripper.nv == 4
    assert gripper.joint_names == ('shoulder', 'elbow', 'wrist', 'left_finger')
    assert gripper.all_joint_names == ('shoulder', 'elbow', 'wrist', 'left_finger', 'right_finger', 'right_tip',
                                       'counterweight')
    assert gripper.mimic == {'right_finger': ('left_finger', -1.0, 0.0), 'right_tip': ('left_finger', -5.0, 0.1),
                             'counterweight': ('left_finger', -10.0, 0.2)}
    assert gripper_tree.nv == 7 and gripper_tree.joint_names == gripper.all_joint_names
    assert gripper_tree.mimic['right_tip'] == ('right_finger', 5.0, 0.1)   # as the URDF writes it
    q, qd = np.array([0.3, -0.4, 1.0, 0.025]), np.array([0.5, 0.1, -0.2, 0.03])
    positions, velocities = gripper.joint_positions(q, qd)
    assert np.abs(positions - gripper_positions(q)).max() <= 1e-15
    assert np.abs(velocities - gripper_velocities(qd)).max() <= 1e-15
    # limits, effort and velocity limits of the masters; damping and friction gather the mimic joints' (virtual work)
    assert (gripper.lower[3], gripper.upper[3]) == (0.0, 0.04)
    assert gripper.damping[3] == pytest.approx(1.0 + 1.0)       # left 1.0 + (-1)^2 right 1.0
    assert gripper.friction[3] == pytest.approx(0.5 + 0.5)


def test_mimic_joints_are_coupled_by_default():
    """load_urdf and parse_urdf couple <mimic> joints unless told mimic=False, as MoveIt, gz and MuJoCo do, and
    say nothing about it."""
    with warnings.catch_warnings():
        warnings.simplefilter('error')   # no warning: nothing to say about a coupled joint
        model, parsed = load_urdf(GRIPPER), parse_urdf(open(GRIPPER).read())
    assert model.nv == parsed.nv == 4 and model.coupling is not None and parsed.coupling is not None
    assert model.joint_names == ('shoulder', 'elbow', 'wrist', 'left_finger')


def test_gripper_mimic_false_warns_and_keeps_every_joint_free():
    with pytest.warns(URDFWarning, match="joint 'right_finger' mimics 'left_finger'; it is modelled as an "
                                         "independent degree of freedom"):
        tree = load_urdf(GRIPPER, mimic=False)
    assert tree.nv == 7 and tree.coupling is None


def test_gripper_frames_and_jacobians(gripper, gripper_tree):
    """Frames of mimic links where the tree (mimic=False) puts them at the hand-expanded q; Jacobians equal to
    central differences of those placements along the reduced q."""
    rng = np.random.default_rng(1)
    for _ in range(STATES):
        q = gripper.random_configuration(rng)
        for link in ('right_tip_link', 'counterweight_link', 'left_finger_link', 'hand'):
            ours = frame_placement(gripper, q, link)
            expected = frame_placement(gripper_tree, gripper_positions(q), link)
            assert np.abs(ours.R - expected.R).max() <= 1e-14 and np.abs(ours.p - expected.p).max() <= 1e-14
            J, step = frame_jacobian(gripper, q, link), 1e-6
            for k in range(gripper.nv):
                dq = np.eye(gripper.nv)[k] * step
                ahead, behind = frame_placement(gripper, q + dq, link), frame_placement(gripper, q - dq, link)
                assert np.abs(J[3:, k] - (ahead.p - behind.p) / (2 * step)).max() <= 1e-8
                dR = (ahead.R - behind.R) / (2 * step) @ ours.R.T   # skew(omega)
                assert np.abs(J[:3, k] - [dR[2, 1], dR[0, 2], dR[1, 0]]).max() <= 1e-8


def test_gripper_dynamics_against_energy_oracles(gripper, gripper_tree):
    """Pinocchio refuses this URDF ('the parent joint of the mimic joint is not in the kinematic tree'), so: M from
    the tree's kinetic energy at the hand-expanded velocities; g as the gradient of the tree's potential energy;
    the Coriolis power qd^T (h - g) = 1/2 qd^T Mdot qd; CRBA a = RNEA(a) - RNEA(0); ABA = solve(M, tau - h) and the
    inverse of RNEA with external forces."""
    rng = np.random.default_rng(2)
    zero = np.zeros(gripper.nv)
    for _ in range(STATES):
        q, qd, qdd, tau = gripper.random_configuration(rng), *rng.normal(size=(3, gripper.nv))
        M = crba(gripper, q)
        for v in rng.normal(size=(3, gripper.nv)):
            T = kinetic_energy(gripper_tree, gripper_positions(q), gripper_velocities(v))
            assert 0.5 * v @ M @ v == pytest.approx(T, rel=1e-12)
        assert np.abs(M - M.T).max() <= 1e-15
        step = 1e-6
        g = rnea(gripper, q, zero, zero)
        for k in range(gripper.nv):
            dq = np.eye(gripper.nv)[k] * step
            dV = (potential_energy(gripper_tree, gripper_positions(q + dq))
                  - potential_energy(gripper_tree, gripper_positions(q - dq))) / (2 * step)
            assert g[k] == pytest.approx(dV, abs=1e-7)
        M_dot = (crba(gripper, q + step * qd) - crba(gripper, q - step * qd)) / (2 * step)
        coriolis = rnea(gripper, q, qd, zero) - g
        assert qd @ coriolis == pytest.approx(0.5 * qd @ M_dot @ qd, abs=1e-7)
        assert np.abs(M @ qdd - (rnea(gripper, q, qd, qdd) - rnea(gripper, q, qd, zero))).max() <= 1e-12
        expected = np.linalg.solve(M, tau - rnea(gripper, q, qd, zero))
        assert np.abs(aba(gripper, q, qd, tau) - expected).max() <= 1e-10 * max(1.0, np.abs(expected).max())
        f_ext = rng.normal(size=(gripper.nb, 6))
        assert np.abs(aba(gripper, q, qd, rnea(gripper, q, qd, qdd, f_ext=f_ext), f_ext=f_ext) - qdd).max() <= 1e-9


def test_fast_path_serves_coupled_models_and_refuses_what_it_cannot(gripper):
    rng = np.random.default_rng(3)
    q, qd, qdd = gripper.random_configuration(rng), *rng.normal(size=(2, gripper.nv))
    assert np.abs(fast.rnea(gripper, q, qd, qdd) - rnea(gripper, q, qd, qdd)).max() <= 1e-12
    assert np.abs(fast.crba(gripper, q) - crba(gripper, q)).max() <= 1e-12
    out = np.empty(gripper.nv)
    reference = aba(gripper, q, qd, qdd)
    assert fast.aba(gripper, q, qd, qdd, out=out) is out
    assert np.abs(out - reference).max() <= 1e-12 * max(1.0, np.abs(reference).max())
    assert fast.path(gripper, algorithm='aba') == ('table' if fast.BACKEND == 'numba' else 'python')
    from robot_dynamics_ros.algorithms.packing import packed
    with pytest.raises(ValueError, match='couples mimic joints'):   # the table kernels need a tree
        packed(gripper)


def test_mimic_cycles_and_non_joint_masters_are_errors():
    xml = open(GRIPPER).read().replace('<limit lower="0" upper="0.04" effort="20" velocity="0.2"/>',
                                       '<limit lower="0" upper="0.04" effort="20" velocity="0.2"/>'
                                       '<mimic joint="right_tip"/>')
    with pytest.raises(URDFError, match='cycle'):
        load_urdf(xml, mimic=True)
    fixed = ('<robot name="r"><link name="a"/><link name="b"/><link name="c"/>'
             '<joint name="weld" type="fixed"><parent link="a"/><child link="b"/></joint>'
             '<joint name="j" type="revolute"><parent link="b"/><child link="c"/><limit lower="-1" upper="1"/>'
             '<mimic joint="weld"/></joint></robot>')
    with pytest.raises(URDFError, match="resolves to joint 'weld', which is not a 1-DOF joint"):
        load_urdf(fixed, mimic=True)


def test_fingers_stay_coupled_in_simulation(gripper):
    """A position command to the master closes both fingers; every joint follows its relation to 1e-12 at every
    step. With mimic=False (today's model) the same command leaves the other finger where it was."""
    sim = Simulator(gripper, 1e-3, initial_positions=[0.0, 0.5, 0.0, 0.0])
    sim.set_joint_command(position=[np.nan, np.nan, np.nan, 0.03])
    for _ in range(300):
        sim.step()
        positions, velocities = gripper.joint_positions(sim.q, sim.qd)
        assert np.abs(positions - gripper_positions(sim.q)).max() <= 1e-12
        assert np.abs(velocities - gripper_velocities(sim.qd)).max() <= 1e-12
    right = gripper.all_joint_names.index('right_finger')
    assert sim.q[3] == pytest.approx(0.03, abs=1e-3)
    assert gripper.joint_positions(sim.q)[0][right] == pytest.approx(-0.03, abs=1e-3)
    tree = quietly(load_urdf, GRIPPER, mimic=False)
    free = Simulator(tree, 1e-3, initial_positions=[0.0, 0.5, 0.0, 0.0, 0.0, 0.1, 0.2])
    free.set_joint_command(position=[np.nan, np.nan, np.nan, 0.03, np.nan, np.nan, np.nan])
    for _ in range(300):
        free.step()
    assert free.q[3] == pytest.approx(0.03, abs=1e-3) and abs(free.q[4]) <= 1e-3   # not coupled


def test_default_end_effector_stops_before_the_gripper(gripper):
    """Not a finger (the tip of the longest chain, whose joint limit stops the task): the link the gripper's
    coupled joints hang from; the SRDF's end effector where one is given."""
    from robot_dynamics_ros.control.cartesian import default_end_effector
    from robot_dynamics_ros.model.srdf import load_srdf
    panda = example_robot_data(PUBLIC['panda'][0])
    assert default_end_effector(load_urdf(panda, mimic=True)) == 'panda_hand'
    assert default_end_effector(quietly(load_urdf, panda, mimic=False)) == 'panda_hand'
    srdf = load_srdf(example_robot_data('panda_description/srdf/panda.srdf'))
    assert default_end_effector(load_urdf(panda, mimic=True), srdf) == 'panda_hand_tcp'
    assert default_end_effector(gripper) == 'hand'


def test_a_replaced_inertia_reaches_the_coupled_dynamics(gripper):
    """A changed model is ``dataclasses.replace`` (identification does it): twice every inertia, twice every torque."""
    from dataclasses import replace
    heavier = replace(gripper, inertia=2.0 * gripper.inertia)
    q, qd, qdd = np.array([0.3, -0.4, 1.0, 0.025]), np.array([0.5, 0.1, -0.2, 0.03]), np.array([1.0, -2.0, 0.5, 0.1])
    assert np.abs(rnea(heavier, q, qd, qdd) - 2.0 * rnea(gripper, q, qd, qdd)).max() <= 1e-12


def test_robots_pinocchio_refuses_run_here():
    """TALOS full v2 and Romeo: Pinocchio 4 refuses them with mimic=True ('the parent joint of the mimic joint is not
    in the kinematic tree'). TALOS on a floating base, with external forces: CRBA a = RNEA(a) - RNEA(0) and ABA (and
    the fast path's) inverts RNEA; Romeo's hands are massless, so its forward dynamics is a named error."""
    from robot_dynamics_ros.errors import SingularMassMatrixError
    path = example_robot_data('talos_data/robots/talos_full_v2.urdf')
    talos = quietly(load_urdf, path, root_joint='floating', mimic=True)
    assert (quietly(load_urdf, path, mimic=False).nv, talos.nv) == (44, 6 + 32)
    rng = np.random.default_rng(4)
    q, qd, qdd = talos.random_configuration(rng), *rng.normal(size=(2, talos.nv))
    zero, f_ext = np.zeros(talos.nv), rng.normal(size=(talos.nb, 6))
    tau = rnea(talos, q, qd, qdd, f_ext=f_ext)
    assert np.abs(crba(talos, q) @ qdd - (tau - rnea(talos, q, qd, zero, f_ext=f_ext))).max() <= 1e-10
    assert np.abs(aba(talos, q, qd, tau, f_ext=f_ext) - qdd).max() <= 1e-10
    assert np.abs(fast.aba(talos, q, qd, tau, f_ext=f_ext) - qdd).max() <= 1e-10
    romeo = quietly(load_urdf, example_robot_data('romeo_description/urdf/romeo.urdf'), mimic=True)
    assert romeo.nv == 33
    with pytest.raises(SingularMassMatrixError, match="joint '[LR]Hand'"):
        aba(romeo, romeo.neutral(), np.zeros(romeo.nv), np.zeros(romeo.nv))


def test_embedded_pivots_multiply_to_the_determinant(gripper):
    """The simulator's start-up check takes the pivots of M = U D U^T on the embedded tree: their product is det M
    (Jain Corollary 6.1), and a gripper moving no mass (its fingers and counterweight) makes one zero."""
    from dataclasses import replace
    from robot_dynamics_ros.algorithms.embedded_aba import embedded_pivots
    rng = np.random.default_rng(5)
    for _ in range(STATES):
        q = gripper.random_configuration(rng)
        pivots = embedded_pivots(gripper, q)
        assert np.all(pivots > 0.0)
        assert np.prod(pivots) == pytest.approx(np.linalg.det(crba(gripper, q)), rel=1e-10)
    fingers = [gripper.body_joint_names.index(name) for name in ('left_finger', 'right_finger', 'right_tip',
                                                                 'counterweight')]
    inertia = np.array(gripper.inertia)
    inertia[fingers] = 0.0
    massless = replace(gripper, inertia=inertia)
    assert embedded_pivots(massless, gripper.neutral())[3] == pytest.approx(0.0, abs=1e-12)
    with pytest.raises(ValueError, match="joint 'left_finger'"):
        Simulator(massless, 1e-3)


def test_regressor_and_joint_wrenches_of_the_coupled_model(gripper, gripper_tree):
    """tau = Y pi on the reduced coordinates (viscous and Coulomb columns per independent joint, from the model's
    gathered damping and friction); joint wrenches are the tree's at the hand-expanded motion."""
    from robot_dynamics_ros.algorithms import joint_wrenches, regressor, standard_parameters
    rng = np.random.default_rng(6)
    q, qd, qdd = gripper.random_configuration(rng), *rng.normal(size=(2, gripper.nv))
    Y = regressor(gripper, q, qd, qdd, viscous=True, coulomb=True)
    expected = rnea(gripper, q, qd, qdd) + gripper.damping * qd + gripper.friction * np.sign(qd)
    assert np.abs(Y @ standard_parameters(gripper, viscous=True, coulomb=True) - expected).max() <= 1e-10
    assert np.abs(joint_wrenches(gripper, q, qd, qdd) - joint_wrenches(
        gripper_tree, gripper_positions(q), gripper_velocities(qd), gripper_velocities(qdd))).max() <= 1e-12
