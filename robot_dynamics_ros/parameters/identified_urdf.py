"""Identified base parameters back into a URDF, so the controller can use the identified model.

Only the b base parameters beta = K pi are identifiable; the p standard parameters are not, and a least-squares
beta from noisy data can even lie outside the set of physically consistent robots. ``consistent_standard_parameters``
projects onto that set (Wensing, Kim, Slotine 2017): each body's 4x4 pseudo-inertia
J = [[tr(Ibar)/2 I - Ibar, h], [h^T, m]] positive definite (J >= margin I, so the inertia about the centre of mass
is positive definite with strict triangle inequalities and m > 0), friction coefficients >= 0. Where such pi
with K pi = beta exist, it takes the one closest to the URDF's own parameters pi_prior (plain Euclidean norm of
mixed units): the fit is kept exactly. Otherwise it minimises the loss of fit ||R (K pi - beta)||^2, where R is
the triangular factor of the (weighted) stacked base regressor W: since beta is the least-squares optimum,
||y - W K pi||^2 = ||y - W beta||^2 + ||W (K pi - beta)||^2, so this is exactly the increase of the residual sum
of squares; a small term eps ||pi - pi_prior||^2 picks among the pi with the same K pi. Two small semidefinite
programs, solved with cvxpy (the ``ident`` extra) and Clarabel (on the bundled arm: 0.13 s and exact to 1e-11,
where SCS took 3.6 s and left bodies inconsistent by 3e-5). Rotor inertias and torque offsets
have no URDF element and are not written; viscous and Coulomb friction go to <dynamics damping friction>.
Fixed links merged into a body lose their own <inertial>: the whole body's inertia goes to its joint's child link.
"""
import xml.etree.ElementTree as ET

import numpy as np

from ..algorithms.regressor import BODY_PARAMETERS
from ..spatial import skew

CONSISTENCY_TOL = 1e-9     # pseudo-inertia eigenvalues above -tol count as consistent (massless bodies: 0)
CONSISTENCY_MARGIN = 1e-6  # smallest pseudo-inertia eigenvalue required of the projection (kg m^2, or kg)
PRIOR_WEIGHT = 1e-6        # eps of eps ||pi - pi_prior||^2, below the fit term's weights (largest 1)


def pseudo_inertia(params):
    """4x4 pseudo-inertia of one body's 10 standard parameters (XX, XY, XZ, YY, YZ, ZZ, MX, MY, MZ, M)."""
    XX, XY, XZ, YY, YZ, ZZ, MX, MY, MZ, M = params
    Ibar = np.array([[XX, XY, XZ], [XY, YY, YZ], [XZ, YZ, ZZ]])
    J = np.zeros((4, 4))
    J[:3, :3] = 0.5 * np.trace(Ibar) * np.eye(3) - Ibar
    J[:3, 3] = J[3, :3] = (MX, MY, MZ)
    J[3, 3] = M
    return J


PSEUDO_INERTIA_BASIS = np.array([pseudo_inertia(e) for e in np.eye(10)])  # J(p) = sum_k p_k E_k


def smallest_eigenvalues(pi, n_bodies):
    """(n_bodies,) smallest pseudo-inertia eigenvalue of each body."""
    return np.array([np.linalg.eigvalsh(pseudo_inertia(pi[10 * i:10 * i + 10]))[0] for i in range(n_bodies)])


def inconsistent_bodies(pi, n_bodies):
    """Indices of the bodies whose pseudo-inertia is not positive semidefinite."""
    return [int(i) for i in np.flatnonzero(smallest_eigenvalues(pi, n_bodies) < -CONSISTENCY_TOL)]


