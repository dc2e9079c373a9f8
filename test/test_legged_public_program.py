"""The legged controller's kept contact program (ContactInverseDynamics: in units of the robot's weight, updated in
place) against the per-tick build in newtons (contact_inverse_dynamics, the formulation the controller had before), on
the public quadrupeds of example-robot-data (A1, Go1, ANYmal C) at random states near their SRDF stance."""
import warnings

import numpy as np
import pytest

from conftest import example_robot_data
from robot_dynamics_ros import load_srdf, load_urdf
from robot_dynamics_ros.control.contact_inverse_dynamics import (FORCE_WEIGHT, ContactInverseDynamics,
                                                                 contact_inverse_dynamics, point_jacobians)
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


@pytest.mark.parametrize('robot', sorted(ROBOTS))
def test_the_kept_program_gives_the_torques_of_the_per_tick_build(robot):
    """Joints within 0.1 rad of the stance, velocities of 0.3 (m|rad)/s, desired accelerations of 1 (m|rad)/s^2
    per coordinate, the feet's lowest points held. A solve within gap g of the optimum is within
    ||qdd - qdd*|| <= sqrt(2 g) and ||f - f*|| <= sqrt(2 g / FORCE_WEIGHT) of it (the objective's curvature), so
    the two solves' torques tau = M_j qdd + h_j - J_cj^T f differ by at most ||M_j|| and ||J_cj|| times twice
    those."""
    model, stance, controller = public(robot)
    kept, rng = ContactInverseDynamics(model, MU), np.random.default_rng(11)
    joints = np.asarray(model.joint_v_index)
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
        tau, qdd, f = kept(q, v, desired, feet)
        tau_before, _, _ = contact_inverse_dynamics(model, q, v, desired, feet, MU)
        cost = abs(0.5 * qdd @ qdd - desired @ qdd + 0.5 * FORCE_WEIGHT * np.sum(f * f))
        gap = GAP * (1.0 + cost)
        M_j, J_cj = kept.M[joints], point_jacobians(model, q, feet)[:, joints]   # kept.M: filled at this q
        bound = 2.0 * (np.linalg.norm(M_j, 2) * np.sqrt(2.0 * gap)
                       + np.linalg.norm(J_cj, 2) * np.sqrt(2.0 * gap / FORCE_WEIGHT))
        assert np.max(np.abs(tau - tau_before)) <= bound
        worst = max(worst, np.max(np.abs(tau - tau_before)) / bound)
    print(f"\n{robot}: torques within {worst:.3f} of the bound")
