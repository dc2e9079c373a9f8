"""The trotting gait (control/gait.py) per robot: the velocity achieved on a command, in MuJoCo as the plant
(test/mujoco_walk.py: MuJoCo's import of the URDF at 1 ms) and in our Simulator (its ground contact with the feet's
contact points), and the microseconds per GaitController.update.

    python benchmarks/bench_gait.py [--seconds S] [--plants mujoco,ours] [robot ...]
    python benchmarks/bench_gait.py --timing [--seconds S] [robot ...]

Robots: the bundled quadruped and every public quadruped with an SRDF in example-robot-data (mujoco_walk.PUBLIC);
default all. Commands: forward 0.3 and 0.5 m/s, sideways 0.1 m/s, turn 0.5 rad/s, each held from 1 s on (the robot
stands before). Prints the load average, then per robot, command and plant the velocity achieved (mean over the
run's second half, heading frame), the largest tilt, a fall (tilt over 45 deg or the base under half its standing
height: the run stops), the update's median and 99th percentile, and a Markdown table of it all at the end.
--timing: forward 0.3 m/s in MuJoCo only, the update's median and p99 against StandingController.update's on the
same robot standing in the same plant (run it from two checkouts in turn to compare code before and after).
"""
import argparse
import math
import os
import sys

os.environ.setdefault('OPENBLAS_NUM_THREADS', '1')
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'test'))

import numpy as np  # noqa: E402

from mujoco_walk import MU, PUBLIC, robot, walk  # noqa: E402
from robot_dynamics_ros.control.gait import GaitController  # noqa: E402
from robot_dynamics_ros.control.standing import StandingController  # noqa: E402

COMMANDS = {'forward 0.3': (0.3, 0.0, 0.0), 'forward 0.5': (0.5, 0.0, 0.0), 'sideways 0.1': (0.0, 0.1, 0.0),
            'turn 0.5': (0.0, 0.0, 0.5)}
START = 1.0   # s standing before the command
FALLEN_TILT = 45.0


def robots_folder():
    from importlib import metadata
    distribution = metadata.distribution('example-robot-data')
    return str(distribution.locate_file(os.path.join('cmeel.prefix', 'share', 'example-robot-data', 'robots')))


def simulate(controller, command, seconds):
    """walk()'s result in our Simulator: the robot at its stance on the ground (friction MU), standing START s, then
    commanded (vx, vy, wz)."""
    import time
    from robot_dynamics_ros.simulation.ground_contact import Ground
    from robot_dynamics_ros.simulation.simulator import Simulator
    from robot_dynamics_ros.spatial import quaternion_to_matrix
    model = controller.model
    sim = Simulator(model, 1e-3, ground=Ground(0.0, MU), contact_points=controller.feet,
                    initial_positions=controller.reference.positions[0])
    height = sim.q[2]
    efforts = np.zeros(model.nv)
    rows, update_us, fell = [], [], False
    while sim.t < seconds - 1e-9:
        if sim.t >= START - 1e-9:
            controller.set_command(*command)
        started = time.perf_counter()
        efforts[controller.joints_v] = controller.update(sim.q, sim.qd, sim.t)
        update_us.append(1e6 * (time.perf_counter() - started))
        sim.set_command(efforts)
        sim.step()
        R = quaternion_to_matrix(sim.q[3:7])
        yaw = math.atan2(R[1, 0], R[0, 0])
        velocity = R @ sim.qd[:3]   # the base's linear velocity, world
        tilt = math.degrees(math.acos(min(1.0, R[2, 2])))
        rows.append((sim.t, math.cos(yaw) * velocity[0] + math.sin(yaw) * velocity[1],
                     -math.sin(yaw) * velocity[0] + math.cos(yaw) * velocity[1], (R @ sim.qd[3:6])[2], tilt))
        if tilt > FALLEN_TILT or sim.q[2] < 0.5 * height:
            fell = True
            break
    rows = np.array(rows)
    second_half = rows[:, 0] > seconds / 2.0
    return {'achieved': rows[second_half, 1:4].mean(axis=0) if second_half.any() else np.full(3, np.nan),
            'tilt': rows[:, 4].max(), 'fell': fell, 'update_us': np.array(update_us[200:])}


