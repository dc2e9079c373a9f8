"""Identification: least squares, signal processing, recordings, excitation, identified URDF, CLI.

The round trip simulates the bundled arm as `record` does (test/simulated_recording.py: package Simulator at
1 kHz, URDF damping and Coulomb friction, the computed-torque controller of config/closed_loop.yaml) along a
Fourier excitation, adds encoder noise (1e-4 rad) and 1 % torque noise, and identifies the base parameters with
friction. Truth: K @ pi of the URDF. test_identification_statistics.py checks the intervals by repetition.
"""
import sys

import numpy as np
import pytest
import yaml
from scipy.signal import savgol_coeffs

from conftest import BUNDLED_URDF, TEST_URDFS
from robot_dynamics_ros import load_urdf
from robot_dynamics_ros.algorithms.rnea import rnea
from robot_dynamics_ros.algorithms.regressor import parameter_names, regressor, standard_parameters
from robot_dynamics_ros.cli import main as cli_main
from robot_dynamics_ros.fast import regressor_batch
from robot_dynamics_ros.parameters import numeric_base_parameters
from robot_dynamics_ros.parameters.excitation import optimise_excitation, write_trajectory
from robot_dynamics_ros.parameters.equations import identification_equations
from robot_dynamics_ros.parameters.identification import (identify, identify_base_parameters, identify_equations,
                                                          stacked_regressor)
from robot_dynamics_ros.model.urdf import URDFError
from robot_dynamics_ros.parameters.identified_urdf import (CONSISTENCY_MARGIN, consistent_standard_parameters,
                                                           inconsistent_bodies, smallest_eigenvalues,
                                                           write_identified_urdf)
from robot_dynamics_ros.parameters.recordings import Recording, load_recording
from robot_dynamics_ros.parameters.signals import (derivatives, position_noise, smoothing_half_width, uniform_grid,
                                                   velocity_noise_gain)
from simulated_recording import record_in_process, with_noise

FRICTION = dict(viscous=True, coulomb=True)
# The loader refuses inconsistent inertias today; once it only warns by default, strict=True refuses them.


def random_samples(model, n, seed):
    rng = np.random.default_rng(seed)
    q = np.array([model.random_configuration(rng) for _ in range(n)])
    return q, rng.normal(size=(n, model.nv)), rng.normal(size=(n, model.nv))


@pytest.mark.parametrize('name', ['arm7', 'two_arm_tree', 'prismatic_chain'])
def test_ols_on_noiseless_data_recovers_beta(name):
    model = load_urdf(TEST_URDFS[name])
    q, qd, qdd = random_samples(model, 40, seed=1)
    tau = np.array([rnea(model, *s) for s in zip(q, qd, qdd)])
    result, base = identify_base_parameters(model, q, qd, qdd, tau)
    beta = base.project(standard_parameters(model))
    np.testing.assert_allclose(result.beta, beta, rtol=0, atol=1e-8 * max(1.0, np.abs(beta).max()))
    assert result.relative_residual < 1e-10
    weighted, _ = identify_base_parameters(model, q, qd, qdd, tau, base=base, weighted=True)
    np.testing.assert_allclose(weighted.beta, beta, rtol=0, atol=1e-8 * max(1.0, np.abs(beta).max()))
    assert 'base parameters from 40 samples' in result.report()


def test_standard_deviations_match_the_scatter_of_repeated_noisy_fits():
    """std from sigma^2 (W^T W)^-1 must agree with the spread of estimates over independent noise draws."""
    rng = np.random.default_rng(2)
    Y = rng.normal(size=(200, 3, 5))
    beta = rng.normal(size=5)
    fits = [identify(Y, Y @ beta + 0.1 * rng.normal(size=(200, 3))) for _ in range(200)]
    spread = np.std([f.beta for f in fits], axis=0)
    predicted = np.mean([f.std for f in fits], axis=0)
    np.testing.assert_allclose(predicted, spread, rtol=0.25)
    # weighting: a joint with 10x noise gets ~10x smaller weight; equal weights give OLS
    tau = Y @ beta + rng.normal(size=(200, 3)) * [0.01, 0.01, 0.1]
    ols = identify(Y, tau)
    np.testing.assert_allclose(identify(Y, tau, weights=[3.0, 3.0, 3.0]).beta, ols.beta, rtol=1e-12)
    wls = identify(Y, tau, weights=[100.0, 100.0, 10.0])
    assert np.linalg.norm(wls.beta - beta) < np.linalg.norm(ols.beta - beta)


