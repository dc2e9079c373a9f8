"""``robot-dynamics`` command line: one subcommand per job, each in robot_dynamics_ros/commands/.

A user error (a missing file, an invalid URDF, a bad argument value, a missing optional package) is one
line on stderr and exit code 2; ``robot-dynamics --debug ...`` shows the traceback instead. SIGINT and SIGTERM,
at any moment, stop a command with one line and exit code 128 + the signal's number (130, 143), as a shell
reports a command a signal ended; ``record`` keeps what it recorded.
"""
import argparse
import importlib
import os
import re
import sys
import warnings

from . import stopping
from .errors import RobotDynamicsError

# subcommand -> module in robot_dynamics_ros.commands with add_arguments(parser) and run(args) -> exit code
SUBCOMMANDS = {
    'demo': 'Dynamics of the bundled robot at a random state, checked against identities',
    'bringup': 'Closed loop (simulator + computed-torque controller + reference) without a ROS install',
    'base-params': 'Base inertial parameters of a URDF (Gautier-Khalil)',
    'identify': 'Identify base parameters from recorded joint data',
    'excite': 'Excitation trajectory for identification',
    'record': 'Record joint states while the simulated arm follows an excitation trajectory (rosbag2)',
    'compile': "Compile a robot's per-robot generated code ahead (numba), in the foreground",
    'view': 'The model in the browser: meshes, a slider per joint, frames, gravity torques',
}
# Errors a user causes: ours, files (OSError), bad values (ValueError), a missing optional package.
USER_ERRORS = (RobotDynamicsError, OSError, ValueError, ImportError)
EXTRAS = {'rosbags': 'bag', 'matplotlib': 'plot', 'numba': 'fast', 'xacro': 'xacro', 'rclpy': 'ros',
          'trimesh': 'legged'}


class OneLineErrorParser(argparse.ArgumentParser):
    """argparse whose usage errors are one line (exit code 2, as argparse's), and that reads any negative number,
    -1e6 included, as a value (argparse before Python 3.13 took '-1e6' for an option)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = re.compile(r'^-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$')

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def describe(error):
    """One line for the user."""
    if isinstance(error, ImportError) and error.name:
        extra = EXTRAS.get(error.name.split('.')[0])
        hint = f"pip install 'robot_dynamics_ros[{extra}]'" if extra else f"pip install {error.name.split('.')[0]}"
        return f"the Python package {error.name!r} is not installed ({hint})"
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__


def main(argv=None):
    handlers = stopping.catch(wake_up=_stop_during_start_up)   # while the commands load: stop at once
    try:
        return _main(argv)
    finally:
        stopping.restore(handlers)


def _stop_during_start_up():
    """A signal while the subcommands' modules load (seconds on a loaded machine): nothing has started that needs
    stopping, so the process ends at once with one line rather than after the imports."""
    sys.stderr.write(f"robot-dynamics: stopped by {stopping.received()} during start-up\n")
    sys.stderr.flush()
    os._exit(stopping.exit_code())


def build_parser():
    """(the argument parser, {subcommand: its module})."""
    parser = OneLineErrorParser(prog='robot-dynamics', description='Rigid-body dynamics of a URDF robot: '
                               'dynamics, a closed loop over ROS 2, identification.')
    parser.add_argument('--debug', action='store_true', help='show the traceback of an error')
    sub = parser.add_subparsers(dest='command', required=True)
    modules = {}
    for name, help_text in SUBCOMMANDS.items():   # each imports only the core: optional packages load in run()
        module = modules[name] = importlib.import_module('robot_dynamics_ros.commands.' + name.replace('-', '_'))
        module.add_arguments(sub.add_parser(name, help=help_text, description=help_text))
    return parser, modules


def _main(argv):
    parser, modules = build_parser()
    args = parser.parse_args(argv)
    warnings.formatwarning = lambda message, category, *_, **__: f"{parser.prog}: warning: {message}\n"
    stopping.catch()   # from here a signal is the command's to handle (no exit at once)
    if stopping.received():
        print(f"{parser.prog} {args.command}: stopped by {stopping.received()} before it started", file=sys.stderr)
        return stopping.exit_code()
    stopping.interrupt()   # record catches them again, to close its recording
    try:
        return modules[args.command].run(args)
    except BaseException as e:
        if isinstance(e, KeyboardInterrupt) or stopping.interrupted(e):
            print(f"{parser.prog} {args.command}: interrupted ({stopping.received() or 'SIGINT'})", file=sys.stderr)
            return stopping.exit_code()
        if not isinstance(e, USER_ERRORS) or args.debug:
            raise
        print(f"{parser.prog} {args.command}: error: {describe(e)}", file=sys.stderr)
        return 2

if __name__ == '__main__':
    sys.exit(main())
