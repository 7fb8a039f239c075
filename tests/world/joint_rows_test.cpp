// The joints as a row source: one item per joint with its type rows (compliance added) and
// extra rows, and point links only for plain ball joints.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "body/affine.h"
#include "world/joint_rows.h"

namespace mabd::detail {
namespace {

/// Every body dynamic, H^{-1} = I (the row set needs only the flags and y here).
class IdentityBodies : public BodyOperators {
 public:
  explicit IdentityBodies(int n) : flags_(n, 1) { set_dynamic_flags(flags_); }
  Vec12 solve_body(std::size_t, const Vec12& v) const override { return v; }
  bool body_frame() const override { return false; }
  const Mat3& rotation(std::size_t) const override { return identity_; }
  const BodyHessian& factor(std::size_t) const override { return factor_; }
  bool corrected(std::size_t) const override { return false; }
  Mat3 correction_body_block(std::size_t, const Vec3&, const Vec3&) const override {
    return Mat3::Zero();
  }
  void subtract_clique_correction(std::size_t, int, const Vec12*, const Vec12* const*,
                                  double*) const override {}

 private:
  std::vector<char> flags_;
  Mat3 identity_ = Mat3::Identity();
  BodyHessian factor_;
};

JointModel ball(int a, int b, const Vec3& pa, const Vec3& pb, double compliance) {
  JointModel j;
  j.type = JointType::Ball;
  j.a = a;
  j.b = b;
  j.pa = pa;
  j.pb = pb;
  j.compliance = compliance;
  j.base_rows = 3;
  return j;
}

/// The row set of `source` at q, with right-hand sides for the increments y.
RowSet row_set_of(const JointRows& source, const BodyOperators& ops, const std::vector<Vec12>& q,
                  const std::vector<Vec12>& y) {
  RowSet set;
  set.begin(ops, y);
  source.append_rows(q, set);
  set.finish();
  return set;
}

TEST(JointRows, OneItemPerJointWithItsRowsAndRightHandSides) {
  // World - body 0 - body 1, the bodies displaced so that the joints are violated.
  std::vector<JointModel> joints{ball(-1, 0, Vec3(0, 0, 1), Vec3(0, 0, 0.5), 1e-6),
                                 ball(0, 1, Vec3(0, 0, -0.5), Vec3(0, 0, 0.5), 0)};
  const std::vector<Vec12> q{make_q(Mat3::Identity(), Vec3(0.1, 0, 0.5)),
                             make_q(Mat3::Identity(), Vec3(0, 0.2, -0.5))};
  const std::vector<Vec12> y{Vec12::Constant(1e-3), Vec12::Constant(-2e-3)};
  const JointRows source(joints, 0.01);
  ASSERT_EQ(source.items(), 2u);
  EXPECT_EQ(source.item_bodies(0).a, -1);
  EXPECT_EQ(source.item_bodies(1).b, 1);
  const IdentityBodies ops(2);
  const RowSet set = row_set_of(source, ops, q, y);
  ASSERT_EQ(set.items(), 2u);
  ASSERT_EQ(set.size(), 6);
  // C = x_a(pa) - x_b(pb): joint 0: (0,0,1) - (0.1,0,1); joint 1: (0.1,0,0) - (0,0.2,0).
  const double c[6] = {-0.1, 0, 0, 0.1, -0.2, 0};
  for (int r = 0; r < 6; ++r) {
    const int k = r / 3;
    EXPECT_EQ(set.row_item[r], static_cast<std::uint32_t>(k));
    EXPECT_EQ(set.row_a[r], joints[k].a);
    EXPECT_EQ(set.row_b[r], joints[k].b);
    EXPECT_NEAR(set.rows[r].c, c[r], 1e-15);
    EXPECT_EQ(set.rows[r].compliance, joints[k].compliance);
    double expect = set.rows[r].c + set.rows[r].gb.dot(y[joints[k].b]);
    if (joints[k].a >= 0) expect += set.rows[r].ga.dot(y[joints[k].a]);
    EXPECT_NEAR(set.rhs[r], expect, 1e-15);
  }
  EXPECT_EQ(set.rows_of[0].size(), 6u);
  EXPECT_EQ(set.rows_of[1].size(), 3u);
}

TEST(JointRows, ChainItemsForJointsWithoutExtras) {
  std::vector<JointModel> joints{ball(-1, 0, Vec3(0, 0, 1), Vec3(0, 0, 0.5), 2e-7)};
  std::vector<PointLink> links;
  ASSERT_TRUE(JointRows(joints, 0.01).chain_items(links));
  ASSERT_EQ(links.size(), 1u);
  EXPECT_EQ(links[0].pb, Vec3(0, 0, 0.5));
  EXPECT_EQ(links[0].compliance, 2e-7);
  // A spring makes its rows more than a point coincidence.
  auto extras = std::make_shared<JointExtras>();
  extras->spring = JointSpring{};
  joints[0].ex = extras;
  EXPECT_FALSE(JointRows(joints, 0.01).chain_items(links));
  // Fixed, hinge and universal joints are point links with the dot rows of their type: the
  // rotation-lock pairs of a fixed joint.
  joints[0].ex.reset();
  joints[0].type = JointType::Fixed;
  joints[0].base_rows = 6;
  joints[0].L = 0.3;
  auto axes = std::make_shared<JointAxes>();
  for (int k = 0; k < 3; ++k) axes->ea[k] = axes->eb[k] = Vec3::Unit(k);
  axes->wa1 = Vec3::UnitX();
  axes->wa2 = Vec3::UnitY();
  joints[0].ax = axes;
  ASSERT_TRUE(JointRows(joints, 0.01).chain_items(links));
  EXPECT_EQ(links[0].rows, 0);
  ASSERT_EQ(links[0].dots, 3);
  EXPECT_EQ(links[0].L, 0.3);
  EXPECT_EQ(links[0].compliance, 2e-7);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(links[0].u[i], &axes->ea[kLockPairs[i][0]]);
    EXPECT_EQ(links[0].v[i], &axes->eb[kLockPairs[i][1]]);
  }
  // Prismatic joints are general items of their type rows, with the joint's compliance.
  // They are the rows append_rows gives the item.
  joints[0].type = JointType::Prismatic;
  joints[0].base_rows = 5;
  const JointRows source(joints, 0.01);
  ASSERT_TRUE(source.chain_items(links));
  EXPECT_EQ(links[0].rows, 5);
  EXPECT_EQ(links[0].dots, 0);
  const Mat3 turned = Eigen::AngleAxisd(0.1, Vec3(1, 2, 3).normalized()).toRotationMatrix();
  const std::vector<Vec12> q{make_q(turned, Vec3(0.1, 0, 0.5))};
  std::vector<Row> rows;
  source.item_rows(0, q, rows);
  const IdentityBodies ops(1);
  const RowSet set = row_set_of(source, ops, q, {Vec12::Zero()});
  ASSERT_EQ(rows.size(), 5u);
  ASSERT_EQ(set.size(), 5);
  for (int r = 0; r < 5; ++r) {
    EXPECT_EQ(rows[r].kind, RowKind::Equality);
    EXPECT_EQ(rows[r].compliance, 2e-7);
    EXPECT_EQ(rows[r].c, set.rows[r].c);
    EXPECT_EQ(rows[r].ga, set.rows[r].ga);
    EXPECT_EQ(rows[r].gb, set.rows[r].gb);
  }
  EXPECT_GT(std::abs(rows[1].c), 1e-3);  // the turn shows in the rotation rows
}

}  // namespace
}  // namespace mabd::detail
