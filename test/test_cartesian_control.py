"""The Cartesian laws (control/cartesian.py) against Pinocchio on public arms, and their physics in process with the
Simulator (issue 31).

Bounds. Pinocchio agreement: the quantities are computed in double precision by different algorithms (our scatter and
U D U^T, Pinocchio's forward kinematics and M^-1): 1e-9 relative to each quantity's size. Impedance: at rest under a
constant wrench w on the end effector with the target held, K e = -w exactly (gravity is compensated by g(q), the
damping acts on velocity only, the nullspace projector adds no task force): the issue asks for F/K within 5 %.
"""
import os

import numpy as np
import pytest

from robot_dynamics_ros import load_urdf
from robot_dynamics_ros.control.cartesian import (JOINT_SPEED_BRAKING, JOINT_SPEED_FADE, LAWS, MAX_TARGET_GAP,
                                                  CartesianController, CartesianTarget, EndEffector, above_floor,
                                                  default_end_effector, dexterous_posture, manipulability,
                                                  rotation_matrix, rotation_vector)
from robot_dynamics_ros.simulation.simulator import Simulator
from robot_dynamics_ros.spatial import matrix_to_quaternion

from conftest import ROOT

REAL = os.path.join(ROOT, 'test', 'urdf', 'real')
ARMS = ('ur5', 'panda', 'kinova_gen3', 'xarm7', 'z1')
TOLERANCE = 1e-9


def load(robot):
    with pytest.warns() if robot == 'panda' else _nothing():   # Panda's CAD inertias load with a warning
        return load_urdf(os.path.join(REAL, robot + '.urdf'))


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def close(ours, theirs):
    return np.max(np.abs(ours - theirs)) <= TOLERANCE * max(1.0, np.max(np.abs(theirs)))


def pinocchio_oracle(robot):
    """(our model, Pinocchio's oracle of it, the id of our default end effector's frame in Pinocchio's model)."""
    pytest.importorskip('pinocchio')
    from oracle import PinocchioOracle
    model = load(robot)
    oracle = PinocchioOracle(os.path.join(REAL, robot + '.urdf'), model)
    return model, oracle, oracle.pin_model.getFrameId(default_end_effector(model))


def pinocchio_frame(oracle, frame, q, qd):
    """Pinocchio at our state (q, qd): the frame's placement, its LOCAL_WORLD_ALIGNED Jacobian and classical
    acceleration with qdd = 0 (Jdot qd), both in our row order [angular; linear], M^-1 and h(q, qd)."""
    import pinocchio as pin
    pm, pd, v = oracle.pin_model, oracle.data, oracle.v_index
    pq, pv = oracle.q(q), np.zeros(pm.nv)
    pv[v] = qd
    pin.forwardKinematics(pm, pd, pq, pv, np.zeros(pm.nv))
    pin.updateFramePlacements(pm, pd)
    rows = [3, 4, 5, 0, 1, 2]   # Pinocchio's [linear; angular] -> our [angular; linear]
    J = pin.computeFrameJacobian(pm, pd, pq, frame, pin.LOCAL_WORLD_ALIGNED)[rows][:, v]
    classical = pin.getFrameClassicalAcceleration(pm, pd, frame, pin.LOCAL_WORLD_ALIGNED)
    h = pin.rnea(pm, pd, pq, pv, np.zeros(pm.nv))[v]
    return pd.oMf[frame], J, np.concatenate([classical.angular, classical.linear]), oracle.minv(q), h


