"""The compiled fast path against the reference (``algorithms``: the same kernels run as plain Python): same
results to 1e-12 (numba and the tracer must not change what the source computes), batched equals looped, and the
same answers for every kind of input the reference accepts."""

import dataclasses
import os
import shutil
import subprocess
import threading

import numpy as np
import pytest
from hypothesis import given, settings

from conftest import BUNDLED_URDF, FAST_TOLERANCE as TOL, assert_fast_equals_reference
from random_robots import random_trees, random_urdf
from robot_dynamics_ros import algorithms, fast, load_urdf
from robot_dynamics_ros.algorithms.backends import hash_sources
from robot_dynamics_ros.fast import code_cache, codegen

N_STATES = 8


def close(ours, reference):
    return np.max(np.abs(ours - reference)) <= TOL * max(1.0, np.max(np.abs(reference)))


def random_state(model, rng):
    n = model.nv
    return (model.random_configuration(rng), rng.normal(size=n), rng.normal(size=n), rng.normal(size=(n, 6)),
            rng.normal(size=3) * 10.0)


def test_fast_path_is_active_when_numba_imports():
    pytest.importorskip('numba')
    assert fast.BACKEND == 'numba'


def test_fast_equals_reference(urdf_path):
    model = load_urdf(urdf_path)
    rng = np.random.default_rng(0)
    for _ in range(N_STATES):
        assert_fast_equals_reference(model, rng)


@settings(max_examples=10, deadline=None)
@given(random_trees)
def test_table_kernels_equal_reference_on_random_trees(xml):
    """The table kernels on random trees (generated code is compiled per robot, seconds each: see below)."""
    model = load_urdf(xml)
    assert fast.path(model) == ('table' if fast.BACKEND == 'numba' else 'python')
    assert_fast_equals_reference(model, np.random.default_rng(1))


@pytest.mark.parametrize('seed', [3, 4, 5])
def test_generated_code_equals_reference_on_random_trees(seed):
    """Fixed random trees (general and axis-aligned axes, all joint types), so numba's disk cache serves reruns."""
    pytest.importorskip('numba')
    model = load_urdf(random_urdf(seed, n_links=5))
    fast.specialize(model)
    assert fast.path(model) == 'generated'
    assert_fast_equals_reference(model, np.random.default_rng(seed))


def test_generated_code_serves_the_default_call(urdf_path):
    pytest.importorskip('numba')
    model = load_urdf(urdf_path)
    assert fast.path(model) == 'table'
    fast.specialize(model)
    assert fast.path(model) == 'generated'
    assert_fast_equals_reference(model, np.random.default_rng(2))
    assert fast.path(model, gravity=[0.0, 0.0, -1.0]) == fast.path(model, f_ext=np.zeros((model.nv, 6))) == 'table'
    text = ''.join(codegen.module_source(model, algorithm) for algorithm in codegen.ALGORITHMS)
    loops = ('for s in range', 'for s in prange')   # the batches' loops over states
    assert 'P[' not in text and 'for ' not in text.replace(loops[0], '').replace(loops[1], '')   # unrolled, no table


def traced(model, algorithm):
    """The generated function of ``algorithm`` run as plain Python (numba's njit left out): the code that tracing
    the table kernel wrote, without compiling it."""
    source = codegen.module_source(model, algorithm)
    namespace = {}
    exec(source.replace('from numba import njit, prange',
                        'prange = range\ndef njit(*args, **kwargs):\n    return lambda function: function'), namespace)
    return namespace[algorithm]


def assert_traced_code_equals_table_kernels(model, rng):
    """Tracing runs the table kernels' own source on symbols: its code must give the table kernels' results."""
    assert fast.path(model) == 'table'
    n = model.nv
    rnea, crba, aba, regressor = (traced(model, algorithm) for algorithm in codegen.ALGORITHMS)
    for _ in range(3):
        q, qd, x, _, _ = random_state(model, rng)
        tau, M, qdd, Y = np.empty(n), np.empty((n, n)), np.empty(n), np.zeros((n, 10 * n))
        rnea(q, qd, x, tau)
        crba(q, M)
        regressor(q, qd, x, Y)   # writes only the nonzero terms: Y comes zeroed
        assert close(tau, fast.rnea(model, q, qd, x))
        assert close(M, fast.crba(model, q))
        assert close(Y, fast.regressor(model, q, qd, x))
        if model.massless_joints:
            with pytest.raises(ZeroDivisionError):
                aba(q, qd, x, qdd)
        else:
            aba(q, qd, x, qdd)
            assert close(qdd, fast.aba(model, q, qd, x))


