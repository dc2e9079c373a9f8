"""What the view tests share: a small robot whose visuals are STL meshes we write (a package folder with meshes/ and
urdf/), a free port, a headless Chromium driven by Playwright, and the robot's pixels in a screenshot."""
import contextlib
import io
import os
import shutil
import socket

import numpy as np
import pytest

PACKAGE = 'view_test_pkg'
ARM_LIMIT = 1.2   # rad: joint1's upper limit, where the test moves its slider
# Chromium as the CI runs it: headless, no GPU (WebGL through SwiftShader), nothing from the network.
CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
                 '--disable-background-networking', '--disable-component-update', '--disable-sync',
                 '--use-angle=swiftshader', '--enable-unsafe-swiftshader']
VIEWPORT = {'width': 1000, 'height': 700}
SCENE = (slice(150, 700), slice(0, 640))   # rows, columns of the 3D view that no panel or notice covers

URDF = f"""<?xml version="1.0"?>
<robot name="meshy">
  <material name="red"><color rgba="0.9 0.1 0.1 1"/></material>
  <link name="base">
    <inertial><mass value="2"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>
    <visual><geometry><mesh filename="package://{PACKAGE}/meshes/base.stl"/></geometry></visual>
  </link>
  <joint name="joint1" type="revolute">
    <parent link="base"/><child link="arm"/><origin xyz="0 0 0.05"/><axis xyz="0 1 0"/>
    <limit lower="-{ARM_LIMIT}" upper="{ARM_LIMIT}" effort="10" velocity="2"/>
  </joint>
  <link name="arm">
    <inertial><origin xyz="0 0 0.2"/><mass value="1"/>
      <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.001"/></inertial>
    <visual><origin xyz="0 0 0.2"/><geometry><mesh filename="../meshes/arm.stl" scale="1 1 2"/></geometry>
      <material name="red"/></visual>
  </link>
</robot>
"""


def write_mesh_robot(root):
    """A package folder ``<root>/view_test_pkg`` with meshes/base.stl (a 0.2 x 0.2 x 0.1 m box, found through
    package://) and meshes/arm.stl (0.05 x 0.05 x 0.2 m, drawn scaled to 0.4 m tall, found by a relative path);
    returns the URDF's path."""
    trimesh = pytest.importorskip('trimesh')
    package = os.path.join(root, PACKAGE)
    for folder in ('meshes', 'urdf'):
        os.makedirs(os.path.join(package, folder), exist_ok=True)
    trimesh.creation.box(extents=(0.2, 0.2, 0.1)).export(os.path.join(package, 'meshes', 'base.stl'))
    trimesh.creation.box(extents=(0.05, 0.05, 0.2)).export(os.path.join(package, 'meshes', 'arm.stl'))
    path = os.path.join(package, 'urdf', 'meshy.urdf')
    with open(path, 'w') as f:
        f.write(URDF)
    return path


def free_port():
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def browser_page():
    """A page of Debian's headless chromium (skips where it is not installed: .ci/run installs it)."""
    sync_api = pytest.importorskip('playwright.sync_api')
    chromium = shutil.which('chromium')
    if chromium is None:
        pytest.skip('chromium is not installed (apt-get install chromium)')
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            yield browser.new_page(viewport=VIEWPORT)
        finally:
            browser.close()


def open_scene(page, url):
    """Open the page and wait until its 3D canvas is there."""
    page.goto(url)
    page.wait_for_selector('canvas', timeout=60_000)


def screenshot(page):
    """The part of the 3D view no panel covers, as an (h, w, 3) uint8 array."""
    from matplotlib import image
    rgb = image.imread(io.BytesIO(page.screenshot()), format='png')[..., :3]   # floats in [0, 1]
    return np.round(255 * rgb).astype(np.uint8)[SCENE]


def hue_mask(pixels, channel, margin=30):
    """Pixels where colour ``channel`` (0 red, 2 blue) exceeds each other channel by ``margin``: the robot's
    colours, never the white ground or the grey grid (equal channels)."""
    p = pixels.astype(int)
    others = [c for c in range(3) if c != channel]
    return (p[..., channel] > p[..., others[0]] + margin) & (p[..., channel] > p[..., others[1]] + margin)


def centroid(mask):
    rows, columns = np.nonzero(mask)
    return np.array([rows.mean(), columns.mean()])
