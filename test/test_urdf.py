"""URDF -> Model: structure, limits, xacro, one clear error per kind of bad input, and the warnings for
URDFs that load although they are suspect (inconsistent inertias, equal limits, massless moving subtrees)."""
import os
import warnings

import numpy as np
import pytest

from conftest import BAD_URDF_DIR, BUNDLED_URDF, TEST_DIR, TEST_URDFS
from robot_dynamics_ros import (RobotDynamicsError, SingularMassMatrixError, URDFError, URDFWarning, algorithms,
                                fast, load_urdf)
from robot_dynamics_ros.model import PRISMATIC, REVOLUTE, parse_urdf

BAD_CASES = {  # file -> words the error must contain (the offending element is named)
    'malformed.urdf': ['malformed URDF XML', 'line'],
    'missing_parent_link.urdf': ["joint 'joint1'", "parent link 'no_such_link'"],
    'missing_child_link.urdf': ["joint 'joint2'", "child link 'no_such_link'"],
    'two_parents.urdf': ["link 'link2'", 'two parents'],
    'cycle.urdf': ['cycle'],
    'unsupported_joint.urdf': ["joint 'joint2'", "'spherical'"],
    'planar_axis.urdf': ["planar joint 'joint2'", "xyz='1 0 0'", 'axis 0 0 1'],
    'zero_axis.urdf': ["joint 'joint1'", 'zero <axis>'],
    'negative_mass.urdf': ["link 'link1'", 'mass -1.0'],
    'nan_inertia.urdf': ["link 'link1'", "iyy='nan'", 'not finite'],
}
STRICT_ONLY = {'non_pd_inertia.urdf': ["link 'link1'", 'not positive semidefinite', 'eigenvalues -1, 1, 3']}


@pytest.mark.parametrize('filename', sorted(BAD_CASES))
def test_bad_urdf_raises_clear_error(filename):
    with pytest.raises(URDFError) as error:
        load_urdf(os.path.join(BAD_URDF_DIR, filename))
    for words in BAD_CASES[filename]:
        assert words in str(error.value)


def test_every_bad_file_is_covered():
    assert set(os.listdir(BAD_URDF_DIR)) - {'mimic.urdf'} == set(BAD_CASES) | set(STRICT_ONLY)


@pytest.mark.parametrize('filename', sorted(STRICT_ONLY))
def test_inconsistent_inertia_loads_with_a_warning_and_strict_refuses_it(filename):
    path = os.path.join(BAD_URDF_DIR, filename)
    with pytest.warns(URDFWarning) as record:
        load_urdf(path)
    assert len(record) == 1
    for words in STRICT_ONLY[filename]:
        assert words in str(record[0].message)
    for strict_load in (lambda: load_urdf(path, strict=True), lambda: parse_urdf(open(path).read(), strict=True)):
        with pytest.raises(URDFError) as error:
            strict_load()
        for words in STRICT_ONLY[filename]:
            assert words in str(error.value)


TEMPLATE = """<robot name="r">
  <link name="base"/>
  <joint name="j1" type="{type}"><parent link="base"/><child link="l1"/><origin xyz="{xyz}" rpy="{rpy}"/>
    <axis xyz="{axis}"/><limit lower="{lower}" upper="{upper}" effort="{effort}" velocity="{velocity}"/>
    <dynamics damping="{damping}" friction="{friction}"/></joint>
  <link name="l1"><inertial><origin xyz="{com}" rpy="0 0 0"/><mass value="{mass}"/>
    <inertia ixx="{ixx}" ixy="0" ixz="0" iyy="0.02" iyz="0" izz="0.02"/></inertial></link>
  <joint name="j2" type="revolute"><parent link="l1"/><child link="l2"/><origin xyz="0.3 0 0" rpy="0 0 0"/>
    <axis xyz="0 1 0"/><limit lower="-1" upper="1" effort="10" velocity="2"/>{mimic}</joint>
  <link name="l2"><inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/>
    </inertial></link>
</robot>"""
GOOD = dict(type='revolute', xyz='0 0 0.1', rpy='0 0 0', axis='0 0 1', lower='-1', upper='1', effort='10',
            velocity='2', damping='0.1', friction='0.05', com='0.1 0 0', mass='2', ixx='0.01', mimic='')


