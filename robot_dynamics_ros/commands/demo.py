"""``robot-dynamics demo``: the dynamics of a robot at one state, with the identities that must hold."""
import argparse
import time

import numpy as np

from .. import aba, crba, fast, load_urdf, rnea
from ..resources import bundled_urdf
from . import int_in

CODE = {'generated': 'compiled per-robot code', 'table': 'compiled table kernels', 'python': 'plain Python, no numba'}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('urdf', nargs='?', help='URDF or xacro file (default: the bundled 7-DOF arm)')
    parser.add_argument('--seed', type=int_in(0), default=0, help='random state seed')


def _microseconds(function, repeats=200):
    start = time.perf_counter()
    for _ in range(repeats):
        function()
    return (time.perf_counter() - start) / repeats * 1e6


def run(args: argparse.Namespace) -> int:
    path = args.urdf or bundled_urdf()
    model = load_urdf(path)
    rng = np.random.default_rng(args.seed)
    q, qd = model.random_configuration(rng), rng.normal(size=model.nv)
    qdd = rng.normal(size=model.nv)
    tau = rnea(model, q, qd, qdd)
    M = crba(model, q)
    h = rnea(model, q, qd, np.zeros(model.nv))
    print(f"robot {model.name!r}: {model.nv} DOF, root link {model.root_link!r}, from {path}")
    np.set_printoptions(precision=4, suppress=True, linewidth=120)
    print(f"{'joint':<16}{'q [rad]':>10}{'qd':>10}{'qdd':>10}{'tau RNEA':>12}{'gravity':>12}")
    g = rnea(model, q, np.zeros(model.nv), np.zeros(model.nv))
    for i, name in enumerate(model.joint_names):
        print(f"{name:<16}{q[i]:>10.4f}{qd[i]:>10.4f}{qdd[i]:>10.4f}{tau[i]:>12.4f}{g[i]:>12.4f}")
    print("identities (max abs residual):")
    print(f"  M qdd + h - tau          {np.max(np.abs(M @ qdd + h - tau)):.2e}")
    print(f"  ABA(tau) - qdd           {np.max(np.abs(aba(model, q, qd, tau) - qdd)):.2e}")
    print(f"  M - M^T                  {np.max(np.abs(M - M.T)):.2e}")
    print(f"  min eigenvalue of M      {np.linalg.eigvalsh(M)[0]:.4e} (> 0)")
    print("time per call (this process):")
    for name, call in (('rnea', lambda: rnea(model, q, qd, qdd)), ('crba', lambda: crba(model, q)),
                       ('aba', lambda: aba(model, q, qd, tau))):
        print(f"  {name:<6}{_microseconds(call):10.1f} us  ({CODE[fast.path(model, algorithm=name)]})")
    return 0
