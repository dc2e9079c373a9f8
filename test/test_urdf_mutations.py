"""Property test of the loader's contract, on mutations of the bundled URDFs: a mutated URDF either raises
URDFError or loads into a model on which inverse dynamics (rnea, crba, gravity_torques, on the default and
the reference path) is finite at the neutral and at random states, and forward dynamics is finite or raises
a RobotDynamicsError. No other exception type escapes."""
import copy
import glob
import os
import warnings
import xml.etree.ElementTree as ET

import numpy as np
from hypothesis import given, settings, strategies as st

from conftest import BUNDLED_URDF, TEST_DIR
import robot_dynamics_ros
from robot_dynamics_ros import URDFError, algorithms
from robot_dynamics_ros.model import parse_urdf

SOURCES = [BUNDLED_URDF] + sorted(glob.glob(os.path.join(TEST_DIR, 'urdf', '*.urdf')))
TEXTS = {os.path.basename(path): open(path, encoding='utf-8').read() for path in SOURCES}
BAD_VALUES = {'nan': ['nan', 'NaN', '-nan'], 'inf': ['inf', '-inf', 'Infinity'],
              'huge': ['1e200', '-1e200', '1e306', '-1e306', '1.7e308'], 'negative': ['-1', '-0.5', '-1e-9'],
              'zero': ['0', '0.0', '-0'], 'empty': ['', ' '], 'text': ['abc', '1,5', '0x10']}
MUTATIONS = ('delete', 'duplicate', 'value', 'vector component', 'truncate')
PLAUSIBLE_SPEED = 50.0  # rad/s or m/s: faster than any joint moves


def mutate(text, kind, rnd):
    """(mutated URDF text, a label of what was done); rnd: a random.Random."""
    if kind == 'truncate':
        cut = rnd.randrange(len(text))
        return text[:cut], 'truncate'
    root = ET.fromstring(text)
    elements = list(root.iter())
    parents = {child: parent for parent in elements for child in parent}
    if kind in ('delete', 'duplicate'):
        element = rnd.choice(elements[1:])
        parent = parents[element]
        if kind == 'delete':
            parent.remove(element)
        else:
            parent.insert(list(parent).index(element) + 1, copy.deepcopy(element))
        return ET.tostring(root, encoding='unicode'), f'{kind} <{element.tag}>'
    element = rnd.choice([e for e in elements if e.attrib])
    attribute = rnd.choice(sorted(element.attrib))
    value_class = rnd.choice(sorted(BAD_VALUES))
    value = rnd.choice(BAD_VALUES[value_class])
    words = element.get(attribute).split()
    if kind == 'vector component' and len(words) > 1:
        words[rnd.randrange(len(words))] = value
        value = ' '.join(words)
    element.set(attribute, value)
    where = f'{parents[element].tag}/{element.tag}' if element in parents else element.tag
    return ET.tostring(root, encoding='unicode'), f'{value_class} in {where}@{attribute}'


def states(model, rng):
    """(q, qd, qdd): the neutral state at rest, random states within the limits, and fast ones."""
    n = model.nv
    speed = np.minimum(np.nan_to_num(model.velocity_limit, posinf=PLAUSIBLE_SPEED), PLAUSIBLE_SPEED)
    yield model.neutral(), np.zeros(n), np.zeros(n)
    for _ in range(3):
        yield model.random_configuration(rng), rng.uniform(-speed, speed), rng.normal(size=n)
    for _ in range(2):
        yield model.random_configuration(rng), rng.choice([-1, 1], size=n) * PLAUSIBLE_SPEED, \
            rng.normal(scale=100.0, size=n)


def check_contract(xml):
    """None if the URDF is refused with URDFError or its model runs; else a description of the breach.
    Any other exception propagates."""
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')  # URDF warnings are expected; finiteness is checked below
        try:
            model = parse_urdf(xml)
        except URDFError:
            return None
        rng = np.random.default_rng(0)
        for q, qd, qdd in states(model, rng):
            results = {
                'rnea': robot_dynamics_ros.rnea(model, q, qd, qdd),
                'algorithms.rnea': algorithms.rnea(model, q, qd, qdd),
                'crba': robot_dynamics_ros.crba(model, q), 'algorithms.crba': algorithms.crba(model, q),
                'gravity_torques': robot_dynamics_ros.gravity_torques(model, q),
                'algorithms.gravity_torques': algorithms.gravity_torques(model, q)}
            for name, value in results.items():
                if not np.all(np.isfinite(value)):
                    return f"{name} is not finite at q={q}, qd={qd}"
            for aba in (robot_dynamics_ros.aba, algorithms.aba):
                try:
                    qdd_out = aba(model, q, qd, results['rnea'])
                except robot_dynamics_ros.RobotDynamicsError:
                    continue
                if not np.all(np.isfinite(qdd_out)):
                    return f"{aba.__module__}.aba is not finite at q={q}, qd={qd}"
    return None


@settings(max_examples=400, deadline=None, derandomize=True, database=None)
@given(source=st.sampled_from(sorted(TEXTS)), kind=st.sampled_from(MUTATIONS),
       rnd=st.randoms(use_true_random=False))
def test_mutated_urdf_is_refused_or_runs(source, kind, rnd):
    xml, label = mutate(TEXTS[source], kind, rnd)
    breach = check_contract(xml)
    assert breach is None, f"{source}, {label}: {breach}"


def test_mutations_reach_every_class():
    """The mutations exercise what they claim: each kind of bad value is refused somewhere."""
    import random
    rnd = random.Random(0)
    refused = set()
    for _ in range(300):
        xml, label = mutate(TEXTS['arm7.urdf'], 'value', rnd)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter('ignore')
                parse_urdf(xml)
        except URDFError:
            refused.add(label.split()[0])
    assert refused == set(BAD_VALUES)
