"""Entry points of the node processes: the console scripts ``simulator``, ``computed_torque_controller``,
``trajectory_publisher``, ``legged_controller``, and ``python -m robot_dynamics_ros.nodes.start NAME --ros-args ...``.

SIGINT and SIGTERM are caught (``robot_dynamics_ros.stopping``) before the node's module and its heavy imports
(numpy, scipy, rclpy: about half a second) load, so that a signal at any moment of start-up stops the node
with exit code 0 and one log line, as after start-up.
"""
import importlib
import sys

from .. import stopping

NODES = ('simulator', 'computed_torque_controller', 'trajectory_publisher', 'legged_controller')


def start(name):
    stopping.catch()
    return importlib.import_module(f'{__package__}.{name}').main()


def simulator():
    return start('simulator')


def computed_torque_controller():
    return start('computed_torque_controller')


def trajectory_publisher():
    return start('trajectory_publisher')


def legged_controller():
    return start('legged_controller')


if __name__ == '__main__':
    if len(sys.argv) < 2 or sys.argv[1] not in NODES:
        sys.exit(f"usage: python -m {__package__}.start {{{','.join(NODES)}}} [--ros-args ...]")
    sys.exit(start(sys.argv[1]))
