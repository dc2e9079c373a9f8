"""``robot-dynamics bringup --root-joint floating`` (a robot on the ground under the legged controller) and
``bringup --controller none`` (the simulator alone, zero effort): what happens to the base.

Starts the simulator (and the legged controller) as processes with config/legged.yaml, config/quadruped.yaml for
the bundled quadruped, and the user's config; records the base odometry in this process for ``--duration`` s of sim
time; prints and reports (``--report``) the real-time factor and the base's position and height. Exits FELL when the
base tilted over (node_runs' exit codes). With ``--cmd-vel`` the controller trots (`gait` trot): it stands
STAND_FIRST s, then walks at the command, which this process publishes on legged_controller/cmd_vel; the report
gains the base's velocity, commanded and achieved. ``--plot`` draws the base's velocity, commanded and achieved,
against sim time.
"""
import argparse
import os
import tempfile

import numpy as np

from .. import stopping
from ..errors import RobotDynamicsError
from ..model.model import Model
from ..resources import legged_parameter_files
from . import finite_float, view
from .node_runs import (FELL, NO_MATPLOTLIB, StartupWait, compute_time, finish, longest_silence, loop_lines,
                        node_logs, pyplot, record, run_failures, simulation_stopped, steps_per_second, wall_cap)
from .processes import describe_domain, start_node, use_environment

LAST_SECONDS = 3.0   # the report's window at the end of the run: has the base settled?
FALLEN_TILT = 45.0   # deg: a base tilted further has fallen over
STAND_FIRST = 1.0    # s of sim time standing before --cmd-vel's command
CMD_VEL_PERIOD = 0.05   # wall s between --cmd-vel's messages (the controller's cmd_vel_timeout is 0.5 s)
PLOT_WINDOW = 0.25   # s of sim time: the plot's achieved velocity is the mean over the window ending at each sample


def velocity_command(text):
    """--cmd-vel's 'VX,VY,WZ': three finite numbers."""
    parts = text.split(',')
    if len(parts) != 3:
        raise argparse.ArgumentTypeError(f"{text!r} is not VX,VY,WZ (three numbers)")
    return [finite_float(part) for part in parts]


def base_velocity(t, pose):
    """(vx, vy, wz): the base's mean velocity over the samples (stamps t, poses [x y z qx qy qz qw]) in its heading
    frame: each step's displacement turned into the heading frame of its start, and the yaw's change, over the
    time."""
    return (heading_frame_steps(pose).sum(axis=0) / (t[-1] - t[0])).tolist()


def heading_frame_steps(pose):
    """(dx, dy, dyaw) of each step between the samples (poses [x y z qx qy qz qw]), dx and dy in the heading frame
    of its start."""
    x, y, z, w = pose[:, 3], pose[:, 4], pose[:, 5], pose[:, 6]
    yaw = np.unwrap(np.arctan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z)))
    dx, dy = np.diff(pose[:, 0]), np.diff(pose[:, 1])
    c, s = np.cos(yaw[:-1]), np.sin(yaw[:-1])
    return np.stack([c * dx + s * dy, -s * dx + c * dy, np.diff(yaw)], axis=1)


def windowed_velocity(t, pose, window=PLOT_WINDOW):
    """(stamps, (n, 3) vx, vy, wz): the base's mean velocity in its heading frame over the ``window`` s of samples
    ending at each sample (from the first sample a window after the start on)."""
    travel = np.vstack([np.zeros(3), np.cumsum(heading_frame_steps(pose), axis=0)])
    end = np.flatnonzero(t >= t[0] + window)
    begin = np.searchsorted(t, t[end] - window, side='right') - 1   # the last sample at or before the window's start
    return t[end], (travel[end] - travel[begin]) / (t[end] - t[begin])[:, None]


def velocity_figure(t, pose, commanded, command_start, plt):
    """vx, vy and wz of the base against sim time (from the first sample): the command (zero before
    ``command_start``, a stamp; ``commanded`` None: zero throughout), the velocity achieved over PLOT_WINDOW and the
    report's achieved value (the mean over the second half). None for fewer than two samples."""
    if len(t) < 2 or t[-1] - t[0] < PLOT_WINDOW:
        return None
    stamps, achieved = windowed_velocity(t, pose)
    command = np.zeros((len(t), 3)) if commanded is None else np.outer(t >= command_start, commanded)
    second_half = t >= (t[0] + t[-1]) / 2.0
    mean = base_velocity(t[second_half], pose[second_half])
    fig, axes = plt.subplots(3, 1, sharex=True, figsize=(9, 7))
    for i, (axis, label) in enumerate(zip(axes, ('vx (m/s)', 'vy (m/s)', 'wz (rad/s)'))):
        axis.plot(t - t[0], command[:, i], '--', color='black', lw=1.2, label='commanded')
        axis.plot(stamps - t[0], achieved[:, i], color='tab:blue', lw=1.0, label=f'achieved ({PLOT_WINDOW:g} s mean)')
        axis.plot(t[second_half][[0, -1]] - t[0], [mean[i]] * 2, color='tab:red', lw=2.0,
                  label='achieved (mean over the second half)')
        axis.set_ylabel(label)
        axis.grid(alpha=0.3)
    axes[-1].set_xlabel('time (s, odometry stamps)')
    axes[0].legend(loc='upper left', fontsize='small')
    fig.suptitle('robot-dynamics bringup: base velocity in its heading frame, commanded and achieved')
    fig.tight_layout()
    return fig


