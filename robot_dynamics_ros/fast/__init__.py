"""Fast path: RNEA, CRBA, ABA, U D U^T and the regressor of ``algorithms`` compiled with numba, same signatures
and results, plus ``out=`` buffers and batched versions over arrays of states.

Each recursion is written once, in ``algorithms/`` (``algorithms/backends.py``): ``algorithms.rnea`` runs it as
plain Python, this module runs numba's compilation of the same source on the packed model (the table kernels),
compiled ahead for C-contiguous float64 arrays and cached on disk; the first call of each function imports numba
and loads (or, once, compiles) its kernel. Other inputs (lists, integer or strided arrays) are converted and
retried. Without numba every function runs the kernels as plain Python (``BACKEND`` says which one runs).
numba's on-disk cache checks only the source file of each entry kernel: after editing a helper
(``algorithms/spatial_kernels.py``) delete ``__pycache__`` in ``algorithms/`` and here.

Calls with the default gravity and no external forces run per-robot generated code (``codegen.py``: the
kernels traced on symbols, unrolled, constants baked in) once it is ready, tiered as JIT runtimes do: a model's
first calls run the table kernels while its code is compiled in a background process into the on-disk cache
(``codegen.specialize_in_background``, started after ``codegen.HOT_CALLS`` calls), then calls switch to it.
``specialize(model)`` compiles in the foreground; ``choose_code(model)`` decides once for a long-running process
(the nodes: no tier-up mid-run); ``path`` says which code serves a call. Every function checks
argument shapes with ``model.model.check_state``, so a wrong length gives the same error as the reference.
"""
import functools
import importlib
import importlib.util

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..algorithms.backends import compiled
from ..algorithms.packing import as_float_arrays, packed
from ..algorithms.regressor import _extra_flags, joint_columns
from ..algorithms.udut import innovations_factors
from ..errors import SingularMassMatrixError
from ..model.model import Model, check_state, check_states
from .codegen import ALGORITHMS, choose_once, count_call, specialize, specialize_in_background

BACKEND = 'numba' if importlib.util.find_spec('numba') else 'python'
STATES = {'rnea': ('q', 'qd', 'qdd'), 'aba': ('q', 'qd', 'tau'), 'crba': ('q',), 'udut': ('q',),
          'regressor': ('q', 'qd', 'qdd')}   # each algorithm's state arguments; its outputs follow them
FORCES = {'rnea': 2, 'aba': 2, 'crba': 0, 'udut': 0, 'regressor': 1}   # its table kernel takes a0 (1), f_ext (2)
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


def choose_code(model: Model) -> str:
    """``codegen.choose_once`` where numba is installed; says what serves ``model``'s calls, for a log line."""
    if BACKEND == 'python':
        return 'the kernels as plain Python (numba is not installed)'
    return choose_once(model)


def path(model: Model, gravity: ArrayLike | None = None, f_ext: ArrayLike | None = None) -> str:
    """Which code serves rnea/crba/aba/regressor of ``model`` with these arguments now: 'generated' (per-robot
    code, see ``codegen.py``), 'table' (the compiled kernels on the packed model) or 'python' (the same kernels as
    plain Python, without numba)."""
    if BACKEND == 'python':
        return 'python'
    return 'generated' if gravity is None and f_ext is None and model._cache.get('generated') else 'table'


def _run(model, name, arguments, gravity=None, f_ext=None):
    """Algorithm ``name`` (a _batch name: on each row of the states) on ``arguments`` (its states, then the
    arrays that receive the results), on the one backend that serves the call: the model's generated code
    (default gravity, no external forces, once compiled), else its compiled kernel on the packed model
    (``kernel(table, work, a0, f_ext, *arguments)``, the forces it takes), else (without numba) the same kernel as
    plain Python. Arguments the compiled code refuses (TypeError: not C-contiguous float64, ValueError: a wrong
    shape) get the shared shape check, then the call is retried on converted copies (a wrong-type out= stays an
    error); plain Python gets them checked and converted first. A zero pivot (numba's ZeroDivisionError, NumPy's
    FloatingPointError) raises the error naming the joint."""
    function = model._cache.get('generated', NONE).get(name) if gravity is None and f_ext is None else None
    table, plain = (), False   # a table kernel's arguments before the states (none for generated code); plain Python
    if function is None:
        algorithm, pack, plain = name.removesuffix('_batch'), packed(model), BACKEND == 'python'
        if not plain:
            function, work = _compiled_kernel(name), pack.data.work
            if gravity is None and f_ext is None and algorithm in ALGORITHMS:
                count_call(model)   # calls the generated code would serve count toward compiling it
        else:   # plain Python lets other threads run in between: a work array of its own
            function, work = _kernel(name), pack.work()
        f_ext = pack.no_external_force if f_ext is None else f_ext
        if name.endswith('_batch'):   # one (nv, 6) block for all states, or one per state
            f_ext = np.reshape(np.asarray(f_ext, dtype=float), (-1,) + np.shape(f_ext)[-2:])
        table = (pack.table, work, pack.base_acceleration(gravity), f_ext)[:2 + FORCES[algorithm]]
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