@pytest.mark.parametrize('robot', ARMS)
def test_law_matches_pinocchio_at_random_states(robot):
    """Pose, Jacobian, Jdot qd, Lambda and the operational-space efforts from Pinocchio's quantities (frame
    placement, LOCAL_WORLD_ALIGNED Jacobian and classical acceleration, M^-1, RNEA) at random states."""
    model, oracle, frame = pinocchio_oracle(robot)
    gains = dict(stiffness=[30.0, 40.0, 50.0, 400.0, 500.0, 600.0], damping_ratio=0.8, nullspace_stiffness=7.0)
    controller = CartesianController(model, default_end_effector(model), 'operational_space', **gains)
    rng = np.random.default_rng(3)
    checked = 0
    for _ in range(20):
        q, qd = model.random_configuration(rng), rng.normal(size=model.nv)
        placement, J, Jdot_qd, M_inverse, h = pinocchio_frame(oracle, frame, q, qd)
        Lambda = np.linalg.inv(J @ M_inverse @ J.T)
        ee = controller.ee
        ee.update(q, qd)
        assert close(ee.R, placement.rotation) and close(ee.p, placement.translation)
        assert close(ee.J, J) and close(ee.Jdot_qd, Jdot_qd)
        ours, damped = controller.task_inertia(q)
        if damped:   # near a singularity Lambda is damped on purpose: compared where it is not
            continue
        checked += 1
        assert close(ours, Lambda)
        # the law: a target 2 cm and 0.1 rad away, moving
        R_ref = rotation_matrix(np.array([0.1, -0.05, 0.02])) @ placement.rotation
        p_ref, velocity_ref = placement.translation + [0.02, -0.01, 0.015], rng.normal(size=6) * 0.1
        tau = controller.update(q, qd, R_ref, p_ref, velocity_ref)
        e = np.concatenate([rotation_vector(R_ref @ placement.rotation.T), p_ref - placement.translation])
        K = np.array(gains['stiffness'])
        force = Lambda @ (K * e + 2 * 0.8 * np.sqrt(K) * (velocity_ref - J @ qd) - Jdot_qd)
        M = np.linalg.inv(M_inverse)
        tau0 = 7.0 * (controller.posture - q) - 2 * 0.8 * np.sqrt(7.0 * np.diag(M)) * qd
        expected = J.T @ force + h + tau0 - J.T @ Lambda @ J @ M_inverse @ tau0
        limit = model.effort_limit
        assert close(tau, np.clip(expected, -limit, limit))
    assert checked >= 10   # most random states are away from singularities


@pytest.mark.parametrize('robot', ('ur5', 'xarm7'))
def test_braked_law_with_nullspace_matches_pinocchio(robot):
    """The terms that use M (the nullspace damping's diag M, the brake's M (qd - clip(qd))), computed from U D U^T,
    against Pinocchio's M: joint speeds past the guard fade the task and nullspace terms by the authority
    1 - max_k |excess_k| / ((JOINT_SPEED_FADE - 1) limit_k) and brake with c M excess, c = JOINT_SPEED_BRAKING / T."""
    model, oracle, frame = pinocchio_oracle(robot)
    limit, period, K, kn = np.full(model.nv, 0.8), 1e-3, np.array([30.0, 40.0, 50.0, 400.0, 500.0, 600.0]), 7.0
    controller = CartesianController(model, default_end_effector(model), 'operational_space', stiffness=K,
                                     damping_ratio=0.8, nullspace_stiffness=kn, joint_speed_limit=limit, period=period)
    rng = np.random.default_rng(5)
    checked = 0
    for _ in range(20):
        q, qd = model.random_configuration(rng), rng.uniform(-1.0, 1.0, size=model.nv)   # some past the guard
        placement, J, Jdot_qd, M_inverse, h = pinocchio_frame(oracle, frame, q, qd)
        M, Lambda = np.linalg.inv(M_inverse), np.linalg.inv(J @ M_inverse @ J.T)
        R_ref = rotation_matrix(np.array([0.1, -0.05, 0.02])) @ placement.rotation
        p_ref = placement.translation + [0.02, -0.01, 0.015]
        tau = controller.update(q, qd, R_ref, p_ref, np.zeros(6))
        if controller.singular:
            continue
        excess = qd - np.clip(qd, -limit, limit)
        authority = max(0.0, 1.0 - np.max(np.abs(excess) / ((JOINT_SPEED_FADE - 1.0) * limit)))
        e = np.concatenate([rotation_vector(R_ref @ placement.rotation.T), p_ref - placement.translation])
        force = Lambda @ (K * e + 2 * 0.8 * np.sqrt(K) * (-J @ qd) - Jdot_qd)
        tau0 = kn * (controller.posture - q) - 2 * 0.8 * np.sqrt(kn * np.diag(M)) * qd
        expected = authority * (J.T @ force + tau0 - J.T @ Lambda @ J @ M_inverse @ tau0) + h \
            - JOINT_SPEED_BRAKING / period * (M @ excess)
        assert close(tau, np.clip(expected, -model.effort_limit, model.effort_limit))
        checked += authority < 1.0
    assert checked >= 10   # most states have a joint past its guard (P = 1 - 0.8^nv)


