"""The legged controller's kept contact program (ContactInverseDynamics: the equalities eliminated, in units of the
robot's weight, updated in place) against the per-tick build (contact_inverse_dynamics: the program in (qdd, f) in
newtons, the formulation the controller had before): on the public quadrupeds of example-robot-data (A1, Go1, ANYmal
C) at random states near their SRDF stance, and on the generated quadruped with every kind of contact set."""
import warnings

import numpy as np
import pytest

from conftest import example_robot_data
from random_robots import quadruped_urdf
from robot_dynamics_ros import load_srdf, load_urdf
from robot_dynamics_ros.control.contact_inverse_dynamics import (FORCE_WEIGHT, ContactInverseDynamics,
                                                                 contact_inverse_dynamics, point_acceleration_bias,
                                                                 point_jacobians)
from robot_dynamics_ros.model.collision import contact_points_from_urdf
from robot_dynamics_ros.model.srdf import stance_configuration

pytest.importorskip('clarabel')
from robot_dynamics_ros.control.standing import StandingController  # noqa: E402  (needs clarabel

ROBOTS = {   # robot -> URDF, SRDF in example-robot-data's robots/ folder
    'a1': ('a1_description/urdf/a1.urdf', 'a1_description/srdf/a1.srdf'),
    'go1': ('go1_description/urdf/go1.urdf', 'go1_description/srdf/go1.srdf'),
    'anymal_c': ('anymal_c_simple_description/urdf/anymal.urdf', 'anymal_c_simple_description/srdf/anymal.srdf'),
}
MU = 0.8
GAP = 1e-8   # Clarabel's default gap tolerances, absolute and relative: both solves are within GAP (1 + |cost|)


def public(robot):
    """(model on a free-flyer root, its stance q, the standing controller of its SRDF feet)."""
    urdf, srdf_path = (example_robot_data(path) for path in ROBOTS[robot])
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        model = load_urdf(urdf, root_joint='floating')
        points = contact_points_from_urdf(urdf)
    srdf = load_srdf(srdf_path)
    _, q, _ = stance_configuration(model, srdf)
    return model, q, StandingController(model, points, 0.0, MU, feet=srdf.feet)


def assert_same_solution(model, kept, q, v, desired, feet):
    """The kept program's (tau, qdd) are the per-tick build's within the solvers' tolerance. A solve within gap g
    of the optimum is within ||qdd - qdd*|| <= sqrt(2 g) and ||f - f*|| <= sqrt(2 g / FORCE_WEIGHT) of it (the
    objective's curvature), so the two solves' accelerations differ by at most twice the first, and their torques
    tau = M_j qdd + h_j - J_cj^T f by at most ||M_j|| and ||J_cj|| times twice those. Returns the torques'
    difference as a fraction of that bound."""
    tau, qdd, f = kept(q, v, desired, feet)
    tau_before, qdd_before, _ = contact_inverse_dynamics(model, q, v, desired, feet, MU)
    cost = abs(0.5 * qdd @ qdd - desired @ qdd + 0.5 * FORCE_WEIGHT * np.sum(f * f))
    gap = GAP * (1.0 + cost)
    joints = np.asarray(model.joint_v_index)
    M_j = kept.M[joints]   # filled at this q by the call
    J_cj = point_jacobians(model, q, feet)[:, joints] if feet else np.zeros((0, len(joints)))
    assert np.linalg.norm(qdd - qdd_before) <= 2.0 * np.sqrt(2.0 * gap)
    bound = 2.0 * (np.linalg.norm(M_j, 2) * np.sqrt(2.0 * gap)
                   + np.linalg.norm(J_cj, 2) * np.sqrt(2.0 * gap / FORCE_WEIGHT))
    assert np.max(np.abs(tau - tau_before)) <= bound
    return np.max(np.abs(tau - tau_before)) / bound


