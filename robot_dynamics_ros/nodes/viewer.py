"""``viewer`` node: the robot in the browser (viser, the ``view`` extra) as the joint states move it.

Subscribes ``/joint_states`` (and, with a floating root, ``~/odom``: nav_msgs/Odometry, remapped to
``/simulator/odom``), the ground's forces ``<contact_topics><link>`` (geometry_msgs/WrenchStamped, drawn as arrows)
and the controller's ``tracking_error`` (the reference drawn as a ghost, q + (q_ref - q)). Callbacks only keep the
newest message; a timer at ``rate`` draws the newest state when one came since the last frame: frames are dropped,
never queued, and nothing is sent back to the loop. Links are placed by our forward kinematics
(``frame_placements``). The page also plots the real-time factor and the tracking error per joint. The URL is
logged; closing the browser changes nothing. With a ``robot_description`` parameter, ``urdf_file`` (if given) names
the folder that relative mesh names are resolved from.
"""
import os
import sys
import threading
import time
from collections import deque

import numpy as np
from geometry_msgs.msg import WrenchStamped
from nav_msgs.msg import Odometry
from sensor_msgs.msg import JointState

from ..errors import RobotDynamicsError, URDFError
from ..model.collision import contact_points_from_urdf
from ..viewer import require
from ..viewer.geometry import robot_geometry
from ..viewer.scene import RobotScene, look_at_robot, robot_size
from .messages import stamp_seconds
from .model_source import ModelSource
from .node_loop import GuardedNode, STEADY_CLOCK, run
from .node_parameters import declare_parameters
from .parameter_schema import ConfigurationError

GHOST_COLOR = (80, 200, 120)
FORCE_COLOR = (220, 40, 40)
PLOT_SECONDS = 10.0   # window of the live plots
PLOT_PERIOD = 0.2     # s between plot updates
STOP_WAIT = 0.1       # s the web server is given to close its connections when the node stops


