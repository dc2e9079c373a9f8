"""The package's public API: every exported function is annotated, and every exception it raises for bad input
derives from RobotDynamicsError."""
import inspect
import typing

import numpy as np
import pytest

import robot_dynamics_ros
from robot_dynamics_ros import (MDHError, RobotDynamicsError, SingularMassMatrixError, SingularTaskError, URDFError,
                                load_urdf, operational_space_inertia, parameters)
from robot_dynamics_ros.model.mdh import mdh_from_model

from conftest import TEST_URDFS


def exported_functions(module):
    return [getattr(module, name) for name in module.__all__ if inspect.isfunction(getattr(module, name))]


@pytest.mark.parametrize('function', exported_functions(robot_dynamics_ros) + exported_functions(parameters),
                         ids=lambda f: f.__name__)
def test_exported_functions_are_annotated(function):
    hints = typing.get_type_hints(function)
    parameters_ = [name for name, p in inspect.signature(function).parameters.items()
                   if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    assert 'return' in hints
    assert [name for name in parameters_ if name not in hints] == []


def test_one_exception_base():
    for error in (URDFError, MDHError, SingularTaskError, SingularMassMatrixError):
        assert issubclass(error, RobotDynamicsError)
        assert error.__name__ in robot_dynamics_ros.__all__
    tree = load_urdf(TEST_URDFS['two_arm_tree'])
    with pytest.raises(MDHError):
        mdh_from_model(tree)                   # a tree has no MDH table
    assert tree.nv < 12
    with pytest.raises(SingularTaskError):     # 12 task rows on a robot with fewer DOF
        operational_space_inertia(tree, np.zeros(tree.nv), [tree.body_names[-1], tree.body_names[0]])
