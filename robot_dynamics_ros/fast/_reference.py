"""The fast-path API on the NumPy reference algorithms, used when numba is not installed."""
import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..algorithms import aba as _aba, bias_torques, crba as _crba, gravity_torques, regressor, rnea as _rnea, udut
from ..model.model import Model, check_states


def _into(out, result):
    if out is None:
        return result
    out[...] = result
    return out


def rnea(model: Model, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike, gravity: ArrayLike | None = None,
         f_ext: ArrayLike | None = None, out: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    return _into(out, _rnea(model, q, qd, qdd, gravity, f_ext))


def crba(model: Model, q: ArrayLike, out: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    return _into(out, _crba(model, q))


def aba(model: Model, q: ArrayLike, qd: ArrayLike, tau: ArrayLike, gravity: ArrayLike | None = None,
        f_ext: ArrayLike | None = None, out: NDArray[np.float64] | None = None) -> NDArray[np.float64]:
    return _into(out, _aba(model, q, qd, tau, gravity, f_ext))


def _per_state_f_ext(f_ext, n_states):
    if f_ext is None or np.ndim(f_ext) == 2:
        return [f_ext] * n_states
    return f_ext


def rnea_batch(model, Q, QD, QDD, gravity=None, f_ext=None, out=None):
    check_states(model, q=Q, qd=QD, qdd=QDD, f_ext=f_ext)
    F = _per_state_f_ext(f_ext, len(Q))
    return _into(out, np.array([_rnea(model, *state, gravity, F[s]) for s, state in enumerate(zip(Q, QD, QDD))]))


def crba_batch(model, Q, out=None):
    check_states(model, q=Q)
    return _into(out, np.array([_crba(model, q) for q in Q]))


def aba_batch(model, Q, QD, TAU, gravity=None, f_ext=None, out=None):
    check_states(model, q=Q, qd=QD, tau=TAU, f_ext=f_ext)
    F = _per_state_f_ext(f_ext, len(Q))
    return _into(out, np.array([_aba(model, *state, gravity, F[s]) for s, state in enumerate(zip(Q, QD, TAU))]))


def regressor_batch(model, Q, QD, QDD, gravity=None, **joint_columns):
    check_states(model, q=Q, qd=QD, qdd=QDD)
    return np.array([regressor(model, *state, gravity, **joint_columns) for state in zip(Q, QD, QDD)])


__all__ = ['rnea', 'crba', 'aba', 'gravity_torques', 'bias_torques', 'rnea_batch', 'crba_batch', 'aba_batch', 'udut',
           'regressor', 'regressor_batch']
