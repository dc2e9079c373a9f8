"""What the commands that run nodes as processes (bringup: joint-space, legged, Cartesian) share: the recording run
(``record``: start, record a duration of sim time, stop the nodes) and its end (``finish``: the report and the exit
code), the start-up wait that says what the nodes are doing, the wall-time cap of a run, the nodes' logs and exit
codes, the simulator's achieved step rate, compute times, pyplot, the JSON report."""
import json
import os
import re
import sys
import time
from dataclasses import dataclass, field

import numpy as np

from .. import stopping
from ..errors import RobotDynamicsError
from .processes import stop_node

# Exit codes of bringup (docs/command_line.md), besides 0 (the run completed within its bounds), 2 (a user error,
# cli.py) and 128 + a signal's number (interrupted). A run that fails in several ways exits with the first in
# EXIT_ORDER.
NODE_FAILED = 1    # a node exited non-zero or did not start, the controller fell silent, or the simulation stopped
INCOMPLETE = 3     # the run ended before its sim time was done (--max-wall, or a node stopped the loop)
FELL = 4           # the robot fell (legged: the base tilted more than legged_bringup.FALLEN_TILT)
BEYOND_BOUND = 5   # a tracking error beyond --max-error

# A real-time run of d s of sim time stops after 3 d + 10 s of wall time (no cap in lockstep, where sim time runs as
# fast as the machine lets it).
REALTIME_ALLOWANCE = (3.0, 10.0)
PROGRESS_PERIOD = 10.0    # s wall between progress lines while the nodes start and while the loop runs
CONTROLLER_SILENCE = 1.0  # s of sim time: joint states for longer than this without a controller update: it failed
MAX_STAMP_JUMP = 1.0      # s of sim time between one simulator's consecutive joint states, at most (1 ms at 1 kHz)
RESUME_AFTER = 1.0        # s wall of joint states ahead of the last one taken, in sequence, and none in sequence
                          # with it: this process lost a stretch of them (it fell behind), the states go on from there
COMPILING = re.compile(r'\]: (compil(?:ing|ed) .*)')   # a node's numba progress lines (nodes/compile_progress.py)


class JointStateIntake:
    """Which joint states are our robot's: those that name exactly the model's joints, stamped no earlier than the
    last one taken and at most MAX_STAMP_JUMP s later. Others (a node of another graph on the same ROS domain, a
    second simulator) are counted in ``ignored``, with a warning on stderr the first time for each reason.
    States ahead of the last one taken, in sequence among themselves, that come for RESUME_AFTER s of wall time with
    none in sequence with it between them are ours after a stretch this process lost (on a loaded machine it fell
    behind the simulator, whose older states were dropped): taken from there on, with a warning; without this every
    later state was out of sequence and the run never ended."""

    def __init__(self, joint_names):
        self.joint_names = list(joint_names)
        self.last_names, self.order = None, None
        self.last_stamp = None
        self.ahead = None   # [wall time of the first, stamp of the last, count] of the states ahead since the last taken
        self.ignored = 0
        self.warned = set()
        self.clock = time.monotonic

    def take(self, names, stamp):
        """The index of each of the model's joints in ``names``, or None when the state is ignored."""
        if names != self.last_names:
            if sorted(names) != sorted(self.joint_names):
                foreign = sorted(set(names) - set(self.joint_names)) or sorted(set(self.joint_names) - set(names))
                return self._ignore('joints', f"joint states naming other joints than the robot's ({foreign[:5]})")
            self.last_names, self.order = list(names), [names.index(name) for name in self.joint_names]
        if self.last_stamp is not None and not 0.0 <= stamp - self.last_stamp <= MAX_STAMP_JUMP \
                and not self._resumed(stamp):
            return self._ignore('stamps', f"a joint state stamped {stamp:.3f} s after one stamped "
                                          f"{self.last_stamp:.3f} s (stamps out of sequence)")
        self.last_stamp, self.ahead = stamp, None
        return self.order

    def _resumed(self, stamp):
        """Whether the states ahead of the last one taken, up to ``stamp``, have come in sequence for RESUME_AFTER s
        (then those ignored meanwhile were not another simulator's: no longer counted as ignored)."""
        now = self.clock()
        if stamp < self.last_stamp:
            return False
        if self.ahead is None or not 0.0 <= stamp - self.ahead[1] <= MAX_STAMP_JUMP:
            self.ahead = [now, stamp, 0]
        self.ahead[1:] = stamp, self.ahead[2] + 1
        if now - self.ahead[0] < RESUME_AFTER:
            return False
        self.ignored -= self.ahead[2] - 1
        print(f"bringup: warning: this process fell behind the simulator (a loaded machine?): its joint states from "
              f"{self.last_stamp:.3f} s to {stamp:.3f} s of sim time are missing from the record", file=sys.stderr,
              flush=True)
        return True

    def _ignore(self, reason, what):
        self.ignored += 1
        if reason not in self.warned:
            self.warned.add(reason)
            print(f"bringup: warning: ignoring {what}: not from this run's simulator (another ROS graph on this "
                  "domain? --isolated or --domain-id keep runs apart)", file=sys.stderr, flush=True)
        return None


