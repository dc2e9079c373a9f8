"""``robot-dynamics bringup``: the closed loop of closed_loop.launch.py without a ROS install.

Starts the simulator, the computed-torque controller and the trajectory publisher as separate processes
with the same parameter files (``resources.parameter_files``: any URDF runs without a config), on the
caller's ROS domain (``ROS_DOMAIN_ID``) unless told otherwise (``--domain-id``, ``--isolated``); records joint
states, tracking error and compute time in this process; stops the nodes with SIGINT and checks they exit 0;
prints tracking error, rates and compute time, and writes, when asked, a tracking plot and a JSON report. Exits
non-zero when the run failed (node_runs: NODE_FAILED, FELL, INCOMPLETE, BEYOND_BOUND; docs/command_line.md).
"""
import argparse
import os
import tempfile

import numpy as np

from .. import algorithms, fast, load_urdf, stopping
from ..errors import RobotDynamicsError
from ..fast.codegen import MAX_DOF
from ..model.model import PRISMATIC
from ..model.srdf import load_srdf, stance_configuration
from ..resources import bundled_urdf, parameter_files
from . import float_in, int_in, positive_float, view
from .legged_bringup import velocity_command
from .node_runs import (BEYOND_BOUND, NO_MATPLOTLIB, StartupWait, compute_time, finish, longest_silence, loop_lines,
                        node_logs, pyplot, rate, record, run_failures, simulation_stopped, steps_per_second, wall_cap)
from .processes import MAX_DOMAIN_ID, describe_domain, loop_environment, start_node, use_environment

NODES = ('simulator', 'computed_torque_controller', 'trajectory_publisher')
STARTUP_TIMEOUT = 600.0   # s: a first run compiles the nodes' kernels, 160 s at load 10 for the Cartesian controller
MAX_GRAVITY = 100.0       # m/s^2 per component: ten times the Earth's
MAX_FRICTION = 10.0       # friction coefficients of real materials lie below 2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('--duration', type=positive_float, default=10.0,
                        help='seconds of sim time to run the loop (in real time at most 3x as long plus 10 s on the '
                             'wall clock; in lockstep as long as it takes)')
    parser.add_argument('--max-wall', type=positive_float, default=None, metavar='SECONDS',
                        help='stop the run after this many seconds of wall time (after start-up); one that did not '
                             'complete its sim time then exits 3')
    parser.add_argument('--max-error', type=positive_float, default=None, metavar='DEG|MM',
                        help='exit 5 when a tracking error exceeds this: degrees for revolute joints, millimetres for '
                             'prismatic ones; with --controller cartesian millimetres of position, degrees of '
                             'orientation')
    parser.add_argument('--urdf', default=None, help='URDF or xacro file (default: bundled arm7.urdf)')
    parser.add_argument('--srdf', default=None,
                        help="the robot's SRDF (MoveIt's semantic description): its virtual_joint gives the root "
                             "joint, its group_state 'standing' (else 'home', else the first) the initial posture and "
                             "stance, its end effectors the feet (parameter srdf_file of the nodes)")
    parser.add_argument('--config', default=None,
                        help='ROS 2 parameters YAML; overrides any parameter (default: none; every per-joint '
                             'parameter comes from the URDF)')
    parser.add_argument('--plot', default=None, metavar='FILE',
                        help='plot to write (PNG; default: none): the tracking, or for a robot on the ground its '
                             'base velocity, commanded and achieved')
    parser.add_argument('--report', default=None, help='JSON summary to write (real-time factor, tracking error)')
    add_domain_arguments(parser)
    parser.add_argument('--sync', choices=('realtime', 'lockstep'), default='realtime',
                        help="simulator: 'realtime' (the default) or 'lockstep' (step when the controller has "
                             "answered: sim time runs as fast as the loop, the same on any machine load)")
    parser.add_argument('--startup-timeout', type=positive_float, default=STARTUP_TIMEOUT,
                        help='seconds to wait for each node to be ready (the first run on a machine compiles their '
                             'kernels: minutes under load; default %(default)g)')
    parser.add_argument('--root-joint', choices=('floating',), default=None,
                        help="join the URDF's root link to the world by a floating joint: the robot stands on the "
                             "ground under the legged controller (config/legged.yaml)")
    parser.add_argument('--controller', choices=('auto', 'none', 'cartesian'), default='auto',
                        help="'auto': the computed-torque controller for a fixed base, the legged controller for a "
                             "floating one; 'cartesian': the Cartesian controller following a circle (fixed base); "
                             "'none': the simulator alone, zero effort")
    parser.add_argument('--mimic', action=argparse.BooleanOptionalAction, default=True,
                        help="couple each URDF <mimic> joint to its master (the nodes' parameter mimic: a gripper's "
                             "fingers move as one joint; the default); --no-mimic: every joint is a degree of "
                             "freedom of its own")
    parser.add_argument('--cmd-vel', type=velocity_command, default=None, metavar='VX,VY,WZ',
                        help='floating base: the legged controller trots (gait trot); stand 1 s, then walk at this '
                             'velocity (m/s, m/s, rad/s in the base frame, on /legged_controller/cmd_vel); the '
                             'report gains base_velocity')
    parser.add_argument('--gravity', type=float_in(-MAX_GRAVITY, MAX_GRAVITY), nargs=3, metavar=('GX', 'GY', 'GZ'),
                        default=None, help='gravity in the world frame, m/s^2 (each within +-%g), for the simulator '
                                           'and the controller' % MAX_GRAVITY)
    parser.add_argument('--ground-friction', type=float_in(0.0, MAX_FRICTION), default=None, metavar='MU',
                        help='friction coefficient of the ground, 0 to %g (floating base; default from '
                             'config/legged.yaml)' % MAX_FRICTION)
    parser.add_argument('--compile', action='store_true',
                        help="first compile the robot's per-robot code for the nodes (rnea, crba, aba) where it is not "
                             "in the disk cache (as 'robot-dynamics compile URDF --only rnea crba aba'; once per robot)")
    parser.add_argument('--view', action='store_true',
                        help='also run the viewer node: the robot in the browser as the simulator moves it (the '
                             "'view' extra); its URL is printed")
    view.add_server_arguments(parser)


