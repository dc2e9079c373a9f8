"""What the commands that run nodes as processes (bringup, the legged bringup) share: the wall-time allowance of a
run, the nodes' logs and exit codes, the simulator's achieved step rate, the JSON report."""
import json
import os
import re
import sys

import numpy as np

from .. import stopping
from ..errors import RobotDynamicsError

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
