"""Property tests on random trees: Pinocchio agreement and the identities of DESIGN.md, on the default path
(compiled where numba imports) and the reference (the same recursions run as plain Python)."""
import numpy as np
import pytest
from hypothesis import given, settings

import robot_dynamics_ros
from random_robots import random_trees
from robot_dynamics_ros import algorithms, load_urdf

from oracle import PinocchioOracle, pin


class XmlOracle(PinocchioOracle):
    def __init__(self, xml, model):
        self.pin_model = pin.buildModelFromXML(xml)
        self.data = self.pin_model.createData()
        self.model = model
        self.joints = [self.pin_model.joints[self.pin_model.getJointId(n)] for n in model.joint_names]
        self.v_index = np.array([j.idx_v for j in self.joints])


def close(a, b, tol=1e-9):
    return np.max(np.abs(a - b)) <= tol * max(1.0, np.max(np.abs(b)))


@pytest.mark.parametrize('api', [robot_dynamics_ros, algorithms], ids=['default', 'reference'])
@settings(max_examples=25, deadline=None)
@given(xml=random_trees)
def test_random_tree_matches_pinocchio_and_identities(api, xml):
    rnea, crba, aba = api.rnea, api.crba, api.aba
    model = load_urdf(xml)
    oracle = XmlOracle(xml, model)
    rng = np.random.default_rng(1)
    for _ in range(3):
        q, qd, x = model.random_configuration(rng), rng.normal(size=model.nv), rng.normal(size=model.nv)
        M = crba(model, q)
        h = rnea(model, q, qd, np.zeros(model.nv))
        assert close(rnea(model, q, qd, x), oracle.rnea(q, qd, x))
        assert close(M, oracle.crba(q))
        assert close(aba(model, q, qd, x), oracle.aba(q, qd, x))
        # CRBA equals RNEA columns; ABA equals solve(M, tau - h).
        g = rnea(model, q, np.zeros(model.nv), np.zeros(model.nv))
        columns = np.column_stack([rnea(model, q, np.zeros(model.nv), e) - g for e in np.eye(model.nv)])
        assert close(M, columns)
        assert close(aba(model, q, qd, x), np.linalg.solve(M, x - h))
