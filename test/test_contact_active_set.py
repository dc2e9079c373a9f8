"""The certified pattern solve of the contact cone program (contact_active_set) against cvxpy (another modelling of
the same problem) on random programs: the true optimum's pattern is certified and gives the optimum; a pattern
with one block's role changed is refused by the certificate, and revised to the optimum by the active-set steps; a
singular program is left to the interior-point solver where its held rows are inconsistent."""
import numpy as np
import pytest

from robot_dynamics_ros.simulation import contact_active_set
from robot_dynamics_ros.simulation.contact_active_set import (APART, AT_LOWER, AT_UPPER, IDLE, INSIDE, PUSHING, SLIDE,
                                                              STICK, solve_on_pattern)

cp = pytest.importorskip('cvxpy')
MU = 0.7
NC, N_BILATERAL, N_BOX, N_STOPS = 3, 1, 3, 2
ZERO, CLEAR = 1e-6, 1e-4   # a block of the reference solution is at a bound within ZERO, clear of it beyond CLEAR;
                           # between the two it is too close to call


def random_program(rng, rank=None):
    m = 3 * NC + N_BILATERAL + N_BOX + N_STOPS
    B = rng.standard_normal((m, rank or m))
    A = B @ B.T / m + (0.0 if rank else 0.2 * np.eye(m))
    c = rng.standard_normal(m)
    # contacts pressed into the ground (c_n < 0) with a small tangential drive stick or slide; some are apart
    c[:3 * NC] *= np.tile([0.05, 0.05, 1.0], NC)
    c[2:3 * NC:3] = np.abs(c[2:3 * NC:3]) * rng.choice([-1.0, -1.0, 1.0], NC)
    bound = rng.uniform(0.05, 0.5, N_BOX)
    return A, c, bound