def test_traced_code_equals_table_kernels(urdf_path):
    pytest.importorskip('numba')
    assert_traced_code_equals_table_kernels(load_urdf(urdf_path), np.random.default_rng(7))


@settings(max_examples=20, deadline=None)
@given(random_trees)
def test_traced_code_equals_table_kernels_on_random_trees(xml):
    pytest.importorskip('numba')
    assert_traced_code_equals_table_kernels(load_urdf(xml), np.random.default_rng(8))


def test_python_fallback_equals_reference(urdf_path, monkeypatch):
    """Every function dispatched as without numba (the kernels as plain Python) gives the reference's results."""
    monkeypatch.setattr(fast, 'BACKEND', 'python')
    model = load_urdf(urdf_path)
    assert fast.path(model) == 'python'
    assert_fast_equals_reference(model, np.random.default_rng(9))


@pytest.mark.parametrize('backend', ['default', 'python'], ids=['fast', 'python_fallback'])
def test_batched_equals_looped(urdf_path, backend, monkeypatch):
    if backend == 'python':   # the fallback without numba, run here where numba is installed
        monkeypatch.setattr(fast, 'BACKEND', 'python')
    api = fast
    model = load_urdf(urdf_path)
    rng = np.random.default_rng(2)
    states = [random_state(model, rng) for _ in range(5)]
    Q, QD, X, F = (np.array([s[k] for s in states]) for k in range(4))
    gravity = states[0][4]
    looped = np.array([algorithms.rnea(model, q, qd, x, gravity, f) for q, qd, x, f in zip(Q, QD, X, F)])
    assert close(api.rnea_batch(model, Q, QD, X, gravity, F), looped)
    looped = np.array([algorithms.rnea(model, q, qd, x, None, F[0]) for q, qd, x in zip(Q, QD, X)])
    assert close(api.rnea_batch(model, Q, QD, X, f_ext=F[0]), looped)     # one f_ext shared by all states
    looped = np.array([algorithms.rnea(model, q, qd, x) for q, qd, x in zip(Q, QD, X)])
    assert close(api.rnea_batch(model, Q, QD, X), looped)
    assert close(api.crba_batch(model, Q), np.array([algorithms.crba(model, q) for q in Q]))
    looped = np.array([algorithms.aba(model, q, qd, x, gravity, f) for q, qd, x, f in zip(Q, QD, X, F)])
    assert close(api.aba_batch(model, Q, QD, X, gravity, F), looped)
    looped = np.array([algorithms.aba(model, q, qd, x) for q, qd, x in zip(Q, QD, X)])
    assert close(api.aba_batch(model, Q, QD, X), looped)
    looped = np.array([algorithms.regressor(model, q, qd, x, gravity, viscous=True, coulomb=True)
                       for q, qd, x in zip(Q, QD, X)])
    assert close(api.regressor_batch(model, Q, QD, X, gravity, viscous=True, coulomb=True), looped)


def test_generated_batches_on_threads_equal_single_calls(urdf_path):
    """Batches of codegen.PARALLEL_STATES states or more run on numba's threads: each state as its single call."""
    pytest.importorskip('numba')
    model = load_urdf(urdf_path)
    fast.specialize(model)
    rng = np.random.default_rng(4)
    states = [random_state(model, rng)[:3] for _ in range(codegen.PARALLEL_STATES + 3)]
    Q, QD, X = (np.array([s[k] for s in states]) for k in range(3))
    assert close(fast.rnea_batch(model, Q, QD, X), np.array([fast.rnea(model, *s) for s in states]))
    assert close(fast.crba_batch(model, Q), np.array([fast.crba(model, q) for q in Q]))
    assert close(fast.regressor_batch(model, Q, QD, X), np.array([fast.regressor(model, *s) for s in states]))
    assert close(fast.aba_batch(model, Q, QD, X), np.array([fast.aba(model, *s) for s in states]))
    assert fast.path(model) == 'generated'


