"""Microseconds per StandingController.update (the legged controller's tick: kinematics, dynamics, the contact-
consistent inverse dynamics cone program) on the bundled quadruped and on public quadrupeds (A1, Go1, ANYmal C from
example-robot-data, in their SRDF stance), closed loop: the simulator with ground contact at 1 kHz, the controller
updating every step (1 kHz). Only the update is timed; the simulator's step is not.

    python benchmarks/bench_legged_controller.py [ticks] [robot ...] [--runs N] [--store]

Prints the load average, then per robot the median and 99th percentile of the update, the median time of its
solve, the share of the programs solved by their objective's minimiser without Clarabel ('certified',
control/contact_inverse_dynamics.py), and how far the base is from its stance height at the end (it must stand).
BLAS runs single-threaded (OPENBLAS_NUM_THREADS=1, unless set), as in bench_contact.py: the matrices are at most
40 x 40. It ends with the README row (``readme_rows.py``): per robot the median update over the runs (default 5).
"""
import argparse
import os
import time
import warnings

os.environ.setdefault('OPENBLAS_NUM_THREADS', '1')

import numpy as np  # noqa: E402

from robot_dynamics_ros import load_srdf, load_urdf  # noqa: E402
from robot_dynamics_ros.control.standing import StandingController  # noqa: E402
from robot_dynamics_ros.model.collision import contact_points_from_urdf  # noqa: E402
from robot_dynamics_ros.model.srdf import stance_configuration  # noqa: E402
from robot_dynamics_ros.resources import bundled_urdf  # noqa: E402
from robot_dynamics_ros.simulation.ground_contact import Ground  # noqa: E402
from robot_dynamics_ros.simulation.simulator import Simulator  # noqa: E402

import readme_rows  # noqa: E402

MU, DT = 0.8, 1e-3
WARM_UP = 200   # ticks before timing (numba compilation, the first solver set-up)
PUBLIC = {   # robot -> URDF, SRDF in example-robot-data's robots/ folder
    'a1': ('a1_description/urdf/a1.urdf', 'a1_description/srdf/a1.srdf'),
    'go1': ('go1_description/urdf/go1.urdf', 'go1_description/srdf/go1.srdf'),
    'anymal_c': ('anymal_c_simple_description/urdf/anymal.urdf', 'anymal_c_simple_description/srdf/anymal.srdf'),
}


def example_robot_data(path):
    from importlib import metadata
    distribution = metadata.distribution('example-robot-data')
    return str(distribution.locate_file(os.path.join('cmeel.prefix', 'share', 'example-robot-data', 'robots', path)))


def robot(name):
    """(model, contact points, stance joint positions, feet links or None)."""
    if name == 'quadruped':
        urdf = bundled_urdf('quadruped.urdf')
        model = load_urdf(urdf, root_joint='floating')
        return model, contact_points_from_urdf(urdf), np.array([0.0, 0.6, -1.2] * 4), None
    urdf, srdf_path = (example_robot_data(path) for path in PUBLIC[name])
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        model = load_urdf(urdf, root_joint='floating')
        points = contact_points_from_urdf(urdf)
    srdf = load_srdf(srdf_path)
    _, q, _ = stance_configuration(model, srdf)
    return model, points, q[model.joint_q_index], srdf.feet


def run(name, ticks):
    model, points, stance, feet = robot(name)
    sim = Simulator(model, DT, initial_positions=stance, ground=Ground(0.0, MU), contact_points=points)
    spawn = sim.q[2]
    controller = StandingController(model, points, 0.0, MU, feet=feet)
    controller.set_joint_reference(stance)
    command = np.zeros(model.nv)
    times, solves = [], []
    for k in range(WARM_UP + ticks):
        start = time.perf_counter()
        tau = controller.update(sim.q, sim.qd, sim.t)
        elapsed = time.perf_counter() - start
        if k >= WARM_UP:
            times.append(elapsed)
            solves.append(getattr(getattr(controller, 'inverse_dynamics', None), 'solve_time', np.nan))
        command[model.joint_v_index] = tau
        sim.set_command(command)
        sim.step()
    times, solves = 1e6 * np.array(times), 1e6 * np.array(solves)
    inverse_dynamics = controller.inverse_dynamics
    certified = inverse_dynamics.certified / (inverse_dynamics.certified + inverse_dynamics.updates)
    return (model.nv, len(controller.contacts), np.median(times), np.percentile(times, 99), np.median(solves),
            certified, 1e3 * (sim.q[2] - spawn))


LABELS = {'quadruped': 'bundled quadruped', 'a1': 'A1', 'go1': 'Go1', 'anymal_c': 'ANYmal C'}


def main(ticks=2000, robots=('quadruped', 'a1', 'go1', 'anymal_c'), runs=5, store=False):
    load = os.getloadavg()[0]
    print(f"StandingController.update, closed loop with the simulator at 1 kHz, {ticks} ticks after {WARM_UP}; "
          f"load average {load:.2f} on {os.cpu_count()} CPUs")
    print(f'{"robot":<11}{"nv":>4}{"feet":>6}{"median us":>11}{"p99 us":>9}{"solve us":>10}{"certified":>11}'
          f'{"height err mm":>15}')
    medians = {name: [] for name in robots}
    for _ in range(runs):
        for name in robots:
            nv, feet, median, p99, solve, certified, error = run(name, ticks)
            medians[name].append(median)
            print(f'{name:<11}{nv:>4}{feet:>6}{median:>11.0f}{p99:>9.0f}{solve:>10.0f}{certified:>11.0%}'
                  f'{error:>15.3f}', flush=True)
    print(f"load average at the end {os.getloadavg()[0]:.2f}")
    figure = ', '.join(f'{LABELS.get(name, name)} {np.median(values):.0f} us' for name, values in medians.items())
    readme_rows.report('bench_legged_controller.py', [readme_rows.row(
        'bench_legged_controller.py', 'legged controller update (contact-consistent inverse dynamics), standing, in '
        'process with the simulator at 1 kHz (median update)', figure)], runs, store, load)


if __name__ == '__main__':
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('ticks', type=int, nargs='?', default=2000)
    parser.add_argument('robots', nargs='*', default=['quadruped', 'a1', 'go1', 'anymal_c'])
    readme_rows.add_arguments(parser, runs=5)
    args = parser.parse_args()
    main(args.ticks, args.robots, args.runs, args.store)
