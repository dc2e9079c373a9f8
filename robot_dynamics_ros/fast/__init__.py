"""Fast path: RNEA, CRBA, ABA, U D U^T and the regressor of ``algorithms`` compiled with numba, same signatures
and results, plus ``out=`` buffers and batched versions over arrays of states.

Each recursion is written once, in ``algorithms/`` (``algorithms/backends.py``): ``algorithms.rnea`` runs it as
plain Python, this module runs numba's compilation of the same source on the packed model (the table kernels),
compiled ahead for C-contiguous float64 arrays and cached on disk under a hash of the sources; the first call of
each function imports numba and loads (or, once, compiles) its kernel. Other inputs (lists, integer or strided
arrays) are converted and retried. Without numba every function runs the kernels as plain Python (``BACKEND``).

Calls with the default gravity and no external forces run per-robot generated code (``codegen.py``: the kernels
traced on symbols, unrolled, constants baked in) where it is compiled ahead in the disk cache
(``code_cache.py``; ``robot-dynamics compile URDF`` or ``specialize(model)``). Which code serves a model is decided
once, at its first call, and never changes by itself: no compiler runs behind the caller's back.
``path`` says which code serves a call. Every function checks argument shapes with ``model.model.check_state``,
so a wrong length gives the same error as the reference.

A model with coupled mimic joints (``model.coupling``) runs RNEA, CRBA and the regressor through its tree's code
(G^T tau_tree, G^T M_tree G, G^T Y_tree), their batches likewise, ABA as the compiled O(n) constraint-embedding
kernel (``algorithms.embedded_aba``; ``aba_batch`` calls it per state) and U D U^T as the compiled dense
factorisation of M (``algorithms.dense_udut``, O(n^3)); no generated code of its own.
"""
import functools
import importlib
import importlib.util
import os

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..algorithms.backends import KERNEL_FORCES as FORCES
from ..algorithms.backends import KERNEL_STATES as STATES
from ..algorithms.backends import compiled
from ..algorithms.dense_udut import coupled_udut, dense_udut
from ..algorithms.embedded_aba import embedded_aba
from ..algorithms.packing import as_float_arrays, packed
from ..algorithms.regressor import extra_flags, body_columns, joint_columns
from ..algorithms.spatial_kernels import unit_quaternions
from ..algorithms.udut import innovations_factors
from ..errors import SingularMassMatrixError
from ..model.configuration import QUATERNION_TOLERANCE, check_quaternion_rows, check_quaternions
from ..model.model import Model, check_state, check_states
from . import code_cache
from .codegen import ALGORITHMS, MAX_DOF

BACKEND = 'numba' if importlib.util.find_spec('numba') else 'python'
ENABLE = os.environ.get('ROBOT_DYNAMICS_ROS_CODEGEN', '1') != '0'   # '0': never load generated code by itself
NONE = {}   # no generated code


@functools.cache
def _kernel(name):
    """The kernel of ``name`` ('rnea', 'rnea_batch', ...) as plain Python, imported on first use."""
    if name.endswith('_batch'):
        return getattr(importlib.import_module(f'{__name__}.batch_kernels'), f'{name}_kernel')
    return getattr(importlib.import_module(f'robot_dynamics_ros.algorithms.{name}'), f'{name}_kernel')


@functools.cache
def _compiled_kernel(name):
    """numba's compilation of ``_kernel(name)`` (importing numba and loading machine code takes about a second)."""
    return compiled(_kernel(name))


def _generated(model):
    """{name: function} of the generated code that serves ``model``'s default calls: decided at its first call (what
    the disk cache holds compiled then), and kept for the life of the model unless ``specialize`` adds to it."""
    loaded = model._cache.get('generated')
    if loaded is None:
        usable = ENABLE and BACKEND == 'numba' and model.nv <= MAX_DOF and model.coupling is None
        loaded = model._cache['generated'] = code_cache.load_compiled(model, ALGORITHMS) if usable else NONE
    return loaded


def specialize(model: Model, algorithms: tuple[str, ...] = ALGORITHMS, progress=None) -> None:
    """Compile ``model``'s generated code for ``algorithms`` now, in the foreground, into the disk cache (seconds
    each when cold, well under one when already there); its default calls use it from now on, and new instances of
    the same model (in this and later processes) from their first call. ``progress(algorithm, seconds)``."""
    if BACKEND != 'numba':
        raise ImportError("generated code is compiled with numba", name='numba')
    if model.coupling is not None:   # mimic joints: RNEA and CRBA run the tree's code
        specialize(model.tree, tuple(a for a in algorithms if a != 'aba'), progress)
        return
    model._cache['generated'] = {**_generated(model), **code_cache.compile(model, algorithms, progress)}
    model._cache.pop('functions', None)   # bound again with the new code at the next call


