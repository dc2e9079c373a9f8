"""``robot-dynamics bringup --controller cartesian``: the Cartesian demo loop. The simulator (starting at
``dexterous_posture``, away from singularities), the Cartesian controller and the circle target publisher run as
processes; the end effector's pose error is recorded here for ``--duration`` s of sim time and reported as
``cartesian_tracking_error`` (max and RMS position error in m, max orientation error in rad) and
``farthest_from_start`` (m: the end effector's largest distance from its first recorded position), with a plot
of target and actual x, y, z, when asked. ``--max-error`` bounds the position error (mm) and the orientation error
(deg).
"""
import argparse
import os
import tempfile

import numpy as np

from .. import stopping
from ..control.cartesian import default_end_effector, dexterous_posture
from ..errors import RobotDynamicsError
from ..model.model import Model
from .node_runs import (BEYOND_BOUND, NO_MATPLOTLIB, StartupWait, compute_time, finish, longest_silence, loop_lines,
                        node_logs, pyplot, rate, record, run_failures, simulation_stopped, steps_per_second, wall_cap)
from .processes import describe_domain, start_node, use_environment

NODES = ('simulator', 'cartesian_controller', 'cartesian_target_publisher')
END_MARGIN = 1.0   # s of sim time: lockstep runs a little past --duration before the nodes are stopped


def whole_run_targets(duration):
    """Target publisher parameters for lockstep: the targets of the whole run (and END_MARGIN s after it) published
    at the start pose, so that a target publisher stalled by a busy machine cannot leave the controller without
    its reference (with the default lead_time, a stall of more than 1 s of sim time does). Targets are spaced
    wider than the default where the run's would not fit the controller's buffer."""
    from ..control.cartesian import TARGET_BUFFER
    from ..nodes.cartesian_target_publisher import BURST
    from ..nodes.parameter_schema import load
    lead = duration + END_MARGIN
    default_period = load('cartesian_target_publisher').parameters['target_period'].default
    period = max(default_period, lead / (TARGET_BUFFER - 2 * BURST))
    return ['-p', f'lead_time:={lead}', '-p', f'target_period:={period}']


def summary(recorder, model, start, end, sim_log):
    """The run in numbers (SI units): what ``--report`` writes."""
    errors = np.array([e for t, _, e in recorder.errors if start <= t <= end]).reshape(-1, 6)
    path = np.array([recorder.poses[s] for t, s, _ in recorder.errors if start <= t <= end and s in recorder.poses])
    stamps = [s for t, s in recorder.states if start <= t <= end]
    simulated = stamps[-1] - stamps[0] if len(stamps) > 1 else 0.0
    wall = end - start
    position, orientation = np.linalg.norm(errors[:, 3:], axis=1), np.linalg.norm(errors[:, :3], axis=1)
    return {
        'robot': model.name,
        'sim_time': simulated,
        'wall_time': wall,
        'real_time_factor': simulated / wall if wall > 0 else 0.0,
        'controller_updates': len(errors),
        'cartesian_tracking_error': ({'max_position': float(position.max()),
                                      'rms_position': float(np.sqrt(np.mean(position**2))),
                                      'max_orientation': float(orientation.max())} if len(errors) else None),
        'farthest_from_start': float(np.linalg.norm(path - path[0], axis=1).max()) if len(path) else 0.0,
        'simulator_steps_per_second': steps_per_second(sim_log),
        'joint_states_hz': rate(recorder.states, start, end),
        'controller_commands_hz': rate(recorder.errors, start, end),
        'compute_time_us': compute_time(recorder.compute_us),
        'simulation_stopped': simulation_stopped(sim_log),
        'controller_silence': longest_silence(stamps, [s for t, s, _ in recorder.errors if start <= t <= end]),
        'ignored_joint_states': recorder.intake.ignored,
    }


def beyond_bound(result, bound):
    """[(BEYOND_BOUND, reason)] when the position error exceeds ``bound`` mm or the orientation error ``bound``
    deg, else []."""
    error = result['cartesian_tracking_error']
    if bound is None or error is None:
        return []
    position, orientation = 1e3 * error['max_position'], np.degrees(error['max_orientation'])
    if position <= bound and orientation <= bound:
        return []
    return [(BEYOND_BOUND, f"the end effector's error reached {position:.3f} mm and {orientation:.3f} deg, beyond "
                           f"--max-error {bound:g}")]


def report(result, duration):
    lines = [f"ran {result['sim_time']:.2f} s of sim time in {result['wall_time']:.2f} s wall: real-time factor "
             f"{result['real_time_factor']:.2f}"]
    if result['sim_time'] < duration - 0.01:
        lines.append(f"note: ran only {result['sim_time']:.2f} s of the {duration:g} s of sim time asked for")
    error = result['cartesian_tracking_error']
    if error:
        lines.append(f"Cartesian tracking error over {result['controller_updates']} updates: position max "
                     f"{1e3 * error['max_position']:.3f} mm, RMS {1e3 * error['rms_position']:.3f} mm; orientation "
                     f"max {np.degrees(error['max_orientation']):.3f} deg; the end effector went up to "
                     f"{1e3 * result['farthest_from_start']:.1f} mm from its start")
    else:
        lines.append("tracking error: no controller updates received")
    return lines + loop_lines(result)


