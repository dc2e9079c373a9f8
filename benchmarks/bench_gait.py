"""Microseconds per GaitController.update while trotting (control/gait.py), MuJoCo as the plant (test/mujoco_walk.py:
MuJoCo's import of the URDF at 1 ms), against StandingController.update on the same robot standing in the same plant;
and the velocity achieved.

    python benchmarks/bench_gait.py [robot ...]      # quadruped (bundled), a1, go1, anymal_c; default all

Prints the load average, then per robot and command (forward 0.3 m/s, sideways 0.1 m/s, turn 0.5 rad/s, 6 s runs)
the velocity achieved (mean over the second half, heading frame), the largest tilt, the update's median and 99th
percentile, and the median's ratio to the standing update's.
"""
import os
import sys

os.environ.setdefault('OPENBLAS_NUM_THREADS', '1')
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'test'))

import numpy as np  # noqa: E402

from mujoco_walk import PUBLIC, robot, walk  # noqa: E402
from robot_dynamics_ros.control.gait import GaitController  # noqa: E402
from robot_dynamics_ros.control.standing import StandingController  # noqa: E402

COMMANDS = {'forward': (0.3, 0.0, 0.0), 'sideways': (0.0, 0.1, 0.0), 'turn': (0.0, 0.0, 0.5)}


def robots_folder():
    from importlib import metadata
    distribution = metadata.distribution('example-robot-data')
    return str(distribution.locate_file(os.path.join('cmeel.prefix', 'share', 'example-robot-data', 'robots')))


def main(names):
    print(f"load average {os.getloadavg()[0]:.1f}")
    for name in names:
        urdf, model, points, stance, feet = robot(name, None if name == 'quadruped' else robots_folder())
        stand = StandingController(model, points, 0.0, 0.6, feet=feet)
        stand.set_joint_reference(stance)
        standing = walk(urdf, stand, (0.0, 0.0, 0.0), 2.0, start=np.inf)   # never commanded: it stands
        standing_us = np.median(standing['update_us'])
        for command, velocity in COMMANDS.items():
            result = walk(urdf, GaitController(model, points, 0.0, 0.6, feet=feet, stance=stance), velocity, 6.0)
            us = result['update_us']
            print(f"{name:10s} {command:8s} commanded {list(velocity)} achieved "
                  f"{np.round(result['achieved'], 3).tolist()} tilt {result['tilt']:.1f} deg"
                  f"{' FELL' if result['fell'] else ''}; update median {np.median(us):.0f} us, p99 "
                  f"{np.percentile(us, 99):.0f} us, {np.median(us) / standing_us:.2f} x standing's "
                  f"{standing_us:.0f} us", flush=True)


if __name__ == '__main__':
    main(sys.argv[1:] or ['quadruped', *[name for name in PUBLIC if name != 'solo12']])
