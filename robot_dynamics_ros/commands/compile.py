"""``robot-dynamics compile``: build a robot's per-robot generated code ahead, in the foreground, so that every
later process (library calls, the nodes) runs it from its first call."""
import argparse

from .. import fast, load_urdf
from ..fast import code_cache
from ..fast.codegen import ALGORITHMS
from ..resources import bundled_urdf


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('urdf', nargs='?', help='URDF or xacro file (default: the bundled 7-DOF arm)')
    parser.add_argument('--only', nargs='+', choices=ALGORITHMS, default=list(ALGORITHMS), metavar='ALGORITHM',
                        help=f"compile only these ({', '.join(ALGORITHMS)}; default all; the nodes use rnea, crba, "
                             "aba: the regressor takes longest)")


def run(args: argparse.Namespace) -> int:
    path = args.urdf or bundled_urdf()
    model = load_urdf(path)
    if fast.BACKEND != 'numba':
        raise ImportError('generated code is compiled with numba', name='numba')
    print(f"compiling per-robot code for {model.name!r} ({model.nv} DOF) into {code_cache.directory()}", flush=True)

    def progress(algorithm, seconds):
        print(f"  {algorithm:<10} {seconds:6.1f} s", flush=True)

    fast.specialize(model, tuple(args.only), progress)
    print(f"done: {', '.join(args.only)} of {model.name!r} run compiled from their first call in every process")
    return 0