def gait(model, points, stance, feet):
    return GaitController(model, points, 0.0, 0.6, feet=feet, stance=stance)


def load(name):
    return robot(name, None if name == 'quadruped' else robots_folder())


def timing(names, seconds):
    for name in names:
        urdf, model, points, stance, feet = load(name)
        stand = StandingController(model, points, 0.0, 0.6, feet=feet)
        stand.set_joint_reference(stance)
        standing = walk(urdf, stand, (0.0, 0.0, 0.0), seconds, start=np.inf)['update_us']   # it stands
        result = walk(urdf, gait(model, points, stance, feet), COMMANDS['forward 0.3'], seconds)
        us = result['update_us']
        print(f"{name:10s} trot forward 0.3: update median {np.median(us):.0f} us, p99 {np.percentile(us, 99):.0f} us"
              f" ({np.median(us) / np.median(standing):.2f} x standing's median {np.median(standing):.0f} us, p99 "
              f"{np.percentile(standing, 99):.0f} us); achieved {result['achieved'][0]:.3f} m/s", flush=True)


def figures(names, seconds, plants):
    table = []
    for name in names:
        urdf, model, points, stance, feet = load(name)
        for command, velocity in COMMANDS.items():
            for plant in plants:
                controller = gait(model, points, stance, feet)
                result = (walk(urdf, controller, velocity, seconds, start=START) if plant == 'mujoco'
                          else simulate(controller, velocity, seconds))
                us, achieved = result['update_us'], result['achieved']
                # the error: the largest of vx's and vy's (m/s); and wz's (rad/s)
                error = np.abs(achieved - velocity)
                error = (np.max(error[:2]), error[2])
                median, p99 = (np.median(us), np.percentile(us, 99)) if len(us) else (np.nan, np.nan)
                row = (name, command, plant, achieved, error, result['tilt'], result['fell'], median, p99)
                table.append(row)
                print(f"{name:10s} {command:12s} {plant:6s} achieved {np.round(achieved, 3).tolist()} "
                      f"(error {error[0]:.3f} m/s, {error[1]:.3f} rad/s) tilt {result['tilt']:.1f} deg"
                      f"{' FELL' if result['fell'] else ''}; update median {median:.0f} us, p99 {p99:.0f} us",
                      flush=True)
    print(f"\nload average at the end {os.getloadavg()[0]:.1f}\n")
    print("| robot | command | plant | achieved vx, vy, wz | error m/s, rad/s | max tilt (deg) | fell | update "
          "median / p99 (us) |\n|---|---|---|---|---|---|---|---|")
    for name, command, plant, achieved, error, tilt, fell, median, p99 in table:
        print(f"| {name} | {command} | {'MuJoCo' if plant == 'mujoco' else 'ours'} | "
              f"{achieved[0]:.3f}, {achieved[1]:.3f}, {achieved[2]:.3f} | {error[0]:.3f}, {error[1]:.3f} | "
              f"{tilt:.1f} | "
              f"{'yes' if fell else 'no'} | {median:.0f} / {p99:.0f} |")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('robots', nargs='*', default=['quadruped', *PUBLIC])
    parser.add_argument('--seconds', type=float, default=None, help='run length (default 10, --timing 4)')
    parser.add_argument('--plants', default='mujoco,ours')
    parser.add_argument('--timing', action='store_true')
    args = parser.parse_args()
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs", flush=True)
    if args.timing:
        timing(args.robots, args.seconds or 4.0)
    else:
        figures(args.robots, args.seconds or 10.0, args.plants.split(','))


if __name__ == '__main__':
    main()
