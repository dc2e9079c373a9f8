"""Per-call microseconds of RNEA, CRBA and ABA: the reference (plain Python), compiled fast path, Pinocchio, the ratio
fast / Pinocchio; batched throughput (and the batched regressor) against a Python loop over Pinocchio; the
controller's compute time per joint-state message (the control law alone, and the node's whole update in NumPy
and in one compiled call) and the simulator's steps/s on the bundled arm; in a fresh process after
``robot-dynamics compile``, the time to the first result and the per-call ratio against Pinocchio from the first
call on. The "fast" columns time the default call (``fast.rnea(model, q, qd, qdd)``, what
``robot_dynamics_ros.rnea`` and the nodes run) on a model whose code was compiled ahead; the "path" column says
which code served it: per-robot generated code, the table kernels, or plain Python (no numba); "gen us" times the
generated function alone (the rest of "fast us" is the dispatch and the result's allocation); "out us" the model's
bound function (``fast.functions(model).rnea``) writing into a given ``out=`` array, as Pinocchio writes into its
Data. "ref us" times the reference (``algorithms``:
the same kernels as plain Python) and "table us" the table kernels on the same state.

    python benchmarks/bench_dynamics.py [--quick] [--runs N] [--store]

Robots: the bundled arm, a two-arm tree, a 31-DOF humanoid and example-robot-data's UR5 (skipped with a line where
example-robot-data is missing). Per-call timings are this thread's CPU time (time.thread_time), the minimum over
repeats of timeit loops (the least disturbed run on a shared machine); the fresh-process means too, and the first
call of each algorithm is printed alone (it loads the compiled code: its share of the mean). The tables run once;
then ``--runs`` repeats of what the README gives (``readme_rows.py``): UR5's per-call ratios against Pinocchio, hot
and in a fresh process, and the controller update; their medians.
"""
import argparse
import itertools
import os
import subprocess
import sys
import tempfile
import time
import timeit
from array import array

import numpy as np

from robot_dynamics_ros import algorithms, fast, load_urdf, resources
from robot_dynamics_ros.fast import codegen
from robot_dynamics_ros.control.computed_torque import ComputedTorqueController, ControlStep
from robot_dynamics_ros.control.joint_states import JointStateMapper, plausibility_bounds
from robot_dynamics_ros.control.references import TrajectoryReference, sinusoid_reference
from robot_dynamics_ros.simulation.simulator import Simulator

import readme_rows

try:
    import pinocchio as pin
except ImportError:
    pin = None

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIMITS = '<limit lower="-2.5" upper="2.5" effort="100" velocity="5"/>'


def humanoid_urdf():
    """A branched 31-DOF humanoid-like tree: 3-DOF waist, 2-DOF neck, two 7-DOF arms, two 6-DOF legs."""
    links, joints = ['<link name="base_link"/>'], []
    axes = ['0 0 1', '0 1 0', '1 0 0']

    def chain(name, parent, n_dof, origin):
        for k in range(n_dof):
            child = f'{name}_{k}'
            mass = 4.0 - 0.3 * k
            links.append(f'<link name="{child}"><inertial><origin xyz="0.01 0.02 -0.08" rpy="0.1 0.2 0.3"/>'
                         f'<mass value="{mass}"/><inertia ixx="0.02" ixy="0.001" ixz="0.0" iyy="0.03" iyz="0.002" '
                         f'izz="0.015"/></inertial></link>')
            xyz = origin if k == 0 else '0.0 0.02 -0.15'
            joints.append(f'<joint name="{child}_joint" type="revolute"><parent link="{parent}"/>'
                          f'<child link="{child}"/><origin xyz="{xyz}" rpy="0 0.1 0"/>'
                          f'<axis xyz="{axes[k % 3]}"/>{LIMITS}</joint>')
            parent = child
        return parent

    torso = chain('waist', 'base_link', 3, '0 0 1.0')
    chain('neck', torso, 2, '0 0 0.3')
    chain('left_arm', torso, 7, '0 0.25 0.2')
    chain('right_arm', torso, 7, '0 -0.25 0.2')
    chain('left_leg', 'base_link', 6, '0 0.1 0.9')
    chain('right_leg', 'base_link', 6, '0 -0.1 0.9')
    return f'<robot name="humanoid31">{"".join(links)}{"".join(joints)}</robot>'


