"""The command line as a user meets it: every user error is one line on stderr naming the problem, with exit
code 2 and no traceback (``--debug`` gives the traceback). Each case runs the CLI as a subprocess."""
import os
import subprocess
import sys

import pytest

from conftest import BAD_URDF_DIR, BUNDLED_URDF, ROOT, TEST_DIR, assert_one_line_error, cli

MASSLESS = os.path.join(TEST_DIR, 'urdf', 'massless_subtree.urdf')


MISSING = '/no/such/robot.urdf'
CASES = {  # name -> (arguments, words the one line must contain)
    'demo missing file': (['demo', MISSING], ['demo: error', 'not found', MISSING]),
    'demo invalid URDF': (['demo', os.path.join(BAD_URDF_DIR, 'unsupported_joint.urdf')],
                          ["joint 'joint2'", "'spherical'"]),
    'demo broken XML': (['demo', os.path.join(BAD_URDF_DIR, 'malformed.urdf')], ['malformed URDF XML']),
    'demo bad seed': (['demo', '--seed', '-1'], ['--seed', "'-1' must be at least 0"]),
    'base-params missing file': (['base-params', MISSING], ['base-params: error', 'not found']),
    'base-params NaN gravity': (['base-params', '--gravity', '0', 'nan', '-9.81'], ['--gravity', 'not finite']),
    'excite missing file': (['excite', MISSING, '-o', 'x.yaml'], ['excite: error', 'not found']),
    'excite zero duration': (['excite', '-o', 'x.yaml', '--duration', '0'], ['--duration', 'greater than 0']),
    'excite one harmonic': (['excite', '-o', 'x.yaml', '--harmonics', '1'], ['--harmonics', 'at least 2']),
    'excite velocity fraction': (['excite', '-o', 'x.yaml', '--velocity-fraction', '1.5'],
                                 ['--velocity-fraction', 'must lie in (0, 1]']),
    'excite rate not a number': (['excite', '-o', 'x.yaml', '--rate', 'fast'], ['--rate', 'not a number']),
    'identify missing URDF': (['identify', MISSING, 'rec.csv', '-o', 'p.yaml'], ['identify: error', 'not found']),
    'identify missing recording': (['identify', BUNDLED_URDF, '/no/rec.mcap', '-o', 'p.yaml'],
                                   ['no recording', '/no/rec.mcap']),
    'identify unknown format': (['identify', BUNDLED_URDF, BUNDLED_URDF, '-o', 'p.yaml'],
                                ['unknown recording format']),
    'identify negative cut-off': (['identify', BUNDLED_URDF, 'rec.csv', '-o', 'p.yaml', '--cutoff', '-3'],
                                  ['--cutoff', 'greater than 0']),
    'bringup negative duration': (['bringup', '--duration', '-1'], ['--duration', "'-1' must be greater than 0"]),
    'bringup zero startup timeout': (['bringup', '--startup-timeout', '0'], ['--startup-timeout']),
    'bringup domain id': (['bringup', '--domain-id', '300'], ['--domain-id', 'must lie in [0, 232]']),
    'bringup missing config': (['bringup', '--config', '/no/config.yaml'], ['config file not found']),
    'bringup gravity in exponent notation': (['bringup', '--gravity', '0', '0', '-1e1', '--config', '/no/config.yaml'],
                                             ['config file not found']),   # -1e1 is a value, not an option
    'bringup invalid URDF': (['bringup', '--urdf', os.path.join(BAD_URDF_DIR, 'unsupported_joint.urdf')],
                             ["joint 'joint2'", "'spherical'"]),
    'compile missing file': (['compile', MISSING], ['compile: error', 'not found']),
    'compile unknown algorithm': (['compile', '--only', 'fly'], ['--only', "invalid choice: 'fly'"]),
    'view missing file': (['view', MISSING], ['view: error', 'not found', MISSING]),
    'view invalid URDF': (['view', os.path.join(BAD_URDF_DIR, 'unsupported_joint.urdf')], ["joint 'joint2'"]),
    'view bad port': (['view', BUNDLED_URDF, '--port', '70000'], ['--port', 'must lie in [1, 65535]']),
    'bringup view bad port': (['bringup', '--view', '--port', '0'], ['--port', 'must lie in [1, 65535]']),
    'unknown subcommand': (['fly'], ["invalid choice: 'fly'"]),
}


@pytest.mark.parametrize('case', sorted(CASES))
def test_user_error_is_one_line_and_exit_code_2(case, tmp_path):
    arguments, words = CASES[case]
    result = cli(*arguments, cwd=tmp_path)
    assert_one_line_error(result, *words)
    assert not os.listdir(tmp_path)  # nothing written: no plot (bringup's default tracking.png), no output


