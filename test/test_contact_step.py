"""The simulator's contact step as stages over one data object (issue 30): the compiled stages equal the plain-Python
reference step by step, the Delassus stage equals G M^-1 G^T, ``reset`` forgets the warm start, a frictionless
ground (the cone degenerates to the normal) keeps a sliding box's speed and carries its weight, and a failed solve
is one clear exception class."""
import functools
import os
import warnings

import numpy as np
import pytest

from conftest import ROOT, example_robot_data
from robot_dynamics_ros import load_urdf
from robot_dynamics_ros.errors import RobotDynamicsError
from robot_dynamics_ros.fast import crba
from robot_dynamics_ros.model.collision import ContactPoint, contact_points_from_urdf
from robot_dynamics_ros.model.srdf import load_srdf, stance_configuration
from robot_dynamics_ros.model.urdf import URDFWarning
from robot_dynamics_ros.simulation.simulator import SimulationDiverged, Simulator

pytest.importorskip('clarabel')
from robot_dynamics_ros.simulation.ground_contact import ContactSolverError, Ground  # noqa: E402
from robot_dynamics_ros.algorithms.least_norm import least_norm_semidefinite  # noqa: E402
from robot_dynamics_ros.simulation.contact_active_set import PIVOT_RATIO, closest_held_rows  # noqa: E402
from robot_dynamics_ros.simulation.roles import APART  # noqa: E402

QUADRUPED = os.path.join(ROOT, 'urdf', 'quadruped.urdf')
STAND = np.tile([0.0, 0.8, -1.5], 4)
DT, G = 1e-3, 9.81
BOX = '''<robot name="box"><link name="box">
  <inertial><mass value="2.0"/><inertia ixx="0.00833" iyy="0.00833" izz="0.01333" ixy="0" ixz="0" iyz="0"/></inertial>
  <collision><geometry><box size="0.2 0.2 0.1"/></geometry></collision></link></robot>'''


def standing(urdf, stance, mu=0.8, **options):
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', URDFWarning)
        model = load_urdf(urdf, root_joint='floating')
    return Simulator(model, DT, ground=Ground(0.0, mu), contact_points=contact_points_from_urdf(urdf),
                     initial_positions=stance, **options)


def pd_step(sim, stance, kp=100.0, kd=2.0):
    sim.set_command(np.concatenate([np.zeros(6), kp * (stance - sim.q[7:]) - kd * sim.qd[6:]]))
    sim.step()


def go1():
    urdf = example_robot_data('go1_description/urdf/go1.urdf')
    model = load_urdf(urdf, root_joint='floating')
    stance = stance_configuration(model, load_srdf(example_robot_data('go1_description/srdf/go1.srdf')))[1]
    return urdf, stance[model.joint_q_index]


@pytest.mark.parametrize('robot', ['quadruped', 'go1'])
def test_compiled_stages_equal_the_plain_python_reference_step_by_step(robot):
    """From the spawn (feet touching), through the landing and the PD settling: the state and the contact forces of
    the compiled step equal those of the same kernels run as plain Python at every step, within 1e-9 (the kernels
    do the same floating-point operations; the solver's own tolerances are 1e-6 m/s and up)."""
    pytest.importorskip('numba')
    urdf, stance = (QUADRUPED, STAND) if robot == 'quadruped' else go1()
    steps = 200 if robot == 'quadruped' else 60
    compiled, plain = (standing(urdf, stance, stages=stages) for stages in ('numba', 'python'))
    assert compiled.contact.kernels.backend == 'numba' and plain.contact.kernels.backend == 'python'
    for k in range(steps):
        pd_step(compiled, stance)
        pd_step(plain, stance)
        np.testing.assert_allclose(compiled.q, plain.q, rtol=0, atol=1e-9, err_msg=f'q at step {k}')
        np.testing.assert_allclose(compiled.qd, plain.qd, rtol=0, atol=1e-9, err_msg=f'qd at step {k}')
        np.testing.assert_allclose(compiled.contact_forces, plain.contact_forces, rtol=0, atol=1e-6,
                                   err_msg=f'contact forces (N) at step {k}')
    assert np.sum(compiled.contact_forces[:, 2] > 0) >= 4   # it stands on its feet
    assert compiled.contact.solves == plain.contact.solves