def per_call_us(fn, number):
    """CPU us of this thread per call (time.thread_time: what the call costs, without the time other processes on a
    loaded machine take), the minimum over repeats of timeit loops."""
    return min(timeit.repeat(fn, number=number, repeat=7, timer=time.thread_time)) / number * 1e6


def ur5_urdf():
    """example-robot-data's UR5 (the text of ur_description/urdf/ur5_robot.urdf), or None where it is missing."""
    from importlib import metadata
    try:
        distribution = metadata.distribution('example-robot-data')
    except metadata.PackageNotFoundError:
        return None
    path = str(distribution.locate_file(os.path.join('cmeel.prefix', 'share', 'example-robot-data', 'robots',
                                                     'ur_description', 'urdf', 'ur5_robot.urdf')))
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return f.read()


def robots(only=None):
    for name, path in [('arm7', os.path.join(ROOT, 'urdf', 'arm7.urdf')),
                       ('two_arm_tree', os.path.join(ROOT, 'test', 'urdf', 'two_arm_tree.urdf'))]:
        if only in (None, name):
            with open(path) as f:
                yield name, f.read()
    if only in (None, 'humanoid31'):
        yield 'humanoid31', humanoid_urdf()
    if only in (None, 'ur5'):
        xml = ur5_urdf()
        if xml is None:
            print('ur5 skipped: example-robot-data is not installed (pip install example-robot-data)')
        else:
            yield 'ur5', xml


def pinocchio_calls(xml, rng):
    pm = pin.buildModelFromXML(xml)
    data = pm.createData()
    q, v, a = pin.randomConfiguration(pm), rng.normal(size=pm.nv), rng.normal(size=pm.nv)
    return {'RNEA': lambda: pin.rnea(pm, data, q, v, a), 'CRBA': lambda: pin.crba(pm, data, q),
            'ABA': lambda: pin.aba(pm, data, q, v, a)}, (pm, data)


def load_hot(xml):
    """The model as a new process sees it after ``robot-dynamics compile`` (where numba runs and the model is small
    enough): its code compiled ahead into the disk cache, a new instance that loads it at its first call."""
    if fast.BACKEND == 'numba' and load_urdf(xml).nv <= codegen.MAX_DOF:
        fast.specialize(load_urdf(xml))
    model = load_urdf(xml)
    fast.path(model)   # its first use: the code that serves it is decided
    return model


def table_instance(xml):
    """An instance of the model that the table kernels serve (its first call made with generated code disabled)."""
    fast.ENABLE, enabled = False, fast.ENABLE
    model = load_urdf(xml)
    fast.path(model)
    fast.ENABLE = enabled
    return model


def calls(model, q, qd, x):
    return {'RNEA': lambda: fast.rnea(model, q, qd, x), 'CRBA': lambda: fast.crba(model, q),
            'ABA': lambda: fast.aba(model, q, qd, x)}