def rate(samples, start, end):
    """Messages per wall second received in [start, end]."""
    return sum(start <= sample[0] <= end for sample in samples) / max(end - start, 1e-9)


def spin_or_stop(recorder, condition, timeout):
    """``recorder.spin_until(condition, timeout)``, ended by SIGINT or SIGTERM (recorded by ``stopping.catch()``):
    then KeyboardInterrupt, raised here, not from a signal handler inside rclpy's C++ code (where pybind11 turned it
    into a RuntimeError: a traceback and exit 1 instead of 130)."""
    done = recorder.spin_until(lambda: stopping.received() or condition(), timeout)
    if stopping.received():
        raise KeyboardInterrupt
    return done


def first_error_line(log_text):
    """The line of a node's log that says why it failed: its first ROS error, else the exception line of a
    traceback, else its last line."""
    lines = [line.strip() for line in log_text.splitlines() if line.strip()]
    for line in lines:
        ros_error = re.match(r'^\[(ERROR|FATAL)\] \[[\d.]+\] \[[^\]]*\]: (.*)', line)
        if ros_error:
            return ros_error.group(2)
    exceptions = [line for line in lines if re.match(r'^[\w.]+(Error|Exception|Interrupt)\b', line)]
    return exceptions[-1] if exceptions else (lines[-1] if lines else 'no output')


def simulation_stopped(sim_log):
    """Why the simulator stopped stepping (its first refused or failed step, as its log says), or None."""
    match = re.search(r'\]: (simulation step (?:refused|failed): .*)', sim_log)
    return match.group(1).strip() if match else None


def steps_per_second(log_text):
    """Achieved step rate from the simulator's exit line ('... (N steps/s, ...')."""
    match = re.search(r'\((\d+) steps/s', log_text)
    return float(match.group(1)) if match else float('nan')


def write_report(result, path):
    """The summary as JSON (no NaN: a number nobody measured is null); returns a message."""
    def clean(value):
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items()}
        if isinstance(value, list):
            return [clean(v) for v in value]
        return None if isinstance(value, float) and not np.isfinite(value) else value
    with open(path, 'w', encoding='utf-8') as f:
        json.dump(clean(result), f, indent=2)
        f.write('\n')
    return f"report written to {os.path.abspath(path)}"


def node_logs(processes, log_dir, failed_to_start):
    """{name: log text} of the node processes; a one-line error naming the first that failed to start."""
    logs = {}
    for name in processes:
        with open(os.path.join(log_dir, name + '.log')) as f:
            logs[name] = f.read()
    # A simulator that stepped and then failed (its first step's failure can come before this process has heard
    # the controller) did start: the run reports that the simulation stopped (exit 1), not a start-up error.
    failed_to_start = [name for name in failed_to_start if not simulation_stopped(logs[name])]
    if failed_to_start:
        name = failed_to_start[0]
        raise RobotDynamicsError(f"the {name} node failed to start: {first_error_line(logs[name])} "
                                 f"(log: {os.path.join(log_dir, name + '.log')})")
    return logs


def report_exits(codes, logs, interrupted):
    """Print how the nodes exited (the last lines of the log of each that failed); returns {name: code} of those."""
    failed = {name: code for name, code in codes.items() if code != 0}
    for name, code in failed.items():
        print(f"{name} exited with {'no exit (killed)' if code is None else code}; last lines of its log:",
              file=sys.stderr)
        print('  ' + '\n  '.join(logs[name].strip().splitlines()[-10:]), file=sys.stderr)
    if not failed:
        print(f"all nodes exited 0 on SIGINT{' (interrupted by the user)' if interrupted else ''}")
    return failed


NO_MATPLOTLIB = "no plot: matplotlib is not installed (pip install matplotlib)"


def pyplot():
    """matplotlib.pyplot on the Agg backend (files, no display), or None where matplotlib is not installed."""
    try:
        import matplotlib
        matplotlib.use('Agg')
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    return plt


def compute_time(us):
    """Mean, median, p99 and max of the controller's compute times (us), and how many; None for none."""
    us = np.asarray(us, dtype=float)
    if not len(us):
        return None
    return {'mean': float(us.mean()), 'median': float(np.median(us)), 'p99': float(np.percentile(us, 99)),
            'max': float(us.max()), 'updates': len(us)}