def write_plot(recorder, cmd_vel, path):
    """The base velocity figure of the recorded odometry as a PNG; returns a message."""
    plt = pyplot()
    if plt is None:
        return NO_MATPLOTLIB
    odom = recorder.odom
    t = np.array([stamp for _, stamp, _ in odom])
    fig = velocity_figure(t, np.array([p for _, _, p in odom]).reshape(len(odom), 7), cmd_vel,
                          recorder.states[0][1] + STAND_FIRST if recorder.states else np.inf, plt)
    if fig is None:
        return "no plot: too little odometry was recorded"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return f"base velocity plot written to {os.path.abspath(path)}"


def tilt_degrees(quaternion):
    """Angle of the base's z axis from the world's (quaternion x, y, z, w)."""
    x, y = quaternion[..., 0], quaternion[..., 1]
    return np.degrees(np.arccos(np.clip(1.0 - 2.0 * (x * x + y * y), -1.0, 1.0)))


def summary(recorder, start: float, end: float, sim_log: str, floating: bool, cmd_vel=None) -> dict:
    """The run in numbers (SI units): what ``--report`` writes; with ``cmd_vel`` (--cmd-vel) the base's velocity,
    commanded and achieved (the mean over the run's second half)."""
    odom = [row for row in recorder.odom if start <= row[0] <= end]
    stamps = np.array([stamp for received, stamp in recorder.states if start <= received <= end])
    simulated = stamps[-1] - stamps[0] if len(stamps) > 1 else 0.0
    wall = end - start
    result = {
        'robot': recorder.robot,
        'sim_time': float(simulated),
        'wall_time': wall,
        'real_time_factor': float(simulated / wall) if wall > 0 else 0.0,
        'simulator_steps_per_second': steps_per_second(sim_log),
        'joint_states_hz': len(stamps) / wall if wall > 0 else 0.0,
        'controller_commands_hz': sum(start <= t <= end for t, _ in recorder.commands) / wall if wall > 0 else 0.0,
        'compute_time_us': compute_time(recorder.compute_us),
        'simulation_stopped': simulation_stopped(sim_log),
        'ignored_joint_states': recorder.intake.ignored,
    }
    if recorder.commands:   # a controller runs
        result['controller_silence'] = longest_silence(
            stamps, [s for t, s in recorder.commands if start <= t <= end and s is not None])
    if floating and odom:
        t = np.array([stamp for _, stamp, _ in odom])
        pose = np.array([p for _, _, p in odom])
        last = t >= t[-1] - LAST_SECONDS
        result.update({
            'base_position': {'initial': pose[0, :3].tolist(), 'final': pose[-1, :3].tolist()},
            'base_height': {'min': float(pose[:, 2].min()), 'max': float(pose[:, 2].max()),
                            'final': float(pose[-1, 2]), 'min_last3s': float(pose[last, 2].min()),
                            'max_last3s': float(pose[last, 2].max())},
            'base_tilt_deg': {'max': float(tilt_degrees(pose[:, 3:]).max()),
                              'final': float(tilt_degrees(pose[-1, 3:]))},
        })
        result['fell'] = result['base_tilt_deg']['max'] > FALLEN_TILT
        second_half = t >= (t[0] + t[-1]) / 2.0
        if cmd_vel is not None and second_half.sum() > 1:
            result['base_velocity'] = {'commanded': list(cmd_vel),
                                       'achieved': base_velocity(t[second_half], pose[second_half])}
    return result


def fell(result):
    """[(FELL, reason)] when the base tilted over, else []."""
    return [(FELL, f"the robot fell: its base tilted {result['base_tilt_deg']['max']:.0f} deg (more than "
                   f"{FALLEN_TILT:g})")] if result.get('fell') else []


def report(result: dict, duration: float) -> list[str]:
    lines = [f"ran {result['sim_time']:.2f} s of sim time in {result['wall_time']:.2f} s wall: real-time factor "
             f"{result['real_time_factor']:.2f}"]
    if result['simulation_stopped']:
        lines.insert(0, f"the simulation stopped: {result['simulation_stopped']}")
    elif result['sim_time'] < duration - 0.01:
        lines.append(f"note: ran only {result['sim_time']:.2f} s of the {duration:g} s of sim time asked for "
                     "(the loop ran slower than real time, or a node stopped)")
    if result.get('fell'):
        lines.insert(0, fell(result)[0][1])
    if 'base_position' in result:
        p0, p1 = (np.array(result['base_position'][k]) for k in ('initial', 'final'))
        h = result['base_height']
        lines += [f"base position (m): start [{p0[0]:.4f}, {p0[1]:.4f}, {p0[2]:.4f}] -> end "
                  f"[{p1[0]:.4f}, {p1[1]:.4f}, {p1[2]:.4f}]; moved {1e3 * np.hypot(*(p1 - p0)[:2]):.1f} mm "
                  "horizontally",
                  f"base height (m): min {h['min']:.4f}, max {h['max']:.4f}, final {h['final']:.4f}; last "
                  f"{LAST_SECONDS:g} s within [{h['min_last3s']:.4f}, {h['max_last3s']:.4f}]",
                  f"base tilt: max {result['base_tilt_deg']['max']:.2f} deg, final "
                  f"{result['base_tilt_deg']['final']:.2f} deg"]
    if 'base_velocity' in result:
        commanded, achieved = (result['base_velocity'][k] for k in ('commanded', 'achieved'))
        lines.append(f"base velocity (vx, vy m/s, wz rad/s; heading frame, second half): commanded "
                     f"[{commanded[0]:.3f}, {commanded[1]:.3f}, {commanded[2]:.3f}], achieved "
                     f"[{achieved[0]:.3f}, {achieved[1]:.3f}, {achieved[2]:.3f}]")
    return lines + loop_lines(result)


