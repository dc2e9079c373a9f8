"""Pinocchio as the independent oracle: same URDF, joints matched by name. Pinocchio is imported when a test
first uses it, so only the tests that compare with it are skipped where it is not installed."""
import numpy as np
import pytest


class _Pinocchio:
    """The ``pinocchio`` module, imported on first attribute access; skips the calling test without it."""

    def __getattr__(self, name):
        return getattr(pytest.importorskip('pinocchio'), name)


pin = _Pinocchio()


class _Calls:
    """Pinocchio's algorithms in our coordinates: q() and v_index map them (in the classes below)."""

    def v(self, v):
        pv = np.zeros(self.pin_model.nv)
        pv[self.v_index] = v
        return pv

    def rnea(self, q, qd, qdd):
        return pin.rnea(self.pin_model, self.data, self.q(q), self.v(qd), self.v(qdd))[self.v_index]

    def crba(self, q):
        M = pin.crba(self.pin_model, self.data, self.q(q))
        M = np.triu(M) + np.triu(M, 1).T
        return M[np.ix_(self.v_index, self.v_index)]

    def aba(self, q, qd, tau):
        return pin.aba(self.pin_model, self.data, self.q(q), self.v(qd), self.v(tau))[self.v_index]


class PinocchioOracle(_Calls):
    def __init__(self, urdf_path, model):
        self.pin_model = pin.buildModelFromUrdf(urdf_path)
        self.data = self.pin_model.createData()
        self.model = model
        self.joints = [self.pin_model.joints[self.pin_model.getJointId(n)] for n in model.joint_names]
        self.v_index = np.array([j.idx_v for j in self.joints])  # our DOF i -> pinocchio velocity index

    def q(self, q):
        """Our joint angles -> pinocchio configuration (continuous joints there are (cos, sin))."""
        pq = pin.neutral(self.pin_model)
        for qi, j in zip(q, self.joints):
            if j.nq == 2:
                pq[j.idx_q:j.idx_q + 2] = np.cos(qi), np.sin(qi)
            else:
                pq[j.idx_q] = qi
        return pq


    def minv(self, q):
        Mi = pin.computeMinverse(self.pin_model, self.data, self.q(q))
        Mi = np.triu(Mi) + np.triu(Mi, 1).T
        return Mi[np.ix_(self.v_index, self.v_index)]


class BlockOracle(_Calls):
    """Pinocchio's model of a URDF string with an optional root joint ('floating': JointModelFreeFlyer, 'planar':
    JointModelPlanar), our coordinates mapped joint by joint (matched by name, the root joint is 'root_joint' in
    both): blocks of q and qd copied, continuous joints' angle as (cos, sin) there."""

    def __init__(self, xml, model, root_joint=None):
        if root_joint is None:
            self.pin_model = pin.buildModelFromXML(xml)
        else:
            root = {'floating': pin.JointModelFreeFlyer, 'planar': pin.JointModelPlanar}[root_joint]()
            self.pin_model = pin.buildModelFromXML(xml, root)
        self.data = self.pin_model.createData()
        self.model = model
        self.joints = [self.pin_model.joints[self.pin_model.getJointId(name)] for name in model.body_joint_names]
        self.v_index = np.concatenate([np.arange(j.idx_v, j.idx_v + j.nv) for j in self.joints]).astype(int)
        assert sorted(self.v_index) == list(range(self.pin_model.nv)) == list(range(model.nv))

    def q(self, q):
        pq = pin.neutral(self.pin_model)
        for b, j in enumerate(self.joints):
            start, width = self.model.idx_q[b], j.nq
            if j.nq == 2 and j.nv == 1:   # a continuous joint
                pq[j.idx_q:j.idx_q + 2] = np.cos(q[start]), np.sin(q[start])
            else:
                pq[j.idx_q:j.idx_q + width] = q[start:start + width]
        return pq

