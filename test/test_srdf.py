"""SRDF reading (model/srdf.py) on the SRDFs example-robot-data ships, against Pinocchio's loadReferenceConfigurations
(joints matched by name), and bad SRDFs: one error naming the element."""
import pytest

from conftest import BUNDLED_URDF, assert_one_line_error, cli, example_robot_data

from robot_dynamics_ros import SRDFError, load_srdf, load_urdf
from robot_dynamics_ros.model.srdf import check_links, configuration

pin = pytest.importorskip('pinocchio')

# robot -> (URDF, SRDF, the end effectors' parent links as the SRDF file lists them)
ROBOTS = {
    'a1': ('a1_description/urdf/a1.urdf', 'a1_description/srdf/a1.srdf', ['FL_foot', 'FR_foot', 'RL_foot', 'RR_foot']),
    'go1': ('go1_description/urdf/go1.urdf', 'go1_description/srdf/go1.srdf',
            ['FL_foot', 'FR_foot', 'RL_foot', 'RR_foot']),
    'anymal_c': ('anymal_c_simple_description/urdf/anymal.urdf', 'anymal_c_simple_description/srdf/anymal.srdf',
                 ['LF_FOOT', 'RF_FOOT', 'LH_FOOT', 'RH_FOOT']),
    'solo12': ('solo_description/robots/solo12.urdf', 'solo_description/srdf/solo.srdf',
               ['FL_FOOT', 'FR_FOOT', 'HL_FOOT', 'HR_FOOT']),
    'talos': ('talos_data/robots/talos_reduced.urdf', 'talos_data/srdf/talos.srdf',
              ['right_sole_link', 'left_sole_link']),
}


@pytest.mark.parametrize('robot', sorted(ROBOTS))
def test_group_states_agree_with_pinocchio(robot):
    urdf_path, srdf_path, feet = (example_robot_data(path) if i < 2 else path
                                  for i, path in enumerate(ROBOTS[robot]))
    model = load_urdf(urdf_path, root_joint='floating')
    srdf = load_srdf(srdf_path)
    check_links(model, srdf)
    assert srdf.feet == feet
    oracle = pin.buildModelFromUrdf(urdf_path, pin.JointModelFreeFlyer())
    pin.loadReferenceConfigurations(oracle, srdf_path, False)
    names = sorted(entry.key() for entry in oracle.referenceConfigurations)
    assert sorted(state.name for state in srdf.group_states) == names
    for state in srdf.group_states:
        q, base_given = configuration(model, state, srdf)
        expected = oracle.referenceConfigurations[state.name]
        assert base_given
        assert q[:7] == pytest.approx(expected[:7], abs=1e-12)   # both root joints are free-flyers: x y z qx qy qz qw
        for name, index in zip(model.joint_names, model.joint_q_index):
            assert q[index] == pytest.approx(expected[oracle.joints[oracle.getJointId(name)].idx_q], abs=1e-12), name


def test_the_root_joint_and_the_stance_are_the_srdfs():
    go1 = load_srdf(example_robot_data(ROBOTS['go1'][1]))
    talos = load_srdf(example_robot_data(ROBOTS['talos'][1]))
    solo = load_srdf(example_robot_data(ROBOTS['solo12'][1]))
    assert go1.root_joint == 'floating' and go1.stance().name == 'standing'
    assert talos.root_joint is None and talos.stance().name == 'half_sitting'   # TALOS's SRDF has no virtual_joint
    assert solo.stance().name == 'standing'      # before 'straight_standing', which comes second
    assert go1.stance().joints['root_joint'] == (0.0, 0.0, 0.26, 0.0, 0.0, 0.0, 1.0)


def srdf_with(body):
    return f'<robot name="r">{body}</robot>'


