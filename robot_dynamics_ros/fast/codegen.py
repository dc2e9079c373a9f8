"""Per-robot generated code: RNEA, CRBA and ABA of one Model written out as straight-line Python, compiled with
numba (the customized symbolic Newton-Euler idea: Khalil & Kleinfinger; Featherstone RBDA Sec. 10.1).

The recursions below are the same as in ``algorithms`` (equation references there), run once here at code
generation time on symbols: the tree structure, joint types, axes, and the constant tree transforms and
inertias become literals, products with a zero constant are dropped and constant sums are folded. Each
generated function takes only (q, qd, x, out), with the default gravity baked in (other gravity vectors and
external forces go through the table kernels). The source is written once to the user's cache directory,
named by its own hash, and imported from there so that numba's on-disk cache holds the machine code.
"""
import hashlib
import importlib.util
import os
import subprocess
import sys
import tempfile
import threading
import warnings

import numpy as np

from ..algorithms.rnea import spatial_gravity
from ..model.model import REVOLUTE
from .packing import E_TREE, FIRST_MOMENT, IBAR, MASS, R_TREE, _axis_index, packed


class _Code:
    """Straight-line code with constant folding. A value is a float (a literal) or a str (a local name).
    A sum is a list of products, a product a tuple of values."""

    def __init__(self):
        self.lines = []
        self.count = 0

    def let(self, products):
        """The value of sum(products): a literal when every product is constant, an existing name when the sum
        is one name, else a new local assigned here."""
        constant, terms = 0.0, []
        for product in products:
            coefficient, names = 1.0, []
            for factor in product:
                if isinstance(factor, str):
                    names.append(factor)
                else:
                    coefficient *= factor
            if coefficient == 0.0:
                continue
            if not names:
                constant += coefficient
            else:
                terms.append((coefficient, '*'.join(names)))
        if not terms:
            return constant
        if len(terms) == 1 and terms[0][0] == 1.0 and constant == 0.0:
            return terms[0][1]
        text = ''
        for coefficient, names in terms:
            sign = '-' if coefficient < 0.0 else '+'
            magnitude = abs(coefficient)
            text += f' {sign} ' + (names if magnitude == 1.0 else f'{magnitude!r}*{names}')
        if constant != 0.0:
            text += f' + {constant!r}'
        return self.assign(text[3:] if text.startswith(' + ') else '-' + text[3:])

    def assign(self, expression):
        name = f't{self.count}'
        self.count += 1
        self.lines.append(f'{name} = {expression}')
        return name

    def store(self, target, value):
        self.lines.append(f'{target} = {value!r}' if isinstance(value, float) else f'{target} = {value}')