def write_plot(recorder, model, path):
    """Target and actual x, y, z (mm) against sim time, and the position error; returns a message."""
    plt = pyplot()
    if plt is None:
        return NO_MATPLOTLIB
    rows = [(stamp, recorder.poses[stamp], error) for _, stamp, error in recorder.errors if stamp in recorder.poses]
    if not rows:
        return "no plot: nothing was recorded"
    t = np.array([row[0] for row in rows])
    actual = 1e3 * np.array([row[1] for row in rows])
    error = 1e3 * np.array([row[2][3:] for row in rows])
    fig, axes = plt.subplots(3, 2, sharex=True, figsize=(11, 6))
    for i, axis in enumerate('xyz'):
        axes[i, 0].plot(t - t[0], actual[:, i], color='tab:blue', lw=2.5, alpha=0.6, label='actual')
        axes[i, 0].plot(t - t[0], actual[:, i] + error[:, i], '--', color='black', lw=1.0, label='target')
        axes[i, 0].set_ylabel(f"{axis} (mm)")
        axes[i, 1].plot(t - t[0], error[:, i], color='tab:red', lw=0.8)
        axes[i, 1].set_ylabel(f"error {axis} (mm)")
    axes[0, 0].set_title('end effector position: target and actual')
    axes[0, 1].set_title('target - actual')
    for axis in axes[-1]:
        axis.set_xlabel('time (s, joint-state stamps)')
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc='upper right', ncol=2, fontsize='small')
    fig.suptitle(f"robot-dynamics bringup: Cartesian tracking, {model.name}")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return f"tracking plot written to {os.path.abspath(path)}"


def run(args: argparse.Namespace, model: Model, urdf: str, files: list, env: dict) -> int:
    try:
        from .monitor import CartesianRecorder  # rclpy and the message packages
        from ..nodes.launch_support import LOCKSTEP_STATE_TIMEOUT
    except ImportError as e:
        raise RobotDynamicsError(f"needs rclpy and the ROS 2 message packages ({e}): pip install '.[ros]' "
                                 "(from the package source) or source a ROS 2 installation") from None
    try:
        start_posture = dexterous_posture(model, default_end_effector(model))
    except ValueError as e:
        raise RobotDynamicsError(f"cannot control {model.name!r} in Cartesian space: {e}") from None
    use_environment(env)
    log_dir = tempfile.mkdtemp(prefix='robot_dynamics_bringup_')
    print(f"bringup: {os.path.basename(urdf)} ({model.nv} DOF), Cartesian control, {describe_domain(env)}, "
          f"logs in {log_dir}")
    common = [arg for file in files for arg in ('--params-file', file)] + ['-p', f'urdf_file:={urdf}']
    if args.gravity is not None:
        common += ['-p', f'gravity:={[float(g) for g in args.gravity]}']
    if not args.mimic:
        common += ['-p', 'mimic:=false']
    node_args = {name: common for name in NODES}
    if args.sync == 'lockstep':   # (see LOCKSTEP_STATE_TIMEOUT)
        node_args['cartesian_controller'] = common + ['-p', f'state_timeout:={LOCKSTEP_STATE_TIMEOUT}']
        node_args['cartesian_target_publisher'] = common + whole_run_targets(args.duration)
    node_args['simulator'] = common + ['-p', f'sync:={args.sync}', '-p', 'publish_while_paused:=true',
                                       '-p', f'initial_positions:={start_posture.tolist()}']
    recorder = CartesianRecorder(model.all_joint_names)   # (the simulator names the mimic joints too)
    stopping.catch()   # Ctrl-C, SIGTERM: recorded; spin_or_stop ends the run on them, the nodes are stopped
    processes = {}

    def startup():   # as the joint-space bringup: the simulator paused until the controller has the first targets
        wait = StartupWait(recorder, processes, log_dir, args.startup_timeout)
        processes['simulator'] = start_node('simulator', node_args['simulator'], env,
                                            os.path.join(log_dir, 'simulator.log'))
        not_ready = wait.until(lambda: recorder.states and recorder.request_pause(True), 'the first joint state')
        if not_ready:
            return not_ready
        for name in NODES[1:]:
            processes[name] = start_node(name, node_args[name], env, os.path.join(log_dir, name + '.log'))

        def targets_out():
            with open(os.path.join(log_dir, 'cartesian_target_publisher.log')) as f:
                return 'targets published' in f.read()
        return wait.until(lambda: recorder.errors and targets_out() and recorder.request_pause(False),
                          'a Cartesian controller update on the circle')
    cap = wall_cap(args)
    run = record(recorder, processes, startup, args.duration, recorder.sim_time_since,
                 f"loop running; recording {args.duration:g} s of sim time ...", cap)
    logs = node_logs(processes, log_dir, run.failed_to_start)
    result = summary(recorder, model, run.start, run.end, logs['simulator'])
    return finish(run, logs, result, report(result, args.duration), args.report,
                  (lambda: write_plot(recorder, model, args.plot)) if args.plot else None,
                  run_failures(run, result, args.duration, cap) + beyond_bound(result, args.max_error))
