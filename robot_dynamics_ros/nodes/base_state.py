"""What a robot with a floating base tells ROS about its base and its feet, from the simulator's state: base
odometry (nav_msgs/Odometry), an IMU on the base (sensor_msgs/Imu) and the ground's force on each contact link
(geometry_msgs/WrenchStamped). Used by the simulator node for models with a floating root.

Conventions (REP 103, REP 145, and what robot_localization expects):
- ``~/odom``: pose of the base link in the world frame (``header.frame_id`` = `world_frame`, ``child_frame_id`` =
  the root link), twist of the base in the base frame: the velocity of its origin and its angular velocity, in
  base coordinates (the model's v[:6], reordered [linear, angular] -> ROS's linear, angular; the same order).
- ``~/imu``: orientation of the base in the world frame, angular velocity and specific force (the acceleration of
  the base origin minus gravity: +9.81 m/s^2 up when at rest, as a real accelerometer) in base coordinates.
  Covariances are zero: the simulator's values are exact.
- ``~/contact/<link>``: the sum of the ground's forces on the contact points of that link over the last step, in
  world coordinates (``header.frame_id`` = `world_frame`); torque zero (the force acts at the contact points, which
  differ from the link origin: use the force).
"""
import time

import numpy as np
from geometry_msgs.msg import WrenchStamped
from nav_msgs.msg import Odometry
from sensor_msgs.msg import Imu

from ..spatial import quaternion_to_matrix

STANDARD_GRAVITY = np.array([0.0, 0.0, -9.81])
READERS_PERIOD = 0.1   # s of wall time between looks at which topics have subscribers


class BaseStatePublisher:
    """Publishes the base odometry, the IMU and the contact forces of ``sim`` (a Simulator whose model has a
    floating root) on ``node``. A topic nobody subscribes to is not written (a robot with meshes has a contact
    topic per link that carries collision geometry, Go1 38: at 1 kHz their messages took half the simulator's
    time); which topics have subscribers is looked at every READERS_PERIOD of wall time (39 looks per state cost
    a tenth of the simulator's time), so a new subscriber receives within that, as any volatile topic's late joiner
    receives from the next message on."""

    def __init__(self, node, sim, gravity, world_frame='world'):
        self.node, self.world_frame = node, world_frame
        self.odom_pub = node.create_publisher(Odometry, '~/odom', 10)
        self.imu_pub = node.create_publisher(Imu, '~/imu', 10)
        self.odom_msg = Odometry()   # filled and published again and again
        self.contact_pubs = {}   # link -> publisher, for every link any model so far has had contact points on
        self.attach(sim, gravity)

    def attach(self, sim, gravity):
        """Publish ``sim``'s state from now on (a new model): a contact topic for each of its contact links."""
        self.sim, self.base = sim, sim.model.root_link
        self.gravity = STANDARD_GRAVITY if gravity is None else np.asarray(gravity, dtype=float)
        links = sim.contact.links if sim.contact is not None else []
        self.link_points = {link: np.array([i for i, name in enumerate(links) if name == link])
                            for link in sorted(set(links))}   # link -> its rows of sim.contact_forces
        for link in self.link_points:
            if link not in self.contact_pubs:
                self.contact_pubs[link] = self.node.create_publisher(WrenchStamped, f'~/contact/{link}', 10)
        self.previous = None   # (sim time, world velocity of the base origin) at the last publish
        self.readers, self.readers_seen = set(), -np.inf   # the publishers with subscribers, and when last looked

    def _read(self, publisher):
        """Whether ``publisher``'s topic had a subscriber at the last look (every READERS_PERIOD)."""
        now = time.monotonic()
        if now - self.readers_seen >= READERS_PERIOD:
            self.readers = {publisher for publisher in (self.odom_pub, self.imu_pub, *self.contact_pubs.values())
                            if publisher.get_subscription_count()}
            self.readers_seen = now
        return publisher in self.readers

    def finite(self):
        return bool(np.isfinite(self.sim.q[:7]).all() and np.isfinite(self.sim.qd[:6]).all()
                    and np.isfinite(self.sim.contact_forces).all())

    def publish(self, stamp):
        """Publish all three at the simulator's current state; the IMU's acceleration is the change of the base
        origin's world velocity since the last publish (zero at the first)."""
        q, v, t = self.sim.q, self.sim.qd, self.sim.t
        R = quaternion_to_matrix(q[3:7])
        velocity_world = R @ v[:3]
        acceleration = np.zeros(3)
        if self.previous is not None and t > self.previous[0]:
            acceleration = (velocity_world - self.previous[1]) / (t - self.previous[0])
        self.previous = (t, velocity_world)

        odom = self.odom_msg
        odom.header.stamp, odom.header.frame_id, odom.child_frame_id = stamp, self.world_frame, self.base
        pose = odom.pose.pose
        pose.position.x, pose.position.y, pose.position.z = map(float, q[:3])
        pose.orientation.x, pose.orientation.y, pose.orientation.z, pose.orientation.w = map(float, q[3:7])
        twist = odom.twist.twist
        twist.linear.x, twist.linear.y, twist.linear.z = map(float, v[:3])
        twist.angular.x, twist.angular.y, twist.angular.z = map(float, v[3:6])
        if self._read(self.odom_pub):
            self.odom_pub.publish(odom)

        if self._read(self.imu_pub):
            imu = Imu()
            imu.header.stamp, imu.header.frame_id = stamp, self.base
            imu.orientation = pose.orientation
            imu.angular_velocity = twist.angular
            specific_force = R.T @ (acceleration - self.gravity)
            imu.linear_acceleration.x, imu.linear_acceleration.y, imu.linear_acceleration.z = map(float,
                                                                                                 specific_force)
            self.imu_pub.publish(imu)

        forces = self.sim.contact_forces
        for link, points in self.link_points.items():
            publisher = self.contact_pubs[link]
            if not self._read(publisher):
                continue
            msg = WrenchStamped()
            msg.header.stamp, msg.header.frame_id = stamp, self.world_frame
            msg.wrench.force.x, msg.wrench.force.y, msg.wrench.force.z = map(float, forces[points].sum(axis=0))
            publisher.publish(msg)
