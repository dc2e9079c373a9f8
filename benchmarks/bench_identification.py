"""Identification on simulated recordings whose truth is known: coverage of the 95 % intervals and the worst error
of the well-determined parameters (std below 2 % of the value), noise-free and over repeated noisy recordings.

Each robot follows an excite-style trajectory (--friction) in the in-process record of test/simulated_recording.py
(Simulator at 1 kHz with the URDF's damping and Coulomb friction, the computed-torque controller of
closed_loop.yaml); noise: 1e-4 rad on the positions, 1 % on the efforts. Truth: the URDF's base parameters.

    python benchmarks/bench_identification.py [--repeats 24] [--duration 10] [--harmonics 5] [robot ...]

robots: arm7 (bundled) and the public arms of test/urdf/real (ur5, panda, ...).
"""
import argparse
import os
import sys
import time
import warnings

import numpy as np

from robot_dynamics_ros import load_urdf
from robot_dynamics_ros.algorithms.regressor import standard_parameters
from robot_dynamics_ros.errors import URDFWarning
from robot_dynamics_ros.parameters import numeric_base_parameters
from robot_dynamics_ros.parameters.equations import identification_equations
from robot_dynamics_ros.parameters.excitation import optimise_excitation
from robot_dynamics_ros.parameters.identification import identify_equations

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, 'test'))
from simulated_recording import record_in_process, with_noise  # noqa: E402 (a test helper)

FRICTION = dict(viscous=True, coulomb=True)


def urdf_path(robot):
    return os.path.join(ROOT, 'urdf', 'arm7.urdf') if robot == 'arm7' else os.path.join(ROOT, 'test', 'urdf', 'real',
                                                                                          robot + '.urdf')


def figures(model, base, truth, recording):
    """(covered fraction, worst relative error with std < 2 %, how many such) of one identification."""
    equations = identification_equations(model, base, recording.t, recording.q, recording.tau, recording.sampling,
                                         **FRICTION)
    result = identify_equations(equations, base.names)
    error = np.abs(result.beta - truth)
    well = (result.relative_std < 2.0) & (truth != 0)
    worst = np.max(error[well] / np.abs(truth[well])) if well.any() else float('nan')
    return np.mean(error <= result.interval(0.95)), worst, int(well.sum())


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('robots', nargs='*', default=['arm7', 'ur5', 'panda'])
    parser.add_argument('--repeats', type=int, default=24)
    parser.add_argument('--duration', type=float, default=10.0)
    parser.add_argument('--harmonics', type=int, default=5)
    parser.add_argument('--evaluations', type=int, default=300, help='excitation optimiser steps (reproducible)')
    args = parser.parse_args()
    for robot in args.robots:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore', URDFWarning)
            model = load_urdf(urdf_path(robot))
        started = time.monotonic()
        trajectory = optimise_excitation(model, args.duration, args.harmonics, time_budget=600.0,
                                         max_evaluations=args.evaluations, **FRICTION)
        recording = record_in_process(model, trajectory)
        base = numeric_base_parameters(model, **FRICTION)
        truth = base.project(standard_parameters(model, **FRICTION))
        clean = figures(model, base, truth, recording)
        noisy = np.array([figures(model, base, truth, with_noise(recording, 1e-4, 0.01, seed))
                          for seed in range(args.repeats)])
        print(f"{robot}: {len(truth)} base parameters, {args.duration:g} s excitation "
              f"({time.monotonic() - started:.0f} s)\n"
              f"  noise-free: coverage {clean[0]:.3f}, worst of the {clean[2]} with std < 2 %: {clean[1]:.2g}\n"
              f"  noisy, {args.repeats} recordings: coverage {noisy[:, 0].mean():.3f} (binomial sd "
              f"{np.sqrt(0.95 * 0.05 / (len(truth) * args.repeats)):.3f}), worst with std < 2 %: mean "
              f"{noisy[:, 1].mean():.3f}, largest {noisy[:, 1].max():.3f} (of {noisy[:, 2].mean():.0f})", flush=True)


if __name__ == '__main__':
    main()
