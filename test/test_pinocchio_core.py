"""RNEA, CRBA and ABA against Pinocchio on every test URDF and the bundled robot: the default path (compiled where
numba imports) and the reference (the same recursions run as plain Python), here and in a process without numba."""
import subprocess
import sys

import numpy as np
import pytest

import robot_dynamics_ros
from robot_dynamics_ros import algorithms, load_urdf

from conftest import random_states, relative_error
from oracle import PinocchioOracle

RTOL = 1e-9
BACKENDS = {'default': robot_dynamics_ros, 'reference': algorithms}


@pytest.mark.parametrize('backend', sorted(BACKENDS))
def test_rnea_crba_aba_match_pinocchio(urdf_path, backend):
    api = BACKENDS[backend]
    model = load_urdf(urdf_path)
    oracle = PinocchioOracle(urdf_path, model)
    for q, qd, x in random_states(model):
        assert relative_error(api.rnea(model, q, qd, x), oracle.rnea(q, qd, x)) < RTOL
        assert relative_error(api.crba(model, q), oracle.crba(q)) < RTOL
        assert relative_error(api.aba(model, q, qd, x), oracle.aba(q, qd, x)) < RTOL


WITHOUT_NUMBA = """
import sys
sys.modules['numba'] = None   # importing numba now fails, as where it is not installed
import numpy as np
from robot_dynamics_ros import algorithms, fast, load_urdf
from robot_dynamics_ros.algorithms.regressor import standard_parameters
path, n_states, output = sys.argv[1], int(sys.argv[2]), sys.argv[3]
model = load_urdf(path)
rng = np.random.default_rng(1)
states = [(model.random_configuration(rng), rng.normal(size=model.nv), rng.normal(size=model.nv))
          for _ in range(n_states)]
Q, QD, X = (np.array([s[k] for s in states]) for k in range(3))


def udut_product(q):
    U, D = algorithms.udut(model, q)
    return U @ np.diag(D) @ U.T


results = {name: np.array([function(q, qd, x) for q, qd, x in states]) for name, function in {
    'rnea': lambda q, qd, x: fast.rnea(model, q, qd, x), 'crba': lambda q, qd, x: fast.crba(model, q),
    'aba': lambda q, qd, x: fast.aba(model, q, qd, x),
    'reference_rnea': lambda q, qd, x: algorithms.rnea(model, q, qd, x),
    'reference_crba': lambda q, qd, x: algorithms.crba(model, q),
    'reference_aba': lambda q, qd, x: algorithms.aba(model, q, qd, x),
    'udut': lambda q, qd, x: udut_product(q),
    'minv': lambda q, qd, x: algorithms.mass_matrix_inverse(model, q),
    'regressor': lambda q, qd, x: algorithms.regressor(model, q, qd, x) @ standard_parameters(model)}.items()}
results['rnea_batch'], results['aba_batch'] = fast.rnea_batch(model, Q, QD, X), fast.aba_batch(model, Q, QD, X)
np.savez(output, Q=Q, QD=QD, X=X, backend=fast.BACKEND, path=fast.path(model), **results)
"""


def test_reference_without_numba_matches_pinocchio(urdf_path, tmp_path):
    """Where numba is missing, every path (the dispatcher's and the reference) runs the recursions as plain Python;
    in a process where numba does not import, they agree with Pinocchio."""
    output = tmp_path / 'results.npz'
    subprocess.run([sys.executable, '-c', WITHOUT_NUMBA, urdf_path, '5', str(output)], check=True)
    results = np.load(output)
    assert results['backend'] == 'python' and results['path'] == 'python'
    model = load_urdf(urdf_path)
    oracle = PinocchioOracle(urdf_path, model)
    for k, (q, qd, x) in enumerate(zip(results['Q'], results['QD'], results['X'])):
        tau, M, qdd = oracle.rnea(q, qd, x), oracle.crba(q), oracle.aba(q, qd, x)
        for name, expected in [('rnea', tau), ('reference_rnea', tau), ('rnea_batch', tau), ('regressor', tau),
                               ('crba', M), ('reference_crba', M), ('udut', M), ('minv', oracle.minv(q)),
                               ('aba', qdd), ('reference_aba', qdd), ('aba_batch', qdd)]:
            assert relative_error(results[name][k], expected) < RTOL, name
