"""Ground contact for one time step: the contact points of a robot, and the impulses of hard, perfectly inelastic
contact with Coulomb friction on a horizontal plane (no ROS import).

Points: spheres of the URDF's <collision> (the sphere's lowest point touches), the corners of its boxes, points on
the rims of its cylinders (CYLINDER_RIM_POINTS per rim), or given ``ContactPoint``s (a robot whose collision
geometry is meshes).

Impulses: with W = J M^-1 J^T the contact-space compliance (Delassus operator; M^-1 by Jain's operators) and u the
contact velocities the step would reach without contact, the velocities after it are u + W lambda, where each
contact's impulse lambda_i = (t_x, t_y, n) satisfies Signorini and Coulomb at the velocity level:

    n >= 0,  u_n + (W lambda)_n >= -gap / dt,  complementary      (no penetration at the step's end; a closing
                                                                    contact stops there: no bounce)
    ||t|| <= mu n, and t opposes the sliding velocity where the contact slides (maximum dissipation)

solved by projected Gauss-Seidel over the contacts: the normal impulse, then the tangential one, which sticks
where the disc ||t|| <= mu n allows and else opposes the contact's sliding velocity with ||t|| = mu n (a fixed
point in the direction: the contact's compliance couples t and the slip). Why not a conic solver: the convex (Anitescu) relaxation that an SOCP solves
lifts a sliding contact off the ground by mu |u_t| dt per step, which a sliding box on an incline turns into
bouncing; this iteration solves Coulomb's law itself. Gaps are only closed, never pushed apart: penetration is not
corrected by a velocity (which would add energy); it is not created (up to the linearisation over one step).
"""
import functools
import itertools
import math
import xml.etree.ElementTree as ET
from dataclasses import dataclass

import numpy as np

from . import fast
from .algorithms.backends import compiled, njit
from .algorithms.kinematics import _frame_X_root, body_transforms, placement_from_transform
from .model.urdf import _read_xml
from .spatial import rpy_to_matrix

CYLINDER_RIM_POINTS = 8
ITERATIONS = 200           # Gauss-Seidel sweeps at most
SLIDING_ITERATIONS = 20    # fixed-point steps for a sliding contact's friction direction
TOLERANCE = 1e-10          # N s: stop when no impulse changes by more than this (relative to the largest)


@dataclass(frozen=True)
class ContactPoint:
    """A point at ``offset`` in the link's frame (m), with the radius of the sphere around it (0: a point)."""
    link: str
    offset: tuple
    radius: float = 0.0


def contact_points_from_urdf(source: str) -> list[ContactPoint]:
    """The contact points of a URDF (path or XML): its <collision> spheres, box corners and cylinder rims."""
    root = ET.fromstring(_read_xml(source))
    points = []
    for link in root.iter('link'):
        for collision in link.iter('collision'):
            origin = collision.find('origin')
            xyz = np.array([float(x) for x in origin.get('xyz', '0 0 0').split()]) if origin is not None else np.zeros(3)
            R = rpy_to_matrix([float(x) for x in origin.get('rpy', '0 0 0').split()]) if origin is not None \
                else np.eye(3)
            geometry = collision.find('geometry')
            shape = geometry[0] if geometry is not None and len(geometry) else None
            if shape is None:
                continue
            if shape.tag == 'sphere':
                locals_, radius = [np.zeros(3)], float(shape.get('radius'))
            elif shape.tag == 'box':
                half = np.array([float(x) for x in shape.get('size').split()]) / 2
                locals_, radius = [half * np.array(signs) for signs in itertools.product((-1, 1), repeat=3)], 0.0
            elif shape.tag == 'cylinder':
                r, h = float(shape.get('radius')), float(shape.get('length'))
                angles = 2 * np.pi * np.arange(CYLINDER_RIM_POINTS) / CYLINDER_RIM_POINTS
                locals_ = [np.array([r * np.cos(a), r * np.sin(a), z]) for z in (-h / 2, h / 2) for a in angles]
                radius = 0.0
            else:
                continue   # meshes: give ContactPoints
            points += [ContactPoint(link.get('name'), tuple(xyz + R @ p), radius) for p in locals_]
    return points


def lowest_points(model, q, points, X0=None):
    """(link, offset in the link frame, height) of each point's lowest point (its sphere's, for a radius) at q
    (X0: the bodies' transforms at q, where the caller has them)."""
    X0 = body_transforms(model, q) if X0 is None else X0
    result = []
    for point in points:
        placement = placement_from_transform(_frame_X_root(model, X0, point.link))
        lowest = placement.p + placement.R @ np.asarray(point.offset) - np.array([0.0, 0.0, point.radius])
        result.append((point.link, placement.R.T @ (lowest - placement.p), lowest[2]))
    return result


