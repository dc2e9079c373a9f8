"""Contact-consistent inverse dynamics (control/contact_inverse_dynamics.py) on a floating quadruped, against Pinocchio's equations
of motion and frame Jacobians, and against the statics that must hold when it stands still. The contact points'
Jdot v (algorithms/point_acceleration.py) against Pinocchio's classical accelerations and a finite difference; the
program kept and updated in place (ContactInverseDynamics) against a new solver each call, today's per-tick build,
and cvxpy."""
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from oracle import BlockOracle, pin
from random_robots import quadruped_urdf
from robot_dynamics_ros import load_urdf, neutral
from robot_dynamics_ros.control.contact_inverse_dynamics import (FORCE_WEIGHT, ContactInverseDynamics, base_error,
                                                                 contact_inverse_dynamics, point_acceleration_bias,
                                                                 point_jacobians)
from robot_dynamics_ros.model.configuration import integrate

pytest.importorskip('clarabel')
FEET = [(f'{leg}_calf', (0.0, 0.0, -0.2)) for leg in ('FL', 'FR', 'RL', 'RR')]
G = 9.81


@pytest.fixture(scope='module')
def quadruped12():
    """The generated 12-DOF quadruped (random_robots.quadruped_urdf: feet at the calves' ends, no collision
    geometry; not conftest's bundled `quadruped`): its URDF, for Pinocchio, and its model on a free-flyer root."""
    xml = quadruped_urdf()
    return xml, load_urdf(xml, root_joint='floating')


def standing(model, rng=None):
    """Base 0.3 m up, legs bent (thigh 0.6 rad, knee -1.2 rad), optionally a random joint velocity."""
    q = neutral(model)
    q[2] = 0.3
    for leg in ('FL', 'FR', 'RL', 'RR'):
        q[model.joint_q_index[model.joint_names.index(f'{leg}_thigh_joint')]] = 0.6
        q[model.joint_q_index[model.joint_names.index(f'{leg}_calf_joint')]] = -1.2
    v = np.zeros(model.nv) if rng is None else 0.3 * rng.normal(size=model.nv)
    return q, v


def feet_still(model, q, base_acceleration):
    """The acceleration with this linear base acceleration (no rotation), at rest, and the joints' accelerations
    that keep the feet still (J_c qdd = 0)."""
    desired = np.zeros(model.nv)
    desired[:3] = base_acceleration
    Jc = point_jacobians(model, q, FEET)
    joints = np.asarray(model.joint_v_index)
    desired[joints] = np.linalg.solve(Jc[:, joints], -Jc[:, :6] @ desired[:6])
    return desired


def pinocchio_point_jacobian(oracle, q, link, offset):
    pm, data, pq = oracle.pin_model, oracle.data, oracle.q(q)
    pin.framesForwardKinematics(pm, data, pq)
    frame = pm.getFrameId(link)
    J = pin.computeFrameJacobian(pm, data, pq, frame, pin.LOCAL_WORLD_ALIGNED)[:, oracle.v_index]
    r = data.oMf[frame].rotation @ np.asarray(offset)
    return J[:3] + np.cross(J[3:].T, r).T      # v_p = v_o + omega x r (Pinocchio's rows are [linear; angular])


def random_state(model, rng):
    """Any base pose (a random orientation), joints within +-1 rad of the stand, velocities of about 1 (m|rad)/s."""
    q, _ = standing(model)
    q[3:7] = rng.normal(size=4)
    q[3:7] /= np.linalg.norm(q[3:7])
    q[7:] += rng.uniform(-1.0, 1.0, size=model.nv - 6)
    return q, rng.normal(size=model.nv)