def reference(A, c, bound):
    """The optimum by cvxpy (Clarabel underneath, through its own modelling of the cones)."""
    lam = cp.Variable(len(c))
    start_box, start_stop = 3 * NC + N_BILATERAL, 3 * NC + N_BILATERAL + N_BOX
    constraints = [cp.SOC(MU * lam[3 * i + 2], lam[3 * i:3 * i + 2]) for i in range(NC)]
    constraints += [cp.abs(lam[start_box:start_stop]) <= bound, lam[start_stop:] >= 0]
    cp.Problem(cp.Minimize(0.5 * cp.quad_form(lam, cp.psd_wrap(A)) + c @ lam), constraints).solve(
        solver='CLARABEL', tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    return lam.value


def pattern(lam, bound):
    """The roles of a reference solution, or None where a block is too close to call."""
    contact = lam[:3 * NC].reshape(-1, 3)
    margin = MU * contact[:, 2] - np.hypot(contact[:, 0], contact[:, 1])
    if np.any((np.abs(contact[:, 2]) < CLEAR) & (np.abs(contact[:, 2]) > ZERO)):
        return None
    contact_roles = np.where(contact[:, 2] < ZERO, APART, np.where(margin > CLEAR, STICK, SLIDE))
    box = lam[3 * NC + N_BILATERAL:3 * NC + N_BILATERAL + N_BOX]
    if np.any((np.abs(np.abs(box) - bound) < CLEAR) & (np.abs(np.abs(box) - bound) > ZERO)):
        return None
    box_roles = np.where(box > bound - ZERO, AT_UPPER, np.where(box < -bound + ZERO, AT_LOWER, INSIDE))
    stops = lam[-N_STOPS:]
    if np.any((stops > ZERO) & (stops < CLEAR)):
        return None
    return contact_roles, box_roles, np.where(stops > ZERO, PUSHING, IDLE)


def solve(A, c, bound, roles):
    return solve_on_pattern(A, c, NC, N_BILATERAL, bound, N_STOPS, MU, *roles)


def test_the_optimums_pattern_is_certified_and_gives_the_optimum():
    """Where a contact slides (the optimum on a cone's surface), the pattern is left to the other solver."""
    rng = np.random.default_rng(1)
    certified, sliding = 0, []
    for _ in range(100):
        A, c, bound = random_program(rng)
        lam = reference(A, c, bound)
        roles = pattern(lam, bound)
        if roles is None:
            continue
        if np.any(roles[0] == SLIDE):
            sliding.append(solve(A, c, bound, roles))
            continue
        ours = solve(A, c, bound, roles)
        assert ours is not None
        np.testing.assert_allclose(ours, lam, atol=1e-6)
        certified += 1
    assert certified >= 10
    assert len(sliding) >= 10 and all(result is None for result in sliding)


def one_role_changed(rng, programs=40):
    """(A, c, bound, optimum, roles) for every pattern with one role of the optimum's pattern changed (a sticking
    contact set apart, an apart one made to stick, a box row moved, a stop toggled)."""
    for _ in range(programs):
        A, c, bound = random_program(rng)
        lam = reference(A, c, bound)
        roles = pattern(lam, bound)
        if roles is None or np.any(roles[0] == SLIDE):
            continue
        for block in range(3):
            for k in range(len(roles[block])):
                changed = [r.copy() for r in roles]
                if block == 0:
                    changed[0][k] = APART if roles[0][k] == STICK else STICK
                elif block == 1:
                    changed[1][k] = INSIDE if roles[1][k] != INSIDE else AT_UPPER
                else:
                    changed[2][k] = IDLE if roles[2][k] == PUSHING else PUSHING
                yield A, c, bound, lam, changed


def test_a_pattern_with_one_role_changed_is_refused_without_revisions(monkeypatch):
    """A is positive definite, so the optimum is unique and a different pattern cannot certify it: the certificate
    alone (no revision) refuses every pattern with one role changed."""
    monkeypatch.setattr(contact_active_set, 'PATTERN_REVISIONS', 0)
    cases = list(one_role_changed(np.random.default_rng(2)))
    assert len(cases) >= 50
    for A, c, bound, _, roles in cases:
        assert solve(A, c, bound, roles) is None


def test_a_pattern_with_one_role_changed_is_revised_to_the_optimum_or_refused():
    """With the revisions, what the solve returns is certified, so it is the unique optimum; the revisions find it
    from most patterns one role off (each revision fixes the roles whose conditions fail)."""
    cases = list(one_role_changed(np.random.default_rng(2)))
    found = 0
    for A, c, bound, lam, roles in cases:
        ours = solve(A, c, bound, roles)
        if ours is not None:
            np.testing.assert_allclose(ours, lam, atol=1e-6)
            found += 1
    assert found > len(cases) / 2, (found, len(cases))


def test_a_singular_program_is_certified_where_its_held_rows_are_consistent():
    """More held rows than freedoms (A of rank 6, 15 rows: a box on four corners). Where y = 0 on the held rows
    has solutions (c in the range of A) and the least-norm one lies inside the cones and boxes, it is certified and
    reaches cvxpy's optimal value; where it has none (a random c), the pattern is refused."""
    rng = np.random.default_rng(3)
    m = 3 * NC + N_BILATERAL + N_BOX + N_STOPS
    _, _, bound = random_program(rng)
    inside = np.concatenate([np.tile([0.1, -0.1, 1.0], NC), rng.uniform(-1, 1, N_BILATERAL),
                             0.5 * bound * rng.uniform(-1, 1, N_BOX), rng.uniform(0.5, 1.0, N_STOPS)])
    B = np.column_stack([inside, rng.standard_normal((m, 5))])
    A = B @ B.T / m
    roles = (np.full(NC, STICK), np.full(N_BOX, INSIDE), np.full(N_STOPS, PUSHING))
    c = -A @ inside
    ours = solve(A, c, bound, roles)
    assert ours is not None
    np.testing.assert_allclose(ours, inside, atol=1e-9)    # the least-norm solution (closest to no previous
                                                           # impulses): inside is in A's range

    def objective(lam):
        return 0.5 * lam @ A @ lam + c @ lam
    assert objective(ours) == pytest.approx(objective(reference(A, c, bound)), abs=1e-6)
    assert solve(A, rng.standard_normal(m), bound, roles) is None
