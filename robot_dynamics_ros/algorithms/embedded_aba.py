"""Articulated-body forward dynamics with coupled (URDF mimic) joints, O(n), by constraint embedding (Jain, seed
002, closing section and its refs [5], [6]).

The bodies a mimic group couples (its master's and its mimic joints' bodies, and every body on their paths up to
their nearest common ancestor) are aggregated into one node of the tree; overlapping aggregates merge; every other
body is a node of its own. A node of r bodies has a 6r stacked velocity V = Phi V_parent + H qd_node + (velocity
terms), where Phi (6r x 6) carries the parent body's motion into each body, and H (6r x k), the aggregate's hinge
map, has one column per independent coordinate the node holds (a master's column moves its mimic joints by their
multipliers: the columns of the tree's joint map G). Featherstone's three passes (RBDA Table 7.1, Jain Alg. 6.1)
then run on the nodes unchanged, with the pivot D = H^T IA H a k x k block (Jain Lemma 7 with a block D):
the cost is O(n) for bounded aggregates (a gripper's hand and fingers: one aggregate of a few bodies), never a
solve of the whole mass matrix.
"""
import numpy as np

from ..errors import SingularMassMatrixError
from ..model.joints import NV
from .packing import spatial_gravity


def cross_motion(v, m):
    """v x m for motion vectors [angular; linear]."""
    (w0, w1, w2, u0, u1, u2), (a0, a1, a2, b0, b1, b2) = v.tolist(), m.tolist()
    return np.array([w1 * a2 - w2 * a1, w2 * a0 - w0 * a2, w0 * a1 - w1 * a0,
                     w1 * b2 - w2 * b1 + u1 * a2 - u2 * a1, w2 * b0 - w0 * b2 + u2 * a0 - u0 * a2,
                     w0 * b1 - w1 * b0 + u0 * a1 - u1 * a0])


def cross_force(v, f):
    """v x* f for a motion vector v and a force [moment; force] f."""
    (w0, w1, w2, u0, u1, u2), (n0, n1, n2, f0, f1, f2) = v.tolist(), f.tolist()
    return np.array([w1 * n2 - w2 * n1 + u1 * f2 - u2 * f1, w2 * n0 - w0 * n2 + u2 * f0 - u0 * f2,
                     w0 * n1 - w1 * n0 + u0 * f1 - u1 * f0, w1 * f2 - w2 * f1, w2 * f0 - w0 * f2, w0 * f1 - w1 * f0])


def aggregates(model):
    """[sorted bodies of each node], nodes in tree order (every node's parent body has a smaller index)."""
    tree = model.tree
    body = {name: i for i, name in enumerate(tree.body_joint_names)}
    groups = {}
    for joint, (master, _, _) in model.mimic.items():
        groups.setdefault(master, {body[master]}).add(body[joint])
    sets = [_spanned(tree.parent, members) for members in groups.values()]
    merged = True
    while merged:   # merge overlapping aggregates until none overlap
        merged = False
        for i in range(len(sets)):
            for j in range(i + 1, len(sets)):
                if sets[i] & sets[j]:
                    sets[i] |= sets.pop(j)
                    merged = True
                    break
            if merged:
                break
    sets = [_spanned(tree.parent, aggregate) for aggregate in sets]   # a merged aggregate hangs from one body
    in_aggregate = set().union(*sets) if sets else set()
    nodes = [sorted(s) for s in sets] + [[b] for b in range(tree.nb) if b not in in_aggregate]
    return sorted(nodes, key=lambda bodies: bodies[0])


def _spanned(parent, members):
    """The members and every body on their paths up to (not including) their nearest common ancestor that is not
    a member: the smallest set holding them that hangs from one body."""
    paths = [_path_to_root(parent, b) for b in members]
    common = set.intersection(*(set(path) for path in paths))
    return {b for path in paths for b in path if b not in common} | set(members)


def _path_to_root(parent, b):
    path = []
    while b >= 0:
        path.append(b)
        b = parent[b]
    return path