def test_inputs_the_reference_accepts(urdf_path):
    """Lists, integer and strided arrays give the reference's answer; out= receives the result."""
    model = load_urdf(urdf_path)
    n = model.nv
    q = np.arange(2 * n, dtype=float)[::2] * 0.1                        # strided
    qd = list(np.linspace(-1.0, 1.0, n))                                # list
    x = np.ones(n, dtype=int)                                           # integer
    f_ext = np.asfortranarray(np.ones((n, 6)))
    expected = algorithms.rnea(model, q, qd, x, [0, 0, -3], f_ext)
    out = np.empty(n)
    assert fast.rnea(model, q, qd, x, [0, 0, -3], f_ext, out=out) is out
    assert close(out, expected)
    assert close(fast.aba(model, q, qd, x, [0, 0, -3], f_ext), algorithms.aba(model, q, qd, x, [0, 0, -3], f_ext))
    M = np.empty((n, n))
    assert fast.crba(model, list(q), out=M) is M
    assert close(M, algorithms.crba(model, q))
    q.flags.writeable = False                                           # read-only, as a Model's own arrays
    assert close(fast.rnea(model, q, model.damping, x), algorithms.rnea(model, q, model.damping, x))
    assert close(fast.crba(model, q), algorithms.crba(model, q))


def test_wrong_lengths_raise(urdf_path):
    model = load_urdf(urdf_path)
    n = model.nv
    with pytest.raises(ValueError):
        fast.rnea(model, np.zeros(n + 1), np.zeros(n), np.zeros(n))
    with pytest.raises(ValueError):
        fast.aba(model, np.zeros(n), np.zeros(n), np.zeros(n), f_ext=np.zeros((n, 3)))
    with pytest.raises(ValueError):
        fast.crba(model, np.zeros(n), out=np.empty((n, n + 1)))
    with pytest.raises(ValueError):
        fast.rnea_batch(model, np.zeros((3, n)), np.zeros((2, n)), np.zeros((3, n)))
    with pytest.raises(ValueError):
        fast.udut(model, np.zeros(n + 1))
    with pytest.raises(ValueError):
        fast.regressor_batch(model, np.zeros((3, n)), np.zeros((3, n)), np.zeros((2, n)))


def test_model_arrays_are_read_only():
    """A Model is immutable: a write into any of its arrays raises, and arrays handed to it are copied."""
    model = load_urdf(BUNDLED_URDF)
    arrays = [name for name, value in vars(model).items() if isinstance(value, np.ndarray)]
    assert {'parent', 'joint_type', 'axis', 'X_tree', 'inertia', 'lower', 'upper', 'damping'} <= set(arrays)
    for name in arrays:
        with pytest.raises(ValueError, match='read-only'):
            getattr(model, name).flat[0] += 1.0
    for frame in model.frames.values():
        with pytest.raises(ValueError, match='read-only'):
            frame.X_body[0, 0] = 2.0
    damping = np.ones(model.nv)
    other = dataclasses.replace(model, damping=damping)
    damping[0] = 5.0
    assert other.damping[0] == 1.0


def test_a_replaced_model_gets_its_own_cache():
    """Caches hang on the Model instance: after dataclasses.replace the fast path computes with the new
    inertias, as the reference does (the packed copy of the old model is not reused)."""
    model = load_urdf(BUNDLED_URDF)
    q = model.random_configuration(np.random.default_rng(0))
    before = fast.gravity_torques(model, q)
    inertia = model.inertia.copy()
    inertia[3] *= 2.0
    heavier = dataclasses.replace(model, inertia=inertia)
    after = fast.gravity_torques(heavier, q)
    assert close(after, algorithms.gravity_torques(heavier, q))
    assert not close(after, before)
    assert close(fast.gravity_torques(model, q), before)
    rng = np.random.default_rng(4)
    assert_fast_equals_reference(heavier, rng)


def _error(function, *args, **kwargs):
    with pytest.raises(ValueError) as raised:
        function(*args, **kwargs)
    return str(raised.value)