class ModelFunctions:
    """RNEA, CRBA and ABA of one model with the code that serves it bound once (``functions(model)``; the
    module-level functions call through it), as ``rnea(q, qd, qdd, gravity=None, f_ext=None, out=None)``,
    ``crba(q, out=None)``, ``aba(q, qd, tau, gravity=None, f_ext=None, out=None)``: the signatures of the
    module-level functions without the model. A default call (default gravity, no external forces) goes straight
    to the generated code, which checks the shapes itself; anything it refuses (a list, a wrong shape, a
    quaternion off unit norm, a zero pivot) and every other call take ``_run``, which converts, checks and names
    the error. Each function is a closure over the model's code (no attribute lookups per call). In a hot loop,
    ``f = functions(model).rnea`` called with ``out=`` skips the allocation of the result."""

    def __init__(self, model: Model):
        generated, n = _generated(model), model.nv
        refused = (TypeError, ValueError, ZeroDivisionError)

        def rnea(q, qd, qdd, gravity=None, f_ext=None, out=None, _generated=generated.get('rnea'), _empty=np.empty):
            if out is None:
                out = _empty(n)
            if _generated is not None and gravity is None and f_ext is None:
                try:
                    _generated(q, qd, qdd, out)
                    return out
                except refused:
                    pass
            _run(model, 'rnea', (q, qd, qdd, out), gravity, f_ext)
            return out

        def crba(q, out=None, _generated=generated.get('crba'), _empty=np.empty, _shape=(n, n)):
            if out is None:
                out = _empty(_shape)
            if _generated is not None:
                try:
                    _generated(q, out)
                    return out
                except refused:
                    pass
            _run(model, 'crba', (q, out))
            return out

        def aba(q, qd, tau, gravity=None, f_ext=None, out=None, _generated=generated.get('aba'), _empty=np.empty):
            if out is None:
                out = _empty(n)
            if _generated is not None and gravity is None and f_ext is None:
                try:
                    _generated(q, qd, tau, out)
                    return out
                except refused:
                    pass
            _run(model, 'aba', (q, qd, tau, out), gravity, f_ext)
            return out
        self.rnea, self.crba, self.aba = rnea, crba, aba
        _warm_up(generated, model)


def _warm_up(generated, model):
    """Call the generated RNEA, CRBA and ABA once at the neutral state: a process's first call of compiled code has
    numba's dispatcher resolve its argument types (30-100 us for CRBA's 2-D output), which would otherwise fall on
    the first real call, a node's first update."""
    q, zero, n = model.neutral(), np.zeros(model.nv), model.nv
    calls = {'rnea': (q, zero, zero, np.empty(n)), 'crba': (q, np.empty((n, n))), 'aba': (q, zero, zero, np.empty(n))}
    for name, arguments in calls.items():
        if name in generated:
            try:
                generated[name](*arguments)
            except ZeroDivisionError:   # a singular model's ABA: its first real call names the joint
                pass


class CoupledFunctions:
    """``ModelFunctions`` of a model with coupled mimic joints: RNEA and CRBA through the tree's functions, ABA the
    reference constraint-embedding recursion (same signatures)."""

    def __init__(self, model: Model):
        c, tree = model.coupling, functions(model.tree)

        def result(value, out):
            if out is None:
                return value
            out[...] = value
            return out

        def rnea(q, qd, qdd, gravity=None, f_ext=None, out=None):
            check_state(model, q=q, qd=qd, qdd=qdd, f_ext=f_ext)
            tau = tree.rnea(c.tree_positions(q), c.tree_velocities(qd), c.tree_velocities(qdd), gravity, f_ext)
            return result(c.reduce_forces(tau), out)

        def crba(q, out=None):
            check_state(model, q=q)
            return result(c.G.T @ tree.crba(c.tree_positions(q)) @ c.G, out)

        def aba(q, qd, tau, gravity=None, f_ext=None, out=None):
            check_state(model, q=q, qd=qd, tau=tau, f_ext=f_ext)
            check_quaternions(model, q)
            kernel = _compiled_kernel('embedded_aba') if BACKEND == 'numba' else _kernel('embedded_aba')
            return result(embedded_aba(model, q, qd, tau, gravity, f_ext, kernel), out)
        self.rnea, self.crba, self.aba = rnea, crba, aba


def functions(model: Model) -> ModelFunctions:
    """The ``ModelFunctions`` of ``model``, bound at its first call (see ``_generated``)."""
    bound = model._cache.get('functions')
    if bound is None:
        bound = model._cache['functions'] = (ModelFunctions if model.coupling is None else CoupledFunctions)(model)
    return bound


