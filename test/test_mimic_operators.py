"""The mass-matrix operators, the batched fast functions, the regressor and the base parameters on models with
coupled mimic joints (issue 41): U D U^T, M^-1, log det M, forward dynamics by U D U^T and the operational-space
inertia against Pinocchio 4 ``mimic=True`` (its M, RNEA and frame Jacobians; it has no M^-1 with mimic joints:
"This algorithm does not support Joint Mimic type") and NumPy on them, and against the tree's dynamics projected with a
joint map written by hand on the gripper Pinocchio refuses."""
import warnings

import numpy as np
import pytest

from conftest import example_robot_data
from test_mimic import GRIPPER, PUBLIC, gripper_positions, gripper_velocities, pinocchio_state, quietly

from robot_dynamics_ros import fast, load_urdf
from robot_dynamics_ros.algorithms import (aba, crba, forward_dynamics_udut, frame_jacobian, mass_matrix_inverse,
                                           mass_matrix_log_det, operational_space_inertia, regressor, rnea,
                                           standard_parameters, udut)
from robot_dynamics_ros.cli import main
from robot_dynamics_ros.errors import SingularMassMatrixError
from robot_dynamics_ros.parameters import numeric_base_parameters

STATES = 3
AGREE = 1e-10   # the agreement with Pinocchio, relative to the size of the quantity
GRIPPER_MAP = np.column_stack([gripper_velocities(e) for e in np.eye(4)])   # qd_tree = GRIPPER_MAP qd, by hand


@pytest.fixture(scope='module')
def gripper():
    return load_urdf(GRIPPER, mimic=True)


def relative(a, b):
    return np.abs(a - b).max() / max(1.0, np.abs(b).max())


def assert_factors(U, D, M):
    """U unit upper triangular, D > 0, U diag(D) U^T = M."""
    assert np.array_equal(np.tril(U, -1), np.zeros_like(U)) and np.array_equal(np.diag(U), np.ones(len(D)))
    assert np.all(D > 0.0)
    assert np.abs(U @ np.diag(D) @ U.T - M).max() <= AGREE * np.abs(M).max()


@pytest.mark.parametrize('robot', sorted(PUBLIC))
def test_mass_matrix_operators_agree_with_pinocchio_mimic(robot):
    """U D U^T reproduces Pinocchio's M; M^-1 is inv of it and M M^-1 = I; log det M is NumPy's slogdet of it;
    forward dynamics by U D U^T solves Pinocchio's M qdd = tau - h; Lambda of a finger (a mimic joint's link: its
    Jacobian carries the coupling) is inv(J M^-1 J^T) with Pinocchio's frame Jacobian, all to the issue's 1e-10."""
    pin = pytest.importorskip('pinocchio')
    path = example_robot_data(PUBLIC[robot][0])
    model, oracle = quietly(load_urdf, path, mimic=True), pin.buildModelFromUrdf(path, mimic=True)
    finger = next(model.body_names[b] for b in range(model.nb) if model.body_joint_names[b] in model.mimic)
    data, rng = oracle.createData(), np.random.default_rng(47)
    for _ in range(STATES):
        q, qd, tau = model.random_configuration(rng), *rng.normal(size=(2, model.nv))
        q_pin, (v_pin,), rows = pinocchio_state(oracle, model, q, qd)
        M = pin.crba(oracle, data, q_pin)
        M = (np.triu(M) + np.triu(M, 1).T)[np.ix_(rows, rows)]
        h = pin.rnea(oracle, data, q_pin, v_pin, np.zeros(oracle.nv))[rows]
        M_inverse = np.linalg.inv(M)
        assert_factors(*udut(model, q), M)
        assert_factors(*fast.udut(model, q), M)
        assert relative(mass_matrix_inverse(model, q), M_inverse) <= AGREE
        assert np.abs(M @ mass_matrix_inverse(model, q) - np.eye(model.nv)).max() <= AGREE
        sign, log_det = np.linalg.slogdet(M)
        assert sign == 1.0 and abs(mass_matrix_log_det(model, q) - log_det) <= AGREE
        assert relative(forward_dynamics_udut(model, q, qd, tau), np.linalg.solve(M, tau - h)) <= AGREE
        J = pin.computeFrameJacobian(oracle, data, q_pin, oracle.getFrameId(finger), pin.LOCAL_WORLD_ALIGNED)[:, rows]
        J = np.vstack([J[3:], J[:3]])   # Pinocchio's rows [linear; angular] in our order
        Lambda = np.linalg.inv(J @ M_inverse @ J.T)
        assert np.abs(operational_space_inertia(model, q, [finger]) - Lambda).max() <= AGREE * np.abs(Lambda).max()