def test_point_jacobian_and_acceleration_bias_match_pinocchio(quadruped12):
    """J_p and Jdot_p v of each foot point against Pinocchio (a frame added at the point; its classical
    acceleration with zero joint accelerations), at random states."""
    xml, model = quadruped12
    oracle = BlockOracle(xml, model, 'floating')
    pm = BlockOracle(xml, model, 'floating').pin_model   # a copy with frames at the points (the oracle's data
    probes = []                                           # would no longer fit it)
    for link, offset in FEET:
        parent = pm.getFrameId(link)
        placement = pm.frames[parent].placement * pin.SE3(np.eye(3), np.asarray(offset, dtype=float))
        probes.append(pm.addFrame(pin.Frame(link + '_foot', pm.frames[parent].parentJoint, parent, placement,
                                            pin.FrameType.OP_FRAME)))
    data = pm.createData()
    rng = np.random.default_rng(1)
    for _ in range(10):
        q, v = random_state(model, rng)
        np.testing.assert_allclose(point_jacobians(model, q, FEET),
                                   np.vstack([pinocchio_point_jacobian(oracle, q, link, offset)
                                              for link, offset in FEET]), atol=1e-12)
        pin.forwardKinematics(pm, data, oracle.q(q), oracle.v(v), np.zeros(pm.nv))
        pin.updateFramePlacements(pm, data)
        theirs = [pin.getFrameClassicalAcceleration(pm, data, probe, pin.LOCAL_WORLD_ALIGNED).linear
                  for probe in probes]
        # exact, both: rounding of terms of size |v|^2 |r| (about 1 m/s^2) only
        np.testing.assert_allclose(point_acceleration_bias(model, q, v, FEET), np.concatenate(theirs), atol=1e-12)


def test_acceleration_bias_is_the_derivative_of_the_jacobian_along_the_motion(quadruped12):
    """Jdot v = d/dt (J(q(t)) v) at t = 0 with q(t) = integrate(q, t v): against a central difference with step
    h = 1e-4 s, whose error is h^2/6 times the third derivative (|v|^3 |r| ~ 10 m/s^2 here: ~2e-8) plus rounding
    (1e-16 |J v| / h ~ 1e-12)."""
    _, model = quadruped12
    rng = np.random.default_rng(2)
    h = 1e-4
    for _ in range(10):
        q, v = random_state(model, rng)
        ahead = point_jacobians(model, integrate(model, q, h * v), FEET) @ v
        behind = point_jacobians(model, integrate(model, q, -h * v), FEET) @ v
        np.testing.assert_allclose(point_acceleration_bias(model, q, v, FEET), (ahead - behind) / (2 * h), atol=1e-6)


def test_standing_still_the_feet_carry_the_weight(quadruped12):
    """Holding still (desired acceleration zero, at rest): qdd = 0, the vertical forces sum to the weight m g (m
    from the URDF's masses), there is no net horizontal force, and tau with the forces satisfies Pinocchio's
    equations of motion M qdd + h = S^T tau + J_c^T f."""
    xml, model = quadruped12
    oracle = BlockOracle(xml, model, 'floating')
    q, v = standing(model)
    tau, qdd, f = contact_inverse_dynamics(model, q, v, np.zeros(model.nv), FEET, friction=0.8)
    mass = sum(float(m.get('value')) for m in ET.fromstring(xml).iter('mass'))
    assert np.max(np.abs(qdd)) < 1e-6
    assert abs(f[:, 2].sum() - mass * G) < 1e-6 * mass * G
    assert np.max(np.abs(f[:, :2].sum(axis=0))) < 1e-6 * mass * G
    generalized = np.zeros(model.nv)
    generalized[model.joint_v_index] = tau
    contact = sum(pinocchio_point_jacobian(oracle, q, link, offset).T @ force for (link, offset), force in zip(FEET, f))
    np.testing.assert_allclose(oracle.rnea(q, v, qdd), generalized + contact, atol=1e-6 * mass * G)