NODE_ALGORITHMS = ('rnea', 'crba', 'aba')   # what the nodes call (not the regressor: minutes of compile at 31 DOF)


def choose_code(model: Model) -> str:
    """Decide now which code serves ``model`` (as its first call would) and say which, for a node's log line."""
    if BACKEND == 'python':
        return 'the kernels as plain Python (numba is not installed)'
    if model.coupling is not None:
        return (f"mimic joints coupled: RNEA and CRBA through the tree's {choose_code(model.tree)}; ABA by constraint "
                "embedding (table kernel)")
    if all(name in _generated(model) for name in NODE_ALGORITHMS):
        return 'generated per-robot code (compiled ahead, loaded from the disk cache)'
    if not ENABLE or model.nv > MAX_DOF:
        return 'table kernels (' + ('ROBOT_DYNAMICS_ROS_CODEGEN=0' if not ENABLE else f'more than {MAX_DOF} DOF') + ')'
    return "table kernels (per-robot code is not compiled: 'robot-dynamics compile URDF' builds it ahead)"


def path(model: Model, gravity: ArrayLike | None = None, f_ext: ArrayLike | None = None,
         algorithm: str = 'rnea') -> str:
    """Which code serves ``algorithm`` (rnea, crba, aba, regressor) of ``model`` with these arguments: 'generated'
    (per-robot code, see ``codegen.py``), 'table' (the compiled kernels on the packed model) or 'python' (the same
    kernels as plain Python, without numba)."""
    if BACKEND == 'python':
        return 'python'
    if model.coupling is not None:
        return path(model.tree, gravity, f_ext, algorithm) if algorithm in ('rnea', 'crba', 'regressor') else 'table'

    return 'generated' if gravity is None and f_ext is None and algorithm in _generated(model) else 'table'


def _run(model, name, arguments, gravity=None, f_ext=None):
    """Algorithm ``name`` (a _batch name: on each row of the states) on ``arguments`` (its states, then the
    arrays that receive the results), on the one backend that serves the call: the model's generated code
    (default gravity, no external forces, where compiled ahead), else its compiled kernel on the packed model
    (``kernel(table, work, a0, f_ext, *arguments)``, the forces it takes), else (without numba) the same kernel as
    plain Python. Arguments the compiled code refuses (TypeError: not C-contiguous float64, ValueError: a wrong
    shape) get the shared shape check, then the call is retried on converted copies (a wrong-type out= stays an
    error); plain Python gets them checked and converted first. A zero pivot (numba's ZeroDivisionError, NumPy's
    FloatingPointError) raises the error naming the joint. A quaternion in q off unit norm is a ValueError naming
    its joint (the generated code checks the norms itself, compiled, and refuses q; the error is made here)."""
    function = _generated(model).get(name) if gravity is None and f_ext is None else None
    table, plain = (), False   # a table kernel's arguments before the states (none for generated code); plain Python
    if function is None:
        algorithm, pack, plain = name.removesuffix('_batch'), packed(model), BACKEND == 'python'
        if model.quaternions and not name.endswith('_batch'):   # (batches: checked by _run_batch)
            _check_quaternions(model, pack, arguments[0], plain)
        if not plain:
            function, work = _compiled_kernel(name), pack.data.work
        else:   # plain Python lets other threads run in between: a work array of its own
            function, work = _kernel(name), pack.work()
        if f_ext is not None and not pack.rows_are_bodies and not name.endswith('_batch'):
            check_state(model, f_ext=f_ext)   # before it is spread over the rows (batches: checked by _run_batch)
        f_rows = pack.external_force(f_ext)   # one force per row of the packed model
        if name.endswith('_batch'):   # one (nv, 6) block for all states, or one per state
            f_rows = np.reshape(np.asarray(f_rows, dtype=float), (-1,) + np.shape(f_rows)[-2:])
        table = (pack.table, work, pack.base_acceleration(gravity), f_rows)[:2 + FORCES[algorithm]]
        arguments = (*table, *arguments)
    try:
        if plain:
            if not name.endswith('_batch'):   # (batches: checked and converted by _run_batch)
                arguments = _checked(model, name, len(table), arguments, f_ext)
            with np.errstate(divide='raise'):
                function(*arguments)
            return
        try:
            function(*arguments)
        except (TypeError, ValueError):
            if name.endswith('_batch'):   # checked and converted by _run_batch: an out= it refuses
                raise
            function(*_checked(model, name, len(table), arguments, f_ext))
    except (ZeroDivisionError, FloatingPointError):   # a zero pivot: the kernels divide by D without a check
        raise _singular(model, arguments[len(table)]) from None