def test_gripper_operators_are_the_projected_tree_ones(gripper):
    """Pinocchio refuses the gripper (a mimic of a mimic, one across branches): M = G^T M_tree G with the joint map
    written from its URDF by hand, and the operators checked on it, Lambda of two frames (the hand and the tip of
    the finger coupled to the master through a mimic of a mimic) in each of the three references."""
    tree = quietly(load_urdf, GRIPPER, mimic=False)
    rng = np.random.default_rng(48)
    for _ in range(STATES):
        q, qd, tau = gripper.random_configuration(rng), *rng.normal(size=(2, gripper.nv))
        q_tree = gripper_positions(q)
        M = GRIPPER_MAP.T @ crba(tree, q_tree) @ GRIPPER_MAP
        h = GRIPPER_MAP.T @ rnea(tree, q_tree, gripper_velocities(qd), np.zeros(tree.nv))
        assert_factors(*udut(gripper, q), M)
        assert relative(mass_matrix_inverse(gripper, q), np.linalg.inv(M)) <= AGREE
        assert abs(mass_matrix_log_det(gripper, q) - np.linalg.slogdet(M)[1]) <= AGREE
        assert relative(forward_dynamics_udut(gripper, q, qd, tau), np.linalg.solve(M, tau - h)) <= AGREE
        assert relative(forward_dynamics_udut(gripper, q, qd, tau), aba(gripper, q, qd, tau)) <= AGREE
        for reference in ('local', 'world', 'local_world_aligned'):
            J = np.vstack([frame_jacobian(tree, q_tree, link, reference) @ GRIPPER_MAP
                           for link in ('hand', 'right_tip_link')])
            rows = [0, 1, 2, 6]   # 4 DOF: the hand's rotation (the three arm joints) and a rotation of the tip
            compliance = (J @ np.linalg.inv(M) @ J.T)[np.ix_(rows, rows)]   # (the finger's only: hand rows lack it)
            Lambda = operational_space_inertia(gripper, q, ['hand', 'right_tip_link'], reference, rows)
            assert np.abs(Lambda - np.linalg.inv(compliance)).max() <= AGREE * np.abs(Lambda).max()


def test_singular_coupled_mass_matrix_names_the_joint(gripper):
    """Fingers and counterweight without mass: M is singular; every operator says which joint moves no mass, as the
    tree's operators do; Romeo's massless hands likewise."""
    from dataclasses import replace
    inertia = np.array(gripper.inertia)
    inertia[[gripper.body_joint_names.index(name) for name in ('left_finger', 'right_finger', 'right_tip',
                                                               'counterweight')]] = 0.0
    massless, q, zero = replace(gripper, inertia=inertia), gripper.neutral(), np.zeros(gripper.nv)
    for operator in (lambda: udut(massless, q), lambda: fast.udut(massless, q),
                     lambda: mass_matrix_inverse(massless, q), lambda: mass_matrix_log_det(massless, q),
                     lambda: forward_dynamics_udut(massless, q, zero, zero),
                     lambda: operational_space_inertia(massless, q, ['hand'], rows=[3])):
        with pytest.raises(SingularMassMatrixError, match="joint 'left_finger' moves no mass"):
            operator()
    romeo = quietly(load_urdf, example_robot_data('romeo_description/urdf/romeo.urdf'), mimic=True)
    with pytest.raises(SingularMassMatrixError, match="joint '[LR]Hand' moves no mass"):   # its hands: no <inertial>
        udut(romeo, romeo.neutral())


@pytest.mark.parametrize('robot', ['gripper', 'panda'])
def test_batched_fast_functions_on_coupled_models_equal_single_calls(robot, gripper):
    """rnea_batch, crba_batch, aba_batch (external forces per state), regressor_batch and the fast regressor on the
    reduced coordinates: each state as the reference single call gives it."""
    model = gripper if robot == 'gripper' else load_urdf(example_robot_data(PUBLIC['panda'][0]), mimic=True)
    rng, N = np.random.default_rng(49), 4
    Q = np.array([model.random_configuration(rng) for _ in range(N)])
    QD, QDD = rng.normal(size=(2, N, model.nv))
    F = rng.normal(size=(N, model.nb, 6))
    extras = dict(viscous=True, coulomb=True)
    expected_tau = np.array([rnea(model, *state, f_ext=f) for *state, f in zip(Q, QD, QDD, F)])
    assert relative(fast.rnea_batch(model, Q, QD, QDD, f_ext=F), expected_tau) <= 1e-12
    assert relative(fast.crba_batch(model, Q), np.array([crba(model, q) for q in Q])) <= 1e-12
    expected_qdd = np.array([aba(model, *state, f_ext=f) for *state, f in zip(Q, QD, expected_tau, F)])
    assert relative(fast.aba_batch(model, Q, QD, expected_tau, f_ext=F), expected_qdd) <= 1e-12
    assert relative(expected_qdd, QDD) <= 1e-9   # and ABA inverts RNEA
    expected_Y = np.array([regressor(model, *state, **extras) for state in zip(Q, QD, QDD)])
    assert relative(fast.regressor_batch(model, Q, QD, QDD, **extras), expected_Y) <= 1e-12
    assert relative(fast.regressor(model, Q[0], QD[0], QDD[0], **extras), expected_Y[0]) <= 1e-12