def test_rank_deficient_data_is_rejected(arm):
    q, qd, qdd = random_samples(arm, 1, seed=3)
    base = numeric_base_parameters(arm)
    Y = base.regressor(stacked_regressor(arm, np.repeat(q, 10, 0), np.repeat(qd, 10, 0), np.repeat(qdd, 10, 0)))
    with pytest.raises(ValueError, match='rank'):
        identify(Y, np.ones((10, arm.nv)))


def test_derivatives_of_a_noisy_sinusoid():
    """The position noise is estimated from the recording, the smoothing is the narrowest that keeps the velocity
    noise below min_velocity / 5, and the derivatives err by no more than that noise allows."""
    dt, f, sigma = 1e-3, 0.7, 1e-4
    t = np.arange(0, 5, dt)
    w = 2 * np.pi * f
    q = np.column_stack([np.sin(w * t), 0.5 * np.cos(w * t)])
    qd_true = w * np.column_stack([np.cos(w * t), -0.5 * np.sin(w * t)])
    noisy = q + sigma * np.random.default_rng(4).normal(size=q.shape)
    noise = position_noise(noisy)
    np.testing.assert_allclose(noise, sigma, rtol=0.05)            # 5000 samples: the MAD's own scatter is ~2 %
    h = smoothing_half_width(dt, noise, min_velocity=0.02)
    assert noise.max() * velocity_noise_gain(h) / dt <= 0.02 / 5 < noise.max() * velocity_noise_gain(h - 1) / dt
    sigma_v = sigma * velocity_noise_gain(h) / dt                  # the narrowest cubic for the estimated noise
    inner = slice(h + 1, -h - 1)
    _, qd, qdd, qd_friction = derivatives(noisy, dt, h, 'continuous')
    assert np.max(np.abs(qd - qd_true)[inner]) < 5 * sigma_v       # 5 sigma over 10^4 samples: p < 10^-2
    np.testing.assert_array_equal(qd_friction, qd)
    # the acceleration, before the parallel filter: as noisy as its kernel (the cubic's second difference) makes
    # it, and unbiased (mean within 5 sigma of the mean of ~N / 2h independent values)
    error = (qdd + w ** 2 * q)[inner]
    sigma_a = sigma * np.linalg.norm(np.diff(np.pad(savgol_coeffs(2 * h + 1, 3), 2), 2)) / dt ** 2
    np.testing.assert_allclose(np.std(error, axis=0), sigma_a, rtol=0.1)
    assert np.all(np.abs(np.mean(error, axis=0)) < 5 * sigma_a * np.sqrt(2 * h / len(error)))
    # simulator sampling: backward velocity at the state, Coulomb sign from the next one (exact on a cubic)
    cubic = np.column_stack([t ** 3 - t, 2 * t ** 2])
    _, qd, qdd, qd_friction = derivatives(cubic, dt, 2, 'simulator')
    np.testing.assert_allclose(qd[1:-1], np.diff(cubic, axis=0)[:-1] / dt, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(qd_friction[1:-1], np.diff(cubic, axis=0)[1:] / dt, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(qdd[1:-1], np.column_stack([6 * t, 4 + 0 * t])[1:-1], rtol=1e-6, atol=1e-6)
    assert smoothing_half_width(dt, np.zeros(2), 0.02) == 2      # noise-free: differentiated nearly exactly
    # uneven timestamps are resampled to a uniform grid first
    t_uneven = np.sort(np.concatenate([t[::2], t[1::2][::3] + 0.3e-3]))
    q_uneven = np.column_stack([np.sin(w * t_uneven), 0.5 * np.cos(w * t_uneven)])
    grid, q_grid = uniform_grid(t_uneven, q_uneven)
    assert np.ptp(np.diff(grid)) < 1e-12
    np.testing.assert_allclose(q_grid, np.column_stack([np.sin(w * grid), 0.5 * np.cos(w * grid)]), atol=1e-8)


def write_joint_state_bag(path, storage, t, names, q, tau):
    """A rosbag2 of sensor_msgs/JointState with the rosbags writer; joint order rotates per message."""
    pytest.importorskip('rosbags')  # optional: not in package.xml
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import Stores, get_typestore
    store = get_typestore(Stores.ROS2_HUMBLE)
    JointState = store.types['sensor_msgs/msg/JointState']
    Header, Time = store.types['std_msgs/msg/Header'], store.types['builtin_interfaces/msg/Time']
    plugin = {'mcap': StoragePlugin.MCAP, 'sqlite3': StoragePlugin.SQLITE3}[storage]
    with Writer(path, version=9, storage_plugin=plugin) as writer:
        connection = writer.add_connection('/joint_states', JointState.__msgtype__, typestore=store)
        for k, stamp in enumerate(t):
            order = np.roll(np.arange(len(names) + 1), k)  # plus a gripper joint the model does not have
            all_names, all_q, all_tau = names + ['gripper'], np.append(q[k], 0.01), np.append(tau[k], 0.0)
            ns = int(round(stamp * 1e9))
            msg = JointState(header=Header(stamp=Time(sec=ns // 10 ** 9, nanosec=ns % 10 ** 9), frame_id=''),
                             name=[all_names[i] for i in order], position=all_q[order],
                             velocity=np.zeros(0), effort=all_tau[order])
            writer.write(connection, ns, store.serialize_cdr(msg, JointState.__msgtype__))


@pytest.mark.parametrize('storage', ['mcap', 'sqlite3'])
def test_rosbag2_round_trip(tmp_path, arm, storage):
    rng = np.random.default_rng(5)
    t = 100.0 + 0.01 * np.arange(30)
    q, tau = rng.normal(size=(30, arm.nv)), rng.normal(size=(30, arm.nv))
    shuffled = list(reversed(arm.joint_names))
    write_joint_state_bag(tmp_path / 'bag', storage, t, shuffled, q[:, ::-1], tau[:, ::-1])
    recording = load_recording(tmp_path / 'bag').for_model(arm)
    np.testing.assert_allclose(recording.t, t, atol=1e-9)
    np.testing.assert_array_equal(recording.q, q)
    np.testing.assert_array_equal(recording.tau, tau)
    assert recording.qd is None
    with pytest.raises(ValueError, match='no messages'):
        load_recording(tmp_path / 'bag', topic='/other')


@pytest.mark.parametrize('suffix', ['.csv', '.npz'])
def test_csv_and_npz_round_trip(tmp_path, arm, suffix):
    rng = np.random.default_rng(6)
    names = tuple(reversed(arm.joint_names))
    original = Recording(np.arange(5) * 0.1, names, rng.normal(size=(5, 7)), rng.normal(size=(5, 7)),
                         rng.normal(size=(5, 7)))
    original.save(tmp_path / ('rec' + suffix))
    loaded = load_recording(tmp_path / ('rec' + suffix))
    assert loaded.joint_names == names
    for a, b in ((loaded.q, original.q), (loaded.tau, original.tau), (loaded.qd, original.qd)):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(loaded.for_model(arm).q, original.q[:, ::-1])
    with pytest.raises(ValueError, match='no data for joints'):
        Recording(original.t, names[1:], original.q[:, 1:], original.tau[:, 1:]).for_model(arm)


@pytest.fixture(scope='module')
def excitation(arm):
    return optimise_excitation(arm, duration=4.0, harmonics=4, time_budget=60.0, max_evaluations=1, **FRICTION)


def test_optimised_excitation_is_better_conditioned_than_its_start(arm):
    start = optimise_excitation(arm, duration=2.0, harmonics=3, time_budget=60.0, max_evaluations=1)
    optimised = optimise_excitation(arm, duration=2.0, harmonics=3, time_budget=60.0, max_evaluations=300)
    assert optimised.condition_number < 0.9 * start.condition_number


def test_excitation_respects_limits_and_starts_and_ends_at_rest(arm, excitation, tmp_path):
    times, q, qd, qdd = excitation.sample(500)
    assert np.all(q >= arm.lower) and np.all(q <= arm.upper)
    assert np.all(np.abs(qd) <= arm.velocity_limit * 0.8 * 1.001)
    for k in (0, -1):
        assert np.max(np.abs(qd[k])) < 1e-12 and np.max(np.abs(qdd[k])) < 1e-12
    np.testing.assert_allclose(np.gradient(q, times, axis=0)[1:-1], qd[1:-1], atol=2e-3)
    np.testing.assert_allclose(np.gradient(qd, times, axis=0)[1:-1], qdd[1:-1], atol=2e-2)
    assert np.isfinite(excitation.condition_number) and excitation.condition_number > 1
    write_trajectory(tmp_path / 'traj.yaml', arm.joint_names, times, q)
    params = yaml.safe_load((tmp_path / 'traj.yaml').read_text())['trajectory_publisher']['ros__parameters']
    assert params['mode'] == 'waypoints' and params['joints'] == list(arm.joint_names)
    np.testing.assert_allclose(np.reshape(params['waypoints'], (-1, arm.nv)), q, rtol=1e-15)
    np.testing.assert_allclose(params['waypoint_times'], times)


@pytest.fixture(scope='module')
def recording(arm, excitation):
    return record_in_process(arm, excitation)


@pytest.fixture(scope='module')
def round_trip(arm, recording):
    base = numeric_base_parameters(arm, **FRICTION)
    noisy = with_noise(recording, 1e-4, 0.01, seed=7)
    equations = identification_equations(arm, base, noisy.t, noisy.q, noisy.tau, noisy.sampling, **FRICTION)
    return noisy, identify_equations(equations, base.names), base


def test_round_trip_recovers_well_excited_base_parameters(arm, round_trip):
    _, result, base = round_trip
    truth = base.project(standard_parameters(arm, **FRICTION))
    error = np.abs(result.beta - truth) / np.abs(truth)
    well_excited = result.relative_std < 2.0  # percent
    report = ', '.join(f"{n} {e:.3f}" for n, e, w in zip(result.names, error, well_excited) if w)
    print(f"\nwell excited ({well_excited.sum()} of {len(truth)}): {report}")
    print("poorly excited: " + ', '.join(f"{n} (rel. std {s:.0f} %)" for n, s, w in
                                          zip(result.names, result.relative_std, well_excited) if not w))
    assert well_excited.sum() >= 20
    assert np.all(error[well_excited] < 0.10), report
    friction = [k for k, n in enumerate(result.names) if n[:2] in ('Fv', 'Fc')]
    print('friction: ' + ', '.join(f"{result.names[k]} {error[k]:.3f}" for k in friction))
    assert np.all(error[friction] < 0.10)


def test_round_trip_predicts_held_out_torques(arm, round_trip):
    pytest.importorskip('cvxpy')   # optional: the 'ident' extra; no rosdep key
    _, result, base = round_trip
    other = optimise_excitation(arm, duration=2.0, harmonics=3, time_budget=60.0, max_evaluations=1, seed=1,
                                **FRICTION)
    held_out = record_in_process(arm, other)
    equations = identification_equations(arm, base, held_out.t, held_out.q, held_out.tau, held_out.sampling,
                                         **FRICTION)
    pi, inconsistent = consistent_standard_parameters(base, result.beta, standard_parameters(arm, **FRICTION),
                                                      arm.nv, R=result.R)
    assert inconsistent == [] and inconsistent_bodies(pi, arm.nv) == []
    tau_true, rows = equations.tau, equations.rows
    errors = [np.sqrt(np.mean((equations.Y @ beta - tau_true)[rows] ** 2) / np.mean(tau_true[rows] ** 2))
              for beta in (result.beta, base.K @ pi)]
    print(f"\nheld-out relative RMS torque error: least squares {errors[0]:.6f}, "
          f"physically consistent {errors[1]:.6f}")
    assert max(errors) < 0.03


def test_identified_urdf_reproduces_the_base_model(arm, round_trip):
    pytest.importorskip('cvxpy')   # optional: the 'ident' extra; no rosdep key
    _, result, base = round_trip
    prior = standard_parameters(arm, **FRICTION)
    names = parameter_names(arm, **FRICTION)
    with open(BUNDLED_URDF, encoding='utf-8') as f:
        xml = f.read()
    unchanged = load_urdf(write_identified_urdf(xml, arm, prior, names))
    np.testing.assert_allclose(unchanged.inertia, arm.inertia, atol=1e-12)
    # beta of another physically consistent robot (every body 20 % heavier, friction halved) is reachable
    other = np.concatenate([1.2 * prior[:10 * arm.nv], 0.5 * prior[10 * arm.nv:]])
    pi, inconsistent = consistent_standard_parameters(base, base.project(other), prior, arm.nv)
    assert inconsistent == [] and inconsistent_bodies(pi, arm.nv) == []
    identified = load_urdf(write_identified_urdf(xml, arm, pi, names))
    q, qd, qdd = random_samples(arm, 3, seed=9)
    for state in zip(q, qd, qdd):
        tau = rnea(identified, *state) + identified.damping * state[1] + identified.friction * np.sign(state[1])
        expected = regressor(arm, *state, **FRICTION) @ other
        np.testing.assert_allclose(tau, expected, atol=1e-8 * np.abs(expected).max())
    # the noisy estimate: its least-norm standard parameters are inconsistent (the loader refuses them); the
    # projection is consistent, keeps K pi = beta, and its URDF loads
    least_norm = prior + np.linalg.pinv(base.K) @ (result.beta - base.K @ prior)
    assert inconsistent_bodies(least_norm, arm.nv) != []
    with pytest.raises(URDFError, match='not positive semidefinite|triangle inequality'):
        load_urdf(write_identified_urdf(xml, arm, least_norm, names), strict=True)
    pi, inconsistent = consistent_standard_parameters(base, result.beta, prior, arm.nv, R=result.R)
    assert inconsistent == [] and np.all(smallest_eigenvalues(pi, arm.nv) > 0.99 * CONSISTENCY_MARGIN)
    np.testing.assert_allclose(base.K @ pi, result.beta, atol=1e-8 * np.abs(result.beta).max())
    identified = load_urdf(write_identified_urdf(xml, arm, pi, names), strict=True)
    for state in zip(q, qd, qdd):
        tau = rnea(identified, *state) + identified.damping * state[1] + identified.friction * np.sign(state[1])
        expected = base.regressor(regressor(arm, *state, **FRICTION)) @ result.beta
        np.testing.assert_allclose(tau, expected, atol=1e-7 * np.abs(expected).max())


def test_projection_without_an_exact_consistent_fit_stays_consistent_and_close(arm, round_trip):
    """A beta no consistent robot has (ZZ of the last link, about its own joint axis, negative): the projection
    falls back to the least loss of fit ||R (K pi - beta)|| and is still consistent; its loss is below that of
    another consistent candidate, the URDF's own parameters."""
    pytest.importorskip('cvxpy')   # optional: the 'ident' extra; no rosdep key
    _, result, base = round_trip
    beta = result.beta.copy()
    k = base.names.index('ZZ7')
    beta[k] = -abs(beta[k])
    prior = standard_parameters(arm, **FRICTION)
    pi, inconsistent = consistent_standard_parameters(base, beta, prior, arm.nv, R=result.R)
    assert inconsistent == [] and np.all(smallest_eigenvalues(pi, arm.nv) > 0.99 * CONSISTENCY_MARGIN)
    assert (base.K @ pi)[k] > 0

    def loss(p):
        return np.linalg.norm(result.R @ (base.K @ p - beta))
    assert loss(pi) < loss(prior)
    print(f"\nZZ7 {beta[k]:.3g} -> {(base.K @ pi)[k]:.3g}; loss of fit {loss(pi):.3g} (URDF's parameters "
          f"{loss(prior):.3g})")


@pytest.mark.parametrize('hidden, command, extra', [
    ('rosbags', 'identify', 'bag'), ('cvxpy', 'identify --urdf-out', 'ident'), ('rosbags', 'record', 'bag')])
def test_a_missing_optional_dependency_is_one_line_naming_the_extra(arm, tmp_path, capsys, monkeypatch, hidden,
                                                                    command, extra):
    names = list(arm.joint_names)
    t = 0.01 * np.arange(200)
    q = 0.3 * np.sin(np.outer(t, np.arange(1, arm.nv + 1)))
    if command == 'identify':
        write_joint_state_bag(tmp_path / 'bag', 'mcap', t, names, q, q)
    Recording(t, tuple(names), q, q).save(tmp_path / 'rec.csv')
    write_trajectory(tmp_path / 'traj.yaml', names, t, q)
    for module in [name for name in sys.modules if name.split('.')[0] == hidden] + [hidden]:
        monkeypatch.setitem(sys.modules, module, None)                    # importing it now raises ImportError
    argv = {'identify': ['identify', BUNDLED_URDF, str(tmp_path / 'bag'), '-o', str(tmp_path / 'p.yaml')],
            'identify --urdf-out': ['identify', BUNDLED_URDF, str(tmp_path / 'rec.csv'), '-o', str(tmp_path / 'p.yaml'),
                                    '--urdf-out', str(tmp_path / 'id.urdf')],
            'record': ['record', str(tmp_path / 'traj.yaml'), '-o', str(tmp_path / 'rec')]}[command]
    assert cli_main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert f"robot_dynamics_ros[{extra}]" in err[-1] and hidden in err[-1]
    assert not (tmp_path / 'id.urdf').exists() and not (tmp_path / 'rec').exists()


def test_record_refuses_bad_input_in_one_line(tmp_path, capsys):
    pytest.importorskip('rosbags')   # record writes a rosbag2 with it (the 'bag' extra)
    (tmp_path / 'bad.yaml').write_text('trajectory_publisher: {ros__parameters: {mode: sinusoid}}\n')
    assert cli_main(['record', str(tmp_path / 'bad.yaml'), '-o', str(tmp_path / 'rec')]) == 2
    assert "not a trajectory_publisher waypoints file" in capsys.readouterr().err
    (tmp_path / 'rec').mkdir()
    assert cli_main(['record', str(tmp_path / 'bad.yaml'), '-o', str(tmp_path / 'rec')]) == 2
    assert 'exists' in capsys.readouterr().err


def test_identify_reports_each_parameter_in_words_units_and_against_the_urdf(arm, recording, tmp_path, capsys):
    """The printout and params.yaml: per base parameter its meaning, unit, estimate, std, interval, URDF value and
    difference; per joint the held-out torque errors; what was left out and why."""
    noisy = with_noise(recording, 1e-4, 0.01, seed=11)
    noisy.save(tmp_path / 'rec.npz')
    assert load_recording(tmp_path / 'rec.npz').sampling == 'simulator'     # npz keeps the sampling
    assert cli_main(['identify', BUNDLED_URDF, str(tmp_path / 'rec.npz'), '-o', str(tmp_path / 'p.yaml'),
                     '--weighted', '--friction']) == 0
    out = capsys.readouterr().out
    doc = yaml.safe_load((tmp_path / 'p.yaml').read_text())
    assert doc['sampling'] == 'simulator' and doc['method'] == 'weighted least squares'
    base = numeric_base_parameters(arm, **FRICTION)
    assert list(doc['base_parameters']) == list(base.names) == list(doc['base_parameters'])
    zz = doc['base_parameters']['ZZR2']
    assert zz['unit'] == 'kg m^2' and zz['meaning'].startswith('arm7_link2 ZZ + arm7_link3 YY, MZ, M')
    assert zz['relation'].startswith('ZZR2 = ZZ2 + YY3')
    assert doc['base_parameters']['Fv3']['unit'] == 'N m s/rad'
    assert doc['base_parameters']['Fc3']['meaning'] == 'Coulomb friction of arm7_joint3'
    truth = base.project(standard_parameters(arm, **FRICTION))
    for (name, p), prior in zip(doc['base_parameters'].items(), truth):
        assert p['urdf_value'] == pytest.approx(prior, rel=1e-12, abs=1e-15)
        assert p['difference'] == pytest.approx(p['value'] - prior, rel=1e-9, abs=1e-15)
        assert p['interval95'] > 1.96 * p['std'] > 0
        assert p['relative_std_percent'] == pytest.approx(100 * p['std'] / abs(p['value']))
        line = next(line for line in out.splitlines() if line.startswith(f"{name} "))
        assert p['unit'] in line and p['meaning'] in line
    equations = doc['equations']
    assert equations['used'] + sum(sum(v) for v in equations['excluded_per_joint'].values()) == equations['total']
    assert sum(equations['excluded_per_joint']['slow']) > 0 and 'near a speed below 0.02' in out
    held = doc['held_out']
    assert set(held['rms_torque_error']) == set(arm.joint_names) and 'held-out segment' in out
    for joint, errors in held['rms_torque_error'].items():   # below 3 % of the torque, as the round trip
        assert 0 < errors['urdf'] < 0.03 * errors['torque'] and 0 < errors['identified'] < 0.03 * errors['torque']
        assert joint in out


def test_a_recording_at_rest_is_a_one_line_error_saying_why(arm, recording, tmp_path, capsys):
    """The first second of an experiment (the arm held at its start): every equation is left out (sticking)."""
    held = recording.t < 1.0
    Recording(recording.t[held], recording.joint_names, recording.q[held], recording.tau[held],
              sampling=recording.sampling).save(tmp_path / 'rest.npz')
    assert cli_main(['identify', BUNDLED_URDF, str(tmp_path / 'rest.npz'), '-o', str(tmp_path / 'p.yaml'),
                     '--friction']) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert 'equations in use' in err[-1] and 'the joints must move' in err[-1]
    assert not (tmp_path / 'p.yaml').exists()


def test_continuous_sampling_identifies_samples_of_the_continuous_model(arm, excitation):
    """'continuous' sampling (a real robot: effort and state at one instant): on efforts computed from the model
    at each sample (inverse dynamics with viscous and Coulomb friction) every well-determined estimate is within
    2 % of the truth (what is left is the differences' O(dt^2) truncation, 1e-5 of the torque); the simulator's
    scheme on the same data is further off (damping read half a step late acts as an extra inertia Fv dt / 2)."""
    t, q, qd, qdd = excitation.sample(1000.0)
    pi = standard_parameters(arm, **FRICTION)
    tau = np.einsum('knp,p->kn', regressor_batch(arm, q, qd, qdd, **FRICTION), pi)
    base = numeric_base_parameters(arm, **FRICTION)
    truth = base.project(pi)
    errors = {}
    for sampling in ('continuous', 'simulator'):
        equations = identification_equations(arm, base, t, q, tau, sampling, **FRICTION)
        result = identify_equations(equations, base.names)
        well = result.relative_std < 2.0
        errors[sampling] = np.max(np.abs(result.beta - truth)[well] / np.abs(truth[well]))
    print(f"\nworst relative error of the well-determined: {errors}")
    assert errors['continuous'] < 0.02 and errors['simulator'] > errors['continuous']
