"""Per-step microseconds of Simulator.step with ground contact, next to MuJoCo's mj_step in the same run, on the
bundled quadruped and on public robots of example-robot-data (Unitree A1 and Go1, ANYmal C; the humanoid TALOS on
its mesh soles), both at 1 ms, in two scenarios under a joint PD from the SRDF stance (the bundled one: knees bent;
TALOS: half_sitting), after 1 s of settling:

- stand: the stance held;
- trot: trotting in place, diagonal leg pairs (front left with hind right, front right with hind left) flexing thigh
  and knee by up to TROT_AMPLITUDE rad at TROT_FREQUENCY Hz in turn, so that feet leave and touch the ground four
  times a second (issue 39); TALOS, whose legs are not named by quadrant, stands in both;
- drop: released with its feet DROP_HEIGHT up under the stance's PD, timed from the release (no settling): the fall,
  the impact of every foot at once and the standing after;
- tip: no effort from the stance, timed from the start: the legs fold onto their stops and the robot comes down on
  its trunk and knees.

MuJoCo loads the same URDF with its own importer (visual meshes dropped, the URDF's primitive collisions kept, a free
joint on the root, a ground plane with the same friction, its default contact and solver settings) and follows the
same reference; ours takes the URDF's collision spheres, boxes and cylinders (``contact_points_from_urdf``). For
TALOS both take its STL collision meshes: ours up to 32 hull vertices per mesh (``model/collision.py``), MuJoCo its
mesh-plane contact on their convex hulls (robot geoms colliding with the ground only, as ours). Each
step is timed on its own: median, p99 and max per step for both, and the ratios, with the objects built before the
timing frozen out of Python's cyclic collector for both, as the nodes freeze theirs (``nodes/node_loop.py``). 'bounded' counts the timed steps
whose contact solve took the bounded sweeps (``simulation/bounded_solve.py``) rather than a certified pattern;
'>1ms' the timed steps over the 1 kHz budget; 'IP' the interior-point (Clarabel) solves of the whole run (the
step has no other path: ``simulation/contact_step.py``). 'upright' is the base's z axis against the
world's, at the end (cos of the tilt), for both.

    python benchmarks/bench_contact.py [steps] [robot ...] [--scenario stand|trot|drop|tip] [--runs N] [--store]

It ends with the README row (``readme_rows.py``): per robot the median over the runs of our median step and of its
ratio to MuJoCo's in the same run (default 5 runs).

BLAS runs single-threaded here (OPENBLAS_NUM_THREADS=1, unless set): the matrices are 18 x 18 to 60 x 60, and
OpenBLAS threads on a loaded 2-core machine turned 10 us triangular solves into milliseconds.
"""
import gc
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
from robot_dynamics_ros.algorithms.crba import crba  # noqa: E402
from robot_dynamics_ros.model import meshes  # noqa: E402
from robot_dynamics_ros.model.collision import contact_points_from_urdf  # noqa: E402
from robot_dynamics_ros.model.srdf import load_srdf, stance_configuration  # noqa: E402
from robot_dynamics_ros.model.urdf import URDFWarning  # noqa: E402
from robot_dynamics_ros.resources import bundled_urdf  # noqa: E402
from robot_dynamics_ros.simulation.ground_contact import Ground  # noqa: E402
from robot_dynamics_ros.simulation.simulator import Simulator  # noqa: E402

import readme_rows  # noqa: E402

DT, MU, SETTLE = 1e-3, 0.8, 1.0
DROP_HEIGHT = 0.3   # m
SCENARIOS = {'stand': 'standing in the SRDF stance', 'trot': 'trotting in place',
             'drop': f'dropped from {DROP_HEIGHT:g} m', 'tip': 'tipping onto trunk and knees without effort'}