@functools.cache
def _unit_quaternions():
    return compiled(unit_quaternions)


def _check_quaternions(model, pack, q, plain):
    """``check_quaternions`` for the table kernels: a compiled test first (the error, naming the joint, only when it
    fails or cannot take q)."""
    if not plain:
        try:
            if _unit_quaternions()(pack.table, q, QUATERNION_TOLERANCE):
                return
        except TypeError:   # not a C-contiguous float64 array
            pass
    check_quaternions(model, q)


def _checked(model, name, start, arguments, f_ext):
    """``arguments`` with the states (from ``start`` on) through the shared shape check, and everything before the
    outputs as C-contiguous float64 arrays."""
    inputs = start + len(STATES[name])
    check_state(model, **dict(zip(STATES[name], arguments[start:inputs])), f_ext=f_ext)
    check_quaternions(model, arguments[start])
    return (*as_float_arrays(*arguments[:inputs]), *arguments[inputs:])


def _run_batch(model, name, states, out, gravity=None, f_ext=None):
    """``_run`` for batches: the states are checked and converted first (rows of each array are states)."""
    check_states(model, **dict(zip(STATES[name], states)), f_ext=f_ext)
    if model.quaternions:
        check_quaternion_rows(model, states[0])
    _run(model, f'{name}_batch', (*as_float_arrays(*states), out), gravity, f_ext)
    return out


def _singular(model, states):
    """The named error for a zero pivot D in a kernel: the reference factorisation of the states finds the joint."""
    for q in np.reshape(np.asarray(states, dtype=float), (-1, model.nq)):
        innovations_factors(model, q)  # raises SingularMassMatrixError naming the joint
    return SingularMassMatrixError("forward dynamics is undefined: a zero articulated inertia at this configuration")


