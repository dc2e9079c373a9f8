"""Articulated-body forward dynamics with coupled (URDF mimic) joints, O(n), by constraint embedding (Jain, seed
002, closing section and its refs [5], [6]).

The bodies a mimic group couples (its master's and its mimic joints' bodies, and every body on their paths up to
their nearest common ancestor) are aggregated into one node of the tree; overlapping aggregates merge; every other
row of the tree's packed model (``packing``: one row per velocity coordinate) is a node of its own. A node of r
rows has the stacked motion V = Phi V_attach + H qd_node (+ velocity terms), Phi (6r x 6) carrying the motion of
the row it hangs from into each of its rows, and H (6r x k), the aggregate's hinge map, one column per independent
coordinate it holds (a master's column moves its mimic joints by their multipliers: the columns of G).
Featherstone's three passes (RBDA Table 7.1, Jain Alg. 6.1) then run on the nodes unchanged, with the pivot
D = H^T IA H a k x k block (Jain Lemma 7 with a block pivot), never forming a node's 6r x 6r inertia:
Phi^T (IA - U D^-1 U^T) Phi = sum_l Phi_l^T IA_l Phi_l - (U^T Phi)^T D^-1 (U^T Phi). The cost is O(n) for
bounded aggregates (Panda's hand: one node of its two fingers, one column). ``embedded_aba_kernel`` is the one
recursion (``backends.py``): ``aba`` runs it as plain Python, ``fast.aba`` compiled.
"""
import numpy as np

from ..errors import SingularMassMatrixError
from ..model.joints import NV
from .backends import njit
from .cholesky import cholesky_factor
from .packing import ABA, MASS, PARENT, SPATIAL_INERTIA, packed
from .spatial_kernels import cross_force_add, cross_motion_add, inertia_times, joint_motion, keep_incoming_velocity, \
    parent_transform, transform_motion

X_, V_, C_, PA_, IA_, VJ_, IV_, VIN_ = ABA['X'], ABA['v'], ABA['c'], ABA['pA'], ABA['IA'], ABA['vJ'], ABA['Iv'], \
    ABA['vin']
SI0 = SPATIAL_INERTIA.start


def aggregates(model):
    """[sorted bodies] of each aggregate: the bodies each mimic group couples, merged where they overlap."""
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
    return [sorted(_spanned(tree.parent, aggregate)) for aggregate in sets]   # a merged one hangs from one body


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
    """The constant part of the embedded tree, on the rows of the tree's packed model: each node's rows
    (``node_rows[node_start[n]:node_start[n + 1]]``), the row it hangs from (-1: the root), its reduced coordinates
    (``node_cols`` likewise), and for each row its node, the node-local index of its reduced coordinate (-1 when the
    multiplier is 0) and the multiplier (G's entry)."""

    def __init__(self, model):
        tree, G = model.tree, model.coupling.G
        self.pack = packed(tree)
        parent = self.pack.table[:, PARENT].astype(np.int64)
        rows_of = [list(range(tree.idx_v[b], tree.idx_v[b] + NV[tree.joint_type[b]])) for b in range(tree.nb)]
        grouped = [[r for b in bodies for r in rows_of[b]] for bodies in aggregates(model)]
        alone = set(range(tree.nv)) - {r for rows in grouped for r in rows}
        nodes = sorted(grouped + [[r] for r in alone])
        self.nodes = nodes
        self.node_start = np.cumsum([0] + [len(rows) for rows in nodes]).astype(np.int64)
        self.node_rows = np.array([r for rows in nodes for r in rows], dtype=np.int64)
        self.node_attach = np.array([parent[rows[0]] for rows in nodes], dtype=np.int64)
        columns = [sorted({int(np.flatnonzero(G[r])[0]) for r in rows if np.any(G[r])}) for rows in nodes]
        self.columns = columns
        self.node_col_start = np.cumsum([0] + [len(c) for c in columns]).astype(np.int64)
        self.node_cols = np.array([c for cs in columns for c in cs], dtype=np.int64)
        self.row_node, self.row_col = np.zeros(tree.nv, dtype=np.int64), np.full(tree.nv, -1, dtype=np.int64)
        self.row_mult = np.zeros(tree.nv)
        for n, rows in enumerate(nodes):
            assert all(parent[r] in rows or parent[r] == self.node_attach[n] for r in rows), rows
            for r in rows:
                self.row_node[r] = n
                if np.any(G[r]):
                    column = int(np.flatnonzero(G[r])[0])
                    self.row_col[r], self.row_mult[r] = columns[n].index(column), G[r, column]
        self.width = max(len(c) for c in columns)   # the widest node's coordinates, k

    def buffers(self):
        """Work arrays of one call: per row Phi (6 columns), H and U (k columns), C; per node D, D^-1, u."""
        n, k, nodes = len(self.row_node), self.width, len(self.nodes)
        return (self.pack.work(), np.zeros((n, 6, 6)), np.zeros((n, k, 6)), np.zeros((n, k, 6)), np.zeros((n, 6)),
                np.zeros((n, 6)), np.zeros((nodes, k, k)), np.zeros((nodes, k, k)), np.zeros((nodes, k)),
                np.zeros((k, 6)), np.zeros(k), np.zeros(max(6, k)))


