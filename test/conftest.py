import functools
import importlib
import os
import subprocess
import sys

import numpy as np
import pytest

from import_scan import imports

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


def example_robot_data(path=''):
    """A file of the PyPI package example-robot-data (test-only: robots as their packages ship them, with SRDFs and
    meshes), relative to its robots/ folder; the test is skipped where it is not installed."""
    from importlib import metadata
    try:
        distribution = metadata.distribution('example-robot-data')
    except metadata.PackageNotFoundError:
        pytest.skip('example-robot-data is not installed', allow_module_level=True)   # (also at a module's import)
    return str(distribution.locate_file(os.path.join('cmeel.prefix', 'share', 'example-robot-data', 'robots', path)))


@pytest.fixture(params=sorted(TEST_URDFS))
def urdf_path(request):
    """Every valid test URDF and the bundled robot."""
    return TEST_URDFS[request.param]


@pytest.fixture(scope='module')
def arm():
    """The bundled 7-DOF arm."""
    from robot_dynamics_ros import load_urdf
    return load_urdf(BUNDLED_URDF)


@pytest.fixture(scope='module')
def quadruped():
    """The bundled quadruped on a free-flyer root, and its contact points (its URDF's sphere feet)."""
    from robot_dynamics_ros import load_urdf
    from robot_dynamics_ros.model.collision import contact_points_from_urdf
    urdf = os.path.join(ROOT, 'urdf', 'quadruped.urdf')
    return load_urdf(urdf, root_joint='floating'), contact_points_from_urdf(urdf)


def tilt_degrees(orientation):
    """The base's tilt from upright: the angle of its z axis from the world's. ``orientation``: q of a free-flyer
    root (x y z qx qy qz qw), or a quaternion message (geometry_msgs/Quaternion: odometry's pose.orientation)."""
    x, y = (orientation.x, orientation.y) if hasattr(orientation, 'w') else (orientation[3], orientation[4])
    return np.degrees(np.arccos(np.clip(1.0 - 2.0 * (x * x + y * y), -1.0, 1.0)))


def relative_error(ours, theirs):
    """Largest difference relative to the largest value (or to 1 where the values are small)."""
    return np.max(np.abs(ours - theirs)) / max(1.0, np.max(np.abs(theirs)))


# The fast path runs the reference's recursions compiled (table kernels, generated code): its results differ by
# rounding alone, relative to the largest value (relative_error).
FAST_TOLERANCE = 1e-12


def assert_fast_equals_reference(model, rng):
    """The fast path gives the reference algorithms' results at a random state of ``model`` (external forces and
    gravity too): RNEA, CRBA, ABA, gravity and bias torques, U D U^T, the regressor (with its optional columns),
    batched ABA; each within FAST_TOLERANCE."""
    from robot_dynamics_ros import algorithms, fast, random_configuration
    q, qd, x = random_configuration(model, rng), rng.normal(size=model.nv), rng.normal(size=model.nv)
    f_ext, gravity = rng.normal(size=(model.nb, 6)), rng.normal(size=3) * 10.0
    columns = dict(rotor_inertia=True, viscous=True, coulomb=False, offset=True)
    pairs = {
        'rnea': (fast.rnea(model, q, qd, x), algorithms.rnea(model, q, qd, x)),
        'rnea, gravity and f_ext': (fast.rnea(model, q, qd, x, gravity, f_ext),
                                    algorithms.rnea(model, q, qd, x, gravity, f_ext)),
        'crba': (fast.crba(model, q), algorithms.crba(model, q)),
        'aba': (fast.aba(model, q, qd, x), algorithms.aba(model, q, qd, x)),
        'aba, gravity and f_ext': (fast.aba(model, q, qd, x, gravity, f_ext),
                                   algorithms.aba(model, q, qd, x, gravity, f_ext)),
        'gravity_torques': (fast.gravity_torques(model, q, gravity), algorithms.gravity_torques(model, q, gravity)),
        'bias_torques': (fast.bias_torques(model, q, qd), algorithms.bias_torques(model, q, qd)),
        'regressor, gravity': (fast.regressor(model, q, qd, x, gravity),
                               algorithms.regressor(model, q, qd, x, gravity)),
        'regressor, columns': (fast.regressor(model, q, qd, x, **columns),
                               algorithms.regressor(model, q, qd, x, **columns)),
    }
    for k, (ours, reference) in enumerate(zip(fast.udut(model, q), algorithms.udut(model, q))):
        pairs[f'udut[{k}]'] = (ours, reference)
    Q = np.array([random_configuration(model, rng) for _ in range(3)])
    QD, X = rng.normal(size=(3, model.nv)), rng.normal(size=(3, model.nv))
    pairs['aba_batch'] = (fast.aba_batch(model, Q, QD, X), [algorithms.aba(model, *state) for state in zip(Q, QD, X)])
    for name, (ours, reference) in pairs.items():
        error = relative_error(np.asarray(ours), np.asarray(reference))
        assert error <= FAST_TOLERANCE, f"{name}: the fast path differs by {error:.2e} of the largest value"


def random_states(model, seed=0, n=50):
    """n random (q, qd, x) of the model: a configuration (quaternions of floating joints unit), two normal vectors."""
    from robot_dynamics_ros import random_configuration
    rng = np.random.default_rng(seed)
    for _ in range(n):
        yield random_configuration(model, rng), rng.normal(size=model.nv), rng.normal(size=model.nv)


def cli(*args, cwd=None):
    """``robot-dynamics ARGS`` in a child process (its exit code and output)."""
    return subprocess.run([sys.executable, '-m', 'robot_dynamics_ros.cli', *args], capture_output=True, text=True,
                          timeout=300, cwd=cwd or ROOT)


def assert_one_line_error(result, *words):
    """A user error: exit 2, one line on stderr holding every word, no traceback."""
    assert result.returncode == 2, result.stderr
    assert 'Traceback' not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    for word in words:
        assert word in lines[0]


def pytest_configure(config):
    config.addinivalue_line('markers', 'ros: the test module uses rclpy (nodes over DDS); set here, from its imports')


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makemodule(module_path, parent):
    """launch_testing's pytest plugin (colcon test loads it) imports every test module to look for a launch test; a
    skip at import (an optional dependency missing) raised inside it ended the collection of every module in test/,
    and nothing ran. Here a module without a launch test, or one that skips or fails at import, is collected as
    pytest would: the skip or the error is that module's alone."""
    if module_path.name == '__init__.py':
        return None
    if 'generate_test_description' in module_path.read_text():
        try:
            importlib.import_module(module_path.stem)   # (as pytest imports it: test/ is on sys.path)
            return None   # launch_testing's
        except (Exception, pytest.skip.Exception):
            pass   # pytest imports it again, and reports the same
    return pytest.Module.from_parent(parent, path=module_path)


def pytest_collection_modifyitems(items):
    """Mark `ros` every test of a module that imports rclpy, itself or through a test-local module (ros_helpers):
    `pytest -m ros` runs exactly the tests that need the ROS client library, as .ci/run does with Jazzy's."""
    for item in items:
        module = getattr(item, 'module', None)
        if module is not None and imports_rclpy(module.__file__):
            item.add_marker('ros')


@functools.lru_cache(maxsize=None)
def imports_rclpy(path):
    pending, seen = [os.path.abspath(path)], set()
    while pending:
        current = pending.pop()
        seen.add(current)
        for found in imports(current):
            if found.module == 'rclpy':
                return True
            local = os.path.join(TEST_DIR, found.module + '.py')
            if os.path.exists(local) and local not in seen:
                pending.append(local)
    return False
