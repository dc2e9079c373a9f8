"""Floating and planar joints (a floating or planar root, and such joints inside the tree): the model's layouts,
configuration arithmetic, RNEA, CRBA and ABA against Pinocchio's free-flyer and planar models (joints matched by
name), and the identities and physics that must hold."""
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import robot_dynamics_ros
from conftest import BUNDLED_URDF, TEST_DIR, assert_fast_equals_reference, random_states, relative_error
from robot_dynamics_ros import (algorithms, difference, fast, spatial, integrate, load_urdf, neutral, normalize,
                                random_configuration)
from robot_dynamics_ros.model import FREE_FLYER, PLANAR, URDFError

from oracle import BlockOracle, pin
from random_robots import quadruped_urdf, random_trees, random_urdf

RTOL = 1e-9
BACKENDS = {'default': robot_dynamics_ros, 'reference': algorithms}


def _read(path):
    with open(path) as f:
        return f.read()


# name -> (URDF XML, root joint)
ROBOTS = {
    'floating_random_tree': (random_urdf(7, 8), 'floating'),
    'floating_random_tree_2': (random_urdf(11, 12), 'floating'),
    'floating_mid_tree': (_read(os.path.join(TEST_DIR, 'urdf', 'floating_mid_tree.urdf')), None),
    'floating_root_and_mid_tree': (_read(os.path.join(TEST_DIR, 'urdf', 'floating_mid_tree.urdf')), 'floating'),
    'planar_mid_tree': (_read(os.path.join(TEST_DIR, 'urdf', 'planar_mid_tree.urdf')), None),
    'planar_base_arm7': (_read(BUNDLED_URDF), 'planar'),
    'floating_arm7': (_read(BUNDLED_URDF), 'floating'),
    'quadruped': (quadruped_urdf(), 'floating'),
}


@pytest.fixture(params=sorted(ROBOTS))
def robot(request):
    xml, root_joint = ROBOTS[request.param]
    return xml, root_joint, load_urdf(xml, root_joint=root_joint)


def test_layouts_follow_pinocchio():
    arm = load_urdf(BUNDLED_URDF)
    floating = load_urdf(BUNDLED_URDF, root_joint='floating')
    assert (floating.nq, floating.nv) == (arm.nq + 7, arm.nv + 6)
    assert floating.joint_names == arm.joint_names     # the 1-DOF joints, after the root block
    assert floating.body_joint_names[0] == 'root_joint' and floating.joint_type[0] == FREE_FLYER
    assert list(floating.joint_v_index) == list(range(6, floating.nv))
    assert list(floating.joint_q_index) == list(range(7, floating.nq))
    np.testing.assert_array_equal(neutral(floating)[:7], [0, 0, 0, 0, 0, 0, 1])
    planar = load_urdf(BUNDLED_URDF, root_joint='planar')
    assert (planar.nq, planar.nv, planar.joint_type[0]) == (arm.nq + 4, arm.nv + 3, PLANAR)
    np.testing.assert_array_equal(neutral(planar)[:4], [0, 0, 1, 0])
    with pytest.raises(ValueError, match="root_joint must be None, 'floating' or 'planar'"):
        load_urdf(BUNDLED_URDF, root_joint='spherical')


def test_shape_checks_distinguish_nq_and_nv():
    model = load_urdf(BUNDLED_URDF, root_joint='floating')
    q, v = neutral(model), np.zeros(model.nv)
    for api in BACKENDS.values():
        with pytest.raises(ValueError, match=r'q has shape \(13,\).*needs \(14,\)'):
            api.rnea(model, q[:-1], v, v)
        with pytest.raises(ValueError, match=r'qd has shape \(14,\).*needs \(13,\)'):
            api.rnea(model, q, np.zeros(model.nq), v)


