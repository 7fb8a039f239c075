// Contact between dynamic bodies (pair_contact.cpp) against closed forms and conservation:
// a stack of 10 boxes stands, a heavy box (100:1) stands on a light one, two driven fingers
// hold a box at 1.2x the squeeze friction needs and let it slip at 0.8x with
// a = g (1 - 2 mu F / (m g)), a Painleve rod (mu = 2) on a dynamic slab gains no energy, a
// pendulum chain strikes a box (contact rows through the joint solve), self-collision keeps
// two links of one chain apart, and a saved state resumes bit-identically.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "mabd/mabd.h"

namespace mabd {
namespace {

constexpr double kG = 9.81;

WorldSettings pair_settings(ContactModel model, double h = 1e-2) {
  WorldSettings s;
  s.dt = h;
  s.gravity = Vec3(0, 0, -kG);
  s.contact.model = model;
  if (model == ContactModel::Exact) s.time_integration = TimeIntegration::ImplicitEuler;
  return s;
}

/// For loads stacked on a contact: at a time constant of 2 h the penalty model lets a 10-box
/// stack sink by centimetres and topple (each interface's stiffness follows the pair's own
/// mass, not the load above it). At the implicit Euler default, h / 4 = 2.5 ms, this stack is
/// marginal: it stood in scenes/box_stack.json but here its top slid 0.29 m in 9 s; 2 ms
/// holds it. Stacks integrate in implicit Euler with either model: under generalized-alpha a
/// penalty spring stiffer than the step hands back its impacts' energy (the settings reject
/// tau < h there; at 2 ms the stack's contacts chattered and it diverged within seconds).
WorldSettings stack_settings(ContactModel model) {
  WorldSettings s = pair_settings(model);
  if (model == ContactModel::Penalty) {
    s.contact.time_constant = 2e-3;
    s.time_integration = TimeIntegration::ImplicitEuler;
  }
  return s;
}

BodyId add_ground(World& w, double friction) {
  BodyDef g;
  g.name = "ground";
  g.kind = BodyKind::Static;
  g.shape.type = ShapeType::Plane;
  g.material.friction = friction;
  return w.add_body(g);
}

BodyId add_box(World& w, const std::string& name, const Vec3& size, const Vec3& at,
               double density, double friction, double E = 1e8) {
  BodyDef b;
  b.name = name;
  b.shape.type = ShapeType::Box;
  b.shape.size = size;
  b.material.density = density;
  b.material.friction = friction;
  b.material.youngs_modulus = E;
  b.position = at;
  return w.add_body(b);
}

/// Kinetic, gravity and elastic energy, plus the energy in the penalty model's contact
/// springs (World::contact_energy, in potential_energy: the springs give it back as the
/// bodies part).
double total_energy(const World& w) { return w.kinetic_energy() + w.potential_energy(); }

bool finite_state(const World& w, const std::vector<BodyId>& ids) {
  for (BodyId id : ids) {
    if (!w.com_position(id).allFinite()) return false;
  }
  return true;
}

class PairContactModels : public ::testing::TestWithParam<ContactModel> {};

std::string model_name(const ::testing::TestParamInfo<ContactModel>& info) {
  return contact_model_name(info.param);
}

// A stack of ten 0.2 m boxes (8 kg, E = 1e8, mu = 0.5) stands for 10 s: the top box drifts
// under 1 mm once the stack has settled (1 s).
TEST_P(PairContactModels, StackOfTenBoxesStands) {
  World w(stack_settings(GetParam()));
  add_ground(w, 0.5);
  std::vector<BodyId> boxes;
  for (int k = 0; k < 10; ++k) {
    boxes.push_back(add_box(w, "box" + std::to_string(k), Vec3::Constant(0.2),
                            Vec3(0, 0, 0.1 + 0.2 * k), 1000, 0.5));
  }
  const Vec3 start = w.com_position(boxes.back());
  for (int i = 0; i < 100; ++i) w.step();
  const Vec3 settled = w.com_position(boxes.back());
  double penetration = 0;
  int contacts = 0;
  for (int i = 0; i < 900; ++i) {
    w.step();
    penetration = std::max(penetration, w.last_step().max_penetration);
    contacts = w.last_step().body_contacts;
  }
  const Vec3 end = w.com_position(boxes.back());
  std::printf("stack of 10 (%s): settled %.3g m below the start, drift %.3g m over 9 s, "
              "%d box-box points, max penetration %.3g m\n",
              contact_model_name(GetParam()), start.z() - settled.z(), (end - settled).norm(),
              contacts, penetration);
  EXPECT_LT((end - settled).norm(), 1e-3);
  EXPECT_LT(std::hypot(end.x() - start.x(), end.y() - start.y()), 1e-3);
  EXPECT_EQ(contacts, 40);  // 4 points per face: 9 between boxes and the ground
  if (GetParam() == ContactModel::Exact) {
    EXPECT_LT(start.z() - end.z(), 1e-3);  // the boxes' elastic compression
    EXPECT_LT(penetration, 1e-4);
  }
}

// A heavy box (80 kg) on a light one (0.8 kg).
TEST_P(PairContactModels, HeavyBoxStandsOnLightBox) {
  World w(stack_settings(GetParam()));
  add_ground(w, 0.5);
  const BodyId light = add_box(w, "light", Vec3::Constant(0.2), Vec3(0, 0, 0.1), 100, 0.5);
  const BodyId heavy = add_box(w, "heavy", Vec3::Constant(0.2), Vec3(0, 0, 0.3), 10000, 0.5);
  for (int i = 0; i < 100; ++i) w.step();
  const Vec3 settled = w.com_position(heavy);
  for (int i = 0; i < 400; ++i) w.step();
  const double drift = (w.com_position(heavy) - settled).norm();
  std::printf("heavy on light (%s): drift %.3g m over 4 s, heavy at z = %.5f m\n",
              contact_model_name(GetParam()), drift, w.com_position(heavy).z());
  EXPECT_LT(drift, 1e-3);
  EXPECT_TRUE(finite_state(w, {light, heavy}));
  // Exact: the boxes' elastic compression; penalty: its springs carry 80 kg on the spring
  // constants of the light box's mass (about 1 cm).
  EXPECT_NEAR(w.com_position(heavy).z(), 0.3, GetParam() == ContactModel::Exact ? 1e-3 : 2e-2);
}

/// Two 0.05 x 0.1 x 2 m fingers on prismatic joints along x squeeze a 1 kg cube of 0.1 m
/// (mu = 0.5) with force F each (velocity drives saturating at F). Returns the cube's fall
/// (m, positive down) at the times `at` (s).
std::vector<double> squeeze(ContactModel model, double F, const std::vector<double>& at) {
  WorldSettings s = pair_settings(model, 5e-3);
  World w(s);
  const double mu = 0.5;
  const BodyId cube = add_box(w, "cube", Vec3::Constant(0.1), Vec3(0, 0, 1), 1000, mu, 1e9);
  JointDrive drive;
  drive.mode = DriveMode::Velocity;
  drive.max_force = F;
  for (int side : {-1, 1}) {
    // 2 m tall pads: a slipping cube stays between them.
    const BodyId f = add_box(w, side < 0 ? "left" : "right", Vec3(0.05, 0.1, 2.0),
                             Vec3(side * 0.075, 0, 1), 1000, mu, 1e9);
    JointDef j;
    j.type = JointType::Prismatic;
    j.body_b = f;
    j.anchor = Vec3(side * 0.075, 0, 1);
    j.axis = Vec3::UnitX();
    drive.target = -side * 0.05;  // towards the cube (m/s)
    j.drive = drive;
    w.add_joint(j);
  }
  std::vector<double> fall;
  const double z0 = w.com_position(cube).z();
  for (double t : at) {
    while (w.time() < t - 1e-9) w.step();
    fall.push_back(z0 - w.com_position(cube).z());
  }
  return fall;
}

// Two fingers hold a box at 1.2x the friction it needs (2 mu F = 1.2 m g) and let it slip at
// 0.8x, accelerating at a = g - 2 mu F / m.
TEST_P(PairContactModels, FingersHoldAtMoreAndSlipAtLessThanTheFrictionNeeded) {
  const double needed = 1.0 * kG / (2 * 0.5);  // F with 2 mu F = m g
  const std::vector<double> hold = squeeze(GetParam(), 1.2 * needed, {0.3, 2.0});
  std::printf("fingers at 1.2x (%s): fell %.3g m by 0.3 s, %.3g m more by 2 s\n",
              contact_model_name(GetParam()), hold[0], hold[1] - hold[0]);
  // Exact: the grip holds from the first step. Penalty: the springs take the drive's squeeze
  // over a few time constants, the cube sags meanwhile (about 1 cm), then holds.
  EXPECT_LT(std::abs(hold[0]), GetParam() == ContactModel::Exact ? 1e-6 : 2e-2);
  EXPECT_LT(std::abs(hold[1] - hold[0]), 1e-3);
  // Slipping: the second difference of the fall over equal intervals gives a.
  const double T = 0.3;
  const std::vector<double> slip = squeeze(GetParam(), 0.8 * needed, {0.2, 0.2 + T, 0.2 + 2 * T});
  const double a = (slip[2] - 2 * slip[1] + slip[0]) / (T * T);
  const double expected = kG - 2 * 0.5 * 0.8 * needed / 1.0;
  std::printf("fingers at 0.8x (%s): a = %.4f m/s^2, expected %.4f (%.2f%%)\n",
              contact_model_name(GetParam()), a, expected, 100 * (a - expected) / expected);
  EXPECT_NEAR(a, expected, 0.02 * expected);
}

// Light fingers (15 g) on prismatic joints with limits close on a 5 cm cube under position
// drives saturated at 20 N: without the cube each finger would cross its gap, the cube's half
// and its joint limit within one step. The drives' force limits and the limits are solved with
// the contacts, so the fingers stop on the cube's faces and stay there. Exact model only: the
// penalty model's stiffness follows the pair's mass (here 7.5 g at a time constant of 2 h),
// far too soft for 20 N; its fingers sink through with or without the limits.
TEST(PairContact, SaturatedDrivesAgainstJointLimitsStopOnTheCube) {
  World w(pair_settings(ContactModel::Exact));
  add_ground(w, 0.5);
  const BodyId cube = add_box(w, "cube", Vec3::Constant(0.05), Vec3(0, 0, 0.025), 800, 0.8);
  std::vector<JointId> fingers;
  for (int side : {-1, 1}) {
    BodyDef f;
    f.shape.type = ShapeType::Box;
    f.shape.size = Vec3(0.02, 0.015, 0.05);
    f.mass = 0.015;
    f.position = Vec3(0, side * (0.04 + 0.0075), 0.035);
    JointDef j;
    j.type = JointType::Prismatic;
    j.body_b = w.add_body(f);
    j.anchor = f.position;
    j.axis = Vec3(0, side, 0);            // coordinate: opening, 0 fully open
    j.limits = JointLimits{-0.04, 0.0};   // -0.04: the fingers meet
    JointDrive d;
    d.target = -0.04;
    d.stiffness = 2000;
    d.damping = 40;
    d.max_force = 20;
    j.drive = d;
    fingers.push_back(w.add_joint(j));
  }
  double worst = 0;
  for (int i = 0; i < 100; ++i) {
    w.step();
    if (i < 3) continue;  // closing the 1.5 cm gaps
    for (JointId f : fingers) worst = std::max(worst, std::abs(w.joint_position(f) + 0.015));
  }
  std::printf("saturated fingers against limits: off the cube's faces by up to %.3g m, cube "
              "moved %.3g m\n", worst, (w.com_position(cube) - Vec3(0, 0, 0.025)).norm());
  EXPECT_LT(worst, 5e-4);  // the cube's elastic squeeze under 20 N
  EXPECT_LT((w.com_position(cube) - Vec3(0, 0, 0.025)).norm(), 1e-3);
}

/// A steel capsule link (density 7800 kg/m^3, E = 2e11 Pa) of radius r and joint-to-joint
/// length `pitch` (m), along its own z axis.
BodyDef steel_link(double r, double pitch) {
  BodyDef link;
  link.shape.type = ShapeType::Capsule;
  link.shape.radius = r;
  link.shape.length = pitch - 2 * r;
  link.material.density = 7800;
  link.material.youngs_modulus = 2e11;
  return link;
}

// A chain of 20 steel capsule links (10 g, E = 2e11) laid over a static capsule "wheel" (exact
// model): their collider contacts are solved over the chain's joint solve like contacts
// between moving bodies. (Folded into each link's operator, the chain diverged at step 1.)
TEST(PairContact, ChainOfSmallStiffLinksRestsOnAStaticWheel) {
  World w(pair_settings(ContactModel::Exact));
  const double R = 0.3, r_link = 0.005, pitch = 0.02, r = R + r_link + 1e-3;
  BodyDef wheel;
  wheel.kind = BodyKind::Static;
  wheel.shape.type = ShapeType::Capsule;
  wheel.shape.radius = R;
  wheel.shape.length = 0.1;
  wheel.orientation = Quat(Eigen::AngleAxisd(M_PI / 2, Vec3::UnitX()));  // axis along y
  w.add_body(wheel);
  const int n = 20;
  auto at = [&](int k) {
    const double a = M_PI / 2 + (k - n / 2.0) * pitch / r;
    return Vec3(r * std::cos(a), 0, r * std::sin(a));
  };
  for (int k = 0; k < n; ++k) {
    BodyDef link = steel_link(r_link, pitch);
    const Vec3 d = (at(k + 1) - at(k)).normalized();
    link.position = 0.5 * (at(k) + at(k + 1));
    link.orientation = Quat::FromTwoVectors(Vec3::UnitZ(), d);
    const BodyId b = w.add_body(link);
    if (k > 0) {
      JointDef j;
      j.type = JointType::Ball;
      j.body_a = BodyId{b.index - 1};
      j.body_b = b;
      j.anchor = at(k);
      w.add_joint(j);
    }
  }
  const double e0 = total_energy(w);
  double worst_rise = -1e300, deepest = 0;
  for (int i = 0; i < 100; ++i) {
    const double e = total_energy(w);
    w.step();
    worst_rise = std::max(worst_rise, total_energy(w) - e);
    deepest = std::max(deepest, w.last_step().max_penetration);
  }
  const Vec3 top = w.com_position(BodyId{n / 2 + 1});
  std::printf("chain on a static wheel: largest energy rise %.3g J (of %.3g J), penetration %.3g "
              "m, top link at %.5f m (rests at %.5f)\n", worst_rise, e0, deepest, top.z(),
              r - 1e-3);
  EXPECT_LT(worst_rise, 1e-6 * std::abs(e0));
  EXPECT_LT(deepest, 1e-4);
  EXPECT_NEAR(top.z(), r - 1e-3, 2e-3);  // on the wheel (chord midpoints sit a little lower)
}

// A steel capsule link (10 g) lying across the top of a capsule wheel hinged to the world
// (a moving body: the pair path), frictionless, spinning slowly about its own axis. The
// normal force passes through the link's axis, so nothing changes that spin: it keeps its
// initial rate (implicit Euler damps a rotation by about h w^2 per second, 1e-6 here). A
// normal row at a material point of the link's surface (the capsule wheel's detection took
// only the wheel's radius out) turned the spin up instead, the push at the point the spin
// carried off the line of contact turning it further: the links of a chain running over a
// wheel spun up until the rows' gaps missed a penetration of a link's radius.
TEST(PairContact, LinkSpinningOnAHingedWheelKeepsItsSpin) {
  WorldSettings settings = pair_settings(ContactModel::Exact);
  settings.contact.friction = false;
  World w(settings);
  const double R = 0.3, r_link = 0.005, pitch = 0.02;
  BodyDef wheel;
  wheel.shape.type = ShapeType::Capsule;
  wheel.shape.radius = R;
  wheel.shape.length = 0.1;
  wheel.material.density = 1000;
  wheel.material.youngs_modulus = 1e9;
  wheel.orientation = Quat(Eigen::AngleAxisd(M_PI / 2, Vec3::UnitX()));  // axis along y
  const BodyId wheel_id = w.add_body(wheel);
  JointDef axle;
  axle.type = JointType::Hinge;
  axle.body_b = wheel_id;
  axle.anchor = Vec3::Zero();
  axle.axis = Vec3::UnitY();
  w.add_joint(axle);
  BodyDef link = steel_link(r_link, pitch);
  link.position = Vec3(0, 0, R + r_link);  // resting on the wheel's top, along its axis
  link.orientation = Quat(Eigen::AngleAxisd(M_PI / 2, Vec3::UnitX()));
  const double spin = 0.1;  // rad/s, about the link's axis
  link.angular_velocity = Vec3(0, spin, 0);
  const BodyId link_id = w.add_body(link);
  double lowest = spin, highest = spin, deepest = 0;
  int pushed = 0;
  for (int i = 0; i < 100; ++i) {
    w.step();
    const double s = w.twist(link_id).angular.y();
    lowest = std::min(lowest, s);
    highest = std::max(highest, s);
    deepest = std::max(deepest, w.last_step().max_penetration);
    pushed += w.last_step().contacts > 0;
  }
  std::printf("link spinning on a hinged wheel: spin %.6g to %.6g rad/s (starts at %.3g), "
              "penetration %.3g m, %d steps in contact\n", lowest, highest, spin, deepest, pushed);
  EXPECT_EQ(pushed, 100);  // it rests on the wheel throughout
  EXPECT_LE(highest, spin * (1 + 1e-9));
  EXPECT_GE(lowest, spin * (1 - 1e-4));
  EXPECT_LT(deepest, 1e-4);
}

// Without gravity, a small sphere pushed towards a heavy one by a load of 100 m/s^2 starts
// 3 mm off it, receding at 1 m/s: the load stops it within the first step (implicit Euler)
// and brings it 1 cm back within the second, which starts at rest. Neither its speed nor
// gravity says it can reach the heavy sphere then, its last step's acceleration does: the
// contact holds it off (exact model: no penetration but the compliance floor's, 1e-3 of the
// travel a step's contact stops, 1.3e-5 m here), where it went 7 mm in.
TEST(PairContact, ABodyPushedBackByALoadIsACandidate) {
  WorldSettings settings = pair_settings(ContactModel::Exact);
  settings.gravity = Vec3::Zero();
  World w(settings);
  const double R = 0.1, r = 0.01, gap = 3e-3, a = 100, h = settings.dt;
  BodyDef heavy;
  heavy.shape.type = ShapeType::Sphere;
  heavy.shape.radius = R;
  heavy.material.density = 1e5;
  const BodyId big = w.add_body(heavy);
  BodyDef ball;
  ball.shape.type = ShapeType::Sphere;
  ball.shape.radius = r;
  ball.material.density = 1000;
  ball.position = Vec3(R + r + gap, 0, 0);
  ball.linear_velocity = Vec3(a * h, 0, 0);
  const BodyId small = w.add_body(ball);
  const double m = w.body_info(small).mass;
  double deepest = 0;
  for (int i = 0; i < 5; ++i) {
    w.apply_wrench(small, Vec3(-m * a, 0, 0), Vec3::Zero());
    w.step();
    const double apart = (w.com_position(small) - w.com_position(big)).norm() - R - r;
    deepest = std::max(deepest, -apart);
    if (i == 0) EXPECT_NEAR(apart, gap, 1e-12);  // stopped where it started
  }
  std::printf("sphere pushed back by a load: deepest %.3g m (the step's travel %.3g m)\n", deepest,
              a * h * h);
  EXPECT_LT(deepest, 1e-4);
}

// A Painleve rod (mu = 2) sliding on a dynamic slab that lies on the ground: no NaN and no
// energy gain (contact and friction only dissipate).
TEST_P(PairContactModels, PainleveRodGainsNoEnergy) {
  World w(pair_settings(GetParam(), 2e-3));
  add_ground(w, 2.0);
  const BodyId slab = add_box(w, "slab", Vec3(2, 1, 0.1), Vec3(0, 0, 0.05), 2000, 2.0, 1e9);
  BodyDef rod;
  rod.name = "rod";
  rod.shape.type = ShapeType::Box;
  rod.shape.size = Vec3(0.6, 0.04, 0.04);
  rod.material.density = 1000;
  rod.material.friction = 2.0;
  rod.material.youngs_modulus = 1e9;
  const double tilt = 0.5;  // rad; the lower end on the slab, sliding towards it
  rod.orientation = Quat(Eigen::AngleAxisd(-tilt, Vec3::UnitY()));
  rod.position = Vec3(0, 0, 0.1 + 0.3 * std::sin(tilt) + 0.02 * std::cos(tilt) + 1e-4);
  rod.linear_velocity = Vec3(-2, 0, 0);
  const BodyId r = w.add_body(rod);
  for (int i = 0; i < 20; ++i) w.step();  // into contact
  const double e0 = total_energy(w);
  double worst = -1e300;
  int touching = 0;
  for (int i = 0; i < 500; ++i) {
    w.step();
    const double e = total_energy(w);
    worst = std::max(worst, e - e0);
    touching = std::max(touching, w.last_step().body_contacts);
    ASSERT_TRUE(finite_state(w, {slab, r})) << "step " << i;
  }
  std::printf("Painleve rod (%s): largest energy rise %.3g J (of %.3g J), up to %d rod-slab "
              "points\n",
              contact_model_name(GetParam()), worst, e0, touching);
  EXPECT_GT(touching, 0);
  // Penalty: the springs' energy is estimated (1/2 F d, F with its damper's share), which
  // leaves a rise of about 2e-5 of the energy; exact: none beyond round-off.
  const double tolerance = GetParam() == ContactModel::Penalty ? 1e-4 : 1e-6;
  EXPECT_LT(worst, tolerance * std::abs(e0) + 1e-6);
}

/// Overlap (m) of two boxes of half extents `ha`, `hb` at poses `a`, `b`: the least
/// overlap over the 15 separating-axis candidates, negative when some axis separates them.
double box_overlap(const Pose& a, const Vec3& ha, const Pose& b, const Vec3& hb) {
  const Mat3 ra = a.orientation.toRotationMatrix(), rb = b.orientation.toRotationMatrix();
  const Vec3 t = b.position - a.position;
  double overlap = INFINITY;
  auto test = [&](Vec3 u) {
    if (u.norm() < 1e-9) return;
    u.normalize();
    const double extent = ha.dot((ra.transpose() * u).cwiseAbs()) +
                          hb.dot((rb.transpose() * u).cwiseAbs());
    overlap = std::min(overlap, extent - std::abs(t.dot(u)));
  };
  for (int i = 0; i < 3; ++i) {
    test(ra.col(i));
    test(rb.col(i));
    for (int j = 0; j < 3; ++j) test(Vec3(ra.col(i)).cross(Vec3(rb.col(j))));
  }
  return overlap;
}

// A 16 x 6 x 6 cm box falling flat at 8.2 m/s onto a tumbling box tilted by about 15
// degrees, 4.9 cm below it (two boxes of falling_joints, poses and velocities of its step
// 84). The boxes' nearest features are two edges, whose one point held the falling box at
// first; it tipped about it and came 7 cm into the other within two steps. Both boxes
// free, the exact contact holds them within a few millimetres of touching (the penalty
// model's springs, at a time constant of 2 h, let such an impact in by centimetres).
TEST(PairContact, BoxLandingOnATiltedBoxStaysOut) {
  World w(pair_settings(ContactModel::Exact));
  const Vec3 size(0.16, 0.06, 0.06);
  BodyDef lower;
  lower.name = "lower";
  lower.shape.type = ShapeType::Box;
  lower.shape.size = size;
  lower.material.density = 700;
  lower.material.friction = 0.4;
  lower.material.youngs_modulus = 1e7;
  BodyDef upper = lower;
  upper.name = "upper";
  lower.position = Vec3(-0.42843866860329899, 0.59850807109412807, 0.36855960829981399);
  lower.orientation = Quat(0.54953783720165883, -0.11259291772319836, 0.079286781390605771,
                           0.82404162920268698);
  lower.linear_velocity = Vec3(0.0241574, -0.287279, -0.613984);
  lower.angular_velocity = Vec3(8.92462, -6.63223, 1.90334);
  upper.position = Vec3(-0.437516, 0.616273, 0.49783000000000716);
  upper.orientation = Quat(0.52850472127052339, 0, 0, 0.84893036204082506);
  upper.linear_velocity = Vec3(0, 0, -8.2404);
  const BodyId a = w.add_body(lower), b = w.add_body(upper);
  const Vec3 half = 0.5 * size;
  ASSERT_LT(box_overlap(w.pose(a), half, w.pose(b), half), -0.04);
  double deepest = -INFINITY;
  int touching = 0;
  for (int i = 0; i < 20; ++i) {
    w.step();
    deepest = std::max(deepest, box_overlap(w.pose(a), half, w.pose(b), half));
    touching = std::max(touching, w.last_step().body_contacts);
  }
  std::printf("box landing on a tilted box: deepest overlap %.3g m, up to %d points\n", deepest,
              touching);
  EXPECT_GT(touching, 0);
  EXPECT_LT(deepest, 5e-3);
}

// A soft capsule post (E = 1e5 Pa, 1 m between its caps' centres, radius 0.1 m) stands on a
// dynamic slab lying on the ground (exact contact). Its own weight shortens it by about 5%:
// the detector, which places the capsule at its rotation and centre, finds its lower cap
// centimetres deeper in the slab than the contact row, which follows the strained (affine)
// body. The row's recovery bound starts from the shallower of the two: started from the
// detector's depth, it gave way by the difference at every step, and the post sank through
// the slab (43 cm deep at step 100, its centre from 0.8 m down to 0.11 m by step 200).
TEST(PairContact, ASoftCapsuleStandsOnASlab) {
  World w(pair_settings(ContactModel::Exact));
  add_ground(w, 0.5);
  const BodyId slab = add_box(w, "slab", Vec3(1, 1, 0.2), Vec3(0, 0, 0.1), 1000, 0.5, 1e9);
  BodyDef post;
  post.name = "post";
  post.shape.type = ShapeType::Capsule;
  post.shape.radius = 0.1;
  post.shape.length = 1.0;
  post.material.density = 1000;
  post.material.friction = 0.5;
  post.material.youngs_modulus = 1e5;
  post.position = Vec3(0, 0, 0.2 + 0.1 + 0.5);
  const BodyId p = w.add_body(post);
  double deepest = 0;
  for (int i = 0; i < 200; ++i) {
    w.step();
    deepest = std::max(deepest, w.last_step().max_penetration);
    ASSERT_TRUE(finite_state(w, {slab, p})) << "step " << i;
  }
  const double z = w.com_position(p).z();
  std::printf("soft post on a slab: deepest %.3g m, centre at %.4f m (0.8 m unstrained)\n",
              deepest, z);
  EXPECT_LT(deepest, 1e-3);
  EXPECT_GT(z, 0.75);  // shortened by its weight, standing on the slab
  EXPECT_LT(z, 0.8);
}

// Penalty springs without dampers (damping ratio 0) hold two spheres stacked on the ground:
// implicit Euler minimises the step's potential, the springs' 1/2 k d^2 included (k = m_eff /
// tau^2: the lower sphere's mass on the ground, the reduced mass between the spheres; their
// rows run between the centres, so these are exact), so the energy with the springs' never
// rises, and the step's energy check, which counts them, takes no extra iteration (the rows
// are linear in q: one Newton iteration solves the step). Uncounted, a spring giving its
// energy back looked like a gain and the check iterated on after it.
TEST(PairContact, PenaltySpringsCountInTheStepEnergy) {
  WorldSettings s = pair_settings(ContactModel::Penalty);
  s.time_integration = TimeIntegration::ImplicitEuler;
  s.contact.damping_ratio = 0;
  World w(s);
  add_ground(w, 0.0);
  const double r = 0.1, density = 1000, tau = s.dt / 4;  // the default in implicit Euler
  std::vector<BodyId> balls;
  for (int k = 0; k < 2; ++k) {
    BodyDef b;
    b.name = "ball" + std::to_string(k);
    b.shape.type = ShapeType::Sphere;
    b.shape.radius = r;
    b.material.density = (k + 1) * density;
    b.material.friction = 0;
    b.position = Vec3(0, 0, r + 0.02 + k * (2 * r + 0.02));
    balls.push_back(w.add_body(b));
  }
  const double m0 = w.body_info(balls[0]).mass, m1 = w.body_info(balls[1]).mass;
  const double k_ground = m0 / (tau * tau), k_pair = m0 * m1 / (m0 + m1) / (tau * tau);
  // The springs' energy from the reported depths, against World::contact_energy.
  const auto springs = [&] {
    double e = 0;
    for (const ContactInfo& c : w.contacts()) {
      const double k = c.collider == balls[1] || c.body == balls[1] ? k_pair : k_ground;
      e += 0.5 * k * std::pow(std::max(c.depth, 0.0), 2);
    }
    return e;
  };
  double e = w.kinetic_energy() + w.potential_energy(), worst = -1e300, mismatch = 0;
  int touching = 0, most_iterations = 0;
  for (int i = 0; i < 200; ++i) {
    w.step();
    mismatch = std::max(mismatch, std::abs(w.contact_energy() - springs()));
    const double next = w.kinetic_energy() + w.potential_energy();
    worst = std::max(worst, next - e);
    e = next;
    touching = std::max(touching, static_cast<int>(w.contacts().size()));
    most_iterations = std::max(most_iterations, w.last_step().newton_iterations);
  }
  std::printf("penalty spheres: largest energy change %.3g J, up to %d contacts, up to %d "
              "Newton iterations\n", worst, touching, most_iterations);
  EXPECT_EQ(touching, 2);
  EXPECT_LT(mismatch, 1e-12);
  EXPECT_LT(worst, 1e-9 * std::abs(e) + 1e-12);
  EXPECT_EQ(most_iterations, 1);
  EXPECT_NEAR(w.com_position(balls[1]).z(), 3 * r, 0.05);  // it rests, within the sink
}

// A pendulum chain of 5 links swings into a box on the ground: its contact rows go through
// the chain's joint solve. The chain stays jointed, the energy does not rise, the box moves.
TEST_P(PairContactModels, PendulumChainStrikesABox) {
  World w(pair_settings(GetParam(), 5e-3));
  add_ground(w, 0.3);
  std::vector<BodyId> links;
  for (int k = 0; k < 5; ++k) {
    links.push_back(add_box(w, "link" + std::to_string(k), Vec3(0.1, 0.04, 0.04),
                            Vec3(0.05 + 0.1 * k, 0, 0.6), 500, 0.3, 1e9));
    JointDef j;
    j.type = JointType::Ball;
    j.body_a = k == 0 ? BodyId{} : links[k - 1];
    j.body_b = links[k];
    j.anchor = Vec3(0.1 * k, 0, 0.6);
    w.add_joint(j);
  }
  const BodyId box = add_box(w, "box", Vec3::Constant(0.2), Vec3(0, 0, 0.1), 200, 0.3, 1e9);
  const Vec3 box0 = w.com_position(box);
  const double e0 = total_energy(w);
  double worst = -1e300, joint_residual = 0;
  int touched = 0;
  for (int i = 0; i < 200; ++i) {
    w.step();
    worst = std::max(worst, total_energy(w) - e0);
    joint_residual = std::max(joint_residual, w.last_step().joint_residual);
    touched = std::max(touched, w.last_step().body_contacts);
  }
  const double moved = (w.com_position(box) - box0).norm();
  std::printf("pendulum strikes box (%s): box moved %.3g m, up to %d points, energy rise %.3g J, "
              "joint residual %.3g m\n",
              contact_model_name(GetParam()), moved, touched, worst, joint_residual);
  EXPECT_GT(touched, 0);
  EXPECT_GT(moved, 1e-3);
  EXPECT_LT(worst, 1e-6 * std::abs(e0) + 1e-6);
  EXPECT_LT(joint_residual, 1e-4);
}

INSTANTIATE_TEST_SUITE_P(PairContact, PairContactModels,
                         ::testing::Values(ContactModel::Penalty, ContactModel::Exact),
                         model_name);

/// Three 0.4 m links in a U on frictionless ground, ball-jointed at the corners, the last
/// link thrown towards the first. Returns the least y gap between links 0 and 2 (m).
double u_chain_gap(bool self_collision) {
  WorldSettings s = pair_settings(ContactModel::Exact, 5e-3);
  s.contact.self_collision = self_collision;
  World w(s);
  add_ground(w, 0.0);
  const BodyId l0 = add_box(w, "l0", Vec3(0.4, 0.1, 0.1), Vec3(0.2, 0, 0.05), 500, 0, 1e9);
  const BodyId l1 = add_box(w, "l1", Vec3(0.1, 0.3, 0.1), Vec3(0.45, 0.15, 0.05), 500, 0, 1e9);
  BodyDef d;
  d.name = "l2";
  d.shape.type = ShapeType::Box;
  d.shape.size = Vec3(0.4, 0.1, 0.1);
  d.material.density = 500;
  d.material.youngs_modulus = 1e9;
  d.position = Vec3(0.2, 0.3, 0.05);
  d.linear_velocity = Vec3(0, -1.0, 0);
  const BodyId l2 = w.add_body(d);
  for (const auto& [a, b, at] : {std::tuple{l0, l1, Vec3(0.45, 0, 0.05)},
                                 std::tuple{l1, l2, Vec3(0.45, 0.3, 0.05)}}) {
    JointDef j;
    j.type = JointType::Ball;
    j.body_a = a;
    j.body_b = b;
    j.anchor = at;
    w.add_joint(j);
  }
  double gap = 1e300;
  for (int i = 0; i < 200; ++i) {
    w.step();
    gap = std::min(gap, w.com_position(l2).y() - w.com_position(l0).y() - 0.1);
  }
  return gap;
}

TEST(PairContact, SelfCollisionKeepsLinksOfOneChainApart) {
  const double with = u_chain_gap(true), without = u_chain_gap(false);
  std::printf("U chain: least gap %.3g m with self-collision, %.3g m without\n", with, without);
  EXPECT_GT(with, -1e-3);
  EXPECT_LT(without, -0.05);  // passes through
}

TEST(PairContact, SavedStateResumesBitIdentically) {
  World w(pair_settings(ContactModel::Exact));
  add_ground(w, 0.5);
  for (int k = 0; k < 3; ++k) {
    BodyDef b;
    b.name = "box" + std::to_string(k);
    b.shape.type = ShapeType::Box;
    b.shape.size = Vec3::Constant(0.2);
    b.material.friction = 0.5;
    b.position = Vec3(0.03 * k, 0, 0.1 + 0.21 * k);
    b.angular_velocity = Vec3(0, 0, 0.5 * k);
    w.add_body(b);
  }
  for (int i = 0; i < 30; ++i) w.step();
  const WorldState saved = w.save_state();
  for (int i = 0; i < 30; ++i) w.step();
  const WorldState a = w.save_state();
  w.restore_state(saved);
  for (int i = 0; i < 30; ++i) w.step();
  EXPECT_GT(w.last_step().body_contacts, 0);
  EXPECT_TRUE(w.save_state().data == a.data);
}

}  // namespace
}  // namespace mabd