def test_regressor_on_panda_with_hand_gives_pinocchio_mimic_torques():
    """tau = Y(q, qd, qdd) pi on the 8 coupled coordinates equals Pinocchio 4's RNEA with mimic=True."""
    pin = pytest.importorskip('pinocchio')
    path = example_robot_data(PUBLIC['panda'][0])
    model, oracle = load_urdf(path, mimic=True), pin.buildModelFromUrdf(path, mimic=True)
    data, rng, pi = oracle.createData(), np.random.default_rng(50), standard_parameters(model)
    for _ in range(STATES):
        q, qd, qdd = model.random_configuration(rng), *rng.normal(size=(2, model.nv))
        q_pin, (v_pin, a_pin), rows = pinocchio_state(oracle, model, q, qd, qdd)
        expected = pin.rnea(oracle, data, q_pin, v_pin, a_pin)[rows]
        for Y in (regressor(model, q, qd, qdd), fast.regressor(model, q, qd, qdd)):
            assert np.abs(Y @ pi - expected).max() <= AGREE * max(1.0, np.abs(expected).max())


def test_base_parameters_of_coupled_models_have_the_rank_of_the_reduced_regressor(gripper):
    """As many base parameters as the rank of the reduced regressor stacked over random states (NumPy's SVD rank of
    the reference regressor), fewer than the tree's (the coupled fingers move together); Y_base beta reproduces
    RNEA on the reduced coordinates at other states."""
    panda = load_urdf(example_robot_data(PUBLIC['panda'][0]), mimic=True)
    for model in (gripper, panda):
        rng = np.random.default_rng(51)
        stacked = np.vstack([regressor(model, np.pi * rng.uniform(-1, 1, model.nq), *rng.normal(size=(2, model.nv)))
                             for _ in range(60)])
        base = numeric_base_parameters(model)
        assert len(base) == np.linalg.matrix_rank(stacked)
        assert len(base) < len(numeric_base_parameters(model.tree))
        beta = base.project(standard_parameters(model))
        for _ in range(STATES):
            q, qd, qdd = model.random_configuration(rng), *rng.normal(size=(2, model.nv))
            expected = rnea(model, q, qd, qdd)
            assert np.abs(base.regressor(regressor(model, q, qd, qdd)) @ beta - expected).max() <= \
                1e-9 * max(1.0, np.abs(expected).max())


def test_identification_of_panda_with_hand_from_pinocchio_mimic_torques():
    """Noiseless samples whose efforts are Pinocchio 4's RNEA with mimic=True (plus the coupled model's gathered
    viscous and Coulomb friction): least squares on the 8 coupled coordinates recovers the base parameters of the
    URDF's inertias and friction (``identify_base_parameters``, as ``robot-dynamics identify --mimic`` runs it)."""
    pin = pytest.importorskip('pinocchio')
    from robot_dynamics_ros.parameters.identification import identify_base_parameters
    path = example_robot_data(PUBLIC['panda'][0])
    model, oracle = load_urdf(path, mimic=True), pin.buildModelFromUrdf(path, mimic=True)
    data, rng = oracle.createData(), np.random.default_rng(52)
    q = np.array([model.random_configuration(rng) for _ in range(40)])
    qd, qdd = rng.normal(size=(2, 40, model.nv))
    tau = np.empty_like(qd)
    for k in range(40):
        q_pin, (v_pin, a_pin), rows = pinocchio_state(oracle, model, q[k], qd[k], qdd[k])
        tau[k] = pin.rnea(oracle, data, q_pin, v_pin, a_pin)[rows] + model.damping * qd[k] \
            + model.friction * np.sign(qd[k])
    result, base = identify_base_parameters(model, q, qd, qdd, tau, viscous=True, coulomb=True)
    beta = base.project(standard_parameters(model, viscous=True, coulomb=True))
    assert np.abs(result.beta - beta).max() <= 1e-8 * max(1.0, np.abs(beta).max())