def two_sample_recording(directory):
    """A CSV recording of the bundled arm with two samples."""
    from robot_dynamics_ros import load_urdf
    names = load_urdf(BUNDLED_URDF).joint_names
    path = os.path.join(directory, 'two.csv')
    with open(path, 'w') as f:
        f.write(','.join(['t'] + [f'q_{n}' for n in names] + [f'tau_{n}' for n in names]) + '\n')
        for t in (0.0, 0.001):
            f.write(','.join([str(t)] + ['0.1'] * (2 * len(names))) + '\n')
    return path


def test_identify_on_two_samples_says_the_recording_is_too_short(tmp_path):
    result = cli('identify', BUNDLED_URDF, two_sample_recording(tmp_path), '-o', str(tmp_path / 'p.yaml'))
    assert result.returncode == 2 and 'Traceback' not in result.stderr, result.stderr
    errors = [line for line in result.stderr.splitlines() if 'error' in line]
    assert len(errors) == 1 and 'recording of 2 samples is shorter than' in errors[0], result.stderr
    assert 'window_length' not in result.stderr   # SciPy's words, not the user's


@pytest.mark.parametrize('option', ['-o', '--urdf-out'])
def test_identify_refuses_an_unwritable_output_before_it_reads_anything(tmp_path, option):
    """Checked with the arguments: the recording named does not even exist."""
    outputs = {'-o': str(tmp_path / 'p.yaml'), '--urdf-out': str(tmp_path / 'robot.urdf')}
    outputs[option] = '/no/such/directory/out'
    result = cli('identify', BUNDLED_URDF, str(tmp_path / 'missing.csv'), *[a for item in outputs.items() for a in item])
    assert_one_line_error(result, option, "cannot write '/no/such/directory/out'", 'no directory')


def test_view_without_its_extra_names_the_extra_to_install(tmp_path):
    hide_viser = ("import sys; sys.modules['viser'] = None; from robot_dynamics_ros.cli import main; "
                  f"sys.exit(main(['view', {BUNDLED_URDF!r}]))")   # `import viser` then raises ImportError
    result = subprocess.run([sys.executable, '-c', hide_viser], capture_output=True, text=True, cwd=tmp_path)
    assert_one_line_error(result, 'view: error', "'viser'", "pip install 'robot_dynamics_ros[view]'")


def test_debug_flag_gives_the_traceback():
    result = cli('--debug', 'demo', MISSING)
    assert result.returncode != 0
    assert 'Traceback' in result.stderr and 'URDFError' in result.stderr


def test_warnings_are_one_line_each_and_forward_dynamics_error_names_the_joint(tmp_path):
    """bringup on a URDF whose head moves no mass: the simulator could not run, so bringup refuses before
    starting any node; the load warning is one line of its own."""
    result = cli('bringup', '--urdf', MASSLESS, '--plot', str(tmp_path / 'p.png'))
    assert result.returncode == 2 and 'Traceback' not in result.stderr
    lines = result.stderr.strip().splitlines()
    errors = [line for line in lines if ': error: ' in line]
    assert len(errors) == 1 and "joint 'head_yaw' moves no mass or inertia" in errors[0]
    assert all(': warning: ' in line for line in lines if line not in errors)
    assert not os.listdir(tmp_path)


def test_bringup_names_the_first_error_of_a_node_that_failed_to_start(tmp_path):
    pytest.importorskip('rclpy')
    config = tmp_path / 'bad_rate.yaml'
    with open(os.path.join(ROOT, 'config', 'arm7.yaml')) as f:
        text = f.read()
    assert '    rate: 1000.0' in text
    config.write_text(text.replace('    rate: 1000.0', '    rate: -5.0', 1))
    plot = tmp_path / 'p.png'
    result = cli('bringup', '--config', str(config), '--duration', '2', '--plot', str(plot),
                 '--startup-timeout', '60')
    assert_one_line_error(result, 'the simulator node failed to start', "parameter 'rate' must be positive")
    assert not plot.exists()


def test_compile_builds_the_code_that_later_processes_load(tmp_path, monkeypatch):
    """``robot-dynamics compile`` in the foreground, into the cache directory; a model loaded afterwards runs it."""
    pytest.importorskip('numba')
    from robot_dynamics_ros import fast, load_urdf
    urdf = os.path.join(TEST_DIR, 'urdf', 'prismatic_chain.urdf')
    monkeypatch.setenv('XDG_CACHE_HOME', str(tmp_path))
    result = cli('compile', urdf, '--only', 'rnea')
    assert result.returncode == 0, result.stderr
    assert str(tmp_path) in result.stdout and '  rnea ' in result.stdout and 'crba' not in result.stdout
    monkeypatch.setattr(fast, 'ENABLE', True)
    model = load_urdf(urdf)
    assert (fast.path(model), fast.path(model, algorithm='crba')) == ('generated', 'table')