def embedding(model):
    """``Embedding`` of ``model``, built once and cached on it."""
    cache = model._cache
    if 'embedding' not in cache:
        cache['embedding'] = Embedding(model)
    return cache['embedding']


@njit()
def small_inverse(D, k, out):
    """out[:k, :k] = D^-1 of a symmetric positive definite k x k block, by Cholesky; False (out unset) unless D is
    positive definite."""
    L = np.zeros((k, k))
    if not cholesky_factor(D, np.arange(k), L, k, 0.0, 0.0):
        return False
    Linv = np.zeros((k, k))   # L^-1, lower triangular, by forward substitution
    for j in range(k):
        Linv[j, j] = 1.0 / L[j, j]
        for i in range(j + 1, k):
            s = 0.0
            for m in range(j, i):
                s -= L[i, m] * Linv[m, j]
            Linv[i, j] = s / L[i, i]
    for i in range(k):   # D^-1 = L^-T L^-1
        for j in range(k):
            s = 0.0
            for m in range(max(i, j), k):
                s += Linv[m, i] * Linv[m, j]
            out[i, j] = s
    return True


@njit()
def embedded_aba_kernel(P, node_start, node_rows, node_attach, node_col_start, node_cols, row_node, row_col,
                        row_mult, W, Phi, H, U, C, a, D, D_inv, u, UPhi, w, scratch, a0, f_ext, q, qd, tau, qdd):
    """qdd = M^-1 (tau - h + sum J^T f_ext) on the reduced coordinates: P is the tree's packed table; q, qd the tree's
    coordinates (G qd); tau and qdd reduced; f_ext one force per row. Returns -1, or the first node (tips to base)
    whose pivot block D is not positive definite (its D^-1 is then left zero and the passes go on)."""
    n = P.shape[0]
    X = W[:, X_:X_ + 12]
    failed = -1
    # Scatter, base to tips (pass 1): velocities, velocity-product accelerations c, bias forces pA (as ``aba``).
    for i in range(n):
        p = int(P[i, PARENT])
        v, vJ, c, pA = W[i, V_:V_ + 6], W[i, VJ_:VJ_ + 6], W[i, C_:C_ + 6], W[i, PA_:PA_ + 6]
        parent_transform(P, i, q, X[i])
        joint_motion(P, i, qd[i], vJ)
        if p >= 0:
            transform_motion(X[i], W[p, V_:V_ + 6], v)
        else:
            v[:] = 0.0
        keep_incoming_velocity(P, W, i, p, VIN_, v)
        for k in range(6):
            v[k] += vJ[k]
            c[k] = 0.0
            pA[k] = -f_ext[i, k]
        cross_motion_add(W[i, VIN_:VIN_ + 6], vJ, c)                   # c_i = v_i x S_i qd_i
        inertia_times(P, i, MASS, v, W[i, IV_:IV_ + 6])
        cross_force_add(v, W[i, IV_:IV_ + 6], pA)                      # pA_i = v_i x* I_i v_i - f_ext,i
        W[i, IA_:IA_ + 36] = P[i, SI0:SI0 + 36]
    # Each row's Phi, H, C within its node (rows in tree order: a row's parent in the node comes first).
    for i in range(n):
        p, node = int(P[i, PARENT]), row_node[i]
        k = node_col_start[node + 1] - node_col_start[node]
        inside = p >= 0 and row_node[p] == node
        for col in range(6):
            if inside:
                transform_motion(X[i], Phi[p, col], Phi[i, col])
            else:
                scratch[:] = 0.0
                scratch[col] = 1.0
                transform_motion(X[i], scratch, Phi[i, col])
        for j in range(k):
            if inside:
                transform_motion(X[i], H[p, j], H[i, j])
            else:
                H[i, j, :] = 0.0
        if row_col[i] >= 0:
            joint_motion(P, i, row_mult[i], scratch)
            for m in range(6):
                H[i, row_col[i], m] += scratch[m]                      # + S_i G_i
        if inside:
            transform_motion(X[i], C[p], C[i])
        else:
            C[i, :] = 0.0
        for m in range(6):
            C[i, m] += W[i, C_ + m]
    # Gather, tips to base (pass 2): pivot blocks D = H^T IA H and the articulated inertia handed to the attach row.
    for node in range(node_start.shape[0] - 2, -1, -1):
        first, last = node_start[node], node_start[node + 1]
        k, c0 = node_col_start[node + 1] - node_col_start[node], node_col_start[node]
        for r in range(first, last):
            i = node_rows[r]
            for j in range(k):                                         # U = IA H, row by row
                for m in range(6):
                    s = 0.0
                    for l in range(6):
                        s += W[i, IA_ + 6 * m + l] * H[i, j, l]
                    U[i, j, m] = s
        for j1 in range(k):
            u[node, j1] = tau[node_cols[c0 + j1]]
            for j2 in range(k):
                D[node, j1, j2] = 0.0
            for r in range(first, last):
                i = node_rows[r]
                for m in range(6):
                    u[node, j1] -= H[i, j1, m] * W[i, PA_ + m]            # u = tau - H^T pA
                    for j2 in range(k):
                        D[node, j1, j2] += H[i, j1, m] * U[i, j2, m]
        if not small_inverse(D[node], k, D_inv[node]):
            failed = node if failed < 0 else failed
            D_inv[node, :k, :k] = 0.0
        p = node_attach[node]
        if p < 0:
            continue
        for j in range(k):                                             # U^T Phi and w = D^-1 (u - U^T C)
            scratch[j] = u[node, j]
            for col in range(6):
                UPhi[j, col] = 0.0
            for r in range(first, last):
                i = node_rows[r]
                for m in range(6):
                    scratch[j] -= U[i, j, m] * C[i, m]
                    for col in range(6):
                        UPhi[j, col] += U[i, j, m] * Phi[i, col, m]
        for j1 in range(k):
            w[j1] = 0.0
            for j2 in range(k):
                w[j1] += D_inv[node, j1, j2] * scratch[j2]
        for r in range(first, last):
            i = node_rows[r]
            for c1 in range(6):                                        # IA_p += Phi_l^T IA_l Phi_l
                for c2 in range(6):
                    s = 0.0
                    for m in range(6):
                        t = 0.0
                        for l in range(6):
                            t += W[i, IA_ + 6 * m + l] * Phi[i, c2, l]
                        s += Phi[i, c1, m] * t
                    W[p, IA_ + 6 * c1 + c2] += s
            for c1 in range(6):                                        # pA_p += Phi_l^T (pA_l + IA_l C_l)
                s = 0.0
                for m in range(6):
                    t = W[i, PA_ + m]
                    for l in range(6):
                        t += W[i, IA_ + 6 * m + l] * C[i, l]
                    s += Phi[i, c1, m] * t
                W[p, PA_ + c1] += s
        for c1 in range(6):                                            # - (U^T Phi)^T D^-1 (U^T Phi); + (U^T Phi)^T w
            for c2 in range(6):
                s = 0.0
                for j1 in range(k):
                    for j2 in range(k):
                        s += UPhi[j1, c1] * D_inv[node, j1, j2] * UPhi[j2, c2]
                W[p, IA_ + 6 * c1 + c2] -= s
            for j in range(k):
                W[p, PA_ + c1] += UPhi[j, c1] * w[j]
    # Scatter, base to tips (pass 3): a' = Phi a_attach + C, qdd_node = D^-1 (u - U^T a'), a = a' + H qdd_node.
    for node in range(node_start.shape[0] - 1):
        first, last = node_start[node], node_start[node + 1]
        k, c0, p = node_col_start[node + 1] - node_col_start[node], node_col_start[node], node_attach[node]
        for r in range(first, last):
            i = node_rows[r]
            for m in range(6):
                s = C[i, m]
                for col in range(6):
                    s += Phi[i, col, m] * (a[p, col] if p >= 0 else a0[col])
                a[i, m] = s
        for j in range(k):
            scratch[j] = u[node, j]
            for r in range(first, last):
                i = node_rows[r]
                for m in range(6):
                    scratch[j] -= U[i, j, m] * a[i, m]
        for j1 in range(k):
            s = 0.0
            for j2 in range(k):
                s += D_inv[node, j1, j2] * scratch[j2]
            qdd[node_cols[c0 + j1]] = s
        for r in range(first, last):
            i = node_rows[r]
            for j in range(k):
                for m in range(6):
                    a[i, m] += H[i, j, m] * qdd[node_cols[c0 + j]]
    return failed