def test_above_floor_is_the_least_eigenvalue_against_the_floor():
    rng = np.random.default_rng(0)
    for _ in range(200):
        Q = np.linalg.qr(rng.normal(size=(6, 6)))[0]
        eigenvalues = rng.uniform(0.0, 2e-4, size=6)   # around the floor 1e-4
        A = (Q * eigenvalues) @ Q.T
        assert above_floor(A, 1e-4) == (np.min(eigenvalues) > 1e-4)


def test_rotation_vector_inverts_rotation_matrix_also_near_pi():
    rng = np.random.default_rng(0)
    for angle in [0.0, 1e-8, 0.3, 2.0, np.pi - 1e-3, np.pi - 1e-6, np.pi]:
        axis = rng.normal(size=3)
        w = axis / np.linalg.norm(axis) * angle
        R = rotation_matrix(w)
        assert np.allclose(rotation_matrix(rotation_vector(R)), R, atol=1e-9)
        assert np.isclose(np.linalg.norm(rotation_vector(R)), angle, atol=1e-6)


@pytest.mark.parametrize('robot, link', [('ur5', 'tool0'), ('panda', 'fer_link8'), ('xarm7', 'link_eef')])
def test_default_end_effector_is_the_tip_of_the_longest_chain(robot, link):
    assert default_end_effector(load(robot)) == link


def test_target_rejects_bad_poses_with_a_reason_and_keeps_the_last():
    target = CartesianTarget(np.eye(3), np.zeros(3))
    for position, quaternion, reason in (([np.nan, 0, 0], [0, 0, 0, 1], 'not finite'),
                                         ([0, 0, 0], [0, 0, np.inf, 1], 'not finite'),
                                         ([0, 0, 0], [0, 0, 0, 2], 'not a unit quaternion'),
                                         ([0, 0, 0], [0, 0, 0, 0], 'not a unit quaternion')):
        with pytest.raises(ValueError, match=reason):
            target.set(position, quaternion, 0.01)
    assert np.array_equal(target.p, np.zeros(3)) and np.array_equal(target.R, np.eye(3))


def test_target_interpolates_targets_stamped_ahead_extrapolates_then_holds():
    """Targets 10 ms apart moving at 0.1 m/s and 1 rad/s about z, stamped ahead of the controller's time: the reference
    is interpolated between them; after the last one it moves on for MAX_TARGET_GAP, then holds the last target."""
    target = CartesianTarget(np.eye(3), np.zeros(3), stamp=1.0)
    for k in range(1, 4):
        R = rotation_matrix(np.array([0.0, 0.0, 0.01 * k]))
        target.set([0.001 * k, 0.0, 0.0], matrix_to_quaternion(R), 1.0 + 0.01 * k)
    R_ref, p_ref, velocity = target.sample(1.015)   # between the first and the second target
    assert np.allclose(velocity, [0, 0, 1.0, 0.1, 0, 0])
    assert np.allclose(p_ref, [0.0015, 0, 0]) and np.allclose(R_ref, rotation_matrix(np.array([0, 0, 0.015])))
    R_ref, p_ref, velocity = target.sample(1.05)   # after the last target: on the extrapolation
    assert np.allclose(p_ref, [0.005, 0, 0]) and np.allclose(velocity, [0, 0, 1.0, 0.1, 0, 0])
    R_ref, p_ref, velocity = target.sample(1.03 + MAX_TARGET_GAP + 1e-6)   # the stream stopped: hold the last
    assert np.array_equal(velocity, np.zeros(6)) and np.allclose(p_ref, [0.003, 0, 0])
    target.set([0.5, 0.0, 0.0], [0.0, 0.0, 0.0, 1.0], 1.0)   # stamped before the last: a new plan, held at once
    R_ref, p_ref, velocity = target.sample(2.0)
    assert np.allclose(p_ref, [0.5, 0, 0]) and np.array_equal(velocity, np.zeros(6))


