"""The contact step's bounded solve (issue 39): projected Gauss-Seidel (``simulation/bounded_solve.py``) against the
interior-point solver (Clarabel, the oracle) on random and captured contact problems; trotting in place, a drop from
0.3 m and sliding at mu 0.2 with no interior-point solve; and a robot placed
0.5 m below the ground lifted out without being thrown (issue 37). Thresholds come from the physics or the solvers'
stopping criteria, stated beside each."""
import importlib.util
import os
import types
from unittest import mock

import numpy as np
import pytest

from conftest import ROOT
from mujoco_model import MUJOCO_STEP, mjcf
from robot_dynamics_ros import load_urdf
from robot_dynamics_ros.algorithms.backends import compiled
from robot_dynamics_ros.model.collision import ContactPoint, contact_points_from_urdf
from robot_dynamics_ros.simulation.simulator import Simulator

pytest.importorskip('clarabel')
from robot_dynamics_ros.simulation.bounded_solve import (MAX_SWEEPS, SWEEP_TOLERANCE, SWEPT_ROWS,  # noqa: E402
                                                         projected_gauss_seidel)
from robot_dynamics_ros.simulation.ground_contact import FIXED_POINT_TOLERANCE, Ground, GroundContact  # noqa: E402
from robot_dynamics_ros.simulation import row_solve  # noqa: E402
from robot_dynamics_ros.simulation.roles import SLIDE  # noqa: E402
from robot_dynamics_ros.simulation.step_data import stage_kernels  # noqa: E402

QUADRUPED = os.path.join(ROOT, 'urdf', 'quadruped.urdf')
STAND = np.tile([0.0, 0.8, -1.5], 4)   # hip, thigh, knee of each leg
DT, G = 1e-3, 9.81
BOX = '''<robot name="box"><link name="box">
  <inertial><mass value="2.0"/><inertia ixx="0.00833" iyy="0.00833" izz="0.01333" ixy="0" ixz="0" iyz="0"/></inertial>
  <collision><geometry><box size="0.2 0.2 0.1"/></geometry></collision></link></robot>'''
# The oracle's stopping tolerances (Clarabel's tol_gap_abs, tol_gap_rel, tol_feas; its defaults are 1e-8, which
# leave lam off by up to sqrt(1e-8) of its scale where the objective is flat)
CLARABEL_TOLERANCE = 1e-11
COMPILED = stage_kernels()   # the stage kernels, compiled where numba is


def simulator(urdf, mu=0.8, initial_positions=None, **options):
    model = load_urdf(urdf, root_joint='floating')
    return Simulator(model, DT, ground=Ground(0.0, mu), contact_points=contact_points_from_urdf(urdf),
                     initial_positions=initial_positions, **options)


def trot_targets(t):
    """Trotting in place (benchmarks/bench_contact.py): front left and hind right, then front right and hind left,
    flex thigh and knee by up to 0.5 rad at 2 Hz (legs FL, FR, RL, RR; joints hip, thigh, knee)."""
    phase = np.sin(2.0 * np.pi * 2.0 * t)
    flex = 0.5 * np.array([max(phase, 0.0), max(-phase, 0.0), max(-phase, 0.0), max(phase, 0.0)])
    return STAND + np.outer(flex, [0.0, 1.0, -1.0]).ravel()


def pd_step(sim, target, kp=100.0, kd=2.0):
    sim.set_command(np.concatenate([np.zeros(6), kp * (target - sim.q[7:]) - kd * sim.qd[6:]]))
    sim.step()


def tilt(sim):
    """cos of the base's tilt (the world z component of its z axis)."""
    x, y = sim.q[3], sim.q[4]
    return 1.0 - 2.0 * (x * x + y * y)


# --- the bounded solve against the interior-point solver ----------------------------------------------------------


