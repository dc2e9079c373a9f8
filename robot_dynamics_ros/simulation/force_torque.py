"""Force/torque sensors in the simulated joints (as gz's force_torque sensor, read through ros2_control's
force_torque_sensor_broadcaster): the wrench each named joint transmits in the motion of the last step."""
import importlib.util

import numpy as np

from ..algorithms.backends import compiled
from ..algorithms.joint_wrenches import joint_wrenches
from ..algorithms.kinematics import body_transforms, frame_placement
from ..algorithms.rnea import rnea_kernel
from ..spatial import inverse

NUMBA = importlib.util.find_spec('numba') is not None


class ForceTorqueSensors:
    """Sensors in the joints ``joints`` of ``sim`` (a Simulator). Call ``before_step()`` before each step;
    ``read()`` then gives, per joint, the wrench [moment; force] the parent applies on the child link through the
    joint, in the child link's frame (the joint's), from RNEA's gather at the step's start state with the step's
    acceleration (qd after - qd before) / dt and the external wrench acting (algorithms/joint_wrenches.py).
    Robots with ground contact are refused: the contact forces are not among the external forces here yet."""

    def __init__(self, sim, joints):
        model = sim.model
        unknown = [joint for joint in joints if joint not in model.body_joint_names]
        if unknown:
            raise ValueError(f"force/torque sensors: no joint {unknown} in {model.name!r} (moving joints: "
                             f"{list(model.body_joint_names)})")
        if sim.contact is not None:
            raise ValueError("force/torque sensors on a robot with ground contact are not supported yet")
        self.sim, self.joints = sim, list(joints)
        self.bodies = [model.body_joint_names.index(joint) for joint in joints]
        self.links = [model.body_names[body] for body in self.bodies]   # the child link: the sensor's frame
        self.kernel = compiled(rnea_kernel) if NUMBA else rnea_kernel
        self.before_step()

    def before_step(self):
        self.q, self.qd = self.sim.q.copy(), self.sim.qd.copy()

    def read(self):
        """(len(joints), 6) wrenches [moment; force] in the child links' frames."""
        sim = self.sim
        qdd = (sim.qd - self.qd) / sim.dt
        wrenches = joint_wrenches(sim.model, self.q, self.qd, qdd, sim.gravity, self._external_forces(), self.kernel)
        return wrenches[self.bodies]

    def _external_forces(self):
        """(nb, 6) the push and the held wrench (world coordinates, at a link's origin) on their bodies, in the
        bodies' frames: f_body = (body_X_world)^-T [torque + p x force; force]; None when none acts."""
        acting = [wrench for wrench in (self.sim.held_wrench, self.sim.push_wrench) if wrench is not None]
        if not acting:
            return None
        model = self.sim.model
        f_ext, X0 = np.zeros((model.nb, 6)), body_transforms(model, self.q)
        for link, wrench, *_ in acting:
            body = model.frames[link].body
            if body < 0:   # on the fixed root: it moves nothing
                continue
            origin = frame_placement(model, self.q, link).p
            about_world_origin = np.concatenate([wrench[:3] + np.cross(origin, wrench[3:]), wrench[3:]])
            f_ext[body] += inverse(X0[body]).T @ about_world_origin
        return f_ext