def test_singular_posture_is_damped_and_the_efforts_stay_finite():
    """UR5 at q = 0 is stretched and its wrist axes align: J loses rank."""
    model = load('ur5')
    for law in LAWS:
        controller = CartesianController(model, 'tool0', law, nullspace_stiffness=10.0)
        q = np.zeros(model.nv)
        controller.ee.update(q, q)
        tau = controller.update(q, np.full(model.nv, 0.1), controller.ee.R, controller.ee.p + [0.05, 0, 0],
                                np.zeros(6))
        assert controller.singular
        assert np.all(np.isfinite(tau))


def test_dexterous_posture_is_away_from_singularities():
    model = load('ur5')
    q = dexterous_posture(model, 'tool0')
    ee = EndEffector(model, 'tool0')
    assert manipulability(ee, q) > 10 * manipulability(ee, np.zeros(model.nv))
    assert manipulability(ee, q) > 0.05


@pytest.mark.parametrize('axis', range(6))
def test_impedance_steady_displacement_is_wrench_over_stiffness(axis):
    """UR5, K = 500 N/m, 50 N m/rad: a 10 N force (1 N m torque) held on tool0 moves it F/K = 20 mm (0.02 rad)
    along (about) that axis, within 5 %, and not along the others."""
    model = load('ur5')
    q0 = dexterous_posture(model, 'tool0')
    sim = Simulator(model, 1e-3, initial_positions=q0)
    controller = CartesianController(model, 'tool0', 'impedance', posture=q0)
    controller.ee.update(q0, np.zeros(model.nv))
    R0, p0 = controller.ee.R.copy(), controller.ee.p.copy()
    wrench = np.zeros(6)
    wrench[axis] = 1.0 if axis < 3 else 10.0   # [torque; force]
    sim.apply_wrench('tool0', wrench[3:], wrench[:3])
    for _ in range(2000):
        sim.set_command(controller.update(sim.q, sim.qd, R0, p0, np.zeros(6)))
        sim.step()
    displacement = -controller.error   # e = target - current
    expected = wrench / controller.stiffness
    assert abs(displacement[axis] - expected[axis]) <= 0.05 * expected[axis]
    # K d = w on every axis: the other five answer with no wrench, i.e. within 5 % of the applied one
    assert np.all(np.abs(controller.stiffness * displacement - wrench) <= 0.05 * wrench[axis])


def test_held_wrench_on_a_floating_base_accelerates_it_by_f_over_m():
    """A 2 kg box (test/urdf/box.urdf, centre of mass at its origin) floating without gravity or ground: a held 4 N
    force gives it 2 m/s^2 every step until a zero wrench removes it; bad wrenches are refused and the held one
    stays."""
    box = load_urdf(os.path.join(ROOT, 'test', 'urdf', 'box.urdf'), root_joint='floating')
    sim = Simulator(box, 1e-3, gravity=[0.0, 0.0, 0.0])
    sim.apply_wrench('box', [4.0, 0.0, 0.0])
    for link, force in (('no_such_link', [1.0, 0, 0]), ('box', [np.nan, 0, 0])):
        with pytest.raises(ValueError, match='no link|NaN or Inf'):
            sim.apply_wrench(link, force)
    for _ in range(10):
        sim.step()
    assert sim.qd[:3] == pytest.approx([10 * 1e-3 * 2.0, 0.0, 0.0], abs=1e-12)
    sim.apply_wrench('box', [0.0, 0.0, 0.0])
    for _ in range(10):
        sim.step()
    assert sim.qd[:3] == pytest.approx([10 * 1e-3 * 2.0, 0.0, 0.0], abs=1e-12)   # coasting
    assert sim.held_wrench is None


def test_bringup_cartesian_refuses_a_floating_base_in_one_line():
    from conftest import assert_one_line_error, cli
    assert_one_line_error(cli('bringup', '--controller', 'cartesian', '--root-joint', 'floating'),
                          '--controller cartesian', 'fixed-base')