def oracle(A, c, nc, n_bilateral, bound, n_stops, mu):
    """Clarabel's optimum of problem (1) of ground_contact, min 1/2 lam^T A lam + c^T lam over the rows' cones."""
    clarabel = __import__('clarabel')

    def settings():
        tight = clarabel.DefaultSettings()
        tight.tol_gap_abs = tight.tol_gap_rel = tight.tol_feas = CLARABEL_TOLERANCE
        return tight
    solver = types.SimpleNamespace(**{name: getattr(clarabel, name) for name in dir(clarabel)
                                      if not name.startswith('_')})
    solver.DefaultSettings = settings
    stand_in = types.SimpleNamespace(clarabel=solver, ground=Ground(0.0, mu), _solver=None)
    return GroundContact._cone_program(stand_in, A, nc, n_bilateral, np.asarray(bound, dtype=float), n_stops)(c)


def de_saxce_check(A, c, nc, n_bilateral, bound, n_stops, mu, lam):
    """(lam of the oracle, y of the oracle, y of lam): Clarabel's optimum of problem (1) with lam's own De Saxce
    shift s_i = mu |y_t,i| on the normal rows. lam solves the Coulomb problem exactly where it is that optimum."""
    y = A @ lam + c
    shifted = c.copy()
    shifted[2:3 * nc:3] += mu * np.hypot(y[0:3 * nc:3], y[1:3 * nc:3])
    expected = oracle(A, shifted, nc, n_bilateral, bound, n_stops, mu)
    return expected, A @ expected + c, y


def random_problem(rng, nc, n_bilateral, n_boxed, n_stops, nv):
    """A contact problem of a random mechanism: A = G M^-1 G^T with G (m x nv) and M random positive definite,
    c = G w + beta with a random w (some contacts approaching, some leaving), mu in [0.2, 1]."""
    m = 3 * nc + n_bilateral + n_boxed + n_stops
    G = rng.standard_normal((m, nv))
    B = rng.standard_normal((nv, nv))
    M = B @ B.T + nv * np.eye(nv)
    A = G @ np.linalg.solve(M, G.T)
    c = G @ rng.standard_normal(nv)
    c[3 * nc:] += rng.standard_normal(m - 3 * nc)
    bound = rng.uniform(0.05, 0.5, n_boxed)
    return A, c, bound, float(rng.uniform(0.2, 1.0))


def pgs(A, c, nc, n_bilateral, bound, mu, lam=None, sweeps=MAX_SWEEPS, tolerance=SWEEP_TOLERANCE):
    """(lam, y, sweeps taken) of the sweeps, compiled where numba is installed."""
    m = len(c)
    lam = np.zeros(m) if lam is None else lam.copy()
    y = np.empty(m)
    solve = projected_gauss_seidel
    if importlib.util.find_spec('numba'):
        solve = compiled(projected_gauss_seidel)
    taken = solve(np.ascontiguousarray(A), c, m, nc, n_bilateral, np.asarray(bound, dtype=float), mu, lam, y, sweeps,
                  tolerance)
    return lam, y, taken


def assert_admissible(lam, y, nc, n_bilateral, bound, mu):
    """lam inside every cone, box and half-line (the iterate is projected onto them: exact to rounding)."""
    n, t = lam[2:3 * nc:3], np.hypot(lam[0:3 * nc:3], lam[1:3 * nc:3])
    assert np.all(n >= 0.0) and np.all(t <= mu * n * (1 + 1e-12) + 1e-15)
    boxed = lam[3 * nc + n_bilateral:3 * nc + n_bilateral + len(bound)]
    assert np.all(np.abs(boxed) <= bound)
    assert np.all(lam[3 * nc + n_bilateral + len(bound):] >= 0.0)
    assert np.all(np.isfinite(y))


