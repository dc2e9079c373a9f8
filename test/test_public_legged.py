"""A legged robot we did not write: ANYbotics' ANYmal C (test/urdf/real/anymal_c.urdf, BSD-3-Clause; 52 kg, 12
joints, 564 contact points from its collision boxes, cylinders and sphere feet): in process its trunk bobs under a
joint PD as in MuJoCo. (test_legged_loop.py stands it over DDS with `robot-dynamics bringup`.)"""
import os
import warnings

import numpy as np
import pytest

from conftest import TEST_DIR
from robot_dynamics_ros import load_urdf
from robot_dynamics_ros.model.collision import contact_points_from_urdf
from robot_dynamics_ros.model.urdf import URDFWarning
from robot_dynamics_ros.simulation.simulator import Simulator

pytest.importorskip('clarabel')
from robot_dynamics_ros.simulation.ground_contact import Ground  # noqa: E402  (needs clarabel

URDF = os.path.join(TEST_DIR, 'urdf', 'real', 'anymal_c.urdf')
# LF, RF, LH, RH legs: hip abduction, hip flexion, knee (rad): knees bent, the hind legs mirrored
STANCE = np.array([0.0, 0.5, -1.0, 0.0, 0.5, -1.0, 0.0, -0.5, 1.0, 0.0, -0.5, 1.0])
BOB = 0.15 * np.array([0, 1, -2, 0, 1, -2, 0, -1, 2, 0, -1, 2])   # bends and stretches the legs: the trunk bobs
KP, KD, MU, SECONDS = 300.0, 5.0, 0.8, 2.0


def anymal():
    """(model on a free-flyer root, contact points)."""
    with warnings.catch_warnings():   # its camera and hatch inertias break the triangle inequality: a warning each
        warnings.simplefilter('ignore', URDFWarning)
        return load_urdf(URDF, root_joint='floating'), contact_points_from_urdf(URDF)


def test_anymal_bobbing_under_joint_pd_agrees_with_mujoco():
    """From the stance on the ground, the joint PD follows STANCE + BOB sin(2 pi t) for 2 s: the trunk rises and
    falls by about 12 cm each second. Every 0.25 s its height and position agree within 5 mm and its orientation
    within 1 degree of MuJoCo's (hard contact settings of test/mujoco_model.py, sphere feet)."""
    mujoco = pytest.importorskip('mujoco')
    from mujoco_model import MUJOCO_STEP, mjcf
    model, points = anymal()
    sim = Simulator(model, 1e-3, ground=Ground(0.0, MU), contact_points=points, initial_positions=STANCE)
    mj_model = mujoco.MjModel.from_xml_string(mjcf(model, points, MU))
    data = mujoco.MjData(mj_model)
    data.qpos[:] = np.concatenate([sim.q[:3], np.roll(sim.q[3:7], 1), sim.q[7:]])   # MuJoCo: quaternion w first

    def reference(t):
        return STANCE + BOB * np.sin(2.0 * np.pi * t)
    ours, theirs = [], []
    for k in range(int(round(SECONDS / 1e-3))):
        sim.set_command(np.concatenate([np.zeros(6), KP * (reference(sim.t) - sim.q[7:]) - KD * sim.qd[6:]]))
        sim.step()
        if (k + 1) % 250 == 0:
            ours.append(sim.q[:7].copy())
    for k in range(int(round(SECONDS / MUJOCO_STEP))):
        data.qfrc_applied[6:] = KP * (reference(data.time) - data.qpos[7:]) - KD * data.qvel[6:]
        mujoco.mj_step(mj_model, data)
        if (k + 1) % int(round(0.25 / MUJOCO_STEP)) == 0:
            theirs.append(np.concatenate([data.qpos[:3], np.roll(data.qpos[3:7], -1)]))
    ours, theirs = np.array(ours), np.array(theirs)
    angle = 2.0 * np.degrees(np.arccos(np.minimum(1.0, np.abs(np.sum(ours[:, 3:] * theirs[:, 3:], axis=1)))))
    print(f"\nANYmal C vs MuJoCo every 0.25 s: position within {1e3 * np.abs(ours[:, :3] - theirs[:, :3]).max():.3f} "
          f"mm, orientation within {angle.max():.4f} deg")
    assert np.ptp(ours[:, 2]) > 0.05          # it did bob
    assert np.abs(ours[:, :3] - theirs[:, :3]).max() < 5e-3
    assert angle.max() < 1.0

