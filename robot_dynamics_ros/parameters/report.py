"""What ``robot-dynamics identify`` tells its user: each base parameter in words and units, next to the URDF's
value; the held-out torque errors; what was left out and why. ``document`` holds every figure for params.yaml,
``text`` prints it.

A base parameter is a combination beta_k = sum_j K_kj pi_j of standard parameters (``BaseParameters.K``, from
the numeric QR or the closed-form Gautier-Khalil rules); its meaning lists the bodies whose parameters it
groups, e.g. ZZR2 = ZZ2 + YY3 + 0.632 MZ3 + 0.0999 M3 + ... reads "arm7_link2 ZZ + arm7_link3 YY, MZ, M +
arm7_link4..arm7_link7 M".
"""
import re

import numpy as np

from ..model.model import REVOLUTE

LEGEND = ("XX..ZZ: inertia about the body's joint frame (XY, XZ, YZ products); MX, MY, MZ: first moment, mass times "
          "centre of mass; M: mass; Ia: rotor inertia; Fv: viscous, Fc: Coulomb friction; off: effort offset. "
          "R: regrouped with the parameters listed (they cannot be told apart by any motion).")
SAMPLING_WORDS = {
    'simulator': "simulator: semi-implicit Euler steps, each effort applied over the step before its state, "
                 "as 'record' writes",
    'continuous': "continuous: effort and state sampled at the same instant (a real robot)"}


def parameter_terms(base, k, tol=1e-12):
    """[(letters, number)] of the standard parameters that base parameter k combines, the kept one first."""
    row = base.K[k]
    lead = base.independent[k]
    order = [lead] + [j for j in np.flatnonzero(np.abs(row) > tol * max(1.0, np.abs(row).max())) if j != lead]
    return [re.fullmatch(r'(\D+)(\d+)', base.parameter_names[j]).groups() for j in order]


def meaning(model, base, k):
    """Base parameter k in words: the bodies (or joint) whose standard parameters it groups."""
    terms = parameter_terms(base, k)
    letters, number = terms[0]
    if letters in ('Ia', 'Fv', 'Fc', 'off'):
        what = {'Ia': 'rotor inertia', 'Fv': 'viscous friction', 'Fc': 'Coulomb friction', 'off': 'effort offset'}
        return f"{what[letters]} of {model.joint_names[int(number) - 1]}"
    by_body = {}
    for letters, number in terms:
        by_body.setdefault(int(number) - 1, []).append(letters)
    groups = []   # consecutive bodies with the same parameters together: [(first, last, letters)]
    for body, names in by_body.items():
        if groups and groups[-1][1] == body - 1 and groups[-1][2] == names:
            groups[-1] = (groups[-1][0], body, names)
        else:
            groups.append((body, body, names))
    words = []
    for first, last, names in groups:
        bodies = model.body_names[first] if first == last else f"{model.body_names[first]}..{model.body_names[last]}"
        words.append(f"{bodies} {', '.join(names)}")
    return ' + '.join(words)


def unit(model, name):
    """SI unit of the base parameter called ``name`` (that of its kept standard parameter)."""
    letters, number = re.fullmatch(r'(\D+?)R?(\d+)', name).groups()
    if letters in ('XX', 'XY', 'XZ', 'YY', 'YZ', 'ZZ'):
        return 'kg m^2'
    if letters in ('MX', 'MY', 'MZ'):
        return 'kg m'
    if letters == 'M':
        return 'kg'
    revolute = model.joint_type[model.coordinate_bodies[int(number) - 1]] == REVOLUTE   # (mimic joints: none)
    return {'Ia': 'kg m^2' if revolute else 'kg', 'Fv': 'N m s/rad' if revolute else 'N s/m',
            'Fc': 'N m' if revolute else 'N', 'off': 'N m' if revolute else 'N'}[letters]