@pytest.mark.parametrize('seed', range(6))
def test_the_sweeps_fixed_point_is_the_interior_point_solvers_optimum_on_random_problems(seed):
    """Random problems of 1-3 contacts with bilateral, boxed and stop rows on 12-24 freedoms (A positive definite),
    swept until the conditions hold within 1e-12 m/s: every impulse admissible; De Saxce's conditions hold (y + s e_n,
    s = mu |y_t|, in the dual cone, complementary to lam) to 1e-9 of the scales; and the velocities y are those of
    Clarabel's optimum of problem (1) at that shift (Clarabel stopped at 1e-11) to 1e-6 of their scale. (Both meet
    the conditions to 1e-11, yet on a sliding contact they differ by up to 3e-7 of the scale: not explained yet, and
    so the bound is not tighter.)"""
    rng = np.random.default_rng(seed)
    nc, n_bilateral, n_boxed, n_stops = 1 + seed % 3, seed % 2, 2 + seed % 3, 1 + seed % 2
    nv = 3 * nc + n_bilateral + n_boxed + n_stops + 4 + seed
    A, c, bound, mu = random_problem(rng, nc, n_bilateral, n_boxed, n_stops, nv)
    lam, y, taken = pgs(A, c, nc, n_bilateral, bound, mu, sweeps=100000, tolerance=1e-12)
    assert taken < 100000
    assert_admissible(lam, y, nc, n_bilateral, bound, mu)
    scale, velocity_scale = np.abs(lam).max(), max(np.abs(y).max(), np.abs(c).max())
    for i in range(nc):   # the contact's conditions at its shift
        t, n = lam[3 * i:3 * i + 2], lam[3 * i + 2]
        y_t, y_n = y[3 * i:3 * i + 2], y[3 * i + 2] + mu * np.hypot(*y[3 * i:3 * i + 2])
        assert mu * np.hypot(*y_t) <= y_n + 1e-9 * velocity_scale
        assert abs(t @ y_t + n * y_n) <= 1e-9 * scale * velocity_scale
    start_box = 3 * nc + n_bilateral
    np.testing.assert_allclose(y[3 * nc:start_box], 0.0, atol=1e-9 * velocity_scale)
    for b in range(n_boxed):
        r = start_box + b
        assert abs(y[r]) <= 1e-9 * velocity_scale or lam[r] * y[r] < 0 and abs(abs(lam[r]) - bound[b]) < 1e-12
    stops = slice(start_box + n_boxed, None)
    assert np.all(y[stops] >= -1e-9 * velocity_scale)
    assert np.all(np.abs(lam[stops] * y[stops]) <= 1e-9 * scale * velocity_scale)
    _, y_expected, y = de_saxce_check(A, c, nc, n_bilateral, bound, n_stops, mu, lam)
    np.testing.assert_allclose(y, y_expected, rtol=0, atol=1e-6 * velocity_scale)


def intercepted(**stages):
    """For a simulator whose step runs as plain Python (``stages='python'``): its row solve (``row_solve.solve_rows``)
    calls ``stages`` (by name: the functions that take the problem as arguments) in place of its own."""
    return mock.patch.multiple(row_solve, **stages)


def captured_problems(steps=700):
    """The contact problems the bounded sweeps took on the bundled quadruped trotting in place from its stance,
    stepped as plain Python (whose stages hand the problem over as arguments; the compiled stages solve it): (A, c
    without shift, nc, n_bilateral, bound, n_stops, mu, the warm start). A step that starts with a sliding contact
    is left to the sweeps (a pattern with one would certify most of them: ``sliding``), as are those whose pattern is
    refused."""
    sim = simulator(QUADRUPED, initial_positions=STAND, stages='python')
    kernels = COMPILED
    problems = []

    def no_sliding_pattern(A, G, Y, w, m, nc, n_bilateral, beta_joints, gap_velocity, bound, mu, contact_roles, *rest):
        if np.any(contact_roles == SLIDE):
            return 0
        return kernels.pattern_fixed_point(A, G, Y, w, m, nc, n_bilateral, beta_joints, gap_velocity, bound, mu,
                                           contact_roles, *rest)

    def capture(A, G, Y, w, m, nc, n_bilateral, beta_joints, gap_velocity, bound, mu, *rest):
        offsets = np.concatenate([np.zeros(3 * nc), beta_joints[:m - 3 * nc]])
        offsets[2:3 * nc:3] += gap_velocity
        lam = rest[5]   # (contact, box and stop roles, shift, slip, lam, ...)
        problems.append((A[:m, :m].copy(), G[:m] @ w + offsets, nc, n_bilateral, bound.copy(),
                         m - 3 * nc - n_bilateral - len(bound), mu, lam[:m].copy()))
        return kernels.bounded_step(A, G, Y, w, m, nc, n_bilateral, beta_joints, gap_velocity, bound, mu, *rest)
    with intercepted(bounded_step=capture, pattern_fixed_point=no_sliding_pattern):
        for _ in range(steps):
            pd_step(sim, trot_targets(sim.t))
    return problems