def rnea(model: Model, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike, gravity: ArrayLike | None = None,
         f_ext: ArrayLike | None = None, out: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """As ``algorithms.rnea``; ``out``: optional (nv,) float64 array that receives tau."""
    return (model._cache.get('functions') or functions(model)).rnea(q, qd, qdd, gravity, f_ext, out)


def crba(model: Model, q: ArrayLike, out: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """As ``algorithms.crba``; ``out``: optional (nv, nv) float64 array that receives M(q)."""
    return (model._cache.get('functions') or functions(model)).crba(q, out)


def aba(model: Model, q: ArrayLike, qd: ArrayLike, tau: ArrayLike, gravity: ArrayLike | None = None,
        f_ext: ArrayLike | None = None, out: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """As ``algorithms.aba``; ``out``: optional (nv,) float64 array that receives qdd."""
    return (model._cache.get('functions') or functions(model)).aba(q, qd, tau, gravity, f_ext, out)


def gravity_torques(model: Model, q: ArrayLike, gravity: ArrayLike | None = None) -> NDArray[np.float64]:
    """g(q): the joint forces that hold the robot still."""
    zero = np.zeros(model.nv)
    return rnea(model, q, zero, zero, gravity)


def bias_torques(model: Model, q: ArrayLike, qd: ArrayLike, gravity: ArrayLike | None = None) -> NDArray[np.float64]:
    """h(q, qd) = C(q, qd) qd + g(q): Coriolis, centrifugal and gravity forces."""
    return rnea(model, q, qd, np.zeros(model.nv), gravity)


def rnea_batch(model: Model, Q: ArrayLike, QD: ArrayLike, QDD: ArrayLike, gravity: ArrayLike | None = None,
               f_ext: ArrayLike | None = None, out: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """rnea on each row of the (N, nv) arrays Q, QD, QDD, returns (N, nv); f_ext: (nv, 6) or (N, nv, 6)."""
    out = np.empty((len(Q), model.nv)) if out is None else out
    if model.coupling is not None:   # the tree's batch at the coupled motion, G^T tau_tree
        c = model.coupling
        check_states(model, q=Q, qd=QD, qdd=QDD, f_ext=f_ext)
        Q, QD, QDD = (np.asarray(x, dtype=float) for x in (Q, QD, QDD))
        tau = rnea_batch(model.tree, Q @ c.Gq.T + c.q_offset, QD @ c.G.T, QDD @ c.G.T, gravity, f_ext)
        out[...] = tau @ c.G
        return out
    return _run_batch(model, 'rnea', (Q, QD, QDD), out, gravity, f_ext)


def crba_batch(model: Model, Q: ArrayLike, out: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """crba on each row of the (N, nv) array Q, returns (N, nv, nv)."""
    out = np.empty((len(Q), model.nv, model.nv)) if out is None else out
    if model.coupling is not None:   # G^T M_tree G
        c = model.coupling
        check_states(model, q=Q)
        out[...] = c.G.T @ crba_batch(model.tree, np.asarray(Q, dtype=float) @ c.Gq.T + c.q_offset) @ c.G
        return out
    return _run_batch(model, 'crba', (Q,), out)


def aba_batch(model: Model, Q: ArrayLike, QD: ArrayLike, TAU: ArrayLike, gravity: ArrayLike | None = None,
              f_ext: ArrayLike | None = None, out: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """aba on each row of the (N, nv) arrays Q, QD, TAU, returns (N, nv); f_ext: (nv, 6) or (N, nv, 6)."""
    out = np.empty((len(Q), model.nv)) if out is None else out
    if model.coupling is not None:   # the compiled constraint-embedding ABA, state by state
        check_states(model, q=Q, qd=QD, tau=TAU, f_ext=f_ext)
        shared = f_ext is None or np.ndim(f_ext) == 2
        for s, state in enumerate(zip(Q, QD, TAU)):
            aba(model, *state, gravity, f_ext if shared else f_ext[s], out=out[s])
        return out
    return _run_batch(model, 'aba', (Q, QD, TAU), out, gravity, f_ext)


def udut(model: Model, q: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """As ``algorithms.udut``: (U, D) with M(q) = U diag(D) U^T."""
    if model.coupling is not None:   # the dense M's, O(n^3) (``algorithms.dense_udut``)
        return coupled_udut(model, crba(model, q), _compiled_dense_udut() if BACKEND == 'numba' else dense_udut)
    U, D = np.empty((model.nv, model.nv)), np.empty(model.nv)
    _run(model, 'udut', (q, U, D))
    return U, D


@functools.cache
def _compiled_dense_udut():
    return compiled(dense_udut)


def _regressor(model, states, gravity, flags, batch):
    """The regressor of one state or (``batch``) of rows of states: the body columns from the kernel, then the
    per-joint columns as ``algorithms.regressor``. With coupled mimic joints: the tree's body columns at the coupled
    motion, G^T Y_tree."""
    n = model.nv
    (check_states if batch else check_state)(model, **dict(zip(STATES['regressor'], states)))
    if model.coupling is not None:
        c = model.coupling
        q, qd, qdd = (np.asarray(x, dtype=float) for x in states)
        Y_tree = _regressor(model.tree, (q @ c.Gq.T + c.q_offset, qd @ c.G.T, qdd @ c.G.T), gravity, [False] * 4, batch)
        Y = np.concatenate([c.G.T @ Y_tree, np.zeros(Y_tree.shape[:-2] + (n, sum(flags) * n))], axis=-1)
        return joint_columns(Y, flags, qd, qdd)
    Y = np.zeros(np.shape(states[1])[:-1] + (n, (10 + sum(flags)) * n))   # generated code writes the nonzeros only
    if batch:
        _run_batch(model, 'regressor', states, Y, gravity)
    else:
        _run(model, 'regressor', (*states, Y), gravity)
    return joint_columns(body_columns(packed(model), Y, flags), flags, np.asarray(states[1], dtype=float),
                         np.asarray(states[2], dtype=float))


def regressor(model: Model, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike, gravity: ArrayLike | None = None,
              rotor_inertia: bool = False, viscous: bool = False, coulomb: bool = False,
              offset: bool = False) -> NDArray[np.float64]:
    """As ``algorithms.regressor``: (nv, 10 nv + k nv) Y with tau = Y @ pi."""
    return _regressor(model, (q, qd, qdd), gravity, extra_flags(rotor_inertia, viscous, coulomb, offset), False)


def regressor_batch(model: Model, Q: ArrayLike, QD: ArrayLike, QDD: ArrayLike, gravity: ArrayLike | None = None,
                    rotor_inertia: bool = False, viscous: bool = False, coulomb: bool = False,
                    offset: bool = False) -> NDArray[np.float64]:
    """regressor on each row of the (N, nv) arrays Q, QD, QDD, returns (N, nv, 10 nv + k nv)."""
    return _regressor(model, (Q, QD, QDD), gravity, extra_flags(rotor_inertia, viscous, coulomb, offset), True)


__all__ = ['BACKEND', 'path', 'specialize', 'choose_code', 'functions', 'ModelFunctions', 'rnea', 'crba', 'aba', 'gravity_torques',
           'bias_torques', 'rnea_batch', 'crba_batch', 'aba_batch', 'udut', 'regressor', 'regressor_batch']
