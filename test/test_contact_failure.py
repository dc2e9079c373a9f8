"""A contact solve that fails stops the run: the simulator node logs one error naming the cause and exits 1, and
``robot-dynamics bringup --root-joint floating`` says "the simulation stopped" and exits 1, where the simulator
used to keep its state forever (sim time stopped; bringup waited out its wall allowance, every node exiting 0).

The failure is injected into the node processes by a ``sitecustomize`` module on their PYTHONPATH: after
FAIL_AFTER steps, ``Simulator.step`` raises ``ContactSolverError`` as the solver does when Clarabel certifies no
solution (the ground, the solver and the node are otherwise the real ones)."""
import os
import subprocess
import sys

import pytest

from conftest import ROOT, TEST_DIR
from ros_helpers import domain_id, release_domain
from robot_dynamics_ros.commands.node_runs import first_error_line, simulation_stopped
from robot_dynamics_ros.commands.processes import isolated_ros_env, start_node
from robot_dynamics_ros.resources import bundled_urdf

pytest.importorskip('clarabel')
BOX = os.path.join(TEST_DIR, 'urdf', 'box.urdf')
QUADRUPED = bundled_urdf('quadruped.urdf')
FAIL_AFTER = 200   # steps (0.2 s of sim time at 1 kHz)
CAUSE = 'the contact problem was not solved: Clarabel says DualInfeasible (injected by the test)'
HOOK = f'''
import os
if os.environ.get('INJECT_CONTACT_FAILURE'):
    from robot_dynamics_ros.simulation.ground_contact import ContactSolverError
    from robot_dynamics_ros.simulation.simulator import Simulator
    step, calls = Simulator.step, [0]

    def failing_step(self):
        calls[0] += 1
        if calls[0] > {FAIL_AFTER} + 1:   # (+ 1: the node's warm-up step)
            raise ContactSolverError({CAUSE!r})
        step(self)
    Simulator.step = failing_step
'''


@pytest.fixture
def failing_env(tmp_path):
    """The environment of node processes on a domain of their own, with the injected failure."""
    hook = tmp_path / 'hook'
    hook.mkdir()
    (hook / 'sitecustomize.py').write_text(HOOK)
    env = isolated_ros_env(domain_id(__name__))
    env['PYTHONPATH'] = os.pathsep.join([str(hook), ROOT, env.get('PYTHONPATH', '')])
    env['INJECT_CONTACT_FAILURE'] = '1'
    env.setdefault('OPENBLAS_NUM_THREADS', '1')
    yield env
    release_domain(__name__)


def test_the_simulator_node_stops_with_one_error_naming_the_cause_and_exit_1(failing_env, tmp_path):
    log = tmp_path / 'simulator.log'
    process = start_node('simulator', ['-p', f'urdf_file:={BOX}', '-p', 'root_joint:=floating',
                                       '-p', 'wait_for_command:=false'], failing_env, str(log))
    try:
        code = process.wait(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    text = log.read_text()
    assert code == 1, text
    assert first_error_line(text) == f'simulation step failed: {CAUSE} (at sim time 0.2 s); the simulator stops'
    assert simulation_stopped(text).startswith(f'simulation step failed: {CAUSE}')
    assert 'Traceback' not in text and '[FATAL]' not in text, text
    errors = [line for line in text.splitlines() if line.startswith('[ERROR]')]
    assert len(errors) == 2 and 'stopping (simulation step failed): 200 steps' in errors[1], text


def test_bringup_of_a_floating_robot_says_the_simulation_stopped_and_exits_1(failing_env):
    """A 20 s run whose simulator fails at 0.2 s of sim time: the simulator itself exits 1 (before, it stood still
    until bringup had waited out the run's wall allowance, 3 d + 10 s, and stopped it: exit 0)."""
    result = subprocess.run([sys.executable, '-m', 'robot_dynamics_ros.cli', 'bringup', '--urdf', QUADRUPED,
                             '--root-joint', 'floating', '--duration', '20'], env=failing_env, capture_output=True,
                            text=True, timeout=300, cwd=ROOT)
    assert result.returncode == 1, result.stdout + result.stderr
    assert f'the simulation stopped: simulation step failed: {CAUSE}' in result.stdout, result.stdout
    assert 'simulator exited with 1' in result.stderr, result.stderr