def urdf(**changes):
    return TEMPLATE.format(**{**GOOD, **changes})


@pytest.mark.parametrize('changes, words', [
    (dict(effort='nan'), ["joint 'j1' <limit>", "effort='nan'", 'not finite']),
    (dict(effort='-1'), ["joint 'j1' <limit>", "effort='-1'", 'at least 0']),
    (dict(velocity='inf'), ["joint 'j1' <limit>", "velocity='inf'", 'not finite']),
    (dict(velocity='-2'), ["joint 'j1' <limit>", "velocity='-2'", 'at least 0']),
    (dict(lower='nan'), ["joint 'j1' <limit>", "lower='nan'", 'not finite']),
    (dict(upper='-inf'), ["joint 'j1' <limit>", "upper='-inf'", 'not finite']),
    (dict(lower='2'), ["joint 'j1' <limit>", 'lower 2.0 is above upper 1.0']),
    (dict(type='prismatic', lower='2e6', upper='3e6'), ["joint 'j1' <limit>", "lower='2e6'", 'physical bound']),
    (dict(damping='nan'), ["joint 'j1' <dynamics>", "damping='nan'", 'not finite']),
    (dict(damping='-0.1'), ["joint 'j1' <dynamics>", "damping='-0.1'", 'at least 0']),
    (dict(friction='-1e-9'), ["joint 'j1' <dynamics>", "friction='-1e-9'", 'at least 0']),
    (dict(mimic='<mimic joint="j1" multiplier="nan"/>'), ["joint 'j2' <mimic>", "multiplier='nan'", 'not finite']),
    (dict(mimic='<mimic joint="j1" offset="inf"/>'), ["joint 'j2' <mimic>", "offset='inf'", 'not finite']),
    (dict(mimic='<mimic multiplier="2"/>'), ["joint 'j2' <mimic>", "no 'joint' attribute"]),
    (dict(xyz='0 0 1e200'), ["joint 'j1' <origin>", "xyz='0 0 1e200'", 'physical bound']),
    (dict(rpy='0 nan 0'), ["joint 'j1' <origin>", "rpy='0 nan 0'", 'not three finite numbers']),
    (dict(com='1e7 0 0'), ["link 'l1' <inertial> <origin>", 'physical bound']),
    (dict(mass='1e306'), ["link 'l1' <inertial> <mass>", "value='1e306'", 'physical bound']),
    (dict(mass=''), ["link 'l1' <inertial> <mass>", "value=''", 'not a number']),
    (dict(ixx='1e200'), ["link 'l1' <inertial> <inertia>", "ixx='1e200'", 'physical bound']),
    (dict(axis='0 0 0'), ["joint 'j1'", 'zero <axis>']),
    (dict(axis='0 inf 1'), ["joint 'j1' <axis>", 'not three finite numbers']),
])
def test_every_number_is_validated(changes, words):
    assert load_urdf(urdf()).nv == 2  # the template itself is valid: only the change is refused
    with pytest.raises(URDFError) as error:
        load_urdf(urdf(**changes))
    for word in words:
        assert word in str(error.value)


def test_limits_beyond_the_physical_bound_mean_no_limit():
    """As 1e16 in some real URDFs (a drone's rotors): that side is unlimited, and random states stay sane."""
    for joint_type in ('revolute', 'prismatic'):
        for lower, upper, expected in (('-1e16', '1e16', (-np.inf, np.inf)), ('0.5', '1e200', (0.5, np.inf)),
                                       ('-1e200', '-0.5', (-np.inf, -0.5))):
            model = load_urdf(urdf(type=joint_type, lower=lower, upper=upper))
            assert (model.lower[0], model.upper[0]) == expected
            q = np.array([model.random_configuration(np.random.default_rng(seed))[0] for seed in range(20)])
            assert np.all((q >= expected[0]) & (q <= expected[1])) and np.all(np.abs(q) < 10)