def add_domain_arguments(parser):
    """--domain-id and --isolated, shared with `record`."""
    parser.add_argument('--domain-id', type=int_in(0, MAX_DOMAIN_ID), default=None,
                        help='ROS_DOMAIN_ID for the nodes (default: the environment\'s ROS_DOMAIN_ID, else 0)')
    parser.add_argument('--isolated', action='store_true',
                        help='localhost-only discovery, on --domain-id or else on domain 1 + (process id mod 100), '
                             'which the first line names')


def sim_time_since(recorder, first):
    """Sim time from the joint state with index `first` to the newest one."""
    states = recorder.states
    return states[-1][1] - states[first][1] if len(states) > first + 1 else 0.0


def joint_kinds(model):
    """joint name -> 'revolute' (also continuous) or 'prismatic'."""
    return {name: 'prismatic' if kind == PRISMATIC else 'revolute'
            for name, kind in zip(model.joint_names, model.joint_type)}


def display_units(model):
    """(unit, scale from SI) per DOF for people: degrees for revolute joints, millimetres for prismatic ones."""
    return [('mm', 1e3) if kind == 'prismatic' else ('deg', np.degrees(1.0)) for kind in joint_kinds(model).values()]


def tracking(recorder, model, start=-np.inf, end=np.inf):
    """(stamps, q_ref, q) in model order, (k, nv) SI units, for the controller updates received in [start, end]
    whose joint state was received too: q_ref = q + (q_ref - q) from ~/tracking_error, matched by stamp."""
    order = [recorder.state_names.index(name) for name in model.joint_names] if recorder.state_names else []
    positions = {stamp: q[order] for _, stamp, q in recorder.states}
    rows = [(stamp, positions[stamp] + error, positions[stamp])
            for t, stamp, error in recorder.errors if start <= t <= end and stamp in positions]
    if not rows:
        return np.zeros(0), np.zeros((0, model.nv)), np.zeros((0, model.nv))
    stamps, reference, actual = zip(*rows)
    return np.array(stamps), np.array(reference), np.array(actual)


