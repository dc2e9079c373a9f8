"""``robot-dynamics`` command line: one subcommand per job, each in robot_dynamics_ros/commands/."""
import argparse
import importlib
import sys

# subcommand -> module in robot_dynamics_ros.commands with add_arguments(parser) and run(args) -> exit code
SUBCOMMANDS = {
    'demo': 'Dynamics of the bundled robot at a random state, checked against identities',
    'bringup': 'Closed loop (simulator + computed-torque controller + reference) without a ROS install',
    'base-params': 'Base inertial parameters of a URDF (Gautier-Khalil)',
    'identify': 'Identify base parameters from recorded joint data',
    'excite': 'Excitation trajectory for identification',
    'record': 'Record joint states while the simulated arm follows an excitation trajectory (rosbag2)',
}


def main(argv=None):
    parser = argparse.ArgumentParser(prog='robot-dynamics', description=__doc__.split('\n')[0])
    sub = parser.add_subparsers(dest='command', required=True)
    modules = {}
    for name, help_text in SUBCOMMANDS.items():
        try:
            module = importlib.import_module('robot_dynamics_ros.commands.' + name.replace('-', '_'))
        except ModuleNotFoundError:
            continue
        modules[name] = module
        module.add_arguments(sub.add_parser(name, help=help_text, description=help_text))
    args = parser.parse_args(argv)
    return modules[args.command].run(args)


if __name__ == '__main__':
    sys.exit(main())
