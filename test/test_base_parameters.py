"""Base parameters: numeric (QR) and Gautier-Khalil closed form; the MDH view; the base-params command."""
import numpy as np
import pytest

from robot_dynamics_ros import load_urdf, rnea
from robot_dynamics_ros.algorithms.regressor import regressor, standard_parameters
from robot_dynamics_ros.cli import main
from robot_dynamics_ros.model.mdh import MDHError, mdh_from_model, mdh_to_urdf
from robot_dynamics_ros.parameters import closed_form_base_parameters, numeric_base_parameters
from robot_dynamics_ros.parameters.base_numeric import stacked_regressor
from conftest import BUNDLED_URDF, TEST_URDFS

from oracle import PinocchioOracle

H = np.pi / 2
# (sigma, alpha, a, theta, d) per joint, modified DH.
PUMA560 = [(0, 0, 0, 0, 0), (0, -H, 0, 0, 0), (0, 0, 0.4318, 0, 0.1491), (0, -H, -0.0203, 0, 0.4331),
           (0, H, 0, 0, 0), (0, -H, 0, 0, 0)]                    # Gautier-Khalil Table I (Craig's values)
PANDA = [(0, 0, 0, 0, 0.333), (0, -H, 0, 0, 0), (0, H, 0, 0, 0.316), (0, H, 0.0825, 0, 0),
         (0, -H, -0.0825, 0, 0.384), (0, H, 0, 0, 0), (0, H, 0.088, 0, 0)]  # Franka's published MDH
PLANAR_3R_VERTICAL = [(0, H, 0, 0, 0), (0, 0, 0.5, 0, 0), (0, 0, 0.4, 0, 0)]  # joint axes horizontal
# Chains with prismatic joints, including the particular cases between r1 and r2 (eqs. 19, 20).
PRISMATIC_CHAINS = {
    'stanford': [(0, 0, 0, 0, 0), (0, -H, 0, 0, 0.15), (1, H, 0, 0, 0), (0, 0, 0, 0, 0.2), (0, -H, 0, 0, 0),
                 (0, H, 0, 0, 0)],
    'scara': [(0, 0, 0, 0, 0.3), (0, 0, 0.4, 0, 0), (1, 0, 0.3, 0, 0.1), (0, 0, 0, 0, 0)],
    'prr': [(1, 0, 0, 0, 0), (0, -H, 0, 0, 0), (0, 0, 0.3, 0, 0)],
    'eq19': [(0, 0, 0, 0, 0), (1, 0, 0.2, 0.3, 0), (1, 0, 0.1, 0.4, 0), (0, -H, 0, 0.2, 0.1)],
    'eq20': [(0, 0, 0, 0, 0), (1, H, 0.2, 0, 0), (1, -H, 0.1, 0.4, 0.2), (0, -H, 0.1, 0.2, 0.1)],
    'rrp_perpendicular': [(0, H, 0, 0, 0), (0, 0, 0.4, 0, 0), (1, H, 0.3, 0, 0)],
}
ALL_EXTRAS = dict(rotor_inertia=True, viscous=True, coulomb=True)


def mdh_model(table, name='mdh'):
    return load_urdf(mdh_to_urdf(table, name=name))


def eliminated(base):
    kept = {base.parameter_names[k] for k in base.independent}
    return [name for name in base.parameter_names if name not in kept]


def assert_reproduces_torques(model, base, **extras):
    """Y_base @ (K @ pi) == Y @ pi at fresh states for random pi, and Y_base has full column rank."""
    W = stacked_regressor(model, 15, seed=99, **extras)
    pi = np.random.default_rng(7).normal(size=W.shape[1])
    np.testing.assert_allclose(base.regressor(W) @ base.project(pi), W @ pi, atol=1e-9 * np.abs(W @ pi).max())
    assert np.linalg.matrix_rank(base.regressor(W)) == len(base)


def assert_same_space(a, b):
    assert len(a) == len(b)
    assert np.linalg.matrix_rank(np.vstack([a.K, b.K]), tol=1e-8) == len(a)


