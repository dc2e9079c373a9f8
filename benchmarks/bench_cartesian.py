"""Per-update microseconds of the Cartesian controller (``control.cartesian.CartesianController.update``, one compiled
call: kinematics, M, U D U^T, h, Lambda and the law) for both laws on the public arms of test/urdf/real, and the
node's whole joint-state update without ROS (``CartesianStep``, as the node runs it with numba: mapping the joint
state's array('d') fields, sampling the target between two targets, the law): what the issue bounds at 100 us. Wall time: the minimum over repeats of timeit loops (the least disturbed run on a shared
machine), the median beside it; for the node update also the median and p99 of single updates timed one by one
(what the node's ~/compute_time_us reports), and the CPU time of this thread per update (time.thread_time: what
the code costs, without the time other processes on a loaded machine take from it).

    python benchmarks/bench_cartesian.py [--runs N] [--store]

Each run times every arm and law; the README row is the median over the runs of each arm's node update (the median of
its single updates, which a loaded machine disturbs least) and its thread CPU time per update (``readme_rows.py``).
No oracle times this law.
"""
import argparse
from array import array
import os
import time
import timeit
import warnings

import numpy as np

from robot_dynamics_ros import load_urdf
from robot_dynamics_ros.control.cartesian import (LAWS, CartesianController, CartesianTarget,
                                                  default_end_effector, dexterous_posture)
from robot_dynamics_ros.control.cartesian_step import CartesianStep
from robot_dynamics_ros.control.joint_states import JointStateMapper, plausibility_bounds
from robot_dynamics_ros.spatial import matrix_to_quaternion

import readme_rows

REAL = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'test', 'urdf', 'real')
ARMS = ('ur5', 'panda', 'kinova_gen3', 'xarm7', 'z1')
NUMBER, REPEAT = 200, 15


def microseconds(function):
    times = np.array(timeit.repeat(function, number=NUMBER, repeat=REPEAT)) / NUMBER * 1e6
    return times.min(), np.median(times)


def single_updates(function, count=NUMBER * REPEAT):
    """(median, p99) wall us of single calls, and the thread's CPU us per call over them."""
    times = np.empty(count)
    cpu = time.thread_time()
    for k in range(count):
        started = time.perf_counter()
        function()
        times[k] = time.perf_counter() - started
    cpu = (time.thread_time() - cpu) / count
    return 1e6 * np.median(times), 1e6 * np.percentile(times, 99), 1e6 * cpu


def run():
    """One run: the table, and per (robot, law) (node update us, CPU us per update)."""
    print(f"{'robot':<14}{'law':<20}{'law us (min / median)':>24}{'node update us':>22}"
          f"{'single: median / p99 / CPU':>30}")
    figures = {}
    for robot in ARMS:
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')   # CAD inertias that load with a warning
            model = load_urdf(os.path.join(REAL, robot + '.urdf'))
        link = default_end_effector(model)
        q = dexterous_posture(model, link)
        qd = np.full(model.nv, 0.1)
        mapper = JointStateMapper(model.joint_names, bounds=plausibility_bounds(model))
        names, positions, velocities = list(model.joint_names), array('d', q), array('d', qd)   # as rclpy gives them
        for law in LAWS:
            controller = CartesianController(model, link, law, nullspace_stiffness=10.0, posture=q,
                                             friction_compensation=True)
            controller.ee.update(q, qd)
            target = CartesianTarget(controller.ee.R.copy(), controller.ee.p, 0.0)
            target.set(controller.ee.p + 0.01, matrix_to_quaternion(controller.ee.R), 0.01)
            R, p, v = (a.copy() for a in target.sample(0.005))
            controller.update(q, qd, R, p, v)   # loads (once: compiles) the kernel
            step = CartesianStep(mapper, controller)

            def node_update():
                step(names, positions, velocities, target, 0.005)
            node_update()
            law_us = microseconds(lambda: controller.update(q, qd, R, p, v))
            node_us = microseconds(node_update)
            single = single_updates(node_update)
            print(f"{robot:<14}{law:<20}{law_us[0]:>11.1f} / {law_us[1]:>8.1f}{node_us[0]:>11.1f} / {node_us[1]:>8.1f}"
                  f"{single[0]:>14.1f} / {single[1]:>5.1f} / {single[2]:>5.1f}", flush=True)
            figures[robot, law] = single[0], single[2]
    return figures


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    readme_rows.add_arguments(parser, runs=5)
    args = parser.parse_args()
    load = os.getloadavg()[0]
    runs = [run() for _ in range(args.runs)]
    median = {key: np.median([figures[key] for figures in runs], axis=0) for key in runs[0]}
    ur5 = ', '.join(f"{law.replace('_', ' ')} {median['ur5', law][0]:.0f} us (CPU {median['ur5', law][1]:.0f} us)"
                    for law in LAWS)
    figure = f"{readme_rows.span([wall for wall, _ in median.values()])} us; UR5: {ur5}"
    readme_rows.report('bench_cartesian.py', [readme_rows.row(
        'bench_cartesian.py', "Cartesian controller's joint-state update in process (mapping, target, law), public "
        'arms, both laws', figure)], args.runs, args.store, load)


if __name__ == '__main__':
    main()