@pytest.mark.parametrize('body, words', [
    ('<virtual_joint name="v" type="spherical" parent_frame="world" child_link="base"/>', ['virtual_joint', 'v',
                                                                                          'spherical']),
    ('<virtual_joint name="v" type="floating" parent_frame="world"/>', ['virtual_joint', 'child_link']),
    ('<group_state name="stand" group="all"><joint name="j1" value="zero"/></group_state>', ['group_state', 'stand',
                                                                                            'j1', 'zero']),
    ('<group_state name="stand" group="all"><joint name="j1" value="nan"/></group_state>', ['stand', 'j1']),
    ('<group_state name="stand" group="all"><joint name="j1"/></group_state>', ['group_state', 'stand', 'value']),
    ('<group_state group="all"/>', ['group_state', 'name']),
    ('<end_effector name="foot" group="leg"/>', ['end_effector', 'foot', 'parent_link']),
])
def test_a_bad_srdf_is_one_error_naming_the_element(body, words):
    with pytest.raises(SRDFError) as error:
        load_srdf(srdf_with(body))
    for word in words:
        assert word in str(error.value)


def test_malformed_xml_and_a_missing_file_are_srdf_errors(tmp_path):
    with pytest.raises(SRDFError, match='malformed SRDF XML'):
        load_srdf('<robot><group_state></robot>')
    with pytest.raises(SRDFError, match='cannot read SRDF file'):
        load_srdf(str(tmp_path / 'missing.srdf'))


def test_joints_and_links_the_urdf_lacks_are_named():
    model = load_urdf(example_robot_data(ROBOTS['go1'][0]), root_joint='floating')
    srdf = load_srdf(srdf_with('<group_state name="standing" group="all"><joint name="FL_hip_joint" value="0"/>'
                               '<joint name="elbow" value="1"/></group_state>'))
    with pytest.raises(SRDFError, match="standing.*'elbow'"):
        configuration(model, srdf.stance(), srdf)
    short = load_srdf(srdf_with('<group_state name="s" group="all"><joint name="root_joint" value="0 0 1"/>'
                                '</group_state>'))
    with pytest.raises(SRDFError, match="'root_joint'> has 3 values; the joint has 7"):
        configuration(model, short.stance(), short)
    for body, words in (('<end_effector name="foot" parent_link="paw" group="leg"/>', "'paw'"),
                        ('<virtual_joint name="v" type="floating" parent_frame="w" child_link="hull"/>', "'hull'")):
        with pytest.raises(SRDFError, match=words):
            check_links(model, load_srdf(srdf_with(body)))


def test_bringup_refuses_a_bad_srdf_in_one_line(tmp_path):
    a1 = example_robot_data(ROBOTS['a1'][0])   # a URDF that loads without a warning
    bad = tmp_path / 'bad.srdf'
    bad.write_text(srdf_with('<group_state name="stand" group="all"><joint name="FL_hip_joint" value="up"/>'
                             '</group_state>'))
    assert_one_line_error(cli('bringup', '--urdf', a1, '--srdf', str(bad)), 'group_state', 'stand', 'FL_hip_joint')
    foreign = tmp_path / 'foreign.srdf'
    foreign.write_text(srdf_with('<virtual_joint name="root_joint" type="floating" parent_frame="w" child_link="base"/>'
                                 '<group_state name="standing" group="all"><joint name="elbow" value="1"/>'
                                 '</group_state>'))
    assert_one_line_error(cli('bringup', '--urdf', a1, '--srdf', str(foreign)), 'standing', "'elbow'", "'a1'")
    assert_one_line_error(cli('bringup', '--urdf', a1, '--srdf', str(tmp_path / 'missing.srdf')), 'missing.srdf')


def test_record_refuses_an_srdf_that_does_not_fit_in_one_line(tmp_path):
    pytest.importorskip('rosbags')   # record writes a rosbag2 with it (the 'bag' extra)
    trajectory = tmp_path / 'trajectory.yaml'
    assert cli('excite', BUNDLED_URDF, '-o', str(trajectory), '--duration', '6', '--harmonics', '2', '--budget', '30',
               '--max-evaluations', '50').returncode == 0
    foreign = tmp_path / 'foreign.srdf'
    foreign.write_text(srdf_with('<group_state name="home" group="arm"><joint name="elbow" value="1"/></group_state>'))
    assert_one_line_error(cli('record', str(trajectory), '-o', str(tmp_path / 'bag'), '--srdf', str(foreign)),
                          'home', "'elbow'")
    assert not (tmp_path / 'bag').exists()