# Oracle figures: papers/README.md.
PUMA_ELIMINATED = ['XX1', 'XY1', 'XZ1', 'YY1', 'YZ1', 'MX1', 'MY1', 'MZ1', 'M1'] + \
    [f'{p}{j}' for j in range(2, 7) for p in ('YY', 'MZ', 'M')]


@pytest.mark.parametrize('method', [numeric_base_parameters, closed_form_base_parameters])
def test_puma560_36_of_60_with_the_papers_eliminated_set(method):
    base = method(mdh_model(PUMA560))
    assert len(base) == 36
    assert sorted(eliminated(base)) == sorted(PUMA_ELIMINATED)
    assert 'ZZR1' in base.names and 'XXR2' in base.names and 'MXR2' in base.names


@pytest.mark.parametrize('method', [numeric_base_parameters, closed_form_base_parameters])
@pytest.mark.parametrize('extras, count', [({}, 43), (dict(rotor_inertia=True), 48),
                                           (dict(viscous=True, coulomb=True), 57)])
def test_panda_counts(method, extras, count):
    assert len(method(mdh_model(PANDA), **extras)) == count


@pytest.mark.parametrize('method', [numeric_base_parameters, closed_form_base_parameters])
def test_planar_3r_in_a_vertical_plane_9_of_30(method):
    base = method(mdh_model(PLANAR_3R_VERTICAL))
    assert len(base) == 9
    assert sorted(base.names) == sorted(['ZZR1', 'MXR1', 'MY1', 'ZZR2', 'MXR2', 'MY2', 'ZZ3', 'MX3', 'MY3'])


def test_gravity_direction_matters():
    # Same PUMA with gravity along base x: joint 1 is no longer vertical, so MX1 and MY1 matter.
    for method in (numeric_base_parameters, closed_form_base_parameters):
        base = method(mdh_model(PUMA560), gravity=[9.81, 0, 0])
        assert len(base) == 38 and {'MX1', 'MY1'} <= {base.parameter_names[k] for k in base.independent}


@pytest.mark.parametrize('name, table', [('puma', PUMA560), ('panda', PANDA), ('planar', PLANAR_3R_VERTICAL),
                                         *PRISMATIC_CHAINS.items()])
@pytest.mark.parametrize('extras', [{}, ALL_EXTRAS])
def test_closed_form_and_numeric_span_the_same_space_and_reproduce_torques(name, table, extras):
    model = mdh_model(table, name)
    closed, numeric = closed_form_base_parameters(model, **extras), numeric_base_parameters(model, **extras)
    assert_same_space(closed, numeric)
    assert closed.names == numeric.names
    assert_reproduces_torques(model, closed, **extras)
    assert_reproduces_torques(model, numeric, **extras)
    assert numeric.pivot_gap > 1e6


def test_closed_form_regrouping_coefficients_of_eq_15():
    """PUMA joint 4 (alpha = -90 deg, paper's d4 = a, r4 = d) regrouped onto link 3 by eq. (15), written out:
    ZZR3 = ZZ3 + S^2 YY4 + 2 r4 S^2 MZ4 + (d4^2 + r4^2 S^2) M4, MXR3 = MX3 + d4 M4,
    MYR3 = MY3 - S MZ4 - r4 S M4, and XXR3 = XX3 - YYR3 + YY4 + 2 r4 MZ4 + r4^2 M4 with YYR3 = YY3 + d4^2 M4."""
    base = closed_form_base_parameters(mdh_model(PUMA560))
    names = base.parameter_names
    _, alpha, d4, _, r4 = PUMA560[3]
    S = np.sin(alpha)

    def coefficients(name):
        row = base.K[base.names.index(name)]
        return {p: row[names.index(p)] for p in ('XX3', 'YY3', 'ZZ3', 'MX3', 'MY3', 'YY4', 'MZ4', 'M4', 'M5')}

    zz, mx, my, xx = coefficients('ZZR3'), coefficients('MXR3'), coefficients('MYR3'), coefficients('XXR3')
    assert zz['ZZ3'] == 1 and zz['YY4'] == pytest.approx(S ** 2) and zz['MZ4'] == pytest.approx(2 * r4 * S ** 2)
    assert zz['M4'] == pytest.approx(d4 ** 2 + r4 ** 2 * S ** 2)
    assert zz['M5'] == pytest.approx(zz['M4'])                        # M5 reached link 4's mass first
    assert mx['MX3'] == 1 and mx['M4'] == pytest.approx(d4)
    assert my['MY3'] == 1 and my['MZ4'] == pytest.approx(-S) and my['M4'] == pytest.approx(-r4 * S)
    assert xx['XX3'] == 1 and xx['YY3'] == -1 and xx['YY4'] == pytest.approx(1)
    assert xx['MZ4'] == pytest.approx(2 * r4) and xx['M4'] == pytest.approx(r4 ** 2 - d4 ** 2)
    assert base.regrouping[base.names.index('XXR3')].startswith('XXR3 = XX3 - YY3 + YY4 + ')


