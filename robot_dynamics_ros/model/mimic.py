"""URDF mimic joints as coupled coordinates: q_m = multiplier q_master + offset (and qd_m, qdd_m with the multiplier).

``couple(tree, mimic)`` turns the tree model, in which every joint is a degree of freedom, into the reduced model:
the same bodies and frames, nq and nv counting the independent joints only. Its ``coupling`` maps reduced
coordinates to the tree's: q_tree = Gq q + q_offset, qd_tree = G qd, and forces back: tau = G^T tau_tree
(virtual work). G is the tree's joint map with one column per independent coordinate: a master's column has a
1 at the master and the multiplier at each of its mimic joints, the constraint-embedding hinge map of Jain
(seed 002, refs [5], [6]).
"""
from dataclasses import dataclass

import numpy as np

from ..errors import URDFError
from .joints import NQ, NV


def resolve_masters(mimic, names):
    """{mimic joint: (root master, multiplier, offset)} with chains of mimic joints composed
    (q_a = m1 q_b + o1 and q_b = m2 q_c + o2 give q_a = m1 m2 q_c + m1 o2 + o1); URDFError for a cycle."""
    resolved = {}
    for joint in mimic:
        master, multiplier, offset, seen = joint, 1.0, 0.0, [joint]
        while master in mimic:
            parent, m, o = mimic[master]
            multiplier, offset, master = multiplier * m, multiplier * o + offset, parent
            if master in seen:
                raise URDFError(f"<mimic> joints form a cycle: {' -> '.join(seen + [master])}")
            seen.append(master)
        resolved[joint] = (master, multiplier, offset)
    return resolved


@dataclass(frozen=True, eq=False)
class Coupling:
    """How the reduced coordinates of a model with mimic joints drive every joint of its tree (``Model.tree``)."""
    tree_joints: dict       # the tree's per-joint fields (joint_names, limits, damping, friction, mimic as written)
    G: np.ndarray           # (tree.nv, nv) qd_tree = G qd
    Gq: np.ndarray          # (tree.nq, nq) q_tree = Gq q + q_offset
    q_offset: np.ndarray    # (tree.nq,)
    body_q: np.ndarray      # (nb,) first reduced q index of each body's joint (a mimic joint's: its master's)
    body_v: np.ndarray      # (nb,) the same in qd

    def tree_positions(self, q):
        """Every joint's coordinates (the tree's q) from the reduced q."""
        return self.Gq @ np.asarray(q, dtype=float) + self.q_offset

    def tree_velocities(self, qd):
        """Every joint's velocity (or acceleration) from the reduced ones."""
        return self.G @ np.asarray(qd, dtype=float)

    def reduce_forces(self, tau_tree):
        """The generalized forces on the reduced coordinates of forces on every joint: G^T tau_tree."""
        return self.G.T @ tau_tree


def unsupported(model):
    """The ValueError of a computation that does not take coupled mimic joints yet."""
    return ValueError(f"model {model.name!r} couples mimic joints ({', '.join(sorted(model.mimic))}): this computation "
                      "does not support them yet (the legged controller, and the packed tables of the compiled "
                      "kernels, which need a tree: pack model.tree; the dynamics algorithms, the fast path, "
                      "identification, the computed-torque and Cartesian controllers and the simulator do); "
                      "load_urdf(..., mimic=False) (the nodes' mimic:=false, the commands' --no-mimic) makes them "
                      "independent joints")


def couple(tree, mimic):
    """The reduced Model of ``tree`` with the resolved ``mimic`` relations (``resolve_masters``) as coupled
    coordinates. Position, velocity and effort limits are the master's (as MoveIt and Pinocchio take them: public
    URDFs often give a mimic joint limits its relation cannot meet, PR2's grippers a single point); damping adds
    multiplier^2 b_m and Coulomb friction |multiplier| f_m of each mimic joint to its master's (their virtual
    work)."""
    from dataclasses import replace

    body = {name: i for i, name in enumerate(tree.body_joint_names)}
    independent = [b for b in range(tree.nb) if tree.body_joint_names[b] not in mimic]
    body_q, body_v = np.zeros(tree.nb, dtype=int), np.zeros(tree.nb, dtype=int)
    q_of, v_of = 0, 0
    for b in independent:
        body_q[b], body_v[b] = q_of, v_of
        q_of, v_of = q_of + NQ[tree.joint_type[b]], v_of + NV[tree.joint_type[b]]
    nq, nv = q_of, v_of
    tree_q, tree_v = tree.idx_q, tree.idx_v
    G, Gq, q_offset = np.zeros((tree.nv, nv)), np.zeros((tree.nq, nq)), np.zeros(tree.nq)
    for b in independent:
        for k in range(NQ[tree.joint_type[b]]):
            Gq[tree_q[b] + k, body_q[b] + k] = 1.0
        for k in range(NV[tree.joint_type[b]]):
            G[tree_v[b] + k, body_v[b] + k] = 1.0
    columns = [tree_q[b] + k for b in independent for k in range(NQ[tree.joint_type[b]])]
    lower, upper = tree.lower[columns].copy(), tree.upper[columns].copy()
    rows = [tree_v[b] + k for b in independent for k in range(NV[tree.joint_type[b]])]
    effort, velocity = tree.effort_limit[rows].copy(), tree.velocity_limit[rows].copy()
    damping, friction = tree.damping[rows].copy(), tree.friction[rows].copy()
    for joint, (master, multiplier, offset) in mimic.items():
        b, k = body[joint], body.get(master)
        if k is None or NV[tree.joint_type[k]] != 1:
            raise URDFError(f"joint {joint!r} <mimic> resolves to joint {master!r}, which is not a 1-DOF joint")
        body_q[b], body_v[b] = body_q[k], body_v[k]
        Gq[tree_q[b], body_q[k]], q_offset[tree_q[b]] = multiplier, offset
        G[tree_v[b], body_v[k]] = multiplier
        damping[body_v[k]] += multiplier ** 2 * tree.damping[tree_v[b]]
        friction[body_v[k]] += abs(multiplier) * tree.friction[tree_v[b]]
    tree_joints = {name: getattr(tree, name) for name in ('joint_names', 'lower', 'upper', 'effort_limit',
                                                          'velocity_limit', 'damping', 'friction', 'mimic')}
    coupling = Coupling(tree_joints, G, Gq, q_offset, body_q, body_v)
    for array in (G, Gq, q_offset, body_q, body_v):
        array.flags.writeable = False
    return replace(tree, joint_names=tuple(n for n in tree.joint_names if n not in mimic), lower=lower, upper=upper,
                   effort_limit=effort, velocity_limit=velocity, damping=damping, friction=friction,
                   mimic=dict(mimic), coupling=coupling)