@pytest.mark.parametrize('served_by', ['table', 'generated'])
def test_wrong_shapes_give_the_same_error_on_every_backend(served_by):
    """One shape check for every backend: the reference, the table kernels and the generated code raise the
    same ValueError, naming the argument and the length the model needs."""
    model = load_urdf(BUNDLED_URDF)
    if served_by == 'generated':
        pytest.importorskip('numba')
        fast.specialize(model)
    assert fast.path(model) == (served_by if fast.BACKEND == 'numba' else 'python')
    n, good = model.nv, np.zeros(model.nv)
    bad = np.zeros(n + 2)
    cases = [('rnea', (bad, good, good), 'q'), ('rnea', (good, bad, good), 'qd'), ('rnea', (good, good, bad), 'qdd'),
             ('aba', (good, good, bad), 'tau'), ('crba', (bad,), 'q'), ('gravity_torques', (bad,), 'q'),
             ('bias_torques', (good, bad), 'qd'), ('udut', (bad,), 'q'), ('regressor', (good, bad, good), 'qd')]
    for name, args, argument in cases:
        message = _error(getattr(algorithms, name), model, *args)
        assert message == _error(getattr(fast, name), model, *args)
        assert message.startswith(f'{argument} has shape ({n + 2},)') and f'needs ({n},)' in message
    f_ext = np.zeros((n, 3))
    message = _error(algorithms.rnea, model, good, good, good, None, f_ext)
    assert message == _error(fast.rnea, model, good, good, good, None, f_ext)
    assert message.startswith('f_ext has shape') and f'needs ({n}, 6)' in message


def test_no_compiler_runs_behind_the_callers_back(monkeypatch):
    """However often a model is called, the code that serves it stays what was decided at its first call: no
    process or thread is started to compile (the table kernels serve a model whose code was never compiled)."""
    pytest.importorskip('numba')
    monkeypatch.setattr(fast, 'ENABLE', True)

    def refuse(*args, **kwargs):
        raise AssertionError('a process or thread was started')
    monkeypatch.setattr(subprocess.Popen, '__init__', refuse)
    monkeypatch.setattr(threading.Thread, 'start', refuse)
    model = load_urdf(random_urdf(11, n_links=4))
    q, qd, x, _, _ = random_state(model, np.random.default_rng(5))
    for _ in range(300):
        fast.rnea(model, q, qd, x), fast.crba(model, q), fast.aba(model, q, qd, x), fast.regressor(model, q, qd, x)
    assert all(fast.path(model, algorithm=name) == 'table' for name in codegen.ALGORITHMS)


def test_code_compiled_ahead_serves_a_new_instance_from_its_first_call(monkeypatch):
    """specialize (as ``robot-dynamics compile``) fills the disk cache; a model loaded afterwards runs the generated
    code from its first call, equal to the reference."""
    pytest.importorskip('numba')
    monkeypatch.setattr(fast, 'ENABLE', True)
    xml = random_urdf(12, n_links=5)
    fast.specialize(load_urdf(xml), ('rnea', 'aba'))
    model = load_urdf(xml)
    assert [fast.path(model, algorithm=name) for name in codegen.ALGORITHMS] == ['generated', 'table', 'generated',
                                                                                 'table']
    assert_fast_equals_reference(model, np.random.default_rng(6))


def test_the_cache_key_covers_every_source(monkeypatch, tmp_path):
    """An edit of any source the code depends on (a helper of the kernels included) gives another key, so code
    compiled from the old sources is never loaded."""
    package = os.path.dirname(os.path.abspath(algorithms.__file__ + '/..'))
    copy = tmp_path / 'robot_dynamics_ros'
    for folder in ('algorithms', 'fast', 'control', 'simulation'):
        shutil.copytree(os.path.join(package, folder), copy / folder, ignore=shutil.ignore_patterns('__pycache__'))
    shutil.copy(os.path.join(package, 'spatial.py'), copy / 'spatial.py')
    before = hash_sources(str(copy))
    assert before == hash_sources(package)
    for edited in ('algorithms/spatial_kernels.py', 'spatial.py'):
        with open(copy / edited, 'a') as f:
            f.write('\n# an edit\n')
        assert hash_sources(str(copy)) != before
        before = hash_sources(str(copy))
    pytest.importorskip('numba')
    monkeypatch.setattr(fast, 'ENABLE', True)
    xml = random_urdf(4, n_links=3)
    fast.specialize(load_urdf(xml), ('rnea',))
    monkeypatch.setattr(code_cache, 'source_hash', lambda: 'edited')
    assert fast.path(load_urdf(xml)) == 'table'