def document(model, base, result, prior, equations, held_out, settings):
    """Everything for params.yaml: settings (dict of the run's options), then the figures."""
    interval = result.interval(0.95)
    n = model.nv
    used = np.sum(equations.rows, axis=0)
    effort = [unit(model, f'Fc{j + 1}') for j in range(n)]
    parameters = {}
    for k, name in enumerate(result.names):
        parameters[name] = {
            'value': float(result.beta[k]), 'std': float(result.std[k]),
            'relative_std_percent': float(result.relative_std[k]), 'interval95': float(interval[k]),
            'urdf_value': float(prior[k]), 'difference': float(result.beta[k] - prior[k]),
            'difference_over_std': float((result.beta[k] - prior[k]) / result.std[k]) if result.std[k] > 0 else None,
            'unit': unit(model, name), 'meaning': meaning(model, base, k), 'relation': base.regrouping[k]}
    return {
        'robot': model.name, 'joints': list(model.joint_names), **settings,
        'samples': result.n_samples, 'condition_number': result.condition_number,
        'relative_residual': result.relative_residual,
        'std_method': result.std_method, 'degrees_of_freedom': result.dof,
        'position_noise': [float(x) for x in equations.position_noise],
        'derivative_half_width_s': equations.smoothing * equations.dt,
        'equations': {
            'total': int(equations.rows.size), 'used': int(used.sum()),
            'used_per_joint': [int(x) for x in used],
            'excluded_per_joint': {reason: [int(x) for x in counts] for reason, counts in equations.excluded.items()},
            'edges_s': float(equations.trimmed)},
        'held_out': None if held_out is None else {
            'segment_s': [float(x) for x in held_out['segment']], 'unit': effort,
            'rms_torque_error': {name: {'torque': float(r), 'urdf': float(u), 'identified': float(i)}
                                 for name, r, u, i in zip(model.joint_names, held_out['torque'], held_out['urdf'],
                                                          held_out['identified'])}},
        'base_parameters': parameters,
        'regrouping': list(base.regrouping)}


def text(doc):
    """The printout of ``document``'s figures."""
    eq = doc['equations']
    excluded = eq['excluded_per_joint']
    lines = [
        f"{len(doc['base_parameters'])} base parameters of {doc['robot']!r} by {doc['method']} "
        f"(sampling {SAMPLING_WORDS[doc['sampling']]})",
        f"equations: {eq['used']} of {eq['total']} used ({eq['used'] / eq['total']:.0%}); left out: "
        f"{sum(excluded['slow'])} near a speed below {doc['min_velocity']:g} rad/s or m/s (sticking: Coulomb "
        f"friction unknown, or reversing: its sign) per joint {excluded['slow']}; {sum(excluded['limit'])} at a "
        f"position or velocity limit; {eq['edges_s']:.3f} s at each end (filter edges)",
        f"positions: noise {max(doc['position_noise']):.2g} rad or m (largest joint), derivatives from a cubic over "
        f"+-{1000 * doc['derivative_half_width_s']:.0f} ms; efforts and regressor low-passed together (Hann, "
        f"gain 1/2 at {doc['cutoff_hz']:g} Hz), every {doc['decimation']}th sample kept",
        f"condition number {doc['condition_number']:.4g}; std: {doc['std_method']}; 95 % interval = "
        f"Student's t ({doc['degrees_of_freedom']} degrees of freedom) x std",
        f"{'parameter':<9}{'unit':>10}{'estimate':>13}{'std':>10}{'95% +-':>10}{'URDF':>13}{'difference':>12}"
        f"{'diff/std':>9}  meaning"]
    for name, p in doc['base_parameters'].items():
        ratio = '' if p['difference_over_std'] is None else f"{p['difference_over_std']:.1f}"
        lines.append(f"{name:<9}{p['unit']:>10}{p['value']:>13.5g}{p['std']:>10.2g}{p['interval95']:>10.2g}"
                     f"{p['urdf_value']:>13.5g}{p['difference']:>12.3g}{ratio:>9}  {p['meaning']}")
    held = doc['held_out']
    if held is None:
        lines.append("held-out segment: none (without it the recording does not determine every base parameter)")
    else:
        lines.append(f"held-out segment {held['segment_s'][0]:.2f}-{held['segment_s'][1]:.2f} s (fitted on the "
                     "rest): RMS torque error per joint, low-passed as the fit")
        width = max(len(j) for j in doc['joints'])
        lines.append(f"{'joint':<{width}}{'unit':>6}{'RMS torque':>12}{'URDF':>12}{'identified':>12}")
        for (joint, e), u in zip(held['rms_torque_error'].items(), held['unit']):
            lines.append(f"{joint:<{width}}{u:>6}{e['torque']:>12.4g}{e['urdf']:>12.4g}{e['identified']:>12.4g}")
    lines.append(LEGEND)
    return '\n'.join(lines)