def _checked(model, name, start, arguments, f_ext):
    """``arguments`` with the states (from ``start`` on) through the shared shape check, and everything before the
    outputs as C-contiguous float64 arrays."""
    inputs = start + len(STATES[name])
    check_state(model, **dict(zip(STATES[name], arguments[start:inputs])), f_ext=f_ext)
    return (*as_float_arrays(*arguments[:inputs]), *arguments[inputs:])


def _run_batch(model, name, states, out, gravity=None, f_ext=None):
    """``_run`` for batches: the states are checked and converted first (rows of each array are states)."""
    check_states(model, **dict(zip(STATES[name], states)), f_ext=f_ext)
    _run(model, f'{name}_batch', (*as_float_arrays(*states), out), gravity, f_ext)
    return out


def _singular(model, states):
    """The named error for a zero pivot D in a kernel: the reference factorisation of the states finds the joint."""
    for q in np.reshape(np.asarray(states, dtype=float), (-1, model.nv)):
        innovations_factors(model, q)  # raises SingularMassMatrixError naming the joint
    return SingularMassMatrixError("forward dynamics is undefined: a zero articulated inertia at this configuration")


def rnea(model: Model, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike, gravity: ArrayLike | None = None,
         f_ext: ArrayLike | None = None, out: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """As ``algorithms.rnea``; ``out``: optional (nv,) float64 array that receives tau."""
    out = np.empty(model.nv) if out is None else out
    _run(model, 'rnea', (q, qd, qdd, out), gravity, f_ext)
    return out


def crba(model: Model, q: ArrayLike, out: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """As ``algorithms.crba``; ``out``: optional (nv, nv) float64 array that receives M(q)."""
    out = np.empty((model.nv, model.nv)) if out is None else out
    _run(model, 'crba', (q, out))
    return out


def aba(model: Model, q: ArrayLike, qd: ArrayLike, tau: ArrayLike, gravity: ArrayLike | None = None,
        f_ext: ArrayLike | None = None, out: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """As ``algorithms.aba``; ``out``: optional (nv,) float64 array that receives qdd."""
    out = np.empty(model.nv) if out is None else out
    _run(model, 'aba', (q, qd, tau, out), gravity, f_ext)
    return out


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
    out = np.empty(np.shape(Q)) if out is None else out
    return _run_batch(model, 'rnea', (Q, QD, QDD), out, gravity, f_ext)


def crba_batch(model: Model, Q: ArrayLike, out: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """crba on each row of the (N, nv) array Q, returns (N, nv, nv)."""
    out = np.empty((len(Q), model.nv, model.nv)) if out is None else out
    return _run_batch(model, 'crba', (Q,), out)


def aba_batch(model: Model, Q: ArrayLike, QD: ArrayLike, TAU: ArrayLike, gravity: ArrayLike | None = None,
              f_ext: ArrayLike | None = None, out: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """aba on each row of the (N, nv) arrays Q, QD, TAU, returns (N, nv); f_ext: (nv, 6) or (N, nv, 6)."""
    out = np.empty(np.shape(Q)) if out is None else out
    return _run_batch(model, 'aba', (Q, QD, TAU), out, gravity, f_ext)


def udut(model: Model, q: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """As ``algorithms.udut``: (U, D) with M(q) = U diag(D) U^T."""
    U, D = np.empty((model.nv, model.nv)), np.empty(model.nv)
    _run(model, 'udut', (q, U, D))
    return U, D


def _regressor(model, states, gravity, flags, batch):
    """The regressor of one state or (``batch``) of rows of states: the body columns from the kernel, then the
    per-joint columns as ``algorithms.regressor``."""
    n = model.nv
    (check_states if batch else check_state)(model, **dict(zip(STATES['regressor'], states)))
    Y = np.zeros(np.shape(states[0])[:-1] + (n, (10 + sum(flags)) * n))   # generated code writes the nonzeros only
    if batch:
        _run_batch(model, 'regressor', states, Y, gravity)
    else:
        _run(model, 'regressor', (*states, Y), gravity)
    return joint_columns(Y, flags, np.asarray(states[1], dtype=float), np.asarray(states[2], dtype=float))


def regressor(model: Model, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike, gravity: ArrayLike | None = None,
              rotor_inertia: bool = False, viscous: bool = False, coulomb: bool = False,
              offset: bool = False) -> NDArray[np.float64]:
    """As ``algorithms.regressor``: (nv, 10 nv + k nv) Y with tau = Y @ pi."""
    return _regressor(model, (q, qd, qdd), gravity, _extra_flags(rotor_inertia, viscous, coulomb, offset), False)


def regressor_batch(model: Model, Q: ArrayLike, QD: ArrayLike, QDD: ArrayLike, gravity: ArrayLike | None = None,
                    rotor_inertia: bool = False, viscous: bool = False, coulomb: bool = False,
                    offset: bool = False) -> NDArray[np.float64]:
    """regressor on each row of the (N, nv) arrays Q, QD, QDD, returns (N, nv, 10 nv + k nv)."""
    return _regressor(model, (Q, QD, QDD), gravity, _extra_flags(rotor_inertia, viscous, coulomb, offset), True)


__all__ = ['BACKEND', 'path', 'specialize', 'specialize_in_background', 'rnea', 'crba', 'aba', 'gravity_torques',
           'bias_torques', 'rnea_batch', 'crba_batch', 'aba_batch', 'udut', 'regressor', 'regressor_batch']