def run_embedded(model, q, qd, tau, gravity=None, f_ext=None, kernel=embedded_aba_kernel):
    """(qdd, D, the failing node or -1): ``embedded_aba_kernel`` (or its compilation) on the reduced state."""
    E, coupling = embedding(model), model.coupling
    pack = E.pack
    buffers = E.buffers()
    qdd = np.empty(model.nv)
    failed = kernel(pack.table, E.node_start, E.node_rows, E.node_attach, E.node_col_start, E.node_cols, E.row_node,
                    E.row_col, E.row_mult, *buffers, pack.base_acceleration(gravity),
                    np.require(pack.external_force(f_ext), dtype=float, requirements=['C', 'W']),
                    coupling.tree_positions(q), coupling.tree_velocities(qd), np.require(tau, dtype=float), qdd)
    return qdd, buffers[6], failed


def embedded_aba(model, q, qd, tau, gravity=None, f_ext=None, kernel=embedded_aba_kernel):
    """qdd = M^-1 (tau - h + sum J^T f_ext) on the reduced coordinates of a model with coupled mimic joints
    (arguments as ``aba``; f_ext: (nb, 6) on every body of the tree); SingularMassMatrixError naming the joint."""
    qdd, D, failed = run_embedded(model, q, qd, tau, gravity, f_ext, kernel)
    if failed >= 0:
        raise _singular(model, failed, D[failed])
    return qdd


