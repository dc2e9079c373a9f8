"""What a bringup run decides without running nodes (issue 38): its exit code and the line that says why, which
joint states it counts, the wall-clock cap; command-line values beyond physical sense (issue 37); URDF zeros named
and round-off inertias silent. The runs themselves: test_bringup_outcomes.py."""
import os
import warnings
from types import SimpleNamespace

import numpy as np
import pytest

from robot_dynamics_ros import load_urdf
from robot_dynamics_ros.cli import main
from robot_dynamics_ros.commands import bringup, legged_bringup, monitor
from robot_dynamics_ros.commands.node_runs import (BEYOND_BOUND, FELL, INCOMPLETE, NODE_FAILED, RESUME_AFTER,
                                                   JointStateIntake, Run, StartupWait, finish, longest_silence,
                                                   run_failures, wall_cap)
from robot_dynamics_ros.errors import URDFWarning
from robot_dynamics_ros.model.urdf import parse_urdf

from conftest import TEST_URDFS, assert_one_line_error
from test_run_reports import base_run


def finished(capsys, run, failures, result=None):
    """finish()'s exit code and stderr lines for a run that recorded from wall time 0 to 5."""
    logs = {name: 'its log' for name in run.codes}
    code = finish(run, logs, result or {}, ['the report'], None, None, failures)
    return code, capsys.readouterr().err.splitlines()


def test_a_run_that_went_well_exits_0(capsys):
    code, err = finished(capsys, Run(0.0, 5.0, codes={'simulator': 0}), [])
    assert code == 0 and err == []


def test_the_first_failure_in_exit_order_gives_the_code_and_the_first_line(capsys):
    """A robot that fell in a run that also missed its sim time and its bound: FELL, said first, the others after."""
    run = Run(0.0, 5.0, codes={'simulator': 0, 'legged_controller': 0})
    failures = [(BEYOND_BOUND, 'beyond'), (INCOMPLETE, 'short'), (FELL, 'the robot fell')]
    code, err = finished(capsys, run, failures)
    assert code == FELL == 4
    assert err == ['bringup failed (exit 4): the robot fell', '  and: short', '  and: beyond']


def test_a_node_that_exited_non_zero_fails_the_run_before_anything_else(capsys):
    run = Run(0.0, 5.0, codes={'simulator': 0, 'legged_controller': 1})
    code, err = finished(capsys, run, [(FELL, 'the robot fell')])
    assert code == NODE_FAILED == 1
    assert err[:2] == ['bringup failed (exit 1): the legged_controller node exited with 1', '  and: the robot fell']


def test_an_interrupted_run_exits_with_the_signals_code_not_a_failure(capsys, monkeypatch):
    from robot_dynamics_ros import stopping
    monkeypatch.setattr(stopping, 'exit_code', lambda: 130)
    code, err = finished(capsys, Run(0.0, 5.0, codes={'simulator': 0}, interrupted=True), [(INCOMPLETE, 'short')])
    assert code == 130 and not any(line.startswith('bringup failed') for line in err)


def test_a_robot_that_fell_is_a_failure_and_one_that_stands_is_not():
    fallen = legged_bringup.summary(base_run(90.0), 0.0, 5.0, '', floating=True)
    assert legged_bringup.fell(fallen) == [(FELL, 'the robot fell: its base tilted 90 deg (more than 45)')]
    standing = legged_bringup.summary(base_run(10.0), 0.0, 5.0, '', floating=True)
    assert legged_bringup.fell(standing) == []


def test_a_run_short_of_its_sim_time_is_incomplete_and_names_the_cap():
    run = Run(0.0, 12.0)
    assert run_failures(run, {'sim_time': 4.34}, 10.0, max_wall=12.0) == [
        (INCOMPLETE, 'ran 4.34 of the 10 s of sim time asked for: the wall-clock cap of 12 s was reached (--max-wall '
                     'sets it)')]
    assert run_failures(run, {'sim_time': 10.0}, 10.0, max_wall=12.0) == []
    assert run_failures(Run(0.0, 3.0), {'sim_time': 1.0}, 10.0)[0] == (
        INCOMPLETE, 'ran 1.00 of the 10 s of sim time asked for: the loop stopped')


