"""Base parameters: numeric (QR) and Gautier-Khalil closed form; the MDH view; the base-params command."""
import os
import re

import numpy as np
import pytest

from robot_dynamics_ros import load_urdf, rnea
from robot_dynamics_ros.algorithms.regressor import regressor, standard_parameters
from robot_dynamics_ros.cli import main
from robot_dynamics_ros import spatial
from robot_dynamics_ros.model.mdh import MDHError, mdh_description, mdh_from_model, mdh_pose, mdh_to_urdf
from robot_dynamics_ros.parameters import closed_form_base_parameters, numeric_base_parameters
from robot_dynamics_ros.parameters.base_closed_form import _closed_form, in_urdf_frames
from robot_dynamics_ros.parameters.base_numeric import stacked_regressor
from robot_dynamics_ros.algorithms.rnea import STANDARD_GRAVITY
from conftest import BUNDLED_URDF, TEST_DIR, TEST_URDFS

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
# Joints 2 and 3 on one line (alpha = a = 0), then a prismatic joint along it and a skew revolute joint.
COINCIDING_AXES = [(0, 0, 0, 0, 0.2), (0, -H, 0, 0, 0), (0, 0, 0, 0.3, 0.25), (1, 0, 0, 0, 0.1), (0, H, 0.1, 0, 0.2)]


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
    assert main(['base-params', REAL_ARMS['kinova_gen3'], '--method', 'closed-form']) == 0
    out = capsys.readouterr().out
    assert '45 base parameters of 70 standard (closed-form)' in out and 'MDH frames placed on the joint axes' in out


def test_numeric_count_does_not_depend_on_joint_limits():
    """Identifiability is generic: revolute limits written lower="0" upper="0" must not lose parameters."""
    with open(BUNDLED_URDF, encoding='utf-8') as f:
        xml = f.read()
    frozen = re.sub(r'lower="[^"]*" upper="[^"]*"', 'lower="0" upper="0"', xml)
    assert frozen.count('lower="0" upper="0"') == 7
    model = load_urdf(frozen)
    assert np.all(model.lower == 0) and np.all(model.upper == 0)
    assert len(numeric_base_parameters(model)) == len(numeric_base_parameters(load_urdf(BUNDLED_URDF))) == 43


# Public real arm URDFs (sources, commits and licenses: test/urdf/real/README.md). The Panda's and the ROS 2 UR
# descriptions' joint frames already follow MDH; Kinova's, xArm's and Z1's do not.
REAL_ARMS = {name: os.path.join(TEST_DIR, 'urdf', 'real', name + '.urdf')
             for name in ('ur5', 'ur5e', 'panda', 'kinova_gen3', 'xarm7', 'z1')}
SPAN_RTOL = 1e-9   # relative residual of one regressor block projected on the other's span (rounding: ~1e-15)


def span_residual(A, B):
    """||A - B B^+ A|| / ||A||: how far the columns of A are from the span of B's."""
    return np.linalg.norm(A - B @ np.linalg.lstsq(B, A, rcond=None)[0]) / np.linalg.norm(A)


@pytest.mark.parametrize('name', ['kinova_gen3', 'xarm7', 'z1'])
def test_real_arm_frames_are_not_mdh(name):
    with pytest.raises(MDHError):
        mdh_from_model(load_urdf(REAL_ARMS[name]))
    assert len(mdh_description(load_urdf(REAL_ARMS[name])).table) == load_urdf(REAL_ARMS[name]).nv


