"""Where the package's shared files (urdf/, config/, launch/) are, installed or in a source checkout."""
import os
import sys

PACKAGE = 'robot_dynamics_ros'


def share_directory():
    """The package's share directory: from the ament index when ROS is sourced, else the install prefix,
    else the source checkout."""
    try:
        from ament_index_python.packages import PackageNotFoundError, get_package_share_directory
        try:
            return get_package_share_directory(PACKAGE)
        except (PackageNotFoundError, OSError):  # OSError: AMENT_PREFIX_PATH unset
            pass
    except ImportError:
        pass
    source = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for candidate in (os.path.join(sys.prefix, 'share', PACKAGE), source):
        if os.path.isdir(os.path.join(candidate, 'urdf')):
            return candidate
    raise FileNotFoundError(f"cannot find the {PACKAGE} share directory (urdf/, config/)")


def bundled_urdf(name='arm7.urdf'):
    return os.path.join(share_directory(), 'urdf', name)


def bundled_config(name='arm7.yaml'):
    return os.path.join(share_directory(), 'config', name)


def is_bundled_arm(urdf):
    """True when `urdf` (a path) is the bundled arm7.urdf."""
    try:
        return os.path.samefile(urdf, bundled_urdf())
    except OSError:
        return False


def parameter_files(urdf, config=None):
    """The closed loop's parameter files in loading order, each overriding the one before: closed_loop.yaml
    (nothing per joint: any robot), arm7.yaml when `urdf` is the bundled arm, then the user's `config`."""
    files = [bundled_config('closed_loop.yaml')]
    if is_bundled_arm(urdf):
        files.append(bundled_config())
    if config:
        files.append(os.path.abspath(config))
    return files


def legged_parameter_files(urdf, config=None):
    """The files of a robot on the ground (floating base), in loading order: legged.yaml (any robot),
    quadruped.yaml when `urdf` is the bundled quadruped, then the user's `config`."""
    files = [bundled_config('legged.yaml')]
    try:
        if os.path.samefile(urdf, bundled_urdf('quadruped.urdf')):
            files.append(bundled_config('quadruped.yaml'))
    except OSError:
        pass
    return files + ([os.path.abspath(config)] if config else [])
