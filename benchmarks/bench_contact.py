"""Per-step cost of the contact simulator (floating_simulation.FloatingBaseSimulator) on the bundled quadruped
standing on its four feet under a joint PD, against MuJoCo's mj_step on the same robot (MJCF from
test/test_mujoco_contact.py) in the same run; the issue's target is 100 us per step (10x real time at 1 kHz).

    python benchmarks/bench_contact.py
"""
import os
import sys
import time

import numpy as np

from robot_dynamics_ros import load_urdf
from robot_dynamics_ros.floating_simulation import FloatingBaseSimulator
from robot_dynamics_ros.ground_contact import contact_points_from_urdf

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, 'test'))
from test_mujoco_contact import KD, KP, MU, STAND, URDF, mjcf  # noqa: E402 (the oracle's robot and gains)

STEPS = 2000

try:
    import mujoco
except ImportError:
    sys.exit("bench_contact.py compares with MuJoCo: pip install mujoco")


def main():
    model = load_urdf(URDF, root_joint='floating')
    ours = FloatingBaseSimulator(model, 1e-3, contact_points_from_urdf(URDF), initial_positions=STAND,
                                 ground_friction=MU)
    theirs_model = mujoco.MjModel.from_xml_string(mjcf(URDF, ours.q[2]))
    theirs = mujoco.MjData(theirs_model)
    theirs.qpos[7:] = STAND
    start = time.perf_counter()
    for _ in range(STEPS):
        ours.set_command(KP * (STAND - ours.q[7:]) - KD * ours.v[6:])
        ours.step()
    ours_us = (time.perf_counter() - start) / STEPS * 1e6
    start = time.perf_counter()
    for _ in range(STEPS):
        theirs.qfrc_applied[6:] = KP * (STAND - theirs.qpos[7:]) - KD * theirs.qvel[6:]
        mujoco.mj_step(theirs_model, theirs)
    theirs_us = (time.perf_counter() - start) / STEPS * 1e6
    in_contact = int(np.sum(ours.contact_forces[:, 2] > 0))
    print(f"quadruped, {in_contact} feet in contact, {STEPS} steps of 1 ms: ours {ours_us:.0f} us per step "
          f"({1e3 / ours_us:.2f}x real time), MuJoCo mj_step {theirs_us:.1f} us, ratio {ours_us / theirs_us:.0f}")


if __name__ == '__main__':
    main()
