"""Step time of a floating body resting on the ground on 1,000 and 5,000 collision spheres of one link, with every
point of the URDF (``contact_points_from_urdf(reduce=False)``, as before the points were reduced) and with the
reduced set (``reduce_points``: the hull vertices of the link's (centre, radius) points, at most LINK_POINTS).

The body is test/test_contact_bounds.py's ``many_spheres_urdf``: a third of the spheres in a bottom layer that touches
the ground at once (the worst case for the contact problem), the rest inside, a fifth of them duplicated.

    python benchmarks/bench_contact_points.py [steps] [full-set time limit in s]

Each measurement runs in a child process (a full set can take minutes and gigabytes); one over the limit is reported
as '> limit'. BLAS single-threaded (OPENBLAS_NUM_THREADS=1, unless set), as in the nodes.
"""
import os
import subprocess
import sys
import time

os.environ.setdefault('OPENBLAS_NUM_THREADS', '1')
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), 'test'))


def measure(count, reduce, steps):
    """Prints: points, points within 1 mm of the ground, build s, first step s, mean s per later step."""
    import warnings
    from test_contact_bounds import many_spheres_urdf   # a test helper
    from robot_dynamics_ros import load_urdf
    from robot_dynamics_ros.model.collision import contact_points_from_urdf
    from robot_dynamics_ros.simulation.ground_contact import Ground
    from robot_dynamics_ros.simulation.simulator import Simulator
    urdf = many_spheres_urdf(count, duplicates=count // 5)
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        points = contact_points_from_urdf(urdf, reduce=reduce)
    sim = Simulator(load_urdf(urdf, root_joint='floating'), 1e-3, ground=Ground(0.0, 0.8), contact_points=points)
    build = time.perf_counter() - start
    touching = int((sim.contact.points(sim.q)[0] < 1e-3).sum())
    start = time.perf_counter()
    sim.step()
    first = time.perf_counter() - start
    start = time.perf_counter()
    for _ in range(steps):
        sim.step()
    later = (time.perf_counter() - start) / steps if steps else float('nan')
    print(len(points), touching, build, first, later, flush=True)


def main(steps=20, limit=600.0):
    print(f"{'spheres':>8}{'set':>9}{'points':>8}{'touching':>10}{'build s':>9}{'first step s':>14}"
          f"{'ms/step':>10}")
    for count in (1000, 5000):
        for reduce in (False, True):
            label = 'reduced' if reduce else 'full'
            n = steps if reduce else min(steps, 2)
            try:
                out = subprocess.run([sys.executable, __file__, 'child', str(count), str(int(reduce)), str(n)],
                                     capture_output=True, text=True, timeout=limit).stdout.split()
                points, touching, build, first, later = int(out[0]), int(out[1]), *map(float, out[2:])
                print(f"{count:>8}{label:>9}{points:>8}{touching:>10}{build:>9.2f}{first:>14.3f}{1e3 * later:>10.2f}")
            except subprocess.TimeoutExpired:
                print(f"{count:>8}{label:>9}{'':>8}{'':>10}{'':>9}{f'> {limit:g}':>14}")
            except (IndexError, ValueError):
                print(f"{count:>8}{label:>9} failed")


if __name__ == '__main__':
    if sys.argv[1:2] == ['child']:
        measure(int(sys.argv[2]), bool(int(sys.argv[3])), int(sys.argv[4]))
    else:
        main(*(float(a) if i else int(a) for i, a in enumerate(sys.argv[1:])))