def embedded_pivots(model, q):
    """(nv,) the pivots of M(q) = U D U^T on the embedded tree: per node, the L D L^T pivots of its block
    D = H^T IA H, at its reduced coordinates (all positive exactly when M(q) is positive definite)."""
    E = embedding(model)
    _, D, _ = run_embedded(model, q, np.zeros(model.nv), np.zeros(model.nv))
    pivots = np.empty(model.nv)
    for node, columns in enumerate(E.columns):
        block = D[node, :len(columns), :len(columns)].copy()
        for j, column in enumerate(columns):   # L D L^T of the block, without square roots
            pivots[column] = block[j, j]
            if block[j, j] != 0.0:
                block[j + 1:, j + 1:] -= np.outer(block[j + 1:, j], block[j, j + 1:]) / block[j, j]
    return pivots


def _singular(model, node, D):
    """The error for a pivot block that is not positive definite: name the node's first independent joint."""
    columns = embedding(model).columns[node]
    names = [name for name, v in zip(model.joint_names, model.joint_v_index) if v in columns]
    joint = names[0] if names else model.body_joint_names[0]
    k = len(columns)
    return SingularMassMatrixError(
        f"forward dynamics is undefined: the articulated inertia about joint {joint!r} (with the joints coupled to "
        f"it) is not positive definite (eigenvalues {np.linalg.eigvalsh(D[:k, :k]).tolist()}); check the inertias "
        "it moves")
