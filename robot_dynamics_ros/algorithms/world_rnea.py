"""Recursive Newton-Euler inverse dynamics in one world-aligned frame (``world_frame``), O(n) on trees.

``rnea.py``'s recursion (Jain Alg. 3.1; Featherstone RBDA Table 5.1) with every Xup_i the identity: the scatter
adds each joint's velocity and acceleration to its parent's, the gather adds each body's force to its parent's.
Only the velocity-product term changes its form: in the body frame S_i is constant and the term is v_in x S_i qd_i
(``packing``: v_in the velocity the joint's first row receives); in a fixed frame S_i moves with the joint's body,
dS_i/dt = v_i x S_i, and summed over a joint's rows the term is the same v_in x S_i qd_i (for a joint that moves
one body, v_i x S_i qd_i = v_in x S_i qd_i).
"""
from .backends import njit
from .packing import CONTINUED, PARENT, TRANSFORM, WORLD
from .spatial_kernels import cross_force_add, cross_motion_add, inertia_times

S_, I_, V_, A_, VIN_, IV_, F_ = WORLD['S'], WORLD['I'], WORLD['v'], WORLD['a'], WORLD['vin'], WORLD['Iv'], \
    WORLD['f']


@njit()
def world_rnea(P, W, a0, qd, qdd, tau):
    """tau = M qdd + h (no external forces) on the rows' world columns and inertias in the work fields S and I of W
    (``world_frame.world_rows``); a0 the root frame's acceleration -[0; g] in world axes."""
    n = P.shape[0]
    for i in range(n):                               # scatter, base to tips (Jain Lemma 2, eq. 8)
        p = int(P[i, PARENT])
        S, v, a, v_in = W[i, S_:S_ + 6], W[i, V_:V_ + 6], W[i, A_:A_ + 6], W[i, VIN_:VIN_ + 6]
        for k in range(6):
            if p < 0:
                v_in[k], v[k], a[k] = 0.0, 0.0, a0[k]
            else:
                v_in[k] = W[p, VIN_ + k] if P[i, TRANSFORM] == CONTINUED else W[p, V_ + k]
                v[k], a[k] = W[p, V_ + k], W[p, A_ + k]
            v[k] += S[k] * qd[i]                     # v_i = v_p + S_i qd_i
            a[k] += S[k] * qdd[i]                    # a_i = a_p + S_i qdd_i + v_in x S_i qd_i
        cross_motion_add(v_in, (S[0] * qd[i], S[1] * qd[i], S[2] * qd[i], S[3] * qd[i], S[4] * qd[i], S[5] * qd[i]),
                         a)
    for i in range(n):                               # f_i = I_i a_i + v_i x* I_i v_i (Alg. 3.1, eq. 10)
        f, v, Iv = W[i, F_:F_ + 6], W[i, V_:V_ + 6], W[i, IV_:IV_ + 6]
        inertia_times(W, i, I_, W[i, A_:A_ + 6], f)
        inertia_times(W, i, I_, v, Iv)
        cross_force_add(v, Iv, f)
    for i in range(n - 1, -1, -1):                   # gather, tips to base (Lemma 1, eq. 5)
        S, f = W[i, S_:S_ + 6], W[i, F_:F_ + 6]
        tau[i] = S[0] * f[0] + S[1] * f[1] + S[2] * f[2] + S[3] * f[3] + S[4] * f[4] + S[5] * f[5]   # S_i^T f_i
        p = int(P[i, PARENT])
        if p >= 0:
            for k in range(6):
                W[p, F_ + k] += f[k]                 # f_p += f_i
