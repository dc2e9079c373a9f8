"""Contact points from URDFs with thousands of collision spheres (model/collision.py, ``reduce_points``): duplicates
dropped, each link reduced to the vertices of the hull of its (centre, radius) points, at most LINK_POINTS of them;
a robot resting on the ground on the reduced set rests as on the full set (height, normal force = weight)."""
import os
import warnings

import numpy as np
import pytest

from conftest import TEST_DIR
from robot_dynamics_ros import URDFWarning, load_urdf
from robot_dynamics_ros.model.collision import LINK_POINTS, ContactPoint, contact_points_from_urdf, reduce_points
from robot_dynamics_ros.resources import bundled_urdf

pytest.importorskip('clarabel')
from robot_dynamics_ros.simulation.bounded_solve import SWEEP_TOLERANCE  # noqa: E402
from robot_dynamics_ros.simulation.ground_contact import Ground  # noqa: E402
from robot_dynamics_ros.simulation.simulator import Simulator  # noqa: E402

MASS, G = 2.0, 9.81
BOTTOM = 0.05    # m: every bottom-layer sphere reaches this far below the link origin
HALF_WIDTH = 0.1  # m: half the side of the square the bottom-layer centres fill


def many_spheres_urdf(count, duplicates=0, seed=0):
    """A 2 kg body whose collision geometry is ``count`` spheres on its one link: a third in a bottom layer (a grid in
    x, y over +-HALF_WIDTH, radii 5-20 mm, every one reaching down to z = -BOTTOM: the whole layer touches a ground
    at once), the rest inside the body above it; ``duplicates`` of them repeated (half exactly, half moved by 10 nm)."""
    rng = np.random.default_rng(seed)
    n_bottom = count // 3
    side = int(np.ceil(np.sqrt(n_bottom)))
    grid = np.linspace(-HALF_WIDTH, HALF_WIDTH, side)
    xy = np.array([(x, y) for x in grid for y in grid])[:n_bottom]
    radius = rng.uniform(0.005, 0.02, n_bottom)
    spheres = [(x, y, -BOTTOM + r, r) for (x, y), r in zip(xy, radius)]
    inside = rng.uniform([-0.08, -0.08, -0.02], [0.08, 0.08, 0.05], (count - n_bottom - duplicates, 3))
    spheres += [(x, y, z, 0.01) for x, y, z in inside]
    repeated = [spheres[i] for i in rng.choice(len(spheres), duplicates)]
    spheres += [s if k % 2 else (s[0] + 1e-8, s[1], s[2] - 1e-8, s[3]) for k, s in enumerate(repeated)]
    collisions = ''.join(f'<collision><origin xyz="{float(x)!r} {float(y)!r} {float(z)!r}"/><geometry>'
                         f'<sphere radius="{float(r)!r}"/></geometry></collision>' for x, y, z, r in spheres)
    inertia = MASS * (2 * HALF_WIDTH) ** 2 / 6
    return (f'<robot name="spheres"><link name="body"><inertial><mass value="{MASS}"/><inertia ixx="{inertia}" '
            f'iyy="{inertia}" izz="{inertia}" ixy="0" ixz="0" iyz="0"/></inertial>{collisions}</link></robot>')


def rest(urdf, points, seconds=0.02):
    """(base height, total normal force, base speed) after ``seconds`` on the ground from the spawn pose."""
    sim = Simulator(load_urdf(urdf, root_joint='floating'), 1e-3, ground=Ground(0.0, 0.8), contact_points=points)
    for _ in range(int(round(seconds / sim.dt))):
        sim.step()
    return sim.q[2], sim.contact_forces[:, 2].sum(), np.linalg.norm(sim.qd)


def test_five_thousand_spheres_and_their_duplicates_become_a_bounded_set_that_rests_as_the_body_does():
    urdf = many_spheres_urdf(5000, duplicates=1000)
    full = contact_points_from_urdf(urdf, reduce=False)
    assert len(full) == 5000
    with pytest.warns(URDFWarning, match=r"'body': 5000 points, \d+ duplicates, \d+ hull vertices"):
        reduced = contact_points_from_urdf(urdf)
    assert 3 <= len(reduced) <= LINK_POINTS
    assert set(reduced) <= set(full)
    # the lowest point of the body upright is kept: rest on the ground at BOTTOM, carrying the weight, still
    height, normal, speed = rest(urdf, reduced)
    assert height == pytest.approx(BOTTOM, abs=1e-6)
    # The sum of normal forces is the weight to within what the bounded solve's stopping tolerance leaves: a velocity
    # residual of SWEEP_TOLERANCE in a step of dt is an acceleration error SWEEP_TOLERANCE / dt, relative to g. (This
    # set holds points 10 nm apart: a degenerate problem whose uncertified steps use all the sweeps; 3.8e-6 seen.)
    assert normal == pytest.approx(MASS * G, rel=SWEEP_TOLERANCE / (G * 1e-3))
    assert speed < 1e-6


