// Segment-triangle closest points against dense sampling, and round primitives against a
// soft surface triangle: the face point, its weights, the normal and the gap by hand.
#include <gtest/gtest.h>

#include <random>

#include "collision/closest_point.h"
#include "collision/triangle_contacts.h"

namespace mabd::detail {
namespace {

/// A sphere or capsule primitive (m) with its bounding radius.
Primitive round_primitive(ShapeType type, double radius, double half_length = 0) {
  Primitive p;
  p.type = type;
  p.radius = radius;
  p.half_length = half_length;
  p.bound_radius = radius + half_length;
  return p;
}

/// The face of both primitive tests: in the plane z = 0.1, its solid above (outward -z).
const Vec3 kA(0, 0, 0.1), kB(1, 0, 0.1), kC(0, 1, 0.1), kOutward(0, 0, -1);

TEST(ClosestSegmentTriangle, MatchesDenseSampling) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  auto rnd = [&] { return Vec3(u(rng), u(rng), u(rng)); };
  for (int trial = 0; trial < 200; ++trial) {
    const Vec3 a = rnd(), b = rnd(), c = rnd(), p = rnd(), q = rnd();
    double s = -1;
    Vec3 x;
    closest_segment_triangle(p, q, a, b, c, s, x);
    ASSERT_GE(s, 0);
    ASSERT_LE(s, 1);
    const double found = (p + s * (q - p) - x).norm();
    // The triangle point lies on the triangle.
    const Vec3 w = barycentric(x, a, b, c);
    EXPECT_GT(w.minCoeff(), -1e-9);
    EXPECT_NEAR(w.sum(), 1, 1e-12);
    // No sampled pair is nearer: segment points against their own closest triangle points.
    double best = INFINITY;
    for (int k = 0; k <= 400; ++k) {
      const Vec3 y = p + (k / 400.0) * (q - p);
      best = std::min(best, (closest_on_triangle(y, a, b, c).point - y).norm());
    }
    EXPECT_LE(found, best + 1e-12);
    EXPECT_GE(found, best - 2e-2 * (q - p).norm());  // the sampling's resolution
  }
}

TEST(PrimitiveTriangle, SphereUnderAFaceBetweenItsCorners) {
  // Triangle in the plane z = 0.1, its solid above (outward -z), a sphere of radius 0.05 at
  // (0.2, 0.1, 0.04): its nearest face point is (0.2, 0.1, 0.1), gap 0.06 - 0.05.
  const Primitive sphere = round_primitive(ShapeType::Sphere, 0.05);
  Placed placed;
  placed.prim = &sphere;
  placed.translation = Vec3(0.2, 0.1, 0.04);
  TriangleContact out;
  Vec3 p_world;
  ASSERT_TRUE(primitive_triangle(placed, kA, kB, kC, kOutward, 0.02, out, p_world));
  EXPECT_NEAR(out.gap, 0.01, 1e-14);
  EXPECT_NEAR((out.normal - Vec3(0, 0, 1)).norm(), 0, 1e-14);
  EXPECT_NEAR((out.weights - Vec3(0.7, 0.2, 0.1)).norm(), 0, 1e-14);
  EXPECT_NEAR((p_world - Vec3(0.2, 0.1, 0.09)).norm(), 0, 1e-14);
  EXPECT_DOUBLE_EQ(out.radius, 0.05);
  // Beyond the margin, under a corner (a node's contact), or with the centre above the face
  // (through the surface): none.
  EXPECT_FALSE(primitive_triangle(placed, kA, kB, kC, kOutward, 0.005, out, p_world));
  placed.translation = Vec3(-0.05, -0.05, 0.04);
  EXPECT_FALSE(primitive_triangle(placed, kA, kB, kC, kOutward, 0.2, out, p_world));
  placed.translation = Vec3(0.2, 0.1, 0.12);
  EXPECT_FALSE(primitive_triangle(placed, kA, kB, kC, kOutward, 0.2, out, p_world));
}

TEST(PrimitiveTriangle, CapsuleAcrossAFaceTouchesItOnItsAxis) {
  // A capsule along x under the same face: the axis point nearest the face is on the face's
  // side of the axis, the weights those of the face point straight above it.
  const Primitive capsule = round_primitive(ShapeType::Capsule, 0.02, 2.0);
  Placed placed;
  placed.prim = &capsule;
  placed.rotation = Eigen::AngleAxisd(EIGEN_PI / 2, Vec3::UnitY()).toRotationMatrix();  // z -> x
  placed.translation = Vec3(0.3, 0.25, 0.07);
  TriangleContact out;
  Vec3 p_world;
  ASSERT_TRUE(primitive_triangle(placed, kA, kB, kC, kOutward, 0.05, out, p_world));
  EXPECT_NEAR(out.gap, 0.01, 1e-12);
  EXPECT_NEAR((out.normal - Vec3(0, 0, 1)).norm(), 0, 1e-12);
  EXPECT_NEAR(p_world.z(), 0.09, 1e-12);
  EXPECT_NEAR(p_world.y(), 0.25, 1e-12);
  // The face point above it: weights (1 - x - y, x, y) with y = 0.25 and x anywhere on the
  // part of the axis under the face.
  EXPECT_NEAR(out.weights[2], 0.25, 1e-12);
  EXPECT_NEAR(out.weights.sum(), 1, 1e-12);
}

}  // namespace
}  // namespace mabd::detail
