"""``robot-dynamics base-params``: base inertial parameters of a URDF, their regrouping and their values."""
import argparse
import sys

from .. import load_urdf
from ..algorithms.regressor import standard_parameters
from ..model.mdh import MDHError
from ..parameters import closed_form_base_parameters, numeric_base_parameters
from ..resources import bundled_urdf
from . import finite_float


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('urdf', nargs='?', help='URDF or xacro file (default: the bundled 7-DOF arm)')
    parser.add_argument('--method', choices=('numeric', 'closed-form'), default='numeric',
                        help='QR of the stacked regressor (any tree), or Gautier-Khalil closed form '
                             '(serial chains, in modified-DH frames placed on the joint axes)')
    parser.add_argument('--friction', action='store_true',
                        help='add viscous (Fv) and Coulomb (Fc) friction per joint, values from the URDF dynamics')
    parser.add_argument('--rotor-inertia', action='store_true',
                        help='add a rotor inertia (Ia) per joint; the URDF has none, so its value is 0')
    parser.add_argument('--gravity', type=finite_float, nargs=3, default=None, metavar=('X', 'Y', 'Z'),
                        help='gravity in the root frame (default 0 0 -9.81)')
    parser.add_argument('--mimic', action=argparse.BooleanOptionalAction, default=True,
                        help="couple each URDF <mimic> joint to its master (q_m = multiplier q_master + offset): "
                             "base parameters of the independent joints (numeric method only; the default); "
                             "--no-mimic: every joint is a degree of freedom")


def run(args: argparse.Namespace) -> int:
    path = args.urdf or bundled_urdf()
    model = load_urdf(path, mimic=args.mimic)
    if model.coupling is not None and args.method == 'closed-form':
        raise ValueError("coupled <mimic> joints need --method numeric (the closed form covers serial chains), or "
                         "--no-mimic")
    extras = dict(rotor_inertia=args.rotor_inertia, viscous=args.friction, coulomb=args.friction)
    try:
        if args.method == 'numeric':
            base = numeric_base_parameters(model, gravity=args.gravity, **extras)
        else:
            base = closed_form_base_parameters(model, gravity=args.gravity, **extras)
    except (MDHError, NotImplementedError) as e:
        print(f"closed form not applicable: {e}; use --method numeric", file=sys.stderr)
        return 2
    beta = base.project(standard_parameters(model, **extras))
    width = max(len(name) for name in base.names)
    print(f"robot {model.name!r}: {model.nv} joints, from {path}")
    print(f"{'name':<{width}}  {'value':>14}  regrouping")
    for name, value, relation in zip(base.names, beta, base.regrouping):
        print(f"{name:<{width}}  {value:>14.6g}  {relation}")
    p = len(base.parameter_names)
    regrouped = sum(name != base.parameter_names[k] for name, k in zip(base.names, base.independent))
    print(f"{len(base)} base parameters of {p} standard ({args.method}): {p - len(base)} eliminated, "
          f"{regrouped} base parameters regroup others")
    if base.to_mdh is not None:
        print("the URDF's frames are not modified-DH frames: names and regrouping refer to the parameters of "
              "each body in MDH frames placed on the joint axes; values are computed from the URDF's")
    if args.method == 'numeric':
        print(f"pivot gap (smallest kept / largest dropped |R_kk|): {base.pivot_gap:.3g}")
    return 0