def test_mimic_of_an_undefined_joint_is_ignored_with_a_warning():
    with pytest.warns(URDFWarning, match="joint 'j2' <mimic> names joint 'no_such_joint', which is not defined"):
        model = load_urdf(urdf(mimic='<mimic joint="no_such_joint" multiplier="2"/>'))
    assert model.nv == 2 and model.mimic == {}


def test_axis_is_normalised_without_overflow():
    for axis, expected in (('0 0 1e200', [0, 0, 1]), ('1e-300 0 0', [1, 0, 0]), ('3e300 4e300 0', [0.6, 0.8, 0])):
        model = load_urdf(urdf(axis=axis))
        np.testing.assert_allclose(model.axis[0], expected, rtol=0, atol=1e-15)


def test_cad_quirks_load_with_one_warning_each_and_run():
    """TIAGo's antenna inertia (eigenvalue -3.5e-8), a triangle-inequality violation and lower == upper."""
    path = os.path.join(TEST_DIR, 'urdf', 'cad_quirks.urdf')
    with pytest.warns(URDFWarning) as record:
        model = load_urdf(path)
    messages = sorted(str(w.message) for w in record)
    assert len(messages) == 3
    assert "joint 'wrist' <limit>: lower == upper == 0" in messages[0]
    antenna = 1e-8 * np.array([[2.371, 6.119, 1.179], [6.119, 2.833, 0.774], [1.179, 0.774, 3.849]])
    eigenvalues = np.sort(np.roots(np.poly(antenna)).real)  # roots of the characteristic polynomial
    assert eigenvalues[0] < -3e-8  # the reason it is not positive semidefinite
    assert "link 'antenna_link'" in messages[1]
    assert 'eigenvalues {:.6g}, {:.6g}, {:.6g}'.format(*eigenvalues) in messages[1]
    assert "link 'torso_link'" in messages[2] and 'triangle inequality (principal moments 0.1 + 0.2 < 0.5)' in messages[2]
    with pytest.raises(URDFError, match="link 'antenna_link'.*not positive semidefinite"):
        load_urdf(path, strict=True)
    with pytest.warns(URDFWarning, match="link 'l1' <inertial>: the inertia violates the triangle inequality"):
        parse_urdf(urdf(ixx='0.05'))  # principal moments 0.02 + 0.02 < 0.05
    with pytest.raises(URDFError, match="link 'l1' <inertial>: the inertia violates the triangle inequality"):
        parse_urdf(urdf(ixx='0.05'), strict=True)
    # Documented behaviour of lower == upper: still a DOF, whose neutral and random positions are that value.
    wrist = model.joint_index('wrist')
    assert model.nv == 3 and model.neutral()[wrist] == 0.0
    assert model.random_configuration(np.random.default_rng(0))[wrist] == 0.0
    # Loaded as given, as Pinocchio loads it: the same dynamics.
    pytest.importorskip('pinocchio')
    from oracle import PinocchioOracle
    oracle = PinocchioOracle(path, model)
    rng = np.random.default_rng(1)
    q, qd, qdd = rng.uniform(-1, 1, size=(3, model.nv))
    np.testing.assert_allclose(algorithms.rnea(model, q, qd, qdd), oracle.rnea(q, qd, qdd), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(algorithms.crba(model, q), oracle.crba(q), rtol=1e-10, atol=1e-12)


def test_massless_moving_subtree_warns_at_load_and_forward_dynamics_names_the_joint():
    with pytest.warns(URDFWarning, match=r"joints \['head_yaw'\] move no mass or inertia") as record:
        model = load_urdf(os.path.join(TEST_DIR, 'urdf', 'massless_subtree.urdf'))
    assert len(record) == 1
    assert model.massless_joints == ('head_yaw', 'head_pitch')
    rng = np.random.default_rng(2)
    q, qd, x = model.random_configuration(rng), rng.normal(size=model.nv), rng.normal(size=model.nv)
    for tau in (algorithms.rnea(model, q, qd, x), fast.rnea(model, q, qd, x), algorithms.gravity_torques(model, q)):
        assert np.all(np.isfinite(tau))                         # inverse dynamics runs
    M = algorithms.crba(model, q)
    assert np.all(np.isfinite(M)) and not np.any(M[2:]) and np.all(np.linalg.eigvalsh(M[:2, :2]) > 0)
    forward = [lambda: algorithms.aba(model, q, qd, x), lambda: algorithms.forward_dynamics_udut(model, q, qd, x),
               lambda: algorithms.mass_matrix_inverse(model, q), lambda: algorithms.mass_matrix_log_det(model, q),
               lambda: algorithms.udut(model, q), lambda: fast.aba(model, q, qd, x), lambda: fast.udut(model, q),
               lambda: fast.aba_batch(model, q[None], qd[None], x[None])]
    for call in forward:
        with pytest.raises(SingularMassMatrixError, match="joint 'head_yaw' moves no mass or inertia"):
            call()


POINT_MASS_ON_AXIS = urdf().replace('<inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/>',
                                    '<origin xyz="0 0.5 0" rpy="0 0 0"/>')


def test_zero_pivot_at_a_configuration_is_a_named_error_on_every_path():
    """A leaf point mass on its joint's axis: not massless, but its articulated inertia about the axis is 0."""
    model = load_urdf(POINT_MASS_ON_AXIS)
    assert model.massless_joints == ()
    q, qd, tau = np.zeros(2), np.ones(2), np.zeros(2)
    assert np.all(np.isfinite(fast.rnea(model, q, qd, tau)))
    for aba in (algorithms.aba, fast.aba):
        with pytest.raises(SingularMassMatrixError, match="not positive definite.*joint 'j2'"):
            aba(model, q, qd, tau)


def test_generated_code_raises_the_named_error():
    pytest.importorskip('numba')
    for xml, words in ((open(os.path.join(TEST_DIR, 'urdf', 'massless_subtree.urdf')).read(), "joint 'head_yaw'"),
                       (POINT_MASS_ON_AXIS, "joint 'j2'")):
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', URDFWarning)
            model = parse_urdf(xml)
        fast.specialize(model)
        assert fast.path(model) == 'generated'
        q = np.zeros(model.nv)
        assert np.all(np.isfinite(fast.rnea(model, q, q, q))) and np.all(np.isfinite(fast.crba(model, q)))
        with pytest.raises(SingularMassMatrixError, match=words):
            fast.aba(model, q, q, q)
        with pytest.raises(SingularMassMatrixError, match=words):
            fast.aba_batch(model, q[None], q[None], q[None])


def test_unreadable_inputs_are_urdf_errors(tmp_path):
    binary = tmp_path / 'robot.urdf'
    binary.write_bytes(b'\xff\xfe<robot>')
    with pytest.raises(URDFError, match='not UTF-8'):
        load_urdf(str(binary))
    pytest.importorskip('xacro')
    broken = tmp_path / 'robot.urdf.xacro'
    broken.write_text('<robot xmlns:xacro="http://www.ros.org/wiki/xacro" name="r"><xacro:no_such_macro/></robot>')
    with pytest.raises(URDFError, match='xacro could not expand'):
        load_urdf(str(broken))


def test_a_source_that_is_neither_xml_nor_a_urdf_file_is_named_for_what_it_is(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(URDFError, match=r"^'x' is neither a URDF file \(not found\) nor URDF XML"):
        load_urdf('x')
    (tmp_path / 'x').write_text('x')
    with pytest.raises(URDFError, match=r"^URDF file 'x' does not hold XML"):
        load_urdf('x')
    with pytest.raises(URDFError, match=r"is a directory, not a URDF file"):
        load_urdf(str(tmp_path))
    (tmp_path / 'bom.urdf').write_bytes(b'\xef\xbb\xbf' + open(BUNDLED_URDF, 'rb').read())
    assert load_urdf('bom.urdf').nv == 7   # a byte-order mark is not text


def test_errors_share_one_base_class():
    assert issubclass(URDFError, RobotDynamicsError) and issubclass(URDFError, ValueError)
    assert issubclass(SingularMassMatrixError, RobotDynamicsError)
    from robot_dynamics_ros.model.urdf import URDFError as from_the_loader
    assert from_the_loader is URDFError


def test_missing_file_and_wrong_root_element():
    with pytest.raises(URDFError, match='not found'):
        load_urdf('no/such/robot.urdf')
    with pytest.raises(URDFError, match='expected <robot>'):
        load_urdf('<model name="x"/>')


def test_mimic_joint_is_coupled_by_default_else_with_mimic_false_an_independent_dof_with_a_warning():
    model = load_urdf(os.path.join(BAD_URDF_DIR, 'mimic.urdf'))
    assert model.nv == 1 and model.joint_names == ('joint1',)
    with pytest.warns(UserWarning, match="joint 'joint2' mimics 'joint1'"):
        model = load_urdf(os.path.join(BAD_URDF_DIR, 'mimic.urdf'), mimic=False)
    assert model.nv == 2
    assert model.mimic == {'joint2': ('joint1', 2.0, 0.0)}


def test_canonical_numbering_and_normalised_axes(urdf_path):
    model = load_urdf(urdf_path)
    assert model.nq == model.nv == len(model.joint_names)
    assert all(model.parent[i] < i for i in range(model.nv))
    np.testing.assert_allclose(np.linalg.norm(model.axis, axis=1), 1.0, rtol=0, atol=1e-15)


def test_string_and_file_give_the_same_model():
    with open(TEST_URDFS['two_arm_tree']) as f:
        from_string = load_urdf(f.read())
    from_file = load_urdf(TEST_URDFS['two_arm_tree'])
    assert from_string.joint_names == from_file.joint_names
    np.testing.assert_array_equal(from_string.inertia, from_file.inertia)


def test_tree_topology_and_unnormalised_axis():
    model = load_urdf(TEST_URDFS['two_arm_tree'])
    waist = model.joint_index('waist')
    children_of_chest = [model.joint_names[i] for i in range(model.nv) if model.parent[i] == waist]
    assert sorted(children_of_chest) == ['head_yaw', 'left_shoulder_pitch', 'right_shoulder_pitch']
    np.testing.assert_allclose(model.axis[model.joint_index('right_shoulder_roll')], [0.6, 0, 0.8])


def test_limits_damping_and_joint_types():
    model = load_urdf(TEST_URDFS['prismatic_chain'])
    types = dict(zip(model.joint_names, model.joint_type))
    assert types == {'lift': PRISMATIC, 'shoulder': REVOLUTE, 'slide': PRISMATIC, 'wrist': REVOLUTE}
    wrist = model.joint_index('wrist')  # continuous: no position limits, effort and velocity kept
    assert model.lower[wrist] == -np.inf and model.upper[wrist] == np.inf
    assert np.isfinite(model.effort_limit[wrist]) and np.isfinite(model.velocity_limit[wrist])
    arm = load_urdf(TEST_URDFS['arm7'])
    np.testing.assert_array_equal(arm.effort_limit, [87, 87, 87, 87, 12, 12, 12])
    assert np.all(arm.damping > 0) and np.all(arm.friction > 0)
    assert np.all(arm.lower < arm.upper)


def test_fixed_joint_links_stay_addressable_and_massless_link_allowed():
    model = load_urdf(TEST_URDFS['fixed_and_massless'])
    assert model.nv == 3
    assert {'link_b', 'link_c', 'tip'} <= set(model.frames)
    assert model.frames['link_b'].body == model.frames['link_a'].body  # merged through the fixed joint
    arm = load_urdf(TEST_URDFS['arm7'])
    assert arm.frames['arm7_tool'].body == arm.joint_index('arm7_joint7')


def test_xacro_file():
    pytest.importorskip('xacro')
    model = load_urdf(os.path.join(TEST_DIR, 'urdf', 'arm2.urdf.xacro'))
    assert model.joint_names == ('joint1', 'joint2')