def test_a_loop_that_never_got_ready_or_whose_simulation_stopped_failed():
    never = run_failures(Run(0.0, 0.0, not_ready='no joint state within 5 s'), {'sim_time': 0.0}, 10.0)
    assert never == [(NODE_FAILED, 'no joint state within 5 s')]   # (not also "incomplete")
    stopped = run_failures(Run(0.0, 5.0), {'sim_time': 5.0, 'simulation_stopped': 'simulation step failed: x'}, 5.0)
    assert stopped == [(NODE_FAILED, 'the simulation stopped: simulation step failed: x')]


def test_a_controller_that_stopped_answering_failed():
    states = np.arange(0.0, 5.0, 1e-3)
    answered = states[states < 2.5]   # nothing answered after 2.5 s of sim time
    silence = longest_silence(states, answered)
    assert silence == pytest.approx(states[-1] - answered[-1])
    failures = run_failures(Run(0.0, 5.0), {'sim_time': 5.0, 'controller_silence': silence}, 5.0)
    assert [code for code, _ in failures] == [NODE_FAILED] and 'the controller failed' in failures[0][1]
    every_other = states[::2]   # a controller at half the simulator's rate is not silent
    assert longest_silence(states, every_other) == pytest.approx(2e-3)
    assert run_failures(Run(0.0, 5.0), {'sim_time': 5.0, 'controller_silence': 2e-3}, 5.0) == []
    # a stretch this process lost (states and updates from 0.44 to 3.59 s: a 3 s stall, as measured) is no silence
    kept = (states < 0.44) | (states > 3.593)
    assert longest_silence(states[kept], states[kept]) == pytest.approx(1e-3)
    assert longest_silence(states[kept], states[kept & (states < 4.0)]) == pytest.approx(states[-1] - 4.0 + 1e-3)


def test_a_tracking_bound_is_in_degrees_for_revolute_and_millimetres_for_prismatic_joints():
    model = load_urdf(TEST_URDFS['prismatic_chain'])   # lift, slide prismatic; shoulder, wrist revolute
    errors = {'lift': 0.0009, 'shoulder': np.radians(0.5), 'slide': 0.0, 'wrist': 0.0}   # 0.9 mm, 0.5 deg
    result = {'max_tracking_error': errors}
    assert bringup.beyond_bound(result, model, 1.0) == []
    [(code, reason)] = bringup.beyond_bound(result, model, 0.8)
    assert code == BEYOND_BOUND and reason.startswith('the tracking error of lift reached 0.9000 mm')
    assert bringup.beyond_bound({'max_tracking_error': None}, model, 0.1) == []   # no update: failed elsewhere


def test_lockstep_has_no_wall_cap_unless_asked_and_real_time_keeps_its_allowance():
    args = SimpleNamespace(max_wall=None, sync='lockstep', duration=5.0)
    assert wall_cap(args) is None
    assert wall_cap(SimpleNamespace(max_wall=None, sync='realtime', duration=5.0)) == 3 * 5.0 + 10.0
    assert wall_cap(SimpleNamespace(max_wall=42.0, sync='lockstep', duration=5.0)) == 42.0


def test_joint_states_of_other_joints_or_out_of_sequence_are_ignored_with_one_warning_each(capsys):
    intake = JointStateIntake(['a', 'b'])
    assert intake.take(['b', 'a'], 0.001) == [1, 0]   # ours, in another order: taken, reordered
    assert intake.take(['x', 'y', 'z'], 1795813469.66) is None   # another graph's robot (issue 38's report)
    assert intake.take(['a'], 0.002) is None   # a state of one of our joints only
    assert intake.take(['a', 'b'], 1795813469.66) is None   # ours by name, a jump in time
    assert intake.take(['a', 'b'], 0.0005) is None   # backwards
    assert intake.take(['a', 'b'], 0.002) == [0, 1] and intake.take(['a', 'b'], 0.002) == [0, 1]  # (repeated: taken)
    assert intake.ignored == 4
    warnings_printed = capsys.readouterr().err.splitlines()
    assert len(warnings_printed) == 2, warnings_printed
    assert "['x', 'y', 'z']" in warnings_printed[0] and 'out of sequence' in warnings_printed[1]


