"""Jain's inverse and determinant of the mass matrix from the innovations factors (Part II, Sec. 6); with coupled
mimic joints, from the U D U^T of the dense M (``dense_udut.py``, O(n^3))."""
import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..model.model import Model
from .udut import coupled_inverse, innovations_factors, udut, udut_solve


def mass_matrix_inverse(model: Model, q: ArrayLike) -> NDArray[np.float64]:
    """M(q)^{-1} = [I - H psi K]^* D^{-1} [I - H psi K] (Jain Lemma 11, eq. 51), without forming M.

    [I - H psi K] (eq. 50) is the tips-to-base gather and [.]^* the base-to-tips scatter of ``udut_solve``,
    run on all n unit columns at once: O(n^2), like Pinocchio's computeMinverse.
    """
    if model.coupling is not None:
        return coupled_inverse(model, q)
    return udut_solve(model, innovations_factors(model, q), np.eye(model.nv))


def mass_matrix_log_det(model: Model, q: ArrayLike) -> float:
    """log det M(q) = sum_k log D(k) (Jain Corollary 6.1, eq. 53: the factors [I + H phi K] have det 1)."""
    if model.coupling is not None:
        return float(np.sum(np.log(udut(model, q)[1])))
    return float(np.sum(np.log(innovations_factors(model, q).D)))
