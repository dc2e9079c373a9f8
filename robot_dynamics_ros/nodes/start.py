"""Entry points of the node processes: the console scripts ``simulator``, ``computed_torque_controller``,
``trajectory_publisher``, ``legged_controller``, ``cartesian_controller``,
``cartesian_target_publisher``, and ``python -m robot_dynamics_ros.nodes.start NAME --ros-args ...``.

SIGINT and SIGTERM are caught (``robot_dynamics_ros.stopping``) before the node's module and its heavy imports
(numpy, scipy, rclpy: about half a second) load, so that a signal at any moment of start-up stops the node
with exit code 0 and one log line, as after start-up.

BLAS runs one thread per node process (unless the environment says otherwise), set before numpy loads: a node's
matrices are 6 x 6 to 40 x 40, too small to gain from threads, and OpenBLAS threads spinning on a loaded machine
cost more than the work (the legged simulator at 1 kHz beside its controller on 2 cores: 490 steps per second
with OpenBLAS's default threads, 1000 with one).
"""
import importlib
import os
import sys

from .. import stopping

NODES = ('simulator', 'computed_torque_controller', 'trajectory_publisher', 'legged_controller', 'cartesian_controller',
         'cartesian_target_publisher')


BLAS_THREADS = ('OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS', 'MKL_NUM_THREADS')


def start(name):
    stopping.catch()
    for variable in BLAS_THREADS:
        os.environ.setdefault(variable, '1')
    return importlib.import_module(f'{__package__}.{name}').main()


def simulator():
    return start('simulator')


def computed_torque_controller():
    return start('computed_torque_controller')


def trajectory_publisher():
    return start('trajectory_publisher')


def legged_controller():
    return start('legged_controller')


def cartesian_controller():
    return start('cartesian_controller')


def cartesian_target_publisher():
    return start('cartesian_target_publisher')


if __name__ == '__main__':
    if len(sys.argv) < 2 or sys.argv[1] not in NODES:
        sys.exit(f"usage: python -m {__package__}.start {{{','.join(NODES)}}} [--ros-args ...]")
    sys.exit(start(sys.argv[1]))
