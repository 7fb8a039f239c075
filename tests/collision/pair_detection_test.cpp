// Contacts between two dynamic bodies (CollisionWorld::detect_pairs): the face contact of two
// boxes (aligned, turned, offset), round pairs, filters and exclusions, and the output order.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "collision_test_util.h"
#include "mabd/error.h"

namespace mabd::test {
namespace {

constexpr double kPi = 3.14159265358979323846;

/// Two dynamic bodies: `a` below at the origin, `b` on top at `at`, turned by `turn`.
std::vector<ContactPoint> pair(const ShapeDef& a, const ShapeDef& b, const Vec3& at,
                               const Quat& turn = Quat::Identity(), double margin = 1e-3) {
  CollisionWorld w;
  w.add_body(0, geometry(BodyKind::Dynamic, a));
  w.add_body(1, geometry(BodyKind::Dynamic, b));
  const std::vector<Pose> poses = {pose_at(Vec3::Zero()), pose_at(at, turn)};
  std::vector<ContactPoint> out;
  w.detect_pairs(poses, margin, out);
  for (const ContactPoint& c : out) {
    EXPECT_EQ(c.body, 0u);
    EXPECT_EQ(c.collider, 1u);
    expect_consistent(c, poses);
  }
  return out;
}

// Two equal boxes stacked exactly, face on face (a case where GJK/EPA alone returns a
// diagonal): four points at the corners, normal straight down (from b towards a).
TEST(PairDetection, EqualBoxesStackedFaceOnFace) {
  for (double depth : {0.0, 1e-7, 1e-5, 1e-3}) {
    const auto out = pair(box_shape(Vec3::Constant(0.2)), box_shape(Vec3::Constant(0.2)),
                          Vec3(0, 0, 0.2 - depth));
    ASSERT_EQ(out.size(), 4u) << "depth " << depth;
    for (const ContactPoint& c : out) {
      expect_vec_near(c.normal, -Vec3::UnitZ(), 1e-12);
      EXPECT_NEAR(c.gap, -depth, 1e-12);
      EXPECT_NEAR(std::abs(c.p_body.x()), 0.1, 1e-12);
      EXPECT_NEAR(std::abs(c.p_body.y()), 0.1, 1e-12);
    }
  }
}

// The top box turned by 45 degrees about z: the contacts lie in the overlap of the two faces
// (an octagon), not at corners outside the other face.
TEST(PairDetection, TurnedBoxTouchesWithinTheOverlap) {
  const auto out = pair(box_shape(Vec3::Constant(0.2)), box_shape(Vec3::Constant(0.2)),
                        Vec3(0, 0, 0.2 - 1e-4), axis_angle(kPi / 4, Vec3::UnitZ()));
  ASSERT_EQ(out.size(), 4u);
  for (const ContactPoint& c : out) {
    EXPECT_NEAR(c.gap, -1e-4, 1e-12);
    const Vec3 x = c.p_body;  // a at the origin: its user frame is the world
    EXPECT_LE(std::abs(x.x()), 0.1 + 1e-12);
    EXPECT_LE(std::abs(x.y()), 0.1 + 1e-12);
    EXPECT_LE(std::abs(x.x()) + std::abs(x.y()), 0.1 * std::sqrt(2.0) + 1e-12);
  }
}

// A small box on a large one, offset: its own four corners.
TEST(PairDetection, SmallBoxOnLargeBox) {
  const auto out = pair(box_shape(Vec3(1, 1, 0.2)), box_shape(Vec3::Constant(0.1)),
                        Vec3(0.3, -0.2, 0.15 - 2e-5));
  ASSERT_EQ(out.size(), 4u);
  for (const ContactPoint& c : out) {
    EXPECT_NEAR(c.gap, -2e-5, 1e-12);
    EXPECT_NEAR(std::abs(c.p_body.x() - 0.3), 0.05, 1e-12);
    EXPECT_NEAR(std::abs(c.p_body.y() + 0.2), 0.05, 1e-12);
  }
}

// Two boxes whose edges touch (a's top-right edge and b's left edge, 45 degrees apart): the
// manifold's one normal is diagonal, and b's bottom edge lies beside a's right face, 7.4 cm
// from it, where the diagonal rows alone would let it come in (b moving left by its own
// size closes them by 5 cm only). Within a margin that reaches it, that edge's two corners
// are guarded against a's right face; a margin short of it adds nothing.
TEST(PairDetection, CornersBesideAnotherFaceAreGuarded) {
  const double d = 0.05 * std::sqrt(2.0);  // b's half diagonal (a 0.1 cube turned 45 degrees)
  const Vec3 at(0.103 + d, 0, 0.103);      // b's left edge 3 mm off a's edge along each axis
  const Quat turn = axis_angle(kPi / 4, Vec3::UnitY());
  const Vec3 diagonal = Vec3(-1, 0, -1).normalized();  // from b towards a
  for (double margin : {0.1, 0.05}) {
    const auto out =
        pair(box_shape(Vec3::Constant(0.2)), box_shape(Vec3::Constant(0.1)), at, turn, margin);
    int manifold = 0, guards = 0;
    for (const ContactPoint& c : out) {
      if ((c.normal - diagonal).norm() < 1e-9) {
        ++manifold;
        continue;
      }
      ++guards;
      expect_vec_near(c.normal, -Vec3::UnitX(), 1e-12);  // a's right face, towards a
      EXPECT_NEAR(c.p_body.x(), 0.1, 1e-12);             // on that face (a's frame: world)
      EXPECT_NEAR(c.p_body.z(), at.z() - d, 1e-12);      // level with b's bottom edge
      EXPECT_NEAR(c.gap, at.x() - 0.1, 1e-12);
    }
    EXPECT_GE(manifold, 1) << "margin " << margin;
    EXPECT_EQ(guards, margin > 0.08 ? 2 : 0) << "margin " << margin;
  }
}

// A box lying on another and overhanging its edge: its corners past the edge are not
// guarded (their closest point is the edge, whose normal turns with them): a guard there
// would stop the box sliding back over the face. Four points, all on the face's normal.
TEST(PairDetection, OverhangingCornersAreNotGuarded) {
  const auto out = pair(box_shape(Vec3::Constant(0.2)), box_shape(Vec3(0.2, 0.1, 0.1)),
                        Vec3(0.05, 0, 0.15 + 1e-4), Quat::Identity(), 0.1);
  ASSERT_EQ(out.size(), 4u);
  for (const ContactPoint& c : out) {
    expect_vec_near(c.normal, -Vec3::UnitZ(), 1e-12);
    EXPECT_LE(c.p_body.x(), 0.1 + 1e-12);
  }
}

// Two 16 x 6 x 6 cm boxes barely touching, as two boxes of falling_joints met (poses of
// its step 193 at h = 5 ms): GJK's closest points found them 3e-10 m apart along a
// direction in which they overlap by 23 cm, and the manifold on it reported a 21 cm
// penetration, which the exact model's recovery bound then let stand. No point is deeper
// than a millimetre, and the manifold's normal separates the boxes (their supports along it
// overlap by under a millimetre; a corner guard's face normal need not).
TEST(PairDetection, BarelyTouchingBoxesGetASeparatingNormal) {
  const ShapeDef box = box_shape(Vec3(0.16, 0.06, 0.06));
  CollisionWorld w;
  w.add_body(0, geometry(BodyKind::Dynamic, box));
  w.add_body(1, geometry(BodyKind::Dynamic, box));
  const std::vector<Pose> poses = {
      pose_at(Vec3(-0.81184351042692804, 0.46289250803210619, 0.24720820114465325),
              Quat(0.55363107945681733, 0.72871724056078746, 0.34935417794652041,
                   0.20103599060929758)),
      pose_at(Vec3(-0.72374287276792737, 0.42218048085075643, 0.15365086690838145),
              Quat(-0.21281308495880638, 0.019828658301493895, 0.73164354668578968,
                   -0.64731378463100653))};
  std::vector<ContactPoint> out;
  w.detect_pairs(poses, 0.05, out);
  ASSERT_FALSE(out.empty());
  // Support of a 16 x 6 x 6 cm box at `pose` along d (world): its farthest corner.
  auto support = [](const Pose& pose, const Vec3& d) {
    const Vec3 local = pose.orientation.conjugate() * d;
    return d.dot(pose.position) + 0.08 * std::abs(local.x()) + 0.03 * std::abs(local.y()) +
           0.03 * std::abs(local.z());
  };
  int separating = 0;
  for (const ContactPoint& c : out) {
    expect_consistent(c, poses);
    EXPECT_GT(c.gap, -1e-3) << "feature " << c.feature;
    // From body 1 towards body 0: body 0's lowest point along n above body 1's highest.
    separating += -support(poses[0], -c.normal) - support(poses[1], c.normal) > -1e-3;
  }
  EXPECT_GE(separating, 1);
}

/// Contacts of two 16 x 6 x 6 cm boxes at `a` and `b`, margin 0.2 m.
std::vector<ContactPoint> box_pair(const Pose& a, const Pose& b) {
  const ShapeDef box = box_shape(Vec3(0.16, 0.06, 0.06));
  CollisionWorld w;
  w.add_body(0, geometry(BodyKind::Dynamic, box));
  w.add_body(1, geometry(BodyKind::Dynamic, box));
  std::vector<ContactPoint> out;
  w.detect_pairs({a, b}, 0.2, out);
  for (const ContactPoint& c : out) expect_consistent(c, {a, b});
  return out;
}

/// The distance (m) of two boxes of half extents `h` at poses a and b, by alternating
/// projections of a point onto each box (they converge to a closest pair of convex sets).
double box_distance(const Vec3& h, const Pose& a, const Pose& b) {
  auto project = [&](const Pose& p, const Vec3& x) {
    const Mat3 R = p.orientation.toRotationMatrix();
    const Vec3 local = (R.transpose() * (x - p.position)).cwiseMax(-h).cwiseMin(h);
    return Vec3(R * local + p.position);
  };
  Vec3 x = a.position, y = b.position;
  for (int k = 0; k < 20000; ++k) {
    x = project(a, y);
    y = project(b, x);
  }
  return (x - y).norm();
}

// Random pairs of boxes up to 30 cm apart, in any orientation: those nearer than the margin
// (against an independent distance) give contact points, those beyond it none, whether the
// separating-axis test or GJK decides it.
TEST(PairDetection, BoxesWithinTheMarginAndBeyondIt) {
  const Vec3 h(0.08, 0.03, 0.03);
  const double margin = 0.2;
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> u(-1, 1);
  int within = 0, beyond = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const Quat qa = Quat(u(rng), u(rng), u(rng), u(rng)).normalized();
    const Quat qb = Quat(u(rng), u(rng), u(rng), u(rng)).normalized();
    const Vec3 dir = Vec3(u(rng), u(rng), u(rng)).normalized();
    const Pose a = pose_at(Vec3::Zero(), qa), b = pose_at((0.1 + 0.4 * (u(rng) + 1)) * dir, qb);
    const double d = box_distance(h, a, b);
    if (std::abs(d - margin) < 1e-4) continue;  // at the margin: either answer
    const bool touching = !box_pair(a, b).empty();
    EXPECT_EQ(touching, d < margin) << "trial " << trial << ", distance " << d;
    (d < margin ? within : beyond) += 1;
  }
  EXPECT_GT(within, 50);
  EXPECT_GT(beyond, 50);
}

// A box falling flat onto a box tilted by about 15 degrees, 4.9 cm apart (falling_joints,
// step 84): the closest points' direction is 8 degrees off either box's face, and the
// manifold used to be the one nearest corner. The lower box's top face separates them
// nearly as well (4.85 cm): the manifold is that face's, its corners clipped to the overlap,
// with the face's normal.
TEST(PairDetection, BoxesApartTakeTheFaceThatSeparatesThem) {
  const Pose lower = pose_at(Vec3(-0.428438668603299, 0.59850807109412807, 0.36855960829981399),
                             Quat(0.54953783720165883, -0.11259291772319836,
                                  0.079286781390605771, 0.82404162920268698));
  const Pose upper = pose_at(Vec3(-0.437516, 0.616273, 0.49783000000000716),
                             Quat(0.52850472127052339, 0, 0, 0.84893036204082506));
  const Vec3 top = lower.orientation * Vec3::UnitZ();  // the lower box's top face normal
  int face = 0;
  for (const ContactPoint& c : box_pair(lower, upper)) {
    EXPECT_GT(c.gap, 0.048);
    if ((c.normal + top).norm() < 1e-12) ++face;  // from the upper box towards the lower
  }
  EXPECT_EQ(face, 4);
}

// Two boxes 1 mm apart whose nearest features are two edges (a pair of falling_joints):
// no face separates them, and the faces most aligned with the edges' direction n are
// projected onto each other along n: several points with n as their normal, the nearest
// at the boxes' distance.
TEST(PairDetection, EdgesApartProjectTheFacesAlongTheirDirection) {
  const Pose a = pose_at(Vec3(0.04790298139161675, 1.2764217148175734, 0.37326867942918851),
                         Quat(0.87087078219506786, 0.16061704595715884, 0.20891741358002885,
                              0.41489728797616615));
  const Pose b = pose_at(Vec3(0.084649293299679962, 1.2522573000681929, 0.45946398172363634),
                         Quat(0.045096372750620936, 0.00212091996607436, 0.010521064968612676,
                              0.99892498519916939));
  const auto out = box_pair(a, b);
  ASSERT_FALSE(out.empty());
  const Vec3 n = out.front().normal;
  int along = 0;
  double nearest = INFINITY;
  for (const ContactPoint& c : out) {
    if ((c.normal - n).norm() > 1e-12) continue;  // a corner guard
    ++along;
    nearest = std::min(nearest, c.gap);
  }
  EXPECT_GE(along, 3);
  EXPECT_NEAR(nearest, 1.03e-3, 1e-5);
  // n separates the boxes by that distance: a's lowest point along it above b's highest.
  auto support = [](const Pose& pose, const Vec3& d) {
    const Vec3 local = pose.orientation.conjugate() * d;
    return d.dot(pose.position) + Vec3(0.08, 0.03, 0.03).dot(local.cwiseAbs());
  };
  EXPECT_NEAR(-support(a, -n) - support(b, n), nearest, 1e-9);
}

// Two boxes 2 mm into each other, the axis of least overlap half a degree off the lower
// box's top face (a pair of falling_joints): that face holds the manifold, four points
// with its normal, where the axis's support points were one corner (the upper box, turning
// about it at 33 rad/s, came 6 cm in within the step).
TEST(PairDetection, OverlappingBoxesTakeTheFaceNearlyAsShallow) {
  const Pose a = pose_at(Vec3(0.043069104390656095, -0.85356118763705446, 0.31927056070691207),
                         Quat(0.78437750036612719, -0.15626256503267894, 0.058424246518347454,
                              0.5974282844890737));
  const Pose b = pose_at(Vec3(0.0584138178833487, -0.84316008038552315, 0.38203715516914588),
                         Quat(0.916064072696817, -0.12393848544098966, 0.031378091514843123,
                              0.38010693484018476));
  const Vec3 top = a.orientation * Vec3::UnitZ();  // a's top face normal
  int face = 0;
  double deepest = INFINITY;
  for (const ContactPoint& c : box_pair(a, b)) {
    if ((c.normal + top).norm() > 1e-12) continue;  // a corner guard
    ++face;
    deepest = std::min(deepest, c.gap);
  }
  EXPECT_EQ(face, 4);
  EXPECT_NEAR(deepest, -2.0e-3, 1e-4);
}

TEST(PairDetection, RoundPairsAndSeparation) {
  // A sphere resting on a box: one point below its centre.
  auto out = pair(box_shape(Vec3::Constant(0.2)), sphere_shape(0.05), Vec3(0.02, 0, 0.15 - 1e-4));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_NEAR(out[0].gap, -1e-4, 1e-12);
  expect_vec_near(out[0].normal, -Vec3::UnitZ());
  // Apart by more than the margin: nothing; within it: speculative points (gap > 0).
  EXPECT_TRUE(pair(box_shape(Vec3::Constant(0.2)), box_shape(Vec3::Constant(0.2)),
                   Vec3(0, 0, 0.21), Quat::Identity(), 1e-3)
                  .empty());
  out = pair(box_shape(Vec3::Constant(0.2)), box_shape(Vec3::Constant(0.2)), Vec3(0, 0, 0.2005),
             Quat::Identity(), 1e-3);
  ASSERT_EQ(out.size(), 4u);
  for (const ContactPoint& c : out) EXPECT_NEAR(c.gap, 5e-4, 1e-12);
}

// Round against round (a thin capsule across a thick one, a sphere against a capsule): both
// sides report their radius, so each point less its side's radius along the normal is that
// side's core point (on the capsule's axis, at the sphere's centre), and the gap is the
// distance between the cores less the two radii.
TEST(PairDetection, RoundPairsReportBothCores) {
  const double R = 0.3, half = 0.05, r = 0.005, depth = 2e-4;
  // b: a capsule along y (turned about x), off a's side along x and up its axis by 0.02.
  const Vec3 at(R + r - depth, 0.001, 0.02);
  const Quat turn = axis_angle(kPi / 2, Vec3::UnitX());
  const std::vector<Pose> poses = {pose_at(Vec3::Zero()), pose_at(at, turn)};
  auto on_axis = [](const Vec3& x, double half_length) {  // in the capsule's own frame
    return std::hypot(x.x(), x.y()) < 1e-12 && std::abs(x.z()) <= half_length + 1e-12;
  };
  const auto caps = pair(capsule_shape(R, 2 * half), capsule_shape(r, 0.01), at, turn);
  ASSERT_FALSE(caps.empty());
  for (const ContactPoint& c : caps) {
    EXPECT_DOUBLE_EQ(c.body_radius, R);
    EXPECT_DOUBLE_EQ(c.collider_radius, r);
    const Vec3 core_a = c.p_body + c.body_radius * c.normal;  // a's frame is the world's
    const Vec3 core_b = c.p_collider - c.collider_radius * (turn.inverse() * c.normal);
    EXPECT_TRUE(on_axis(core_a, half)) << core_a.transpose();
    EXPECT_TRUE(on_axis(core_b, 0.005)) << core_b.transpose();
    EXPECT_NEAR(c.gap, (core_a - (turn * core_b + at)).norm() - R - r, 1e-12);
  }
  // The least-distance point: the axes are skew, a's axis along z at the origin and b's along
  // z = 0.02 through x = at.x(): the cores are at.x() apart.
  EXPECT_NEAR(std::min_element(caps.begin(), caps.end(),
                               [](const ContactPoint& x, const ContactPoint& y) {
                                 return x.gap < y.gap;
                               })->gap,
              -depth, 1e-12);
  // A sphere against the capsule's side: the sphere's centre and the capsule's axis.
  const auto ball = pair(capsule_shape(R, 2 * half), sphere_shape(r), Vec3(R + r - depth, 0, 0.01));
  ASSERT_EQ(ball.size(), 1u);
  EXPECT_DOUBLE_EQ(ball[0].collider_radius, r);
  EXPECT_TRUE(on_axis(ball[0].p_body + ball[0].body_radius * ball[0].normal, half));
  expect_vec_near(ball[0].p_collider - ball[0].collider_radius * ball[0].normal, Vec3::Zero(),
                  1e-12);
  EXPECT_NEAR(ball[0].gap, -depth, 1e-12);
}

TEST(PairDetection, FiltersExclusionsAndOrder) {
  CollisionWorld w;
  CollisionGeometry g = geometry(BodyKind::Dynamic, box_shape(Vec3::Constant(0.2)));
  for (std::uint32_t i = 0; i < 4; ++i) {
    CollisionGeometry gi = g;
    if (i == 3) {
      gi.group = 2;
      gi.mask = 2;  // collides with group 2 only
    }
    w.add_body(i, gi);
  }
  w.add_body(4, geometry(BodyKind::Static, box_shape(Vec3::Constant(0.2))));
  w.exclude_pair(1, 0);
  // Bodies 0-3 and the static body 4 all overlap at the origin, a little apart.
  std::vector<Pose> poses;
  for (int i = 0; i < 5; ++i) poses.push_back(pose_at(Vec3(0, 0, 0.19 * i)));
  std::vector<ContactPoint> out;
  w.detect_pairs(poses, 1e-3, out);
  // 1-2 only: 0-1 excluded, 2-3 filtered, the static body is a collider (detect's business).
  ASSERT_FALSE(out.empty());
  for (const ContactPoint& c : out) {
    EXPECT_EQ(c.body, 1u);
    EXPECT_EQ(c.collider, 2u);
  }
  for (std::size_t k = 1; k < out.size(); ++k) EXPECT_LT(out[k - 1].feature, out[k].feature);
  EXPECT_THROW(w.detect_pairs({Pose()}, 1e-3, out), InvalidArgument);
  EXPECT_THROW(w.detect_pairs(poses, -1, out), InvalidArgument);
}

}  // namespace
}  // namespace mabd::test
