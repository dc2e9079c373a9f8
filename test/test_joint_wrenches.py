"""The wrench each joint transmits (algorithms/joint_wrenches.py, what a force/torque sensor in the joint reads):
against Pinocchio's RNEA joint forces (data.f), bodies matched by joint name, and against the weight a static joint
holds up."""
import os

import numpy as np
import pytest

from conftest import BUNDLED_URDF, ROOT, TEST_URDFS
from oracle import BlockOracle, pin
from robot_dynamics_ros import load_urdf, random_configuration
from robot_dynamics_ros.algorithms import frame_placement, joint_wrenches

QUADRUPED = os.path.join(ROOT, 'urdf', 'quadruped.urdf')
G = 9.81


@pytest.mark.parametrize('urdf, root_joint', [*((path, None) for path in sorted(TEST_URDFS.values())),
                                               (QUADRUPED, 'floating')])
def test_joint_wrenches_are_pinocchios_joint_forces(urdf, root_joint):
    """At random states with random external forces on every body: each body's transmitted wrench equals Pinocchio's
    data.f of its joint after rnea (its [linear; angular] swapped to our [moment; force]) to 1e-10 relative."""
    with open(urdf) as f:
        xml = f.read()
    model = load_urdf(urdf, root_joint=root_joint)
    oracle = BlockOracle(xml, model, root_joint)
    rng = np.random.default_rng(3)
    for _ in range(5):
        q = random_configuration(model, rng)
        qd, qdd = rng.normal(size=model.nv), rng.normal(size=model.nv)
        f_ext = rng.normal(size=(model.nb, 6))
        ours = joint_wrenches(model, q, qd, qdd, f_ext=f_ext)
        forces = [pin.Force.Zero() for _ in range(oracle.pin_model.njoints)]
        for body, joint in enumerate(oracle.joints):
            forces[joint.id] = pin.Force(f_ext[body, 3:], f_ext[body, :3])
        pin.rnea(oracle.pin_model, oracle.data, oracle.q(q), oracle.v(qd), oracle.v(qdd), forces)
        theirs = np.array([np.concatenate([oracle.data.f[joint.id].angular, oracle.data.f[joint.id].linear])
                           for joint in oracle.joints])
        assert np.abs(ours - theirs).max() <= 1e-10 * max(1.0, np.abs(theirs).max())


def test_a_static_joint_holds_up_the_weight_below_it():
    """The bundled arm at rest in a random posture: the force each joint transmits is, in the world, m g straight
    up, m being the mass of the links below it (summed from the URDF's inertial masses), and the moment about the
    joint's origin is that of the weight at their centre of mass: p_com x m g, with p_com from the joint origin."""
    model = load_urdf(BUNDLED_URDF)
    rng = np.random.default_rng(5)
    q = random_configuration(model, rng)
    zero = np.zeros(model.nv)
    wrenches = joint_wrenches(model, q, zero, zero)
    masses = model.inertia[:, 5, 5]
    # Each body's centre of mass in the world: its frame's placement (body_names: the joint's child link) and the
    # centre in the body frame, from the spatial inertia's upper right block m skew(c).
    placements = [frame_placement(model, q, name) for name in model.body_names]
    com = [placement.p + placement.R @ np.array([inertia[2, 4], inertia[0, 5], inertia[1, 3]]) / inertia[5, 5]
           for placement, inertia in zip(placements, model.inertia)]
    for i in range(model.nb):
        below = [k for k in range(i, model.nb) if i in ancestors(model, k)]
        mass = sum(masses[k] for k in below)
        centre = sum(masses[k] * com[k] for k in below) / mass
        joint = placements[i]
        force_world = joint.R @ wrenches[i, 3:]
        moment_world = joint.R @ wrenches[i, :3]
        weight = np.array([0.0, 0.0, -mass * G])
        assert np.allclose(force_world, -weight, atol=1e-9 * mass * G)
        assert np.allclose(moment_world, -np.cross(centre - joint.p, weight), atol=1e-9 * mass * G)


def ancestors(model, k):
    """k and the bodies between it and the root."""
    chain = []
    while k >= 0:
        chain.append(k)
        k = model.parent[k]
    return chain


def test_simulated_sensors_read_the_weight_and_a_held_load():
    """The bundled arm in the Simulator, held still by the efforts that balance gravity and a 20 N load held on its
    last link (rnea with that load as an external force), no friction or damping: after 200 steps the arm has not
    moved (1e-9 rad), and the sensor in each joint reads, in the world, the weight below it plus the load, as the
    identity of the static test above gives it."""
    from robot_dynamics_ros import rnea
    from robot_dynamics_ros.algorithms.kinematics import body_transforms
    from robot_dynamics_ros.simulation import Simulator
    from robot_dynamics_ros.simulation.force_torque import ForceTorqueSensors
    from robot_dynamics_ros.spatial import inverse
    model = load_urdf(BUNDLED_URDF)
    q0 = np.array([0.3, 0.5, -0.2, -1.2, 0.4, 1.1, 0.2])
    sim = Simulator(model, 1e-3, initial_positions=q0, apply_damping=False, apply_friction=False)
    tip = model.body_names[-1]
    load = np.array([0.0, 20.0, -20.0])
    sim.apply_wrench(tip, load)
    origin = frame_placement(model, q0, tip).p
    f_ext = np.zeros((model.nb, 6))
    f_ext[-1] = inverse(body_transforms(model, q0)[-1]).T @ np.concatenate([np.cross(origin, load), load])
    zero = np.zeros(model.nv)
    sim.set_command(rnea(model, q0, zero, zero, f_ext=f_ext))
    sensors = ForceTorqueSensors(sim, model.body_joint_names)
    for _ in range(200):
        sensors.before_step()
        sim.step()
    assert np.abs(sim.q - q0).max() < 1e-9
    readings = sensors.read()
    for i, placement in enumerate(frame_placement(model, q0, name) for name in model.body_names):
        mass = sum(model.inertia[k][5, 5] for k in range(i, model.nb) if i in ancestors(model, k))
        expected = -(np.array([0.0, 0.0, -mass * G]) + load)   # the parent holds the weight and the load
        assert np.allclose(placement.R @ readings[i, 3:], expected, atol=1e-6 * mass * G), (i, readings[i])