def summary(recorder, model, start, end, sim_log):
    """The run in numbers, SI units (rad, m): what `--report` writes and `report` prints."""
    errors = np.array([e for t, _, e in recorder.errors if start <= t <= end]).reshape(-1, model.nv)
    _, reference, _ = tracking(recorder, model, start, end)
    stamps = [s for t, s, _ in recorder.states if start <= t <= end]
    simulated = stamps[-1] - stamps[0] if len(stamps) > 1 else 0.0
    wall = end - start

    def per_joint(values):   # None where nothing was measured
        return dict(zip(model.joint_names, map(float, values))) if len(values) else None
    return {
        'robot': model.name,
        'sim_time': simulated,
        'wall_time': wall,
        'real_time_factor': simulated / wall if wall > 0 else 0.0,
        'joint_names': list(model.joint_names),
        'joint_kinds': joint_kinds(model),
        'units': 'rad for revolute joints, m for prismatic joints',
        'controller_updates': len(errors),
        'max_tracking_error': per_joint(np.max(np.abs(errors), axis=0) if len(errors) else ()),
        'rms_tracking_error': per_joint(np.sqrt(np.mean(errors**2, axis=0)) if len(errors) else ()),
        'reference_range': per_joint(np.ptp(reference, axis=0) if len(reference) else ()),
        'simulator_steps_per_second': steps_per_second(sim_log),
        'joint_states_hz': rate(recorder.states, start, end),
        'controller_commands_hz': rate(recorder.errors, start, end),
        'compute_time_us': compute_time(recorder.compute_us),
        'simulation_stopped': simulation_stopped(sim_log),
        'controller_silence': longest_silence(stamps, [s for t, s, _ in recorder.errors if start <= t <= end]),
        'ignored_joint_states': recorder.intake.ignored,
    }


def beyond_bound(result, model, bound):
    """[(BEYOND_BOUND, reason)] when a joint's largest tracking error exceeds ``bound`` (deg for revolute joints,
    mm for prismatic ones), else []."""
    errors = result['max_tracking_error']
    if bound is None or errors is None:
        return []
    value, name, unit = max((errors[name] * scale, name, unit)
                            for name, (unit, scale) in zip(model.joint_names, display_units(model)))
    return [(BEYOND_BOUND, f"the tracking error of {name} reached {value:.4f} {unit}, beyond --max-error {bound:g}")
            ] if value > bound else []


def report(result, model, duration=None):
    """Lines for the user from `summary`: sim time and real-time factor, tracking error per joint (degrees for
    revolute joints, millimetres for prismatic ones), rates, compute time."""
    lines = [f"ran {result['sim_time']:.2f} s of sim time in {result['wall_time']:.2f} s wall: real-time factor "
             f"{result['real_time_factor']:.2f}"]
    if result['simulation_stopped']:
        lines.insert(0, f"the simulation stopped: {result['simulation_stopped']}")
    elif duration is not None and result['sim_time'] < duration - 0.01:
        lines.append(f"note: ran only {result['sim_time']:.2f} s of the {duration:g} s of sim time asked for "
                     "(the loop ran slower than real time, or a node stopped)")
    if result['controller_updates']:
        lines.append(f"tracking error over {result['controller_updates']} controller updates "
                     "(deg for revolute joints, mm for prismatic):")
        lines.append(f"  {'joint':<24}{'RMS':>10}{'max':>10}  unit")
        for name, (unit, scale) in zip(model.joint_names, display_units(model)):
            rms, peak = result['rms_tracking_error'][name] * scale, result['max_tracking_error'][name] * scale
            lines.append(f"  {name:<24}{rms:>10.4f}{peak:>10.4f}  {unit}")
    else:
        lines.append("tracking error: no controller updates received")
    return lines + loop_lines(result)


def write_plot(recorder, model, path):
    """The tracking figure as a PNG; returns a message."""
    plt = pyplot()
    if plt is None:
        return NO_MATPLOTLIB
    fig = tracking_figure(recorder, model, plt)
    if fig is None:
        return "no plot: nothing was recorded"
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return f"tracking plot written to {os.path.abspath(path)}"