class ViewerNode(GuardedNode):
    def __init__(self) -> None:
        super().__init__('viewer')
        self.p = declare_parameters(self, 'viewer')
        try:
            viser, _ = require()
        except RobotDynamicsError as e:
            raise ConfigurationError(str(e)) from None
        self.server = viser.ViserServer(host=self.p['host'], port=self.p['port'], verbose=False)
        self.state = self.odom = self.error = None   # newest messages
        self.forces = {}
        self.drawn = self.received = 0
        self.started = time.monotonic()
        self.stamps = deque()    # (wall time, sim stamp) of the joint states, for the real-time factor
        self.scene = None
        ModelSource(self, self._on_model, with_urdf=True)

    def _on_model(self, model, urdf):
        urdf_file = self.get_parameter('urdf_file').value   # its folder resolves relative mesh names
        geometry = robot_geometry(urdf, urdf_dir=os.path.dirname(os.path.abspath(urdf_file)) if urdf_file else None)
        if geometry.missing:
            self.get_logger().warning(geometry.missing_message())
        self.server.scene.reset()
        self.server.gui.reset()
        self.model, self.q = model, model.neutral()
        self.index = {name: model.joint_q_index[k] for k, name in enumerate(model.joint_names)}
        size = robot_size(model)
        try:
            self.scene = RobotScene(self.server, model, geometry, urdf=urdf)
            self.ghost = (RobotScene(self.server, model, geometry, name='/reference', opacity=0.35, color=GHOST_COLOR)
                          if self.p['reference_topic'] and model.fixed_base else None)
        except URDFError as e:
            raise ConfigurationError(str(e)) from None
        self.server.scene.add_grid('/ground', width=10 * size, height=10 * size, cell_size=0.1,
                                   position=(0.0, 0.0, self.p['ground_height']))
        look_at_robot(self.server, *self.scene.bounds)
        self.arrows = None
        self._subscribe(model, urdf, size)
        self._plots(model)
        if not hasattr(self, 'timer'):
            self.timer = self.create_timer(1.0 / self.p['rate'], self._draw, clock=STEADY_CLOCK)
            self.create_timer(PLOT_PERIOD, self._update_plots, clock=STEADY_CLOCK)
            self.get_logger().info(f"robot {model.name!r} at http://{_host(self.server)}:{self.server.get_port()}")

    def _subscribe(self, model, urdf, size):
        if hasattr(self, 'subscriptions_made'):
            return
        self.subscriptions_made = True
        self.create_subscription(JointState, 'joint_states', self._on_state, 1)
        if not model.fixed_base:
            self.create_subscription(Odometry, '~/odom', lambda msg: setattr(self, 'odom', msg), 1)
        if self.ghost is not None:
            self.create_subscription(JointState, self.p['reference_topic'], lambda m: setattr(self, 'error', m), 1)
        points = contact_points_from_urdf(urdf) if self.p['contact_topics'] else []
        self.feet = {}
        for link in sorted({p.link for p in points}):
            mine = [p for p in points if p.link == link]   # arrows start below the mean of the link's points
            self.feet[link] = (np.mean([p.offset for p in mine], axis=0), np.mean([p.radius for p in mine]))
            self.create_subscription(WrenchStamped, self.p['contact_topics'] + link,
                                     lambda msg, link=link: self.forces.__setitem__(link, msg.wrench.force), 1)
        weight = 9.81 * float(np.sum(model.inertia[:, 5, 5]))
        self.force_scale = size / weight if weight > 0 else 0.0   # the robot's weight as long as the robot

    def _on_state(self, msg):
        self.state = msg
        self.received += 1
        self.stamps.append((time.monotonic(), stamp_seconds(msg.header.stamp)))

    def _draw(self):
        """Draw the newest joint state (and base pose, forces, reference) if one came since the last frame."""
        msg, self.state = self.state, None
        if msg is None or self.scene is None:
            return
        for name, position in zip(msg.name, msg.position):
            if name in self.index and np.isfinite(position):
                self.q[self.index[name]] = position
        if self.odom is not None:
            pose = self.odom.pose.pose
            self.q[:7] = [pose.position.x, pose.position.y, pose.position.z, pose.orientation.x,
                          pose.orientation.y, pose.orientation.z, pose.orientation.w]
            if not np.isclose(np.linalg.norm(self.q[3:7]), 1.0, atol=1e-6):
                return
        placements = self.scene.show(self.q)
        if self.ghost is not None and self.error is not None and len(self.error.position) == len(self.error.name):
            reference = self.q.copy()
            for name, error in zip(self.error.name, self.error.position):
                if name in self.index:
                    reference[self.index[name]] += error
            self.ghost.show(reference)
        if self.feet and self.forces:
            self._draw_forces(placements)
        self.drawn += 1

    def _draw_forces(self, placements):
        segments = []
        for link, force in self.forces.items():
            R, p = placements[link]
            offset, radius = self.feet[link]
            start = p + R @ offset - [0.0, 0.0, radius]
            segments.append([start, start + self.force_scale * np.array([force.x, force.y, force.z])])
        segments = np.array(segments)
        if self.arrows is None or len(self.arrows.points) != len(segments):
            self.arrows = self.server.scene.add_line_segments('/forces', segments, FORCE_COLOR, thickness=3.0,
                                                               thickness_units='screen')
        else:
            self.arrows.points = segments

    def _plots(self, model):
        gui = self.server.gui
        self.plot_rtf = self.plot_error = None
        try:
            from viser import uplot
        except ImportError:   # viser without uplot: no plots
            return
        with gui.add_folder('Real-time factor'):
            self.plot_rtf = gui.add_uplot((np.zeros(1), np.zeros(1)), (uplot.Series(label='t (s)'),
                                          uplot.Series(label='real-time factor', stroke='blue', width=1.5)),
                                          scales={'x': uplot.Scale(time=False)}, aspect=2.5)
        if self.ghost is not None:
            with gui.add_folder('Tracking error q_ref - q (rad or m)'):
                series = [uplot.Series(label='t (s)')] + [
                    uplot.Series(label=name, stroke=f'hsl({int(360 * k / model.nv)}, 70%, 45%)', width=1.0)
                    for k, name in enumerate(model.joint_names)]
                self.plot_error = gui.add_uplot(tuple(np.zeros(1) for _ in series), tuple(series),
                                                scales={'x': uplot.Scale(time=False)}, aspect=1.5)
        self.errors = deque()   # (wall time, error per joint in model order)

    def _update_plots(self):
        now = time.monotonic()
        while self.stamps and self.stamps[0][0] < now - PLOT_SECONDS:
            self.stamps.popleft()
        if self.plot_rtf is not None and len(self.stamps) > 10:
            wall, sim = np.array(self.stamps).T
            step = max(1, len(wall) // 200)
            t, s = wall[::step], sim[::step]
            window = 10   # points of the running ratio
            if len(t) > window:
                rtf = (s[window:] - s[:-window]) / np.maximum(t[window:] - t[:-window], 1e-6)
                self.plot_rtf.data = (t[window:] - now, rtf)
        if self.plot_error is not None and self.error is not None:
            row = np.full(self.model.nv, np.nan)
            for name, error in zip(self.error.name, self.error.position):
                if name in self.model.joint_names:
                    row[self.model.joint_names.index(name)] = error
            self.errors.append((now, row))
            while self.errors[0][0] < now - PLOT_SECONDS:
                self.errors.popleft()
            t = np.array([e[0] for e in self.errors]) - now
            rows = np.array([e[1] for e in self.errors])
            self.plot_error.data = (t, *rows.T)

    def summary(self):
        seconds = time.monotonic() - self.started
        return (f"drew {self.drawn} frames from {self.received} joint states in {seconds:.1f} s "
                f"({self.drawn / seconds:.1f} frames/s)")

    def destroy_node(self):
        # viser's stop() waits up to seconds for its event loop's connection teardown; the process ends right after
        # (nodes/node_loop.run), which closes the sockets anyway: give the teardown STOP_WAIT, not the exit's budget.
        stopping = threading.Thread(target=self.server.stop, daemon=True)
        stopping.start()
        stopping.join(STOP_WAIT)
        super().destroy_node()


def _host(server):
    host = server.get_host()
    return 'localhost' if host in ('0.0.0.0', '127.0.0.1') else host


def main(args: list[str] | None = None) -> int:
    return run(ViewerNode, 'viewer', args)


if __name__ == '__main__':
    sys.exit(main())
