"""``robot-dynamics view URDF [--srdf SRDF]``: the model in the browser (viser, the ``view`` extra).

Visual meshes where the URDF has them (``<collision>`` primitives where they are missing, said once), a slider per
joint within its limits, link frames, centre of mass and contact points on demand, and the dynamics at the
posture shown: gravity torques per joint and the total mass. Runs until Ctrl-C; closing the browser changes
nothing.
"""
import argparse
import os
import re
import time

import numpy as np

from .. import load_urdf
from ..model.srdf import load_srdf, stance_configuration
from ..algorithms.rnea import gravity_torques
from ..model.model import PRISMATIC
from ..viewer import require
from ..viewer.geometry import robot_geometry
from . import int_in

DEFAULT_PORT = 8080
UNLIMITED = {PRISMATIC: 1.0}   # slider half-range where a joint has no limits (m); revolute: pi


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument('urdf', help='URDF or xacro file')
    parser.add_argument('--srdf', default=None,
                        help="SRDF file: the robot shown on its virtual joint (floating or planar root) in its stance "
                             "(group_state 'standing', else 'home', else the first)")
    add_server_arguments(parser)


def add_server_arguments(parser):
    """--port and --host, shared with `bringup --view`."""
    parser.add_argument('--port', type=int_in(1, 65535), default=DEFAULT_PORT,
                        help=f'port of the page (default {DEFAULT_PORT}; the next free one if taken)')
    parser.add_argument('--host', default='127.0.0.1',
                        help="address to serve on (default 127.0.0.1: this machine only; '0.0.0.0': any)")


def start_server(host, port):
    """A viser server (RobotDynamicsError naming the extra when it is missing)."""
    return require()[0].ViserServer(host=host, port=port, verbose=False)


def url(server):
    host = server.get_host()
    return f"http://{'localhost' if host in ('0.0.0.0', '127.0.0.1') else host}:{server.get_port()}"


def slider_range(model, k):
    """(low, high) of the slider of joint k (index into model.joint_names)."""
    iq = model.joint_q_index[k]
    low, high = model.lower[iq], model.upper[iq]
    half = UNLIMITED.get(model.joint_type[model.joint_index(model.joint_names[k])], np.pi)
    return (float(low) if np.isfinite(low) else -half), (float(high) if np.isfinite(high) else half)


def dynamics_text(model, q):
    """Markdown: total mass and the gravity torques at q."""
    moving = float(np.sum(model.inertia[:, 5, 5]))
    tau = gravity_torques(model, q)
    rows = [f"| {name} | {tau[model.joint_v_index[k]]:+.3f} "
            f"{'N' if model.joint_type[model.joint_index(name)] == PRISMATIC else 'N m'} |"
            for k, name in enumerate(model.joint_names)]
    return '\n'.join([f"**total mass** {moving + float(model.root_inertia[5, 5]):.3f} kg "
                      f"(moving {moving:.3f} kg)", '', '| joint | gravity torque |', '|---|---|', *rows])


def posture(urdf, srdf_path=None):
    """(model, q) to show: with an SRDF, the model on its virtual joint at its stance (the SRDF's base pose where it
    gives one); else, or without a group_state, at the middle of the joint limits."""
    srdf = load_srdf(srdf_path) if srdf_path else None
    model = load_urdf(urdf, root_joint=srdf.root_joint if srdf is not None else None)
    stance = stance_configuration(model, srdf) if srdf is not None else None
    return model, (model.middle_of_limits() if stance is None else stance[1])


def run(args: argparse.Namespace) -> int:
    model, q = posture(args.urdf, args.srdf)
    geometry = robot_geometry(args.urdf)
    if geometry.missing:
        print(f"view: {geometry.missing_message()}")
    server = start_server(args.host, args.port)
    try:
        from ..viewer.scene import RobotScene, look_at_robot
        robot = RobotScene(server, model, geometry, urdf=args.urdf)
        look_at_robot(server, *robot.bounds)
        server.scene.add_grid('/ground', width=4.0, height=4.0, cell_size=0.1)
        gui = server.gui
        with gui.add_folder('Show'):
            axes, com, contacts = (gui.add_checkbox(label, False) for label in
                                   ('link frames', 'centre of mass', 'contact points'))
        with gui.add_folder('Joints'):
            sliders = [gui.add_slider(name, *slider_range(model, k), step=1e-3,
                                      initial_value=float(q[model.joint_q_index[k]]))
                       for k, name in enumerate(model.joint_names)]
        with gui.add_folder('Dynamics'):
            panel = gui.add_markdown(dynamics_text(model, q))

        def on_slider(_):
            for k, slider in enumerate(sliders):
                q[model.joint_q_index[k]] = slider.value
            robot.show(q)
            panel.content = dynamics_text(model, q)
        for slider in sliders:
            slider.on_update(on_slider)
        axes.on_update(lambda _: robot.show_axes(axes.value))
        com.on_update(lambda _: robot.show_com(com.value, q))
        contacts.on_update(lambda _: robot.show_contacts(contacts.value))
        robot.show(q)
        print(f"view: {model.name} ({model.nv} DOF) at {url(server)} (Ctrl-C to stop)", flush=True)
        while True:
            time.sleep(1.0)
    finally:
        server.stop()


def viewer_node_args(args, root_joint=None):
    """ROS arguments of the `viewer` node for `bringup --view` (beside the URDF's)."""
    ros_args = ['-p', f'port:={args.port}', '-p', f'host:={args.host}']
    if root_joint:
        ros_args += ['-p', f'root_joint:={root_joint}', '-r', '~/odom:=/simulator/odom']
    return ros_args


def print_url(process, log_dir, timeout):
    """Print the page's URL once the viewer node's log says it (or that it did not)."""
    log_path = os.path.join(log_dir, 'viewer.log')
    address = wait_for_url(log_path, process, timeout)
    print(f"view: {address}" if address else f"view: the viewer gave no URL (log: {log_path})", flush=True)


def wait_for_url(log_path, process, timeout):
    """The page's URL from the viewer node's log, once it says it; None if it exits or says nothing in time."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and process.poll() is None:
        with open(log_path) as f:
            found = re.search(r'at (http://\S+)', f.read())
        if found:
            return found.group(1)
        time.sleep(0.1)
    return None