class _Symbolic:
    """The model's recursions on symbols, emitting code into ``code``."""

    def __init__(self, model, code):
        self.model, self.code = model, code
        self.S = [[float(s) for s in row] for row in model.motion_subspace]
        table = packed(model).table
        self.E_tree = [row[E_TREE].reshape(3, 3) for row in table]
        self.r_tree = [row[R_TREE] for row in table]
        self.rigid = [(float(row[MASS]), [float(x) for x in row[FIRST_MOMENT]],
                       [[float(x) for x in row[IBAR][3 * k:3 * k + 3]] for k in range(3)]) for row in table]

    def parent_transform(self, i, q):
        """Xup_i = X_J(q_i) X_tree,i as (E, r): E = R(q)^T E_tree, r = r_tree (+ E_tree^T a q if prismatic)."""
        code, model = self.code, self.model
        E_tree, r_tree, axis = self.E_tree[i], self.r_tree[i], [float(a) for a in model.axis[i]]
        if model.joint_type[i] != REVOLUTE:
            E = [[float(e) for e in row] for row in E_tree]
            r = [code.let([(r_tree[k],)] + [(E_tree[j, k] * axis[j], q) for j in range(3)]) for k in range(3)]
            return E, r
        c, s = code.assign(f'np.cos({q})'), code.assign(f'np.sin({q})')
        k = _axis_index(model.axis[i])
        if k >= 0:   # about +-e_k: row k of R^T is e_k, rows k1, k2 turn by the angle +-q
            k1, k2, sign = (k + 1) % 3, (k + 2) % 3, axis[k]
            RT = [[(0.0,)] * 3 for _ in range(3)]
            RT[k][k], RT[k1][k1], RT[k2][k2] = (1.0,), (c,), (c,)
            RT[k1][k2], RT[k2][k1] = (sign, s), (-sign, s)
        else:        # R^T = c 1 - s [a]x + (1 - c) a a^T (Rodrigues, transposed)
            one_minus_c = code.let([(1.0,), (-1.0, c)])
            a_cross = [[0.0, -axis[2], axis[1]], [axis[2], 0.0, -axis[0]], [-axis[1], axis[0], 0.0]]
            RT = [[(code.let([(float(row == col), c), (-a_cross[row][col], s),
                              (axis[row] * axis[col], one_minus_c)]),) for col in range(3)] for row in range(3)]
        E = [[code.let([RT[row][j] + (E_tree[j, col],) for j in range(3)]) for col in range(3)] for row in range(3)]
        return E, [float(x) for x in r_tree]

    def transform_motion(self, X, m, extra=()):
        """X m (+ extra sums): angular E w, linear E (v - r x w)."""
        E, r = X
        w = m[:3]
        u = [self.code.let([(m[3 + k],), (-1.0, r[(k + 1) % 3], w[(k + 2) % 3]), (r[(k + 2) % 3], w[(k + 1) % 3])])
             for k in range(3)]
        out = [[(E[row][j], w[j]) for j in range(3)] for row in range(3)]
        out += [[(E[row][j], u[j]) for j in range(3)] for row in range(3)]
        return [self.code.let(out[k] + list(extra[k] if extra else [])) for k in range(6)]

    def add_transposed_force(self, X, f, onto):
        """onto + X^T f: force E^T f_lin, moment E^T n + r x (E^T f_lin)."""
        E, r = X
        code = self.code
        force = [code.let([(E[j][col], f[3 + j]) for j in range(3)]) for col in range(3)]
        moment = [[(E[j][col], f[j]) for j in range(3)] + [(r[(col + 1) % 3], force[(col + 2) % 3]),
                                                            (-1.0, r[(col + 2) % 3], force[(col + 1) % 3])]
                  for col in range(3)]
        return [code.let([(onto[k],)] + moment[k]) for k in range(3)] + \
            [code.let([(onto[3 + k],), (force[k],)]) for k in range(3)]

    @staticmethod
    def cross_motion(v, m):
        """v x m as six sums."""
        return [[(v[1], m[2]), (-1.0, v[2], m[1])], [(v[2], m[0]), (-1.0, v[0], m[2])],
                [(v[0], m[1]), (-1.0, v[1], m[0])],
                [(v[1], m[5]), (-1.0, v[2], m[4]), (v[4], m[2]), (-1.0, v[5], m[1])],
                [(v[2], m[3]), (-1.0, v[0], m[5]), (v[5], m[0]), (-1.0, v[3], m[2])],
                [(v[0], m[4]), (-1.0, v[1], m[3]), (v[3], m[1]), (-1.0, v[4], m[0])]]

    @staticmethod
    def cross_force(v, f):
        """v x* f as six sums."""
        return [[(v[1], f[2]), (-1.0, v[2], f[1]), (v[4], f[5]), (-1.0, v[5], f[4])],
                [(v[2], f[0]), (-1.0, v[0], f[2]), (v[5], f[3]), (-1.0, v[3], f[5])],
                [(v[0], f[1]), (-1.0, v[1], f[0]), (v[3], f[4]), (-1.0, v[4], f[3])],
                [(v[1], f[5]), (-1.0, v[2], f[4])], [(v[2], f[3]), (-1.0, v[0], f[5])],
                [(v[0], f[4]), (-1.0, v[1], f[3])]]

    @staticmethod
    def rigid_times(rigid, m):
        """I m = [Ibar w + h x v_lin; mass v_lin - h x w] as six sums, I = (mass, h, Ibar)."""
        mass, h, Ibar = rigid
        w, lin = m[:3], m[3:]
        k1, k2 = (1, 2, 0), (2, 0, 1)
        angular = [[(Ibar[k][j], w[j]) for j in range(3)] + [(h[k1[k]], lin[k2[k]]), (-1.0, h[k2[k]], lin[k1[k]])]
                   for k in range(3)]
        return angular + [[(mass, lin[k]), (-1.0, h[k1[k]], w[k2[k]]), (h[k2[k]], w[k1[k]])] for k in range(3)]

    def joint_motion(self, i, x):
        return [self.code.let([(self.S[i][k], x)]) for k in range(6)]

    def project(self, i, f):
        return self.code.let([(self.S[i][k], f[k]) for k in range(6)])

    def rnea(self):
        """tau = rnea(q, qd, qdd) into out (Featherstone Table 5.1)."""
        code, n, parent = self.code, self.model.nv, self.model.parent
        a0 = [float(x) for x in spatial_gravity(None)]
        X, v, a, f = [None] * n, [None] * n, [None] * n, [None] * n
        for i in range(n):   # scatter, base to tips
            p = parent[i]
            X[i] = self.parent_transform(i, f'q[{i}]')
            vJ = self.joint_motion(i, f'qd[{i}]')
            v[i] = self.transform_motion(X[i], v[p], [[(x,)] for x in vJ]) if p >= 0 else vJ   # v = X v_p + S qd
            cross = self.cross_motion(v[i], vJ)
            a[i] = self.transform_motion(X[i], a[p] if p >= 0 else a0,                      # a = X a_p + S qdd
                                         [cross[k] + [(self.S[i][k], f'x[{i}]')] for k in range(6)])  # + v x S qd
            Iv = [code.let(row) for row in self.rigid_times(self.rigid[i], v[i])]
            f[i] = [code.let(Ia + vIv) for Ia, vIv in zip(self.rigid_times(self.rigid[i], a[i]),   # f = I a + v x* I v
                                                          self.cross_force(v[i], Iv))]
        for i in reversed(range(n)):   # gather, tips to base
            code.store(f'out[{i}]', self.project(i, f[i]))                                 # tau = S^T f
            if parent[i] >= 0:
                f[parent[i]] = self.add_transposed_force(X[i], f[i], f[parent[i]])          # f_p += X^T f

    def rotate(self, Y, E, symmetric):
        """E^T Y E for a 3x3 Y (only the upper triangle computed when Y is symmetric)."""
        let = self.code.let
        T = [[let([(Y[row][j], E[j][col]) for j in range(3)]) for col in range(3)] for row in range(3)]
        out = [[None] * 3 for _ in range(3)]
        for row in range(3):
            for col in range(row if symmetric else 0, 3):
                out[row][col] = let([(E[j][row], T[j][col]) for j in range(3)])
                if symmetric:
                    out[col][row] = out[row][col]
        return out

    def add_transformed_rigid_inertia(self, X, rigid, onto):
        """onto + X^T I X for rigid-body inertias (mass, h, Ibar) (RBDA eq. 2.66): mass adds, h_p += b,
        Ibar_p += E^T Ibar E + (r.a + r.b) 1 - a r^T - r b^T with a = E^T h, b = a + mass r."""
        (E, r), (mass, h, Ibar), (mass_p, h_p, Ibar_p) = X, rigid, onto
        let = self.code.let
        a = [let([(E[j][k], h[j]) for j in range(3)]) for k in range(3)]
        b = [let([(a[k],), (mass, r[k])]) for k in range(3)]
        ra_rb = let([(r[k], a[k]) for k in range(3)] + [(r[k], b[k]) for k in range(3)])
        rotated = self.rotate(Ibar, E, symmetric=True)
        Ibar_new = [[None] * 3 for _ in range(3)]
        for row in range(3):
            for col in range(row, 3):
                Ibar_new[row][col] = Ibar_new[col][row] = let(
                    [(Ibar_p[row][col],), (rotated[row][col],), (-1.0, a[row], r[col]), (-1.0, r[row], b[col])]
                    + ([(ra_rb,)] if row == col else []))
        return mass_p + mass, [let([(h_p[k],), (b[k],)]) for k in range(3)], Ibar_new

    def crba(self):
        """M(q) into out (Saha eqs. 7-8)."""
        code, n, parent = self.code, self.model.nv, self.model.parent
        X = [self.parent_transform(i, f'q[{i}]') for i in range(n)]
        Ic = list(self.rigid)
        for i in reversed(range(n)):   # composite inertias, tips to base (Saha eq. 7)
            if parent[i] >= 0:
                Ic[parent[i]] = self.add_transformed_rigid_inertia(X[i], Ic[i], Ic[parent[i]])
        visited = np.zeros((n, n), dtype=bool)
        for i in range(n):             # M_ij = S_i^T Ic_i X_{i->j} S_j on the path to the base (Saha eq. 8)
            F = [code.let(row) for row in self.rigid_times(Ic[i], self.S[i])]
            code.store(f'out[{i}, {i}]', self.project(i, F))
            visited[i, i] = True
            j = i
            while parent[j] >= 0:
                F = self.add_transposed_force(X[j], F, [0.0] * 6)
                j = parent[j]
                M_ij = self.project(j, F)
                code.store(f'out[{i}, {j}]', M_ij)
                code.store(f'out[{j}, {i}]', M_ij)
                visited[i, j] = visited[j, i] = True
        for i, j in zip(*np.nonzero(~visited)):
            code.store(f'out[{i}, {j}]', 0.0)

    def add_congruence(self, X, IA, onto):
        """onto + X^T IA X for a symmetric 6x6 IA = [[A, B], [B^T, C]]: with A', B', C' the blocks rotated by E,
        [[A' + [r]x B'^T - B'' [r]x, B''], [B''^T, C']], B'' = B' + [r]x C'."""
        (E, r), let = X, self.code.let
        A = self.rotate([row[:3] for row in IA[:3]], E, symmetric=True)
        B = self.rotate([row[3:] for row in IA[:3]], E, symmetric=False)
        C = self.rotate([row[3:] for row in IA[3:]], E, symmetric=True)
        B2 = [[let([(B[k][col],), (r[(k + 1) % 3], C[(k + 2) % 3][col]), (-1.0, r[(k + 2) % 3], C[(k + 1) % 3][col])])
               for col in range(3)] for k in range(3)]
        out = [list(row) for row in onto]
        for row in range(3):
            r1, r2 = (row + 1) % 3, (row + 2) % 3
            for col in range(3):
                c1, c2 = (col + 1) % 3, (col + 2) % 3
                if col >= row:
                    out[row][col] = out[col][row] = let(
                        [(onto[row][col],), (A[row][col],), (r[r1], B[col][r2]), (-1.0, r[r2], B[col][r1]),
                         (r[c1], B2[row][c2]), (-1.0, r[c2], B2[row][c1])])
                    out[3 + row][3 + col] = out[3 + col][3 + row] = let([(onto[3 + row][3 + col],), (C[row][col],)])
                out[row][3 + col] = out[3 + col][row] = let([(onto[row][3 + col],), (B2[row][col],)])
        return out

    def aba(self):
        """qdd = aba(q, qd, tau) into out (Featherstone Table 7.1)."""
        code, n, parent, let = self.code, self.model.nv, self.model.parent, self.code.let
        a0 = [float(x) for x in spatial_gravity(None)]
        X, v, c, pA, IA = [None] * n, [None] * n, [None] * n, [None] * n, [None] * n
        for i in range(n):   # scatter, base to tips: velocities, velocity-product accelerations, bias forces
            p = parent[i]
            X[i] = self.parent_transform(i, f'q[{i}]')
            vJ = self.joint_motion(i, f'qd[{i}]')
            v[i] = self.transform_motion(X[i], v[p], [[(x,)] for x in vJ]) if p >= 0 else vJ   # v = X v_p + S qd
            c[i] = [let(row) for row in self.cross_motion(v[i], vJ)]                         # c = v x S qd
            Iv = [let(row) for row in self.rigid_times(self.rigid[i], v[i])]
            pA[i] = [let(row) for row in self.cross_force(v[i], Iv)]                         # pA = v x* I v
            IA[i] = [[float(x) for x in row] for row in self.model.inertia[i]]
        U, inv_D, u = [None] * n, [None] * n, [None] * n
        for i in reversed(range(n)):   # gather, tips to base: articulated-body inertias (Jain Lemma 7)
            U[i] = [let([(IA[i][row][k], self.S[i][k]) for k in range(6)]) for row in range(6)]   # U = IA S
            D = self.project(i, U[i])                                                      # D = S^T U
            if isinstance(D, float) and D <= 0.0:
                # A constant zero pivot (a massless subtree): the generated aba raises, as the table kernel
                # does (fast.aba names the joint); the code after the raise is never reached.
                code.lines.append("raise ZeroDivisionError('zero articulated inertia')")
                inv_D[i] = 0.0
            else:
                inv_D[i] = 1.0 / D if isinstance(D, float) else code.assign(f'1.0 / {D}')
            u[i] = let([(f'x[{i}]',)] + [(-self.S[i][k], pA[i][k]) for k in range(6)])        # u = tau - S^T pA
            p = parent[i]
            if p >= 0:
                Ia = [[None] * 6 for _ in range(6)]
                for row in range(6):                                                       # Ia = IA - U U^T / D
                    for col in range(row, 6):
                        Ia[row][col] = Ia[col][row] = let([(IA[i][row][col],), (-1.0, U[i][row], U[i][col], inv_D[i])])
                u_D = let([(u[i], inv_D[i])])
                pa = [let([(pA[i][row],), (U[i][row], u_D)] + [(Ia[row][col], c[i][col]) for col in range(6)])
                      for row in range(6)]                                                 # pa = pA + Ia c + U u / D
                IA[p] = self.add_congruence(X[i], Ia, IA[p])                               # IA_p += X^T Ia X
                pA[p] = self.add_transposed_force(X[i], pa, pA[p])                         # pA_p += X^T pa
        a = [None] * n
        for i in range(n):   # scatter, base to tips: accelerations
            p = parent[i]
            a_prime = self.transform_motion(X[i], a[p] if p >= 0 else a0, [[(x,)] for x in c[i]])  # a' = X a_p + c
            residual = let([(u[i],)] + [(-1.0, U[i][k], a_prime[k]) for k in range(6)])
            qdd = let([(residual, inv_D[i])])                                             # qdd = (u - U^T a') / D
            code.store(f'out[{i}]', qdd)
            a[i] = [let([(a_prime[k],), (self.S[i][k], qdd)]) for k in range(6)]           # a = a' + S qdd


