"""Numeric base parameters (Gautier 1990): QR of the regressor stacked over random states."""
import dataclasses

import numpy as np
import scipy.linalg
from numpy.typing import ArrayLike

from ..algorithms.regressor import parameter_names
from ..fast import regressor   # compiled where numba imports: one call per sample
from ..model.configuration import random_configuration
from ..model.model import REVOLUTE, Model
from .base import BaseParameters, base_from_K

PRISMATIC_RANGE = 1.0  # m: prismatic positions for the rank are drawn from [-1, 1] m


def generic_configuration(model, rng):
    """Random q for the rank, independent of the joint limits (identifiability is a generic property: a URDF
    with lower = upper must not lose parameters): revolute angles over the full circle, prismatic positions
    uniform in [-PRISMATIC_RANGE, PRISMATIC_RANGE]; floating and planar joints as ``random_configuration``."""
    if not model.fixed_base:
        return random_configuration(dataclasses.replace(model, lower=np.full(model.nq, -np.inf),
                                                        upper=np.full(model.nq, np.inf)), rng)
    half_range = np.where(model.joint_type[model.coordinate_bodies] == REVOLUTE, np.pi, PRISMATIC_RANGE)
    return rng.uniform(-half_range, half_range)


def stacked_regressor(model, n_samples, seed=0, gravity=None, **extra_columns):
    """Y at n_samples random states (q from generic_configuration, qd and qdd standard normal), stacked."""
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(n_samples):
        q = generic_configuration(model, rng)
        rows.append(regressor(model, q, rng.normal(size=model.nv), rng.normal(size=model.nv), gravity,
                              **extra_columns))
    return np.vstack(rows)


def first_independent_columns(W, threshold):
    """Indices of the columns of W, in order, whose distance to the span of the kept ones before them
    exceeds threshold (Gram-Schmidt, twice for stability)."""
    basis, kept = [], []
    for k, column in enumerate(W.T):
        residual = column.copy()
        for _ in range(2):
            for e in basis:
                residual -= (e @ residual) * e
        norm = np.linalg.norm(residual)
        if norm > threshold:
            basis.append(residual / norm)
            kept.append(k)
    return np.array(kept, dtype=int)


def numeric_base_parameters(model: Model, n_samples: int | None = None, rtol: float = 1e-10, seed: int = 0,
                            gravity: ArrayLike | None = None, **extra_columns: bool) -> BaseParameters:
    """Base parameters of a tree from the column space of W = stacked Y.

    1. Rank b: QR with column pivoting, W P = Q R, b = #{|R_kk| > rtol |R_00|}; pivot_gap = |R_bb|/|R_b+1,b+1|
       (smallest kept over largest dropped pivot; large = the rank is clear).
    2. Which columns to keep: in standard order, each column farther than sqrt(|R_bb| |R_b+1,b+1|) from the
       span of the kept ones before it, so that a parameter is regrouped into earlier ones as in
       Gautier-Khalil (YY_j into XX_j, M_j into link j-1); this must give b columns.
    3. K: beta = pi_independent + C pi_dependent, C = W_independent^+ W_dependent.
    extra_columns: rotor_inertia, viscous, coulomb, offset flags, as for ``regressor``.
    """
    p = 10 * model.nb
    n_samples = n_samples or max(20, 4 * p // max(model.nv, 1))
    W = stacked_regressor(model, n_samples, seed, gravity, **extra_columns)
    names = parameter_names(model, **extra_columns)
    _, R, _ = scipy.linalg.qr(W, mode='economic', pivoting=True)
    pivots = np.abs(np.diag(R))
    rank = int(np.sum(pivots > rtol * pivots[0])) if pivots.size and pivots[0] > 0 else 0
    pivot_gap = pivots[rank - 1] / pivots[rank] if 0 < rank < pivots.size and pivots[rank] > 0 else float('inf')
    threshold = np.sqrt(pivots[rank - 1] * pivots[rank]) if np.isfinite(pivot_gap) else rtol * pivots[0]
    independent = first_independent_columns(W, threshold)
    if len(independent) != rank:
        raise ValueError(f"rank {rank} from pivoted QR but {len(independent)} columns kept in standard order; "
                         f"pivot gap {pivot_gap:.3g} is too small: use more samples or another rtol")
    dependent = np.setdiff1d(np.arange(W.shape[1]), independent)
    C = np.linalg.lstsq(W[:, independent], W[:, dependent], rcond=None)[0]
    K = np.zeros((rank, W.shape[1]))
    K[:, independent] = np.eye(rank)
    K[:, dependent] = C
    K[np.abs(K) < 1e-10 * max(1.0, np.abs(K).max())] = 0.0
    return base_from_K(K, independent, names, pivot_gap)
