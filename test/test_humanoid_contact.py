"""A humanoid on its mesh soles (issue 39): PAL Robotics' TALOS (example-robot-data's talos_full_v2, 93.3 kg, 44
joints on a free-flyer root, 32 degrees of freedom with its grippers' 12 mimic joints coupled: the default) stands for 2 s in its SRDF ``half_sitting`` posture under a joint PD, on contact points
from its collision meshes (``model/collision.py``: 32 hull vertices per sole). Its trunk holds the static deflection
that the PD's stiffness predicts, the feet carry its weight, and no step takes the interior-point solver."""
import warnings

import numpy as np
import pytest

from conftest import example_robot_data
from robot_dynamics_ros import load_urdf
from robot_dynamics_ros.algorithms.centroidal import center_of_mass_jacobian
from robot_dynamics_ros.algorithms.crba import crba
from robot_dynamics_ros.algorithms.kinematics import frame_jacobian
from robot_dynamics_ros.algorithms.rnea import rnea
from robot_dynamics_ros.model.collision import contact_points_from_urdf
from robot_dynamics_ros.model.srdf import load_srdf, stance_configuration
from robot_dynamics_ros.model.urdf import URDFWarning
from robot_dynamics_ros.simulation.simulator import Simulator

pytest.importorskip('trimesh')
pytest.importorskip('clarabel')
from robot_dynamics_ros.simulation.bounded_solve import SWEEP_TOLERANCE  # noqa: E402
from robot_dynamics_ros.simulation.ground_contact import Ground  # noqa: E402

DT, MU, G, SECONDS, SETTLE = 1e-3, 0.8, 9.81, 2.0, 0.25
FEET = ('leg_left_6_link', 'leg_right_6_link')
# The joint PD: stiff enough to hold the stance. Standing is an inverted pendulum of m g h = 915 N x ~0.9 m ~ 820
# N m/rad on the ankle, hip and torso pitch joints in series: at 1e3 N m/rad each (333 in series) TALOS tips over,
# in MuJoCo as in ours (a 5 degree lean at 0.5 s, 60 degrees at 2 s); at 1e4 (3.3e3 in series) it stands.
KP, KD = 1e4, 100.0


def talos():
    """(model on a free-flyer root, contact points, the SRDF's half_sitting joint positions)."""
    urdf = example_robot_data('talos_data/robots/talos_full_v2.urdf')
    with warnings.catch_warnings():   # large meshes reduced
        warnings.simplefilter('ignore', URDFWarning)
        model = load_urdf(urdf, root_joint='floating')
        name, q, _ = stance_configuration(model, load_srdf(example_robot_data('talos_data/srdf/talos.srdf')))
        points = contact_points_from_urdf(urdf)
    assert name == 'half_sitting'
    return model, points, q[model.joint_q_index]


def pd_gains(model, q):
    """Per joint (KP, KD), capped where the joint's own inertia I (M's diagonal) is too small for an explicit PD at
    DT (kp DT^2 / I <= 1/4, kd DT / I <= 1/2): the grippers' fingertips (I ~ 1e-6 kg m^2) would diverge."""
    inertia = np.diag(crba(model, q))[6:]
    return np.minimum(KP, 0.25 * inertia / DT ** 2), np.minimum(KD, 0.5 * inertia / DT)


def static_deflection(model, q, kp):
    """(base displacement (3,), base rotation (3,)) of the linear static equilibrium under gravity with both feet
    clamped: K d + g(q) = J^T f, J d = 0 (K: the joints' stiffnesses kp, nothing on the root; J: the feet's frame
    Jacobians; f: their wrenches), solved as one KKT system."""
    nv = model.nv
    g = rnea(model, q, np.zeros(nv), np.zeros(nv))
    J = np.vstack([frame_jacobian(model, q, foot) for foot in FEET])
    K = np.diag(np.concatenate([np.zeros(6), kp]))
    kkt = np.block([[K, -J.T], [J, np.zeros((len(J), len(J)))]])
    d = np.linalg.lstsq(kkt, np.concatenate([-g, np.zeros(len(J))]), rcond=None)[0][:nv]
    return d[:3], d[3:6]   # the root's velocity is (linear, angular) in its own frame: upright, the world's


def test_talos_stands_in_half_sitting_on_its_mesh_soles_holding_the_pds_static_deflection():
    """2 s from half_sitting on the ground. After SETTLE s: the trunk's height within 2 mm and its orientation
    within 1 degree of the PD's static deflection (``static_deflection``; its sole's lowest hull vertices span 1.9 mm
    in height, so the feet may rest on different ones than at the start; 1 degree as ANYmal C against MuJoCo, and a
    fall exceeds it within 0.5 s); the contact forces on the soles alone, their mean vertical sum m g + m dv_com / T
    (the momentum balance over the window) within m SWEEP_TOLERANCE / DT (the sweeps' velocity tolerance as a
    force); no interior-point solve."""
    model, points, stance = talos()
    sim = Simulator(model, DT, ground=Ground(0.0, MU), contact_points=points, initial_positions=stance)
    kp, kd = pd_gains(model, sim.q)
    q0 = sim.q.copy()
    displacement, rotation = static_deflection(model, q0, kp)
    mass = model.inertia[:, 5, 5].sum()
    on_feet = np.array([point.link in FEET for point in points])
    settle = int(round(SETTLE / DT))
    heights, angles, vertical, off_feet, com_velocity = [], [], [], [], []
    for k in range(int(round(SECONDS / DT))):
        if k == settle:
            com_velocity.append((center_of_mass_jacobian(model, sim.q) @ sim.qd)[2])
        sim.set_command(np.concatenate([np.zeros(6), kp * (stance - sim.q[7:]) - kd * sim.qd[6:]]))
        sim.step()
        if k >= settle:
            x, y, z, w = sim.q[3:7]
            heights.append(sim.q[2] - q0[2])
            angles.append(2.0 * np.array([x, y, z]) * np.sign(w))   # small rotations: 2 (x, y, z)
            vertical.append(sim.contact_forces[on_feet, 2].sum())
            off_feet.append(np.abs(sim.contact_forces[~on_feet]).max())
    com_velocity.append((center_of_mass_jacobian(model, sim.q) @ sim.qd)[2])
    heights, angles = np.array(heights), np.array(angles)
    window = len(vertical) * DT
    expected = mass * G + mass * (com_velocity[1] - com_velocity[0]) / window
    print(f"\nTALOS in half_sitting, {len(points)} contact points ({on_feet.sum()} on the soles): trunk height "
          f"{1e3 * heights.min():.3f}..{1e3 * heights.max():.3f} mm (static deflection {1e3 * displacement[2]:.3f}), "
          f"pitch {np.degrees(angles[:, 1]).min():.3f}..{np.degrees(angles[:, 1]).max():.3f} deg (static "
          f"{np.degrees(rotation[1]):.3f}); mean vertical force {np.mean(vertical):.4f} N, expected {expected:.4f}, "
          f"m g {mass * G:.4f}; solves {sim.contact.solves}")
    assert np.abs(heights - displacement[2]).max() < 2e-3
    assert np.degrees(np.abs(angles - rotation).max()) < 1.0
    assert max(off_feet) == 0.0
    assert abs(np.mean(vertical) - expected) <= mass * SWEEP_TOLERANCE / DT
    assert sim.contact.solves['interior point'] == 0