TROT_AMPLITUDE, TROT_FREQUENCY = 0.5, 2.0   # rad, Hz
# the legs by their names' first two letters: True for one diagonal pair, False for the other
DIAGONAL = {'FL': True, 'RR': True, 'LF': True, 'RH': True, 'FR': False, 'RL': False, 'RF': False, 'LH': False}
# (URDF, SRDF under example-robot-data's robots/ (None: bundled), joint PD gains)
ROBOTS = {
    'quadruped': ('quadruped.urdf', None, 100.0, 2.0),
    'a1': ('a1_description/urdf/a1.urdf', 'a1_description/srdf/a1.srdf', 100.0, 2.0),
    'go1': ('go1_description/urdf/go1.urdf', 'go1_description/srdf/go1.srdf', 100.0, 2.0),
    'anymal_c': ('anymal_c_simple_description/urdf/anymal.urdf', 'anymal_c_simple_description/srdf/anymal.srdf',
                 300.0, 5.0),
    # stiff enough to hold half_sitting (at 1e3 it tips over, in MuJoCo too: test_humanoid_contact.py)
    'talos': ('talos_data/robots/talos_full_v2.urdf', 'talos_data/srdf/talos.srdf', 1e4, 100.0),
}
LABELS = {'quadruped': 'bundled quadruped', 'a1': 'A1', 'go1': 'Go1', 'anymal_c': 'ANYmal C', 'talos': 'TALOS'}
MESH_ROBOTS = {'talos'}   # MuJoCo takes their STL collision meshes (its mesh-plane contact on their convex hulls)
BUNDLED_STANCE = np.tile([0.0, 0.8, -1.5], 4)


def robots_folder():
    from importlib import metadata
    distribution = metadata.distribution('example-robot-data')
    return str(distribution.locate_file(os.path.join('cmeel.prefix', 'share', 'example-robot-data', 'robots')))


def load(name):
    """(URDF path, model on a free-flyer root, contact points, joint stance (one value per joint), kp, kd (per joint,
    ``pd_gains``))."""
    urdf, srdf, kp, kd = ROBOTS[name]
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', URDFWarning)
        if srdf is None:
            urdf = bundled_urdf(urdf)
            model = load_urdf(urdf, root_joint='floating')
            stance = BUNDLED_STANCE
        else:
            urdf, srdf = (os.path.join(robots_folder(), path) for path in (urdf, srdf))
            # TALOS's grippers as free joints, as MuJoCo's model of it (mujoco_model.py) and the one-call step take them
            model = load_urdf(urdf, root_joint='floating', mimic=False)
            stance = stance_configuration(model, load_srdf(srdf))[1][model.joint_q_index]
        points = contact_points_from_urdf(urdf)
    return urdf, model, points, stance, *pd_gains(model, stance, kp, kd, capped=name in MESH_ROBOTS)


def pd_gains(model, stance, kp, kd, capped):
    """Per joint (kp, kd); ``capped``: at most what the joint's own inertia I (M's diagonal at the stance) allows an
    explicit PD at DT (kp DT^2 / I <= 1/4, kd DT / I <= 1/2): TALOS's fingertips (I ~ 1e-6 kg m^2) would diverge."""
    kp, kd = np.full(len(stance), kp), np.full(len(stance), kd)
    if capped:
        inertia = np.diag(crba(model, np.concatenate([[0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0], stance])))[6:]
        kp, kd = np.minimum(kp, 0.25 * inertia / DT ** 2), np.minimum(kd, 0.5 * inertia / DT)
    return kp, kd


def trot_reference(joint_names, stance, t):
    """The joint targets at time t of trotting in place: each diagonal pair in turn flexes its thigh and knee (the
    second and third joint of each leg, both away from zero: more bent) by TROT_AMPLITUDE sin^+, half a period
    apart."""
    phase = np.sin(2.0 * np.pi * TROT_FREQUENCY * t)
    target = stance.copy()
    for j, name in enumerate(joint_names):
        leg = name[:2].upper()
        if leg not in DIAGONAL or 'hip' in name.lower() or name.endswith('HAA'):
            continue
        flex = TROT_AMPLITUDE * max(phase if DIAGONAL[leg] else -phase, 0.0)
        target[j] += flex * (np.sign(stance[j]) or 1.0)
    return target


