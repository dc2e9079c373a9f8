"""Contact-consistent inverse dynamics (control/contact_inverse_dynamics.py) on a floating quadruped, against Pinocchio's equations
of motion and frame Jacobians, and against the statics that must hold when it stands still."""
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from oracle import BlockOracle, pin
from random_robots import quadruped_urdf
from robot_dynamics_ros import load_urdf, neutral
from robot_dynamics_ros.control.contact_inverse_dynamics import (base_error, contact_inverse_dynamics,
                                                                 point_acceleration_bias, point_jacobians)

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


def test_point_jacobian_and_acceleration_bias_match_pinocchio(quadruped12):
    """J_p and Jdot_p v of each foot point against Pinocchio (a frame added at the point; its classical
    acceleration with zero joint accelerations)."""
    xml, model = quadruped12
    oracle = BlockOracle(xml, model, 'floating')
    q, v = standing(model, np.random.default_rng(1))
    np.testing.assert_allclose(point_jacobians(model, q, FEET),
                               np.vstack([pinocchio_point_jacobian(oracle, q, link, offset) for link, offset in FEET]),
                               atol=1e-12)
    pm = oracle.pin_model
    probes = []
    for link, offset in FEET:
        parent = pm.getFrameId(link)
        placement = pm.frames[parent].placement * pin.SE3(np.eye(3), np.asarray(offset, dtype=float))
        probes.append(pm.addFrame(pin.Frame(link + '_foot', pm.frames[parent].parentJoint, parent, placement,
                                            pin.FrameType.OP_FRAME)))
    data = pm.createData()
    pin.forwardKinematics(pm, data, oracle.q(q), oracle.v(v), np.zeros(pm.nv))
    pin.updateFramePlacements(pm, data)
    theirs = [pin.getFrameClassicalAcceleration(pm, data, probe, pin.LOCAL_WORLD_ALIGNED).linear for probe in probes]
    np.testing.assert_allclose(point_acceleration_bias(model, q, v, FEET), np.concatenate(theirs), atol=1e-8)


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
