"""MuJoCo as the plant of the gait controller (test_gait.py, benchmarks/bench_gait.py): MuJoCo's own import of the
robot's URDF (as benchmarks/bench_contact.py makes it: collision primitives as they are, mesh collisions dropped, a
free root joint, a ground plane, the robot touching the ground alone; MuJoCo's default soft contact at a 1 ms step),
the control law (control/gait.py) fed from MuJoCo's state every step."""
import os
import time
import warnings
import xml.etree.ElementTree as ET

import numpy as np

try:
    import mujoco
except ImportError:   # test_gait.py skips its MuJoCo cases where it is missing (mujoco: the test extra)
    mujoco = None

from robot_dynamics_ros import load_srdf, load_urdf
from robot_dynamics_ros.model.collision import contact_points_from_urdf
from robot_dynamics_ros.model.srdf import stance_configuration

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PUBLIC = {   # robot -> URDF, SRDF in example-robot-data's robots/ folder
    'a1': ('a1_description/urdf/a1.urdf', 'a1_description/srdf/a1.srdf'),
    'go1': ('go1_description/urdf/go1.urdf', 'go1_description/srdf/go1.srdf'),
    'anymal_c': ('anymal_c_simple_description/urdf/anymal.urdf', 'anymal_c_simple_description/srdf/anymal.srdf'),
    'solo12': ('solo_description/robots/solo12.urdf', 'solo_description/srdf/solo.srdf'),
    'hyq': ('hyq_description/robots/hyq_no_sensors.urdf', 'hyq_description/srdf/hyq.srdf'),
    'go2': ('go2_description/urdf/go2.urdf', 'go2_description/srdf/go2.srdf'),
    'anymal_b': ('anymal_b_simple_description/robots/anymal.urdf', 'anymal_b_simple_description/srdf/anymal.srdf'),
    'b1': ('b1_description/urdf/b1.urdf', 'b1_description/srdf/b1.srdf'),
}
QUADRUPED_STANCE = np.tile([0.0, 0.6, -1.2], 4)   # config/quadruped.yaml
STEP = 1e-3
MU = 0.8          # the ground's; the controller keeps its forces in a cone of 0.6
START = 1.0       # s standing before the command


def robot(name, robots_folder=None):
    """(URDF path, model on a free-flyer root, contact points, stance joint positions, feet links or None): the
    bundled quadruped ('quadruped', its stance of config/quadruped.yaml) or a robot of PUBLIC (its SRDF's stance and
    feet) from example-robot-data's robots/ folder."""
    if name == 'quadruped':
        urdf = os.path.join(ROOT, 'urdf', 'quadruped.urdf')
        return (urdf, load_urdf(urdf, root_joint='floating'), contact_points_from_urdf(urdf),
                QUADRUPED_STANCE.copy(), None)
    urdf, srdf_path = (os.path.join(robots_folder, path) for path in PUBLIC[name])
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')   # public URDFs' inertias that break the triangle inequality
        model = load_urdf(urdf, root_joint='floating')
        points = contact_points_from_urdf(urdf)
    srdf = load_srdf(srdf_path)
    _, q, _ = stance_configuration(model, srdf)
    return urdf, model, points, q[model.joint_q_index], srdf.feet