HEADER = '''"""Generated by robot_dynamics_ros.fast.codegen: {algorithm} of {name!r} ({n} DOF). Do not edit."""
from numba import njit
import numpy as np

N = {n}
'''

VECTORS = '''

@njit('void(f8[::1], f8[::1], f8[::1], f8[::1])', cache=True)
def {algorithm}(q, qd, x, out):
    if q.shape[0] != N or qd.shape[0] != N or x.shape[0] != N or out.shape[0] != N:
        raise ValueError('{algorithm}: q, qd, {x}, out need length nv')
{body}


@njit('void(f8[:, ::1], f8[:, ::1], f8[:, ::1], f8[:, ::1])', cache=True)
def {algorithm}_batch(Q, QD, X, OUT):
    if QD.shape[0] != Q.shape[0] or X.shape[0] != Q.shape[0] or OUT.shape[0] != Q.shape[0]:
        raise ValueError('{algorithm}_batch: q, qd, {x}, out need the same number of states')
    for s in range(Q.shape[0]):
        {algorithm}(Q[s], QD[s], X[s], OUT[s])
'''

MATRIX = '''

@njit('void(f8[::1], f8[:, ::1])', cache=True)
def crba(q, out):
    if q.shape[0] != N or out.shape[0] != N or out.shape[1] != N:
        raise ValueError('crba: q needs length nv and out shape (nv, nv)')
{body}


@njit('void(f8[:, ::1], f8[:, :, ::1])', cache=True)
def crba_batch(Q, OUT):
    if OUT.shape[0] != Q.shape[0]:
        raise ValueError('crba_batch: out needs one (nv, nv) block per state')
    for s in range(Q.shape[0]):
        crba(Q[s], OUT[s])
'''