@pytest.mark.parametrize('name', ['arm7', *sorted(REAL_ARMS)])
@pytest.mark.parametrize('extras', [{}, ALL_EXTRAS])
def test_closed_form_on_real_arms_equals_numeric_count_and_span(name, extras):
    model = load_urdf(REAL_ARMS.get(name, BUNDLED_URDF))
    closed, numeric = closed_form_base_parameters(model, **extras), numeric_base_parameters(model, **extras)
    W = stacked_regressor(model, 30, seed=123, **extras)            # fresh states, not those of the QR
    W_closed, W_numeric = closed.regressor(W), numeric.regressor(W)
    residuals = span_residual(W_closed, W_numeric), span_residual(W_numeric, W_closed)
    print(f"\n{name} {extras != {}}: closed form {len(closed)}, numeric {len(numeric)}, "
          f"span residuals {residuals[0]:.2g} {residuals[1]:.2g}, pivot gap {numeric.pivot_gap:.2g}")
    assert len(closed) == len(numeric)
    assert max(residuals) < SPAN_RTOL
    assert np.linalg.matrix_rank(W_closed) == len(closed)
    pi = np.random.default_rng(7).normal(size=W.shape[1])
    np.testing.assert_allclose(W_closed @ closed.project(pi), W @ pi, atol=SPAN_RTOL * np.abs(W @ pi).max())


def test_closed_form_on_the_real_panda_gives_the_oracle_count():
    assert len(closed_form_base_parameters(load_urdf(REAL_ARMS['panda']))) == 43      # papers/README.md


@pytest.mark.parametrize('name', ['arm7', 'fixed_and_massless', 'prismatic_chain', *sorted(REAL_ARMS)])
def test_mdh_description_reproduces_the_urdf_kinematics(name):
    """Frame 0 then the table's T_j(q) place each MDH frame where the URDF body frame, moved by the constant
    to_mdh transform, is, at random q."""
    model = load_urdf(REAL_ARMS.get(name) or TEST_URDFS[name])
    description = mdh_description(model)
    rng = np.random.default_rng(3)
    for _ in range(3):
        q = rng.uniform(-np.pi, np.pi, model.nv)
        X_body = np.eye(6)
        R_mdh, p_mdh = description.base_rotation, description.base_origin
        for j, (Xup, row) in enumerate(zip(model.parent_transforms(q), description.table)):
            X_body = Xup @ X_body
            R, p = spatial.pose_from_plucker(description.to_mdh[j] @ X_body)
            theta, d = (row.theta + q[j], row.d) if row.sigma == 0 else (row.theta, row.d + q[j])
            R_step, p_step = mdh_pose(row.alpha, row.a, theta, d)
            R_mdh, p_mdh = R_mdh @ R_step, p_mdh + R_mdh @ p_step
            np.testing.assert_allclose(R, R_mdh, atol=1e-12)
            np.testing.assert_allclose(p, p_mdh, atol=1e-12)


@pytest.mark.parametrize('name, table', [('puma', PUMA560), ('panda', PANDA), ('planar', PLANAR_3R_VERTICAL),
                                         ('scara', PRISMATIC_CHAINS['scara']), ('eq19', PRISMATIC_CHAINS['eq19']),
                                         ('eq20', PRISMATIC_CHAINS['eq20']), ('coinciding_axes', COINCIDING_AXES),
                                         ('arm7', None), ('panda', None),
                                         ('ur5', None), ('ur5e', None)])
def test_mdh_frames_placed_from_the_axes_give_the_same_base_as_the_urdf_mdh_frames(name, table):
    """The general path (frames placed from the axes, parameters mapped) on URDFs already in MDH frames."""
    model = mdh_model(table, name) if table else load_urdf(REAL_ARMS.get(name, BUNDLED_URDF))
    description = mdh_description(model)
    base = _closed_form(description.table, description.gravity_in_frame0(STANDARD_GRAVITY), 1e-9,
                        False, False, False, False)
    general = in_urdf_frames(base, description.inertial_parameter_map())
    numeric = numeric_base_parameters(model)
    W = stacked_regressor(model, 20, seed=5)
    assert len(general) == len(numeric)
    assert max(span_residual(general.regressor(W), numeric.regressor(W)),
               span_residual(numeric.regressor(W), general.regressor(W))) < SPAN_RTOL


def test_trees_fall_back_to_the_numeric_method():
    with pytest.raises(MDHError, match='not a serial chain'):
        closed_form_base_parameters(load_urdf(TEST_URDFS['two_arm_tree']))
