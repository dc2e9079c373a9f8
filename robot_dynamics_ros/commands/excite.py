"""``robot-dynamics excite``: an excitation trajectory for identification, for the trajectory_publisher."""
import argparse
import sys

from .. import load_urdf
from ..parameters.excitation import optimise_excitation, write_trajectory
from ..resources import bundled_urdf
from . import float_in, int_in, positive_float


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('urdf', nargs='?', help='URDF or xacro file (default: the bundled 7-DOF arm)')
    parser.add_argument('-o', '--output', required=True,
                        help='trajectory_publisher parameter file (.yaml), or a table of t, q, qd, qdd (.csv)')
    parser.add_argument('--duration', type=positive_float, default=10.0,
                        help='period of the Fourier series in seconds')
    parser.add_argument('--harmonics', type=int_in(2), default=5, help='harmonics per joint (at least 2)')
    parser.add_argument('--budget', type=positive_float, default=30.0, help='optimisation time budget in seconds')
    parser.add_argument('--rate', type=positive_float, default=50.0, help='waypoints per second in the output')
    parser.add_argument('--friction', action='store_true', help='also excite viscous and Coulomb friction columns')
    parser.add_argument('--velocity-fraction', type=float_in(0, 1, low_open=True), default=0.8,
                        help='fraction of the velocity limits used')
    parser.add_argument('--position-margin', type=float_in(0, 0.5, high_open=True), default=0.1,
                        help='fraction of each joint range kept free at both ends')
    parser.add_argument('--seed', type=int_in(0), default=0, help='seed of the initial Fourier coefficients')
    parser.add_argument('--mimic', action=argparse.BooleanOptionalAction, default=True,
                        help="couple each URDF <mimic> joint to its master (q_m = multiplier q_master + offset): "
                             "excite the independent joints (the trajectory names only those; the default); "
                             "--no-mimic: every joint is a degree of freedom")
    parser.add_argument('--max-evaluations', type=int_in(1), default=None,
                        help='stop after this many objective evaluations (reproducible, unlike the time budget)')


def run(args: argparse.Namespace) -> int:
    path = args.urdf or bundled_urdf()
    model = load_urdf(path, mimic=args.mimic)
    print(f"optimising a {args.duration:g} s, {args.harmonics}-harmonic trajectory for {model.name!r} "
          f"(budget {args.budget:g} s)", file=sys.stderr)
    trajectory = optimise_excitation(model, args.duration, args.harmonics, time_budget=args.budget, seed=args.seed,
                                     max_evaluations=args.max_evaluations, position_margin=args.position_margin,
                                     velocity_fraction=args.velocity_fraction,
                                     viscous=args.friction, coulomb=args.friction)
    times, q, qd, qdd = trajectory.sample(args.rate)
    comment = (f"Fourier excitation trajectory for {model.name}: period {args.duration:g} s, "
               f"{args.harmonics} harmonics, cond(Y_base) = {trajectory.condition_number:.4g}.\n"
               "Start the robot at rest at the first waypoint.")
    write_trajectory(args.output, model.joint_names, times, q, qd, qdd, comment=comment)
    print(f"condition number of the stacked base regressor: {trajectory.condition_number:.4g}")
    print(f"wrote {len(times)} waypoints of {model.nv} joints to {args.output}")
    return 0
