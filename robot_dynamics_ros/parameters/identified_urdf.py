"""Identified base parameters back into a URDF, so the controller can use the identified model.

Only the b base parameters beta = K pi are identifiable; the p standard parameters are not. We take the
standard parameters closest to the URDF's own (pi_0) that reproduce beta exactly: the least-norm change
pi = pi_0 + K^+ (beta - K pi_0). Any such pi gives the same joint torques, so the choice does not change
the dynamics model, but a URDF must also be *physically consistent* (Wensing, Kim, Slotine 2017: each
body's pseudo-inertia [[tr(Ibar)/2 - Ibar, h], [h^T, m]] positive definite; equivalently m > 0 and the
inertia about the centre of mass positive definite with the triangle inequalities). When the
least-norm change is not, a penalised search in the null space of K looks for a consistent pi.
Limitations: that search is local and may fail (noisy beta can even admit no consistent pi); the
result then keeps the least-norm pi and names the inconsistent bodies. The change is minimal in
the plain Euclidean norm of mixed units (kg, kg m, kg m^2). Rotor inertias and torque offsets have no
URDF element and are not written; viscous and Coulomb friction go to <dynamics damping friction>.
Fixed links merged into a body lose their own <inertial>: the whole body's inertia goes to its joint's
child link.
"""
import xml.etree.ElementTree as ET

import numpy as np
import scipy.linalg
from scipy.optimize import minimize

from ..algorithms.regressor import BODY_PARAMETERS
from ..spatial import skew

CONSISTENCY_TOL = 1e-9     # pseudo-inertia eigenvalues above -tol count as consistent (massless bodies: 0)
CONSISTENCY_MARGIN = 1e-6  # smallest eigenvalue the penalised search aims for (kg m^2)


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
    """(n_bodies,) smallest pseudo-inertia eigenvalue of each body, and its (n_bodies, 10) gradient."""
    values, gradients = np.zeros(n_bodies), np.zeros((n_bodies, 10))
    for i in range(n_bodies):
        w, V = np.linalg.eigh(pseudo_inertia(pi[10 * i:10 * i + 10]))
        values[i] = w[0]
        gradients[i] = np.einsum('a,kab,b->k', V[:, 0], PSEUDO_INERTIA_BASIS, V[:, 0])  # d(lambda)/dp = v^T E_k v
    return values, gradients


def inconsistent_bodies(pi, n_bodies):
    """Indices of the bodies whose pseudo-inertia is not positive semidefinite."""
    return [int(i) for i in np.flatnonzero(smallest_eigenvalues(pi, n_bodies)[0] < -CONSISTENCY_TOL)]


def consistent_standard_parameters(base, beta, pi_prior, n_bodies):
    """(pi, inconsistent body indices): standard parameters with K pi = beta, closest to pi_prior.

    Least-norm change first; if a body is then inconsistent, pi = pi_ln + N z over the null space N of
    K (so K pi = beta stays exact) minimises ||pi - pi_prior||^2 + w sum_i max(0, margin - lambda_i)^2,
    raising w until every body is consistent or w reaches 1e12.
    """
    K = base.K
    pi_least_norm = pi_prior + np.linalg.pinv(K) @ (beta - K @ pi_prior)
    if not inconsistent_bodies(pi_least_norm, n_bodies):
        return pi_least_norm, []
    N = scipy.linalg.null_space(K)
    n_body_params = 10 * n_bodies

    def penalised(z, weight):
        pi = pi_least_norm + N @ z
        shortfall, gradient = smallest_eigenvalues(pi, n_bodies)
        shortfall = np.maximum(CONSISTENCY_MARGIN - shortfall, 0.0)
        change = pi - pi_prior
        d_pi = 2 * change
        d_pi[:n_body_params] -= 2 * weight * (shortfall[:, None] * gradient).reshape(-1)
        return change @ change + weight * shortfall @ shortfall, N.T @ d_pi

    z = np.zeros(N.shape[1])
    for weight in 10.0 ** np.arange(2, 13, 2):
        z = minimize(penalised, z, args=(weight,), jac=True, method='L-BFGS-B').x
        pi = pi_least_norm + N @ z
        if not inconsistent_bodies(pi, n_bodies):
            return pi, []
    return pi_least_norm, inconsistent_bodies(pi_least_norm, n_bodies)


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
