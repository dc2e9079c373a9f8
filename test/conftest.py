import os

import pytest

# No automatic background compilation of generated code for every model the tests load (test_fast_path
# turns it on where it tests it).
os.environ.setdefault('ROBOT_DYNAMICS_ROS_CODEGEN', '0')

TEST_DIR = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(TEST_DIR)
BUNDLED_URDF = os.path.join(ROOT, 'urdf', 'arm7.urdf')
TEST_URDFS = {
    'arm7': BUNDLED_URDF,
    'two_arm_tree': os.path.join(TEST_DIR, 'urdf', 'two_arm_tree.urdf'),
    'prismatic_chain': os.path.join(TEST_DIR, 'urdf', 'prismatic_chain.urdf'),
    'fixed_and_massless': os.path.join(TEST_DIR, 'urdf', 'fixed_and_massless.urdf'),
}
BAD_URDF_DIR = os.path.join(TEST_DIR, 'urdf', 'bad')


@pytest.fixture(params=sorted(TEST_URDFS))
def urdf_path(request):
    """Every valid test URDF and the bundled robot."""
    return TEST_URDFS[request.param]
