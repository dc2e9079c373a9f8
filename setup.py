from glob import glob

from setuptools import find_packages, setup

package_name = 'robot_dynamics_ros'

# ROS client library and messages as pip wheels, for machines without a ROS install: 'ros-<name>' is Kilted,
# 'ros-jazzy-<name>' is Jazzy (the LTS). Where ROS is sourced, colcon builds the package and these come from
# the ROS distribution instead (package.xml).
ros_packages = ['rclpy', 'rmw-fastrtps-cpp', 'rcl-interfaces', 'builtin-interfaces', 'sensor-msgs', 'std-msgs',
                'std-srvs', 'trajectory-msgs', 'rosgraph-msgs', 'ament-index-python', 'geometry-msgs', 'nav-msgs',
                'diagnostic-msgs', 'lifecycle-msgs']

setup(
    name=package_name,
    version='0.1.0',
    packages=find_packages(exclude=['test', 'test.*', 'benchmarks']),
    package_data={'robot_dynamics_ros.nodes': ['parameters/*.yaml']},   # the nodes' parameter schemas, read at run time
    data_files=[
        ('share/ament_index/resource_index/packages', ['resource/' + package_name]),
        ('share/' + package_name, ['package.xml']),
        ('share/' + package_name + '/launch', glob('launch/*.launch.py')),
        ('share/' + package_name + '/config', glob('config/*.yaml')),
        ('share/' + package_name + '/config/ros2_control', glob('config/ros2_control/*')),
        ('share/' + package_name + '/urdf', glob('urdf/*.urdf')),
    ],
    python_requires='>=3.10',
    install_requires=['numpy', 'scipy', 'pyyaml', 'setuptools'],
    extras_require={
        'ros': ['ros-' + name for name in ros_packages],
        'ros-jazzy': ['ros-jazzy-' + name for name in ros_packages],
        'xacro': ['xacro'],
        'plot': ['matplotlib'],
        'fast': ['numba'],
        'bag': ['rosbags'],  # rosbag2 (MCAP, sqlite3) recordings for identification
        'ident': ['cvxpy', 'clarabel', 'rosbags'],  # physically consistent identified URDF; recordings
        'legged': ['clarabel', 'trimesh'],  # ground contact, contact-consistent inverse dynamics; collision meshes
        'view': ['viser', 'trimesh', 'pycollada'],  # the robot in the browser; meshes (pycollada: .dae)
        'test': ['pytest<9', 'hypothesis', 'pin', 'xacro', 'matplotlib', 'numba', 'rosbags', 'cvxpy', 'clarabel',
                 'mujoco', 'viser', 'trimesh', 'pycollada', 'playwright',   # playwright drives Debian's chromium
                 'example-robot-data'],   # example-robot-data: public robots' URDFs, SRDFs, meshes
    },
    zip_safe=False,  # numba caches compiled kernels beside their source files
    maintainer='robot_dynamics_ros maintainers',
    maintainer_email='maintainers@robot-dynamics-ros.dev',
    description='Rigid-body dynamics from URDF, a computed-torque controller node and a simulator node.',
    license='Apache-2.0',
    entry_points={
        'console_scripts': [
            'simulator = robot_dynamics_ros.nodes.start:simulator',
            'computed_torque_controller = robot_dynamics_ros.nodes.start:computed_torque_controller',
            'trajectory_publisher = robot_dynamics_ros.nodes.start:trajectory_publisher',
            'legged_controller = robot_dynamics_ros.nodes.start:legged_controller',
            'viewer = robot_dynamics_ros.nodes.start:viewer',
            'cartesian_controller = robot_dynamics_ros.nodes.start:cartesian_controller',
            'cartesian_target_publisher = robot_dynamics_ros.nodes.start:cartesian_target_publisher',
            'robot-dynamics = robot_dynamics_ros.cli:main',
        ],
    },
)
