"""``robot-dynamics identify``: base inertial parameters from recorded joint positions and efforts."""
import argparse
import sys
import time

import numpy as np
import yaml

from .. import load_urdf
from ..algorithms.regressor import parameter_names, standard_parameters
from ..model.urdf import _read_xml
from ..parameters.identification import identify_base_parameters
from ..parameters.identified_urdf import consistent_standard_parameters, write_identified_urdf
from ..parameters.recordings import load_recording
from ..parameters.signals import prepare
from . import finite_float, int_in, non_negative_float, positive_float

# Refuse inconsistent inertias: the loader does so today; once it only warns by default, strict=True does.


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('urdf', help='URDF or xacro file of the robot (its kinematics; inertias are the prior)')
    parser.add_argument('data', help='recording: .csv, .npz, or a rosbag2 directory / .mcap / .db3 file')
    parser.add_argument('-o', '--output', required=True, help='YAML file for the identified base parameters')
    parser.add_argument('--weighted', action='store_true',
                        help="Gautier's weighted least squares (per-joint weights 1/sigma_j)")
    parser.add_argument('--friction', action='store_true', help='identify viscous and Coulomb friction per joint')
    parser.add_argument('--topic', default='/joint_states', help='JointState topic in a rosbag2 recording')
    parser.add_argument('--cutoff', type=positive_float, default=10.0,
                        help='low-pass cut-off in Hz for positions (and efforts) before differentiating')
    parser.add_argument('--decimate', type=int_in(1), default=None,
                        help='keep every k-th filtered sample (default: down to about 20 samples per '
                             'cut-off period)')
    parser.add_argument('--min-velocity', type=non_negative_float, default=0.02,
                        help="leave out a joint's equations where its speed is below this (sticking friction)")
    parser.add_argument('--gravity', type=finite_float, nargs=3, default=None, metavar=('X', 'Y', 'Z'),
                        help='gravity in the root frame (default 0 0 -9.81)')
    parser.add_argument('--urdf-out', help='also write the URDF with physically consistent identified inertias '
                        "(needs cvxpy: the 'ident' extra)")


def run(args: argparse.Namespace) -> int:
    model = load_urdf(args.urdf)
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
    rate = (len(recording.t) - 1) / (recording.t[-1] - recording.t[0])
    decimate = args.decimate or max(1, int(rate / (20 * args.cutoff)))
    t, q, qd, qdd, tau = prepare(recording.t, recording.q, recording.tau, args.cutoff, decimate=decimate)
    extras = dict(viscous=args.friction, coulomb=args.friction)
    started = time.monotonic()

    def progress(done, total):
        print(f"  regressor {done}/{total} samples ({time.monotonic() - started:.1f} s)", file=sys.stderr)
    result, base = identify_base_parameters(model, q, qd, qdd, tau, weighted=args.weighted,
                                            gravity=args.gravity, min_velocity=args.min_velocity,
                                            progress=progress, **extras)
    print(result.report())
    prior = base.project(standard_parameters(model, **extras))
    document = {
        'robot': model.name, 'joints': list(model.joint_names),
        'method': 'weighted least squares' if args.weighted else 'ordinary least squares',
        'samples': result.n_samples, 'cutoff_hz': args.cutoff, 'decimation': decimate,
        'condition_number': result.condition_number, 'relative_residual': result.relative_residual,
        'base_parameters': {name: {'value': float(v), 'std': float(s), 'relative_std_percent': float(r),
                                   'urdf_value': float(p)}
                            for name, v, s, r, p in zip(result.names, result.beta, result.std,
                                                        result.relative_std, prior)},
        'regrouping': list(base.regrouping)}
    with open(args.output, 'w', encoding='utf-8') as f:
        yaml.safe_dump(document, f, sort_keys=False)
    print(f"wrote {len(result.beta)} base parameters to {args.output}", file=sys.stderr)
    if args.urdf_out:
        try:
            pi, inconsistent = consistent_standard_parameters(
                base, result.beta, standard_parameters(model, **extras), model.nv, R=result.R)
        except ImportError as e:
            print(f"error: --urdf-out: {e}", file=sys.stderr)
            return 2
        if inconsistent:
            print("error: the solver found no physically consistent standard parameters for bodies "
                  f"{[model.body_names[i] for i in inconsistent]}; {args.urdf_out} not written", file=sys.stderr)
            return 1
        xml = write_identified_urdf(_read_xml(args.urdf), model, pi, parameter_names(model, **extras))
        load_urdf(xml, strict=True)  # the package's own loader accepts what we write, or this raises before writing
        with open(args.urdf_out, 'w', encoding='utf-8') as f:
            f.write(xml)
        print(f"wrote the physically consistent identified model to {args.urdf_out} "
              f"(max |K pi - beta| = {np.max(np.abs(base.K @ pi - result.beta)):.2g})", file=sys.stderr)
    return 0