def module_source(model, algorithm):
    """The Python source of the generated module of ``algorithm`` ('rnea', 'crba' or 'aba') for ``model``."""
    code = _Code()
    getattr(_Symbolic(model, code), algorithm)()
    body = '\n'.join('    ' + line for line in code.lines)
    template = MATRIX if algorithm == 'crba' else VECTORS
    return HEADER.format(algorithm=algorithm, name=model.name, n=model.nv) + template.format(
        algorithm=algorithm, x='qdd' if algorithm == 'rnea' else 'tau', body=body)


def _cache_directory():
    base = os.environ.get('XDG_CACHE_HOME') or os.path.join(os.path.expanduser('~'), '.cache')
    directory = os.path.join(base, 'robot_dynamics_ros', 'generated')
    try:
        os.makedirs(directory, exist_ok=True)
    except OSError:  # no writable home: a private directory for this process (numba then compiles each time)
        directory = tempfile.mkdtemp(prefix='robot_dynamics_ros_')
    return directory


def _write(source):
    """The path of the generated module with this source, written once and named by its hash."""
    digest = hashlib.sha256(source.encode()).hexdigest()[:20]
    path = os.path.join(_cache_directory(), f'robot_{digest}.py')
    if not os.path.exists(path):
        with tempfile.NamedTemporaryFile('w', dir=os.path.dirname(path), suffix='.tmp', delete=False) as f:
            f.write(source)
        os.replace(f.name, path)   # atomic: processes generating the same robot at once see a whole file
    return path


