"""Per-call microseconds of RNEA, CRBA and ABA on floating-base robots against Pinocchio's free-flyer models: a
12-DOF quadruped-like and the 31-DOF humanoid-like tree of ``bench_dynamics``, each on a free-flyer root (nv 18 and
37). Columns: the table kernels ("table us", the generic compiled kernels on the packed model), the per-robot
generated code where the model is small enough ("gen us", compiled ahead here with ``fast.specialize``; minutes on a
cold cache), each as the default call from Python (``fast.rnea(model, q, qd, qdd)``), Pinocchio's call from Python
("pin us") and the ratios.

    python benchmarks/bench_floating.py
"""
import os
import sys

import numpy as np
import pinocchio as pin

from bench_dynamics import humanoid_urdf, per_call_us
from robot_dynamics_ros import fast, load_urdf, random_configuration
from robot_dynamics_ros.fast import codegen

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'test'))
from random_robots import quadruped_urdf  # noqa: E402 (a test generator)


def instances(xml):
    """(table-kernel instance, generated-code instance or None) of the model with a floating root."""
    fast.ENABLE, enabled = False, fast.ENABLE
    table = load_urdf(xml, root_joint='floating')
    fast.path(table)
    fast.ENABLE = enabled
    if table.nv > codegen.MAX_DOF:
        return table, None
    generated = load_urdf(xml, root_joint='floating')
    fast.specialize(generated, ('rnea', 'crba', 'aba'))
    return table, generated


def main(number=20000):
    print(f'{"robot":<16}{"nv":>4} {"algorithm":<6}{"table us":>10}{"gen us":>10}{"pin us":>10}'
          f'{"table/pin":>10}{"gen/pin":>10}')
    for name, xml in (('quadruped12+ff', quadruped_urdf()), ('humanoid31+ff', humanoid_urdf())):
        table, generated = instances(xml)
        rng = np.random.default_rng(0)
        q, qd, x = random_configuration(table, rng), rng.normal(size=table.nv), rng.normal(size=table.nv)
        pm = pin.buildModelFromXML(xml, pin.JointModelFreeFlyer())
        data = pm.createData()
        assert (pm.nq, pm.nv) == (table.nq, table.nv)
        pq = pin.randomConfiguration(pm, -np.ones(pm.nq), np.ones(pm.nq))
        theirs = {'RNEA': lambda: pin.rnea(pm, data, pq, qd, x), 'CRBA': lambda: pin.crba(pm, data, pq),
                  'ABA': lambda: pin.aba(pm, data, pq, qd, x)}

        def calls(model):
            return {'RNEA': lambda: fast.rnea(model, q, qd, x), 'CRBA': lambda: fast.crba(model, q),
                    'ABA': lambda: fast.aba(model, q, qd, x)}
        ours = calls(table)
        gen = calls(generated) if generated is not None else {}
        for algorithm in ('RNEA', 'CRBA', 'ABA'):
            t_pin = per_call_us(theirs[algorithm], number)
            t_table = per_call_us(ours[algorithm], number)
            row = f'{name:<16}{table.nv:>4} {algorithm:<6}{t_table:>10.2f}'
            if gen:
                assert fast.path(generated, algorithm=algorithm.lower()) == 'generated'
                t_gen = per_call_us(gen[algorithm], number)
                row += f'{t_gen:>10.2f}{t_pin:>10.2f}{t_table / t_pin:>10.2f}{t_gen / t_pin:>10.2f}'
            else:
                row += f'{"-":>10}{t_pin:>10.2f}{t_table / t_pin:>10.2f}{"-":>10}'
            print(row, flush=True)


if __name__ == '__main__':
    main()