def test_delassus_stage_equals_g_minv_gt():
    """A = G M^-1 G^T and Y = M^-1 G^T from U D U^T (Saha's three sweeps), against a dense solve with CRBA's M."""
    sim = standing(QUADRUPED, STAND)
    for _ in range(50):
        pd_step(sim, STAND)
    rng = np.random.default_rng(0)
    q = sim.q.copy()
    q[7:] += 0.1 * rng.standard_normal(12)
    from robot_dynamics_ros.fast import udut
    U, D = udut(sim.model, q)
    k, m, nv = sim.contact.kernels, 30, sim.model.nv
    G = rng.standard_normal((m, nv))
    Y, A = np.zeros((nv, m)), np.zeros((m, m))
    k.delassus(U, D, G, m, Y, A)
    M = crba(sim.model, q)
    np.testing.assert_allclose(Y, np.linalg.solve(M, G.T), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(A, G @ np.linalg.solve(M, G.T), rtol=1e-9, atol=1e-9)



def row_by_row_delassus(U, D, G):
    """Y = M^-1 G^T and A = G Y (its upper triangle, mirrored) by Saha's three sweeps on each row of G alone, and
    dense sums (every product, zero or not)."""
    n, m = D.shape[0], G.shape[0]
    Y = np.zeros((n, m))
    for r in range(m):
        for i in range(n - 1, -1, -1):
            z = G[r, i]
            for k in range(i + 1, n):
                if U[i, k] != 0.0:
                    z -= U[i, k] * Y[k, r]
            Y[i, r] = z
        for i in range(n):
            Y[i, r] /= D[i]
        for i in range(n):
            y = Y[i, r]
            for k in range(i):
                if U[k, i] != 0.0:
                    y -= U[k, i] * Y[k, r]
            Y[i, r] = y
    A = np.zeros((m, m))
    for r in range(m):
        for s in range(r, m):
            a = 0.0
            for k in range(n):
                a += G[r, k] * Y[k, s]
            A[r, s] = A[s, r] = a
    return Y, A


@pytest.mark.parametrize('backend', ['python', 'numba'])
def test_delassus_stage_on_sparse_rows_equals_each_rows_own_sweeps_to_the_bit(backend):
    """The Delassus stage sweeps all rows at once and sums only the nonzero terms of G's rows; on rows as sparse as a
    step's (+-e_j of the joints, a foot's row on the root's and its leg's columns), and on dense ones, each entry of
    Y and A is the one each row's own sweeps and dense sums give, bit for bit (the same operations in the same
    order, the terms skipped exact zeros), and A = G M^-1 G^T."""
    if backend == 'numba':
        pytest.importorskip('numba')
    from robot_dynamics_ros.fast import udut
    from robot_dynamics_ros.simulation.step_data import stage_kernels
    delassus = stage_kernels(backend).delassus
    sim = standing(QUADRUPED, STAND)
    rng = np.random.default_rng(1)
    q = sim.q.copy()
    q[7:] += 0.1 * rng.standard_normal(12)
    U, D = udut(sim.model, q)
    nv = sim.model.nv
    feet = np.zeros((12, nv))
    for foot in range(4):
        columns = np.r_[0:6, 6 + 3 * foot:9 + 3 * foot]
        feet[3 * foot:3 * foot + 3, columns] = rng.standard_normal((3, 9))
    joints = np.zeros((12, nv))
    joints[np.arange(12), 6 + rng.permutation(12)] = rng.choice([-1.0, 1.0], 12)
    for G in (np.vstack([feet, joints]), rng.standard_normal((7, nv))):
        m = G.shape[0]
        Y, A = np.full((nv, m + 3), np.nan), np.full((m + 3, m + 3), np.nan)   # (buffers larger than the rows)
        delassus(U, D, G, m, Y, A)
        expected_Y, expected_A = row_by_row_delassus(U, D, G)
        np.testing.assert_array_equal(Y[:, :m], expected_Y)
        np.testing.assert_array_equal(A[:m, :m], expected_A)
        M = crba(sim.model, q)
        np.testing.assert_allclose(A[:m, :m], G @ np.linalg.solve(M, G.T), rtol=1e-9, atol=1e-9)

def test_reset_forgets_the_warm_start():
    """After standing for a while (feet sticking: the warm start holds their roles), ``reset`` clears roles and
    shifts, and the steps after it are those of a new simulator, bit for bit."""
    sim = standing(QUADRUPED, STAND)
    for _ in range(300):
        pd_step(sim, STAND)
    assert np.any(sim.contact.contact_role != APART)
    sim.reset()
    assert np.all(sim.contact.contact_role == APART) and not np.any(sim.contact.shift)
    fresh = standing(QUADRUPED, STAND)
    for _ in range(50):
        pd_step(sim, STAND)
        pd_step(fresh, STAND)
    np.testing.assert_array_equal(sim.q, fresh.q)
    np.testing.assert_array_equal(sim.qd, fresh.qd)


def test_a_box_on_a_frictionless_ground_keeps_its_horizontal_speed_and_the_ground_carries_its_weight():
    """mu = 0: the Coulomb cone is the normal half-line. A box resting on its face, given 1 m/s along x and 0.5 m/s
    along y, slides on for 1 s without losing speed (no friction), without rising or sinking, and the four corners'
    normal forces add up to its weight m g with no tangential force."""
    model = load_urdf(BOX, root_joint='floating')
    sim = Simulator(model, DT, ground=Ground(0.0, 0.0), contact_points=contact_points_from_urdf(BOX))
    sim.qd[:2] = [1.0, 0.5]
    start = sim.q.copy()
    for _ in range(1000):
        sim.step()
    np.testing.assert_allclose(sim.qd, [1.0, 0.5, 0.0, 0.0, 0.0, 0.0], atol=1e-9)
    np.testing.assert_allclose(sim.q[:3], start[:3] + [1.0, 0.5, 0.0], atol=1e-6)
    np.testing.assert_allclose(sim.q[3:7], start[3:7], atol=1e-9)
    forces = sim.contact_forces
    np.testing.assert_allclose(forces[:, :2], 0.0, atol=1e-9)
    np.testing.assert_allclose(forces[:, 2].sum(), 2.0 * G, rtol=1e-9)


def test_a_quadruped_on_a_frictionless_ground_keeps_stepping():
    """The issue's case: the quadruped under its PD on mu = 0 (the interior-point solver said DualInfeasible at 0.35 s
    and the simulation froze). It keeps stepping for 1 s; nothing pushes it sideways, so its centre's horizontal
    momentum stays zero: the base drifts by less than a millimetre while the ground carries the weight."""
    sim = standing(QUADRUPED, STAND, mu=0.0)
    start = sim.q[:2].copy()
    for _ in range(1000):
        pd_step(sim, STAND)
    assert np.isfinite(sim.q).all()
    np.testing.assert_allclose(sim.contact_forces[:, :2], 0.0, atol=1e-9)
    mass = sum(inertia[5, 5] for inertia in sim.model.inertia)
    assert abs(sim.contact_forces[:, 2].sum() - mass * G) < 0.05 * mass * G   # standing still within 5 % of mg
    assert np.abs(sim.q[:2] - start).max() < 1e-3


def test_contact_solver_error_is_one_clear_class():
    assert issubclass(ContactSolverError, RobotDynamicsError) and issubclass(ContactSolverError, ValueError)


def test_point_bias_acceleration_is_the_derivative_of_the_point_velocity_at_constant_qd():
    """point_acceleration.point_motion's J-dot qd (the columns' scatter with qdd = 0; the legged and Cartesian
    controllers' too) equals d/dt (J(q(t)) qd) along q(t) = q (+) t qd, by a central difference of step 1e-6 (its
    error ~1e-12 |qd|^3 relative: within 1e-6); its x and J equal PointKinematics.poses' and jacobians'."""
    from robot_dynamics_ros.algorithms.point_acceleration import point_motion
    from robot_dynamics_ros.algorithms.point_kinematics import PointKinematics
    from robot_dynamics_ros.model.configuration import integrate
    sim = standing(QUADRUPED, STAND)
    kin, model = PointKinematics(sim.model), sim.model
    rng = np.random.default_rng(1)
    q, qd = sim.q.copy(), rng.standard_normal(model.nv)
    q[7:] += 0.3 * rng.standard_normal(12)
    bodies = sim.contact.body
    centre = sim.contact.centre

    def velocity_and_points(q):
        R, p = kin.poses(q)
        x = p[bodies] + np.einsum('kij,kj->ki', R[bodies], centre)
        C_ang, C_lin = kin.columns(R, p)
        return kin.jacobians(C_ang, C_lin, bodies, x) @ qd, x, C_ang, C_lin
    _, x, C_ang, C_lin = velocity_and_points(q)
    h = 1e-6
    ahead, behind = (velocity_and_points(integrate(model, q, s * h * qd))[0] for s in (1.0, -1.0))
    expected = (ahead - behind) / (2 * h)
    x_ours, J, ours = point_motion(kin, q, qd, bodies, centre)
    np.testing.assert_allclose(x_ours, x, rtol=0, atol=1e-15)
    np.testing.assert_allclose(J, kin.jacobians(C_ang, C_lin, bodies, x).reshape(-1, model.nv), rtol=0, atol=1e-15)
    np.testing.assert_allclose(ours.reshape(-1, 3), expected, rtol=1e-6, atol=1e-6 * np.abs(expected).max())


def a1():
    urdf = example_robot_data('a1_description/urdf/a1.urdf')
    model = load_urdf(urdf, root_joint='floating')
    stance = stance_configuration(model, load_srdf(example_robot_data('a1_description/srdf/a1.srdf')))[1]
    return urdf, stance[model.joint_q_index]


def compiled_and_plain(urdf, stance, **options):
    """Two simulators in the same state: the step compiled by numba, and the same step run as plain Python (the
    reference)."""
    compiled, plain = standing(urdf, stance, stages='numba', **options), standing(urdf, stance, stages='python',
                                                                                   **options)
    assert compiled.contact_step.plain is False and plain.contact_step.plain is True
    return compiled, plain


def synchronise(ours, reference):
    """A simulator put in the reference's state: q, qd and the contact step's warm start (roles, the last two steps'
    shifts and secant slopes, the last solve's impulses), so that the next step of each starts from the same state."""
    ours.q, ours.qd = reference.q.copy(), reference.qd.copy()
    mine, theirs = ours.contact.data, reference.contact.data
    mine.reserve(theirs.capacity)
    for name in ('contact_role', 'box_role', 'lower_role', 'upper_role', 'shift', 'slope', 'lam', 'impulses',
                 'joint_impulse'):
        getattr(mine, name)[...] = getattr(theirs, name)


def held_rows_condition(sim):
    """The condition number of the last solve's held rows, A_FF, over the singular values a least-squares solve
    keeps (from PIVOT_RATIO of the largest on): how much a rounding difference in its data can move the impulses
    (1 without held rows)."""
    m, _ = sim.contact_step.rows
    d = sim.contact.data
    held = np.flatnonzero(d.free[:m])
    if not held.size:
        return 1.0
    s = np.linalg.svd(d.A[np.ix_(held, held)], compute_uv=False)
    return s[0] / s[s >= PIVOT_RATIO * s[0]][-1]


def assert_same_step(ours, reference, k):
    """The two simulators' state and outputs after a step agree to rounding: the same kernels in the same order,
    compiled and plain (numba's LAPACK binding and its own math library against NumPy's: ~1e-16 of the largest term).
    A solve carries such rounding times its condition number (the held rows' A_FF; for a singular pattern, more held
    rows than freedoms, over the singular values it keeps): 1e-12 of each quantity's scale (1 for q and qd: radians,
    metres, their rates) times that condition number leaves room for sums of many terms and nothing physical."""
    condition = held_rows_condition(ours)
    for name, scale in (('q', 1.0), ('qd', 1.0), ('contact_forces', None), ('constraint_effort', None),
                        ('applied_effort', None)):
        mine, theirs = getattr(ours, name), getattr(reference, name)
        scale = max(1.0, np.abs(theirs).max(initial=0.0)) if scale is None else scale
        np.testing.assert_allclose(mine, theirs, rtol=0, atol=1e-12 * condition * scale,
                                   err_msg=f'{name} at step {k}')
    assert ours.t == reference.t
    mine, theirs = ours.contact.data, reference.contact.data   # the warm start of the next step
    for name in ('contact_role', 'box_role', 'lower_role', 'upper_role'):
        np.testing.assert_array_equal(getattr(mine, name), getattr(theirs, name), err_msg=f'{name} at step {k}')
    np.testing.assert_allclose(mine.shift, theirs.shift, rtol=0, atol=1e-12 * condition,
                               err_msg=f'shift (m/s) at step {k}')


def test_the_limp_robot_falls_onto_its_stops_and_the_compiled_step_equals_the_plain_one():
    """A1 without effort from its stance: its legs fold onto their joint stops as the trunk and knees come down
    (0.6 s). A stop the solution breaks enters the problem and it is solved again (constraint generation). Each step,
    from the plain-Python reference's state, is the same compiled as plain, to rounding."""
    pytest.importorskip('numba')
    urdf, stance = a1()
    compiled, plain = compiled_and_plain(urdf, stance, command_timeout=None)
    start_height = compiled.q[2]
    for k in range(600):
        for sim in (compiled, plain):
            sim.set_command(np.zeros(sim.model.nv))
            sim.step()
        assert_same_step(compiled, plain, k)
        synchronise(compiled, plain)
    assert compiled.q[2] < 0.5 * start_height   # down on its trunk and knees
    assert compiled.contact_step.steps == 600


ARM = os.path.join(ROOT, 'urdf', 'arm7.urdf')
# spheres on the bundled arm's tool, wrist and elbow (it has no collision geometry)
ARM_POINTS = (ContactPoint('arm7_tool', (0.0, 0.0, 0.0), 0.02), ContactPoint('arm7_link7', (0.03, 0.0, 0.0), 0.0),
              ContactPoint('arm7_link5', (0.0, 0.0, 0.0), 0.05))


# The bundled quadruped carrying a box on a floating joint and a puck on a planar joint below its trunk (free-flyer
# and planar joints below the root: the box falls to the ground beside it, the puck slides in the trunk's plane)
NESTED = open(QUADRUPED).read().replace('</robot>', '''
  <link name="box"><inertial><mass value="1.0"/><inertia ixx="0.002" iyy="0.002" izz="0.002" ixy="0" ixz="0" iyz="0"/>
    </inertial><collision><geometry><box size="0.1 0.1 0.1"/></geometry></collision></link>
  <joint name="box_joint" type="floating"><parent link="trunk"/><child link="box"/><origin xyz="0.5 0 0"/></joint>
  <link name="puck"><inertial><mass value="0.5"/><inertia ixx="0.001" iyy="0.001" izz="0.001" ixy="0" ixz="0" iyz="0"/>
    </inertial><collision><geometry><sphere radius="0.05"/></geometry></collision></link>
  <joint name="puck_joint" type="planar"><parent link="trunk"/><child link="puck"/><origin xyz="-0.5 0 -0.2"/>
    <axis xyz="0 0 1"/></joint></robot>''')


def fixed_and_planar(root, stages):
    """A simulator (``stages``: 'numba' or 'python'): the bundled arm (fixed base) bent down with its lowest sphere on
    the ground and pushed by 5 N m at every joint; the bundled quadruped on a planar root (the base slides and turns
    in its plane, at a fixed height) with its feet 1 cm into the ground, under a joint PD; or the quadruped carrying
    ``NESTED``'s box and puck, standing under the PD; and that command."""
    if root == 'fixed':
        model, points, q0 = load_urdf(ARM), ARM_POINTS, np.array([0.0, 1.2, 0.0, -0.5, 0.0, 0.0, 0.0])

        def command(sim):
            return np.full(model.nv, 5.0)
    elif root == 'nested':
        model, points, q0 = load_urdf(NESTED, root_joint='floating'), contact_points_from_urdf(NESTED), STAND

        def command(sim):
            return np.concatenate([np.zeros(6), 100.0 * (STAND - sim.q[7:19]) - 2.0 * sim.qd[6:18], np.zeros(9)])
    else:
        model, points, q0 = load_urdf(QUADRUPED, root_joint='planar'), contact_points_from_urdf(QUADRUPED), STAND

        def command(sim):
            return np.concatenate([np.zeros(3), 100.0 * (STAND - sim.q[4:]) - 2.0 * sim.qd[3:]])
    probe = Simulator(model, DT, ground=Ground(0.0, 0.8), contact_points=points, initial_positions=q0)
    height = probe.contact.lowest_height(probe.q) + {'fixed': 0.0, 'planar': 0.01, 'nested': 0.0}[root]
    return Simulator(model, DT, ground=Ground(height, 0.8), contact_points=points, initial_positions=q0,
                     stages=stages), command


@pytest.mark.parametrize('root', ['fixed', 'planar', 'nested'])
def test_the_compiled_step_equals_the_plain_one_on_a_fixed_or_planar_root(root):
    """The step of a fixed-base arm pressing on the ground as it slides and turns on it, of a planar-rooted quadruped
    projected out of the ground and pressing its feet on it, and of the quadruped standing while the box it carries
    on a floating joint falls to the ground beside it (``fixed_and_planar``): compiled, the same steps as the
    plain-Python reference's, to rounding, each with points near the ground."""
    pytest.importorskip('numba')
    (compiled, command), (plain, _) = fixed_and_planar(root, 'numba'), fixed_and_planar(root, 'python')
    for k in range(800):
        for sim in (compiled, plain):
            sim.set_command(command(sim))
            sim.step()
        assert compiled.contact_step.rows[1] > 0, f'no contact candidate at step {k}'
        assert_same_step(compiled, plain, k)
        synchronise(compiled, plain)
    assert compiled.contact_step.steps == 800
    assert np.sum(compiled.contact_forces[:, 2]) > 0   # it presses on the ground


@pytest.mark.parametrize('backend', ['python', 'numba'])
def test_the_integrate_stage_equals_configuration_integrate_on_fixed_and_planar_roots(backend):
    """``integrate_step.integrate_joints`` on a fixed-base arm, a planar-rooted quadruped and a fixed-base quadruped
    with a floating and a planar joint below its trunk (``NESTED``) equals ``configuration.integrate`` (q (+) dt v;
    planar joints by SE(2)'s exponential, free flyers below the root by SE(3)'s), still, small (the series) and large
    turns, and leaves v as it is."""
    from robot_dynamics_ros.model.configuration import integrate
    from robot_dynamics_ros.model.joints import FREE_FLYER, PLANAR
    from robot_dynamics_ros.simulation.step_data import stage_kernels
    if backend == 'numba':
        pytest.importorskip('numba')
    integrate_joints = stage_kernels(backend).integrate_joints
    rng = np.random.default_rng(5)
    for model in (load_urdf(ARM), load_urdf(QUADRUPED, root_joint='planar'), load_urdf(NESTED)):
        kinds, idx_q, idx_v = (np.ascontiguousarray(a, dtype=np.int64) for a in (model.joint_type, model.idx_q,
                                                                                  model.idx_v))
        for turn in (0.0, 1e-9, 1e-5, 0.3, 3.0):   # rad in the step
            q, v = model.neutral(), rng.normal(size=model.nv)
            q[model.joint_q_index] = rng.uniform(-1.0, 1.0, len(model.joint_q_index))
            for kind, k, j in zip(model.joint_type, model.idx_q, model.idx_v):
                if kind == PLANAR:
                    angle = rng.uniform(-np.pi, np.pi)
                    q[k:k + 4] = *rng.normal(size=2), np.cos(angle), np.sin(angle)
                    v[j + 2] = turn / DT
                elif kind == FREE_FLYER:
                    quaternion, axis = rng.normal(size=4), rng.normal(size=3)
                    q[k:k + 7] = *rng.normal(size=3), *(quaternion / np.linalg.norm(quaternion))
                    v[j + 3:j + 6] = turn / DT * axis / np.linalg.norm(axis)
            q_out, v_out = np.empty(model.nq), np.empty(model.nv)
            integrate_joints(kinds, idx_q, idx_v, q, v, DT, q_out, v_out)
            np.testing.assert_allclose(q_out, integrate(model, q, DT * v), rtol=0, atol=1e-14)
            np.testing.assert_array_equal(v_out, v)


@pytest.mark.parametrize('stages', ['python', 'numba'])
def test_the_step_raises_a_clear_error_and_keeps_the_state(stages):
    """A quaternion off unit norm is ``check_quaternions``' ValueError naming the joint; joint speeds whose squares
    overflow are SimulationDiverged, the positions kept and the robot at rest."""
    if stages == 'numba':
        pytest.importorskip('numba')
    from robot_dynamics_ros.model.configuration import check_quaternions
    sim = standing(QUADRUPED, STAND, stages=stages)
    sim.q[3:7] *= 1.5
    with pytest.raises(ValueError) as expected:
        check_quaternions(sim.model, sim.q)
    with pytest.raises(ValueError, match=r"quaternion of joint 'root_joint', has norm 1.5") as error:
        sim.step()
    assert str(error.value) == str(expected.value)
    sim = standing(QUADRUPED, STAND, stages=stages)
    q = sim.q.copy()
    sim.qd[6:] = 1e200
    with pytest.raises(SimulationDiverged, match='non-finite'), np.errstate(over='ignore', invalid='ignore'):
        sim.step()
    np.testing.assert_array_equal(sim.q, q)
    assert not sim.qd.any() and sim.contact_step.steps == 0 and sim.t == 0.0


@pytest.mark.parametrize('stages', ['python', 'numba'])
def test_the_steps_free_acceleration_is_abas_and_its_factors_sahas(stages):
    """The step's free acceleration M^-1 (tau - h) (RNEA's bias at qdd = 0, M^-1 by the sweeps on the step's
    U D U^T, both in the world-aligned frame) equals ABA's at the step's state and effort, and its U, D those of
    Saha's factorisation in the bodies' frames (``fast.udut``: M = U D U^T is unique), to rounding, on the landing
    and settling quadruped and while a push's external effort acts."""
    if stages == 'numba':
        pytest.importorskip('numba')
    from robot_dynamics_ros.algorithms.aba import aba
    from robot_dynamics_ros.fast import udut
    from robot_dynamics_ros.simulation.contact_step import PIVOTS, QDD
    sim = standing(QUADRUPED, STAND, stages=stages)
    steps = 60 if stages == 'numba' else 12
    for k in range(steps):
        if k == steps // 2:
            sim.push('trunk', [20.0, 0.0, 5.0], duration=0.05)
        sim.set_command(np.concatenate([np.zeros(6), 100.0 * (STAND - sim.q[7:]) - 2.0 * sim.qd[6:]]))
        q, qd = sim.q.copy(), sim.qd.copy()
        tau = np.clip(sim.command, -sim.model.effort_limit, sim.model.effort_limit)
        tau[:6] = 0.0
        expected = aba(sim.model, q, qd, tau - sim.damping * qd + sim._external_effort(q))
        sim.step()
        qdd = sim.contact_step.joints[QDD]
        np.testing.assert_allclose(qdd, expected, rtol=0, atol=1e-12 * np.abs(expected).max(), err_msg=f'step {k}')
        U, D = udut(sim.model, sim.contact.data.q_start)   # (the factors at the configuration stepped from)
        np.testing.assert_allclose(sim.contact.data.U, U, rtol=0, atol=1e-12, err_msg=f'U at step {k}')
        np.testing.assert_allclose(sim.contact_step.joints[PIVOTS], D, rtol=0, atol=1e-12 * D.max(),
                                   err_msg=f'D at step {k}')
    assert sim.contact_step.steps == steps


@pytest.mark.parametrize('inputs', ['servo', 'braked', 'no effort', 'push'])
def test_the_compiled_step_equals_the_plain_one_under_each_kind_of_input(inputs):
    """The step's applied effort and joint bounds for each input (the servo's position targets and drives, a stale
    command braking the joints or leaving them without effort, a push's external effort): compiled, the same steps
    as the plain-Python reference's, to rounding."""
    pytest.importorskip('numba')
    timeout = {'braked': 'brake', 'no effort': 'zero_effort'}.get(inputs, 'brake')
    compiled, plain = compiled_and_plain(QUADRUPED, STAND, command_timeout=0.05, on_command_timeout=timeout)
    for k in range(300):
        for sim in (compiled, plain):
            if inputs == 'servo':
                sim.set_joint_command(position=np.concatenate([np.zeros(6), STAND]))
            elif inputs == 'push' and k == 100:
                sim.push('trunk', [20.0, 0.0, 0.0], duration=0.05)
            if inputs in ('servo', 'push') or k < 20:   # the others: no command after 20 ms, stale after 70 ms
                pd_step(sim, STAND) if inputs != 'servo' else sim.step()
            else:
                sim.step()
        assert_same_step(compiled, plain, k)
        synchronise(compiled, plain)
    assert compiled.braking() == (inputs == 'braked')
    assert compiled.contact_step.steps == 300


def test_the_step_lifts_a_robot_out_of_the_ground_and_takes_one_in_the_air_as_the_pivoting_joint_solver():
    """A point below the ground (the robot lifted out at the start of the step): compiled, the same step as the
    plain-Python reference's. In the air (no point near the ground) the joints' rows alone make the problem: A1 half a
    metre up, its knees driven onto their stops (2 N m) as it falls (0.3 s). Each step's velocity is the minimiser
    the pivoting joint solver of the simulator without a ground (``joint_friction.solve_velocity_step``, exact on
    its pattern) finds from the step's free velocity and joint rows, to rounding times the held rows' condition."""
    pytest.importorskip('numba')
    from robot_dynamics_ros.simulation.contact_step import BOUND, CENTER, FREE_VELOCITY, V_AFTER, V_HI, V_LO
    from robot_dynamics_ros.simulation.joint_friction import SLIDING, solve_velocity_step
    compiled, plain = compiled_and_plain(QUADRUPED, STAND)
    for sim in (compiled, plain):
        sim.q[2] -= 1e-4   # 0.1 mm into the ground
        pd_step(sim, STAND)
    assert_same_step(compiled, plain, 0)
    assert compiled.contact_step.steps == 1
    urdf, stance = a1()
    sim = standing(urdf, stance, command_timeout=None)
    sim.q[2] += 0.5    # half a metre up
    knees = [j for j, name in enumerate(sim.model.joint_names) if 'calf' in name]
    command = np.zeros(sim.model.nv)
    command[6:][knees] = -2.0   # towards their lower stops
    joints = sim.contact_step.joints
    for k in range(300):
        sim.set_command(command)
        sim.step()
        assert sim.contact_step.rows[1] == 0   # no contact candidate
        w, center = joints[FREE_VELOCITY], joints[CENTER]
        M = crba(sim.model, sim.contact.data.q_start)
        v, _ = solve_velocity_step(M, w - center, joints[BOUND], joints[V_LO] - center, joints[V_HI] - center,
                                   np.full(sim.model.nv, SLIDING))
        np.testing.assert_allclose(joints[V_AFTER], v + center, rtol=0,
                                   atol=1e-12 * held_rows_condition(sim) * max(1.0, np.abs(v).max()),
                                   err_msg=f'v at step {k}')
        assert sim.contact.lowest_height(sim.q) > 0.0   # still in the air
    lower = sim.model.lower[7:][knees]
    np.testing.assert_allclose(sim.q[7:][knees], lower, rtol=0, atol=1e-9)   # on their stops
    assert sim.contact_step.steps == 300


def test_a_servos_step_out_of_the_ground_takes_its_drives_where_it_starts():
    """A servo's drives belong at the configuration the step starts from: with the robot 0.1 mm in the ground, after
    the penetration is projected out (``joint_bounds.drive_rows``). Compiled, the same step as the plain-Python
    reference's, to rounding; and its drives are those at the projected configuration, not at q."""
    pytest.importorskip('numba')
    from robot_dynamics_ros.simulation.contact_step import CENTER
    from robot_dynamics_ros.simulation.joint_bounds import POSITION_GAIN
    compiled, plain = compiled_and_plain(QUADRUPED, STAND)
    for sim in (compiled, plain):
        sim.q[2] -= 1e-4
        q = sim.q.copy()
        sim.set_joint_command(position=np.concatenate([np.zeros(6), STAND + 0.1]))
        sim.step()
    assert_same_step(compiled, plain, 0)
    assert np.any(compiled.applied_effort != 0.0)   # the drives' effort
    model, speed = compiled.model, compiled.velocity_limit[6:]

    def drives(at):   # (``Simulator.set_joint_command``: within the position and velocity limits)
        v_lo = np.maximum((model.lower[7:] - at[7:]) / DT, -speed)
        v_hi = np.minimum((model.upper[7:] - at[7:]) / DT, speed)
        return np.clip(POSITION_GAIN * (STAND + 0.1 - at[7:]) / DT, v_lo, v_hi)
    start = compiled.contact.data.q_start
    np.testing.assert_allclose(compiled.contact_step.joints[CENTER][6:], drives(start), rtol=0, atol=1e-9)
    assert np.abs(drives(start) - drives(q)).max() > 1e-6   # (the projection moved the joints: q's drives differ)


def test_candidates_passed_over_by_their_bodies_velocity_are_those_their_own_rows_reject():
    """``candidate_rows`` passes over points clear of the margin by their body's velocity; the candidates and their
    rows are those of testing every point on its own row (eq. 2), as before that shortcut: on random states of the
    bundled quadruped with the ground placed so that points lie within micrometres of the margin, and on the
    exact margin."""
    from robot_dynamics_ros.simulation.contact_rows import point_row
    from robot_dynamics_ros.simulation.ground_contact import CONTACT_MARGIN
    sim = standing(QUADRUPED, STAND)
    contact, rng = sim.contact, np.random.default_rng(2)
    k, d, moves = contact.kernels, contact.data, contact.kinematics.moves
    nv, count = sim.model.nv, contact.count
    exact_hits = 0
    for trial in range(200):
        q = sim.q.copy()
        q[7:] += 0.3 * rng.standard_normal(12)
        w = rng.standard_normal(nv) * (10.0 if trial % 2 else 0.1)
        contact.points(q)   # (the poses and points in the step data)
        k.world_columns(*contact._columns, d.R, d.p, d.C_ang, d.C_lin)
        # each point on its own row: its approach, and the height that puts it on the margin
        rows = np.empty((count, 3, nv))
        for i in range(count):
            for axis in range(3):
                point_row(moves[contact.body[i]], d.C_ang, d.C_lin, d.x[i], axis, rows[i, axis])
        approach = np.array([sum(rows[i, 2, j] * w[j] for j in range(nv)) for i in range(count)])
        on_margin = CONTACT_MARGIN - 2.0 * DT * np.minimum(approach, 0.0)
        phi = d.x[:, 2] - d.x[rng.integers(count), 2] + on_margin[rng.integers(count)] \
            + rng.choice([0.0, 1e-9, -1e-9, 1e-6, -1e-6, 0.1], count)
        if trial % 4 == 0:
            phi = on_margin.copy()   # every point exactly on the margin: none is a candidate (< margin)
        expected = np.flatnonzero(phi + 2.0 * DT * np.minimum(approach, 0.0) < CONTACT_MARGIN)
        exact_hits += np.sum(phi + 2.0 * DT * np.minimum(approach, 0.0) == CONTACT_MARGIN)
        k.body_velocities(moves, d.C_ang, d.C_lin, w, d.bodies)
        n = k.candidate_rows(moves, contact.body, d.x, phi, d.C_ang, d.C_lin, w, DT, CONTACT_MARGIN, d.which, d.G,
                             d.bodies, np.ones(sim.model.nb, dtype=np.int64))
        np.testing.assert_array_equal(d.which[:n], expected, err_msg=f'trial {trial}')
        np.testing.assert_array_equal(d.G[:3 * n], rows[expected].reshape(-1, nv), err_msg=f'trial {trial}')
    assert exact_hits > 0   # the margin itself was met


def test_the_broad_phase_passes_over_only_points_their_own_rows_reject():
    """The broad phase (``near_bodies``) leaves out of the heights and the candidate test the bodies whose points all
    clear the margin by a bound: the candidates and their rows are those of testing every point (A1: 212 points on
    its meshes, 8-32 per body), on random states and velocities with the ground placed so that one point lies within
    a micrometre of the margin; and it leaves bodies out on the way (31 % of them on these states)."""
    from robot_dynamics_ros.simulation.contact_rows import body_reach
    from robot_dynamics_ros.simulation.ground_contact import CONTACT_MARGIN
    urdf, stance = a1()
    sim = standing(urdf, stance)
    contact, rng = sim.contact, np.random.default_rng(3)
    k, d, moves, body = contact.kernels, contact.data, contact.kinematics.moves, contact.body
    nb, nv, count = sim.model.nb, sim.model.nv, contact.count
    reach, every, near = body_reach(nb, body, contact.centre, contact.radius), np.ones(nb, dtype=np.int64), \
        np.empty(nb, dtype=np.int64)
    left_out = 0
    for trial in range(200):
        q = sim.q.copy()
        q[3:7] = rng.standard_normal(4)
        q[3:7] /= np.linalg.norm(q[3:7])
        q[7:] += 0.5 * rng.standard_normal(12)
        w = rng.standard_normal(nv) * (10.0 if trial % 2 else 0.1)
        contact.points(q)   # (the poses and points in the step data)
        k.world_columns(*contact._columns, d.R, d.p, d.C_ang, d.C_lin)
        k.body_velocities(moves, d.C_ang, d.C_lin, w, d.bodies)
        i = rng.integers(count)                # this point within a micrometre of the margin
        C_ang, C_lin = contact.kinematics.columns(d.R, d.p)
        approach = np.dot(contact.kinematics.jacobians(C_ang, C_lin, body[[i]], d.x[[i]]).reshape(3, nv)[2], w)
        height = d.x[i, 2] + 2.0 * DT * min(approach, 0.0) - CONTACT_MARGIN + rng.uniform(-1e-6, 1e-6)
        phi = d.x[:, 2] - height
        n = k.candidate_rows(moves, body, d.x, phi, d.C_ang, d.C_lin, w, DT, CONTACT_MARGIN, d.which, d.G,
                             d.bodies, every)
        expected, rows = d.which[:n].copy(), d.G[:3 * n].copy()
        k.near_bodies(reach, height, CONTACT_MARGIN, DT, d.R, d.p, d.bodies, near)
        k.point_heights(body, contact.centre, contact.radius, height, d.R, d.p, d.x, phi, near)
        n = k.candidate_rows(moves, body, d.x, phi, d.C_ang, d.C_lin, w, DT, CONTACT_MARGIN, d.which, d.G,
                             d.bodies, near)
        np.testing.assert_array_equal(d.which[:n], expected, err_msg=f'trial {trial}')
        np.testing.assert_array_equal(d.G[:3 * n], rows, err_msg=f'trial {trial}')
        assert np.all(np.isinf(phi[near[body] == 0]))   # their heights were not computed
        left_out += nb - near.sum()
    assert left_out > 0   # (none with the broad phase off)


def test_without_numba_the_step_runs_as_plain_python():
    """In a process where numba cannot be imported, the simulator's step runs its kernels as plain Python (the
    reference): 30 steps of the landing quadruped, the same as the compiled step's here, to 1e-9 (as
    ``test_compiled_stages_equal_the_plain_python_reference_step_by_step``)."""
    pytest.importorskip('numba')
    import subprocess
    import sys
    script = f'''
import sys
sys.modules['numba'] = None   # importing numba now fails, as where it is not installed
sys.path.insert(0, {os.path.dirname(__file__)!r})
import numpy as np
import test_contact_step as t
sim = t.standing(t.QUADRUPED, t.STAND)
assert sim.contact_step.plain
for k in range(30):
    t.pd_step(sim, t.STAND)
print(repr(np.concatenate([sim.q, sim.qd]).tolist()))
'''
    result = subprocess.run([sys.executable, '-c', script], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    sim = standing(QUADRUPED, STAND)
    assert not sim.contact_step.plain
    for k in range(30):
        pd_step(sim, STAND)
    plain = np.array(eval(result.stdout.strip().splitlines()[-1]))
    np.testing.assert_allclose(plain, np.concatenate([sim.q, sim.qd]), rtol=0, atol=1e-9)


def test_the_one_call_kernel_is_loaded_with_the_simulator_not_by_its_first_step():
    """In a fresh process, building the simulator loads (once: compiles) the one call's machine code for the types
    its steps pass; the first step adds no other (loading it took ~50 ms, a real-time node's first step)."""
    pytest.importorskip('numba')
    import subprocess
    import sys
    script = f'''
import sys
sys.path.insert(0, {os.path.dirname(__file__)!r})
import test_contact_step as t
sim = t.standing(t.QUADRUPED, t.STAND)
loaded = list(sim.contact_step.kernel.signatures)
t.pd_step(sim, t.STAND)
print(len(loaded), sim.contact_step.kernel.signatures == loaded, sim.contact_step.steps)
'''
    result = subprocess.run([sys.executable, '-c', script], capture_output=True, text=True, timeout=600)
    assert result.stdout.split() == ['1', 'True', '1'], result.stdout + result.stderr[-3000:]



@functools.cache
def held_blocks(robot_steps=1200):
    """A_FF, the held rows of each step's last pattern solve, of Go1 under its PD from the spawn through the settling
    (the steps a certified pattern took: the bounded sweeps' steps leave the held rows of a refused one)."""
    from robot_dynamics_ros.simulation.contact_step import COUNTS
    urdf, stance = go1()
    sim = standing(urdf, stance)
    blocks = []
    for _ in range(robot_steps):
        taken = sim.contact_step.steps
        pd_step(sim, stance)
        m, _ = sim.contact_step.rows
        held = np.flatnonzero(sim.contact.data.free[:m])
        if held.size and sim.contact_step.steps > taken and sim.contact_step.joint_ints[COUNTS, 2] == 0:
            blocks.append(sim.contact.data.A[np.ix_(held, held)].copy())
    return blocks


def assert_closest_held_rows_equal_lstsq(kernel, A, rng):
    """``closest_held_rows`` with every row of A held (A_FF = A), previous impulses and c = -A u (consistent, as a
    certified pattern's held rows are), against pattern_solve's lstsq: previous + lstsq(A, -c - A previous,
    PIVOT_RATIO). They differ by rounding (100 n eps) times the condition number over the singular values kept."""
    m = A.shape[0]
    s = np.linalg.svd(A, compute_uv=False)
    kept = s[s >= PIVOT_RATIO * s[0]]
    previous, c = rng.standard_normal(m), -A @ rng.standard_normal(m)
    lam, free, L, F, rhs = np.zeros(m), np.ones(m, dtype=np.bool_), np.empty((m, m)), np.empty(m, np.int64), np.empty(m)
    kernel(np.ascontiguousarray(A), c, m, lam, free, previous, L, F, rhs)
    expected = previous + np.linalg.lstsq(A, -c - A @ previous, rcond=PIVOT_RATIO)[0]
    bound = 100 * m * np.finfo(float).eps * kept[0] / kept[-1] * np.abs(expected).max()
    np.testing.assert_allclose(lam, expected, rtol=0, atol=bound)


@pytest.mark.parametrize('backend', ['python', 'numba'])
def test_the_singular_held_rows_solve_equals_lstsq(backend):
    """The one-call step's solve of a singular pattern's held rows (``closest_held_rows``: pivoted Cholesky,
    ``least_norm_semidefinite``, or lstsq where its rank check cannot show the SVD's rank) equals pattern_solve's
    np.linalg.lstsq with PIVOT_RATIO's cut, to rounding times the condition number: on the held blocks of a settling
    Go1 (singular ones, more held rows than freedoms, and regular ones), on a constructed rank-deficient block with
    singular values over eight orders of magnitude, on a full-rank one, and on one with a singular value at the cut.
    The cheap solve answers where the SVD's cut falls in a wide gap: on every block of the standing Go1 (its last
    0.1 s) and the constructed ones, not on the one at the cut."""
    solve, kernel = least_norm_semidefinite, closest_held_rows
    if backend == 'numba':
        pytest.importorskip('numba')
        from robot_dynamics_ros.algorithms.backends import compiled
        solve, kernel = compiled(least_norm_semidefinite), compiled(closest_held_rows)
    rng = np.random.default_rng(3)
    blocks = held_blocks()
    ranks = [np.linalg.matrix_rank(H, tol=PIVOT_RATIO * np.linalg.norm(H, 2)) for H in blocks]
    singular = [H for H, r in zip(blocks, ranks) if r < H.shape[0]]
    regular = [H for H, r in zip(blocks, ranks) if r == H.shape[0]]
    # A_FF = G_F M^-1 G_F^T has rank at most nv: a block of more held rows than freedoms is singular. Standing, Go1
    # holds every row of its loaded feet, more than its freedoms, so the settled steps give singular blocks; the
    # landing's first touches hold fewer (regular ones). Conditions from the setup, not a count of blocks.
    nv = standing(*go1()).model.nv
    assert blocks[-1].shape[0] > nv, (blocks[-1].shape, nv)
    assert all(r < H.shape[0] for H, r in zip(blocks, ranks) if H.shape[0] > nv)
    assert len(regular) >= 1
    for H in singular[::10] + regular[::max(1, len(regular) // 20)]:
        assert_closest_held_rows_equal_lstsq(kernel, H, rng)

    def answers(H):
        return solve(np.ascontiguousarray(H), H @ rng.standard_normal(H.shape[0]), np.empty(H.shape[0]), PIVOT_RATIO)
    assert all(answers(H) for H in blocks[-100:])
    n, r = 24, 17
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    for values in (np.concatenate([np.logspace(0, -8, r), np.zeros(n - r)]), np.logspace(2, -4, n)):
        H = (Q * values) @ Q.T
        assert answers(H)
        assert_closest_held_rows_equal_lstsq(kernel, H, rng)
    at_cut = (Q * np.concatenate([np.logspace(0, -8, r), [PIVOT_RATIO], np.zeros(n - r - 1)])) @ Q.T
    assert not answers(at_cut)
    assert_closest_held_rows_equal_lstsq(kernel, at_cut, rng)



@pytest.mark.parametrize('backend', ['python', 'numba'])
def test_more_held_rows_than_freedoms_are_singular(backend):
    """``more_held_than_freedoms``, which sends a pattern to the least-squares solve without held_rows' Cholesky: for
    k held rows of A = G M^-1 G^T (G k x nv, random, M the quadruped's), A_FF is singular exactly when k > nv (its
    rank min(k, nv)); rows that are not held do not count."""
    from robot_dynamics_ros.simulation.contact_active_set import more_held_than_freedoms
    if backend == 'numba':
        pytest.importorskip('numba')
        from robot_dynamics_ros.algorithms.backends import compiled
        more_held_than_freedoms = compiled(more_held_than_freedoms)
    sim = standing(QUADRUPED, STAND)
    nv = sim.model.nv
    M = crba(sim.model, sim.q)
    rng = np.random.default_rng(7)
    for k in (nv - 1, nv, nv + 1, nv + 6):
        G = rng.standard_normal((k, nv))
        A = G @ np.linalg.solve(M, G.T)
        singular = np.linalg.matrix_rank(A) < k
        free = np.ones(k + 3, dtype=np.bool_)
        free[k:] = False   # (rows past the held ones, not held)
        assert more_held_than_freedoms(free, k + 3, nv) == singular == (k > nv), k
        free[0] = False
        assert more_held_than_freedoms(free, k + 3, nv) == (k - 1 > nv), k

@pytest.mark.parametrize('backend', ['python', 'numba'])
def test_held_rows_solves_a_regular_block_and_refuses_a_singular_one(backend):
    """``held_rows`` (Cholesky of A_FF, two rows at a time, stopping at the first pivot below PIVOT_RATIO of the
    largest so far) against NumPy: on random held sets of random positive definite programs (odd and even sizes) it
    returns the held rows' count and lam_F = A_FF^-1 (-(c_F + A_FX lam_X)) to rounding, lam_X untouched; on a rank-
    deficient A_FF (more held rows than freedoms, the singular pivot early or last) and on one with a non-positive
    pivot it returns -1."""
    from robot_dynamics_ros.simulation.contact_active_set import held_rows
    if backend == 'numba':
        pytest.importorskip('numba')
        from robot_dynamics_ros.algorithms.backends import compiled
        held_rows = compiled(held_rows)
    rng = np.random.default_rng(5)
    for m in range(1, 12):
        for _ in range(4):
            B = rng.standard_normal((m, m))
            A, c = B @ B.T + 0.1 * np.eye(m), rng.standard_normal(m)
            free = rng.random(m) < 0.7
            lam = np.where(free, 0.0, rng.standard_normal(m))
            held, fixed = np.flatnonzero(free), np.flatnonzero(~free)
            expected = np.linalg.solve(A[np.ix_(held, held)], -(c[held] + A[np.ix_(held, fixed)] @ lam[fixed]))
            out = lam.copy()
            assert held_rows(A, c, m, out, free, np.empty((m, m)), np.empty(m, dtype=np.int64)) == len(held)
            assert np.allclose(out[held], expected, rtol=1e-9, atol=1e-12), m
            assert np.array_equal(out[fixed], lam[fixed])
    n = 9
    for rank, order in ((4, np.arange(n)), (8, np.arange(n)), (4, rng.permutation(n))):
        J = np.linalg.qr(rng.standard_normal((n, n)))[0][:, :rank]   # (orthonormal columns: the rank's pivots
        A = (J @ J.T)[np.ix_(order, order)]                           # well above the cut, the others at rounding)
        assert held_rows(A, np.ones(n), n, np.zeros(n), np.ones(n, dtype=np.bool_), np.empty((n, n)),
                         np.empty(n, dtype=np.int64)) == -1
    A = np.diag([1.0, 2.0, -1.0, 3.0])
    assert held_rows(A, np.ones(4), 4, np.zeros(4), np.ones(4, dtype=np.bool_), np.empty((4, 4)),
                     np.empty(4, dtype=np.int64)) == -1


# A point mass on a wrist of two revolute joints at one origin (z, then x): with the wrist straight (q = 0) the mass
# lies on the z axis, so the first joint moves no inertia (its articulated inertia D is exactly zero)
POINT_MASS = '''<robot name="point_mass"><link name="base"/>
  <link name="hub"/>
  <joint name="turn" type="revolute"><parent link="base"/><child link="hub"/><axis xyz="0 0 1"/>
    <limit lower="-3" upper="3" effort="10" velocity="10"/></joint>
  <link name="mass"><inertial><origin xyz="0 0 0.5"/><mass value="1.0"/>
    <inertia ixx="0" iyy="0" izz="0" ixy="0" ixz="0" iyz="0"/></inertial></link>
  <joint name="tilt" type="revolute"><parent link="hub"/><child link="mass"/><axis xyz="1 0 0"/>
    <limit lower="-3" upper="3" effort="10" velocity="10"/></joint></robot>'''


@pytest.mark.parametrize('stages', ['python', 'numba'])
def test_a_zero_pivot_is_a_clear_error_naming_the_joint_and_keeps_the_state(stages):
    """A state where the mass matrix is singular (the point mass on the first joint's axis) is a ValueError naming
    the joint that moves no inertia, with the state kept; the step before it, with the wrist bent, is taken."""
    if stages == 'numba':
        pytest.importorskip('numba')
    with warnings.catch_warnings():
        warnings.simplefilter('ignore', URDFWarning)
        model = load_urdf(POINT_MASS)
    sim = Simulator(model, DT, ground=Ground(-10.0, 0.8), contact_points=[ContactPoint('mass', (0.0, 0.0, 0.5), 0.0)],
                    initial_positions=[0.0, 0.5], stages=stages)
    sim.step()
    assert sim.contact_step.steps == 1
    sim.q, sim.qd = np.zeros(2), np.zeros(2)
    with pytest.raises(ValueError, match="joint 'turn'"):
        sim.step()
    np.testing.assert_array_equal(sim.q, [0.0, 0.0])
    assert sim.t == DT and sim.contact_step.steps == 1


def test_the_step_takes_a_state_of_another_type_and_refuses_another_length():
    """A configuration set as a list (or of another dtype) steps as the same array does; one of another length is a
    ValueError naming it, with the state kept."""
    sim, reference = standing(QUADRUPED, STAND), standing(QUADRUPED, STAND)
    sim.q, sim.qd = sim.q.tolist(), sim.qd.astype(np.float32)
    pd_step(sim, STAND)
    pd_step(reference, STAND)
    np.testing.assert_array_equal(sim.q, reference.q)
    np.testing.assert_array_equal(sim.qd, reference.qd)
    q = sim.q[:-1].copy()
    sim.q = q
    with pytest.raises(ValueError, match=r"q has shape \(18,\), expected \(19,\)"):
        sim.step()
    assert sim.q is q and sim.contact_step.steps == 1


def test_a_ground_without_contact_points_steps_as_no_ground():
    """A ground given with no contact points (none the robot could touch it with) changes nothing: the bundled arm
    (viscous damping 1 N m s/rad, Coulomb friction 0.5 N m) under a constant effort steps as it does without a
    ground, bit for bit, its damping implicit as there (taken explicitly, as the contact step takes it, the run
    parts by 6 mrad in 0.2 s)."""
    command = np.full(7, 3.0)
    runs = []
    for ground in (None, Ground(-1.0, 0.8)):
        sim = Simulator(load_urdf(ARM), DT, ground=ground, initial_positions=np.full(7, 0.3))
        assert sim.contact_step is None
        for _ in range(200):
            sim.set_command(command)
            sim.step()
        runs.append(np.concatenate([sim.q, sim.qd]))
    np.testing.assert_array_equal(runs[1], runs[0])