class Embedding:
    """The constant part of the embedded tree of a model with coupled joints: per node, its bodies, the body it
    hangs from, its reduced coordinates and each body's rows of G restricted to them."""

    def __init__(self, model):
        tree, G = model.tree, model.coupling.G
        self.nodes = aggregates(model)
        self.node_parent = [int(tree.parent[bodies[0]]) for bodies in self.nodes]
        for bodies, p in zip(self.nodes, self.node_parent):
            assert all(tree.parent[b] in bodies or tree.parent[b] == p for b in bodies), bodies
        self.columns, self.body_G = [], []
        for bodies in self.nodes:
            rows = [range(tree.idx_v[b], tree.idx_v[b] + NV[tree.joint_type[b]]) for b in bodies]
            columns = np.flatnonzero(np.any(G[[r for rs in rows for r in rs]] != 0.0, axis=0))
            self.columns.append(columns)
            self.body_G.append([G[list(rs)][:, columns] for rs in rows])
        self.S = [tree.motion_subspace[tree.idx_v[b]:tree.idx_v[b] + NV[tree.joint_type[b]]].T for b in range(tree.nb)]


def embedding(model):
    """``Embedding`` of ``model``, built once and cached on it."""
    cache = model._cache
    if 'embedding' not in cache:
        cache['embedding'] = Embedding(model)
    return cache['embedding']


def embedded_aba(model, q, qd, tau, gravity=None, f_ext=None):
    """qdd = M^-1 (tau - h + sum J^T f_ext) on the reduced coordinates of a model with coupled mimic joints
    (arguments as ``aba``; f_ext: (nb, 6) on every body of the tree)."""
    tree, coupling, E = model.tree, model.coupling, embedding(model)
    q_tree, qd_tree = coupling.tree_positions(q), coupling.tree_velocities(qd)
    tau = np.asarray(tau, dtype=float)
    Xup = tree.parent_transforms(q_tree)
    nb = tree.nb
    v, c, pA, IA = np.zeros((nb, 6)), np.zeros((nb, 6)), np.zeros((nb, 6)), np.array(tree.inertia, dtype=float)
    # Scatter, base to tips (pass 1): body velocities, velocity-product accelerations, bias forces.
    for b in range(nb):
        p = tree.parent[b]
        vJ = E.S[b] @ qd_tree[tree.idx_v[b]:tree.idx_v[b] + NV[tree.joint_type[b]]]
        v[b] = (Xup[b] @ v[p] if p >= 0 else 0.0) + vJ
        c[b] = cross_motion(v[b], vJ)
        pA[b] = cross_force(v[b], tree.inertia[b] @ v[b])
        if f_ext is not None:
            pA[b] -= f_ext[b]
    frames = node_maps(tree, E, Xup, c)
    # Gather, tips to base (pass 2): articulated inertias of the nodes, pivots D = H^T IA H (k x k blocks).
    factors = [None] * len(E.nodes)
    for n in reversed(range(len(E.nodes))):
        bodies, (Phi, H, C) = E.nodes[n], frames[n]
        IA_n, pA_n = _stacked_inertia(IA, bodies), np.concatenate([pA[b] for b in bodies])
        U = IA_n @ H
        D = H.T @ U
        D_inv = _positive_definite_inverse(D)
        if D_inv is None:
            raise _singular(model, E.columns[n], D)
        u = tau[E.columns[n]] - H.T @ pA_n
        factors[n] = (U, D_inv, u)
        p = E.node_parent[n]
        if p >= 0:
            Ia = IA_n - U @ D_inv @ U.T
            pa = pA_n + Ia @ C + U @ (D_inv @ u)
            IA[p] += Phi.T @ Ia @ Phi
            pA[p] += Phi.T @ pa
    # Scatter, base to tips (pass 3): accelerations.
    a, qdd, a0 = np.zeros((nb, 6)), np.empty(model.nv), spatial_gravity(gravity)
    for n, bodies in enumerate(E.nodes):
        (Phi, H, C), (U, D_inv, u), p = frames[n], factors[n], E.node_parent[n]
        a_prime = Phi @ (a[p] if p >= 0 else a0) + C
        qdd_n = D_inv @ (u - U.T @ a_prime)
        qdd[E.columns[n]] = qdd_n
        a[bodies] = (a_prime + H @ qdd_n).reshape(len(bodies), 6)
    return qdd