def loop_lines(result):
    """The report's lines on the loop: achieved rates, and the controller's compute time where it reported one."""
    lines = [f"simulator: {result['simulator_steps_per_second']:.0f} steps/s achieved; joint_states received: "
             f"{result['joint_states_hz']:.1f} Hz; controller commands: {result['controller_commands_hz']:.1f} Hz"]
    if result.get('ignored_joint_states'):
        lines.append(f"ignored {result['ignored_joint_states']} joint states not from this run's simulator (other "
                     "joints, or stamps out of sequence)")
    compute = result['compute_time_us']
    if compute:
        lines.append(f"controller compute time per update: median {compute['median']:.0f} us, mean "
                     f"{compute['mean']:.0f} us, p99 {compute['p99']:.0f} us, max {compute['max']:.0f} us "
                     f"({compute['updates']} updates)")
    return lines


def any_exited(processes):
    return any(p.poll() is not None for p in processes.values())


def longest_silence(state_stamps, answered_stamps):
    """The longest stretch of sim time over the joint states' ``state_stamps`` (ascending) that no controller update
    answered: before the first answered state, between two, or after the last. 0 for fewer than two states. A gap
    of more than MAX_STAMP_JUMP between two states is a stretch this process lost (``JointStateIntake``), where it
    lost the updates too: the stretches on either side count apart."""
    gaps = np.flatnonzero(np.diff(state_stamps) > MAX_STAMP_JUMP) + 1
    silences = [0.0]
    for stamps in np.split(np.asarray(state_stamps, dtype=float), gaps):
        if len(stamps) >= 2:
            answered = np.sort([s for s in answered_stamps if stamps[0] <= s <= stamps[-1]])
            silences.append(float(np.max(np.diff(np.concatenate([[stamps[0]], answered, [stamps[-1]]])))))
    return max(silences)


class StartupWait:
    """The nodes' start-up, said as it goes: their compile progress lines (numba compiles the kernels on the first
    run on a machine, cached on disk afterwards: minutes under load) as they come, and every PROGRESS_PERIOD s what
    is awaited; a wait that expires says why it may have taken so long and what to do."""

    def __init__(self, recorder, processes, log_dir, timeout):
        self.recorder, self.processes, self.log_dir, self.timeout = recorder, processes, log_dir, timeout
        self.printed = {}   # node -> how many of its compile lines were printed
        self.compiled = False

    def relay(self):
        for name in self.processes:
            with open(os.path.join(self.log_dir, name + '.log')) as f:
                lines = COMPILING.findall(f.read())
            for line in lines[self.printed.get(name, 0):]:
                print(f"  {name}: {line}", flush=True)
                self.compiled = True
            self.printed[name] = len(lines)

    def until(self, condition, what):
        """Spin until ``condition()`` (then None), a node exits or ``timeout`` s have passed (then why the loop is
        not ready, naming ``what`` was awaited)."""
        held = []

        def check():   # condition() asks the simulator to pause or resume: not again once it held
            if not held and condition():
                held.append(True)
            return held or any_exited(self.processes)
        start = time.monotonic()
        said = start
        while not spin_or_stop(self.recorder, check, min(1.0, max(0.0, start + self.timeout - time.monotonic()))):
            self.relay()
            now = time.monotonic()
            if now >= start + self.timeout:
                return (f"waited {self.timeout:g} s (--startup-timeout) for {what}: a first run compiles the nodes' "
                        "kernels (numba; cached on disk for later runs), minutes on a busy machine"
                        f"{' (see the compiling lines above)' if self.compiled else ''}: give --startup-timeout more "
                        "seconds (a later run loads them in seconds)")
            if now - said >= PROGRESS_PERIOD:
                said = now
                print(f"  starting: waiting for {what} ({now - start:.0f} s of --startup-timeout {self.timeout:g} s)",
                      flush=True)
        self.relay()
        exited = [name for name, process in self.processes.items() if process.poll() is not None]
        return f"the {exited[0]} node exited before {what}" if not held and exited else None


@dataclass
class Run:
    """A recording run: wall times of its window (start == end: it never started recording), why the loop did not
    get ready (None: it did), how the nodes exited, whether the user interrupted it, the nodes that had exited
    before the loop was ready."""
    start: float
    end: float
    not_ready: str | None = None
    codes: dict = field(default_factory=dict)
    interrupted: bool = False
    failed_to_start: list = field(default_factory=list)