def test_the_bounded_sweeps_meet_the_interior_point_solver_on_the_trotting_quadrupeds_problems():
    """Every problem the bounded sweeps took while the bundled quadruped trotted in place (0.7 s: feet touching
    down and lifting off), from its warm start, within MAX_SWEEPS: admissible impulses, and the velocities of
    Clarabel's optimum with the sweeps' own shift, to 1e-5 m/s (1e-2 um of approach over the 1 ms step; 100
    times SWEEP_TOLERANCE, the largest change a row's last update made to its own velocity, summed over the
    rows the quadruped couples); the impulses are not unique where feet and joints hold more rows than the robot
    has freedoms, so the velocities are compared. Most converge within MAX_SWEEPS."""
    problems = captured_problems()
    assert len(problems) >= 20   # the trot's touch-downs and lift-offs took the bounded path
    converged = 0
    for A, c, nc, n_bilateral, bound, n_stops, mu, warm in problems:
        lam, y, taken = pgs(A, c, nc, n_bilateral, bound, mu, lam=warm)
        converged += taken < MAX_SWEEPS
        assert_admissible(lam, y, nc, n_bilateral, bound, mu)
        _, y_expected, y = de_saxce_check(A, c, nc, n_bilateral, bound, n_stops, mu, lam)
        np.testing.assert_allclose(y, y_expected, rtol=0, atol=100 * SWEEP_TOLERANCE)
    assert converged >= 0.9 * len(problems)


def sliding_patterns(steps=700):
    """The problems a pattern with a sliding contact certified while the bundled quadruped trotted in place (stepped
    as plain Python, as ``captured_problems``): (A, c without shift, nc, n_bilateral, bound, n_stops, mu, lam, contact
    roles)."""
    sim = simulator(QUADRUPED, initial_positions=STAND, stages='python')
    kernels = COMPILED
    problems = []

    def capture(A, G, Y, w, m, nc, n_bilateral, beta_joints, gap_velocity, bound, mu, contact_roles, *rest):
        taken = kernels.pattern_fixed_point(A, G, Y, w, m, nc, n_bilateral, beta_joints, gap_velocity, bound, mu,
                                            contact_roles, *rest)
        if taken and np.any(contact_roles == SLIDE):
            offsets = np.concatenate([np.zeros(3 * nc), beta_joints[:m - 3 * nc]])
            offsets[2:3 * nc:3] += gap_velocity
            lam = rest[4]   # (box and stop roles, shift, slip, lam, ...)
            problems.append((A[:m, :m].copy(), G[:m] @ w + offsets, nc, n_bilateral, bound.copy(),
                             m - 3 * nc - n_bilateral - len(bound), mu, lam[:m].copy(), contact_roles.copy()))
        return taken
    with intercepted(pattern_fixed_point=capture):
        for _ in range(steps):
            pd_step(sim, trot_targets(sim.t))
    return problems


def test_a_sliding_pattern_solves_the_coulomb_problem_as_the_interior_point_solver():
    """Every step a pattern with a sliding contact took while the bundled quadruped trotted in place (``sliding``:
    Coulomb's law linearised about the slip direction, iterated with De Saxce's shift): admissible impulses (each
    sliding contact's on its cone's surface, mu lam_n = |lam_t|, slipping against its friction), and the velocities of
    Clarabel's optimum of problem (1) at the solution's own shift to 1e-5 m/s, ten times FIXED_POINT_TOLERANCE, to
    which the fixed point converges the shift and the slip across its direction (1e-2 um of approach over the step;
    the bounded sweeps' test takes the same bound)."""
    problems = sliding_patterns()
    assert len(problems) >= 20   # the trot's feet slip as they touch down and lift off
    for A, c, nc, n_bilateral, bound, n_stops, mu, lam, roles in problems:
        y = A @ lam + c
        assert_admissible(lam, y, nc, n_bilateral, bound, mu)
        for i in np.flatnonzero(roles == SLIDE):
            friction, normal, slip = lam[3 * i:3 * i + 2], lam[3 * i + 2], y[3 * i:3 * i + 2]
            assert np.hypot(*friction) == pytest.approx(mu * normal, rel=1e-12)
            assert friction @ slip <= 0.0
        _, y_expected, y = de_saxce_check(A, c, nc, n_bilateral, bound, n_stops, mu, lam)
        np.testing.assert_allclose(y, y_expected, rtol=0, atol=10 * FIXED_POINT_TOLERANCE)