def test_base_params_command_with_mimic(capsys):
    """`robot-dynamics base-params panda.urdf` (coupled by default, as with --mimic): the 8 coupled joints and the
    count of the coupled model; --no-mimic the 9 joints of the tree; --method closed-form on the coupled model is one
    line and exit code 2."""
    path = example_robot_data(PUBLIC['panda'][0])
    expected = len(numeric_base_parameters(load_urdf(path, mimic=True)))
    with warnings.catch_warnings():
        warnings.simplefilter('error')   # coupled: no warning that the mimic joint is a degree of freedom
        assert main(['base-params', path]) == 0
        out = capsys.readouterr().out
        assert main(['base-params', path, '--mimic']) == 0
        assert capsys.readouterr().out == out
    assert "robot 'panda': 8 joints" in out and f"{expected} base parameters of 90 standard" in out
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')   # the mimic joint is a degree of freedom: said in a warning
        assert main(['base-params', path, '--no-mimic']) == 0
    assert "robot 'panda': 9 joints" in capsys.readouterr().out
    assert main(['base-params', path, '--method', 'closed-form']) == 2
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and 'coupled <mimic> joints need --method numeric' in err and '--no-mimic' in err


def test_identify_refuses_a_coupled_friction_urdf_in_one_line(tmp_path, capsys):
    """--urdf-out would write a master's identified friction, which includes its mimic joints', beside the mimic
    joints' own: refused before anything is read or written."""
    path = example_robot_data(PUBLIC['panda'][0])
    out, urdf_out = tmp_path / 'params.yaml', tmp_path / 'identified.urdf'
    assert main(['identify', path, str(tmp_path / 'missing.csv'), '-o', str(out), '--friction',
                 '--urdf-out', str(urdf_out)]) == 2   # coupled by default
    err = capsys.readouterr().err
    assert err.count('\n') == 1 and '--urdf-out with --friction and coupled <mimic> joints' in err
    assert not out.exists() and not urdf_out.exists()


def test_excitation_and_identification_of_the_coupled_gripper():
    """`excite --mimic` and `identify --mimic` in process on the gripper: a trajectory of its 4 independent joints
    within the masters' limits; efforts from the tree's inverse dynamics with its own damping and Coulomb friction
    at the motion the hand-written joint map gives, projected by virtual work (G^T tau_tree). At the trajectory's
    exact samples least squares recovers the base parameters; the filtered equations of the recording (positions
    and efforts only, 'continuous' sampling) hold for the true ones to the differences' O(dt^2) truncation (1e-5 of
    the torque at 1 kHz, test_identification.py): here within 1e-4."""
    from robot_dynamics_ros.parameters.equations import identification_equations
    from robot_dynamics_ros.parameters.excitation import optimise_excitation
    from robot_dynamics_ros.parameters.identification import identify_base_parameters
    gripper, tree = load_urdf(GRIPPER, mimic=True), quietly(load_urdf, GRIPPER, mimic=False)
    friction = dict(viscous=True, coulomb=True)
    excitation = optimise_excitation(gripper, duration=4.0, harmonics=4, time_budget=60.0, max_evaluations=1,
                                     **friction)
    t, q, qd, qdd = excitation.sample(1000.0)
    assert q.shape == (len(t), 4) and np.all(q >= gripper.lower) and np.all(q <= gripper.upper)
    tau = np.array([GRIPPER_MAP.T @ (rnea(tree, gripper_positions(q_k), v, a) + tree.damping * v
                                     + tree.friction * np.sign(v))
                    for q_k, v, a in zip(q, qd @ GRIPPER_MAP.T, qdd @ GRIPPER_MAP.T)])
    moving = slice(100, -100)   # Coulomb friction's sign is the model's only where the joints move
    result, base = identify_base_parameters(gripper, q[moving], qd[moving], qdd[moving], tau[moving], **friction)
    truth = base.project(standard_parameters(gripper, **friction))
    assert np.abs(result.beta - truth).max() <= 1e-8 * np.abs(truth).max()
    equations = identification_equations(gripper, base, t, q, tau, 'continuous', **friction)
    rows = equations.rows
    assert rows.sum() > len(base)
    residual = (np.einsum('knb,b->kn', equations.Y, truth) - equations.tau)[rows]
    assert np.abs(residual).max() <= 1e-4 * np.abs(equations.tau).max()


def test_identification_report_units_follow_the_independent_joints():
    """Baxter's mimic joints sit between its arms' joints, so coordinate j is not body j: the friction of
    left_s0 is in N m s/rad (revolute) and of its gripper finger in N s/m (prismatic), as each joint's own type."""
    from robot_dynamics_ros.model.model import REVOLUTE
    from robot_dynamics_ros.parameters.report import unit
    baxter = quietly(load_urdf, example_robot_data(PUBLIC['baxter'][0]), mimic=True)
    for j, name in enumerate(baxter.joint_names):
        revolute = baxter.joint_type[baxter.body_joint_names.index(name)] == REVOLUTE
        assert unit(baxter, f'Fv{j + 1}') == ('N m s/rad' if revolute else 'N s/m')
    assert unit(baxter, f"Fv{baxter.joint_names.index('left_s0') + 1}") == 'N m s/rad'
    assert unit(baxter, f"Fv{baxter.joint_names.index('l_gripper_l_finger_joint') + 1}") == 'N s/m'