@pytest.mark.parametrize('robot', sorted(ROBOTS))
def test_the_kept_program_gives_the_torques_of_the_per_tick_build(robot):
    """Joints within 0.1 rad of the stance, velocities of 0.3 (m|rad)/s, desired accelerations of 1 (m|rad)/s^2
    per coordinate, the feet's lowest points held."""
    model, stance, controller = public(robot)
    kept, rng = ContactInverseDynamics(model, MU), np.random.default_rng(11)
    worst = 0.0
    for _ in range(10):
        q = stance.copy()
        q[7:] += 0.1 * rng.normal(size=model.nv - 6)
        v, desired = 0.3 * rng.normal(size=model.nv), rng.normal(size=model.nv)
        heights, points = controller.feet_points(q)
        lowest = {}
        for height, (link, point) in zip(heights, points):   # each foot's lowest point
            if link not in lowest or height < lowest[link][0]:
                lowest[link] = (height, point)
        feet = [(link, point) for link, (_, point) in sorted(lowest.items())]
        assert len(feet) == 4
        worst = max(worst, assert_same_solution(model, kept, q, v, desired, feet))
    print(f"\n{robot}: torques within {worst:.3f} of the bound")


FEET = [(f'{leg}_calf', (0.0, 0.0, -0.2)) for leg in ('FL', 'FR', 'RL', 'RR')]
SOLES = [(link, (x, y, -0.2)) for link, _ in FEET for x in (-0.01, 0.01) for y in (-0.01, 0.01)]   # 4 corners each
CONTACT_SETS = {'none': [], 'one foot': FEET[:1], 'two feet': FEET[:2], 'three feet': FEET[:3], 'four feet': FEET,
                'a point twice': FEET + FEET[:1], 'flat soles': SOLES}


@pytest.mark.parametrize('contacts', sorted(CONTACT_SETS))
def test_every_contact_set_gives_the_per_tick_builds_solution(contacts):
    """No foot (the base falls: no contact row), one to four point feet (the base rows constrain the forces in
    fewer or more dimensions than there are forces), a point given twice and flat soles of four corner points
    (dependent rows of J_c): the generated quadruped near its stance, as above. The feet are held still as far as
    J_c's rows allow, as both programs hold them (on a basis of its rows): J_c qdd + Jdot_c v = 0 within rounding
    where the rows are independent, and else orthogonal to J_c's columns (a rotating rigid foot's corners have
    centripetal accelerations that no acceleration of the foot cancels); the elimination solves it, not the solver.
    The forces are in their cones within the solver's feasibility tolerance (1e-8, in units of the weight)."""
    model = load_urdf(quadruped_urdf(), root_joint='floating')
    feet = CONTACT_SETS[contacts]
    kept, rng = ContactInverseDynamics(model, MU), np.random.default_rng(12)
    thigh, calf = (np.array([model.joint_q_index[model.joint_names.index(f'{leg}_{name}_joint')]
                             for leg in ('FL', 'FR', 'RL', 'RR')]) for name in ('thigh', 'calf'))
    for _ in range(5):
        q = np.zeros(model.nq)
        q[2], q[6], q[thigh], q[calf] = 0.3, 1.0, 0.6, -1.2
        q[7:] += 0.1 * rng.normal(size=model.nv - 6)
        v, desired = 0.3 * rng.normal(size=model.nv), rng.normal(size=model.nv)
        assert_same_solution(model, kept, q, v, desired, feet)
        _, qdd, f = kept(q, v, desired, feet)
        if feet:
            Jc = point_jacobians(model, q, feet)
            still = Jc @ qdd + point_acceleration_bias(model, q, v, feet)
            assert np.max(np.abs(Jc.T @ still)) < 1e-9
            if contacts != 'flat soles':
                assert np.max(np.abs(still)) < 1e-9
            assert np.all(np.hypot(f[:, 0], f[:, 1]) <= MU * f[:, 2] + 1e-8 * kept.weight)
    assert kept.setups == 1