def tracking_figure(recorder, model, plt):
    """Per joint: reference and actual position (left), tracking error (right), against the joint states'
    stamps (sim time); degrees for revolute joints, millimetres for prismatic ones; the legend above the
    axes. None when nothing was recorded. `plt`: matplotlib.pyplot, an optional dependency the caller imports."""
    stamps, reference, actual = tracking(recorder, model)
    if not len(stamps):
        return None
    time_axis = stamps - stamps[0]
    n = model.nv
    fig, axes = plt.subplots(n, 2, sharex=True, squeeze=False, figsize=(11, 1.2 + 1.5 * n))
    for i, (name, (unit, scale)) in enumerate(zip(model.joint_names, display_units(model))):
        position, error = axes[i]
        position.plot(time_axis, scale * actual[:, i], color='tab:blue', lw=2.5, alpha=0.6, label='actual')
        position.plot(time_axis, scale * reference[:, i], '--', color='black', lw=1.0, label='reference')
        position.set_ylabel(f"{name}\n({unit})", fontsize='small')
        error.plot(time_axis, scale * (reference[:, i] - actual[:, i]), color='tab:red', lw=0.8)
        error.set_ylabel(f"error ({unit})", fontsize='small')
        for axis in (position, error):
            axis.tick_params(labelsize='small')
            axis.grid(alpha=0.3)
    axes[0, 0].set_title('position: reference and actual')
    axes[0, 1].set_title('tracking error q_ref - q')
    for axis in axes[-1]:
        axis.set_xlabel('time (s, joint-state stamps)')
    fig.suptitle(f"robot-dynamics bringup: computed-torque tracking, {model.name}")
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc='upper right', ncol=2, fontsize='small')   # in the title row, above the data
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.3 / (1.2 + 1.5 * n)))
    return fig


def offer_compiled_code(model, compile_now):
    """Compile the nodes' per-robot code ahead when asked and missing (with the time per algorithm); else, where it
    is missing, say how to get it. The nodes decide at start which code serves them and keep it for the run."""
    if fast.BACKEND != 'numba' or model.nv > MAX_DOF or not fast.ENABLE:
        return
    missing = [name for name in fast.NODE_ALGORITHMS if fast.path(model, algorithm=name) != 'generated']
    if missing and compile_now:
        print(f"bringup: compiling per-robot code for {model.name!r} ({', '.join(missing)}) before the nodes start")
        fast.specialize(model, tuple(missing), lambda name, seconds: print(f"  {name:<6} {seconds:6.1f} s", flush=True))
    elif missing:
        print("bringup: the nodes run the table kernels; --compile builds per-robot code ahead (once per robot)")