@pytest.mark.parametrize('urdf', sorted(TEST_URDFS))
def test_numeric_on_every_test_urdf_reproduces_rnea(urdf):
    model = load_urdf(TEST_URDFS[urdf])
    base = numeric_base_parameters(model)
    assert base.pivot_gap > 1e6
    assert_reproduces_torques(model, base)
    rng = np.random.default_rng(8)
    q, qd, qdd = model.random_configuration(rng), rng.normal(size=model.nv), rng.normal(size=model.nv)
    Y = regressor(model, q, qd, qdd)
    beta = base.project(standard_parameters(model))
    np.testing.assert_allclose(base.regressor(Y) @ beta, rnea(model, q, qd, qdd), atol=1e-10)
    assert np.allclose(base.K[:, base.independent], np.eye(len(base)))


def test_mdh_round_trip_and_pinocchio_loads_it(tmp_path):
    params = np.random.default_rng(9).uniform(0.1, 0.2, (7, 10))
    params[:, 9] = 2.0                                    # mass
    params[:, [1, 2, 4]] *= 0.01                          # small products of inertia: a valid tensor
    params[:, [0, 3, 5]] += 0.5
    xml = mdh_to_urdf(PANDA, params, name='panda')
    model = load_urdf(xml)
    np.testing.assert_allclose(np.array(mdh_from_model(model)), np.array(PANDA, dtype=float), atol=1e-12)
    np.testing.assert_allclose(standard_parameters(model), params.ravel(), atol=1e-12)
    path = tmp_path / 'panda.urdf'
    path.write_text(xml)
    oracle = PinocchioOracle(str(path), model)
    rng = np.random.default_rng(10)
    q, qd, qdd = model.random_configuration(rng), rng.normal(size=7), rng.normal(size=7)
    np.testing.assert_allclose(rnea(model, q, qd, qdd), oracle.rnea(q, qd, qdd), atol=1e-10)


def test_bundled_arm_follows_mdh_and_others_are_refused():
    assert len(mdh_from_model(load_urdf(BUNDLED_URDF))) == 7
    with pytest.raises(MDHError, match='not a serial chain'):
        mdh_from_model(load_urdf(TEST_URDFS['two_arm_tree']))
    with pytest.raises(MDHError, match='is not \\+z'):
        mdh_from_model(load_urdf(TEST_URDFS['prismatic_chain']))


def test_base_params_command(capsys):
    assert main(['base-params', BUNDLED_URDF]) == 0
    out = capsys.readouterr().out
    assert '43 base parameters of 70 standard (numeric)' in out and 'ZZR1 = ZZ1 + YY2' in out
    assert main(['base-params', BUNDLED_URDF, '--method', 'closed-form', '--friction', '--rotor-inertia']) == 0
    assert '62 base parameters of 91 standard (closed-form)' in capsys.readouterr().out
    assert main(['base-params', TEST_URDFS['two_arm_tree'], '--method', 'closed-form']) == 2
    assert 'not a serial chain' in capsys.readouterr().err
