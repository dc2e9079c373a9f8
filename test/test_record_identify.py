"""excite -> record -> identify end to end on the bundled arm: the three README commands, the recording made
by the simulator and the computed-torque controller running as processes over DDS.

The recording is noise-free and record's bag says how its samples relate to the simulator's steps (sampling
'simulator'), so identify's model is what produced the data: the check is the one of
test_identification_statistics.py's noise-free test, on the figures identify wrote. The truths lie within the
reported 95 % intervals as often as a binomial test at ALPHA accepts, and every parameter with a std below 2 % of
its value lies within 2 % of the URDF's. That the estimate means something is checked on a held-out trajectory
simulated in process: torque error below 1 % (the effort noise of the noisy tests; noise-free it is ~1e-6), for
the base parameters and for the physically consistent URDF that identify writes.
"""
import os
import subprocess
import sys

import numpy as np
import pytest
import yaml
from scipy.stats import binom

pytest.importorskip('rclpy')
pytest.importorskip('rosbags')

from conftest import BUNDLED_URDF, ROOT  # noqa: E402
from ros_helpers import domain_id  # noqa: E402
from simulated_recording import record_in_process  # noqa: E402
from robot_dynamics_ros import load_urdf  # noqa: E402
from robot_dynamics_ros.algorithms.regressor import standard_parameters  # noqa: E402
from robot_dynamics_ros.cli import main as cli_main  # noqa: E402
from robot_dynamics_ros.commands.processes import isolated_ros_env  # noqa: E402
from robot_dynamics_ros.parameters import numeric_base_parameters  # noqa: E402
from robot_dynamics_ros.parameters.equations import identification_equations  # noqa: E402
from robot_dynamics_ros.parameters.excitation import optimise_excitation  # noqa: E402
from robot_dynamics_ros.parameters.recordings import load_recording  # noqa: E402

FRICTION = dict(viscous=True, coulomb=True)
ALPHA = 1e-3   # false-alarm probability of the coverage test


def test_excite_record_identify(tmp_path, capsys):
    pytest.importorskip('cvxpy')   # optional: the 'ident' extra; no rosdep key
    traj, bag, params = tmp_path / 'traj.yaml', tmp_path / 'rec', tmp_path / 'params.yaml'
    assert cli_main(['excite', BUNDLED_URDF, '-o', str(traj), '--duration', '3', '--harmonics', '3',
                     '--budget', '600', '--max-evaluations', '1500', '--friction']) == 0   # reproducible
    record = subprocess.run([sys.executable, '-m', 'robot_dynamics_ros.cli', 'record', str(traj), '-o', str(bag),
                             '--domain-id', str(domain_id(23))], cwd=ROOT, env=isolated_ros_env(domain_id(23)),
                            capture_output=True, text=True, timeout=300)
    print(record.stdout, record.stderr)
    assert record.returncode == 0
    assert cli_main(['identify', BUNDLED_URDF, str(bag), '-o', str(params), '--weighted', '--friction',
                     '--urdf-out', str(tmp_path / 'id.urdf')]) == 0
    out, err = capsys.readouterr()
    assert 'physically consistent identified model' in err
    print(out)

    arm = load_urdf(BUNDLED_URDF)
    recording = load_recording(bag).for_model(arm)
    assert recording.t[-1] - recording.t[0] >= 4.0              # 1 s start + 3 s trajectory + 0.5 s settle
    assert recording.sampling == 'simulator'
    document = yaml.safe_load(params.read_text())
    assert document['sampling'] == 'simulator'
    parameters = document['base_parameters']
    names = list(parameters)
    beta, std, interval, truth = (np.array([parameters[n][key] for n in names])
                                  for key in ('value', 'std', 'interval95', 'urdf_value'))
    base = numeric_base_parameters(arm, **FRICTION)
    assert list(base.names) == names
    np.testing.assert_allclose(truth, base.project(standard_parameters(arm, **FRICTION)), rtol=1e-9, atol=1e-12)
    error = np.abs(beta - truth)
    covered = np.sum(error <= interval)
    well = (std < 0.02 * np.abs(beta)) & (truth != 0)
    relative = error[well] / np.abs(truth[well])
    print(f"{covered} of {len(names)} truths within the 95 % intervals; {well.sum()} with std < 2 %, worst "
          f"relative error {relative.max():.2g}")
    assert covered >= binom.ppf(ALPHA, len(names), 0.95)
    assert well.sum() >= len(names) // 2
    assert np.all(relative < 0.02)

    # held out: another trajectory simulated in process (package Simulator, the URDF's physics, as record); torques
    # of the identified base parameters and of the physically consistent URDF that identify wrote
    other = optimise_excitation(arm, duration=2.0, harmonics=3, time_budget=60.0, max_evaluations=1, seed=1,
                                **FRICTION)
    held_out = record_in_process(arm, other)
    equations = identification_equations(arm, base, held_out.t, held_out.q, held_out.tau, held_out.sampling,
                                         **FRICTION)
    identified = load_urdf(str(tmp_path / 'id.urdf'), strict=True)
    predicted = {'base parameters': beta, 'consistent URDF': base.project(standard_parameters(identified, **FRICTION))}
    rows, tau = equations.rows, equations.tau
    errors = {k: np.sqrt(np.mean((equations.Y @ b - tau)[rows] ** 2) / np.mean(tau[rows] ** 2))
              for k, b in predicted.items()}
    print('held-out relative RMS torque error: ' + ', '.join(f"{k} {v:.2g}" for k, v in errors.items()))
    assert max(errors.values()) < 0.01


