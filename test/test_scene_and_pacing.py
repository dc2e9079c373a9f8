"""The simulator node's scene and real-time pacing, without ROS (simulation/scene.py, simulation/pacing.py)."""
import numpy as np
import pytest

from conftest import BUNDLED_URDF, ROOT, example_robot_data
from robot_dynamics_ros import load_urdf
from robot_dynamics_ros.model.srdf import load_srdf
from robot_dynamics_ros.simulation.pacing import CATCH_UP_PER_TICK, KEEP_UP_FRACTION, KEEP_UP_WINDOW, MAX_LAG, \
    Pacing
from robot_dynamics_ros.simulation.scene import SceneError, SceneSettings, build_scene

QUADRUPED = f'{ROOT}/urdf/quadruped.urdf'


def read(path):
    with open(path) as f:
        return f.read()


def test_an_arm_starts_in_the_middle_of_its_limits_without_ground():
    model = load_urdf(BUNDLED_URDF)
    scene = build_scene(model, read(BUNDLED_URDF), SceneSettings())
    assert scene.sim.contact is None
    np.testing.assert_array_equal(scene.sim.q, model.middle_of_limits())
    assert scene.sim.t == 0.0 and not scene.notes and not scene.warnings


def test_a_quadruped_takes_its_srdf_stance_lowered_onto_the_ground():
    """A1: the SRDF's group_state, its lowest contact point on the ground (height 0 to rounding), the feet bearing
    the weight after the warm-up step, then reset to the spawn pose at rest."""
    urdf = example_robot_data('a1_description/urdf/a1.urdf')
    model = load_urdf(urdf, root_joint='floating')
    srdf = load_srdf(example_robot_data('a1_description/srdf/a1.srdf'))
    scene = build_scene(model, read(urdf), SceneSettings(), srdf)
    assert scene.notes == ["initial posture: the SRDF's group_state 'standing'"], scene.notes
    assert scene.warnings == []
    sim = scene.sim
    assert abs(sim.contact.lowest_height(sim.q)) < 1e-12
    assert np.all(sim.qd == 0.0) and sim.t == 0.0
    assert np.array_equal(sim.contact_forces, scene.resting_forces) and np.any(scene.resting_forces != 0.0)


def test_a_quadruped_spawned_on_its_trunk_is_warned_about():
    """The bundled quadruped with its legs folded up rests on its trunk, not on its feet (the calves)."""
    model = load_urdf(QUADRUPED, root_joint='floating')
    folded = build_scene(model, read(QUADRUPED), SceneSettings(initial_positions=np.array([0.0, 0.0, -2.6] * 4)))
    assert len(folded.warnings) == 1 and "'quadruped' spawns resting on ['trunk'], not on its feet" in \
        folded.warnings[0], folded.warnings
    standing = build_scene(model, read(QUADRUPED), SceneSettings(initial_positions=np.array([0.0, 0.6, -1.2] * 4)))
    assert standing.warnings == []


@pytest.mark.parametrize('settings, floating, reason', [
    (SceneSettings(initial_base_pose=np.array([0, 0, 1, 0, 0, 0, 1.0])), False, 'is for a floating root_joint'),
    (SceneSettings(ground='on'), False, 'has no contact points for the ground'),
    (SceneSettings(ft_sensors=['no_such_joint']), False, "parameter 'ft_sensors'"),
    (SceneSettings(integrator='leapfrog'), False, 'leapfrog'),
])
def test_a_scene_the_settings_cannot_run_is_a_scene_error_with_the_reason(settings, floating, reason):
    model = load_urdf(BUNDLED_URDF)
    with pytest.raises(SceneError, match=reason):
        build_scene(model, read(BUNDLED_URDF), settings)


def test_pacing_steps_the_periods_due_on_the_wall_clock_capped_per_tick():
    period = 0.001
    pacing = Pacing(1.0, period)
    pacing.tie(10.0, 0.0)
    assert pacing.periods_due(10.0, 0.0) == 0                        # on time: nothing due
    assert pacing.periods_due(10.003, 0.0) == 3                      # three periods late
    cap = int(CATCH_UP_PER_TICK / period)
    assert pacing.periods_due(10.0 + 2 * cap * period, 0.0) == cap   # a late tick steps at most the cap
    assert Pacing(2.0, period).periods_due(0.002, 0.0) == 4          # twice real time: twice the periods
    assert Pacing(0.0, period).periods_due(100.0, 0.0) == 1          # as fast as possible: one per tick


def test_pacing_forgives_a_stall_and_ties_anew():
    pacing = Pacing(1.0, 0.001)
    pacing.tie(0.0, 0.0)
    assert pacing.periods_due(2 * MAX_LAG, 0.0) == 1   # stalled: one period, and sim time tied to this wall time
    assert pacing.anchor == (2 * MAX_LAG, 0.0)
    assert pacing.periods_due(2 * MAX_LAG + 0.002, 0.001) == 1


def test_pacing_reports_a_shortfall_over_a_whole_window():
    pacing = Pacing(1.0, 0.001)
    assert pacing.shortfall(0.0, 0.0) is None                          # the window starts
    assert pacing.shortfall(KEEP_UP_WINDOW / 2, 0.0) is None           # not a whole window yet
    slow = 0.5 * KEEP_UP_FRACTION * KEEP_UP_WINDOW
    achieved, window = pacing.shortfall(KEEP_UP_WINDOW, slow)
    assert achieved == pytest.approx(slow / KEEP_UP_WINDOW) and window == KEEP_UP_WINDOW
    assert pacing.shortfall(2 * KEEP_UP_WINDOW, slow + KEEP_UP_WINDOW) is None   # kept up over the next window