def node_maps(tree, E, Xup, c):
    """Each node's (Phi, H, C), stacked over its bodies: V = Phi V_parent + H qd_node (+ velocity terms), and
    a' = Phi a_parent + C the acceleration before the node's own qdd (c: each body's v x S qd)."""
    frames = []
    for bodies, body_G in zip(E.nodes, E.body_G):
        local = {b: k for k, b in enumerate(bodies)}
        r, k = len(bodies), body_G[0].shape[1]
        Phi, H, C = np.zeros((6 * r, 6)), np.zeros((6 * r, k)), np.zeros(6 * r)
        for l, b in enumerate(bodies):
            rows, up = slice(6 * l, 6 * l + 6), local.get(tree.parent[b])
            if up is None:
                Phi[rows], H[rows], C[rows] = Xup[b], E.S[b] @ body_G[l], c[b]
            else:
                above = slice(6 * up, 6 * up + 6)
                Phi[rows] = Xup[b] @ Phi[above]
                H[rows] = Xup[b] @ H[above] + E.S[b] @ body_G[l]
                C[rows] = Xup[b] @ C[above] + c[b]
        frames.append((Phi, H, C))
    return frames


def _stacked_inertia(IA, bodies):
    """The block-diagonal 6r x 6r inertia of a node's bodies."""
    r = len(bodies)
    stacked = np.zeros((6 * r, 6 * r))
    for l, b in enumerate(bodies):
        stacked[6 * l:6 * l + 6, 6 * l:6 * l + 6] = IA[b]
    return stacked


def embedded_pivots(model, q):
    """(nv,) the pivots of M(q) = U D U^T on the embedded tree: per node, the L D L^T pivots of its block
    D = H^T IA H, at its reduced coordinates (all positive exactly when M(q) is positive definite)."""
    tree, E = model.tree, embedding(model)
    Xup = tree.parent_transforms(model.coupling.tree_positions(q))
    frames, IA, pivots = node_maps(tree, E, Xup, np.zeros((tree.nb, 6))), np.array(tree.inertia, dtype=float), \
        np.empty(model.nv)
    for n in reversed(range(len(E.nodes))):
        (Phi, H, _), IA_n = frames[n], _stacked_inertia(IA, E.nodes[n])
        U = IA_n @ H
        D = H.T @ U
        block = D.copy()
        for j in range(len(block)):   # L D L^T of the block, without square roots
            pivots[E.columns[n][j]] = block[j, j]
            if block[j, j] != 0.0:
                block[j + 1:, j + 1:] -= np.outer(block[j + 1:, j], block[j, j + 1:]) / block[j, j]
        p = E.node_parent[n]
        if p >= 0:
            IA[p] += Phi.T @ (IA_n - U @ np.linalg.pinv(D) @ U.T) @ Phi
    return pivots


def _positive_definite_inverse(D):
    """D^-1 of a small symmetric pivot block, or None unless it is positive definite (a scalar without LAPACK)."""
    if D.shape == (1, 1):
        return 1.0 / D if D[0, 0] > 0.0 else None
    try:
        L_inv = np.linalg.inv(np.linalg.cholesky(D))
    except np.linalg.LinAlgError:
        return None
    return L_inv.T @ L_inv


def _singular(model, columns, D):
    """The error for a pivot block that is not positive definite: name the node's first independent joint."""
    names = [name for name in model.joint_names if model.joint_v_index[model.joint_names.index(name)] in columns]
    joint = names[0] if names else model.body_joint_names[0]
    return SingularMassMatrixError(
        f"forward dynamics is undefined: the articulated inertia about joint {joint!r} (with the joints coupled to "
        f"it) is not positive definite (eigenvalues {np.linalg.eigvalsh(D).tolist()}); check the inertias it moves")
