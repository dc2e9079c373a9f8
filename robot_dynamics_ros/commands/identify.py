"""``robot-dynamics identify``: base inertial parameters from recorded joint positions and efforts."""
import argparse
import sys
import time

import numpy as np
import yaml

from .. import load_urdf
from ..algorithms.regressor import parameter_names, standard_parameters
from ..model.urdf import read_xml
from ..parameters import numeric_base_parameters
from ..parameters.equations import identification_equations
from ..parameters.identification import held_out_torque_errors, identify_equations
from ..parameters.identified_urdf import consistent_standard_parameters, write_identified_urdf
from ..parameters.recordings import load_recording
from ..parameters.report import document, text
from ..parameters.signals import SAMPLINGS
from . import finite_float, float_in, int_in, non_negative_float, positive_float, writable_file

# Refuse inconsistent inertias: the loader does so today; once it only warns by default, strict=True does.


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('urdf', help='URDF or xacro file of the robot (its kinematics; inertias are the prior)')
    parser.add_argument('data', help='recording: .csv, .npz, or a rosbag2 directory / .mcap / .db3 file')
    parser.add_argument('-o', '--output', type=writable_file, required=True,
                        help='YAML file for the identified base parameters')
    parser.add_argument('--weighted', action='store_true',
                        help="Gautier's weighted least squares (per-joint weights 1/sigma_j)")
    parser.add_argument('--friction', action='store_true', help='identify viscous and Coulomb friction per joint')
    parser.add_argument('--topic', default='/joint_states', help='JointState topic in a rosbag2 recording')
    parser.add_argument('--cutoff', type=positive_float, default=5.0,
                        help='Hz where the low-pass applied to efforts and regressor alike has gain 1/2')
    parser.add_argument('--decimate', type=int_in(1), default=None,
                        help='keep every k-th filtered sample (default: 10 per half-width of the filter)')
    parser.add_argument('--min-velocity', type=non_negative_float, default=0.02,
                        help="leave out a joint's equations near a speed below this (sticking, reversing)")
    parser.add_argument('--sampling', choices=SAMPLINGS, default=None,
                        help="'simulator': semi-implicit Euler steps, each effort applied over the step before "
                             "its state; 'continuous': effort and state at the same instant (default: what the "
                             "recording says, as record's bags do, else continuous)")
    parser.add_argument('--held-out', type=float_in(0, 1, low_open=True, high_open=True), default=0.2,
                        help='fraction of the equations, at the end, held out to compare torque errors')
    parser.add_argument('--gravity', type=finite_float, nargs=3, default=None, metavar=('X', 'Y', 'Z'),
                        help='gravity in the root frame (default 0 0 -9.81)')
    parser.add_argument('--mimic', action=argparse.BooleanOptionalAction, default=True,
                        help="couple each URDF <mimic> joint to its master (q_m = multiplier q_master + offset): "
                             "identify on the independent joints (the recording's mimic joints are not read; the "
                             "default); --no-mimic: every joint is a degree of freedom")
    parser.add_argument('--urdf-out', type=writable_file, help='also write the URDF with physically consistent identified inertias '
                        "(needs cvxpy: the 'ident' extra)")


def run(args: argparse.Namespace) -> int:
    model = load_urdf(args.urdf, mimic=args.mimic)
    if model.coupling is not None and args.friction and args.urdf_out:
        raise ValueError("--urdf-out with --friction and coupled <mimic> joints: a master's identified friction "
                         "includes its mimic joints', which the URDF holds apart; give --no-mimic")
    try:
        recording = load_recording(args.data, args.topic).for_model(model)
    except ImportError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"{len(recording.t)} samples of {model.nv} joints over {recording.duration:.3f} s "
          f"from {args.data}", file=sys.stderr)
    covered = recording.covered_fraction()
    if covered is not None and covered < 1 - 1e-9:   # a complete recording spans the experiment or more
        print(f"robot-dynamics identify: warning: the recording is shorter than its experiment: "
              f"{recording.duration:.3f} s of {recording.expected_duration:.3f} s ({covered:.0%}; "
              "interrupted, or a node stopped)", file=sys.stderr)
    sampling = args.sampling or recording.sampling or 'continuous'
    extras = dict(viscous=args.friction, coulomb=args.friction)
    base = numeric_base_parameters(model, gravity=args.gravity, **extras)
    started = time.monotonic()

    def progress(done, total):
        print(f"  regressor {done}/{total} samples ({time.monotonic() - started:.1f} s)", file=sys.stderr)
    equations = identification_equations(model, base, recording.t, recording.q, recording.tau, sampling, args.cutoff,
                                         args.decimate, args.min_velocity, args.gravity, progress, **extras)
    try:
        result = identify_equations(equations, base.names, args.weighted)
    except ValueError as e:   # too few equations in use: say why they were left out
        raise ValueError(f"{e} ({int(equations.rows.sum())} of {equations.rows.size} equations in use, the others "
                         f"near a speed below {args.min_velocity:g} or at a limit: the joints must move)") from None
    prior = base.project(standard_parameters(model, **extras))
    held_out = held_out_torque_errors(equations, base.names, prior, args.weighted, args.held_out)
    settings = {'method': 'weighted least squares' if args.weighted else 'ordinary least squares',
                'sampling': sampling, 'cutoff_hz': args.cutoff, 'decimation': equations.decimation,
                'min_velocity': args.min_velocity}
    doc = document(model, base, result, prior, equations, held_out, settings)
    print(text(doc))
    with open(args.output, 'w', encoding='utf-8') as f:
        yaml.safe_dump(doc, f, sort_keys=False)
    print(f"wrote {len(result.beta)} base parameters to {args.output}", file=sys.stderr)
    if args.urdf_out:
        try:
            pi, inconsistent = consistent_standard_parameters(
                base, result.beta, standard_parameters(model, **extras), model.nb, R=result.R)
        except ImportError as e:
            print(f"error: --urdf-out: {e}", file=sys.stderr)
            return 2
        if inconsistent:
            print("error: the solver found no physically consistent standard parameters for bodies "
                  f"{[model.body_names[i] for i in inconsistent]}; {args.urdf_out} not written", file=sys.stderr)
            return 1
        xml = write_identified_urdf(read_xml(args.urdf), model, pi, parameter_names(model, **extras))
        load_urdf(xml, strict=True)  # the package's own loader accepts what we write, or this raises before writing
        with open(args.urdf_out, 'w', encoding='utf-8') as f:
            f.write(xml)
        print(f"wrote the physically consistent identified model to {args.urdf_out} "
              f"(max |K pi - beta| = {np.max(np.abs(base.K @ pi - result.beta)):.2g})", file=sys.stderr)
    return 0