def test_a_quaternion_off_unit_norm_is_an_error_naming_its_joint():
    model = load_urdf(BUNDLED_URDF, root_joint='floating')
    q, v = neutral(model), np.zeros(model.nv)
    q[6] = 1.0 + 2e-6
    for call in (lambda: robot_dynamics_ros.rnea(model, q, v, v), lambda: algorithms.rnea(model, q, v, v),
                 lambda: robot_dynamics_ros.aba(model, q, v, v), lambda: algorithms.crba(model, q),
                 lambda: integrate(model, q, v)):
        with pytest.raises(ValueError, match=r"q\[3:7\], the quaternion of joint 'root_joint', has norm"):
            call()
    q[6] = 1.0 + 5e-7   # within 1e-6: accepted
    assert np.all(np.isfinite(robot_dynamics_ros.rnea(model, q, v, v)))
    q[6] = 3.0
    np.testing.assert_allclose(np.linalg.norm(normalize(model, q)[3:7]), 1.0, rtol=1e-15)


@pytest.mark.parametrize('backend', sorted(BACKENDS))
def test_rnea_crba_aba_match_pinocchio(robot, backend):
    xml, root_joint, model = robot
    api = BACKENDS[backend]
    oracle = BlockOracle(xml, model, root_joint)
    for q, qd, x in random_states(model):
        assert relative_error(api.rnea(model, q, qd, x), oracle.rnea(q, qd, x)) < RTOL
        assert relative_error(api.crba(model, q), oracle.crba(q)) < RTOL
        assert relative_error(api.aba(model, q, qd, x), oracle.aba(q, qd, x)) < RTOL


def test_integrate_and_difference_match_pinocchio_and_round_trip(robot):
    xml, root_joint, model = robot
    oracle = BlockOracle(xml, model, root_joint)
    if any(j.nq == 2 and j.nv == 1 for j in oracle.joints):
        pytest.skip('continuous joints have other coordinates in Pinocchio')
    for q, v, _ in random_states(model, n=10):
        v = 0.4 * v   # rotations below pi: the shortest way back is v itself
        q1 = integrate(model, q, v)
        np.testing.assert_allclose(q1, pin.integrate(oracle.pin_model, oracle.q(q), oracle.v(v)), atol=1e-12)
        np.testing.assert_allclose(difference(model, q, q1), v, atol=1e-9)
        q2 = random_configuration(model, np.random.default_rng(int(1e6 * abs(v[0]))))
        np.testing.assert_allclose(difference(model, q, q2),
                                   pin.difference(oracle.pin_model, oracle.q(q), oracle.q(q2))[oracle.v_index],
                                   atol=1e-9)
        assert_same_configuration(model, integrate(model, q, difference(model, q, q2)), q2)


def assert_same_configuration(model, q1, q2):
    """q1 and q2 are the same configuration (a quaternion and its negative are the same rotation)."""
    q1 = q1.copy()
    for _, k in model.quaternions:
        q1[k:k + 4] *= np.sign(q1[k:k + 4] @ q2[k:k + 4])
    np.testing.assert_allclose(q1, q2, atol=1e-9)