def per_call_table(number, only=None):
    """Prints the per-call table; returns {(robot, algorithm): fast / pin}."""
    ratios = {}
    print(f'{"robot":<13}{"nv":>4} {"algorithm":<6}{"path":>10}{"ref us":>10}{"table us":>10}{"gen us":>10}'
          f'{"fast us":>10}{"out us":>10}{"pin us":>10}{"fast/pin":>10}{"out/pin":>10}')
    for name, xml in robots(only):
        model = load_hot(xml)
        rng = np.random.default_rng(0)
        q, qd, x = model.random_configuration(rng), rng.normal(size=model.nv), rng.normal(size=model.nv)
        references = {'RNEA': lambda: algorithms.rnea(model, q, qd, x), 'CRBA': lambda: algorithms.crba(model, q),
                      'ABA': lambda: algorithms.aba(model, q, qd, x)}
        table = calls(table_instance(xml), q, qd, x)
        generated = model._cache.get('generated') or {}
        out = {'RNEA': np.empty(model.nv), 'CRBA': np.empty((model.nv, model.nv)), 'ABA': np.empty(model.nv)}
        bound = fast.functions(model)
        into = {'RNEA': lambda: bound.rnea(q, qd, x, out=out['RNEA']), 'CRBA': lambda: bound.crba(q, out=out['CRBA']),
                'ABA': lambda: bound.aba(q, qd, x, out=out['ABA'])}
        alone = {'RNEA': lambda: generated['rnea'](q, qd, x, out['RNEA']),
                 'CRBA': lambda: generated['crba'](q, out['CRBA']),
                 'ABA': lambda: generated['aba'](q, qd, x, out['ABA'])}
        theirs = pinocchio_calls(xml, rng)[0] if pin else {}
        for algorithm, compiled in calls(model, q, qd, x).items():
            compiled()
            table[algorithm]()
            t_ref = per_call_us(references[algorithm], max(1, number // 200))
            t_table = per_call_us(table[algorithm], number)
            t_fast = per_call_us(compiled, number)
            t_into = per_call_us(into[algorithm], number)
            t_alone = f'{per_call_us(alone[algorithm], number):>10.2f}' if generated else f'{"-":>10}'
            row = (f'{name:<13}{model.nv:>4} {algorithm:<6}{fast.path(model, algorithm=algorithm.lower()):>10}'
                   f'{t_ref:>10.1f}{t_table:>10.2f}{t_alone}{t_fast:>10.2f}{t_into:>10.2f}')
            if algorithm in theirs:
                t_pin = per_call_us(theirs[algorithm], number)
                row += f'{t_pin:>10.2f}{t_fast / t_pin:>10.2f}{t_into / t_pin:>10.2f}'
                ratios[name, algorithm] = t_fast / t_pin
            print(row)
    return ratios


def batch_table(n_states):
    print(f'\nbatched, {n_states} states: states/s')
    print(f'{"robot":<13}{"algorithm":<7}{"path":>10}{"fast batch":>14}{"pin loop":>14}{"ratio":>8}')
    for name, xml in robots():
        model = load_hot(xml)
        rng = np.random.default_rng(1)
        Q = np.array([model.random_configuration(rng) for _ in range(n_states)])
        QD, X = rng.normal(size=Q.shape), rng.normal(size=Q.shape)
        ours = {'RNEA': lambda: fast.rnea_batch(model, Q, QD, X), 'CRBA': lambda: fast.crba_batch(model, Q),
                'ABA': lambda: fast.aba_batch(model, Q, QD, X),
                'REGR': lambda: fast.regressor_batch(model, Q, QD, X)}
        if pin:
            pm, data = pinocchio_calls(xml, rng)[1]
            PQ = [pin.randomConfiguration(pm) for _ in range(n_states)]
            theirs = {'RNEA': lambda: [pin.rnea(pm, data, q, v, a) for q, v, a in zip(PQ, QD, X)],
                      'CRBA': lambda: [pin.crba(pm, data, q) for q in PQ],
                      'ABA': lambda: [pin.aba(pm, data, q, v, a) for q, v, a in zip(PQ, QD, X)],
                      'REGR': lambda: [pin.computeJointTorqueRegressor(pm, data, q, v, a) for q, v, a in zip(PQ, QD, X)]}
        for algorithm, batch in ours.items():
            batch()
            rate = n_states / min(timeit.repeat(batch, number=1, repeat=5))
            row = f'{name:<13}{algorithm:<7}{fast.path(model):>10}{rate:>14.3g}'
            if pin:
                pin_rate = n_states / min(timeit.repeat(theirs[algorithm], number=1, repeat=3))
                row += f'{pin_rate:>14.3g}{rate / pin_rate:>8.1f}'
            print(row)


def loop_table(number, with_simulator=True):
    """The two hot loops of the ROS nodes on the bundled arm: one controller update, one simulator step; returns
    the controller update's (one compiled call, NumPy path) us."""
    model = load_urdf(resources.bundled_urdf())
    rng = np.random.default_rng(2)
    q, qd, q_ref = model.random_configuration(rng), rng.normal(size=model.nv), model.random_configuration(rng)
    qd_ref, qdd_ref = rng.normal(size=model.nv), rng.normal(size=model.nv)
    controller = ComputedTorqueController(model, kp=100.0, kd=20.0)
    controller.compute(q, qd, q_ref, qd_ref, qdd_ref)
    t_control = per_call_us(lambda: controller.compute(q, qd, q_ref, qd_ref, qdd_ref), number)
    print(f'\ncontroller (computed torque, arm7): {t_control:.1f} us per joint-state message')
    # The whole update of the node per joint state, fields as rclpy delivers them, inside a trajectory segment.
    names, positions, velocities = list(model.joint_names), array('d', q), array('d', qd)
    mapper = JointStateMapper(names, bounds=plausibility_bounds(model))
    reference = TrajectoryReference(*sinusoid_reference(model, 1.0, 0.5, 10.0))
    t = 1.2345
    clock = itertools.count()   # the state's time (ms): the governor sees time pass between updates

    def numpy_update():
        q, qd = mapper.map(names, positions, velocities)
        controller.update(next(clock) * 1e-3, q, qd, *reference.sample(t))
    t_numpy = per_call_us(numpy_update, number)
    row = f'controller update (mapping + reference + governor + control law): NumPy {t_numpy:.1f} us'
    if fast.BACKEND == 'numba':
        step = ControlStep(mapper, ComputedTorqueController(model, kp=100.0, kd=20.0))
        step(names, positions, velocities, reference, t, 0.0)
        t_step = per_call_us(lambda: step(names, positions, velocities, reference, t, next(clock) * 1e-3), number)
        row += f', one compiled call (ControlStep) {t_step:.1f} us ({t_numpy / t_step:.1f}x)'
    print(row)
    if not with_simulator:
        return t_step, t_numpy
    for integrator in ('semi_implicit_euler', 'rk4'):
        simulator = Simulator(model, dt=1e-3, integrator=integrator)
        simulator.set_command(rng.normal(size=model.nv))
        simulator.step()
        t_step = per_call_us(simulator.step, number) * 1e-6
        print(f'simulator (arm7, dt=1e-3, {integrator}): {1.0 / t_step:.3g} steps/s ({1e-3 / t_step:.0f}x real time)')
    return t_step, t_numpy


FIRST_CALL = """
import sys, time
t0 = time.perf_counter()
import numpy as np
import pinocchio as pin
from robot_dynamics_ros import fast, load_urdf
xml = open(sys.argv[1]).read()
model = load_urdf(xml)
pm = pin.buildModelFromXML(xml)
data = pm.createData()
rng = np.random.default_rng(0)
q, qd, x = model.random_configuration(rng), rng.normal(size=model.nv), rng.normal(size=model.nv)
pq = pin.randomConfiguration(pm)
ours = {'RNEA': lambda: fast.rnea(model, q, qd, x), 'CRBA': lambda: fast.crba(model, q),
        'ABA': lambda: fast.aba(model, q, qd, x)}
theirs = {'RNEA': lambda: pin.rnea(pm, data, pq, qd, x), 'CRBA': lambda: pin.crba(pm, data, pq),
          'ABA': lambda: pin.aba(pm, data, pq, qd, x)}
t1 = time.perf_counter()
ours['RNEA']()
print(f'{time.perf_counter() - t0:.3f} {time.perf_counter() - t1:.3f} {fast.path(model)}')
for name in ours:   # every call from the first on: the mean over the first N calls, against Pinocchio's
    for function in (ours[name], theirs[name]):
        start = time.thread_time()   # CPU time of this thread: what the calls cost, whatever the load
        function()
        first = time.thread_time() - start
        for _ in range(int(sys.argv[2]) - 1):
            function()
        print(f'{(time.thread_time() - start) / int(sys.argv[2]) * 1e6:.3f} {first * 1e6:.1f}', end=' ')
    print(name)
"""


def first_call(calls, cache, only=None):
    """In a fresh process whose robot was compiled ahead (``fast.specialize``, as ``robot-dynamics compile``) into
    the cache directory ``cache`` (once per robot): time to the first rnea result, and the mean per call over the
    first ``calls`` calls against Pinocchio's in the same process (and the first call of each alone)."""
    if fast.BACKEND != 'numba' or pin is None:
        print('first-call timings skipped: they need numba and pinocchio')
        return {}
    found = {}
    print(f'\nfresh process after compile: first rnea result (s after process start, of which the call itself),'
          f' then the mean of the first {calls} calls against Pinocchio')
    env = dict(os.environ, XDG_CACHE_HOME=cache, ROBOT_DYNAMICS_ROS_CODEGEN='1')
    for name, xml in robots(only):
        path = os.path.join(cache, f'{name}.urdf')
        if not os.path.exists(path):
            with open(path, 'w') as f:
                f.write(xml)
            subprocess.run([sys.executable, '-m', 'robot_dynamics_ros.cli', 'compile', path, '--only', 'rnea', 'crba',
                            'aba'], env=env, check=True, capture_output=True)
        lines = subprocess.run([sys.executable, '-c', FIRST_CALL, path, str(calls)], capture_output=True, text=True,
                               check=True, env=env).stdout.splitlines()
        since_start, call, served_by = lines[0].split()
        firsts, after = [], []
        for line in lines[1:]:
            ours, ours_first, theirs, theirs_first = map(float, line.split()[:4])
            algorithm = line.split()[4]
            found[name, algorithm] = ours / theirs
            firsts.append(f'{algorithm} {ours_first:.0f}/{theirs_first:.0f}')
            rest = [(mean * calls - first) / (calls - 1)   # the mean of the calls after the first
                    for mean, first in ((ours, ours_first), (theirs, theirs_first))]
            after.append(f'{algorithm} {rest[0] / rest[1]:.2f}')
        ratios = ', '.join(f'{algorithm} {found[name, algorithm]:.2f}' for algorithm in ('RNEA', 'CRBA', 'ABA'))
        print(f'  {name:<13} first result {since_start} s (call {call} s, {served_by}); fast/pin {ratios}; '
              f'first call us, fast/pin: {", ".join(firsts)}; fast/pin without the first: {", ".join(after)}')
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    parser.add_argument('--quick', action='store_true', help='fewer iterations (a smoke run)')
    readme_rows.add_arguments(parser, runs=5)
    args = parser.parse_args()
    load = os.getloadavg()[0]
    calls, number = (200, 200) if args.quick else (2000, 5000)
    with tempfile.TemporaryDirectory() as cache:
        fresh, hot = [first_call(calls, cache)], [per_call_table(number)]
        batch_table(200 if args.quick else 10000)
        updates = [loop_table(200 if args.quick else 2000)]
        for run in range(1, args.runs):
            print(f'\nrun {run + 1} of {args.runs}: the README figures')
            fresh.append(first_call(calls, cache, only='ur5'))
            hot.append(per_call_table(number, only='ur5'))
            updates.append(loop_table(200 if args.quick else 2000, with_simulator=False))
    rows = [readme_rows.row('bench_dynamics.py', 'computed-torque update in process, hot: one compiled call / the '
                            'NumPy path', ' / '.join(f'{np.median(u):.1f} us' for u in zip(*updates)))]
    if ('ur5', 'RNEA') in hot[0] and ('ur5', 'RNEA') in fresh[0]:
        def ratios(runs):
            return ', '.join(f'{a} {np.median([r["ur5", a] for r in runs]):.2f}' for a in ('RNEA', 'CRBA', 'ABA'))
        rows.append(readme_rows.row(
            'bench_dynamics.py', "UR5 (example-robot-data) per call against Pinocchio's in the same process, "
            f'fast / pin: hot; in a fresh process after `robot-dynamics compile`, the mean of the first {calls} calls',
            f'hot {ratios(hot)}; fresh {ratios(fresh)}'))
    readme_rows.report('bench_dynamics.py', rows, args.runs, args.store, load)
    if pin is None:
        print('pinocchio does not import: its columns are left out')
    if fast.BACKEND != 'numba':
        print("numba is not installed: the 'fast' columns are the kernels as plain Python (pip install '.[fast]')")


if __name__ == '__main__':
    main()
