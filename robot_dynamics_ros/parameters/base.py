"""Base (minimal, identifiable) inertial parameters: beta = K @ pi, with Y @ pi == Y[:, independent] @ beta."""
import re
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray


@dataclass(frozen=True, eq=False)
class BaseParameters:
    """A set of b base parameters for p standard parameters.

    names: base names, the kept standard name with an 'R' when it regroups others ('ZZR1', 'MXR3').
    independent: (b,) indices of the kept standard columns, so Y_base = Y[:, independent].
    K: (b, p) beta = K @ pi; K[:, independent] is the identity.
    regrouping: (b,) strings 'ZZR1 = ZZ1 + 0.25*YY2 + ...'.
    pivot_gap: smallest kept over largest dropped pivot (numeric method; inf where exact).
    parameter_names: the p standard names.
    columns: None, or (p, b) with Y_base = Y @ columns, where the base parameters are combinations of parameters
        in other frames (closed form on a URDF whose frames are not MDH: names and `independent` refer to the
        MDH-frame parameters pi_mdh = to_mdh @ pi, and K[:, independent] is then not the identity).
    to_mdh: None, or the (p, p) map from the model's standard parameters to the MDH-frame ones.
    """
    names: tuple
    independent: np.ndarray
    K: np.ndarray
    regrouping: tuple
    pivot_gap: float
    parameter_names: tuple
    columns: np.ndarray = None
    to_mdh: np.ndarray = None

    def __len__(self) -> int:
        return len(self.names)

    def project(self, pi: ArrayLike) -> NDArray[np.float64]:
        """beta = K @ pi: the base parameters of standard parameters pi."""
        return self.K @ np.asarray(pi, dtype=float)

    def regressor(self, Y: ArrayLike) -> NDArray[np.float64]:
        """Y_base with Y_base @ project(pi) == Y @ pi: Y[:, independent], or Y @ columns."""
        if self.columns is not None:
            return np.asarray(Y) @ self.columns
        return np.asarray(Y)[..., self.independent]


def regrouped_name(name):
    """'ZZ1' -> 'ZZR1', 'off2' -> 'offR2'."""
    letters, number = re.fullmatch(r'(\D+)(\d+)', name).groups()
    return f'{letters}R{number}'


def base_from_K(K, independent, parameter_names, pivot_gap=float('inf'), tol=1e-10):
    """BaseParameters from the regrouping matrix: names and human-readable relations from K's rows."""
    names, relations = [], []
    for row, k in zip(K, independent):
        terms = [j for j in np.flatnonzero(np.abs(row) > tol) if j != k]
        name = regrouped_name(parameter_names[k]) if terms else parameter_names[k]
        expression = parameter_names[k] + ''.join(
            f" {'-' if row[j] < 0 else '+'} {_coefficient(abs(row[j]))}{parameter_names[j]}" for j in terms)
        names.append(name)
        relations.append(f'{name} = {expression}')
    return BaseParameters(tuple(names), np.asarray(independent, dtype=int), K, tuple(relations), pivot_gap,
                          tuple(parameter_names))


def _coefficient(c):
    return '' if abs(c - 1.0) < 1e-12 else f'{c:.6g}*'
