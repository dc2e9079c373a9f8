"""The robot in a real browser (Debian's headless chromium, driven by Playwright; .ci/run installs it): the page of
``robot-dynamics view`` draws the meshes of a URDF and a slider moves its arm; the page of ``bringup --view`` draws the
arm and it moves while the arm follows its demo. "Drawn" is read from screenshots: pixels of the robot's colour,
which the white ground and the grey grid never have, where the camera looks (it starts on the robot)."""
import os
import re
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from conftest import BUNDLED_URDF, ROOT
from view_helpers import (ARM_LIMIT, VIEWPORT, browser_page, centroid, free_port, hue_mask, open_scene, screenshot,
                          write_mesh_robot)

pytest.importorskip('viser')   # the view itself (the 'view' extra); view_helpers skips without the browser

RED, BLUE = 0, 2
# The robot is drawn when this many pixels have its colour: a 5 cm wide link seen from under 2 m in a 640 x 550
# view spans thousands; a stray edge of anti-aliasing, tens.
DRAWN = 300
TIMEOUT = 120.0   # s: node start-up (numba kernels load on a cold cache), page load, software WebGL


class Output:
    """The stdout lines of a process, read in a thread."""

    def __init__(self, process):
        self.lines = []
        self.thread = threading.Thread(target=lambda: self.lines.extend(iter(process.stdout.readline, '')),
                                       daemon=True)
        self.thread.start()

    def wait_for(self, text, process, timeout=TIMEOUT):
        """The first line containing text; fails if the process exits or it does not come in time."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = [line for line in self.lines if text in line]
            if found:
                return found[0].strip()
            assert process.poll() is None, f"exited with {process.returncode} before {text!r}:\n{''.join(self.lines)}"
            time.sleep(0.1)
        pytest.fail(f"no {text!r} within {timeout} s:\n{''.join(self.lines)}")


def start(*arguments, **environment):
    process = subprocess.Popen([sys.executable, '-m', 'robot_dynamics_ros.cli', *arguments], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, cwd=ROOT,
                               env=dict(os.environ, PYTHONUNBUFFERED='1', **environment))
    return process, Output(process)


def stop(process):
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
    try:
        return process.wait(30)
    except subprocess.TimeoutExpired:
        process.kill()
        return process.wait()


def wait_for_pixels(page, *channels, timeout=TIMEOUT):
    """A screenshot where at least DRAWN pixels have each colour (meshes arrive over the websocket after the page),
    or the last one taken in time."""
    deadline = time.monotonic() + timeout
    while True:
        pixels = screenshot(page)
        if all(hue_mask(pixels, c).sum() >= DRAWN for c in channels) or time.monotonic() > deadline:
            return pixels
        time.sleep(0.5)


def gravity_torque(page, joint):
    """The gravity torque the page shows for joint, N m."""
    found = re.search(rf'<td>{joint}</td><td>([-+][0-9.]+) N m</td>', page.content())
    assert found, f"no gravity torque of {joint} on the page"
    return float(found.group(1))


def test_view_draws_the_meshes_and_a_slider_moves_the_arm(tmp_path):
    urdf = write_mesh_robot(str(tmp_path))   # base: package:// from the URDF's folder; arm: relative, red
    process, output = start('view', urdf, '--port', str(free_port()), ROS_PACKAGE_PATH='', AMENT_PREFIX_PATH='')
    try:
        url = output.wait_for('view: meshy', process).split(' at ')[1].split()[0]
        with browser_page() as page:
            open_scene(page, url)
            before = wait_for_pixels(page, RED, BLUE)
            arm, base = hue_mask(before, RED), hue_mask(before, BLUE)
            assert arm.sum() >= DRAWN and base.sum() >= DRAWN   # both meshes, in their colours
            # the camera starts looking at the robot's middle: the upright arm stands above the base, near the
            # canvas's middle column (the crop starts at its left edge)
            assert centroid(arm)[0] < centroid(base)[0]
            assert abs(centroid(arm)[1] - VIEWPORT['width'] / 2) < VIEWPORT['width'] / 8
            assert abs(gravity_torque(page, 'joint1')) < 1e-3   # upright: no gravity torque (3 decimals shown)

            slider = page.locator("xpath=//label[normalize-space(.)='joint1']/ancestor::div"
                                  "[contains(@class, 'mantine-Flex-root')][1]//*[@role='slider']")
            slider.focus()
            slider.press('End')   # to the upper limit, 1.2 rad about y: the arm leans over
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and np.array_equal(hue_mask(screenshot(page), RED), arm):
                time.sleep(0.3)
            time.sleep(1.0)
            after = hue_mask(screenshot(page), RED)
            assert after.sum() >= DRAWN
            overlap = (after & arm).sum() / min(after.sum(), arm.sum())
            assert overlap < 0.5   # 69 degrees apart, the 40 cm arms share the pixels near the joint only
            # gravity torque at 1.2 rad: m g l sin(1.2) of the 1 kg arm, centre of mass 0.2 m from the joint, against
            # gravity's moment about +y
            assert gravity_torque(page, 'joint1') == pytest.approx(-1.0 * 9.81 * 0.2 * np.sin(ARM_LIMIT), abs=1e-3)
            assert 'total mass</strong> 3.000 kg' in page.content()
    finally:
        stop(process)


def test_bringup_view_draws_the_arm_as_it_follows_the_demo(tmp_path):
    pytest.importorskip('rclpy')
    from ros_helpers import domain_id   # a domain no concurrent test run uses
    config = tmp_path / 'long_demo.yaml'   # the demo moves for as long as the loop runs (by default it stops at 10 s)
    config.write_text('trajectory_publisher:\n  ros__parameters:\n    duration: 120.0\n')
    process, output = start('bringup', '--view', '--isolated', '--domain-id', str(domain_id(__name__ + ' bringup')), '--duration', '60', '--plot', '', '--port',
                            str(free_port()), '--urdf', BUNDLED_URDF, '--config', str(config))
    try:
        url = output.wait_for('view: http', process).split()[1]
        output.wait_for('loop running', process)
        with browser_page() as page:
            open_scene(page, url)
            masks = [hue_mask(wait_for_pixels(page, BLUE), BLUE)]
            for _ in range(3):
                time.sleep(1.0)
                masks.append(hue_mask(screenshot(page), BLUE))
            assert min(mask.sum() for mask in masks) >= DRAWN
            # A scene standing still renders the same pixels (no change at all); the demo moves every joint, so each
            # second the drawn arm covers other pixels: more than 1% of them, well above a flicker of edge pixels.
            changed = [(a ^ b).sum() / max(a.sum(), b.sum()) for a, b in zip(masks, masks[1:])]
            assert min(changed) > 0.01, changed
            assert process.poll() is None   # the screenshots were taken while the loop ran
        # the browser closed, the loop runs to its end and stops every node, the viewer too, with exit code 0
        assert process.wait(200) == 0, ''.join(output.lines)
        output.thread.join(10)
        assert any('all nodes exited 0' in line for line in output.lines)
    finally:
        stop(process)
