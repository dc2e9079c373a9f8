"""The data of one simulator's step, allocated once, and the stage kernels that fill it (no ROS import).

As MuJoCo's mjData next to mjModel: ``StepData`` holds every buffer the contact step writes (body poses, the world
columns of the motion subspace, point positions and heights, the candidates, the row set G of contacts and joints,
Y = M^-1 G^T, the Delassus matrix A = G Y, the right-hand side c, impulses lam, the held
rows and their Cholesky factor) and the warm start carried from step to step (each contact's and joint row's role,
De Saxce's shift of the last two steps); ``reset`` clears the warm start. The row buffers are sized for every point
and three rows per joint, the m x m ones for the rows of the first steps and grown (doubled) if a step needs more.

``stage_kernels(backend)``: the kernels of ``contact_rows``, ``delassus``, ``contact_active_set``, ``bounded_solve``,
``integrate_step``, ``joint_bounds`` and ``contact_step`` (the whole step in one call) as numba's
machine code ('numba', as ``fast`` compiles ``algorithms/``) or as the plain-Python reference ('python').
"""
import functools
import importlib.util
import types

import numpy as np

from ..algorithms import point_kinematics
from ..algorithms.backends import compiled
from . import bounded_solve, contact_active_set, contact_rows, contact_step, delassus, integrate_step, joint_bounds, \
    pattern_fixed_point
from .step_layout import SETS, model_buffers, model_sizes, row_buffers, row_floats
from .roles import APART, INSIDE, PUSHING

STAGES = {point_kinematics: ('body_poses', 'world_columns'),
          contact_rows: ('near_bodies', 'point_heights', 'body_velocities', 'candidate_rows',
                         'joint_row_sets', 'joint_rows', 'broken_stops'),
          delassus: ('delassus',),
          contact_active_set: ('fix_pattern', 'held_rows', 'certified', 'revise_roles'),
          pattern_fixed_point: ('pattern_fixed_point',),
          bounded_solve: ('bounded_step',),
          integrate_step: ('integrate_joints',),
          joint_bounds: ('applied_effort', 'joint_bounds', 'drive_rows'),
          contact_step: ('contact_step',)}
BACKEND = 'numba' if importlib.util.find_spec('numba') else 'python'


@functools.cache
def stage_kernels(backend=None):
    """A namespace of the stage kernels, compiled ('numba', the default where numba is installed) or as plain
    Python ('python')."""
    backend = backend or BACKEND
    kernels = {name: getattr(module, name) for module, names in STAGES.items() for name in names}
    if backend == 'numba':
        kernels = {name: compiled(kernel) for name, kernel in kernels.items()}
    elif backend != 'python':
        raise ValueError(f"stage backend must be 'numba' or 'python', got {backend!r}")
    return types.SimpleNamespace(backend=backend, **kernels)


class StepData:
    """The buffers of one simulator's contact step (see the module's docstring); ``reset`` clears the warm start.
    They live in five arrays (``arenas``: the model-sized floats and ints, the row-sized floats, ints and flags),
    which the one-call step takes as five arguments and views as ``model_buffers`` and ``row_buffers`` do."""

    def __init__(self, model, count):
        nb, nv = model.nb, model.nv
        tree_nv = model.tree.nv   # (the tree's columns: with coupled mimic joints, more than nv)
        self.sizes = (nb, count, nv, model.nq, tree_nv)
        self.rows = 3 * count + 3 * nv                                     # at most: 3 per point, 3 per joint
        float_sizes, int_sizes = model_sizes(*self.sizes)
        self.floats, self.ints = np.zeros(sum(float_sizes)), np.zeros(sum(int_sizes), dtype=np.int64)
        (self.R, self.p, self.C_ang, self.C_lin, self.x, self.phi, self.bodies, self.G, self.impulses, self.v,
         self.shift, self.swept_shift, self.joint_impulse, self.slip, self.slope, self.U, self.joints, self.trial,
         self.gap, self.beta, self.q_start, self.which, self.contact_role, self.box_role, self.lower_role,
         self.upper_role, self.contact_roles, self.joint_ints, self.near) = model_buffers(self.floats, self.ints,
                                                                                           *self.sizes)
        self.sets = self.joint_ints[SETS:SETS + 4]                       # joints with rows, by kind
        self._size(min(self.rows, 64))
        self.reset()

    def _size(self, m):
        """The row-sized arenas and their buffers for up to m rows."""
        nv = self.sizes[2]
        self.capacity = m
        self.row_floats = np.zeros(row_floats(nv, m))
        self.row_ints, self.row_flags = np.zeros(m, dtype=np.int64), np.zeros(m, dtype=np.bool_)
        (self.Y, self.A, self.L, self.c, self.lam, self.y, self.previous, self.rhs, self.swept, self.saved, self.F,
         self.free) = row_buffers(self.row_floats, self.row_ints, self.row_flags, nv)

    @property
    def arenas(self):
        return self.floats, self.ints, self.row_floats, self.row_ints, self.row_flags

    def reserve(self, m):
        """Room for m rows (the m x m buffers doubled until they hold them)."""
        if m > self.capacity:
            self._size(max(m, 2 * self.capacity))

    def reset(self):
        """Forget the warm start: the next step starts from every point apart, every box inside, every stop pushing,
        no shift."""
        self.contact_role[:] = APART
        self.box_role[:] = INSIDE
        self.lower_role[:] = PUSHING
        self.upper_role[:] = PUSHING
        self.shift[:] = 0.0
        self.slope[:] = 0.0
        self.impulses[:] = 0.0
        self.joint_impulse[:] = 0.0
