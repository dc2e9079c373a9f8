"""The spatial force each joint transmits to its body: RNEA's tips-to-base gather (``rnea.py``) read at its end."""
import numpy as np
from numpy.typing import ArrayLike, NDArray

from ..model.configuration import check_quaternions
from ..model.model import Model, check_state
from .packing import as_float_arrays, packed
from .rnea import F_, rnea_kernel


def joint_wrenches(model: Model, q: ArrayLike, qd: ArrayLike, qdd: ArrayLike, gravity: ArrayLike | None = None,
                   f_ext: ArrayLike | None = None, kernel=rnea_kernel) -> NDArray[np.float64]:
    """(nb, 6) spatial forces [moment; force] that each body's joint transmits from the parent to the body, and so
    to the body's whole subtree, in the body's frame at its origin (the joint's frame, the URDF child link's):
    f_i = I_i a_i + v_i x* I_i v_i - f_ext,i + sum over children c of Xup_c^T f_c (Featherstone RBDA Table 5.1;
    Jain Lemma 1, eq. 5), RNEA's f after its gather. Pinocchio's data.f after rnea, in [moment; force] order.
    What a force/torque sensor in the joint reads when the state moves with acceleration qdd. ``kernel``: RNEA's
    kernel as plain Python, or its compilation (``backends.compiled(rnea_kernel)``)."""
    check_state(model, q=q, qd=qd, qdd=qdd, f_ext=f_ext)
    check_quaternions(model, q)
    if model.coupling is not None:   # mimic joints: the tree's wrenches at the coupled motion
        c = model.coupling
        return joint_wrenches(model.tree, c.tree_positions(q), c.tree_velocities(qd), c.tree_velocities(qdd), gravity,
                              f_ext, kernel)
    pack, tau = packed(model), np.empty(model.nv)
    f_ext, q, qd, qdd = as_float_arrays(pack.external_force(f_ext), q, qd, qdd)
    work = pack.work()
    kernel(pack.table, work, pack.base_acceleration(gravity), f_ext, q, qd, qdd, tau)
    return pack.rows(work[:, F_:F_ + 6]).copy()