# --- scenarios: no interior-point solve ---------------------------------------------------------------------------


def test_the_bundled_quadruped_trots_in_place_upright_without_the_interior_point_solver():
    """2 s of trotting in place (feet leaving and touching the ground four times a second): every step is taken by
    the one compiled call, the touch-downs by the bounded sweeps, none by Clarabel;
    the robot stays upright (tilted by less than 10 degrees) and on its feet (the trunk above half its standing
    height), as MuJoCo's does (benchmarks/bench_contact.py)."""
    sim = simulator(QUADRUPED, initial_positions=STAND)
    standing_height = sim.q[2]
    for _ in range(2000):
        pd_step(sim, trot_targets(sim.t))
        assert tilt(sim) > np.cos(np.radians(10.0))
    assert sim.contact.solves['interior point'] == 0
    assert sim.contact.solves['bounded'] > 0
    assert sim.contact_step.steps == 2000
    assert sim.q[2] > 0.5 * standing_height


def test_a_box_dropped_from_30_cm_lands_without_bounce_and_never_gains_energy():
    """A box dropped from 0.3 m, tilted by 20 degrees about x and 10 about y (a corner lands first, then an edge,
    then the face: the pattern changes at each): kinetic plus potential energy never rises from one step to the
    next (semi-implicit Euler loses m g^2 dt^2 / 2 per step in free fall, contact is inelastic: any rise would be
    the solve's, beyond rounding, 1e-9 of the start), never more than 1 mm into the ground, and at rest on its face
    after 1 s."""
    angle_x, angle_y = np.radians(20.0), np.radians(10.0)
    qx = np.array([np.sin(angle_x / 2), 0, 0, np.cos(angle_x / 2)])
    qy = np.array([0, np.sin(angle_y / 2), 0, np.cos(angle_y / 2)])
    x1, y1, z1, w1 = qx
    x2, y2, z2, w2 = qy
    quaternion = [w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2, w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
                  w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2, w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2]
    sim = simulator(BOX, mu=0.8, initial_positions=[0.0, 0.0, 0.0, *quaternion])
    sim.q[2] += 0.3 - sim.contact.lowest_height(sim.q)   # its lowest corner 0.3 m up
    energy, lowest = [sim.total_energy()], []
    for _ in range(1000):
        sim.step()
        energy.append(sim.total_energy())
        lowest.append(sim.contact.lowest_height(sim.q))
    assert np.max(np.diff(energy)) <= 1e-9 * energy[0]
    assert min(lowest) > -1e-3
    assert sim.q[2] == pytest.approx(0.05, abs=1e-6) and np.max(np.abs(sim.qd)) < 1e-6
    assert sim.contact.solves['interior point'] == 0


def test_the_quadruped_dropped_from_30_cm_lands_on_its_feet_as_in_mujoco():
    """The bundled quadruped dropped from 0.3 m (its feet 0.3 m up) under the joint PD of its stance: an impact of
    2.4 m/s on four feet. After 1.5 s it stands, its base height within 5 mm and orientation within 1 degree of
    MuJoCo's (hard contact, test/mujoco_model.py), as test_ground_contact's standing quadruped; no interior-point
    solve."""
    mujoco = pytest.importorskip('mujoco')
    mu, seconds = 0.8, 1.5
    sim = simulator(QUADRUPED, mu=mu, initial_positions=STAND)
    sim.q[2] += 0.3
    mj_model = mujoco.MjModel.from_xml_string(mjcf(sim.model, contact_points_from_urdf(QUADRUPED), mu))
    data = mujoco.MjData(mj_model)
    data.qpos[:] = np.concatenate([sim.q[:3], np.roll(sim.q[3:7], 1), sim.q[7:]])
    for _ in range(int(round(seconds / DT))):
        pd_step(sim, STAND)
    for _ in range(int(round(seconds / MUJOCO_STEP))):
        data.qfrc_applied[6:] = 100.0 * (STAND - data.qpos[7:]) - 2.0 * data.qvel[6:]
        mujoco.mj_step(mj_model, data)
    ours, theirs = sim.q[3:7], np.roll(data.qpos[3:7], -1)
    angle = 2.0 * np.degrees(np.arccos(min(1.0, abs(float(ours @ theirs)))))
    assert abs(sim.q[2] - data.qpos[2]) < 5e-3
    assert angle < 1.0
    assert sim.contact.solves['interior point'] == 0