def _import(path):
    """Import a generated module: this loads the machine code from numba's cache next to it, or compiles it
    (seconds) when that cache is cold."""
    name = 'robot_dynamics_ros_generated_' + os.path.basename(path)[len('robot_'):-len('.py')]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


class Generated:
    """The generated functions of one model: rnea, crba, aba (taking (q, qd, x, out), (q, out)) and their _batch
    versions over rows, from modules written to the cache directory and imported by ``load``."""

    def __init__(self, model):
        self.nv = model.nv
        self.matrix_shape = (model.nv, model.nv)
        self.paths = {algorithm: _write(module_source(model, algorithm)) for algorithm in ('rnea', 'crba', 'aba')}

    def load(self):
        for algorithm, path in self.paths.items():
            module = _import(path)
            setattr(self, algorithm, module.__dict__[algorithm])
            setattr(self, f'{algorithm}_batch', module.__dict__[f'{algorithm}_batch'])
        return self


MAX_DOF = 32   # compile time grows with the code: 10-40 s for 7 DOF, 2-4 min for 31 (cold cache, loaded machine)
HOT_CALLS = 100   # calls on the table kernels after which a model's code is compiled in the background
ENABLE = os.environ.get('ROBOT_DYNAMICS_ROS_CODEGEN', '1') != '0'   # '0': no automatic background compilation


