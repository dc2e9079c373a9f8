"""Fast path: RNEA, CRBA and ABA compiled with numba, same signatures and results as ``algorithms`` (the
NumPy reference), plus ``out=`` buffers and batched versions over arrays of states.

The model is packed once per Model instance into one flat array (``packing.py``); kernels use rotations and
3D cross products instead of 6x6 products. Kernels are compiled ahead for C-contiguous float64 arrays and
cached on disk; the first call of each function imports numba and loads (or, once, compiles) its kernel.
Other inputs (lists, integer or strided arrays) are converted and retried. Without numba every function
falls back to the reference path: ``BACKEND`` says which one runs. numba's on-disk cache checks only the
source file of each entry kernel: after editing a helper (``spatial_kernels.py``) delete ``__pycache__`` here.

Calls with the default gravity and no external forces run per-robot generated code (``codegen.py``: unrolled,
constants baked in) once it is ready, tiered as JIT runtimes do: a model's first calls run the table kernels
while its code is compiled in a background process into the on-disk cache (``codegen.specialize_in_background``,
started after ``codegen.HOT_CALLS`` calls), then calls switch to it. ``specialize(model)`` compiles in the
foreground; ``path`` says which code serves a call. Every function checks argument shapes with
``model.model.check_state``, so a wrong length gives the same error as the reference.
"""
import importlib
import importlib.util

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..algorithms.regressor import _extra_flags
from ..algorithms.udut import innovations_factors
from ..errors import SingularMassMatrixError
from ..model.model import Model, check_state, check_states
from .codegen import count_call, specialize, specialize_in_background
from .packing import packed

BACKEND = 'numba' if importlib.util.find_spec('numba') else 'numpy'


class _Kernels:
    """Kernel modules, imported on first use (importing numba and loading machine code takes about a second)."""

    def __getattr__(self, module_name):  # only reached until the module is set as an attribute
        module = importlib.import_module(f'{__name__}.{module_name}')
        setattr(self, module_name, module)
        return module


_kernels = _Kernels()


def _as_float_arrays(*arrays):
    """C-contiguous, writable float64 arrays (copies where needed: the kernels' signatures take no read-only
    arrays, such as a Model's own arrays)."""
    return [np.require(x, dtype=float, requirements=['C', 'W']) for x in arrays]


def _retry(model, call, **arrays):
    """After a kernel refused its arguments (TypeError: not C-contiguous float64, ValueError: a wrong shape):
    the shared shape check, then the call again on converted copies (a wrong-type out= stays an error)."""
    check_state(model, **arrays)
    call(*_as_float_arrays(*arrays.values()))


def _table(model):
    """The packed model for a call that the table kernels serve; counts the call (``codegen.count_call``)."""
    count_call(model)
    return packed(model)


def path(model: Model, gravity: ArrayLike | None = None, f_ext: ArrayLike | None = None) -> str:
    """Which code serves rnea/crba/aba of ``model`` with these arguments now: 'generated' (per-robot code, see
    ``codegen.py``), 'table' (the kernels on the packed model) or 'numpy' (the reference, without numba)."""
    if BACKEND == 'numpy':
        return 'numpy'
    return 'generated' if gravity is None and f_ext is None and model._cache.get('generated') else 'table'


