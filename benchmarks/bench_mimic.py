"""Forward dynamics with coupled (URDF mimic) joints, per call in microseconds: our ABA by constraint embedding
(O(n); ``fast.aba``: compiled, and ``algorithms.aba``: the same kernel as plain Python), our CRBA-based solve
(``solve(crba, tau - rnea(qdd = 0))``, through the tree's compiled code), and Pinocchio 4's CRBA-based solve on
its ``mimic=True`` model (``crba``, ``nonLinearEffects``, ``numpy.linalg.solve``: Pinocchio has no ABA with mimic
joints); the ratio fast ABA / Pinocchio, and the largest difference between our ABA and Pinocchio's solve, as a
check. Robots: example-robot-data's that ship mimic joints.

    python benchmarks/bench_mimic.py

Timings are the minimum over repeats of timeit loops (the least disturbed run on a shared machine).
"""
import os
import sys
import timeit
import warnings

import numpy as np
import pinocchio as pin

from robot_dynamics_ros import algorithms, fast, load_urdf

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'test'))
from conftest import example_robot_data  # noqa: E402
from test_mimic import PUBLIC, pinocchio_state  # noqa: E402


def per_call_us(function, number=50, repeat=5):
    return 1e6 * min(timeit.repeat(function, number=number, repeat=repeat)) / number


def main():
    print(f"{'robot':<10} {'nv':>3} {'fast aba us':>11} {'ref aba us':>10} {'crba+solve us':>14} "
          f"{'pin crba+solve us':>18} {'fast/pin':>8} {'max |diff|':>10}")
    for robot, (path, _, _) in sorted(PUBLIC.items()):
        path = example_robot_data(path)
        with warnings.catch_warnings():
            warnings.simplefilter('ignore')
            model = load_urdf(path, mimic=True)
        oracle = pin.buildModelFromUrdf(path, mimic=True)
        data, rng = oracle.createData(), np.random.default_rng(0)
        q, qd, tau = model.random_configuration(rng), *rng.normal(size=(2, model.nv))
        q_pin, (v_pin, tau_pin), rows = pinocchio_state(oracle, model, q, qd, tau)
        zero = np.zeros(model.nv)

        def ours():
            return fast.aba(model, q, qd, tau)

        def reference():
            return algorithms.aba(model, q, qd, tau)

        def ours_solve():
            return np.linalg.solve(fast.crba(model, q), tau - fast.rnea(model, q, qd, zero))

        def pinocchio():
            M = pin.crba(oracle, data, q_pin)
            M = np.triu(M) + np.triu(M, 1).T
            return np.linalg.solve(M, tau_pin - pin.nonLinearEffects(oracle, data, q_pin, v_pin))
        ours_solve()   # compiles or loads the kernels
        difference = max(np.abs(ours() - pinocchio()[rows]).max(), np.abs(reference() - pinocchio()[rows]).max())
        t_aba, t_ref = per_call_us(ours), per_call_us(reference, number=3, repeat=3)
        t_solve, t_pin = per_call_us(ours_solve), per_call_us(pinocchio)
        print(f"{robot:<10} {model.nv:>3} {t_aba:>11.1f} {t_ref:>10.0f} {t_solve:>14.1f} {t_pin:>18.1f} "
              f"{t_aba / t_pin:>8.2f} {difference:>10.2e}")


if __name__ == '__main__':
    main()