def mujoco_model(urdf):
    """MuJoCo's import of the URDF (benchmarks/bench_contact.py's): visuals and mesh collisions dropped, inertias
    MuJoCo refuses made acceptable (a 1 mg dummy link's dropped, one breaking the triangle inequality mended), a free
    root, a ground plane of friction MU, no collisions of the robot with itself."""
    robot = ET.parse(urdf).getroot()
    for link in robot.findall('link'):
        for visual in link.findall('visual'):
            link.remove(visual)
        inertial = link.find('inertial')
        if inertial is not None and float(inertial.find('mass').get('value')) < 1e-5:
            link.remove(inertial)
        elif inertial is not None:
            inertia = inertial.find('inertia')
            I = np.array([[float(inertia.get(f'i{a}{b}' if f'i{a}{b}' in inertia.attrib else f'i{b}{a}'))
                           for b in 'xyz'] for a in 'xyz'])
            values, vectors = np.linalg.eigh(I)
            values = np.maximum(values, 1e-9)
            if not np.all(values[:2].sum() >= values[2] * (1 - 1e-9)):
                values[2] = values[:2].sum()
            I = vectors @ np.diag(values) @ vectors.T
            for a, b in ('xx', 'xy', 'xz', 'yy', 'yz', 'zz'):
                inertia.set(f'i{a}{b}', repr(float(I['xyz'.index(a), 'xyz'.index(b)])))
        for collision in link.findall('collision'):
            if collision.find('geometry/mesh') is not None:
                link.remove(collision)
    extension = ET.SubElement(robot, 'mujoco')
    ET.SubElement(extension, 'compiler', discardvisual='true', balanceinertia='true')
    spec = mujoco.MjSpec.from_string(ET.tostring(robot, encoding='unicode'))
    spec.option.timestep = STEP
    spec.worldbody.first_body().add_freejoint()
    spec.worldbody.add_geom(type=mujoco.mjtGeom.mjGEOM_PLANE, size=[0, 0, 1], friction=[MU, 0.005, 0.0001])
    model = spec.compile()
    # the robot's geoms touch the ground alone, as in our Simulator: public URDFs' collision boxes overlap (B1's
    # thighs lie in its trunk's box at the stance), and MuJoCo collides all but a parent and its child
    model.geom_conaffinity[model.geom_bodyid != 0] = 0
    return model


def walk(urdf, controller, command, seconds, start=START):
    """Stands the robot at its stance on MuJoCo's ground, stands `start` s, then commands (vx, vy, wz) for the rest
    of `seconds`. Returns a dict: 'achieved' (vx, vy, wz) the mean over the run's second half in the base's heading
    frame, 'tilt' the largest tilt (deg), 'fell' (tilt over 45 deg or the base under half its standing height: the
    run stops), 'update_us' the controller's update times (after the first 200), 'log' (t, x, y, yaw) per step."""
    model = controller.model
    stance = controller.reference.positions[0]
    mj_model = mujoco_model(urdf)
    data = mujoco.MjData(mj_model)
    names = [mj_model.joint(j).name for j in range(1, mj_model.njnt)]
    order = np.array([model.joint_names.index(name) for name in names])   # MuJoCo's joint k is our joint order[k]
    height = controller.standing_height(stance)
    data.qpos[:7] = 0.0, 0.0, height, 1.0, 0.0, 0.0, 0.0   # MuJoCo: quaternion w first
    data.qpos[7:] = stance[order]
    mujoco.mj_forward(mj_model, data)
    q, v = model.neutral(), np.zeros(model.nv)
    joints_q, joints_v = np.asarray(model.joint_q_index)[order], np.asarray(model.joint_v_index)[order]
    rows, update_us, fell = [], [], False
    for k in range(int(round(seconds / STEP))):
        if data.time >= start - 1e-9:
            controller.set_command(*command)
        R = data.xmat[1].reshape(3, 3)   # MuJoCo: free joint's linear velocity in the world, angular in the body
        q[:7] = *data.qpos[:3], *data.qpos[4:7], data.qpos[3]
        q[joints_q] = data.qpos[7:]
        v[:6] = *(R.T @ data.qvel[:3]), *data.qvel[3:6]
        v[joints_v] = data.qvel[6:]
        started = time.perf_counter()
        tau = controller.update(q, v, data.time)
        update_us.append(1e6 * (time.perf_counter() - started))
        data.qfrc_applied[:6] = 0.0
        data.qfrc_applied[6:] = tau[order]
        mujoco.mj_step(mj_model, data)
        R = data.xmat[1].reshape(3, 3)
        yaw = np.arctan2(R[1, 0], R[0, 0])
        heading_velocity = np.array([[np.cos(yaw), np.sin(yaw)], [-np.sin(yaw), np.cos(yaw)]]) @ data.qvel[:2]
        tilt = np.degrees(np.arccos(np.clip(R[2, 2], -1.0, 1.0)))
        rows.append([data.time, *heading_velocity, (R @ data.qvel[3:6])[2], tilt, data.qpos[0], data.qpos[1], yaw])
        if tilt > 45.0 or data.qpos[2] < 0.5 * height:
            fell = True
            break
    rows = np.array(rows)
    second_half = rows[:, 0] > seconds / 2.0
    return {'achieved': rows[second_half, 1:4].mean(axis=0) if second_half.any() else np.full(3, np.nan),
            'tilt': rows[:, 4].max(), 'fell': fell, 'update_us': np.array(update_us[200:]),
            'log': rows[:, [0, 5, 6, 7]]}
