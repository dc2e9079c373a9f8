"""What the commands that run nodes as processes (bringup: joint-space, legged, Cartesian) share: the recording run
(``record``: start, record a duration of sim time, stop the nodes) and its end (``finish``), the wall-time allowance
of a run, the nodes' logs and exit codes, the simulator's achieved step rate, compute times, pyplot, the JSON
report."""
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

WALL_ALLOWANCE = (3.0, 10.0)   # a run of d s of sim time stops after 3 d + 10 s of wall time at the latest


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
    compute = result['compute_time_us']
    if compute:
        lines.append(f"controller compute time per update: median {compute['median']:.0f} us, mean "
                     f"{compute['mean']:.0f} us, p99 {compute['p99']:.0f} us, max {compute['max']:.0f} us "
                     f"({compute['updates']} updates)")
    return lines


def any_exited(processes):
    return any(p.poll() is not None for p in processes.values())


@dataclass
class Run:
    """A recording run: wall times of its window (start == end: it never started recording), how the nodes
    exited, whether the user interrupted it, the nodes that had exited before the loop was ready."""
    start: float
    end: float
    codes: dict = field(default_factory=dict)
    interrupted: bool = False
    failed_to_start: list = field(default_factory=list)


def record(recorder, processes, startup, duration, sim_time_since, message):
    """``startup()`` starts the nodes into ``processes`` and returns whether the loop is ready; then (unless a node
    has exited) ``message`` is printed and the recorder spins until ``sim_time_since(first state)`` reaches
    ``duration`` s (at most WALL_ALLOWANCE on the wall clock). Ctrl-C and SIGTERM end it (``spin_or_stop``); the
    nodes are always stopped and the recorder closed. Returns the ``Run``."""
    now = time.monotonic()
    run = Run(now, now)
    ready = False
    try:
        ready = startup()
        if ready and not any_exited(processes):
            run.start, first = time.monotonic(), len(recorder.states)
            print(message)
            spin_or_stop(recorder, lambda: any_exited(processes) or sim_time_since(first) >= duration,
                         WALL_ALLOWANCE[0] * duration + WALL_ALLOWANCE[1])
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


def finish(run, logs, result, lines, report_path, plot=None, failed=False):
    """Print the report's ``lines`` and ``plot()``'s message (when given and something was recorded), write the
    JSON report (with the exit codes), say how the nodes exited; the command's exit code: the signal's after an
    interruption, else 1 for a node that failed or ``failed``, else 0."""
    print('\n'.join(lines))
    if plot is not None and run.end > run.start:
        print(plot())
    if report_path:
        print(write_report(dict(result, exit_codes=run.codes), report_path))
    failed_nodes = report_exits(run.codes, logs, run.interrupted)
    if run.interrupted:
        return stopping.exit_code()
    return 1 if failed_nodes or failed else 0