def contact_impulses(W, u, gap, dt, friction, guess=None):
    """(k, 3) impulses (t_x, t_y, n) per contact for the compliance W (3k x 3k, rows x, y, z per contact), the
    contact velocities u (3k,) without contact, the gaps (k,) and the friction coefficient (module docstring).
    Where the Gauss-Seidel iteration does not converge (redundant contacts: W singular, as when a body rests on
    more points than it has degrees of freedom) or its impulses would do positive work, the convex relaxation
    (``relaxed_impulses``) is taken instead: it never adds energy."""
    k = len(gap)
    lam = np.zeros((k, 3)) if guess is None else np.array(guess, dtype=float).reshape(k, 3)
    target = -np.maximum(np.asarray(gap, dtype=float), 0.0) / dt   # the normal velocity a contact may reach
    W, u = np.ascontiguousarray(W, dtype=float), np.ascontiguousarray(u, dtype=float)
    converged = _gauss_seidel(fast.BACKEND)(W, u, target, float(friction), lam)
    flat = lam.reshape(-1)
    if not converged or flat @ (u + 0.5 * W @ flat) > 0.0:
        return relaxed_impulses(W, u, target, friction)
    return lam


@njit(cache=True)
def gauss_seidel(W, u, target, friction, lam):
    """Projected Gauss-Seidel on the impulses lam (k, 3), in place: each contact's normal impulse (Signorini), then
    its tangential one, sticking where the disc ||t|| <= mu n allows, else opposing the slip s = free + W_tt t with
    ||t|| = mu n (a fixed point in its direction). Whether it converged (no impulse changed by more than TOLERANCE
    relative to the largest) within ITERATIONS sweeps."""
    k = target.shape[0]
    for _ in range(ITERATIONS):
        change, largest = 0.0, 1.0
        for i in range(k):
            a = 3 * i
            vx, vy, vz = u[a], u[a + 1], u[a + 2]
            for j in range(3 * k):
                vx += W[a, j] * lam[j // 3, j % 3]
                vy += W[a + 1, j] * lam[j // 3, j % 3]
                vz += W[a + 2, j] * lam[j // 3, j % 3]
            n = max(0.0, lam[i, 2] - (vz - target[i]) / W[a + 2, a + 2])
            dn = n - lam[i, 2]
            # slip velocity with this contact's tangential impulse removed and its new normal impulse in
            fx = vx + W[a, a + 2] * dn - W[a, a] * lam[i, 0] - W[a, a + 1] * lam[i, 1]
            fy = vy + W[a + 1, a + 2] * dn - W[a + 1, a] * lam[i, 0] - W[a + 1, a + 1] * lam[i, 1]
            det = W[a, a] * W[a + 1, a + 1] - W[a, a + 1] * W[a + 1, a]
            tx = -(W[a + 1, a + 1] * fx - W[a, a + 1] * fy) / det     # sticking: W_tt t = -free
            ty = -(W[a, a] * fy - W[a + 1, a] * fx) / det
            bound = friction * n
            if tx * tx + ty * ty > bound * bound:
                for _ in range(SLIDING_ITERATIONS):
                    sx = fx + W[a, a] * tx + W[a, a + 1] * ty
                    sy = fy + W[a + 1, a] * tx + W[a + 1, a + 1] * ty
                    norm = max(math.sqrt(sx * sx + sy * sy), 1e-300)
                    tx, ty = -bound * sx / norm, -bound * sy / norm
            change = max(change, abs(dn), abs(tx - lam[i, 0]), abs(ty - lam[i, 1]))
            lam[i, 0], lam[i, 1], lam[i, 2] = tx, ty, n
            largest = max(largest, abs(tx), abs(ty), n)
        if change <= TOLERANCE * largest:
            return True
    return False


@functools.cache
def _gauss_seidel(backend):
    """``gauss_seidel`` compiled (numba) or as plain Python."""
    return compiled(gauss_seidel) if backend == 'numba' else gauss_seidel


def relaxed_impulses(W, u, target, friction):
    """Anitescu's convex relaxation: lambda = argmin 1/2 lambda^T W lambda + lambda^T (u - target e_n) over the
    friction cones, a second-order cone program (Clarabel). Its impulses do no positive work (lambda = 0 is
    feasible); a sliding contact may lift by mu |u_t| dt (why it is the fallback, not the method)."""
    try:
        import clarabel
    except ImportError:
        raise ImportError("ground contact with redundant contacts needs clarabel: "
                          "pip install 'robot_dynamics_ros[legged]'", name='clarabel') from None
    from scipy import sparse
    k = len(target)
    c = np.array(u, dtype=float)
    c[2::3] -= target
    rows = np.zeros((3 * k, 3 * k))
    for i in range(k):   # s = -A lambda = (mu n, t_x, t_y) in the second-order cone
        rows[3 * i, 3 * i + 2], rows[3 * i + 1, 3 * i], rows[3 * i + 2, 3 * i + 1] = -friction, -1.0, -1.0
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    P = sparse.csc_matrix(np.triu(W + 1e-12 * np.trace(W) / len(W) * np.eye(len(W))))
    solution = clarabel.DefaultSolver(P, c, sparse.csc_matrix(rows), np.zeros(3 * k),
                                      [clarabel.SecondOrderConeT(3)] * k, settings).solve()
    return np.asarray(solution.x).reshape(k, 3)
