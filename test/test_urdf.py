"""URDF -> Model: structure, limits, xacro, and one clear error per kind of bad input."""
import os

import numpy as np
import pytest

from conftest import BAD_URDF_DIR, TEST_DIR, TEST_URDFS
from robot_dynamics_ros import URDFError, load_urdf
from robot_dynamics_ros.model import PRISMATIC, REVOLUTE

BAD_CASES = {  # file -> words the error must contain (the offending element is named)
    'malformed.urdf': ['malformed URDF XML', 'line'],
    'missing_parent_link.urdf': ["joint 'joint1'", "parent link 'no_such_link'"],
    'missing_child_link.urdf': ["joint 'joint2'", "child link 'no_such_link'"],
    'two_parents.urdf': ["link 'link2'", 'two parents'],
    'cycle.urdf': ['cycle'],
    'floating_joint.urdf': ["joint 'joint2'", "'floating'"],
    'planar_joint.urdf': ["joint 'joint2'", "'planar'"],
    'zero_axis.urdf': ["joint 'joint1'", 'zero <axis>'],
    'negative_mass.urdf': ["link 'link1'", 'mass -1.0'],
    'non_pd_inertia.urdf': ["link 'link1'", 'not positive definite'],
    'nan_inertia.urdf': ["link 'link1'", 'non-finite'],
}


@pytest.mark.parametrize('filename', sorted(BAD_CASES))
def test_bad_urdf_raises_clear_error(filename):
    with pytest.raises(URDFError) as error:
        load_urdf(os.path.join(BAD_URDF_DIR, filename))
    for words in BAD_CASES[filename]:
        assert words in str(error.value)


def test_every_bad_file_is_covered():
    assert set(os.listdir(BAD_URDF_DIR)) - {'mimic.urdf'} == set(BAD_CASES)


def test_missing_file_and_wrong_root_element():
    with pytest.raises(URDFError, match='not found'):
        load_urdf('no/such/robot.urdf')
    with pytest.raises(URDFError, match='expected <robot>'):
        load_urdf('<model name="x"/>')


def test_mimic_joint_is_an_independent_dof_with_a_warning():
    with pytest.warns(UserWarning, match="joint 'joint2' mimics 'joint1'"):
        model = load_urdf(os.path.join(BAD_URDF_DIR, 'mimic.urdf'))
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
