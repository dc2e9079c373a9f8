"""Issue 39's scenarios on public quadrupeds of example-robot-data (A1, Go1, ANYmal C), as a user gets them: their
URDF's collision primitives, their SRDF's stance, our simulator beside MuJoCo on the same URDF (its own importer,
soft contact: test/mujoco_walk.py) under the same joint PD and reference, from the same state.

- trotting in place (benchmarks/bench_contact.py's reference: diagonal pairs flexing thigh and knee by up to 0.5 rad
  at 2 Hz, so feet leave and touch the ground four times a second);
- tipping over without effort: the legs fold onto their stops and the robot comes down on its trunk and knees.

Every step is to be the one compiled call's (none left to the staged path) and none the interior-point solver's."""
import numpy as np
import pytest

from conftest import example_robot_data

mujoco = pytest.importorskip('mujoco')
import mujoco_walk  # noqa: E402
from robot_dynamics_ros.simulation.ground_contact import Ground  # noqa: E402
from robot_dynamics_ros.simulation.simulator import Simulator  # noqa: E402

ROBOTS = ('a1', 'go1', 'anymal_c')
GAINS = {'a1': (100.0, 2.0), 'go1': (100.0, 2.0), 'anymal_c': (300.0, 5.0)}   # bench_contact.py's joint PD
DT, MU, SECONDS = 1e-3, mujoco_walk.MU, 3.0
DIAGONAL = {'FL': True, 'RR': True, 'LF': True, 'RH': True, 'FR': False, 'RL': False, 'RF': False, 'LH': False}


def trot(joint_names, stance, t):
    """bench_contact.trot_reference: each diagonal pair in turn flexes thigh and knee (away from zero) by 0.5 sin^+."""
    phase = np.sin(2.0 * np.pi * 2.0 * t)
    target = stance.copy()
    for j, name in enumerate(joint_names):
        leg = name[:2].upper()
        if leg in DIAGONAL and 'hip' not in name.lower() and not name.endswith('HAA'):
            target[j] += 0.5 * max(phase if DIAGONAL[leg] else -phase, 0.0) * (np.sign(stance[j]) or 1.0)
    return target


def cos_tilt(quaternion_xyzw):
    x, y = quaternion_xyzw[0], quaternion_xyzw[1]
    return 1.0 - 2.0 * (x * x + y * y)


def run_both(name, reference, gains):
    """Ours and MuJoCo for SECONDS under tau = kp (reference(t) - q) - kd qd from the stance: (simulator, MjData,
    per step (our base height, MuJoCo's, our cos tilt, MuJoCo's, our lowest point's height))."""
    urdf, model, points, stance, _ = mujoco_walk.robot(name, example_robot_data())
    kp, kd = gains
    sim = Simulator(model, DT, ground=Ground(0.0, MU), contact_points=points, initial_positions=stance,
                    command_timeout=None)
    mj_model = mujoco_walk.mujoco_model(urdf)
    data = mujoco.MjData(mj_model)
    order = np.array([model.joint_names.index(mj_model.joint(j).name) for j in range(1, mj_model.njnt)])
    data.qpos[:7] = np.concatenate([sim.q[:3], np.roll(sim.q[3:7], 1)])   # MuJoCo: quaternion w first
    data.qpos[7:] = sim.q[7:][order]
    log = []
    for _ in range(int(round(SECONDS / DT))):
        target = reference(model.joint_names, stance, sim.t)
        sim.set_command(np.concatenate([np.zeros(6), kp * (target - sim.q[7:]) - kd * sim.qd[6:]]))
        sim.step()
        target = reference(model.joint_names, stance, data.time)[order]
        data.qfrc_applied[6:] = kp * (target - data.qpos[7:]) - kd * data.qvel[6:]
        mujoco.mj_step(mj_model, data)
        log.append((sim.q[2], data.qpos[2], cos_tilt(sim.q[3:7]), cos_tilt(np.roll(data.qpos[3:7], -1)),
                    sim.contact.lowest_height(sim.q)))
    return sim, data, np.array(log)


def assert_one_call_steps_only(sim):
    assert sim.contact.solves['interior point'] == 0
    assert sim.contact_step.steps == int(round(SECONDS / DT))