def test_the_reduced_set_rests_as_the_full_set_does():
    """The same body with 150 spheres (the full set is then a contact problem solved in seconds): the same height
    and normal force, from the same spawn height (the lowest point is kept)."""
    urdf = many_spheres_urdf(150, duplicates=30, seed=1)
    full = contact_points_from_urdf(urdf, reduce=False)
    with pytest.warns(URDFWarning, match='duplicates'):
        reduced = contact_points_from_urdf(urdf)
    assert len(reduced) < len(full) - 30
    full_rest, reduced_rest = rest(urdf, full), rest(urdf, reduced)
    assert reduced_rest[0] == pytest.approx(full_rest[0], abs=1e-6)
    assert reduced_rest[1] == pytest.approx(full_rest[1], rel=1e-6)
    assert full_rest[1] == pytest.approx(MASS * G, rel=1e-6)


def test_duplicates_go_interior_points_go_hull_vertices_stay_for_unequal_radii():
    """A plane touches a union of spheres only at the hull vertices of their (centre, radius): a sphere halfway
    between two equal ones goes, as does one whose (centre, radius) is halfway between two unequal ones (it touches a
    plane only where both do); one that pokes out below a bigger one stays. The hull is conservative: a small sphere
    inside a big one is dominated (never lower) but its (centre, radius) is a vertex, and it stays."""
    points = [ContactPoint('a', (0.0, 0.0, 0.0), 0.1), ContactPoint('a', (0.0, 0.0, 0.0), 0.1),   # a duplicate
              ContactPoint('a', (0.0, 0.0, 0.05), 0.02),            # inside the first: never lower, kept
              ContactPoint('a', (0.0, 0.0, -0.09), 0.02),           # pokes out below it: lowest when upright
              ContactPoint('a', (1.0, 0.0, 0.0), 0.1),
              ContactPoint('a', (0.5, 0.0, 0.0), 0.1),              # halfway between two equal ones
              ContactPoint('a', (0.5, 0.0, -0.05), 0.15),           # halfway in (centre, radius) of 0 and 4 ...
              ContactPoint('a', (1.0, 0.0, -0.1), 0.2),             # ... with this one
              ContactPoint('b', (0.0, 0.0, 0.0), 0.1)]              # another link: its own set
    with pytest.warns(URDFWarning, match="'a': 8 points, 1 duplicates, 5 hull vertices kept"):
        kept = reduce_points(points)
    assert kept == [points[i] for i in (0, 2, 3, 4, 7, 8)]


def test_a_link_with_more_hull_vertices_than_the_bound_keeps_a_spread_of_them_with_the_lowest():
    """Points on a sphere are all hull vertices: LINK_POINTS are kept, the lowest first, and the warning says how far
    the dropped ones are from the kept ones (farthest-point sampling: at most the sampling's last distance)."""
    rng = np.random.default_rng(3)
    directions = rng.normal(size=(500, 3))
    directions /= np.linalg.norm(directions, axis=1)[:, None]
    points = [ContactPoint('a', tuple(0.1 * d), 0.0) for d in directions]
    with pytest.warns(URDFWarning, match=rf"'a': 500 points, 0 duplicates, 500 hull vertices -> {LINK_POINTS} kept "
                                         r"\(every dropped one within [\d.]+ mm"):
        kept = reduce_points(points)
    assert len(kept) == LINK_POINTS
    offsets = np.array([p.offset for p in kept])
    assert offsets[:, 2].min() == pytest.approx(0.1 * directions[:, 2].min())


def test_bundled_quadruped_and_box_are_left_as_they_are():
    for urdf in (bundled_urdf('quadruped.urdf'), os.path.join(TEST_DIR, 'urdf', 'box.urdf')):
        with warnings.catch_warnings():
            warnings.simplefilter('error', URDFWarning)
            assert contact_points_from_urdf(urdf) == contact_points_from_urdf(urdf, reduce=False)
