// Contact with colliders against closed forms: incline stick/slide a = g (sin a - mu cos a),
// resting contact (the penalty model's predicted penetration, the exact model's none), a drop
// without tunnelling, isotropic friction, a capsule chain on the ground, and the equivalence
// of the primal (Woodbury) contact with the same rows as compliant joint rows in the dual, and
// the energy a step may gain: a kinematic collider's work, nothing from a fast impact.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "mabd/mabd.h"

namespace mabd {
namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kG = 9.81;

WorldSettings contact_settings(ContactModel model, double h = 1e-2) {
  WorldSettings s;
  s.dt = h;
  s.gravity = Vec3(0, 0, -kG);
  s.contact.model = model;
  // The exact model integrates in implicit Euler (ContactModel::Exact).
  if (model == ContactModel::Exact) s.time_integration = TimeIntegration::ImplicitEuler;
  return s;
}

/// A static ground plane through the origin whose normal is tilted by `angle` (rad) about x.
BodyId add_ground(World& w, double angle = 0, double friction = 0.5) {
  BodyDef g;
  g.name = "ground";
  g.kind = BodyKind::Static;
  g.shape.type = ShapeType::Plane;
  g.material.friction = friction;
  g.orientation = Quat(Eigen::AngleAxisd(angle, Vec3::UnitX()));
  return w.add_body(g);
}

/// A 0.2 m cube of 8 kg (E = 1e8) resting on the plane tilted by `angle` about x, its bottom
/// face on the plane.
BodyId add_box_on(World& w, double angle, double friction, const Vec3& velocity = Vec3::Zero()) {
  BodyDef b;
  b.name = "box";
  b.shape.type = ShapeType::Box;
  b.shape.size = Vec3(0.2, 0.2, 0.2);
  b.material.density = 1000;
  b.material.friction = friction;
  const Quat R(Eigen::AngleAxisd(angle, Vec3::UnitX()));
  b.orientation = R;
  b.position = R * Vec3(0, 0, 0.1);
  b.linear_velocity = velocity;
  return w.add_body(b);
}

/// A chain of n copies of `link` (in its orientation) with centres at first + k step (m),
/// joined by ball joints at the midpoints between them.
std::vector<BodyId> add_chain(World& w, BodyDef link, int n, const Vec3& first, const Vec3& step) {
  std::vector<BodyId> links;
  for (int k = 0; k < n; ++k) {
    link.position = first + k * step;
    links.push_back(w.add_body(link));
    if (k > 0) {
      JointDef j;
      j.type = JointType::Ball;
      j.body_a = links[k - 1];
      j.body_b = links[k];
      j.anchor = first + (k - 0.5) * step;
      w.add_joint(j);
    }
  }
  return links;
}

/// A chain of n copies of `link` along x at height z (m), centres `spacing` apart from
/// x = spacing / 2, joined by ball joints at the midpoints.
std::vector<BodyId> add_chain(World& w, const BodyDef& link, int n, double spacing, double z) {
  return add_chain(w, link, n, Vec3(0.5 * spacing, 0, z), Vec3(spacing, 0, 0));
}

class ContactModels : public ::testing::TestWithParam<ContactModel> {};

std::string model_name(const ::testing::TestParamInfo<ContactModel>& info) {
  return contact_model_name(info.param);
}

// Below the friction angle the box sticks: drift under 1 mm over 2 s.
TEST_P(ContactModels, BoxSticksBelowFrictionAngle) {
  const double mu = 0.5, angle = 0.8 * std::atan(mu);
  World w(contact_settings(GetParam()));
  add_ground(w, angle, mu);
  const BodyId box = add_box_on(w, angle, mu);
  for (int i = 0; i < 20; ++i) w.step();  // settle into the contact
  const Vec3 x0 = w.com_position(box);
  for (int i = 0; i < 200; ++i) w.step();
  const double drift = (w.com_position(box) - x0).norm();
  std::printf("stick at %.3f rad (%s): drift %.3g m over 2 s, %d contacts\n", angle,
              contact_model_name(GetParam()), drift, w.last_step().contacts);
  EXPECT_LT(drift, 1e-3);
  EXPECT_EQ(w.last_step().contacts, 4);
}

// Above it, it slides with a = g (sin a - mu cos a) within 2%.
TEST_P(ContactModels, BoxSlidesAboveFrictionAngle) {
  const double mu = 0.3, angle = 0.5;
  World w(contact_settings(GetParam()));
  add_ground(w, angle, mu);
  const BodyId box = add_box_on(w, angle, mu);
  const Vec3 down_slope = Eigen::AngleAxisd(angle, Vec3::UnitX()) * Vec3(0, -1, 0);
  for (int i = 0; i < 20; ++i) w.step();
  // Fit s(t) = s0 + v0 t + a t^2 / 2 by the second difference over a long interval.
  const int n = 100;
  std::vector<double> s;
  for (int i = 0; i <= 2 * n; ++i) {
    s.push_back(w.com_position(box).dot(down_slope));
    w.step();
  }
  const double T = n * w.settings().dt;
  const double a = (s[2 * n] - 2 * s[n] + s[0]) / (T * T);
  const double expected = kG * (std::sin(angle) - mu * std::cos(angle));
  std::printf("slide (%s): a = %.5f m/s^2, expected %.5f (%.2f%%)\n", contact_model_name(GetParam()),
              a, expected, 100 * (a - expected) / expected);
  EXPECT_NEAR(a, expected, 0.02 * expected);
}

// A resting box: penetration as the model predicts (penalty: F / k per row with
// k = m_eff / tau^2) or none (exact), at rest, and no drift over 10^4 steps.
TEST_P(ContactModels, RestingBoxHoldsWithoutDrift) {
  World w(contact_settings(GetParam()));
  add_ground(w);
  const BodyId box = add_box_on(w, 0, 0.5);
  for (int i = 0; i < 200; ++i) w.step();
  const Vec3 x0 = w.com_position(box);
  EXPECT_LT(w.twist(box).linear.norm(), 1e-4);
  double total_force = 0, worst_model_error = 0, max_depth = 0;
  const double tau = 2 * w.settings().dt;
  const double m = w.body_info(box).mass;
  const Vec3 I = w.body_info(box).principal_inertia;
  for (const ContactInfo& c : w.contacts()) {
    total_force += c.force.z();
    max_depth = std::max(max_depth, c.depth);
    // Rigid effective mass of a corner row along z: 1 / (1/m + |p x z|^2 / I) (cube).
    const double m_eff = 1.0 / (1.0 / m + 0.02 / I[0]);
    const double predicted = c.force.z() * tau * tau / m_eff;
    worst_model_error = std::max(worst_model_error, std::abs(c.depth - predicted));
  }
  std::printf("resting (%s): force %.6f N (weight %.6f), max depth %.3g m, model error %.3g m\n",
              contact_model_name(GetParam()), total_force, m * kG, max_depth, worst_model_error);
  // Exact: the sticking corners (12 rows on the box's 9 rigid-and-planar directions, with
  // the model's compliance floor) pass forces of about 1e-5 of the weight between them from
  // step to step, at speeds of a few um/s; penalty rows hold the weight to round-off.
  const double force_tolerance = GetParam() == ContactModel::Penalty ? 1e-6 : 1e-4;
  EXPECT_NEAR(total_force, m * kG, force_tolerance * m * kG);
  if (GetParam() == ContactModel::Penalty) {
    EXPECT_LT(worst_model_error, 1e-3 * max_depth);
  } else {
    EXPECT_LT(max_depth, 1e-5);
  }
  for (int i = 0; i < 10000; ++i) w.step();
  const double drift = (w.com_position(box) - x0).norm();
  std::printf("resting (%s): drift %.3g m over 10^4 steps\n", contact_model_name(GetParam()), drift);
  EXPECT_LT(drift, 1e-6);
  EXPECT_LT(w.twist(box).linear.norm(), 1e-4);
}

// A sphere dropped from 2 m at h = 1e-2 does not tunnel and comes to rest.
TEST_P(ContactModels, DroppedSphereComesToRest) {
  World w(contact_settings(GetParam()));
  add_ground(w);
  BodyDef b;
  b.shape.type = ShapeType::Sphere;
  b.shape.radius = 0.1;
  b.position = Vec3(0, 0, 2.0);
  const BodyId ball = w.add_body(b);
  double lowest = 1e9;
  for (int i = 0; i < 300; ++i) {
    w.step();
    lowest = std::min(lowest, w.com_position(ball).z());
  }
  const double tau = 2 * w.settings().dt, v_impact = std::sqrt(2 * kG * 1.9);
  // Penalty: a critically damped spring of time constant tau stops an impact at speed v
  // within v tau / e in continuous time; the step sees the impact only at its end, so the
  // bound taken is v tau. It rests g tau^2 deep (the sphere's bottom row has m_eff = m).
  // Exact: at r.
  const bool penalty = GetParam() == ContactModel::Penalty;
  const double max_dip = penalty ? v_impact * tau : 0.02;
  const double rest = penalty ? 0.1 - kG * tau * tau : 0.1;
  std::printf("drop (%s): lowest centre %.5f m (radius 0.1, bound %.5f), rest %.6f (model %.6f), "
              "final speed %.3g m/s\n", contact_model_name(GetParam()), lowest, 0.1 - max_dip,
              w.com_position(ball).z(), rest, w.twist(ball).linear.norm());
  EXPECT_GT(lowest, 0.1 - max_dip);
  EXPECT_NEAR(w.com_position(ball).z(), rest, 1e-4);
  EXPECT_LT(w.twist(ball).linear.norm(), 1e-4);
}

// Friction is isotropic: a box launched in 12 directions stops at the same distance (1%),
// the closed form v^2 / (2 mu g).
TEST_P(ContactModels, FrictionIsIsotropic) {
  const double mu = 0.4, v0 = 2.0;
  std::vector<double> dist;
  for (int k = 0; k < 12; ++k) {
    const double phi = 2 * kPi * k / 12 + 0.1;
    World w(contact_settings(GetParam()));
    add_ground(w, 0, mu);
    const Vec3 dir(std::cos(phi), std::sin(phi), 0);
    const BodyId box = add_box_on(w, 0, mu, v0 * dir);  // launched resting on the ground
    const Vec3 x0 = w.com_position(box);
    for (int i = 0; i < 150; ++i) w.step();
    dist.push_back((w.com_position(box) - x0).norm());
  }
  const auto [lo, hi] = std::minmax_element(dist.begin(), dist.end());
  const double expected = v0 * v0 / (2 * mu * kG);
  std::printf("isotropy (%s): stop distance %.5f .. %.5f m (closed form %.5f)\n",
              contact_model_name(GetParam()), *lo, *hi, expected);
  EXPECT_LT((*hi - *lo) / *lo, 0.01);
  EXPECT_NEAR(*hi, expected, 0.02 * expected);
}

// A chain of 10 capsules joined by ball joints, dropped flat, comes to rest on the ground
// with its joints held.
TEST_P(ContactModels, CapsuleChainLiesOnGround) {
  World w(contact_settings(GetParam()));
  add_ground(w);
  BodyDef capsule;
  capsule.shape.type = ShapeType::Capsule;
  capsule.shape.radius = 0.03;
  capsule.shape.length = 0.14;
  capsule.orientation = Quat(Eigen::AngleAxisd(kPi / 2, Vec3::UnitY()));  // along x
  const std::vector<BodyId> links = add_chain(w, capsule, 10, 0.2, 0.3);
  double worst_joint = 0;
  for (int i = 0; i < 300; ++i) {
    w.step();
    worst_joint = std::max(worst_joint, w.last_step().joint_residual);
  }
  double max_speed = 0, lowest = 1e9;
  for (BodyId b : links) {
    max_speed = std::max(max_speed, w.twist(b).linear.norm());
    lowest = std::min(lowest, w.com_position(b).z());
  }
  // Rest height: the radius, less the penalty model's sink F tau^2 / m_eff at the deepest
  // point (an end point of a level capsule: lever L/2 about a transverse axis).
  double sink = 0;
  if (GetParam() == ContactModel::Penalty) {
    const double tau = 2 * w.settings().dt, m = w.body_info(links[0]).mass;
    const double m_eff = 1.0 / (1.0 / m + 0.07 * 0.07 / w.body_info(links[0]).principal_inertia.x());
    for (const ContactInfo& c : w.contacts()) sink = std::max(sink, c.force.z() * tau * tau / m_eff);
  }
  std::printf("capsule chain (%s): lowest centre %.5f m (radius 0.03, model %.5f), max speed "
              "%.3g m/s, joint residual %.3g m, %d contacts\n", contact_model_name(GetParam()),
              lowest, 0.03 - sink, max_speed, worst_joint, w.last_step().contacts);
  EXPECT_NEAR(lowest, 0.03 - sink, 2e-4);
  EXPECT_LT(max_speed, 1e-3);
  EXPECT_LT(worst_joint, 1e-6);
  EXPECT_GE(w.last_step().contacts, 10);
}

// A chain of 10 ball-jointed boxes (10 cm, about 1.5 kg) thrown flat at the ground at
// 10 m/s: its corner rows are redundant with the joints on the rigid motion. It comes to rest
// on the ground with its joints held, within the model's penetration.
TEST_P(ContactModels, JointedBoxesThrownAtTheGroundComeToRest) {
  World w(contact_settings(GetParam()));
  add_ground(w);
  BodyDef box;
  box.shape.type = ShapeType::Box;
  box.shape.size = Vec3(0.1, 0.15, 0.15);
  box.material.friction = 0.5;
  box.linear_velocity = Vec3(0, 0, -10);
  const std::vector<BodyId> links = add_chain(w, box, 10, 0.1, 0.2);
  double worst_joint = 0, deepest = 0;
  std::vector<Vec3> settled;
  for (int i = 0; i < 200; ++i) {
    w.step();
    worst_joint = std::max(worst_joint, w.last_step().joint_residual);
    if (i >= 100) deepest = std::max(deepest, w.last_step().max_penetration);
    if (i == 99) {
      for (BodyId b : links) settled.push_back(w.com_position(b));
    }
  }
  double max_speed = 0, drift = 0;
  for (std::size_t k = 0; k < links.size(); ++k) {
    max_speed = std::max(max_speed, w.twist(links[k]).linear.norm());
    drift = std::max(drift, (w.com_position(links[k]) - settled[k]).norm());
  }
  // At rest (flat, or folded onto the boxes' edges): penalty sinks about g tau^2 (4 mm at
  // h = 1e-2) per row carrying its own effective mass's weight; exact under 1e-5 m.
  const double depth_bound = GetParam() == ContactModel::Penalty ? 2 * kG * 4e-4 : 1e-5;
  std::printf("box chain (%s): %d contacts, deepest at rest %.3g m, drift over the last second "
              "%.3g m, max speed %.3g m/s, joint residual %.3g m\n",
              contact_model_name(GetParam()), w.last_step().contacts, deepest, drift, max_speed,
              worst_joint);
  EXPECT_GE(w.last_step().contacts, 20);
  EXPECT_LT(deepest, depth_bound);
  EXPECT_LT(worst_joint, 1e-6);
  EXPECT_LT(drift, 1e-5);
  EXPECT_LT(max_speed, 1e-4);
}

// A frictionless ball spinning in place on the ground about a horizontal axis, and a capsule
// lying on it spinning about its own axis: the normal rows act at their core points (the
// centre, the axis), so the contact puts no torque on them and they spin as in free flight.
// (At the surface point, the point turned off the line of contact within the step and the
// push there turned the body further: this ball sped up from 10 to 66 rad/s in 1 s, gaining
// energy, under the penalty model.)
TEST_P(ContactModels, FrictionlessContactPutsNoTorqueOnRoundBodies) {
  for (const ShapeType type : {ShapeType::Sphere, ShapeType::Capsule}) {
    auto spin = [&](bool grounded) {
      WorldSettings s = contact_settings(GetParam());
      if (!grounded) s.gravity = Vec3::Zero();
      World w(s);
      if (grounded) add_ground(w, 0, 0.0);
      BodyDef b;
      b.shape.type = type;
      b.shape.radius = 0.1;
      b.shape.length = 0.3;
      b.material.friction = 0;
      b.material.youngs_modulus = 1e9;
      // The capsule's axis (its frame's z) along x, spinning about it; the ball about y.
      if (type == ShapeType::Capsule) {
        b.orientation = Quat(Eigen::AngleAxisd(kPi / 2, Vec3::UnitY()));
      }
      b.position = Vec3(0, 0, 0.1);
      b.angular_velocity = type == ShapeType::Capsule ? Vec3(10, 0, 0) : Vec3(0, 10, 0);
      const BodyId id = w.add_body(b);
      for (int i = 0; i < 100; ++i) w.step();
      if (grounded) EXPECT_GE(w.last_step().contacts, 1);
      return w.twist(id).angular;
    };
    const Vec3 on_ground = spin(true), free = spin(false);
    std::printf("%s (%s): spin after 1 s on the ground (%.6f %.6f %.6f), free (%.6f %.6f %.6f) "
                "rad/s\n",
                shape_type_name(type), contact_model_name(GetParam()), on_ground.x(),
                on_ground.y(), on_ground.z(), free.x(), free.y(), free.z());
    EXPECT_LT((on_ground - free).norm(), 1e-3 * free.norm()) << shape_type_name(type);
  }
}

INSTANTIATE_TEST_SUITE_P(Contact, ContactModels,
                         ::testing::Values(ContactModel::Penalty, ContactModel::Exact), model_name);

// For a fixed active set, a primal penalty of stiffness k and a dual row of compliance 1/k
// give the same step: (H + G^T K G)^{-1} = H^{-1} - H^{-1} G^T (K^{-1} + G H^{-1} G^T)^{-1} G H^{-1}.
// A spinning sphere whose collision primitive (a small tetrahedron) touches the ground at the
// body's centre of mass
// (so all three rows, normal and sticking friction, have the effective mass m and the same
// undamped compliance tau^2 / m) against the same sphere held at that point by a ball joint of
// that compliance, solved in the dual.
// Three boxes joined by ball joints slide down an incline: every contact pass that only moves
// friction (a penalty anchor dragged, an exact sliding force turned) leaves the dual matrix as
// it was, and the sparse and iterative solvers solve the new right-hand side with their last
// factor or preconditioner. The tree solver factors every pass afresh: the same trajectory.
TEST_P(ContactModels, JointedBoxesSlideAlikeWhetherPassesRefactorOrNot) {
  const double mu = 0.3, angle = 0.5;
  auto run = [&](DualSolverKind solver) {
    WorldSettings s = contact_settings(GetParam());
    s.solver = solver;
    s.dual_tolerance = 1e-12;
    World w(s);
    add_ground(w, angle, mu);
    const Quat R(Eigen::AngleAxisd(angle, Vec3::UnitX()));
    BodyDef b;
    b.shape.type = ShapeType::Box;
    b.shape.size = Vec3(0.2, 0.2, 0.2);
    b.material.friction = mu;
    b.orientation = R;
    // Staggered across the slope: the links pull sideways.
    const std::vector<BodyId> boxes =
        add_chain(w, b, 3, R * Vec3(0, 0, 0.1), R * Vec3(0.2, 0.02, 0));
    std::vector<Vec12> q;
    for (int i = 0; i < 150; ++i) w.step();
    for (BodyId b : boxes) q.push_back(w.coordinates(b));
    return q;
  };
  const auto tree = run(DualSolverKind::Tree);
  const Vec3 down_slope = Eigen::AngleAxisd(angle, Vec3::UnitX()) * Vec3(0, -1, 0);
  EXPECT_GT(tree[0].tail<3>().dot(down_slope), 0.5);  // it slid
  for (DualSolverKind solver : {DualSolverKind::Sparse, DualSolverKind::Iterative}) {
    const auto other = run(solver);
    double diff = 0;
    for (std::size_t k = 0; k < tree.size(); ++k) {
      diff = std::max(diff, (other[k] - tree[k]).norm());
    }
    std::printf("%s: largest difference to the tree solver %.2e\n", dual_solver_name(solver), diff);
    EXPECT_LT(diff, 1e-9) << dual_solver_name(solver);
  }
}

TEST(ContactEquivalence, WoodburyMatchesCompliantDualRows) {
  const double h = 1e-2, tau = 2 * h, r = 0.1;
  auto make = [&](bool contact) {
    WorldSettings s = contact_settings(contact ? ContactModel::Penalty : ContactModel::None, h);
    s.contact.damping_ratio = 0;
    s.contact.time_constant = tau;
    s.contact.margin = 0;
    // No consistent start (generalized-alpha runs trial steps for jointed worlds only).
    s.time_integration = TimeIntegration::ImplicitEuler;
    World w(s);
    add_ground(w, 0, 10.0);
    BodyDef b;
    b.shape.type = ShapeType::Sphere;
    b.shape.radius = r;
    b.material.friction = 10.0;
    b.position = Vec3(0, 0, 0);  // the centre of mass on the ground
    b.angular_velocity = Vec3(0.3, -0.2, 0.5);
    // A small tetrahedron whose lowest vertex is the centre of mass: a vertex has no
    // rounding, so its normal and friction rows all act there, as the joint's. (A round
    // primitive's normal row acts at its core point instead.)
    CollisionPrimitive touch;
    touch.shape.type = ShapeType::Mesh;
    touch.shape.mesh.vertices = {Vec3(0, 0, 0), Vec3(0.02, 0, 0.03), Vec3(-0.01, 0.0173, 0.03),
                                 Vec3(-0.01, -0.0173, 0.03)};
    touch.shape.mesh.triangles = {{1, 2, 3}, {0, 2, 1}, {0, 3, 2}, {0, 1, 3}};
    b.collision.primitives.push_back(touch);
    const BodyId id = w.add_body(b);
    if (!contact) {
      JointDef j;
      j.type = JointType::Ball;
      j.body_b = id;
      j.anchor = Vec3::Zero();
      j.compliance = tau * tau / w.body_info(id).mass;
      w.add_joint(j);
    }
    return w;
  };
  // One step: the contact is detected touching (gap 0), taken into the set by the first
  // pass, and the step's increment comes from its three rows. (Later steps detect the
  // primitive's lowest vertex anew as the sphere turns.)
  World a = make(true), b = make(false);
  const BodyId id{1};
  a.step();
  b.step();
  ASSERT_EQ(a.last_step().contacts, 1);
  ASSERT_FALSE(a.contacts()[0].sliding);
  const Vec12 qa = a.coordinates(id), qb = b.coordinates(id);
  const double diff = (qa - qb).norm() / std::max(1.0, qa.norm());
  std::printf("Woodbury vs dual row: |q_a - q_b| / |q| = %.3g (step %.3g m)\n", diff,
              (a.velocities(id) * h).norm());
  EXPECT_LT(diff, 1e-10);
  // The same force: the contact's (normal and friction) against the joint's reaction.
  const Vec3 fa = a.contacts()[0].force, fb = b.joint_wrench(JointId{0}).force;
  std::printf("contact force (%.6f %.6f %.6f) N, joint (%.6f %.6f %.6f) N\n", fa.x(), fa.y(),
              fa.z(), fb.x(), fb.y(), fb.z());
  EXPECT_LT((fa - fb).norm(), 1e-8 * fa.norm());
}

// A kinematic lift rising at 0.5 m/s carries a box (exact contact, implicit Euler). The box
// gains the lift's work W (each step: the contact force times the lift's travel) and no more:
// implicit Euler only removes energy, so Delta E <= W at every step, up to the work of the
// contact on the change of the box's micrometre penetration (measured: 1.3e-6 of a step's
// W; the bound taken is 1e-5 of it). Over the run Delta E = W less the start's
// inelastic jump (the box takes the lift's speed at once: 1/2 m v^2 lost). The energy
// check counts W as input: a step takes at most one more Newton iteration (a converged
// one). Counted as a gain, every step would iterate to the cap.
TEST(ContactEnergy, AKinematicLiftsWorkIsInputNotAGain) {
  const double v = 0.5, h = 1e-2;
  World w(contact_settings(ContactModel::Exact, h));
  BodyDef lift;
  lift.name = "lift";
  lift.kind = BodyKind::Kinematic;
  lift.shape.type = ShapeType::Box;
  lift.shape.size = Vec3(1, 1, 0.1);
  lift.position = Vec3(0, 0, -0.05);
  lift.motion = [v](double t) {
    Pose p;
    p.position = Vec3(0, 0, -0.05 + v * t);
    return p;
  };
  const BodyId lift_id = w.add_body(lift);
  const BodyId box = add_box_on(w, 0, 0.5);
  const double m = w.body_info(box).mass;
  auto energy = [&] { return w.kinetic_energy(box) + w.potential_energy(box); };
  const double e0 = energy();
  double e = e0, work = 0, worst = -1e9;
  int most_iterations = 0;
  const int steps = 100;
  for (int i = 0; i < steps; ++i) {
    w.step();
    double step_work = 0;
    for (const ContactInfo& c : w.contacts()) {
      if (c.collider == lift_id) step_work += c.force.dot(Vec3(0, 0, v * h));
    }
    const double e1 = energy();
    worst = std::max(worst, (e1 - e) - step_work);
    work += step_work;
    e = e1;
    most_iterations = std::max(most_iterations, w.last_step().newton_iterations);
  }
  const double loss = e0 + work - e, jump = 0.5 * m * v * v;
  const double top = -0.05 + v * steps * h + 0.05;
  std::printf("lift: work %.4f J, energy gained %.4f J, lost %.4g J (the start's jump %.4g J); "
              "worst step Delta E - W %.3g J (a step's W: %.4f J); box bottom %.6f m (lift "
              "top %.6f); most Newton iterations in a step %d\n",
              work, e - e0, loss, jump, worst, v * h * m * kG, w.com_position(box).z() - 0.1,
              top, most_iterations);
  EXPECT_LT(worst, 1e-5 * v * h * m * kG);
  EXPECT_NEAR(loss, jump, 0.02 * jump);
  EXPECT_NEAR(w.com_position(box).z() - 0.1, top, 1e-4);
  EXPECT_LE(most_iterations, 2);
}

// A whip: a chain of 40 light capsule links (4 g), pinned at one end, falls from the horizontal
// onto two static posts (exact contact, frictionless, implicit Euler, h = 0.01 s). Its free end
// strikes at several m/s, and the linearised contact needs more than five Newton iterations to
// absorb that impact; accepted at five, the step gained 8.2 J. With no work from outside and
// implicit Euler, no step may gain energy.
TEST(ContactEnergy, FastImpactOfLightLinksGainsNoEnergy) {
  WorldSettings settings = contact_settings(ContactModel::Exact, 1e-2);
  settings.contact.friction = false;
  World w(settings);
  for (const Vec3& at : {Vec3(0.6, 0, -0.8), Vec3(0.3, 0, -0.9)}) {
    BodyDef post;
    post.kind = BodyKind::Static;
    post.shape.type = ShapeType::Box;
    post.shape.size = Vec3(0.1, 0.4, 1.0);
    post.position = at;
    w.add_body(post);
  }
  BodyDef link;
  link.shape.type = ShapeType::Capsule;
  link.shape.radius = 0.006;
  link.shape.length = 0.024;
  link.material = {1000.0, 1e8, 0.3};
  link.orientation = Quat::FromTwoVectors(Vec3::UnitZ(), Vec3::UnitX());
  const std::vector<BodyId> chain = add_chain(w, link, 40, 0.03, 0.0);
  JointDef pin;
  pin.type = JointType::Ball;
  pin.body_b = chain.front();
  pin.anchor = Vec3::Zero();
  w.add_joint(pin);
  double e = w.kinetic_energy() + w.potential_energy(), worst = -1e9;
  int most_iterations = 0, most_contacts = 0;
  for (int i = 0; i < 150; ++i) {
    w.step();
    const double e1 = w.kinetic_energy() + w.potential_energy();
    worst = std::max(worst, e1 - e);
    e = e1;
    most_iterations = std::max(most_iterations, w.last_step().newton_iterations);
    most_contacts = std::max(most_contacts, w.last_step().contacts);
  }
  std::printf("whip: largest energy change in a step %.3g J, most Newton iterations %d, most "
              "contacts %d\n", worst, most_iterations, most_contacts);
  EXPECT_GT(most_contacts, 5);
  EXPECT_LT(worst, 1e-9 * (std::abs(e) + 1));
}

}  // namespace
}  // namespace mabd