@pytest.mark.parametrize('name', ROBOTS)
def test_public_quadrupeds_trot_in_place_upright_at_mujocos_height(name):
    """3 s of trotting: both keep the robot upright (tilted by less than 10 degrees), and over the last second our
    base's mean height is MuJoCo's within 2 cm, under a tenth of the smallest robot's standing height (0.27 m): the
    same gait on its feet, not one sagging onto its knees or bouncing off the ground (the trot itself moves the base
    by 1.2-1.6 cm in MuJoCo). Feet touching down take the bounded sweeps."""
    sim, _, log = run_both(name, trot, GAINS[name])
    ours, theirs, our_tilt, their_tilt, _ = log.T
    assert np.all(their_tilt > np.cos(np.radians(10.0)))   # the reference: MuJoCo keeps it upright
    assert np.all(our_tilt > np.cos(np.radians(10.0)))
    last_second = slice(-int(round(1.0 / DT)), None)
    print(f"{name}: mean base height over the last second {ours[last_second].mean():.4f} m, MuJoCo "
          f"{theirs[last_second].mean():.4f} m")
    assert abs(ours[last_second].mean() - theirs[last_second].mean()) < 0.02
    assert_one_call_steps_only(sim)
    assert sim.contact.solves['bounded'] > 0


def limp(joint_names, stance, t):
    return stance


@pytest.mark.parametrize('name', ROBOTS)
def test_public_quadrupeds_without_effort_tip_onto_their_trunk_and_knees(name):
    """No effort (gains zero) from the stance: the legs fold onto their stops, the robot comes down on its trunk
    and knees and lies still (every speed under 1 mm/s or 1 mrad/s after 3 s) with the trunk among the bodies
    carrying it, never deeper into the ground than a point falling from the stance height h0 travels in a step,
    sqrt(2 g h0) dt (a point that was not a contact candidate, lifted out at the next step's start). The
    stops the folding legs reach enter each step as rows (constraint generation) in the one call. A1 and Go1 come
    down on the same bodies as in MuJoCo but rest in another posture (A1 rolled by 25 degrees: its trunk's impact is
    rigid here, soft there), so this checks their physics; ANYmal C's posture is checked against MuJoCo below."""
    sim, _, log = run_both(name, limp, (0.0, 0.0))
    ours, _, _, _, lowest = log.T
    assert ours[-1] < 0.5 * ours[0]
    assert np.max(np.abs(sim.qd)) < 1e-3
    loaded = {sim.model.body_names[body] for body in sim.contact.body[sim.contact_forces[:, 2] > 0]}
    assert sim.model.body_names[0] in loaded, loaded   # the trunk rests on the ground
    assert np.min(lowest) > -np.sqrt(2 * 9.81 * ours[0]) * DT
    assert_one_call_steps_only(sim)


@pytest.mark.parametrize('name', ROBOTS)
def test_public_quadrupeds_lying_without_effort_gain_no_energy_and_come_to_rest(name):
    """Without effort, from 2 s (down on the trunk and knees) to 8 s: nothing does work on the robot but gravity and
    the dissipative contacts and stops, so its energy never rises by more than rounding (1e-9 J a step), and it comes
    to rest (every speed under 1 um/s or 1 urad/s). A1 lies with its right front calf on its lower stop: the joints'
    bounds taken before a penetration was projected out of q let the step carry that calf past its stop; the clip to
    the limits moved it back unseen by the contacts, its foot sank 24 um, was lifted out again, and the robot gained
    0.33 J in 8 s and never came to rest (speeds up to 14 mrad/s at 8 s)."""
    urdf, model, points, stance, _ = mujoco_walk.robot(name, example_robot_data())
    sim = Simulator(model, DT, ground=Ground(0.0, MU), contact_points=points, initial_positions=stance,
                    command_timeout=None)
    energy, speed = [], []
    for k in range(int(round(8.0 / DT))):
        sim.set_command(np.zeros(model.nv))
        sim.step()
        if sim.t > 2.0 - DT / 2:
            energy.append(sim.total_energy())
            speed.append(np.max(np.abs(sim.qd)))
    assert np.max(np.diff(energy)) < 1e-9
    assert max(speed[-1000:]) < 1e-6


def test_anymal_c_without_effort_lies_at_mujocos_height():
    """ANYmal C tipped onto its trunk and knees rests at MuJoCo's base height within 5 mm (as standing:
    test_ground_contact)."""
    _, _, log = run_both('anymal_c', limp, (0.0, 0.0))
    ours, theirs = log[-1, 0], log[-1, 1]
    assert abs(ours - theirs) < 5e-3
