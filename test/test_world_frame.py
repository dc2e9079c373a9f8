"""RNEA and U D U^T in the world-aligned frame at the root's origin (``algorithms/world_rnea.py``,
``world_udut.py``, the one-call contact step's dynamics) against Pinocchio, as plain Python and compiled."""
import numpy as np
import pytest

from conftest import BUNDLED_URDF, random_states, relative_error
from oracle import BlockOracle
from random_robots import quadruped_urdf, random_urdf
from robot_dynamics_ros import load_urdf
from robot_dynamics_ros.algorithms import packing
from robot_dynamics_ros.algorithms.backends import compiled
from robot_dynamics_ros.algorithms.point_kinematics import PointKinematics, body_poses, world_columns
from robot_dynamics_ros.algorithms.world_frame import world_rows
from robot_dynamics_ros.algorithms.world_rnea import world_rnea
from robot_dynamics_ros.algorithms.world_udut import world_udut

RTOL = 1e-9   # as the body-frame recursions against Pinocchio (test_floating_base)


def _read(path):
    with open(path) as f:
        return f.read()


ROBOTS = {   # name -> (URDF XML, root joint): fixed, floating and planar roots, a multi-DOF joint mid-tree
    'arm7': (_read(BUNDLED_URDF), None),
    'floating_arm7': (_read(BUNDLED_URDF), 'floating'),
    'planar_arm7': (_read(BUNDLED_URDF), 'planar'),
    'floating_random_tree': (random_urdf(11, 12), 'floating'),
    'quadruped': (quadruped_urdf(), 'floating'),
}


def world_dynamics(model, q, qd, qdd, gravity, compile_it):
    """(tau = M qdd + h, U, D) by world_rows, world_rnea and world_udut at (q, qd, qdd)."""
    run = compiled if compile_it else (lambda function: function)
    kin, pack = PointKinematics(model), packing.packed(model)
    P, W = pack.table, np.zeros((model.nv, packing.WORK_WIDTH))
    R, p = np.zeros((model.nb, 3, 3)), np.zeros((model.nb, 3))
    C_ang, C_lin = np.zeros((3, model.nv)), np.zeros((3, model.nv))
    column_body, S_ang, S_lin, _ = kin.column_constants
    run(body_poses)(*kin.tree, q, R, p)
    run(world_columns)(column_body, S_ang, S_lin, R, p, C_ang, C_lin)
    run(world_rows)(P, W, column_body, R, p, C_ang, C_lin)
    tau, U, D = np.zeros(model.nv), np.zeros((model.nv, model.nv)), np.zeros(model.nv)
    run(world_rnea)(P, W, packing.spatial_gravity(gravity), qd, qdd, tau)
    run(world_udut)(P, W, U, D)
    return tau, U, D


@pytest.mark.parametrize('compile_it', [False, True], ids=['python', 'compiled'])
@pytest.mark.parametrize('name', sorted(ROBOTS))
def test_world_frame_rnea_and_udut_match_pinocchio(name, compile_it):
    xml, root_joint = ROBOTS[name]
    model = load_urdf(xml, root_joint=root_joint)
    oracle = BlockOracle(xml, model, root_joint)
    for q, qd, qdd in random_states(model):
        if root_joint == 'floating':   # far from the world's origin: the frame follows the root
            q = q.copy()
            q[:3] += [40.0, -25.0, 3.0]
        tau, U, D = world_dynamics(model, q, qd, qdd, None, compile_it)
        assert relative_error(tau, oracle.rnea(q, qd, qdd)) < RTOL
        assert relative_error(U @ np.diag(D) @ U.T, oracle.crba(q)) < RTOL
        np.testing.assert_array_equal(U, np.triu(U))   # unit upper triangular, as Saha's eq. 24 makes it
        np.testing.assert_array_equal(np.diag(U), 1.0)
        assert np.all(D > 0.0)