def run(args: argparse.Namespace, model: Model, urdf: str, env: dict) -> int:
    try:
        from .monitor import BaseRecorder  # rclpy and the message packages
    except ImportError as e:
        raise RobotDynamicsError(f"needs rclpy and the ROS 2 message packages ({e}): pip install '.[ros,legged]' "
                                 "(from the package source) or source a ROS 2 installation") from None
    floating = not model.fixed_base
    controller = None if args.controller == 'none' else 'legged_controller'
    use_environment(env)
    if floating:
        files = legged_parameter_files(urdf, args.config)
    else:
        files = [os.path.abspath(args.config)] if args.config else []
    log_dir = tempfile.mkdtemp(prefix='robot_dynamics_bringup_')
    print(f"bringup: {os.path.basename(urdf)} ({model.nv} DOF{', floating base' if floating else ''}), "
          f"{controller or 'no controller (zero effort)'}, {describe_domain(env)}, logs in {log_dir}")
    common = [arg for file in files for arg in ('--params-file', file)] + ['-p', f'urdf_file:={urdf}']
    if args.srdf:
        common += ['-p', f'srdf_file:={os.path.abspath(args.srdf)}']
    if args.gravity is not None:
        common += ['-p', f'gravity:={[float(g) for g in args.gravity]}']
    if not args.mimic:
        common += ['-p', 'mimic:=false']
    node_args = {'simulator': common + ['-p', f'wait_for_command:={controller is not None}',
                                        '-p', f'sync:={args.sync}']}
    if floating:
        node_args['simulator'] += ['-p', f"root_joint:={args.root_joint}"]
    if args.ground_friction is not None:
        node_args['simulator'] += ['-p', f'ground_friction:={args.ground_friction}']
    if controller:
        node_args[controller] = common + ['-p', f"root_joint:={args.root_joint}", '-r', 'odom:=/simulator/odom']
        if args.cmd_vel is not None:
            node_args[controller] += ['-p', 'gait:=trot']
    if args.view:
        node_args['viewer'] = common + view.viewer_node_args(args, args.root_joint)

    recorder = BaseRecorder(model.name, model.all_joint_names, controller)   # (the simulator names mimic joints too)
    if controller and args.cmd_vel is not None:
        walk_on_command(recorder, args.cmd_vel)
    stopping.catch()   # Ctrl-C, SIGTERM: recorded; spin_or_stop ends the run on them, the nodes are stopped
    processes = {}

    def startup():
        processes.update({name: start_node(name, ros_args, env, os.path.join(log_dir, name + '.log'))
                          for name, ros_args in node_args.items()})
        if args.view:
            view.print_url(processes['viewer'], log_dir, args.startup_timeout)
        return StartupWait(recorder, processes, log_dir, args.startup_timeout).until(
            lambda: recorder.states and (controller is None or recorder.commands),
            'a command from the controller' if controller else 'a joint state')
    cap = wall_cap(args)
    run = record(recorder, processes, startup, args.duration, recorder.sim_time_since,
                 f"running; recording {args.duration:g} s of sim time ...", cap)
    logs = node_logs(processes, log_dir, run.failed_to_start)
    result = summary(recorder, run.start, run.end, logs['simulator'], floating,
                     args.cmd_vel if controller else None)
    plot = (lambda: write_plot(recorder, args.cmd_vel if controller else None, args.plot)) \
        if args.plot and floating else None
    return finish(run, logs, result, report(result, args.duration), args.report, plot,
                  run_failures(run, result, args.duration, cap) + fell(result))


def walk_on_command(recorder, command):
    """Publish ``command`` on legged_controller/cmd_vel every CMD_VEL_PERIOD from STAND_FIRST s of sim time on."""
    from geometry_msgs.msg import Twist
    publisher = recorder.node.create_publisher(Twist, 'legged_controller/cmd_vel', 10)
    message = Twist()
    message.linear.x, message.linear.y, message.angular.z = command

    def publish():
        if recorder.states and recorder.states[-1][1] - recorder.states[0][1] >= STAND_FIRST:
            publisher.publish(message)
    recorder.node.create_timer(CMD_VEL_PERIOD, publish)
