"""RNEA, CRBA and ABA against Pinocchio on every test URDF and the bundled robot."""
import numpy as np

from robot_dynamics_ros import aba, crba, load_urdf, rnea

from oracle import PinocchioOracle

N_STATES = 50
RTOL = 1e-9


def relative_error(ours, theirs):
    return np.max(np.abs(ours - theirs)) / max(1.0, np.max(np.abs(theirs)))


def random_states(model, seed=0):
    rng = np.random.default_rng(seed)
    for _ in range(N_STATES):
        yield model.random_configuration(rng), rng.normal(size=model.nv), rng.normal(size=model.nv)


def test_rnea_crba_aba_match_pinocchio(urdf_path):
    model = load_urdf(urdf_path)
    oracle = PinocchioOracle(urdf_path, model)
    for q, qd, x in random_states(model):
        assert relative_error(rnea(model, q, qd, x), oracle.rnea(q, qd, x)) < RTOL
        assert relative_error(crba(model, q), oracle.crba(q)) < RTOL
        assert relative_error(aba(model, q, qd, x), oracle.aba(q, qd, x)) < RTOL
