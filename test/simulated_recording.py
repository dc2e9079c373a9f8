"""An identification experiment in process, as `robot-dynamics record` runs it over ROS (no ROS needed).

The package Simulator at 1 kHz by semi-implicit Euler with the URDF's damping and Coulomb friction, in lockstep
with the computed-torque controller of config/closed_loop.yaml (gains, integral action, friction feed-forward,
the governor of ``update``), following the waypoints of an excitation trajectory as the trajectory_publisher
sends them (positions only, starting 1 s in), then 0.5 s at rest. Each recorded sample is a state with the
effort applied over the step before it, as the simulator node publishes it: the 'simulator' sampling.
"""
import numpy as np
import yaml

from robot_dynamics_ros.commands.record import SETTLE
from robot_dynamics_ros.control.computed_torque import ComputedTorqueController
from robot_dynamics_ros.control.references import TrajectoryReference
from robot_dynamics_ros.parameters.recordings import Recording
from robot_dynamics_ros.resources import bundled_config
from robot_dynamics_ros.simulation.simulator import Simulator

START = 1.0     # s: the trajectory_publisher's start_time
RATE = 1000.0   # states per second, as record runs the simulator
WAYPOINT_RATE = 50.0   # excite's default --rate


def controller_settings():
    with open(bundled_config('closed_loop.yaml'), encoding='utf-8') as f:
        return yaml.safe_load(f)['computed_torque_controller']['ros__parameters']


def record_in_process(model, trajectory):
    """Noise-free Recording of ``model`` following the FourierTrajectory ``trajectory`` (sampling 'simulator')."""
    settings = controller_settings()
    gravity = np.asarray(settings['gravity'], dtype=float)
    times, q_waypoints, _, _ = trajectory.sample(WAYPOINT_RATE)
    reference = TrajectoryReference(times, q_waypoints)
    sim = Simulator(model, 1.0 / RATE, initial_positions=q_waypoints[0], gravity=gravity)
    controller = ComputedTorqueController(model, settings['kp'], settings['kd'], ki=settings['ki'], gravity=gravity,
                                          friction_compensation=settings['friction_compensation'])
    steps = int(round((START + times[-1] + SETTLE) * RATE))
    t, q, tau = np.zeros(steps), np.zeros((steps, model.nv)), np.zeros((steps, model.nv))
    for k in range(steps):
        effort, *_ = controller.update(sim.t, sim.q, sim.qd, *reference.sample(sim.t - START))
        sim.set_command(effort)
        sim.step()
        t[k], q[k], tau[k] = sim.t, sim.q, sim.applied_effort   # the state after the step, with that step's effort
    return Recording(t, tuple(model.joint_names), q, tau, sampling='simulator')


def with_noise(recording, position_std, effort_fraction, seed):
    """The recording as sensors would give it: positions plus N(0, position_std^2), efforts times
    (1 + N(0, effort_fraction^2))."""
    rng = np.random.default_rng(seed)
    q = recording.q + position_std * rng.normal(size=recording.q.shape)
    tau = recording.tau * (1.0 + effort_fraction * rng.normal(size=recording.tau.shape))
    return Recording(recording.t, recording.joint_names, q, tau, sampling=recording.sampling)
