"""Each node process exits with code 0 soon after SIGINT or SIGTERM, running or still loading its modules
(issue 28: nodes logged `stopping (SIGINT)` at once but exited 2-4 s later, garbage-collecting at interpreter
exit; `ros2 launch` then logged an error and escalated to SIGTERM)."""
import os
import signal
import subprocess
import time

import pytest

from conftest import BUNDLED_URDF, ROOT
from ros_helpers import ros_domain, start  # noqa: F401  (fixtures)

QUADRUPED = os.path.join(ROOT, 'urdf', 'quadruped.urdf')
STARTUP = 60.0
# s from the signal to the process's exit, the requirement at any moment under load: `ros2 launch` waits
# sigterm_timeout (5 s) before it logs an error and escalates, and a user's Ctrl-C should end a node at once.
# Measured with two copies of the test suite running beside: medians 0.03-0.2 s, the slowest 0.49 s; the viewer
# once 0.52 s (its destroy_node: viser's server.stop() joins its event-loop thread, 0.1-0.3 s of the time).
STOP_BOUND = 0.5
WAIT_BOUND = 10.0   # s the test waits for the exit at all, to report how late a late one was


def node_params(name):
    """Each node's parameters to start on its own: the quadruped for the legged controller and the viewer."""
    if name == 'legged_controller':
        return [('urdf_file', QUADRUPED)]
    if name == 'viewer':
        pytest.importorskip('viser')
        from view_helpers import free_port
        return [('urdf_file', QUADRUPED), ('root_joint', 'floating'), ('port', free_port())]
    return [('urdf_file', BUNDLED_URDF)]


def stop_time(node, sig):
    """Send sig; (exit code, seconds until the process exited), failing past STOP_BOUND."""
    sent = time.monotonic()
    node.process.send_signal(sig)
    try:
        code = node.process.wait(WAIT_BOUND)
    except subprocess.TimeoutExpired:
        pytest.fail(f"{node.name} still running {WAIT_BOUND} s after {sig.name}:\n{node.log()}")
    seconds = time.monotonic() - sent
    assert seconds < STOP_BOUND, f"{node.name} exited {seconds:.3f} s after {sig.name}:\n{node.log()}"
    return code, seconds


@pytest.mark.parametrize('sig', [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize('name', ['simulator', 'computed_torque_controller', 'trajectory_publisher',
                                  'legged_controller', 'cartesian_controller', 'viewer'])
def test_a_running_node_exits_0_soon_after_a_signal(start, name, sig):
    node = start(name, params=node_params(name))
    assert node.wait_for_log('executor:', STARTUP), node.log()   # its spin loop starts next
    code, seconds = stop_time(node, sig)
    print(f'{name}: exit {seconds:.3f} s after {sig.name}')
    assert code == 0, node.log()
    assert f'stopping ({sig.name})' in node.log()


def test_a_node_loading_its_modules_exits_0_at_once_on_a_signal(start):
    node = start('computed_torque_controller', params=[('urdf_file', BUNDLED_URDF)])
    code, seconds = stop_time(node, signal.SIGINT)   # pending until the entry point catches it, then taken
    print(f'during start-up: exit {seconds:.3f} s after SIGINT')
    assert code == 0, node.log()
    assert node.log().count('stopping (SIGINT during start-up)') == 1, node.log()


def test_a_node_building_itself_exits_0_soon_after_a_signal(start):
    """The simulator of the quadruped on the ground takes a second or more to build (2.5-3.3 s under load) after
    its first log line: a signal then interrupts the building."""
    params = [('urdf_file', QUADRUPED), ('root_joint', 'floating')]   # ground 'auto': on
    node = start('simulator', params=params)
    assert node.wait_for_log('dynamics:', STARTUP), node.log()   # logged while the node is built
    code, seconds = stop_time(node, signal.SIGINT)
    print(f'while building: exit {seconds:.3f} s after SIGINT')
    assert code == 0, node.log()
    assert node.log().count('stopping (SIGINT') == 1 and 'Traceback' not in node.log(), node.log()