def test_motion_the_cones_allow_is_realised_and_forces_stay_in_them(quadruped12):
    """At rest, asked for a small base acceleration: qdd is the one asked for (feasible), the feet do not
    accelerate (J_c qdd = 0), every force lies in its friction cone and every torque within its limit."""
    xml, model = quadruped12
    q, _ = standing(model)
    desired = feet_still(model, q, (0.2, -0.1, 0.3))   # m/s^2 along the base axes
    mu = 0.8
    tau, qdd, f = contact_inverse_dynamics(model, q, np.zeros(model.nv), desired, FEET, friction=mu)
    np.testing.assert_allclose(qdd, desired, atol=1e-6)
    feet_acceleration = point_jacobians(model, q, FEET) @ qdd
    assert np.max(np.abs(feet_acceleration)) < 1e-6
    assert np.all(np.hypot(f[:, 0], f[:, 1]) <= mu * f[:, 2] + 1e-6)
    assert np.all(np.abs(tau) <= model.effort_limit[model.joint_v_index] + 1e-6)


def test_friction_limits_the_horizontal_acceleration(quadruped12):
    """Asked for a horizontal acceleration of 2 g with mu = 0.2, the feet push sideways with all the friction
    they have, and no more: the net horizontal force is mu times the net normal force, and the centre of mass
    accelerates sideways by at most mu g."""
    xml, model = quadruped12
    q, v = standing(model)
    desired = feet_still(model, q, (2 * G, 0.0, 0.0))
    mu = 0.2
    mass = sum(float(m.get('value')) for m in ET.fromstring(xml).iter('mass'))
    _, _, f = contact_inverse_dynamics(model, q, v, desired, FEET, friction=mu)
    horizontal = np.hypot(*f[:, :2].sum(axis=0))
    assert horizontal <= mu * f[:, 2].sum() * (1 + 1e-6)
    assert horizontal >= mu * f[:, 2].sum() * (1 - 1e-4)   # all the friction there is: the cones' edges
    assert horizontal / mass <= mu * G * (1 + 1e-5)


def test_a_robot_too_weak_to_stand_sags_within_its_limits(quadruped12):
    """Joints limited to 0.01 N m cannot carry the trunk: the torques stay within the limits (the knees at them)
    and the accelerations are the sagging the limits leave, not zero."""
    import dataclasses
    _, model = quadruped12
    limits = model.effort_limit.copy()
    limits[model.joint_v_index] = 0.01   # N m
    weak = dataclasses.replace(model, effort_limit=limits)
    q, v = standing(weak)
    tau, qdd, _ = contact_inverse_dynamics(weak, q, v, np.zeros(weak.nv), FEET, friction=0.8)
    assert np.all(np.abs(tau) <= 0.01 * (1 + 1e-6))
    assert np.max(np.abs(tau)) > 0.01 * (1 - 1e-4)
    assert qdd[2] < -1.0   # m/s^2: the trunk drops


def test_base_error_is_the_base_block_of_difference(quadruped12):
    _, model = quadruped12
    q, _ = standing(model)
    target = q.copy()
    target[0] += 0.05
    error = base_error(model, q, target)
    np.testing.assert_allclose(error[:3], [0.05, 0.0, 0.0], atol=1e-12)
    assert np.all(error[6:] == 0.0)


def random_problem(model, rng):
    """A state near the stand (joints within 0.1 rad, velocities of 0.3 (m|rad)/s) and a desired acceleration of
    about 1 (m|rad)/s^2 per coordinate: mostly feasible, some requests beyond the cones."""
    q, _ = standing(model)
    q[7:] += 0.1 * rng.normal(size=model.nv - 6)
    return q, 0.3 * rng.normal(size=model.nv), rng.normal(size=model.nv)


