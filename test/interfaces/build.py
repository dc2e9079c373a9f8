"""Build the interface packages the TF and action tests need, where no wheel provides them: tf2_msgs (all of its
definitions) and a subset of control_msgs (FollowJointTrajectory and the tolerances it uses), from their public
definitions here, with the rosidl generators and ament_cmake of the active environment (pip wheels, or a sourced
ROS install). The C libraries are built against that environment's ROS client library, so each environment (Kilted,
Jazzy) gets its own build; a build whose sources and generators have not changed is kept.

    pip install $(python test/interfaces/build.py --requirements)   # what the build needs (pip environments)
    python test/interfaces/build.py               # build (or keep) and print the shell lines that put it on the path
    eval "$(python test/interfaces/build.py)"     # ... and put it on the path of this shell

Needs cmake (3.19 or newer), a C/C++ compiler and, in a pip environment, the packages ``--requirements`` lists
(.ci/run installs them)."""
import argparse
import hashlib
import importlib.metadata
import os
import shlex
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_BUILD_DIR = os.path.join(HERE, '..', '..', 'build', 'interfaces')
PACKAGES = ('tf2_msgs', 'control_msgs')   # in build order
# What a build needs from pip beside the ROS client library: the generators and ament_cmake, and the packages their
# wheels need without requiring them (found by building on a fresh environment), per distribution ('ros-' or
# 'ros-jazzy-' before each ROS name).
ROS_BUILD_PACKAGES = {
    'kilted': ('ament-cmake', 'ament-cmake-include-directories', 'ament-cmake-ros-core', 'ament-package',
               'rosidl-default-generators', 'rosidl-core-generators'),
    'jazzy': ('ament-cmake', 'ament-cmake-include-directories', 'ament-cmake-ros', 'ament-cmake-gmock',
              'ament-cmake-gtest', 'ament-cmake-pytest', 'ament-package', 'python-cmake-module',
              'rosidl-default-generators', 'rosidl-core-generators'),
}
WHEEL_PREFIX = {'kilted': 'ros-', 'jazzy': 'ros-jazzy-'}


def distribution():
    """'kilted' or 'jazzy' for the ROS wheels in this environment, else the sourced ROS_DISTRO."""
    for name, distro in (('ros-jazzy-rclpy', 'jazzy'), ('ros-rclpy', 'kilted')):
        try:
            importlib.metadata.version(name)
            return distro
        except importlib.metadata.PackageNotFoundError:
            pass
    if os.environ.get('ROS_DISTRO'):
        return os.environ['ROS_DISTRO']
    raise SystemExit('build.py: no ROS client library here (pip install -e ".[ros]" or source a ROS install)')


def source_dir(package, distro):
    """The definitions of ``package`` for ``distro``: control_msgs differs between Jazzy and later (the feedback's
    index fields); tf2_msgs is the same in both."""
    if package == 'control_msgs':
        return os.path.join(HERE, package, 'jazzy' if distro in ('humble', 'jazzy') else 'kilted')
    return os.path.join(HERE, package)


def fingerprint(distro):
    """Changes when a definition, a build file or a generator version changes."""
    digest = hashlib.sha256(f'{distro} {sys.version_info[:2]}'.encode())
    for package in PACKAGES:
        for directory in (source_dir(package, distro), os.path.join(HERE, package)):
            for root, _, files in sorted(os.walk(directory)):
                for name in sorted(files):
                    with open(os.path.join(root, name), 'rb') as f:
                        digest.update(name.encode() + f.read())
    for dist in importlib.metadata.distributions():
        name = dist.metadata['Name'] or ''
        if 'rosidl' in name or 'ament-cmake' in name:
            digest.update(f'{name}={dist.version}'.encode())
    return digest.hexdigest()


def prefixes():
    """Where the ROS packages this build uses are installed: the pip environment and any sourced prefixes."""
    paths = [sys.prefix]
    for variable in ('AMENT_PREFIX_PATH', 'CMAKE_PREFIX_PATH'):
        paths += [p for p in os.environ.get(variable, '').split(os.pathsep) if p]
    return list(dict.fromkeys(paths))


def paths(install):
    """The environment variables that put an install prefix on the path."""
    site = os.path.join(install, 'lib', f'python{sys.version_info[0]}.{sys.version_info[1]}', 'site-packages')
    return {'PYTHONPATH': site, 'LD_LIBRARY_PATH': os.path.join(install, 'lib'), 'AMENT_PREFIX_PATH': install}


def build(build_dir, jobs):
    distro = distribution()
    root = os.path.abspath(os.path.join(build_dir, f'{distro}-py{sys.version_info[0]}{sys.version_info[1]}'))
    install = os.path.join(root, 'install')
    stamp = os.path.join(root, 'stamp')
    wanted = fingerprint(distro)
    if os.path.exists(stamp) and open(stamp).read() == wanted:
        return install
    shutil.rmtree(root, ignore_errors=True)
    env = dict(os.environ)
    python_path = [os.path.join(p, 'lib', f'python{sys.version_info[0]}.{sys.version_info[1]}', 'site-packages')
                   for p in prefixes()]
    env['PYTHONPATH'] = os.pathsep.join(python_path + [p for p in env.get('PYTHONPATH', '').split(os.pathsep) if p])
    env['AMENT_PREFIX_PATH'] = os.pathsep.join([install] + prefixes())   # generators are found in the ament index
    for package in PACKAGES:
        work = os.path.join(root, 'src', package)
        # One source folder per package: the shared build files, then the distribution's definitions.
        shutil.copytree(os.path.join(HERE, package), work, ignore=shutil.ignore_patterns('jazzy', 'kilted'))
        if source_dir(package, distro) != os.path.join(HERE, package):
            shutil.copytree(source_dir(package, distro), work, dirs_exist_ok=True)
        binary = os.path.join(root, 'build', package)
        configure = ['cmake', '-S', work, '-B', binary, '-DBUILD_TESTING=OFF', '-DCMAKE_BUILD_TYPE=Release',
                     f'-DCMAKE_INSTALL_PREFIX={install}', f'-DPython3_EXECUTABLE={sys.executable}',
                     '-DCMAKE_PROJECT_INCLUDE=' + os.path.join(HERE, 'wheel_fixes.cmake'),
                     '-DCMAKE_PREFIX_PATH=' + ';'.join([install] + prefixes())]
        for command in (configure, ['cmake', '--build', binary, '-j', str(jobs)], ['cmake', '--install', binary]):
            result = subprocess.run(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            if result.returncode != 0:
                sys.stderr.write(result.stdout[-6000:])
                raise SystemExit(f'build.py: {package}: `{" ".join(command[:2])}` failed (output above)')
    with open(stamp, 'w') as f:
        f.write(wanted)
    return install


def main():
    parser = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    parser.add_argument('--build-dir', default=DEFAULT_BUILD_DIR, help='where the builds go (build/interfaces)')
    parser.add_argument('--jobs', type=int, default=os.cpu_count() or 1)
    parser.add_argument('--requirements', action='store_true',
                        help="print the pip packages the build needs in this environment's distribution, and exit")
    args = parser.parse_args()
    if args.requirements:
        distro = distribution()
        print(' '.join(['catkin-pkg'] + [WHEEL_PREFIX[distro] + name for name in ROS_BUILD_PACKAGES[distro]]))
        return
    install = build(args.build_dir, args.jobs)
    for variable, value in paths(install).items():
        print(f'export {variable}={shlex.quote(value)}${{{variable}:+:${variable}}}')


if __name__ == '__main__':
    main()