def consistent_standard_parameters(base, beta, pi_prior, n_bodies, R=None, solver='CLARABEL'):
    """(pi, inconsistent body indices): physically consistent standard parameters whose base parameters fit
    like beta (see the module doc). First K pi = beta exactly, closest to pi_prior; where no consistent pi
    has K pi = beta, the least loss of fit ||R (K pi - beta)||^2 (R: (b, b) triangular factor of the weighted
    base regressor; default identity). The list is empty unless the solver failed."""
    try:
        import cvxpy as cp
    except ImportError:
        raise ImportError("physically consistent parameters need cvxpy: pip install 'robot_dynamics_ros[ident]'") \
            from None
    K, beta, pi_prior = base.K, np.asarray(beta, dtype=float), np.asarray(pi_prior, dtype=float)
    R = np.eye(len(beta)) if R is None else np.asarray(R, dtype=float)
    R = R / np.linalg.norm(R, 2)                              # scale: the fit term's largest weight is 1
    pi = cp.Variable(len(pi_prior))
    consistent = [sum(pi[10 * i + k] * PSEUDO_INERTIA_BASIS[k] for k in range(10)) >> CONSISTENCY_MARGIN * np.eye(4)
                  for i in range(n_bodies)]
    nonnegative = [k for k, name in enumerate(base.parameter_names) if name[:2] in ('Fv', 'Fc', 'Ia')]
    if nonnegative:
        consistent.append(pi[nonnegative] >= 0)
    exact = cp.Problem(cp.Minimize(cp.sum_squares(pi - pi_prior)), consistent + [K @ pi == beta])
    exact.solve(solver=solver)
    if exact.status != cp.OPTIMAL:
        fit = cp.sum_squares(R @ (K @ pi - beta)) + PRIOR_WEIGHT * cp.sum_squares(pi - pi_prior)
        cp.Problem(cp.Minimize(fit), consistent).solve(solver=solver)
    if pi.value is None:
        return pi_prior + np.linalg.pinv(K) @ (beta - K @ pi_prior), list(range(n_bodies))
    return pi.value, inconsistent_bodies(pi.value, n_bodies)


def write_identified_urdf(urdf_xml, model, pi, parameter_names):
    """URDF XML string: the source URDF with each body's inertia and joint friction set from pi."""
    robot = ET.fromstring(urdf_xml)
    links = {link.get('name'): link for link in robot.findall('link')}
    joints = {joint.get('name'): joint for joint in robot.findall('joint')}
    for name, frame in model.frames.items():
        if frame.body >= 0 and name not in model.body_names and links[name].find('inertial') is not None:
            links[name].remove(links[name].find('inertial'))                  # lumped into its body below
    for i, link_name in enumerate(model.body_names):
        _set_inertial(links[link_name], pi[10 * i:10 * i + 10])
    value = dict(zip(parameter_names, pi))
    for j, joint_name in enumerate(model.joint_names):
        for column, attribute in (('Fv', 'damping'), ('Fc', 'friction')):
            if f'{column}{j + 1}' in value:
                dynamics = joints[joint_name].find('dynamics')
                if dynamics is None:
                    dynamics = ET.SubElement(joints[joint_name], 'dynamics')
                dynamics.set(attribute, f"{value[f'{column}{j + 1}']:.17g}")
    ET.indent(robot)
    return ET.tostring(robot, encoding='unicode') + '\n'


def _set_inertial(link, params):
    """<inertial> of a link from its body's 10 standard parameters about the link frame's origin."""
    p = dict(zip(BODY_PARAMETERS, params))
    mass = p['M']
    com = np.array([p['MX'], p['MY'], p['MZ']]) / mass if mass > 0 else np.zeros(3)
    Ibar = np.array([[p['XX'], p['XY'], p['XZ']], [p['XY'], p['YY'], p['YZ']], [p['XZ'], p['YZ'], p['ZZ']]])
    I_com = Ibar + mass * skew(com) @ skew(com)                             # parallel axes: Ibar = Ic - m c^ c^
    old = link.find('inertial')
    if old is not None:
        link.remove(old)
    inertial = ET.SubElement(link, 'inertial')
    ET.SubElement(inertial, 'origin', xyz=' '.join(f'{c:.17g}' for c in com), rpy='0 0 0')
    ET.SubElement(inertial, 'mass', value=f'{mass:.17g}')
    ET.SubElement(inertial, 'inertia', **{key: f'{I_com[r, c]:.17g}' for key, (r, c) in (
        ('ixx', (0, 0)), ('ixy', (0, 1)), ('ixz', (0, 2)), ('iyy', (1, 1)), ('iyz', (1, 2)), ('izz', (2, 2)))})