def targets(scenario, joint_names, stance, t):
    return trot_reference(joint_names, stance, t) if scenario == 'trot' else stance


def settling(scenario):
    """Steps run before the timed ones: SETTLE s standing and trotting, none where the scenario is the start."""
    return int(round(SETTLE / DT)) if scenario in ('stand', 'trot') else 0


def scenario_gains(scenario, kp, kd):
    return (0.0 * kp, 0.0 * kd) if scenario == 'tip' else (kp, kd)


def upright(quaternion_xyzw):
    """cos of the base's tilt: the world z component of its z axis."""
    x, y, _, _ = quaternion_xyzw
    return 1.0 - 2.0 * (x * x + y * y)


def ours(name, scenario, steps):
    """(per-step us, simulator, its state at the start, steps the bounded sweeps took) of Simulator.step, each timed
    alone, after ``settling``."""
    urdf, model, points, stance, kp, kd = load(name)
    kp, kd = scenario_gains(scenario, kp, kd)
    sim = Simulator(model, DT, ground=Ground(0.0, MU), contact_points=points, initial_positions=stance,
                    command_timeout=None)
    if scenario == 'drop':
        sim.q[2] += DROP_HEIGHT
    initial = sim.q.copy()
    settle, times = settling(scenario), np.empty(steps)
    gc.freeze()   # as a node does once built (nodes/node_loop.py): no full collection over the start-up objects
    for k in range(settle + steps):
        target = targets(scenario, model.joint_names, stance, sim.t)
        sim.set_command(np.concatenate([np.zeros(6), kp * (target - sim.q[7:]) - kd * sim.qd[6:]]))
        if k == settle:
            bounded = sim.contact.solves.get('bounded', 0)
        start = time.perf_counter()
        sim.step()
        if k >= settle:
            times[k - settle] = time.perf_counter() - start
    gc.unfreeze()
    return 1e6 * times, sim, initial, sim.contact.solves.get('bounded', 0) - bounded


def mujoco_model(urdf, mu, mesh_collisions=False):
    """MuJoCo's import of the URDF: visuals dropped, collisions as they are, a free root, a ground plane.
    ``mesh_collisions``: STL collision meshes kept (by their absolute paths), every
    robot geom colliding with the ground only (we have no self-collision)."""
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
            mesh = collision.find('geometry/mesh')
            if mesh is not None and mesh_collisions and mesh.get('filename', '').lower().endswith('.stl'):
                mesh.set('filename', meshes.resolve(mesh.get('filename'), os.path.dirname(urdf)))
            elif mesh is not None:
                link.remove(collision)
    extension = ET.SubElement(robot, 'mujoco')
    ET.SubElement(extension, 'compiler', discardvisual='true', balanceinertia='true', strippath='false')
    spec = mujoco.MjSpec.from_string(ET.tostring(robot, encoding='unicode'))
    spec.option.timestep = DT
    spec.worldbody.first_body().add_freejoint()
    if mesh_collisions:
        for geom in spec.geoms:
            geom.conaffinity = 0
    spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 1], friction=[mu, 0.005, 0.0001],
                            conaffinity=1)
    return spec.compile()


