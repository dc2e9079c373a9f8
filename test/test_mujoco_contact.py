"""MuJoCo as a second simulator (test-only): the bundled quadruped under the same joint PD from the same pose in
our contact simulator and in MuJoCo, with MuJoCo's contact made hard (solref 2 ms time constant, solimp 0.99-0.999,
elliptic cones, noslip iterations, condim 3: sliding friction only, as ours); after 2 s the trunk's height agrees
within 5 mm and its orientation within 1 deg, and at every 0.1 s on the way."""
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from conftest import ROOT
from robot_dynamics_ros import load_urdf
from robot_dynamics_ros.floating_simulation import FloatingBaseSimulator
from robot_dynamics_ros.ground_contact import contact_points_from_urdf

mujoco = pytest.importorskip('mujoco')
URDF = f'{ROOT}/urdf/quadruped.urdf'
STAND = np.array([0.0, 0.6, -1.2] * 4)
KP, KD = 60.0, 2.0     # N m/rad, N m s/rad: soft enough that the trunk sags and rocks (something to compare)
MU = 0.8


def mjcf(urdf_path, trunk_height):
    """The URDF as MJCF (this robot's subset: translations only, box inertias, sphere and box collisions), the trunk
    on a free joint at trunk_height, a ground plane at z = 0."""
    root = ET.parse(urdf_path).getroot()
    links = {link.get('name'): link for link in root.iter('link')}
    children = {}
    for joint in root.iter('joint'):
        children.setdefault(joint.find('parent').get('link'), []).append(joint)

    def inertial(link):
        inertial, inertia = link.find('inertial'), link.find('inertial/inertia')
        return (f'<inertial pos="{inertial.find("origin").get("xyz")}" mass="{inertial.find("mass").get("value")}" '
                f'diaginertia="{inertia.get("ixx")} {inertia.get("iyy")} {inertia.get("izz")}"/>')

    def geoms(link):
        out = ''
        for collision in link.iter('collision'):
            origin = collision.find('origin')
            pos = origin.get('xyz') if origin is not None else '0 0 0'
            shape = collision.find('geometry')[0]
            if shape.tag == 'sphere':
                out += f'<geom type="sphere" size="{shape.get("radius")}" pos="{pos}"/>'
            elif shape.tag == 'box':
                half = ' '.join(str(float(v) / 2) for v in shape.get('size').split())
                out += f'<geom type="box" size="{half}" pos="{pos}"/>'
        return out

    def body(joint):
        child = links[joint.find('child').get('link')]
        inner = ''.join(body(j) for j in children.get(child.get('name'), []))
        return (f'<body name="{child.get("name")}" pos="{joint.find("origin").get("xyz")}">{inertial(child)}'
                f'<joint name="{joint.get("name")}" type="hinge" axis="{joint.find("axis").get("xyz")}" '
                f'damping="{joint.find("dynamics").get("damping")}"/>{geoms(child)}{inner}</body>')
    trunk = links['trunk']
    return ('<mujoco><option timestep="0.001" integrator="Euler" cone="elliptic" impratio="10" noslip_iterations="20"/>'
            f'<default><geom condim="3" friction="{MU} 0 0" solref="0.002 1" solimp="0.99 0.999 0.0001"/></default>'
            '<worldbody><geom type="plane" size="5 5 0.1"/>'
            f'<body name="trunk" pos="0 0 {trunk_height}"><freejoint/>{inertial(trunk)}{geoms(trunk)}'
            f'{"".join(body(j) for j in children["trunk"])}</body></worldbody></mujoco>')


def test_the_quadruped_under_joint_pd_moves_as_in_mujoco():
    model = load_urdf(URDF, root_joint='floating')
    ours = FloatingBaseSimulator(model, 1e-3, contact_points_from_urdf(URDF), initial_positions=STAND,
                                 ground_friction=MU)
    theirs_model = mujoco.MjModel.from_xml_string(mjcf(URDF, ours.q[2]))
    theirs = mujoco.MjData(theirs_model)
    assert [theirs_model.joint(i).name for i in range(1, theirs_model.njnt)] == list(model.joint_names)
    theirs.qpos[7:] = STAND
    mujoco.mj_forward(theirs_model, theirs)
    heights, angles = [], []
    for step in range(1, 2001):
        ours.set_command(KP * (STAND - ours.q[7:]) - KD * ours.v[6:])
        ours.step()
        theirs.qfrc_applied[6:] = KP * (STAND - theirs.qpos[7:]) - KD * theirs.qvel[6:]
        mujoco.mj_step(theirs_model, theirs)
        if step % 100 == 0:
            ours_quaternion = ours.q[3:7]                                   # x, y, z, w
            theirs_quaternion = np.roll(theirs.qpos[3:7], -1)              # MuJoCo's w, x, y, z
            heights.append(abs(ours.q[2] - theirs.qpos[2]))
            angles.append(np.degrees(2 * np.arccos(min(1.0, abs(ours_quaternion @ theirs_quaternion)))))
    print(f"quadruped against MuJoCo over 2 s: trunk height within {max(heights) * 1e3:.3f} mm, orientation within "
          f"{max(angles):.4f} deg")
    assert max(heights) < 5e-3 and max(angles) < 1.0