def test_identities_on_floating_models(robot):
    """ABA = solve(M, tau - h); U D U^T reconstructs M; Saha's forward dynamics, M^-1 and log det M agree."""
    _, _, model = robot
    for q, qd, tau in random_states(model, seed=3, n=5):
        M = algorithms.crba(model, q)
        h = algorithms.rnea(model, q, qd, np.zeros(model.nv))
        expected = np.linalg.solve(M, tau - h)
        np.testing.assert_allclose(algorithms.aba(model, q, qd, tau), expected, rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(algorithms.forward_dynamics_udut(model, q, qd, tau), expected, rtol=1e-9,
                                   atol=1e-9)
        U, D = algorithms.udut(model, q)
        np.testing.assert_allclose(U @ np.diag(D) @ U.T, M, rtol=1e-10, atol=1e-10 * np.abs(M).max())
        np.testing.assert_array_equal(U, np.triu(U))
        np.testing.assert_allclose(algorithms.mass_matrix_inverse(model, q) @ M, np.eye(model.nv), atol=1e-8)
        assert algorithms.mass_matrix_log_det(model, q) == pytest.approx(np.linalg.slogdet(M)[1], rel=1e-10)
        assert algorithms.kinetic_energy(model, q, qd) == pytest.approx(0.5 * qd @ M @ qd, rel=1e-10)


def test_forward_dynamics_of_a_massless_floating_body_names_its_joint():
    with pytest.warns(robot_dynamics_ros.URDFWarning, match="joints \\['root_joint'\\] move no mass"):
        model = load_urdf('<robot name="empty"><link name="base"/></robot>', root_joint='floating')
    with pytest.raises(robot_dynamics_ros.SingularMassMatrixError, match="'root_joint'"):
        algorithms.aba(model, neutral(model), np.zeros(model.nv), np.zeros(model.nv))


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(xml=random_trees)
def test_hypothesis_floating_trees_match_pinocchio(xml):
    model = load_urdf(xml, root_joint='floating')
    oracle = BlockOracle(xml, model, 'floating')
    for q, qd, x in random_states(model, n=3):
        assert relative_error(robot_dynamics_ros.rnea(model, q, qd, x), oracle.rnea(q, qd, x)) < RTOL
        assert relative_error(robot_dynamics_ros.crba(model, q), oracle.crba(q)) < RTOL
        assert relative_error(robot_dynamics_ros.aba(model, q, qd, x), oracle.aba(q, qd, x)) < RTOL


def test_planar_joint_must_lie_in_the_xy_plane():
    with pytest.raises(URDFError, match="planar joint 'joint2'.*axis 0 0 1"):
        load_urdf(os.path.join(TEST_DIR, 'urdf', 'bad', 'planar_axis.urdf'))


def test_center_of_mass_jacobian_and_centroidal_map_match_pinocchio(robot):
    xml, root_joint, model = robot
    oracle = BlockOracle(xml, model, root_joint)
    for q, qd, _ in random_states(model, seed=5, n=5):
        pq = oracle.q(q)
        np.testing.assert_allclose(algorithms.center_of_mass(model, q), pin.centerOfMass(oracle.pin_model, oracle.data,
                                                                                          pq), atol=1e-12)
        J = pin.jacobianCenterOfMass(oracle.pin_model, oracle.data, pq)[:, oracle.v_index]
        np.testing.assert_allclose(algorithms.center_of_mass_jacobian(model, q), J, atol=1e-12)
        A = pin.computeCentroidalMap(oracle.pin_model, oracle.data, pq)[:, oracle.v_index]
        np.testing.assert_allclose(algorithms.centroidal_momentum_matrix(model, q), np.vstack([A[3:], A[:3]]),
                                   atol=1e-11)


def configuration_rate(model, q, v):
    """dq/dt for free-flyer and 1-DOF joints: position rate R v_linear, quaternion rate 1/2 quat (x) [omega; 0]."""
    rate = np.empty(model.nq)
    for kind, qs, vs in zip(model.joint_type, model.idx_q, model.idx_v):
        if kind == FREE_FLYER:
            x, y, z, w = q[qs + 3:qs + 7]
            omega = v[vs + 3:vs + 6]
            rate[qs:qs + 3] = spatial.quaternion_to_matrix(q[qs + 3:qs + 7]) @ v[vs:vs + 3]
            rate[qs + 3:qs + 6] = 0.5 * (w * omega + np.cross([x, y, z], omega))
            rate[qs + 6] = -0.5 * np.dot([x, y, z], omega)
        else:
            rate[qs] = v[vs]
    return rate


def rk4(model, q, v, dt, steps, gravity):
    """Classical RK4 on (q, v), zero joint torques; yields the state after every step."""
    tau = np.zeros(model.nv)

    def f(q, v):
        return configuration_rate(model, q, v), robot_dynamics_ros.aba(model, q, v, tau, gravity)
    for _ in range(steps):
        k1 = f(q, v)
        k2 = f(q + dt / 2 * k1[0], v + dt / 2 * k1[1])
        k3 = f(q + dt / 2 * k2[0], v + dt / 2 * k2[1])
        k4 = f(q + dt * k3[0], v + dt * k3[1])
        q = q + dt / 6 * (k1[0] + 2 * k2[0] + 2 * k3[0] + k4[0])
        v = v + dt / 6 * (k1[1] + 2 * k2[1] + 2 * k3[1] + k4[1])
        yield q, v


CONSERVATION_ROBOTS = ('quadruped', 'floating_random_tree')


@pytest.mark.parametrize('name', CONSERVATION_ROBOTS)
def test_free_floating_robot_conserves_momentum_and_energy(name):
    """Zero gravity, zero torque, 1 s of RK4 at 1 ms: linear and angular momentum (about the centre of mass) and
    kinetic energy stay within 1e-9."""
    xml, root_joint = ROBOTS[name]
    model = load_urdf(xml, root_joint=root_joint)
    rng = np.random.default_rng(2)
    q, v = random_configuration(model, rng), rng.normal(size=model.nv)

    def conserved(q, v):
        return np.concatenate([algorithms.centroidal_momentum(model, q, v), [algorithms.kinetic_energy(model, q, v)]])
    start = conserved(q, v)
    drift = max(np.max(np.abs(conserved(q_t, v_t) - start)) for q_t, v_t in rk4(model, q, v, 1e-3, 1000, np.zeros(3)))
    assert drift < 1e-9 * max(1.0, np.max(np.abs(start)))


@pytest.mark.parametrize('name', CONSERVATION_ROBOTS)
def test_centre_of_mass_of_a_free_robot_falls_at_g(name):
    xml, root_joint = ROBOTS[name]
    model = load_urdf(xml, root_joint=root_joint)
    rng = np.random.default_rng(4)
    q, v = random_configuration(model, rng), rng.normal(size=model.nv)
    g = np.array([0.0, 0.0, -9.81])
    c0, vc0 = algorithms.center_of_mass(model, q), algorithms.center_of_mass_jacobian(model, q) @ v
    for step, (q_t, _) in enumerate(rk4(model, q, v, 1e-3, 500, g), start=1):
        t = 1e-3 * step
        np.testing.assert_allclose(algorithms.center_of_mass(model, q_t), c0 + vc0 * t + 0.5 * g * t * t, atol=1e-9)


FAST_ROBOTS = {'floating_small_tree': (random_urdf(5, 2), 'floating'), 'planar_mid_tree': ROBOTS['planar_mid_tree']}


@pytest.mark.parametrize('name', sorted(FAST_ROBOTS))
def test_table_kernels_and_generated_code_equal_the_reference(name):
    """The fast path on floating-base models: the table kernels, then (compiled here: seconds per algorithm on a
    cold cache) the generated code, give the reference's results."""
    numba = pytest.importorskip('numba')
    xml, root_joint = FAST_ROBOTS[name]
    model = load_urdf(xml, root_joint=root_joint)
    assert fast.path(model) == 'table' and numba
    assert_fast_equals_reference(model, np.random.default_rng(0))
    fast.specialize(model)
    assert all(fast.path(model, algorithm=a) == 'generated' for a in ('rnea', 'crba', 'aba', 'regressor'))
    assert_fast_equals_reference(model, np.random.default_rng(1))


def test_regressor_has_the_base_wrench_rows_and_one_block_per_body(robot):
    """tau = Y pi with 10 parameters per body; on a floating base the first rows are the base wrench, which gravity
    alone makes nonzero (the weight of the robot), so identification needs no joint torque sensor there."""
    _, root_joint, model = robot
    rng = np.random.default_rng(6)
    q, qd, qdd = random_configuration(model, rng), rng.normal(size=model.nv), rng.normal(size=model.nv)
    Y = algorithms.regressor(model, q, qd, qdd, viscous=True)
    assert Y.shape == (model.nv, 10 * model.nb + model.nv)
    pi = algorithms.standard_parameters(model, viscous=True)
    np.testing.assert_allclose(Y @ pi, algorithms.rnea(model, q, qd, qdd) + model.damping * qd, rtol=1e-10, atol=1e-10)
    assert len(algorithms.parameter_names(model, viscous=True)) == Y.shape[1]


def test_numeric_base_parameters_of_a_free_body_are_all_ten():
    """A free rigid body's wrench, f = m a_o + ([alpha]x + [omega]x^2) h and n = Ibar alpha + omega x Ibar omega -
    a_o x h (the base-wrench rows of the regressor), determines all 10 of its parameters when a_o, alpha, omega
    vary freely: a floating base identifies them all."""
    from robot_dynamics_ros.parameters.base_numeric import numeric_base_parameters
    xml = random_urdf(9, 1).replace('type="revolute"', 'type="fixed"')
    assert len(numeric_base_parameters(load_urdf(xml, root_joint='floating')).names) == 10


def test_frame_placements_and_jacobians_match_pinocchio(robot):
    xml, root_joint, model = robot
    oracle = BlockOracle(xml, model, root_joint)
    pm, data = oracle.pin_model, oracle.data
    for q, _, _ in random_states(model, seed=8, n=3):
        pq = oracle.q(q)
        pin.framesForwardKinematics(pm, data, pq)
        placements = algorithms.frame_placements(model, q)
        for link in model.frames:
            frame = pm.getFrameId(link)
            np.testing.assert_allclose(placements[link].R, data.oMf[frame].rotation, atol=1e-12)
            np.testing.assert_allclose(placements[link].p, data.oMf[frame].translation, atol=1e-12)
            J = pin.computeFrameJacobian(pm, data, pq, frame, pin.LOCAL_WORLD_ALIGNED)[:, oracle.v_index]
            np.testing.assert_allclose(algorithms.frame_jacobian(model, q, link), np.vstack([J[3:], J[:3]]),
                                       atol=1e-12)


def test_the_closed_form_refuses_a_floating_base_with_a_clear_error():
    """Gautier-Khalil's closed form is for fixed-base chains: an MDHError naming the reason (the CLI then points to
    the numeric method), not an assertion deep in the MDH code."""
    from robot_dynamics_ros.model.mdh import MDHError
    from robot_dynamics_ros.parameters import closed_form_base_parameters
    with pytest.raises(MDHError, match='floating or planar'):
        closed_form_base_parameters(load_urdf(BUNDLED_URDF, root_joint='floating'))


def _pinocchio_task_compliance(oracle, q, links, reference):
    """J M^-1 J^T from Pinocchio's frame Jacobians (rows reordered to our [angular; linear]) and M^-1."""
    pm, data, pq = oracle.pin_model, oracle.data, oracle.q(q)
    Minv = pin.computeMinverse(pm, data, pq)
    Minv = np.triu(Minv) + np.triu(Minv, 1).T
    J = np.vstack([pin.computeFrameJacobian(pm, data, pq, pm.getFrameId(link), reference)[[3, 4, 5, 0, 1, 2]]
                   for link in links])
    return J @ Minv @ J.T


@pytest.mark.parametrize('name', sorted(n for n, (_, root) in ROBOTS.items() if root == 'floating'))
def test_operational_space_inertia_matches_pinocchio_on_a_floating_base(name):
    """Jain's compliance scatter (eq. 24-25) through a free-flyer root: Lambda of the last link's frame, 6 rows,
    against (J M^-1 J^T)^-1 from Pinocchio, in both frame references."""
    xml, root_joint = ROBOTS[name]
    model = load_urdf(xml, root_joint=root_joint)
    oracle = BlockOracle(xml, model, root_joint)
    link = list(model.frames)[-1]
    for q, _, _ in random_states(model, seed=11, n=3):
        for reference, pin_reference in (('local_world_aligned', pin.LOCAL_WORLD_ALIGNED), ('local', pin.LOCAL)):
            theirs = np.linalg.inv(_pinocchio_task_compliance(oracle, q, [link], pin_reference))
            ours = algorithms.operational_space_inertia(model, q, [link], reference=reference)
            assert relative_error(ours, theirs) < 1e-9


def test_operational_space_inertia_of_four_feet_matches_pinocchio():
    """What a legged controller asks for: the inertia seen at the four feet's positions (12 rows: the rows
    [3, 4, 5] of each foot frame) of the floating quadruped, against Pinocchio."""
    xml, root_joint = ROBOTS['quadruped']
    model = load_urdf(xml, root_joint=root_joint)
    oracle = BlockOracle(xml, model, root_joint)
    feet = ['FL_calf', 'FR_calf', 'RL_calf', 'RR_calf']
    rows = [6 * k + r for k in range(4) for r in (3, 4, 5)]
    for q, _, _ in random_states(model, seed=12, n=3):
        theirs = np.linalg.inv(_pinocchio_task_compliance(oracle, q, feet, pin.LOCAL_WORLD_ALIGNED)[np.ix_(rows, rows)])
        ours = algorithms.operational_space_inertia(model, q, feet, rows=rows)
        assert relative_error(ours, theirs) < 1e-9


@pytest.mark.parametrize('name', ['quadruped', 'floating_arm7', 'planar_base_arm7'])
def test_batched_regressor_equals_the_reference_on_floating_and_planar_bases(name):
    """fast.regressor_batch (the compiled batch kernel, or the same kernel as plain Python) row by row against the
    reference regressor, with friction columns."""
    xml, root_joint = ROBOTS[name]
    model = load_urdf(xml, root_joint=root_joint)
    states = list(random_states(model, seed=13, n=4))
    Q, QD, QDD = (np.array(column) for column in zip(*states))
    Y = fast.regressor_batch(model, Q, QD, QDD, viscous=True, coulomb=True)
    for k in range(len(Q)):
        np.testing.assert_allclose(Y[k], algorithms.regressor(model, Q[k], QD[k], QDD[k], viscous=True, coulomb=True),
                                   rtol=1e-10, atol=1e-10)


def test_identification_on_a_floating_base_recovers_the_base_parameters():
    """Gautier-Khalil on a floating quadruped: efforts of the URDF's model (the base-wrench rows included, as a
    force plate or a contact model gives them) over random states; the identified base parameters equal the
    URDF's projection to least-squares precision, and the trunk's regrouped mass MR1 is the robot's total mass
    (the base wrench weighs the whole robot; bolted down no mass of the trunk is identifiable)."""
    import xml.etree.ElementTree as ET
    from robot_dynamics_ros.parameters.base_numeric import numeric_base_parameters
    from robot_dynamics_ros.parameters.identification import identify_base_parameters
    xml, root_joint = ROBOTS['quadruped']
    model = load_urdf(xml, root_joint=root_joint)
    states = list(random_states(model, seed=14, n=60))
    q, qd, qdd = (np.array(column) for column in zip(*states))
    tau = np.array([algorithms.rnea(model, *state) for state in states])
    base = numeric_base_parameters(model)
    result, _ = identify_base_parameters(model, q, qd, qdd, tau, base=base)
    truth = base.project(algorithms.standard_parameters(model))
    np.testing.assert_allclose(result.beta, truth, rtol=1e-7, atol=1e-9 * np.max(np.abs(truth)))
    total_mass = sum(float(mass.get('value')) for mass in ET.fromstring(xml).iter('mass'))
    assert abs(result.beta[base.names.index('MR1')] - total_mass) < 1e-9 * total_mass