def test_the_simulators_states_after_a_stretch_this_process_lost_are_taken_again(capsys):
    """Issue 43: in colcon test the bringup process fell behind a lockstep loop on the loaded machine, the simulator's
    states after the stretch it lost were all out of sequence, and the run never ended (a 300 s timeout). States
    ahead of the last one taken, in sequence, with none of the old sequence between them for RESUME_AFTER s of wall
    time, are ours again; another simulator's interleaved with ours (ours at least every 0.1 s, as a paused
    lockstep simulator republishes) never are."""
    wall = [0.0]
    intake = JointStateIntake(['a', 'b'])
    intake.clock = lambda: wall[0]
    assert intake.take(['a', 'b'], 0.221) is not None
    taken = []
    for k in range(1500):   # ours from 3.191 s of sim time on (as a 3 s stall left them), received 1 ms apart
        wall[0] = 1.0 + 1e-3 * k
        taken.append(intake.take(['a', 'b'], 3.191 + 1e-3 * k) is not None)
    first = taken.index(True)
    assert first == round(RESUME_AFTER / 1e-3) and all(taken[first:])
    assert intake.ignored == 0   # ours, not another simulator's
    warnings_printed = capsys.readouterr().err.splitlines()
    assert len(warnings_printed) == 2 and 'out of sequence' in warnings_printed[0], warnings_printed
    assert 'fell behind' in warnings_printed[1] and 'from 0.221 s to 4.191 s' in warnings_printed[1]

    intake = JointStateIntake(['a', 'b'])
    intake.clock = lambda: wall[0]
    for k in range(3000):
        wall[0] = 1e-3 * k
        if k % 100 == 0:
            assert intake.take(['a', 'b'], 0.0) is not None   # ours, paused
        assert intake.take(['a', 'b'], 500.0 + 1e-3 * k) is None   # the other simulator's, ahead and in sequence
    assert intake.ignored == 3000


@pytest.mark.parametrize('arguments, words', [
    (['--root-joint', 'floating', '--ground-friction', '1e300'], ['--ground-friction', "'1e300' must lie in [0, 10]"]),
    (['--gravity', '0', '0', '-1e300'], ['--gravity', "'-1e300' must lie in [-100, 100]"]),
    (['--max-error', '1', '--controller', 'none'], ['--max-error', 'computed-torque or the Cartesian controller']),
    (['--max-error', '-1'], ['--max-error', "'-1' must be greater than 0"]),
    (['--max-wall', '0'], ['--max-wall', "'0' must be greater than 0"]),
    (['--controller', 'none', '--sync', 'lockstep'], ['--sync lockstep', '--controller none has none']),
], ids=['friction', 'gravity', 'max-error without tracking', 'negative max-error', 'zero max-wall',
        'lockstep without a controller'])
def test_bringup_values_beyond_sense_are_one_line_and_exit_2(arguments, words, tmp_path, monkeypatch, capsys):
    """In this process (each refused before bringup starts anything): cli.main as the console script calls it."""
    monkeypatch.chdir(tmp_path)
    try:
        code = main(['bringup', *arguments])
    except SystemExit as e:   # argparse's refusal
        code = e.code
    assert_one_line_error(SimpleNamespace(returncode=code, stderr=capsys.readouterr().err), *words)
    assert not os.listdir(tmp_path)


def urdf_joint(kind='revolute', limit='<limit lower="-1" upper="1" effort="10" velocity="2"/>',
               inertia='ixx="0.01" iyy="0.01" izz="0.01"'):
    return f"""<robot name="r"><link name="base"/>
      <joint name="j" type="{kind}"><parent link="base"/><child link="l"/><axis xyz="0 1 0"/>{limit}</joint>
      <link name="l"><inertial><origin xyz="0 0 -0.5"/><mass value="1"/>
        <inertia {inertia} ixy="0" ixz="0" iyz="0"/></inertial></link></robot>"""


def urdf_warnings(xml):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        model = parse_urdf(xml)
    return model, [str(w.message) for w in caught if issubclass(w.category, URDFWarning)]