def test_a_box_sliding_at_mu_0_2_decelerates_at_mu_g():
    """A box on flat ground given 1 m/s along x, mu = 0.2: Coulomb friction takes mu m g dt of momentum each step,
    so v(t) = v0 - mu g t exactly in this time stepping, until it stops at v0 / (mu g) = 0.51 s, 0.255 m on. The
    sliding steps are certified patterns with sliding contacts (``sliding``); a step the sweeps take (the landing,
    the stop) is within SWEEP_TOLERANCE per row on the box's 12 rows, so after k steps the velocity is within k 12
    SWEEP_TOLERANCE of the line; at rest after, at x = v0^2 / (2 mu g) within 1 mm (semi-implicit Euler's
    displacement is off by v0 dt / 2)."""
    mu, v0 = 0.2, 1.0
    sim = simulator(BOX, mu=mu)
    sim.qd[0] = v0
    velocities = []
    for _ in range(700):
        sim.step()
        velocities.append(sim.qd[0])
    velocities = np.array(velocities)
    t = DT * np.arange(1, 701)
    sliding = t < v0 / (mu * G) - 2 * DT
    expected = v0 - mu * G * t[sliding]
    bound = np.arange(1, sliding.sum() + 1) * 12 * SWEEP_TOLERANCE
    assert np.all(np.abs(velocities[sliding] - expected) <= bound)
    assert np.max(np.abs(velocities[t > v0 / (mu * G) + 2 * DT])) < 1e-6
    assert sim.q[0] == pytest.approx(v0 ** 2 / (2 * mu * G), abs=1e-3)
    assert sim.contact.solves['bounded'] < 10 and sim.contact.solves['interior point'] == 0


# --- the step's bound -----------------------------------------------------------------------------------------------


# A plate on a 10 x 10 grid of points, given as they are (``contact_points_from_urdf`` would keep its 4 corners): 100
# contacts, 300 rows, on one rigid body of 6 freedoms
PLATE = BOX.replace('box', 'plate')
GRID = [ContactPoint('plate', (x, y, -0.05), 0.0) for x in np.linspace(-0.1, 0.1, 10)
        for y in np.linspace(-0.1, 0.1, 10)]


def test_the_sweeps_of_a_step_cost_at_most_max_sweeps_of_swept_rows_rows():
    """A plate landing flat on 100 points, stepped as plain Python with every step left to the bounded sweeps (each
    round's pattern refused; the sweeps themselves compiled): up to 300 rows, so each step's sweeps are cut to the
    work of MAX_SWEEPS sweeps of SWEPT_ROWS rows (a sweep costs m^2), plus at most one sweep where that is spent;
    ``solves['unconverged']`` counts the steps so cut; and the plate still comes to rest on its points (1 um into
    the ground at most, 1 mm/s at most after 0.3 s)."""
    sim = Simulator(load_urdf(PLATE, root_joint='floating'), DT, ground=Ground(0.0, 0.8), contact_points=GRID,
                    stages='python')
    sim.q[2] += 0.01 - sim.contact.lowest_height(sim.q)   # 1 cm up
    calls = []

    def sweeps(A, G, Y, w, m, nc, n_bilateral, beta_joints, gap_velocity, bound, mu, *rest):
        allowed = rest[-8]   # (..., max_sweeps, sweep_tolerance, max_iterations, tolerance, previous, rhs, swept,
        #                          swept_shift)
        taken = COMPILED.bounded_step(A, G, Y, w, m, nc, n_bilateral, beta_joints, gap_velocity, bound, mu, *rest)
        calls[-1].append((m, allowed, taken))
        return taken
    with intercepted(bounded_step=sweeps, pattern_fixed_point=lambda *arguments: 0):
        for _ in range(300):
            calls.append([])
            sim.step()
    cut = 0
    for step in [step for step in calls if step]:   # (steps in the air with no rows have no solve)
        work = sum(abs(taken) * m * m for m, _, taken in step)
        assert work <= MAX_SWEEPS * SWEPT_ROWS ** 2 + max(m * m for m, _, _ in step)
        cut += step[-1][2] == step[-1][1]
    largest = max(m for step in calls for m, _, _ in step)
    assert largest == 3 * len(GRID) and cut > 0
    assert sim.contact.solves['unconverged'] == cut
    assert sim.contact.lowest_height(sim.q) > -1e-6
    assert np.max(np.abs(sim.qd)) < 1e-3


