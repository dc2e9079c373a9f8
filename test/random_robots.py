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


def _box_inertial(mass, size, com=(0.0, 0.0, 0.0)):
    a, b, c = size
    ixx, iyy, izz = (mass * (b * b + c * c) / 12, mass * (a * a + c * c) / 12, mass * (a * a + b * b) / 12)
    return (f'<inertial><origin xyz="{_triple(com)}"/><mass value="{mass}"/><inertia ixx="{ixx:.17g}" ixy="0" '
            f'ixz="0" iyy="{iyy:.17g}" iyz="0" izz="{izz:.17g}"/></inertial>')


def quadruped_urdf():
    """A 12-DOF quadruped-like tree (a trunk; four legs of hip abduction, hip and knee pitch), for a floating root."""
    links = [f'<link name="trunk">{_box_inertial(12.0, (0.5, 0.3, 0.15))}</link>']
    joints = []
    for leg, (x, y) in {'FL': (0.2, 0.1), 'FR': (0.2, -0.1), 'RL': (-0.2, 0.1), 'RR': (-0.2, -0.1)}.items():
        parent = 'trunk'
        for name, axis, origin, mass, size in (('hip', '1 0 0', (x, y, 0.0), 1.0, (0.08, 0.08, 0.08)),
                                               ('thigh', '0 1 0', (0.0, 0.08 if y > 0 else -0.08, 0.0), 1.0,
                                                (0.04, 0.04, 0.2)),
                                               ('calf', '0 1 0', (0.0, 0.0, -0.2), 0.2, (0.03, 0.03, 0.2))):
            child = f'{leg}_{name}'
            com = (0.0, 0.0, -0.1) if name != 'hip' else (0.0, 0.0, 0.0)
            links.append(f'<link name="{child}">{_box_inertial(mass, size, com)}</link>')
            joints.append(f'<joint name="{child}_joint" type="revolute"><parent link="{parent}"/><child link="{child}"/>'
                          f'<origin xyz="{_triple(origin)}"/><axis xyz="{axis}"/>'
                          '<limit lower="-3" upper="3" effort="40" velocity="20"/></joint>')
            parent = child
    return f'<robot name="quadruped12">{"".join(links)}{"".join(joints)}</robot>'
