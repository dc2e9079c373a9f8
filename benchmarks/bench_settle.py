"""Settling from the joint limits (issue 17): the bundled arm in process (Simulator with its URDF friction and the
computed-torque controller as the node runs it, config/closed_loop.yaml's gains, 1 kHz, lockstep), from 22 starts on
the limits to a constant reference in the middle of them: when the arm comes within 1 degree for good, its error
after 3 s, and its fastest joint speed as a fraction of the URDF velocity limit.

    python benchmarks/bench_settle.py [--ki KI] [--runs N] [--store]

Sim time in lockstep is deterministic: ``--runs`` repeats (default 1) must give the same figures bit for bit (it
stops if they do not). It ends with the README row (``readme_rows.py``): the latest settling time of the 22 starts.
"""
import argparse
import os

import numpy as np
import yaml

from robot_dynamics_ros import load_urdf
from robot_dynamics_ros.control.computed_torque import ComputedTorqueController
from robot_dynamics_ros.control.references import TrajectoryReference
from robot_dynamics_ros.simulation.simulator import Simulator

import readme_rows

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DT, SECONDS = 1e-3, 3.0


def starts(model):
    """Each joint alone at each limit (14), all lower, all upper, alternating both ways, first half lower or
    upper, and two random mixes of limits (fixed seed)."""
    lower, upper, middle, n = model.lower, model.upper, model.middle_of_limits(), model.nv
    found = {}
    for i in range(n):
        for side, limit in (('lower', lower), ('upper', upper)):
            found[f'joint {i + 1} {side}'] = np.where(np.arange(n) == i, limit, middle)
    alternate, first = np.arange(n) % 2 == 0, np.arange(n) < n // 2
    found.update({'all lower': lower, 'all upper': upper, 'alternating': np.where(alternate, lower, upper),
                  'alternating, other way': np.where(alternate, upper, lower),
                  'first half lower': np.where(first, lower, upper), 'first half upper': np.where(first, upper, lower)})
    rng = np.random.default_rng(0)
    for k in range(2):
        found[f'random mix {k + 1}'] = np.where(rng.random(n) < 0.5, lower, upper)
    return found


def main():
    with open(os.path.join(ROOT, 'config', 'closed_loop.yaml')) as f:
        parameters = yaml.safe_load(f)['computed_torque_controller']['ros__parameters']
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--ki', type=float, default=parameters['ki'], help='integral gain (default: the config)')
    readme_rows.add_arguments(parser, runs=1)
    args = parser.parse_args()
    load = os.getloadavg()[0]
    runs = [run(args.ki, parameters) for _ in range(args.runs)]
    if any(figures != runs[0] for figures in runs[1:]):
        raise SystemExit('bench_settle: the runs differ; lockstep sim time should be deterministic')
    settled = [s for s, _, _ in runs[0].values()]
    figure = 'never (some start)' if None in settled else f'at most {max(settled):.2f} s of sim time'
    readme_rows.report('bench_settle.py', [readme_rows.row(
        'bench_settle.py', f'bundled loop settling from its joint limits to within 1 degree, {len(settled)} starts',
        figure)], args.runs, args.store, load)


def run(ki, parameters):
    """{start: (settled s or None, error at the end deg, max speed / limit)}, printed as a table."""
    model = load_urdf(os.path.join(ROOT, 'urdf', 'arm7.urdf'))
    center = model.middle_of_limits()
    reference = TrajectoryReference.hold(center)
    figures = {}
    print(f"{'start':<24}{'within 1 deg from (s)':>22}{'error at 3 s (deg)':>20}{'max speed / limit':>19}")
    for name, q0 in starts(model).items():
        sim = Simulator(model, DT, initial_positions=q0)
        controller = ComputedTorqueController(model, parameters['kp'], parameters['kd'], friction_compensation=True,
                                              ki=ki)
        settled, speed = None, 0.0
        for k in range(int(SECONDS / DT)):
            t = k * DT
            tau, *_ = controller.update(t, sim.q, sim.qd, *reference.sample(t))
            sim.set_command(tau)
            sim.step()
            speed = max(speed, np.max(np.abs(sim.qd) / model.velocity_limit))
            within = np.max(np.abs(sim.q - center)) < np.radians(1.0)
            settled = (settled if settled is not None else t + DT) if within else None
        error = np.degrees(np.max(np.abs(sim.q - center)))
        print(f"{name:<24}{'never' if settled is None else f'{settled:.3f}':>22}{error:>20.3f}{speed:>19.3f}")
        figures[name] = settled, error, speed
    return figures


if __name__ == '__main__':
    main()