def wall_cap(args):
    """The run's wall-clock cap (s) after start-up, or None: --max-wall, else none in lockstep, else the real-time
    allowance."""
    if args.max_wall is not None:
        return args.max_wall
    return None if args.sync == 'lockstep' else REALTIME_ALLOWANCE[0] * args.duration + REALTIME_ALLOWANCE[1]


def record(recorder, processes, startup, duration, sim_time_since, message, max_wall=None):
    """``startup()`` starts the nodes into ``processes`` and returns None when the loop is ready, else why not;
    then (unless a node has exited) ``message`` is printed and the recorder spins until ``sim_time_since(first
    state)`` reaches ``duration`` s or ``max_wall`` s of wall time (None: no cap) have passed, with a progress line
    every PROGRESS_PERIOD s. Ctrl-C and SIGTERM end it (``spin_or_stop``); the nodes are always stopped and the
    recorder closed. Returns the ``Run``."""
    now = time.monotonic()
    run = Run(now, now)
    ready = False
    try:
        run.not_ready = startup()
        ready = run.not_ready is None
        if ready and not any_exited(processes):
            run.start, first = time.monotonic(), len(recorder.states)
            deadline = np.inf if max_wall is None else run.start + max_wall
            print(message, flush=True)
            while not spin_or_stop(recorder, lambda: any_exited(processes) or sim_time_since(first) >= duration,
                                   max(0.0, min(PROGRESS_PERIOD, deadline - time.monotonic()))):
                if time.monotonic() >= deadline:
                    break
                print(f"  {sim_time_since(first):.2f} of {duration:g} s of sim time after "
                      f"{time.monotonic() - run.start:.0f} s wall", flush=True)
            run.end = time.monotonic()
    except KeyboardInterrupt:
        run.interrupted = True
        run.end = time.monotonic()
    finally:
        # a node that exits once the loop is ready (its first step, say) failed while running, not at its start
        run.failed_to_start = [name for name, p in processes.items() if p.poll() is not None
                               and not ready and not run.interrupted]
        run.codes = {name: stop_node(process) for name, process in processes.items()}
        recorder.close()
    return run


def run_failures(run, result, duration, max_wall=None):
    """(exit code, reason) of what went wrong in any bringup: the loop never got ready, the simulation stopped, the
    controller fell silent, the run ended before its sim time was done."""
    failures = []
    if run.not_ready:
        failures.append((NODE_FAILED, run.not_ready))
    if result.get('simulation_stopped'):
        failures.append((NODE_FAILED, f"the simulation stopped: {result['simulation_stopped']}"))
    if result.get('controller_silence', 0.0) > CONTROLLER_SILENCE:
        failures.append((NODE_FAILED, f"the controller failed: no update for {result['controller_silence']:.2f} s "
                                      "of sim time (see its log)"))
    if not run.not_ready and result['sim_time'] < duration - 0.01:
        cause = (f"the wall-clock cap of {max_wall:g} s was reached (--max-wall sets it)"
                 if max_wall is not None and run.end - run.start >= max_wall else "the loop stopped")
        failures.append((INCOMPLETE, f"ran {result['sim_time']:.2f} of the {duration:g} s of sim time asked for: "
                                     f"{cause}"))
    return failures


def finish(run, logs, result, lines, report_path, plot=None, failures=()):
    """Say the run's first failure (and the others), print the report's ``lines`` and ``plot()``'s message (when
    given and something was recorded), write the JSON report (with the exit codes), say how the nodes exited.
    ``failures``: (exit code, reason) of what went wrong besides the nodes' exits. Returns the command's exit code:
    the signal's after an interruption, else that of the first failure in the order of EXIT_ORDER, else 0."""
    failures = [(NODE_FAILED, f"the {name} node exited with {'no exit (killed)' if code is None else code}")
                for name, code in run.codes.items() if code != 0] + list(failures)
    failures.sort(key=lambda failure: EXIT_ORDER.index(failure[0]))
    code = stopping.exit_code() if run.interrupted else failures[0][0] if failures else 0
    if failures and not run.interrupted:
        print(f"bringup failed (exit {code}): {failures[0][1]}", file=sys.stderr, flush=True)
        for _, reason in failures[1:]:
            print(f"  and: {reason}", file=sys.stderr, flush=True)
    print('\n'.join(lines), flush=True)
    if plot is not None and run.end > run.start:
        print(plot())
    if report_path:
        print(write_report(dict(result, exit_codes=run.codes, exit_code=code,
                                failures=[{'exit_code': c, 'reason': r} for c, r in failures]), report_path))
    report_exits(run.codes, logs, run.interrupted)
    return code


EXIT_ORDER = (NODE_FAILED, FELL, INCOMPLETE, BEYOND_BOUND)
