"""Wall time and peak memory of large inputs read as before their bounds (issue 37) and as now:

- a collision mesh, a 1M-triangle sphere in a binary STL (every vertex on its hull, the worst case): its exact convex
  hull as trimesh gives it (``trimesh.load`` then ``convex_hull``, as ``model.meshes.hull_vertices`` did) against
  ``contact_points_from_urdf`` now (the hull over one vertex per cell of a 128-cell grid);
- a visual mesh, the same sphere: ``viewer.geometry.shape_mesh`` with and without its VIEW_TRIANGLES bound, and the
  bytes a browser is sent for it (float32 vertices, uint32 triangles);
- a 26 MB SRDF (disabled collision pairs): parsed whole (``xml.etree``, as ``load_srdf`` did) against ``load_srdf``
  now (refused by its size).

    python benchmarks/bench_large_inputs.py [folder for the generated files]

Each measurement runs in a child process (peak memory is its ru_maxrss, imports included); the ratios are the
figures to compare across machines.
"""
import os
import resource
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(HERE), os.path.join(os.path.dirname(HERE), 'test')]   # this checkout's package
TRIANGLES = 1_000_000
SRDF_MB = 26


def make_files(folder):
    from test_hostile_inputs import sphere_triangles, write_stl   # test helpers
    os.makedirs(folder, exist_ok=True)
    stl, srdf = os.path.join(folder, 'sphere.stl'), os.path.join(folder, 'big.srdf')
    if not os.path.exists(stl):
        write_stl(stl, sphere_triangles(TRIANGLES, 0.02))
    for kind in ('collision', 'visual'):
        with open(os.path.join(folder, f'{kind}.urdf'), 'w') as f:
            f.write(f'<robot name="r"><link name="a"><{kind}><geometry><mesh filename="sphere.stl"/></geometry>'
                    f'</{kind}></link></robot>')
    if not os.path.exists(srdf):
        line = '<disable_collisions link1="link_{0}" link2="link_{1}" reason="Adjacent"/>\n'
        count = SRDF_MB * 1_000_000 // len(line.format(100_000, 100_001))
        with open(srdf, 'w') as f:
            f.write('<robot name="r">' + ''.join(line.format(k, k + 1) for k in range(count)) + '</robot>\n')


def child(case, folder):
    """Prints: wall seconds of the case, and what it produced."""
    import warnings
    warnings.simplefilter('ignore')
    start = time.perf_counter()
    if case == 'collision before':
        try:
            import trimesh
        except ImportError:
            return 'trimesh is not installed (the legged extra)'
        result = len(trimesh.load(os.path.join(folder, 'sphere.stl'), force='mesh').convex_hull.vertices)
        result = f'{result} hull vertices'
    elif case == 'collision now':
        from robot_dynamics_ros.model.collision import contact_points_from_urdf
        result = f"{len(contact_points_from_urdf(os.path.join(folder, 'collision.urdf')))} contact points"
    elif case.startswith('visual'):
        from robot_dynamics_ros.viewer import geometry
        if case == 'visual before':
            geometry.VIEW_TRIANGLES = TRIANGLES * 10
        shape, = geometry.robot_geometry(os.path.join(folder, 'visual.urdf'), environ={}).shapes
        mesh = geometry.shape_mesh(shape)
        result = f'{len(mesh.faces)} triangles, {(len(mesh.vertices) + len(mesh.faces)) * 12 / 1e6:.1f} MB a browser'
    elif case == 'srdf before':
        import xml.etree.ElementTree as ET
        with open(os.path.join(folder, 'big.srdf')) as f:
            result = f'{len(ET.fromstring(f.read()))} elements'
    else:
        from robot_dynamics_ros import SRDFError, load_srdf
        try:
            load_srdf(os.path.join(folder, 'big.srdf'))
            result = 'read'
        except SRDFError:
            result = 'refused'
    print(time.perf_counter() - start, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3, result, flush=True)


def main(folder):
    make_files(folder)
    print(f"{'case':<18}{'wall s':>8}{'peak MB':>9}  result")
    measured = {}
    for case in ('collision before', 'collision now', 'visual before', 'visual now', 'srdf before', 'srdf now'):
        out = subprocess.run([sys.executable, __file__, 'child', case, folder], capture_output=True, text=True,
                             check=True).stdout.split(maxsplit=2)
        seconds, megabytes = measured[case] = float(out[0]), float(out[1])
        print(f"{case:<18}{seconds:>8.2f}{megabytes:>9.0f}  {out[2].strip()}")
    for kind in ('collision', 'visual', 'srdf'):
        (t0, m0), (t1, m1) = measured[f'{kind} before'], measured[f'{kind} now']
        print(f"{kind}: {t0 / t1:.1f}x less time, {m0 / m1:.1f}x less peak memory")


if __name__ == '__main__':
    if sys.argv[1:2] == ['child']:
        child(sys.argv[2], sys.argv[3])
    else:
        main(sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix='bench_large_inputs_'))