def run(args: argparse.Namespace) -> int:
    urdf = os.path.abspath(args.urdf or bundled_urdf())
    if args.config and not os.path.isfile(args.config):
        raise FileNotFoundError(f"config file not found: {os.path.abspath(args.config)}")
    if args.controller == 'cartesian' and args.root_joint:
        raise ValueError("--controller cartesian is for a fixed-base arm: leave out --root-joint")
    if args.controller == 'none' and args.sync == 'lockstep':
        raise ValueError("--sync lockstep steps the simulator when the controller answers: --controller none has none")
    if args.ground_friction is not None and args.root_joint is None:
        raise ValueError("--ground-friction is for a robot on the ground: give --root-joint floating")
    srdf = load_srdf(args.srdf) if args.srdf else None
    args.root_joint = args.root_joint or (srdf.root_joint if srdf is not None else None)   # the nodes' root_joint
    if args.max_error is not None and (args.root_joint or args.controller == 'none'):
        raise ValueError("--max-error bounds a tracking error: it needs the computed-torque or the Cartesian "
                         "controller (a fixed base)")
    if args.cmd_vel is not None and (args.root_joint is None or args.controller != 'auto'):
        raise ValueError("--cmd-vel walks a robot on the ground under the legged controller: give --root-joint "
                         "floating (or an SRDF with a floating virtual_joint)")
    model = load_urdf(urdf, root_joint=args.root_joint,  # a URDF the nodes cannot run with fails here, in one line
                      mimic=args.mimic)
    if model.coupling is not None and args.root_joint and args.controller == 'auto':
        raise ValueError(f"the legged controller does not take coupled <mimic> joints yet "
                         f"({', '.join(sorted(model.mimic))}): give --no-mimic")
    if srdf is not None:
        stance_configuration(model, srdf)   # an SRDF that does not fit the URDF too
    algorithms.aba(model, model.neutral(), np.zeros(model.nv), np.zeros(model.nv))  # the simulator's forward dynamics
    env = loop_environment(args.domain_id, args.isolated)
    offer_compiled_code(model, args.compile)
    if args.root_joint or args.controller == 'none':
        from . import legged_bringup
        return legged_bringup.run(args, model, urdf, env)
    if args.controller == 'cartesian':
        from . import cartesian_bringup
        return cartesian_bringup.run(args, model, urdf, parameter_files(urdf, args.config), env)
    try:
        from .monitor import Recorder  # rclpy and the message packages
        from ..nodes.launch_support import LOCKSTEP_STATE_TIMEOUT
    except ImportError as e:
        raise RobotDynamicsError(f"needs rclpy and the ROS 2 message packages ({e}): pip install '.[ros]' "
                                 "(from the package source) or source a ROS 2 installation") from None
    use_environment(env)
    files = parameter_files(urdf, args.config)
    log_dir = tempfile.mkdtemp(prefix='robot_dynamics_bringup_')
    print(f"bringup: {os.path.basename(urdf)} ({model.nv} DOF) with {', '.join(map(os.path.basename, files))}, "
          f"{describe_domain(env)}, logs in {log_dir}")

    recorder = Recorder(model.all_joint_names)   # (the simulator names the mimic joints too)
    stopping.catch()   # Ctrl-C, SIGTERM: recorded; spin_or_stop ends the run on them, the nodes are stopped
    ros_args = [arg for file in files for arg in ('--params-file', file)] + ['-p', f'urdf_file:={urdf}']
    if args.srdf:
        ros_args += ['-p', f'srdf_file:={os.path.abspath(args.srdf)}']
    if not args.mimic:
        ros_args += ['-p', 'mimic:=false']
    if args.gravity is not None:
        ros_args += ['-p', f'gravity:={[float(g) for g in args.gravity]}']
    node_args = {name: ros_args for name in NODES}
    node_args['simulator'] = ros_args + ['-p', f'sync:={args.sync}', '-p', 'publish_while_paused:=true']
    if args.sync == 'lockstep':   # (see LOCKSTEP_STATE_TIMEOUT)
        node_args['computed_torque_controller'] = ros_args + ['-p', f'state_timeout:={LOCKSTEP_STATE_TIMEOUT}']
    node_args['viewer'] = ros_args + view.viewer_node_args(args)
    processes = {}

    def start_nodes(*names):
        for name in names:
            processes[name] = start_node(name, node_args[name], env, os.path.join(log_dir, name + '.log'))

    def startup():
        # The record covers the run from its first step: the simulator is paused (still publishing its state,
        # publish_while_paused, for the controller to start from) once this process hears it,
        # the controller started, and the simulator resumed once the controller follows the demo trajectory
        # and its tracking error arrives here (in lockstep sim time runs faster than the wall clock: a trajectory
        # arriving late would leave the run's start without a reference).
        wait = StartupWait(recorder, processes, log_dir, args.startup_timeout)
        start_nodes('simulator', 'trajectory_publisher', *['viewer'] * args.view)
        if args.view:
            view.print_url(processes['viewer'], log_dir, args.startup_timeout)
        not_ready = wait.until(lambda: recorder.states and recorder.request_pause(True), 'the first joint state')
        if not_ready:
            return not_ready
        start_nodes('computed_torque_controller')

        def following():
            with open(os.path.join(log_dir, 'computed_torque_controller.log')) as f:
                return 'following a trajectory' in f.read()
        return wait.until(lambda: recorder.errors and following() and recorder.request_pause(False),
                          'a controller update on the demo trajectory')
    cap = wall_cap(args)
    run = record(recorder, processes, startup, args.duration, lambda first: sim_time_since(recorder, first),
                 f"loop running; recording {args.duration:g} s of sim time ...", cap)
    logs = node_logs(processes, log_dir, run.failed_to_start)
    result = summary(recorder, model, run.start, run.end, logs['simulator'])
    return finish(run, logs, result, report(result, model, args.duration), args.report,
                  (lambda: write_plot(recorder, model, args.plot)) if args.plot else None,
                  run_failures(run, result, args.duration, cap) + beyond_bound(result, model, args.max_error))
