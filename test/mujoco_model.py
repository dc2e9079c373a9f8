"""The MJCF of one of our floating-root models, for MuJoCo as a second simulator (test_ground_contact.py,
benchmarks/bench_contact.py): written from the Model itself, so both simulate the same bodies."""
import numpy as np

from robot_dynamics_ros import spatial
from robot_dynamics_ros.model.model import FREE_FLYER

G = 9.81
# Hard contact in MuJoCo: elliptic cones, a 0.2 ms step, solref time constant 2 steps (its minimum) at critical
# damping, solimp impedance 0.999-0.9999 over 0.1 mm (penetration of about a tenth of a millimetre under the
# quadruped's weight), impratio 100 (friction as hard as the normal), 100 no-slip iterations (no creep in sticking
# contacts), solver tolerance 1e-12; Euler integration without its implicit damping (ours is explicit).
MUJOCO_STEP = 2e-4


def mjcf(model, points, mu, timestep=MUJOCO_STEP, hard=True):
    """MJCF of a floating-root model: one MuJoCo body per body of ours (same frames, masses, centres of mass and
    inertias, joint axes, ranges, damping, Coulomb friction as frictionloss), a sphere geom at each contact point
    that has a radius, and the ground plane. hard=False: MuJoCo's default contact and solver settings instead."""
    def numbers(values):
        return ' '.join(repr(float(x)) for x in np.ravel(values))
    children = {i: [] for i in range(-1, model.nb)}
    for i, parent in enumerate(model.parent):
        children[parent].append(i)
    spheres = {i: [] for i in range(model.nb)}
    for point in points:
        if point.radius > 0:
            frame = model.frames[point.link]
            R, p = spatial.pose_from_plucker(frame.X_body)
            spheres[frame.body].append((p + R @ np.asarray(point.offset), point.radius))

    def body(i, indent):
        I = model.inertia[i]
        mass = I[5, 5]
        com = np.array([I[2, 4], I[0, 5], I[1, 3]]) / mass   # I[:3, 3:] = m skew(c)
        C = spatial.skew(com)
        I_com = I[:3, :3] - mass * C @ C.T
        R, p = spatial.pose_from_plucker(model.X_tree[i])
        xml = (f'{indent}<body pos="{numbers(p)}" quat="{numbers(np.roll(spatial.matrix_to_quaternion(R), 1))}">\n'
               f'{indent} <inertial pos="{numbers(com)}" mass="{float(mass)!r}" fullinertia="'
               f'{numbers([I_com[0, 0], I_com[1, 1], I_com[2, 2], I_com[0, 1], I_com[0, 2], I_com[1, 2]])}"/>\n')
        if model.joint_type[i] == FREE_FLYER:
            xml += f'{indent} <freejoint/>\n'
        else:
            k = model.idx_v[i]
            xml += (f'{indent} <joint axis="{numbers(model.axis[i])}" damping="{float(model.damping[k])!r}" '
                    f'frictionloss="{float(model.friction[k])!r}" range="{numbers([model.lower[model.idx_q[i]], model.upper[model.idx_q[i]]])}"/>\n')
        for centre, radius in spheres[i]:
            xml += f'{indent} <geom type="sphere" size="{float(radius)!r}" pos="{numbers(centre)}"/>\n'
        for child in children[i]:
            xml += body(child, indent + ' ')
        return xml + f'{indent}</body>\n'
    if hard:
        option = (f'<option timestep="{timestep!r}" gravity="0 0 {-G!r}" cone="elliptic" impratio="100" '
                  'noslip_iterations="100" integrator="Euler" tolerance="1e-12" iterations="200">'
                  '<flag eulerdamp="disable"/></option>')
        geom = f'<geom condim="3" friction="{mu!r} 0 0" solref="{2 * timestep!r} 1" solimp="0.999 0.9999 0.0001 0.5 2"/>'
    else:
        option = f'<option timestep="{timestep!r}" gravity="0 0 {-G!r}"/>'
        geom = f'<geom condim="3" friction="{mu!r} 0 0"/>'
    return f'''<mujoco>
 <compiler angle="radian" inertiafromgeom="false" autolimits="true"/>
 {option}
 <default>{geom}</default>
 <worldbody>
  <geom type="plane" size="10 10 0.1"/>
{body(0, '  ')} </worldbody>
</mujoco>'''