def theirs(name, scenario, start, steps):
    """(per-step us of mj_step, MjData) after ``settling``, from our state at the start, under the same PD and reference."""
    urdf, model, _, stance, kp, kd = load(name)
    kp, kd = scenario_gains(scenario, kp, kd)
    mj_model = mujoco_model(urdf, MU, mesh_collisions=name in MESH_ROBOTS)
    data = mujoco.MjData(mj_model)
    joints = [mj_model.joint(j).name for j in range(1, mj_model.njnt)]
    order = np.array([model.joint_names.index(j) for j in joints])   # MuJoCo's joint k is our joint order[k]
    q0 = start
    data.qpos[:7] = np.concatenate([q0[:3], np.roll(q0[3:7], 1)])
    data.qpos[7:] = q0[7:][order]
    settle, times = settling(scenario), np.empty(steps)
    gc.freeze()
    for k in range(settle + steps):
        target = targets(scenario, model.joint_names, stance, data.time)[order]
        data.qfrc_applied[6:] = kp[order] * (target - data.qpos[7:]) - kd[order] * data.qvel[6:]
        start = time.perf_counter()
        mujoco.mj_step(mj_model, data)
        if k >= settle:
            times[k - settle] = time.perf_counter() - start
    gc.unfreeze()
    return 1e6 * times, data


def statistics(times):
    return np.median(times), np.percentile(times, 99), np.max(times)


def main(*arguments):
    steps, names, scenario, runs, store, arguments = 3000, [], 'trot', 5, False, list(arguments)
    load = os.getloadavg()[0]
    while arguments:
        argument = arguments.pop(0)
        if argument.isdigit():
            steps = int(argument)
        elif argument == '--scenario':
            scenario = arguments.pop(0)
        elif argument == '--runs':
            runs = int(arguments.pop(0))
        elif argument == '--store':
            store = True
        elif argument in ROBOTS:
            names.append(argument)
        else:
            sys.exit(f'usage: bench_contact.py [STEPS] [--scenario {"|".join(SCENARIOS)}] [--runs N] [--store] [ROBOT ...] with '
                     f'ROBOT one of {", ".join(ROBOTS)}; got {argument!r}')
    if scenario not in SCENARIOS:
        sys.exit(f'bench_contact: unknown scenario {scenario!r}; expected one of {", ".join(SCENARIOS)}')
    print(f'scenario {scenario}, {steps} steps after {settling(scenario) * DT:g} s, median of {runs} run(s); us per step')
    print(f'{"robot":<10}{"ours med/p99/max":>22}{"MuJoCo med/p99/max":>22}{"ratio med/p99":>15}{"bounded":>9}'
          f'{"IP":>6}{"upright":>15}{">1ms":>6}')
    figures = []
    for name in names or ROBOTS:
        rows = []
        for _ in range(runs):
            ours_us, sim, start, bounded = ours(name, scenario, steps)
            theirs_us, data = theirs(name, scenario, start, steps)
            rows.append((*statistics(ours_us), *statistics(theirs_us), bounded, sim.contact.solves['interior point'],
                         upright(sim.q[3:7]), upright(np.roll(data.qpos[3:7], -1)), np.sum(ours_us > 1000.0)))
        row = rows[np.argsort([r[0] for r in rows])[len(rows) // 2]]   # the run of median 'ours'
        o50, o99, omax, t50, t99, tmax, bounded, ip, up_ours, up_theirs, over = row
        print(f'{name:<10}{o50:>8.0f}/{o99:>6.0f}/{omax:>6.0f}{t50:>8.0f}/{t99:>6.0f}/{tmax:>6.0f}'
              f'{o50 / t50:>9.2f}/{o99 / t99:<5.2f}{bounded:>9}{ip:>6}{up_ours:>8.3f}/{up_theirs:.3f}'
              f'{over:>6}', flush=True)
        figures.append(f'{LABELS.get(name, name)} {np.median([r[0] for r in rows]):.0f} us '
                       f'({np.median([r[0] / r[3] for r in rows]):.2g}x)')
    print('targets (issue 39): trot median within 2x, p99 within 3x of MuJoCo, no step over 1 ms; stand within 2x')
    what = SCENARIOS[scenario]
    readme_rows.report('bench_contact.py', [readme_rows.row(
        'bench_contact.py', f"simulator step with ground contact, {what}, against MuJoCo's `mj_step` in the same run "
        f'(median step; medians of {runs} runs)', ', '.join(figures))], runs, store, load)


if __name__ == '__main__':
    main(*sys.argv[1:])