def test_zero_effort_and_velocity_limits_load_as_written_with_one_warning_naming_the_joint():
    """A CAD export's effort="0" velocity="0" on a continuous joint: an unpowered joint, said once."""
    model, messages = urdf_warnings(urdf_joint('continuous', '<limit effort="0" velocity="0"/>'))
    assert model.effort_limit[0] == 0.0 and model.velocity_limit[0] == 0.0
    assert len(messages) == 1, messages
    assert messages[0].startswith("joint 'j' <limit>: effort 0: no drive can move it")
    assert 'velocity 0: references hold it still' in messages[0]
    _, messages = urdf_warnings(urdf_joint(limit='<limit lower="0.3" upper="0.3" effort="10" velocity="0"/>'))
    assert len(messages) == 1 and 'velocity 0' in messages[0] and 'lower == upper == 0.3' in messages[0], messages
    assert urdf_warnings(urdf_joint())[1] == []


def test_an_inertia_of_one_moment_with_the_others_zero_to_round_off_loads_silently():
    """HyQ's feet (example-robot-data): principal moments -2e-22, 8.5e-23, 3e-6. A real violation still warns."""
    round_off = 'ixx="-1.99283e-22" iyy="8.51804e-23" izz="3e-06"'
    assert urdf_warnings(urdf_joint(inertia=round_off))[1] == []
    _, messages = urdf_warnings(urdf_joint(inertia='ixx="0.02" iyy="0.02" izz="0.05"'))
    assert len(messages) == 1 and 'triangle inequality' in messages[0]


class FakeRecorder:
    """The monitor's spin: conditions checked, no ROS."""

    def spin_until(self, condition, timeout):
        return condition()


class FakeProcess:
    def __init__(self, code=None):
        self.code = code

    def poll(self):
        return self.code


def test_start_up_relays_each_compile_line_once_and_its_expiry_names_the_option_and_compilation(tmp_path, capsys):
    log = ('[INFO] [1.0] [simulator]: compiling crba_kernel (numba; the first run on this machine, cached afterwards)\n'
           '[INFO] [9.8] [simulator]: compiled crba_kernel in 8.8 s\n')
    (tmp_path / 'simulator.log').write_text(log)
    wait = StartupWait(FakeRecorder(), {'simulator': FakeProcess()}, str(tmp_path), timeout=0.01)
    reason = wait.until(lambda: False, 'the first joint state')
    assert reason.startswith("waited 0.01 s (--startup-timeout) for the first joint state: a first run compiles the "
                             "nodes' kernels"), reason
    assert '(see the compiling lines above)' in reason, reason
    assert wait.until(lambda: True, 'a controller update') is None
    out = capsys.readouterr().out.splitlines()
    assert out == ['  simulator: compiling crba_kernel (numba; the first run on this machine, cached afterwards)',
                   '  simulator: compiled crba_kernel in 8.8 s'], out


def test_start_up_says_which_node_exited(tmp_path):
    (tmp_path / 'simulator.log').write_text('')
    wait = StartupWait(FakeRecorder(), {'simulator': FakeProcess(1)}, str(tmp_path), timeout=60.0)
    reason = wait.until(lambda: False, 'the first joint state')
    assert reason == 'the simulator node exited before the first joint state'


class UnansweredFirstCall:
    """A pause service whose answer to the first request is lost, as Fast DDS loses it before matching."""

    def __init__(self):
        self.requests, self.withdrawn = [], []

    def service_is_ready(self):
        return True

    def call_async(self, request):
        future = SimpleNamespace(done=lambda: len(self.requests) > 1, request=request)
        self.requests.append(future)
        return future

    def remove_pending_request(self, future):
        self.withdrawn.append(future)


def test_a_pause_request_left_unanswered_is_sent_again(monkeypatch):
    now = [100.0]
    monkeypatch.setattr(monitor.time, 'monotonic', lambda: now[0])
    node = object.__new__(monitor.InProcessNode)   # its pause logic, without rclpy
    node.pause_client, node.pause_call, node.pause_sent = UnansweredFirstCall(), None, 0.0
    assert not node.request_pause(True)
    now[0] += monitor.PAUSE_RESEND_AFTER / 2
    assert not node.request_pause(True)
    assert len(node.pause_client.requests) == 1, "sent again before PAUSE_RESEND_AFTER"
    now[0] += monitor.PAUSE_RESEND_AFTER
    assert node.request_pause(True)
    first, second = node.pause_client.requests
    assert node.pause_client.withdrawn == [first] and second.request.data is True