def rnea(model: Model, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike, gravity: ArrayLike | None = None,
         f_ext: ArrayLike | None = None, out: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """As ``algorithms.rnea``; ``out``: optional (nv,) float64 array that receives tau."""
    out = np.empty(model.nv) if out is None else out
    functions = model._cache.get('generated') if gravity is None and f_ext is None else None
    if functions is not None:
        try:
            functions.rnea(q, qd, qdd, out)
        except (TypeError, ValueError):
            _retry(model, lambda *x: functions.rnea(*x, out), q=q, qd=qd, qdd=qdd)
        return out
    pack = _table(model)
    P, W, a0 = pack.table, pack.data.work, pack.base_acceleration(gravity)
    f_ext = pack.no_external_force if f_ext is None else f_ext
    try:
        _kernels.rnea_kernel.rnea_kernel(P, W, q, qd, qdd, a0, f_ext, out)
    except (TypeError, ValueError):
        _retry(model, lambda q, qd, qdd, f_ext: _kernels.rnea_kernel.rnea_kernel(P, W, q, qd, qdd, a0, f_ext, out),
               q=q, qd=qd, qdd=qdd, f_ext=f_ext)
    return out


def crba(model: Model, q: ArrayLike, out: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """As ``algorithms.crba``; ``out``: optional (nv, nv) float64 array that receives M(q)."""
    functions = model._cache.get('generated')
    if functions is not None:
        out = np.empty(functions.matrix_shape) if out is None else out
        try:
            functions.crba(q, out)
        except (TypeError, ValueError):
            _retry(model, lambda q: functions.crba(q, out), q=q)
        return out
    out = np.empty((model.nv, model.nv)) if out is None else out
    pack = _table(model)
    try:
        _kernels.crba_kernel.crba_kernel(pack.table, pack.data.work, q, out)
    except (TypeError, ValueError):
        _retry(model, lambda q: _kernels.crba_kernel.crba_kernel(pack.table, pack.data.work, q, out), q=q)
    return out


def _singular(model, states):
    """The named error for a kernel's ZeroDivisionError (a zero pivot D): the reference factorisation of
    the states finds the joint."""
    for q in np.reshape(np.asarray(states, dtype=float), (-1, model.nv)):
        innovations_factors(model, q)  # raises SingularMassMatrixError naming the joint
    return SingularMassMatrixError("forward dynamics is undefined: a zero articulated inertia at this configuration")


def aba(model: Model, q: ArrayLike, qd: ArrayLike, tau: ArrayLike, gravity: ArrayLike | None = None,
        f_ext: ArrayLike | None = None, out: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """As ``algorithms.aba``; ``out``: optional (nv,) float64 array that receives qdd."""
    out = np.empty(model.nv) if out is None else out
    functions = model._cache.get('generated') if gravity is None and f_ext is None else None
    try:
        if functions is not None:
            try:
                functions.aba(q, qd, tau, out)
            except (TypeError, ValueError):
                _retry(model, lambda *x: functions.aba(*x, out), q=q, qd=qd, tau=tau)
            return out
        pack = _table(model)
        P, W, a0 = pack.table, pack.data.work, pack.base_acceleration(gravity)
        f_ext = pack.no_external_force if f_ext is None else f_ext
        try:
            _kernels.aba_kernel.aba_kernel(P, W, q, qd, tau, a0, f_ext, out)
        except (TypeError, ValueError):
            _retry(model, lambda q, qd, tau, f_ext: _kernels.aba_kernel.aba_kernel(P, W, q, qd, tau, a0, f_ext, out),
                   q=q, qd=qd, tau=tau, f_ext=f_ext)
    except ZeroDivisionError:  # a zero pivot: the kernels divide by D without a check
        raise _singular(model, q) from None
    return out


def gravity_torques(model: Model, q: ArrayLike, gravity: ArrayLike | None = None) -> NDArray[np.float64]:
    """g(q): the joint forces that hold the robot still."""
    zero = np.zeros(model.nv)
    return rnea(model, q, zero, zero, gravity)


def bias_torques(model: Model, q: ArrayLike, qd: ArrayLike, gravity: ArrayLike | None = None) -> NDArray[np.float64]:
    """h(q, qd) = C(q, qd) qd + g(q): Coriolis, centrifugal and gravity forces."""
    return rnea(model, q, qd, np.zeros(model.nv), gravity)


def _batch_f_ext(pack, f_ext):
    """f_ext for the batch kernels: None, one (nv, 6) block for all states, or (N, nv, 6)."""
    f_ext = pack.no_external_force if f_ext is None else np.asarray(f_ext, dtype=float)
    return np.ascontiguousarray(f_ext.reshape((-1,) + f_ext.shape[-2:]))


def rnea_batch(model: Model, Q: ArrayLike, QD: ArrayLike, QDD: ArrayLike, gravity: ArrayLike | None = None,
               f_ext: ArrayLike | None = None, out: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """rnea on each row of the (N, nv) arrays Q, QD, QDD, returns (N, nv); f_ext: (nv, 6) or (N, nv, 6)."""
    check_states(model, q=Q, qd=QD, qdd=QDD, f_ext=f_ext)
    Q, QD, QDD = _as_float_arrays(Q, QD, QDD)
    out = np.empty(Q.shape) if out is None else out
    functions = model._cache.get('generated') if gravity is None and f_ext is None else None
    if functions is not None:
        functions.rnea_batch(Q, QD, QDD, out)
        return out
    pack = _table(model)
    _kernels.batch_kernels.rnea_batch_kernel(pack.table, pack.data.work, Q, QD, QDD, pack.base_acceleration(gravity),
                                             _batch_f_ext(pack, f_ext), out)
    return out


def crba_batch(model: Model, Q: ArrayLike, out: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """crba on each row of the (N, nv) array Q, returns (N, nv, nv)."""
    check_states(model, q=Q)
    (Q,) = _as_float_arrays(Q)
    out = np.empty((Q.shape[0], model.nv, model.nv)) if out is None else out
    functions = model._cache.get('generated')
    if functions is not None:
        functions.crba_batch(Q, out)
        return out
    pack = _table(model)
    _kernels.batch_kernels.crba_batch_kernel(pack.table, pack.data.work, Q, out)
    return out


def aba_batch(model: Model, Q: ArrayLike, QD: ArrayLike, TAU: ArrayLike, gravity: ArrayLike | None = None,
              f_ext: ArrayLike | None = None, out: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    """aba on each row of the (N, nv) arrays Q, QD, TAU, returns (N, nv); f_ext: (nv, 6) or (N, nv, 6)."""
    check_states(model, q=Q, qd=QD, tau=TAU, f_ext=f_ext)
    Q, QD, TAU = _as_float_arrays(Q, QD, TAU)
    out = np.empty(Q.shape) if out is None else out
    functions = model._cache.get('generated') if gravity is None and f_ext is None else None
    try:
        if functions is not None:
            functions.aba_batch(Q, QD, TAU, out)
            return out
        pack = _table(model)
        _kernels.batch_kernels.aba_batch_kernel(pack.table, pack.data.work, Q, QD, TAU,
                                                pack.base_acceleration(gravity), _batch_f_ext(pack, f_ext), out)
    except ZeroDivisionError:
        raise _singular(model, Q) from None
    return out


def udut(model: Model, q: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """As ``algorithms.udut``: (U, D) with M(q) = U diag(D) U^T."""
    check_state(model, q=q)
    pack = packed(model)
    U, D = np.empty((pack.nv, pack.nv)), np.empty(pack.nv)
    try:
        _kernels.udut_kernel.udut_kernel(pack.table, pack.data.work, *_as_float_arrays(q), U, D)
    except ZeroDivisionError:
        raise _singular(model, q) from None
    return U, D


def _fill_joint_columns(Y, flags, QD, QDD):
    """The per-joint columns after the 10 n body columns (Ia, Fv, Fc, off as enabled), as ``algorithms.regressor``."""
    n = QD.shape[-1]
    columns = [c for c, on in zip((QDD, QD, np.sign(QD), np.ones_like(QD)), flags) if on]
    joints = np.arange(n)
    for k, column in enumerate(columns):
        Y[..., joints, 10 * n + len(columns) * joints + k] = column
    return Y


def regressor(model: Model, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike, gravity: ArrayLike | None = None,
              rotor_inertia: bool = False, viscous: bool = False, coulomb: bool = False,
              offset: bool = False) -> NDArray[np.float64]:
    """As ``algorithms.regressor``: (nv, 10 nv + k nv) Y with tau = Y @ pi."""
    check_state(model, q=q, qd=qd, qdd=qdd)
    pack = packed(model)
    q, qd, qdd = _as_float_arrays(q, qd, qdd)
    flags = _extra_flags(rotor_inertia, viscous, coulomb, offset)
    Y = np.zeros((pack.nv, (10 + sum(flags)) * pack.nv))
    _kernels.regressor_kernel.regressor_kernel(
        pack.table, pack.data.work, q, qd, qdd, pack.base_acceleration(gravity), Y)
    return _fill_joint_columns(Y, flags, qd, qdd)


def regressor_batch(model: Model, Q: ArrayLike, QD: ArrayLike, QDD: ArrayLike, gravity: ArrayLike | None = None,
                    rotor_inertia: bool = False, viscous: bool = False, coulomb: bool = False,
                    offset: bool = False) -> NDArray[np.float64]:
    """regressor on each row of the (N, nv) arrays Q, QD, QDD, returns (N, nv, 10 nv + k nv)."""
    check_states(model, q=Q, qd=QD, qdd=QDD)
    pack = packed(model)
    Q, QD, QDD = _as_float_arrays(Q, QD, QDD)
    flags = _extra_flags(rotor_inertia, viscous, coulomb, offset)
    Y = np.zeros((Q.shape[0], pack.nv, (10 + sum(flags)) * pack.nv))
    _kernels.batch_kernels.regressor_batch_kernel(
        pack.table, pack.data.work, Q, QD, QDD, pack.base_acceleration(gravity), Y)
    return _fill_joint_columns(Y, flags, QD, QDD)


if BACKEND == 'numpy':
    from ._reference import (aba, aba_batch, bias_torques, crba, crba_batch, gravity_torques, regressor,  # noqa: F811
                             regressor_batch, rnea, rnea_batch, udut)

__all__ = ['BACKEND', 'path', 'specialize', 'specialize_in_background', 'rnea', 'crba', 'aba', 'gravity_torques',
           'bias_torques', 'rnea_batch', 'crba_batch', 'aba_batch', 'udut', 'regressor', 'regressor_batch']
