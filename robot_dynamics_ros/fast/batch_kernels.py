"""The compiled kernels over a batch of states, one state per row, in one compiled loop. Each call works in
its own copy of the work array (Data.work), so the per-state kernels allocate nothing and the shared Data is
not touched. External forces come as one (nv, 6) block per state, or a single block shared by all states.
These loops are serial (they serve other gravity vectors and external forces; a parallel loop would need a work
array per thread); the generated batches, the default path, run large batches on numba's threads."""
from ..algorithms.aba import aba_kernel
from ..algorithms.backends import njit
from ..algorithms.crba import crba_kernel
from ..algorithms.regressor import regressor_kernel
from ..algorithms.rnea import rnea_kernel

STATES = 'f8[:, ::1]'
SIGNATURE = f'void(f8[:, ::1], f8[:, ::1], f8[::1], f8[:, :, ::1], {STATES}, {STATES}, {STATES}, {STATES})'


@njit(SIGNATURE, cache=True)
def rnea_batch_kernel(P, W, a0, F_ext, Q, QD, QDD, TAU):
    N = Q.shape[0]
    if QD.shape[0] != N or QDD.shape[0] != N or TAU.shape[0] != N or F_ext.shape[0] not in (1, N):
        raise ValueError('rnea_batch: q, qd, qdd, out need the same number of states; f_ext one block or one per state')
    shared = F_ext.shape[0] == 1
    own = W.copy()
    for s in range(N):
        rnea_kernel(P, own, a0, F_ext[0] if shared else F_ext[s], Q[s], QD[s], QDD[s], TAU[s])


@njit(f'void(f8[:, ::1], f8[:, ::1], {STATES}, f8[:, :, ::1])', cache=True)
def crba_batch_kernel(P, W, Q, M):
    if M.shape[0] != Q.shape[0]:
        raise ValueError('crba_batch: out needs one (nv, nv) block per state')
    own = W.copy()
    for s in range(Q.shape[0]):
        crba_kernel(P, own, Q[s], M[s])


@njit(SIGNATURE, cache=True)
def aba_batch_kernel(P, W, a0, F_ext, Q, QD, TAU, QDD):
    N = Q.shape[0]
    if QD.shape[0] != N or TAU.shape[0] != N or QDD.shape[0] != N or F_ext.shape[0] not in (1, N):
        raise ValueError('aba_batch: q, qd, tau, out need the same number of states; f_ext one block or one per state')
    shared = F_ext.shape[0] == 1
    own = W.copy()
    for s in range(N):
        aba_kernel(P, own, a0, F_ext[0] if shared else F_ext[s], Q[s], QD[s], TAU[s], QDD[s])


@njit(f'void(f8[:, ::1], f8[:, ::1], f8[::1], {STATES}, {STATES}, {STATES}, f8[:, :, ::1])', cache=True)
def regressor_batch_kernel(P, W, a0, Q, QD, QDD, Y):
    N = Q.shape[0]
    if QD.shape[0] != N or QDD.shape[0] != N or Y.shape[0] != N:
        raise ValueError('regressor_batch: q, qd, qdd, out need the same number of states')
    own = W.copy()
    for s in range(N):
        regressor_kernel(P, own, a0, Q[s], QD[s], QDD[s], Y[s])
