"""Per-step microseconds of Simulator.step with ground contact, next to MuJoCo's mj_step in the same run, on the
bundled quadruped and on public quadrupeds of example-robot-data (Unitree A1 and Go1, ANYmal C), each standing in
its SRDF stance (the bundled one: knees bent) under a joint PD, after 1 s of settling, both at 1 ms.

MuJoCo loads the same URDF with its own importer (visual meshes dropped, the URDF's primitive collisions kept, a free
joint on the root, a ground plane with the same friction, its default contact and solver settings); ours takes the
URDF's collision spheres, boxes and cylinders (``contact_points_from_urdf``). The issue's target: within 3x MuJoCo.
'pattern/IP' counts the contact solves of the whole run (settling included) by kind; 'fall-backs' the timed steps
that the one-call compiled step (``simulation/contact_step.py``) left to the staged Python path.

    python benchmarks/bench_contact.py [steps] [robot ...]

BLAS runs single-threaded here (OPENBLAS_NUM_THREADS=1, unless set): the matrices are 18 x 18 to 60 x 60, and
OpenBLAS threads on a loaded 2-core machine turned 10 us triangular solves into milliseconds.
"""
import os
import sys
import time
import warnings
import xml.etree.ElementTree as ET

os.environ.setdefault('OPENBLAS_NUM_THREADS', '1')

import numpy as np  # noqa: E402

try:
    import mujoco
except ImportError:
    sys.exit('bench_contact needs MuJoCo: pip install mujoco')

from robot_dynamics_ros import load_urdf  # noqa: E402
from robot_dynamics_ros.model.collision import contact_points_from_urdf  # noqa: E402
from robot_dynamics_ros.model.srdf import load_srdf, stance_configuration  # noqa: E402
from robot_dynamics_ros.model.urdf import URDFWarning  # noqa: E402
from robot_dynamics_ros.resources import bundled_urdf  # noqa: E402
from robot_dynamics_ros.simulation.ground_contact import Ground  # noqa: E402
from robot_dynamics_ros.simulation.simulator import Simulator  # noqa: E402

DT, MU, SETTLE = 1e-3, 0.8, 1.0
# (URDF, SRDF under example-robot-data's robots/ (None: bundled), joint PD gains)
ROBOTS = {
    'quadruped': ('quadruped.urdf', None, 100.0, 2.0),
    'a1': ('a1_description/urdf/a1.urdf', 'a1_description/srdf/a1.srdf', 100.0, 2.0),
    'go1': ('go1_description/urdf/go1.urdf', 'go1_description/srdf/go1.srdf', 100.0, 2.0),
    'anymal_c': ('anymal_c_simple_description/urdf/anymal.urdf', 'anymal_c_simple_description/srdf/anymal.srdf',
                 300.0, 5.0),
}
BUNDLED_STANCE = np.tile([0.0, 0.8, -1.5], 4)


def robots_folder():
    from importlib import metadata
    distribution = metadata.distribution('example-robot-data')
    return str(distribution.locate_file(os.path.join('cmeel.prefix', 'share', 'example-robot-data', 'robots')))


def load(name):
    """(URDF path, model on a free-flyer root, contact points, joint stance (one value per joint), kp, kd)."""
    urdf, srdf, kp, kd = ROBOTS[name]
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', URDFWarning)
        if srdf is None:
            urdf = bundled_urdf(urdf)
            model = load_urdf(urdf, root_joint='floating')
            stance = BUNDLED_STANCE
        else:
            urdf, srdf = (os.path.join(robots_folder(), path) for path in (urdf, srdf))
            model = load_urdf(urdf, root_joint='floating')
            stance = stance_configuration(model, load_srdf(srdf))[1][model.joint_q_index]
    return urdf, model, contact_points_from_urdf(urdf), stance, kp, kd


def ours(name, steps):
    """(us per step, contact points pushing, simulator, steps the one-call compiled path took in the timed ones)
    of Simulator.step, timed alone, after SETTLE s."""
    urdf, model, points, stance, kp, kd = load(name)
    sim = Simulator(model, DT, ground=Ground(0.0, MU), contact_points=points, initial_positions=stance)
    elapsed, settle = 0.0, int(round(SETTLE / DT))
    for k in range(settle + steps):
        sim.set_command(np.concatenate([np.zeros(6), kp * (stance - sim.q[7:]) - kd * sim.qd[6:]]))
        if k == settle:
            one_call = sim.contact_step.steps
        start = time.perf_counter()
        sim.step()
        if k >= settle:
            elapsed += time.perf_counter() - start
    return 1e6 * elapsed / steps, int(np.sum(sim.contact_forces[:, 2] > 0)), sim, sim.contact_step.steps - one_call