def _check_size(model):
    if model.nv > MAX_DOF:
        raise ValueError(f"generated code is for models of at most {MAX_DOF} DOF (compile time); "
                         f"{model.name!r} has {model.nv}: the table kernels serve it")


def specialize(model):
    """Generate and compile per-robot code for ``model`` now (seconds on a cold disk cache, well under one
    when warm), so that its default-gravity rnea/crba/aba calls use it from now on."""
    _check_size(model)
    functions = model._cache['generated'] = Generated(model).load()
    return functions


def _compile_then_load(model):
    """The background tier-up: generate the modules, compile them in a separate process (numba's compiler
    would otherwise hold this process's GIL for seconds) into the on-disk cache, then load them here."""
    functions = Generated(model)
    script = 'import sys; from robot_dynamics_ros.fast.codegen import _import; [_import(p) for p in sys.argv[1:]]'
    compiler = subprocess.run([sys.executable, '-c', script, *functions.paths.values()], check=False,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if compiler.returncode != 0:   # the table kernels keep serving: the same results, slower per call
        warnings.warn(f"generated code for {model.name!r} did not compile: {compiler.stderr.strip()[-500:]}")
        return
    try:
        model._cache['generated'] = functions.load()   # loads the machine code from the disk cache
    except Exception as error:
        warnings.warn(f"generated code for {model.name!r} did not load ({error!r}); the table kernels serve it")


def specialize_in_background(model):
    """Start compiling ``model``'s generated code in the background (a thread waiting on a compiler process)
    and return the thread; calls switch to the code when it is loaded. Started at most once per model."""
    _check_size(model)
    thread = model._cache.get('compiling')
    if thread is None:
        thread = model._cache['compiling'] = threading.Thread(target=_compile_then_load, args=(model,), daemon=True,
                                                              name=f'robot_dynamics_ros codegen {model.name}')
        thread.start()
    return thread


def wait_for_generated(model, timeout=None):
    """Wait until ``model``'s background compilation (if one was started) is over; True when its generated code
    serves the default calls."""
    thread = model._cache.get('compiling')
    if thread is not None:
        thread.join(timeout)
    return model._cache.get('generated') is not None


def count_call(model):
    """Count a default call that the table kernels served: the HOT_CALLS-th starts ``specialize_in_background``."""
    cache = model._cache
    calls = cache['calls'] = cache.get('calls', 0) + 1
    if calls == HOT_CALLS and ENABLE and model.nv <= MAX_DOF:
        specialize_in_background(model)
