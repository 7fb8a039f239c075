// Small dense math types used across the public API (Eigen, double precision).
#pragma once

#include <Eigen/Core>
#include <Eigen/Geometry>

namespace mabd {

using Vec3 = Eigen::Vector3d;    ///< 3-vector (m, m/s, N, ... as documented at each use)
using Mat3 = Eigen::Matrix3d;    ///< 3x3 matrix
using Quat = Eigen::Quaterniond; ///< unit quaternion; construct as Quat(w, x, y, z)
using Vec12 = Eigen::Matrix<double, 12, 1>; ///< affine coordinate q = [a1; a2; a3; t]

/// Rigid pose of a frame in world coordinates.
struct Pose {
  Vec3 position = Vec3::Zero();          ///< origin of the frame in world (m)
  Quat orientation = Quat::Identity();   ///< rotation frame -> world (unit quaternion)
};

/// Spatial velocity of a body.
struct Twist {
  Vec3 angular = Vec3::Zero();  ///< angular velocity in world axes (rad/s)
  Vec3 linear = Vec3::Zero();   ///< velocity of the centre of mass in world axes (m/s)
};

}  // namespace mabd