def test_a_round_after_a_broken_stop_starts_from_the_last_rounds_impulses():
    """The bundled quadruped without effort from its stance, stepped as plain Python with every pattern refused: its
    legs fold onto their stops, and where a stop the solution breaks enters, the problem is solved again (constraint
    generation). That round goes on with the sweeps, without trying a pattern first (one pattern tried a step), from
    the last round's impulses: the same on the contacts', braked and boxed joints' rows (the rows both rounds have,
    in the same places), the stops' the same impulses with a zero for each stop that entered."""
    sim = simulator(QUADRUPED, initial_positions=STAND, stages='python', command_timeout=None)
    rounds = []

    def sweeps(A, G, Y, w, m, nc, n_bilateral, beta_joints, gap_velocity, bound, mu, contact_roles, box_roles,
               stop_roles, shift, slip, lam, *rest):
        start = lam[:m].copy()
        taken = COMPILED.bounded_step(A, G, Y, w, m, nc, n_bilateral, beta_joints, gap_velocity, bound, mu,
                                      contact_roles, box_roles, stop_roles, shift, slip, lam, *rest)
        rounds[-1].append((3 * nc + n_bilateral + len(bound), start, lam[:m].copy()))
        return taken

    def refused(*arguments):
        patterns[-1] += 1
        return 0
    patterns = []
    with intercepted(bounded_step=sweeps, pattern_fixed_point=refused):
        for _ in range(400):
            rounds.append([])
            patterns.append(0)
            sim.set_command(np.zeros(sim.model.nv))
            sim.step()
    assert max(patterns) == 1
    followed = 0
    for step in rounds:
        for (kept, _, end), (kept_next, start, _) in zip(step, step[1:]):
            assert kept_next == kept
            np.testing.assert_array_equal(start[:kept], end[:kept])
            entered = len(start) - len(end)
            assert entered > 0
            np.testing.assert_array_equal(np.sort(start[kept:]), np.sort(np.concatenate([end[kept:],
                                                                                         np.zeros(entered)])))
            followed += 1
    assert followed > 0


# --- penetration (issue 37) ---------------------------------------------------------------------------------------


@pytest.mark.parametrize('stages', ['numba', 'python'])
def test_a_robot_placed_half_a_metre_below_the_ground_is_lifted_out_not_thrown(stages):
    """The quadruped placed 0.5 m below the ground (its whole configuration given) under the PD of its stance is
    lifted out at its first step, with no velocity added: its run is that of the quadruped spawned on the ground,
    to rounding (1e-9 m, 1e-6 m/s over 0.3 s), never faster than 0.5 m/s (its PD sag; the old projection folded
    its light legs to lift it and their PD threw it out at 2.9 m/s)."""
    if stages == 'numba':
        pytest.importorskip('numba')
    on_ground = simulator(QUADRUPED, initial_positions=STAND, stages=stages)
    q = on_ground.q.copy()
    q[2] -= 0.5
    below = simulator(QUADRUPED, initial_positions=q, stages=stages)
    assert below.contact.lowest_height(below.q) == pytest.approx(-0.5, abs=1e-9)
    steps = 300 if stages == 'numba' else 30
    for k in range(steps):
        for sim in (on_ground, below):
            pd_step(sim, STAND)
        np.testing.assert_allclose(below.q, on_ground.q, rtol=0, atol=1e-9, err_msg=f'q at step {k}')
        np.testing.assert_allclose(below.qd, on_ground.qd, rtol=0, atol=1e-6, err_msg=f'qd at step {k}')
        assert np.linalg.norm(below.qd[:3]) < 0.5
