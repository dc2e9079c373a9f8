"""Entry points of the node processes: the console scripts ``simulator``, ``computed_torque_controller``,
``trajectory_publisher``, ``legged_controller``, ``viewer``, ``cartesian_controller``,
``cartesian_target_publisher``, and ``python -m robot_dynamics_ros.nodes.start NAME --ros-args ...``.

A node started by ``commands.processes.start_node`` (bringup, the tests) gets SIGTERM when the process that started
it dies, also by SIGKILL (a test's timeout): it would otherwise run on, on a ROS domain whose claim died with its
starter, and meet the next run on that domain (Linux's PR_SET_PDEATHSIG; elsewhere nothing changes).

SIGINT and SIGTERM are caught (``robot_dynamics_ros.stopping``) before the node's module and its heavy imports
(numpy, scipy, rclpy: about half a second) load, so that a signal at any moment of start-up stops the node
with exit code 0 and one log line, as after start-up.

BLAS runs one thread per node process (unless the environment says otherwise), set before numpy loads: a node's
matrices are 6 x 6 to 40 x 40, too small to gain from threads, and OpenBLAS threads spinning on a loaded machine
cost more than the work (the legged simulator at 1 kHz beside its controller on 2 cores: 490 steps per second
with OpenBLAS's default threads, 1000 with one).

A signal while the modules load ends the process at once. Otherwise the process ends as soon as the node has
stopped (destroyed, rclpy shut down, its log flushed), without the interpreter's finalisation: that
garbage-collects every module's objects (numpy, scipy, numba, rclpy), which took 0.4 s of the 0.5 s from SIGINT
to exit on an idle machine (py-spy: gc_collect_main after main returned) and up to 4 s on a loaded one, past
``ros2 launch``'s patience.
"""
import ctypes
import importlib
import os
import signal
import sys
import time

from .. import stopping

NODES = ('simulator', 'computed_torque_controller', 'trajectory_publisher', 'legged_controller', 'viewer',
         'cartesian_controller', 'cartesian_target_publisher')


BLAS_THREADS = ('OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS', 'MKL_NUM_THREADS')
STARTER = 'ROBOT_DYNAMICS_ROS_STARTER'   # the starter's process id, set by commands.processes.start_node
PR_SET_PDEATHSIG = 1


def start(name):
    stopping.catch(wake_up=lambda: _stop_during_imports(name))
    _stop_with_starter()
    for variable in BLAS_THREADS:
        os.environ.setdefault(variable, '1')
    code = importlib.import_module(f'{__package__}.{name}').main()   # its run() takes the signals over
    _exit(code)


def _stop_with_starter():
    """SIGTERM to this process when its starter dies (the starter's thread, for the kernel: start_node is called
    from threads that outlive their nodes); at once if it died already."""
    starter = os.environ.pop(STARTER, None)
    if starter is None or not sys.platform.startswith('linux'):
        return
    ctypes.CDLL(None).prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM))
    if os.getppid() != int(starter):
        os.kill(os.getpid(), signal.SIGTERM)


def _stop_during_imports(name):
    """A signal while the modules load: nothing exists to clean up, so stop at once rather than after the
    imports (seconds under load), with rclpy's one log line."""
    sys.stderr.write(f"[INFO] [{time.time():.9f}] [{name}]: stopping ({stopping.received()} during start-up)\n")
    _exit(0)


def _exit(code):
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def simulator():
    return start('simulator')


def computed_torque_controller():
    return start('computed_torque_controller')


def trajectory_publisher():
    return start('trajectory_publisher')


def legged_controller():
    return start('legged_controller')


def viewer():
    return start('viewer')


def cartesian_controller():
    return start('cartesian_controller')


def cartesian_target_publisher():
    return start('cartesian_target_publisher')


if __name__ == '__main__':
    if len(sys.argv) < 2 or sys.argv[1] not in NODES:
        sys.exit(f"usage: python -m {__package__}.start {{{','.join(NODES)}}} [--ros-args ...]")
    sys.exit(start(sys.argv[1]))
