"""Per-step microseconds of Simulator.step with ground contact on the bundled quadruped (18 DOF, standing on its 4 feet
under a joint PD), next to MuJoCo's mj_step on the same robot (its MJCF written from our model, test/mujoco_model.py)
in the same run: with the hard-contact settings of the comparison test (0.2 ms step) and with MuJoCo's defaults at
our 1 ms step. The issue's target is 100 us per step.

    python benchmarks/bench_contact.py [steps]

BLAS runs single-threaded here (OPENBLAS_NUM_THREADS=1, unless set): the matrices are 18 x 18 to 40 x 40, and
OpenBLAS threads on a loaded 2-core machine turned 10 us triangular solves into milliseconds.
"""
import os
import sys
import time

os.environ.setdefault('OPENBLAS_NUM_THREADS', '1')

import numpy as np  # noqa: E402

try:
    import mujoco
except ImportError:
    sys.exit('bench_contact needs MuJoCo: pip install mujoco')

from robot_dynamics_ros import load_urdf  # noqa: E402
from robot_dynamics_ros.simulation.ground_contact import Ground  # noqa: E402
from robot_dynamics_ros.model.collision import contact_points_from_urdf  # noqa: E402
from robot_dynamics_ros.resources import bundled_urdf  # noqa: E402
from robot_dynamics_ros.simulation.simulator import Simulator  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'test'))
from mujoco_model import mjcf  # noqa: E402 (a test helper)

STAND = np.tile([0.0, 0.8, -1.5], 4)
KP, KD, MU, DT = 100.0, 2.0, 1.0, 1e-3


def ours(steps):
    """(us per step, feet in contact) of Simulator.step, timed alone, after 1 s of settling."""
    urdf = bundled_urdf('quadruped.urdf')
    model = load_urdf(urdf, root_joint='floating')
    sim = Simulator(model, DT, ground=Ground(0.0, MU), contact_points=contact_points_from_urdf(urdf),
                    initial_positions=STAND)
    elapsed = 0.0
    for k in range(1000 + steps):
        sim.set_command(np.concatenate([np.zeros(6), KP * (STAND - sim.q[7:]) - KD * sim.qd[6:]]))
        start = time.perf_counter()
        sim.step()
        if k >= 1000:
            elapsed += time.perf_counter() - start
    feet = int(np.sum(sim.contact_forces[:, 2] > 0))
    print(f"cone programs solved on the last step's certified pattern / by the interior-point solver: "
          f"{sim.contact.solves['pattern']} / {sim.contact.solves['interior point']}")
    return 1e6 * elapsed / steps, feet, model


def theirs(model, timestep, hard, steps):
    """us per mj_step, and per simulated millisecond, after 1 s of settling."""
    urdf = bundled_urdf('quadruped.urdf')
    mj_model = mujoco.MjModel.from_xml_string(mjcf(model, contact_points_from_urdf(urdf), MU, timestep, hard))
    data = mujoco.MjData(mj_model)
    sim = Simulator(model, DT, ground=Ground(0.0, MU), contact_points=contact_points_from_urdf(urdf),
                    initial_positions=STAND)
    data.qpos[:] = np.concatenate([sim.q[:3], np.roll(sim.q[3:7], 1), sim.q[7:]])
    settle = int(round(1.0 / timestep))
    elapsed = 0.0
    for k in range(settle + steps):
        data.qfrc_applied[6:] = KP * (STAND - data.qpos[7:]) - KD * data.qvel[6:]
        start = time.perf_counter()
        mujoco.mj_step(mj_model, data)
        if k >= settle:
            elapsed += time.perf_counter() - start
    per_step = 1e6 * elapsed / steps
    return per_step, per_step * 1e-3 / timestep, data.ncon


def main(steps=2000):
    t_ours, feet, model = ours(steps)
    print(f'{"simulator":<44}{"dt ms":>7}{"us/step":>10}{"us/sim ms":>11}{"contacts":>10}{"ours/them":>11}')
    print(f'{"robot_dynamics_ros Simulator.step":<44}{DT * 1e3:>7.1f}{t_ours:>10.1f}{t_ours:>11.1f}{feet:>10}{"":>11}')
    for label, timestep, hard in (('MuJoCo mj_step, hard (as the test)', 2e-4, True),
                                  ('MuJoCo mj_step, defaults', DT, False)):
        per_step, per_ms, contacts = theirs(model, timestep, hard, 5 * steps)
        print(f'{label:<44}{timestep * 1e3:>7.1f}{per_step:>10.1f}{per_ms:>11.1f}{contacts:>10}'
              f'{t_ours / per_ms:>11.1f}')
    print(f'target: 100 us per step; Simulator.step is {t_ours / 100.0:.1f}x that')


if __name__ == '__main__':
    main(*(int(a) for a in sys.argv[1:]))
