"""Random URDF trees for property tests: random branching, joint types, axes, origins and inertias."""
import numpy as np
from hypothesis import strategies as st

JOINT_TYPES = ('revolute', 'continuous', 'prismatic', 'fixed')


def _triple(values):
    return ' '.join(f'{v:.17g}' for v in values)


def random_urdf(seed, n_links):
    """URDF XML of a random tree with ``n_links`` links below the root; the first joint always moves."""
    rng = np.random.default_rng(seed)
    parts = ['<robot name="random">']
    for i in range(n_links + 1):
        moments = rng.uniform(0.01, 0.1, 3)
        moments[2] = rng.uniform(abs(moments[0] - moments[1]), moments[0] + moments[1])  # triangle inequality
        R = np.linalg.qr(rng.normal(size=(3, 3)))[0]
        inertia = R @ np.diag(moments) @ R.T
        parts.append(
            f'<link name="l{i}"><inertial><origin xyz="{_triple(rng.uniform(-0.2, 0.2, 3))}" '
            f'rpy="{_triple(rng.uniform(-np.pi, np.pi, 3))}"/><mass value="{rng.uniform(0.2, 3):.17g}"/>'
            f'<inertia ixx="{inertia[0, 0]:.17g}" ixy="{inertia[0, 1]:.17g}" ixz="{inertia[0, 2]:.17g}" '
            f'iyy="{inertia[1, 1]:.17g}" iyz="{inertia[1, 2]:.17g}" izz="{inertia[2, 2]:.17g}"/>'
            '</inertial></link>')
    for i in range(1, n_links + 1):
        jtype = JOINT_TYPES[0] if i == 1 else JOINT_TYPES[rng.integers(len(JOINT_TYPES))]
        parent = rng.integers(i)
        limit = '<limit lower="-2" upper="2" effort="100" velocity="5"/>' if jtype != 'fixed' else ''
        parts.append(
            f'<joint name="j{i}" type="{jtype}"><parent link="l{parent}"/><child link="l{i}"/>'
            f'<origin xyz="{_triple(rng.uniform(-0.5, 0.5, 3))}" rpy="{_triple(rng.uniform(-np.pi, np.pi, 3))}"/>'
            f'<axis xyz="{_triple(rng.normal(size=3))}"/>{limit}</joint>')
    parts.append('</robot>')
    return '\n'.join(parts)


random_trees = st.builds(random_urdf, seed=st.integers(0, 2**32 - 1), n_links=st.integers(1, 12))
