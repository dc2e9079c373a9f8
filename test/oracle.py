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




def standing_height(urdf, srdf, state, package_dirs, feet=None):
    """The base height at which Pinocchio puts the lowest point of the robot's collision geometry (of the links
    ``feet`` when given; of its body for a foot link without geometry) on the ground z = 0, in the SRDF's
    group_state ``state`` with the base upright at the origin: its forward kinematics and geometry model
    (spheres, boxes, cylinders, and meshes as coal reads them). Also returns the world vertices of those mesh
    geometries at that pose, base at z = 0 (one (k, 3) array each)."""
    import warnings
    model = pin.buildModelFromUrdf(urdf, pin.JointModelFreeFlyer())
    pin.loadReferenceConfigurations(model, srdf, False)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        geometry = pin.buildGeomFromUrdf(model, urdf, pin.COLLISION, package_dirs)
    q = model.referenceConfigurations[state].copy()
    q[:7] = [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]
    data, geometry_data = model.createData(), geometry.createData()
    pin.framesForwardKinematics(model, data, q)
    pin.updateGeometryPlacements(model, data, geometry, geometry_data)
    items = list(zip(geometry_data.oMg, geometry.geometryObjects))
    if feet is not None:   # the feet's geometry; a foot frame without any of its own (a sole): its body's
        frames = {model.getFrameId(link) for link in feet}
        bare = {model.frames[frame].parentJoint for frame in frames - {item.parentFrame for _, item in items}}
        items = [(placement, item) for placement, item in items
                 if item.parentFrame in frames or item.parentJoint in bare]
    lowest, meshes = np.inf, []
    for placement, item in items:
        shape = item.geometry
        if hasattr(shape, 'vertices'):   # a mesh (coal applies the URDF's scale when it reads it)
            meshes.append(np.array(shape.vertices()) @ placement.rotation.T + placement.translation)
            lowest = min(lowest, meshes[-1][:, 2].min())
        elif type(shape).__name__ == 'Sphere':
            lowest = min(lowest, placement.translation[2] - shape.radius)
        elif type(shape).__name__ == 'Box':   # centre minus the half sides projected on the vertical
            lowest = min(lowest, placement.translation[2] - np.abs(placement.rotation[2]) @ shape.halfSide)
        elif type(shape).__name__ == 'Cylinder':   # axis z: its lowest rim point (or face, when upright)
            c = abs(placement.rotation[2, 2])
            lowest = min(lowest, placement.translation[2] - c * shape.halfLength - shape.radius * np.sqrt(1 - c * c))
        else:
            raise NotImplementedError(f"oracle geometry {type(shape).__name__} of {item.name}")
    return -lowest, meshes