def test_the_program_updated_in_place_is_a_new_solver_on_the_same_data(quadruped12):
    """ContactInverseDynamics sets the program up once per contact set and updates it in place: over random
    states, the same solution as a new solver set up with the same settings on the same data (Clarabel runs the
    same iterations: equal to rounding), and a new set-up only when the feet in contact change."""
    _, model = quadruped12
    kept, rng = ContactInverseDynamics(model, 0.8, certify=False), np.random.default_rng(3)
    for i in range(20):
        feet = FEET if i < 10 else FEET[:3]
        q, v, desired = random_problem(model, rng)
        fresh = ContactInverseDynamics(model, 0.8, certify=False)
        for ours, theirs in zip(kept(q, v, desired, feet), fresh(q, v, desired, feet)):
            np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-12)
    assert (kept.setups, kept.updates) == (2, 18)


def test_the_certified_minimiser_is_clarabels_solution_and_refused_where_a_constraint_binds(quadruped12):
    """Where the objective's minimiser meets every cone and torque limit it is taken without Clarabel: the same
    accelerations and torques as Clarabel's solve of the same program (within its tolerances, as above: 1e-6 on
    qdd; the torques, of the order of the weight's moments, 1e-6 of the weight times a metre), and its forces inside
    their cones (Clarabel with tolerances of 1e-13; with its defaults the load split, fixed only by the tiny force
    weight, differs by mN m). Desired accelerations of 30 per coordinate ask for more than the cones give: those are
    refused and Clarabel solves them (the same numbers as certify=False's, which never certifies). Joint limits of
    0.01 N m that bind while standing: not certified."""
    import dataclasses
    xml, model = quadruped12
    weight = sum(float(m.get('value')) for m in ET.fromstring(xml).iter('mass')) * G
    certified, clarabel = ContactInverseDynamics(model, 0.8), ContactInverseDynamics(model, 0.8, certify=False)
    tight = ContactInverseDynamics(model, 0.8, certify=False)
    for tolerance in ('tol_gap_abs', 'tol_gap_rel', 'tol_feas', 'tol_ktratio'):
        setattr(tight.settings, tolerance, 1e-13)
    rng = np.random.default_rng(5)
    for i in range(40):
        q, v, desired = random_problem(model, rng)
        desired *= 1.0 if i % 2 else 30.0   # beyond the cones: 30 m/s^2 sideways with mu g = 7.8
        before = certified.certified
        tau, qdd, f = certified(q, v, desired, FEET)
        if certified.certified > before:
            tau_tight, qdd_tight, _ = tight(q, v, desired, FEET)
            np.testing.assert_allclose(qdd, qdd_tight, atol=1e-6)
            np.testing.assert_allclose(tau, tau_tight, atol=1e-6 * weight)
            assert np.all(np.hypot(f[:, 0], f[:, 1]) <= 0.8 * f[:, 2])
        else:   # Clarabel's own answer (its solver updated fewer times: equal to rounding)
            np.testing.assert_allclose(tau, clarabel(q, v, desired, FEET)[0], rtol=1e-12, atol=1e-12)
    assert clarabel.certified == tight.certified == 0
    assert 0 < certified.certified < 40 and certified.updates == 40 - certified.certified - 1
    limits = model.effort_limit.copy()
    limits[model.joint_v_index] = 0.01   # N m
    weak = ContactInverseDynamics(dataclasses.replace(model, effort_limit=limits), 0.8)
    q, v = standing(model)
    tau, _, _ = weak(q, v, np.zeros(model.nv), FEET)
    assert weak.certified == 0 and np.max(np.abs(tau)) > 0.01 * (1 - 1e-4)   # the limits bind