def test_the_recorder_counts_joint_states_lost_between_recorded_ones():
    """A recorder that falls behind loses states (the publisher keeps a bounded history); record must say so
    rather than hand identify a recording with gaps."""
    from sensor_msgs.msg import JointState
    from robot_dynamics_ros.commands.bag_recorder import JointStateBagRecorder

    class Writer:
        def write(self, connection, time_ns, data):
            pass
    recorder = JointStateBagRecorder(Writer(), None)
    try:
        for ms in (1000, 1001, 1002, 1005, 1006, 1009):   # 1003, 1004, 1007, 1008 missing
            msg = JointState()
            msg.header.stamp.sec, msg.header.stamp.nanosec = ms // 1000, (ms % 1000) * 1_000_000
            recorder._on_state(msg)
        assert recorder.count == 6
        assert recorder.lost() == 4
    finally:
        recorder.close()


def test_record_couples_mimic_joints_by_default(tmp_path, capsys):
    """excite -> record -> identify with the defaults on an arm whose gripper's fingers are coupled by <mimic>
    joints (test/urdf/mimic_gripper.urdf): the trajectory names the independent joints, the recording holds every
    joint with each mimic joint at multiplier q_master + offset, and identify runs on it."""
    gripper = os.path.join(ROOT, 'test', 'urdf', 'mimic_gripper.urdf')
    traj, bag, params = tmp_path / 'traj.yaml', tmp_path / 'rec', tmp_path / 'params.yaml'
    assert cli_main(['excite', gripper, '-o', str(traj), '--duration', '2', '--harmonics', '2',
                     '--budget', '600', '--max-evaluations', '50']) == 0
    model = load_urdf(gripper)
    names = yaml.safe_load(traj.read_text())['trajectory_publisher']['ros__parameters']['joints']
    assert names == list(model.joint_names) == ['shoulder', 'elbow', 'wrist', 'left_finger']
    record = subprocess.run([sys.executable, '-m', 'robot_dynamics_ros.cli', 'record', str(traj), '-o', str(bag),
                             '--urdf', gripper, '--domain-id', str(domain_id(23))], cwd=ROOT,
                            env=isolated_ros_env(domain_id(23)), capture_output=True, text=True, timeout=300)
    print(record.stdout, record.stderr)
    assert record.returncode == 0
    recording = load_recording(bag)
    q = {name: recording.q[:, recording.joint_names.index(name)] for name in recording.joint_names}
    for joint, (master, multiplier, offset) in model.mimic.items():   # mimic of a mimic: resolved to left_finger
        np.testing.assert_allclose(q[joint], multiplier * q[master] + offset, rtol=0, atol=1e-12)
    assert np.ptp(q['left_finger']) > 0.01   # the fingers moved
    assert cli_main(['identify', gripper, str(bag), '-o', str(params)]) == 0
    capsys.readouterr()