def mujoco_model(urdf, mu):
    """MuJoCo's import of the URDF: visuals dropped, collisions as they are, a free root, a ground plane."""
    robot = ET.parse(urdf).getroot()
    for link in robot.findall('link'):
        for visual in link.findall('visual'):
            link.remove(visual)
        inertial = link.find('inertial')   # Go1's 1 mg dummy 'base' has an inertia MuJoCo refuses (not PD)
        if inertial is not None and float(inertial.find('mass').get('value')) < 1e-5:
            link.remove(inertial)
        elif inertial is not None:   # ANYmal's hatch breaks the triangle inequality: MuJoCo refuses what we warn on
            inertia = inertial.find('inertia')
            I = np.array([[float(inertia.get(f'i{a}{b}' if f'i{a}{b}' in inertia.attrib else f'i{b}{a}'))
                           for b in 'xyz'] for a in 'xyz'])
            values, vectors = np.linalg.eigh(I)
            values = np.maximum(values, 1e-9)
            if not np.all(values[:2].sum() >= values[2] * (1 - 1e-9)):
                values[2] = values[:2].sum()
            I = vectors @ np.diag(values) @ vectors.T
            for a, b in ('xx', 'xy', 'xz', 'yy', 'yz', 'zz'):
                inertia.set(f'i{a}{b}', repr(float(I['xyz'.index(a), 'xyz'.index(b)])))
        for collision in link.findall('collision'):   # (MuJoCo does not read .dae meshes; primitives stay)
            if collision.find('geometry/mesh') is not None:
                link.remove(collision)
    extension = ET.SubElement(robot, 'mujoco')
    ET.SubElement(extension, 'compiler', discardvisual='true', balanceinertia='true')
    spec = mujoco.MjSpec.from_string(ET.tostring(robot, encoding='unicode'))
    spec.option.timestep = DT
    spec.worldbody.first_body().add_freejoint()
    spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 1], friction=[mu, 0.005, 0.0001])
    return spec.compile()


def theirs(name, sim, steps):
    """(us per mj_step, contacts) after SETTLE s, from our initial state, under the same PD."""
    urdf, model, _, stance, kp, kd = load(name)
    mj_model = mujoco_model(urdf, MU)
    data = mujoco.MjData(mj_model)
    joints = [mj_model.joint(j).name for j in range(1, mj_model.njnt)]
    order = np.array([model.joint_names.index(j) for j in joints])   # MuJoCo's joint k is our joint order[k]
    q0 = sim.initial_positions
    data.qpos[:7] = np.concatenate([q0[:3], np.roll(q0[3:7], 1)])
    data.qpos[7:] = q0[7:][order]
    target = stance[order]
    elapsed, settle = 0.0, int(round(SETTLE / DT))
    for k in range(settle + steps):
        data.qfrc_applied[6:] = kp * (target - data.qpos[7:]) - kd * data.qvel[6:]
        start = time.perf_counter()
        mujoco.mj_step(mj_model, data)
        if k >= settle:
            elapsed += time.perf_counter() - start
    return 1e6 * elapsed / steps, data.ncon


def main(steps=2000, *names):
    names = names or tuple(ROBOTS)
    print(f'{"robot":<12}{"nv":>4}{"points":>8}{"ours us/step":>14}{"pushing":>9}{"MuJoCo us/step":>16}'
          f'{"contacts":>10}{"ours/MuJoCo":>13}{"pattern/IP":>13}{"fall-backs":>12}')
    for name in names:
        t_ours, pushing, sim, one_call = ours(name, steps)
        t_mj, ncon = theirs(name, sim, steps)
        solves = sim.contact.solves
        print(f'{name:<12}{sim.model.nv:>4}{sim.contact.count:>8}{t_ours:>14.1f}{pushing:>9}{t_mj:>16.1f}{ncon:>10}'
              f'{t_ours / t_mj:>13.1f}{solves["pattern"]:>7}/{solves["interior point"]:<5}{steps - one_call:>12}',
              flush=True)
    print('target: within 3x MuJoCo')


if __name__ == '__main__':
    main(*(int(a) if i == 0 else a for i, a in enumerate(sys.argv[1:])))