def test_the_program_kept_gives_the_per_tick_builds_solution(quadruped12):
    """Against today's per-tick build (contact_inverse_dynamics: a new solver each call, Clarabel's default
    settings, which scale the data), at random states. The accelerations are the program's first objective
    (weight 1): the same within the solvers' feasibility tolerance (1e-8 relative to data of order |M| |qdd| ~ 100).
    The net contact force follows from them through the base rows: the same within that tolerance times the weight.
    The split of the load between the feet is fixed only by the FORCE_WEIGHT term: a solve within duality gap g
    of the optimum has ||f - f*||^2 <= 2 g / FORCE_WEIGHT (the objective's curvature in f), g <= 1e-8 (1 + |cost|)
    (Clarabel's default gap tolerances), so the two differ by at most twice that."""
    xml, model = quadruped12
    weight = sum(float(m.get('value')) for m in ET.fromstring(xml).iter('mass')) * G
    kept, rng = ContactInverseDynamics(model, 0.8), np.random.default_rng(4)
    for _ in range(20):
        q, v, desired = random_problem(model, rng)
        _, qdd, f = kept(q, v, desired, FEET)
        _, qdd_before, f_before = contact_inverse_dynamics(model, q, v, desired, FEET, 0.8)
        np.testing.assert_allclose(qdd, qdd_before, atol=1e-6)
        np.testing.assert_allclose(f.sum(axis=0), f_before.sum(axis=0), atol=1e-6 * weight)
        cost = abs(0.5 * qdd @ qdd - desired @ qdd + 0.5 * FORCE_WEIGHT * np.sum(f * f))
        split = 2.0 * np.sqrt(2.0 * 1e-8 * (1.0 + cost) / FORCE_WEIGHT)
        assert np.linalg.norm(f - f_before) <= split
    assert kept.setups == 1


def test_the_program_kept_solves_the_cone_program_as_cvxpy_does(quadruped12):
    """The same program written independently in cvxpy (equations of motion with Pinocchio's M and h, the feet's
    acceleration with our Jacobians, Coulomb cones, effort limits) and solved to tighter tolerances: the same
    accelerations (within the feasibility tolerance, as above), torques that with their forces satisfy the equations
    of motion, and a load split within the gap bounds above (cvxpy's with gap tolerances 1e-10)."""
    cp = pytest.importorskip('cvxpy')
    xml, model = quadruped12
    oracle = BlockOracle(xml, model, 'floating')
    kept, rng, mu = ContactInverseDynamics(model, 0.8), np.random.default_rng(5), 0.8
    joints = np.asarray(model.joint_v_index)
    for _ in range(5):
        q, v, desired = random_problem(model, rng)
        tau, qdd, f = kept(q, v, desired, FEET)
        M, h = oracle.crba(q), oracle.rnea(q, v, np.zeros(model.nv))
        Jc, bias = point_jacobians(model, q, FEET), point_acceleration_bias(model, q, v, FEET)
        a, forces, torques = cp.Variable(model.nv), cp.Variable(3 * len(FEET)), cp.Variable(len(joints))
        actuation = np.zeros((model.nv, len(joints)))
        actuation[joints, np.arange(len(joints))] = 1.0
        constraints = [M @ a + h == actuation @ torques + Jc.T @ forces, Jc @ a + bias == 0,
                       cp.abs(torques) <= model.effort_limit[joints]]
        constraints += [cp.SOC(mu * forces[3 * c + 2], forces[3 * c:3 * c + 2]) for c in range(len(FEET))]
        problem = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(a - desired) + 0.5 * FORCE_WEIGHT * cp.sum_squares(forces)),
                             constraints)
        problem.solve(solver=cp.CLARABEL, tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
        assert problem.status == 'optimal'
        np.testing.assert_allclose(qdd, a.value, atol=1e-6)
        generalized = actuation @ tau + Jc.T @ f.ravel()
        np.testing.assert_allclose(M @ qdd + h, generalized, atol=1e-6 * np.abs(h).max())
        cost = abs(0.5 * qdd @ qdd - desired @ qdd + 0.5 * FORCE_WEIGHT * np.sum(f * f))
        ours, theirs = (np.sqrt(2.0 * tolerance * (1.0 + cost) / FORCE_WEIGHT) for tolerance in (1e-8, 1e-10))
        assert np.linalg.norm(f.ravel() - forces.value) <= ours + theirs
