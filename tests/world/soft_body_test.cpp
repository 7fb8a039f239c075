// Soft bodies in the World: the lockstep Newton loop against the standalone FEM solver, the
// attachment rows against momentum conservation, free fall and statics, exact and penalty
// contact against statics and the Coulomb incline, and bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "collision/closest_point.h"
#include "fem/fem_solid.h"
#include "fem/tet_mesh.h"
#include "mabd/mabd.h"

namespace mabd {
namespace {

/// A soft box [lo, hi] (m) of nx x ny x nz cells.
SoftBodyDef soft_box(const Vec3& lo, const Vec3& hi, int nx, int ny, int nz, double young) {
  const fem::TetMesh mesh = fem::make_box_mesh(lo, hi, nx, ny, nz);
  SoftBodyDef d;
  d.name = "blob";
  d.nodes = mesh.rest;
  d.tets.assign(mesh.tets.begin(), mesh.tets.end());
  d.material = {1000.0, young, 0.3, 0.5};
  return d;
}

/// Nodes of a box mesh whose rest position has coordinate `axis` equal to `value`.
std::vector<int> nodes_at(const SoftBodyDef& d, int axis, double value) {
  std::vector<int> out;
  for (int i = 0; i < static_cast<int>(d.nodes.size()); ++i) {
    if (std::abs(d.nodes[i][axis] - value) < 1e-12) out.push_back(i);
  }
  return out;
}

BodyDef plate(const Vec3& position, double mass) {
  BodyDef b;
  b.name = "plate";
  b.shape.size = Vec3(0.2, 0.2, 0.05);
  b.mass = mass;
  b.material.youngs_modulus = 1e9;
  b.position = position;
  return b;
}

WorldSettings implicit_euler(double h, const Vec3& g) {
  WorldSettings s;
  s.dt = h;
  s.gravity = g;
  s.time_integration = TimeIntegration::ImplicitEuler;
  s.newton_iterations = 50;
  s.tolerance = 1e-11;
  return s;
}

double max_diff(const std::vector<Vec3>& a, const Eigen::VectorXd& b) {
  double d = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    d = std::max(d, (a[i] - b.segment<3>(3 * i)).cwiseAbs().maxCoeff());
  }
  return d;
}

// A soft body alone, one node pinned to the world: the World's lockstep iterations converge to
// the standalone solver's backward Euler step (its own Newton loop with line search).
TEST(SoftBody, AloneMatchesTheStandaloneSolver) {
  SoftBodyDef d = soft_box(Vec3(0, 0, 0), Vec3(0.2, 0.1, 0.1), 4, 2, 2, 1e5);
  std::vector<int> pinned = nodes_at(d, 0, 0.0);
  for (int i : pinned) d.attachments.push_back({i, BodyId{}});
  const Vec3 g(0, 0, -9.81);
  World w(implicit_euler(0.01, g));
  const SoftBodyId id = w.add_soft_body(d);

  fem::FemModel model(fem::make_box_mesh(Vec3(0, 0, 0), Vec3(0.2, 0.1, 0.1), 4, 2, 2),
                      {1000.0, 1e5, 0.3}, fem::MassType::lumped, pinned);
  fem::FemSettings fs;
  fs.newton_tol = 1e-12;
  fem::FemSolid ref(std::move(model), fs);
  double largest = 0;
  for (int step = 0; step < 60; ++step) {
    w.step();
    ref.step(0.01, g);
    largest = std::max(largest, max_diff(w.soft_body_state(id).positions, ref.positions()));
  }
  // The cantilever sags by centimetres; the two agree to the solvers' tolerances.
  const double sag = -(w.soft_body_state(id).positions.back().z() - 0.1);
  EXPECT_GT(sag, 0.01);
  EXPECT_LT(largest, 1e-8);
}

// A soft box attached to a free plate, no gravity, the soft box thrown: the attachment forces
// are internal, so the total linear momentum stays (both sides implicit Euler), the
// attachments hold to round-off, and the energy only decreases (backward Euler dissipates).
TEST(SoftBody, AttachedToAFreePlateKeepsMomentumAndHolds) {
  World w(implicit_euler(0.005, Vec3::Zero()));
  const BodyId p = w.add_body(plate(Vec3(0.1, 0.1, 0.125), 0.5));
  SoftBodyDef d = soft_box(Vec3(0, 0, 0.15), Vec3(0.2, 0.2, 0.35), 2, 2, 2, 1e5);
  for (int i : nodes_at(d, 2, 0.15)) d.attachments.push_back({i, p});
  d.linear_velocity = Vec3(0.3, -0.2, 0.5);
  const SoftBodyId s = w.add_soft_body(d);
  const Vec3 p0 = w.linear_momentum();
  ASSERT_GT(p0.norm(), 0.1);
  double e_prev = w.kinetic_energy() + w.potential_energy();
  double worst_residual = 0, worst_momentum = 0, worst_gain = 0;
  for (int step = 0; step < 200; ++step) {
    w.step();
    worst_residual = std::max(worst_residual, w.last_step().attachment_residual);
    worst_momentum = std::max(worst_momentum, (w.linear_momentum() - p0).norm() / p0.norm());
    const double e = w.kinetic_energy() + w.potential_energy();
    worst_gain = std::max(worst_gain, e - e_prev);
    e_prev = e;
  }
  EXPECT_LT(worst_residual, 1e-10);
  EXPECT_LT(w.soft_attachment_residual(s), 1e-10);
  EXPECT_LT(worst_momentum, 1e-8);
  EXPECT_LE(worst_gain, 1e-9 * e_prev);
  // The plate was dragged along: it moves with the pair's centre of mass velocity.
  const double m_total = 0.5 + 1000.0 * 0.2 * 0.2 * 0.2;
  EXPECT_NEAR(w.twist(p).linear.z(), p0.z() / m_total, 0.05 * std::abs(p0.z() / m_total));
}

// Free fall of a plate with a soft box attached under gravity: the pair falls as one, each
// point following implicit Euler's discrete free fall x_n = x_0 - g h^2 n (n + 1) / 2.
TEST(SoftBody, AttachedPairFallsFreely) {
  const double h = 0.01, g = 9.81;
  World w(implicit_euler(h, Vec3(0, 0, -g)));
  const BodyId p = w.add_body(plate(Vec3(0.1, 0.1, 0.125), 0.5));
  SoftBodyDef d = soft_box(Vec3(0, 0, 0.15), Vec3(0.2, 0.2, 0.35), 2, 2, 2, 1e5);
  for (int i : nodes_at(d, 2, 0.15)) d.attachments.push_back({i, p});
  const SoftBodyId s = w.add_soft_body(d);
  const std::vector<Vec3> x0 = w.soft_body_state(s).positions;
  const int n = 50;
  for (int k = 0; k < n; ++k) w.step();
  const double drop = g * h * h * n * (n + 1) / 2;
  EXPECT_NEAR(w.com_position(p).z(), 0.125 - drop, 1e-9);
  const std::vector<Vec3> x = w.soft_body_state(s).positions;
  for (std::size_t i = 0; i < x.size(); ++i) {
    EXPECT_NEAR(x[i].z(), x0[i].z() - drop, 1e-9) << "node " << i;
  }
  EXPECT_LT(w.soft_elastic_energy(s), 1e-12);
}

// A plate held by a fixed joint to the world, a soft box attached under it: once the sag has
// settled (backward Euler damps it), the joint carries the weight of both.
TEST(SoftBody, HangingPairLoadsTheJointWithBothWeights) {
  const double g = 9.81, m_plate = 0.5;
  World w(implicit_euler(0.01, Vec3(0, 0, -g)));
  const BodyId p = w.add_body(plate(Vec3(0.1, 0.1, 0.375), m_plate));
  JointDef j;
  j.type = JointType::Fixed;
  j.body_a = BodyId{};
  j.body_b = p;
  j.anchor = Vec3(0.1, 0.1, 0.4);
  const JointId ji = w.add_joint(j);
  SoftBodyDef d = soft_box(Vec3(0, 0, 0.15), Vec3(0.2, 0.2, 0.35), 2, 2, 2, 1e5);
  for (int i : nodes_at(d, 2, 0.35)) d.attachments.push_back({i, p});
  const SoftBodyId s = w.add_soft_body(d);
  for (int k = 0; k < 300; ++k) w.step();
  const double m_soft = 1000.0 * 0.2 * 0.2 * 0.2;
  const JointWrench f = w.joint_wrench(ji);
  const double weight = (m_plate + m_soft) * g;
  EXPECT_NEAR(std::abs(f.force.z()), weight, 1e-4 * weight);
  EXPECT_NEAR(f.force.x(), 0, 1e-6 * weight);
  EXPECT_LT(w.soft_attachment_residual(s), 1e-10);
  EXPECT_LT(w.joint_residual(ji), 1e-8);
  // The soft box sagged (it hangs by its top face) and is at rest.
  EXPECT_GT(w.soft_elastic_energy(s), 0);
  EXPECT_LT(w.soft_kinetic_energy(s), 1e-6);
}

// A pendulum: a plate on a hinge with a soft box attached under it, released at 60 degrees,
// under each time integration and step size: no damping anywhere but backward Euler's in the
// soft box, so the total energy must not rise.
TEST(SoftBody, SwingingPendulumNeverGainsEnergy) {
  for (const TimeIntegration scheme :
       {TimeIntegration::GeneralizedAlpha, TimeIntegration::ImplicitEuler}) {
    for (const double h : {0.002, 0.01, 1.0 / 30}) {
      WorldSettings st;
      st.dt = h;
      st.time_integration = scheme;
      World w(st);
      const Quat tilt(Eigen::AngleAxisd(M_PI / 3, Vec3::UnitX()));
      const Vec3 pivot(0.1, 0.1, 0.5);
      BodyDef b = plate(pivot + tilt * Vec3(0, 0, -0.125), 0.5);
      b.orientation = tilt;
      const BodyId p = w.add_body(b);
      JointDef j;
      j.type = JointType::Hinge;
      j.body_b = p;
      j.anchor = pivot;
      j.axis = Vec3::UnitX();
      w.add_joint(j);
      SoftBodyDef d = soft_box(Vec3(0, 0, 0.15), Vec3(0.2, 0.2, 0.35), 2, 2, 2, 1e5);
      std::vector<int> top = nodes_at(d, 2, 0.35);
      for (Vec3& x : d.nodes) x = pivot + tilt * (x - pivot);
      for (int i : top) d.attachments.push_back({i, p});
      const SoftBodyId s = w.add_soft_body(d);
      const double e0 = w.kinetic_energy() + w.potential_energy();
      double e_max = e0, swing = 0;
      const int n = static_cast<int>(std::lround(2.0 / h));
      for (int k = 0; k < n; ++k) {
        w.step();
        e_max = std::max(e_max, w.kinetic_energy() + w.potential_energy());
        swing = std::max(swing, w.soft_kinetic_energy(s));
      }
      const std::string label = std::string(scheme == TimeIntegration::ImplicitEuler ? "IE" : "GA") +
                                " h=" + std::to_string(h);
      EXPECT_GT(swing, 1.0) << label;  // it swings
      EXPECT_LE(e_max - e0, 1e-6 * std::abs(e0) + 1e-9) << label;
      EXPECT_LT(w.soft_attachment_residual(s), 1e-9) << label;
    }
  }
}

// A kinematic body carries its pinned nodes along.
TEST(SoftBody, PinsFollowAKinematicBody) {
  World w(implicit_euler(0.01, Vec3::Zero()));
  BodyDef k = plate(Vec3(0.1, 0.1, 0.125), 1.0);
  k.kind = BodyKind::Kinematic;
  k.linear_velocity = Vec3(0, 0, 0.2);
  const BodyId kb = w.add_body(k);
  SoftBodyDef d = soft_box(Vec3(0, 0, 0.15), Vec3(0.2, 0.2, 0.35), 2, 2, 2, 1e5);
  const std::vector<int> bottom = nodes_at(d, 2, 0.15);
  for (int i : bottom) d.attachments.push_back({i, kb});
  const SoftBodyId s = w.add_soft_body(d);
  for (int n = 0; n < 20; ++n) w.step();
  const auto x = w.soft_body_state(s).positions;
  for (int i : bottom) EXPECT_NEAR(x[i].z(), 0.15 + 0.2 * 0.2, 1e-12);
  EXPECT_GT(x.back().z(), 0.35 + 0.01);  // the rest was pulled up after it
}

/// A plate on an off-centre ball joint with a soft box hanging from it (bodies: plate 0;
/// soft body 0), Young's modulus E (Pa) of the soft box.
World hanging_pair(double E) {
  World w(implicit_euler(0.01, Vec3(0, 0, -9.81)));
  const BodyId p = w.add_body(plate(Vec3(0.1, 0.1, 0.375), 0.5));
  JointDef j;
  j.type = JointType::Ball;
  j.body_b = p;
  j.anchor = Vec3(0.0, 0.1, 0.4);
  w.add_joint(j);
  SoftBodyDef d = soft_box(Vec3(0, 0, 0.15), Vec3(0.2, 0.2, 0.35), 2, 2, 2, E);
  for (int i : nodes_at(d, 2, 0.35)) d.attachments.push_back({i, p});
  w.add_soft_body(d);
  return w;
}

// A clone steps on identically.
TEST(SoftBody, CloneStepsIdentically) {
  World w = hanging_pair(1e5);
  const BodyId p{0};
  const SoftBodyId s{0};
  for (int n = 0; n < 10; ++n) w.step();
  World c = w.clone();
  for (int n = 0; n < 10; ++n) {
    w.step();
    c.step();
  }
  const auto a = w.soft_body_state(s).positions, b = c.soft_body_state(s).positions;
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i], b[i]);
  EXPECT_EQ(w.coordinates(p), c.coordinates(p));
}

// save_state / restore_state carry the soft bodies: stepping on from a restored state
// repeats the steps bit for bit.
TEST(SoftBody, RestoredStateStepsIdentically) {
  World w = hanging_pair(1e5);
  const BodyId p{0};
  const SoftBodyId s{0};
  for (int n = 0; n < 10; ++n) w.step();
  const WorldState saved = w.save_state();
  for (int n = 0; n < 10; ++n) w.step();
  const auto a = w.soft_body_state(s);
  const Vec12 qa = w.coordinates(p);
  w.restore_state(saved);
  for (int n = 0; n < 10; ++n) w.step();
  const auto b = w.soft_body_state(s);
  for (std::size_t i = 0; i < a.positions.size(); ++i) {
    EXPECT_EQ(a.positions[i], b.positions[i]);
    EXPECT_EQ(a.velocities[i], b.velocities[i]);
  }
  EXPECT_EQ(qa, w.coordinates(p));
  // Another soft body model does not take it.
  World other = hanging_pair(2e5);
  EXPECT_THROW(other.restore_state(saved), InvalidArgument);
}

BodyDef ground(double tilt) {
  BodyDef g;
  g.name = "ground";
  g.kind = BodyKind::Static;
  g.shape.type = ShapeType::Plane;
  g.orientation = Quat(Eigen::AngleAxisd(tilt, Vec3::UnitX()));
  g.material.friction = 1.0;
  return g;
}

WorldSettings exact_contact(double h) {
  WorldSettings s = implicit_euler(h, Vec3(0, 0, -9.81));
  s.contact.model = ContactModel::Exact;
  return s;
}

// A soft cube set on the ground settles where the same cube with its bottom face pinned
// does (the friction holds the sole): the contacts carry its weight without sinking.
TEST(SoftBody, RestsOnTheGroundAsIfItsSoleWerePinned) {
  World w(exact_contact(0.01));
  const BodyId floor = w.add_body(ground(0));
  SoftBodyDef d = soft_box(Vec3(0, 0, 0), Vec3(0.2, 0.2, 0.2), 2, 2, 2, 2e4);
  d.material.friction = 1.0;
  const SoftBodyId s = w.add_soft_body(d);
  double lowest = 0;
  for (int n = 0; n < 300; ++n) {
    w.step();
    for (const Vec3& x : w.soft_body_state(s).positions) lowest = std::min(lowest, x.z());
  }
  EXPECT_LT(w.soft_kinetic_energy(s), 1e-6);
  // The reference: the cube's bottom nodes pinned, static equilibrium under gravity.
  fem::FemModel model(fem::make_box_mesh(Vec3(0, 0, 0), Vec3(0.2, 0.2, 0.2), 2, 2, 2),
                      {1000.0, 2e4, 0.3}, fem::MassType::lumped, nodes_at(d, 2, 0.0));
  fem::FemSolid ref(std::move(model));
  ref.static_solve(Vec3(0, 0, -9.81));
  const auto x = w.soft_body_state(s).positions;
  double top = 0, top_ref = 0;
  for (int i : nodes_at(d, 2, 0.2)) {
    top += x[i].z();
    top_ref += ref.position(i).z();
  }
  const double sag_ref = 0.2 * 9 - top_ref;
  ASSERT_GT(sag_ref, 1e-3);  // a visible sag: 1 mm and more
  EXPECT_NEAR(0.2 * 9 - top, sag_ref, 0.02 * sag_ref);
  // No sinking beyond the exact model's compliance floor: 1e-3 of each row's own compliance
  // (here the soft solid's, which the sag measures).
  EXPECT_GT(lowest, -2e-3 * sag_ref / 9) << "sag " << sag_ref / 9;
  // The step statistics count the sole's nine pushing nodes and their deepest penetration.
  const StepStats& stats = w.last_step();
  EXPECT_EQ(stats.contacts, 9);
  EXPECT_NEAR(stats.max_penetration, -std::min(0.0, [&] {
    double low = 0;
    for (int i : nodes_at(d, 2, 0.0)) low = std::min(low, x[i].z());
    return low;
  }()), 1e-12);
  // World::contacts lists the same nine nodes on the ground; at rest their forces carry the
  // cube's weight (1000 kg/m^3 x 8e-3 m^3 x g), each along the ground's normal.
  const std::vector<int> sole = nodes_at(d, 2, 0.0);
  const std::vector<ContactInfo> contacts = w.contacts();
  ASSERT_EQ(contacts.size(), 9u);
  Vec3 total = Vec3::Zero();
  for (const ContactInfo& c : contacts) {
    EXPECT_FALSE(c.body.valid());
    EXPECT_EQ(c.soft_body, s);
    EXPECT_EQ(c.collider, floor);
    ASSERT_NE(std::find(sole.begin(), sole.end(), c.node), sole.end()) << c.node;
    EXPECT_LT((c.point - x[c.node]).norm(), 1e-15);
    EXPECT_NEAR(c.normal.z(), 1.0, 1e-12);
    EXPECT_NEAR(c.depth, -x[c.node].z(), 1e-12);
    EXPECT_GT(c.force.z(), 0);
    total += c.force;
  }
  const double weight = 1000 * 0.008 * 9.81;
  std::printf("soft contacts: %zu sole nodes carry %.6f N of the cube's %.6f N weight\n",
              contacts.size(), total.z(), weight);
  EXPECT_NEAR(total.z(), weight, 1e-3 * weight);
  EXPECT_LT(total.head<2>().norm(), 1e-3 * weight);
}

/// A stiff soft block (10 x 10 x 5 cm, E = 1e7 Pa) resting on the ground tilted by theta
/// about x, both with friction mu, settled for 20 steps of h and then stepped 100 more: the
/// acceleration (m/s^2) of its node centroid down the slope, from its travel and its velocity
/// at the start, a = 2 (d - v0 t) / t^2.
double incline_acceleration(World& w, double theta, double mu, double h) {
  BodyDef plane = ground(theta);
  plane.material.friction = mu;
  w.add_body(plane);
  const Quat tilt(Eigen::AngleAxisd(theta, Vec3::UnitX()));
  SoftBodyDef d = soft_box(Vec3(-0.05, -0.05, 0), Vec3(0.05, 0.05, 0.05), 2, 2, 1, 1e7);
  for (Vec3& x : d.nodes) x = tilt * x;
  d.material.friction = mu;
  const SoftBodyId s = w.add_soft_body(d);
  auto mean_of = [](const std::vector<Vec3>& v) {
    Vec3 c = Vec3::Zero();
    for (const Vec3& p : v) c += p;
    return Vec3(c / static_cast<double>(v.size()));
  };
  const Vec3 downhill = tilt * Vec3(0, -1, 0);
  for (int n = 0; n < 20; ++n) w.step();  // settle the contact
  const Vec3 c0 = mean_of(w.soft_body_state(s).positions);
  const Vec3 v0 = mean_of(w.soft_body_state(s).velocities);
  const int steps = 100;
  for (int n = 0; n < steps; ++n) w.step();
  const double t = steps * h;
  return 2 * ((mean_of(w.soft_body_state(s).positions) - c0).dot(downhill) - v0.dot(downhill) * t) /
         (t * t);
}

// A stiff soft block on a 30 degree incline with friction mu = 0.3 < tan 30: its centre of
// mass slides with a = g (sin - mu cos), the rigid block's acceleration.
TEST(SoftBody, SlidesDownAnInclineAtTheCoulombAcceleration) {
  const double theta = M_PI / 6, mu = 0.3, g = 9.81, h = 0.005;
  World w(exact_contact(h));
  const double a = incline_acceleration(w, theta, mu, h);
  const double expected = g * (std::sin(theta) - mu * std::cos(theta));
  EXPECT_NEAR(a, expected, 0.03 * expected);
}

// Pinned nodes on the ground take no contact (their pin moves them): a soft box whose bottom
// edge is pinned to the world at ground level settles with the rest of its sole on the ground.
TEST(SoftBody, PinnedNodesOnTheGroundTakeNoContact) {
  World w(exact_contact(0.01));
  w.add_body(ground(0));
  SoftBodyDef d = soft_box(Vec3(0, 0, 0), Vec3(0.2, 0.2, 0.1), 2, 2, 1, 5e4);
  for (int i : nodes_at(d, 1, 0.0)) {
    if (d.nodes[i].z() == 0) d.attachments.push_back({i, BodyId{}});
  }
  ASSERT_EQ(d.attachments.size(), 3u);
  const SoftBodyId s = w.add_soft_body(d);
  for (int n = 0; n < 50; ++n) w.step();
  double lowest = 1;
  for (const Vec3& x : w.soft_body_state(s).positions) lowest = std::min(lowest, x.z());
  EXPECT_GT(lowest, -1e-5);
  EXPECT_LT(w.soft_kinetic_energy(s), 1e-4);
}

WorldSettings penalty_contact(double h) {
  WorldSettings s = implicit_euler(h, Vec3(0, 0, -9.81));
  s.contact.model = ContactModel::Penalty;
  s.contact.time_constant = 2 * h;  // s (the default in implicit Euler is h / 4), critically damped
  return s;
}

double total_energy(const World& w) { return w.kinetic_energy() + w.potential_energy(); }

/// Penalty contact springs of soft box `d` (as soft_box made it, 2e4 Pa) at the nodes `sole`
/// in the world's current shape of soft body `s`: k_r = m_r / tau^2 (N/m) with the row's
/// effective mass m_r = h^2 / (H^-1)_rr, H = M/h^2 + K(x) the solid's Hessian along z
/// (soft_bodies.cpp, contact_laws.h), from the standalone FEM solver.
std::vector<double> sole_springs(const World& w, SoftBodyId s, const SoftBodyDef& d,
                                 const std::vector<int>& sole, double h, double tau) {
  const SoftBodyState st = w.soft_body_state(s);
  fem::TetMesh mesh = fem::make_box_mesh(d.nodes.front(), d.nodes.back(), 2, 2, 2);
  fem::FemSolid ref(fem::FemModel(std::move(mesh), {1000.0, 2e4, 0.3}, fem::MassType::lumped, {}));
  fem::FemState x = ref.state();
  for (std::size_t i = 0; i < st.positions.size(); ++i) x.x.segment<3>(3 * i) = st.positions[i];
  ref.set_state(x);
  ref.factor_hessian(h);
  std::vector<int> coords;
  for (int i : sole) coords.push_back(3 * i + 2);
  const Eigen::MatrixXd Z = ref.hessian_columns(coords);
  std::vector<double> k(sole.size());
  for (std::size_t r = 0; r < sole.size(); ++r) {
    k[r] = h * h / Z(coords[r], static_cast<Eigen::Index>(r)) / (tau * tau);
  }
  return k;
}

// Penalty contact: a soft cube set on the ground sinks until its sole's springs carry its
// weight, sum_r k_r d_r = m g over the penetrations d_r (the springs of sole_springs). The
// total energy never rises: kinetic + gravity + elastic + the springs' stored energy.
TEST(SoftBody, PenaltyContactSinksAsItsSpringsPredict) {
  const double h = 0.01, tau = 2 * h, g = 9.81;
  World w(penalty_contact(h));
  w.add_body(ground(0));
  SoftBodyDef d = soft_box(Vec3(0, 0, 0), Vec3(0.2, 0.2, 0.2), 2, 2, 2, 2e4);
  d.material.friction = 1.0;
  const SoftBodyId s = w.add_soft_body(d);
  const std::vector<int> sole = nodes_at(d, 2, 0.0);
  ASSERT_EQ(sole.size(), 9u);
  // Penetrations d_r of the sole's nodes (m).
  auto depths = [&] {
    std::vector<double> out;
    const auto x = w.soft_body_state(s).positions;
    for (int i : sole) out.push_back(std::max(0.0, -x[i].z()));
    return out;
  };
  // The springs' energy S: each step adds the work of their static forces k_r d_r at the
  // step's end, sum_r 1/2 k_r (d_r'^2 - d_r^2) with k_r at the end (backward Euler's
  // accounting; their stiffness follows the solid's shape, so 1/2 k_r d_r^2 alone is not a
  // potential).
  double springs = 0, gain = -INFINITY, gain_without_springs = -INFINITY;
  std::vector<double> d_prev = depths();
  double bare_prev = total_energy(w);
  for (int n = 0; n < 300; ++n) {
    w.step();
    const std::vector<double> k = sole_springs(w, s, d, sole, h, tau), dr = depths();
    double stored = 0;
    for (std::size_t r = 0; r < k.size(); ++r) {
      stored += 0.5 * k[r] * (dr[r] * dr[r] - d_prev[r] * d_prev[r]);
    }
    springs += stored;
    const double bare = total_energy(w);
    gain = std::max(gain, bare - bare_prev + stored);
    gain_without_springs = std::max(gain_without_springs, bare - bare_prev);
    bare_prev = bare;
    d_prev = dr;
  }
  EXPECT_LT(gain, 1e-9) << "largest rise of the total energy over one step (J)";
  EXPECT_LT(w.soft_kinetic_energy(s), 1e-6);
  const std::vector<double> k = sole_springs(w, s, d, sole, h, tau), dr = depths();
  double carried = 0, stiffness = 0, mean = 0, deepest = 0;
  for (std::size_t r = 0; r < k.size(); ++r) {
    carried += k[r] * dr[r];
    stiffness += k[r];
    mean += dr[r] / static_cast<double>(k.size());
    deepest = std::max(deepest, dr[r]);
  }
  const double weight = 1000.0 * 0.2 * 0.2 * 0.2 * g;
  EXPECT_NEAR(carried, weight, 0.01 * weight);
  // The sole sinks by about weight / sum k_r (the springs in parallel; its corners sink
  // more than its centre).
  const double expected = weight / stiffness;
  EXPECT_NEAR(mean, expected, 0.25 * expected) << "deepest " << deepest;
  // No other node touches the ground.
  const auto x = w.soft_body_state(s).positions;
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (std::find(sole.begin(), sole.end(), static_cast<int>(i)) == sole.end()) {
      EXPECT_GT(x[i].z(), 0.05) << "node " << i;
    }
  }
  std::printf("penalty sole: mean depth %.4g m, weight / sum k_r %.4g m, deepest %.4g m, "
              "sum k_r d_r / weight %.6f; largest one-step energy change %.3g J (%.3g J "
              "without the springs' %.3g J)\n",
              mean, expected, deepest, carried / weight, gain, gain_without_springs, springs);
}

// The incline with penalty contact: the block slides with a = g (sin - mu cos).
TEST(SoftBody, PenaltyContactSlidesAtTheCoulombAcceleration) {
  const double theta = M_PI / 6, mu = 0.3, g = 9.81, h = 0.005;
  World w(penalty_contact(h));
  const double a = incline_acceleration(w, theta, mu, h);
  const double expected = g * (std::sin(theta) - mu * std::cos(theta));
  EXPECT_NEAR(a, expected, 0.05 * expected);
  std::printf("penalty incline: a = %.5g m/s^2, g (sin - mu cos) = %.5g m/s^2 (%+.2f%%)\n", a,
              expected, 100 * (a - expected) / expected);
}

/// A plate of `mass` (kg) welded to the world with its top face at z = 0.4 m: a dynamic body
/// whose contacts go through the joint solve. Returns the weld.
JointId weld_plate(World& w, double mass) {
  const BodyId p = w.add_body(plate(Vec3(0, 0, 0.375), mass));
  JointDef j;
  j.type = JointType::Fixed;
  j.body_b = p;
  j.anchor = Vec3(0, 0, 0.375);
  return w.add_joint(j);
}

// A soft cube dropped on a plate held by a fixed joint: the energy never rises, and once the
// cube has settled the joint carries the weight of both (contact between a soft body and a
// dynamic body).
TEST(SoftBody, LandsOnADynamicPlate) {
  const double g = 9.81, m_plate = 0.5;
  World w(exact_contact(0.01));
  const JointId ji = weld_plate(w, m_plate);
  SoftBodyDef d = soft_box(Vec3(-0.05, -0.05, 0.41), Vec3(0.05, 0.05, 0.51), 2, 2, 2, 5e4);
  d.material.friction = 0.5;
  const SoftBodyId s = w.add_soft_body(d);
  double lowest = 1, gain = 0, e_prev = w.kinetic_energy() + w.potential_energy();
  for (int n = 0; n < 300; ++n) {
    w.step();
    for (const Vec3& x : w.soft_body_state(s).positions) lowest = std::min(lowest, x.z());
    const double e = w.kinetic_energy() + w.potential_energy();
    gain = std::max(gain, e - e_prev);
    e_prev = e;
  }
  EXPECT_LT(gain, 1e-9);  // the impact and the rest only dissipate
  const double weight = (m_plate + 1000.0 * 0.1 * 0.1 * 0.1) * g;
  EXPECT_NEAR(std::abs(w.joint_wrench(ji).force.z()), weight, 1e-3 * weight);
  EXPECT_GT(lowest, 0.4 - 1e-5);  // on the plate's top face (z = 0.4), not through it
  EXPECT_LT(w.soft_kinetic_energy(s), 1e-6);
}

// Candidate contact points far from touching stay out of the rows solved (a working set that
// a point joins when the increments would bring it within reach): a margin that makes every
// node of the box a candidate from the first step must land it as the default margin does.
TEST(SoftBody, FarCandidatesLeaveALandingUnchanged) {
  auto land = [](double margin) {
    WorldSettings st = exact_contact(0.01);
    st.contact.margin = margin;
    World w(st);
    weld_plate(w, 0.5);
    SoftBodyDef d = soft_box(Vec3(-0.05, -0.05, 0.41), Vec3(0.05, 0.05, 0.51), 2, 2, 2, 5e4);
    d.material.friction = 0.5;
    const SoftBodyId s = w.add_soft_body(d);
    for (int n = 0; n < 120; ++n) w.step();
    return w.soft_body_state(s).positions;
  };
  const std::vector<Vec3> near = land(1e-3), far = land(0.3);
  double diff = 0, lowest = 1;
  for (std::size_t i = 0; i < near.size(); ++i) {
    diff = std::max(diff, (near[i] - far[i]).norm());
    lowest = std::min(lowest, near[i].z());
  }
  EXPECT_LT(diff, 1e-7);          // m
  EXPECT_GT(lowest, 0.4 - 1e-5);  // it landed on the plate's top face
}

// A frictionless soft box lands off-centre on a light sphere that can only turn (a ball joint
// at its centre), tips over it and slides off: every contact force passes through the centre,
// so the sphere must not turn. The sphere meets the box's bottom face between its nodes: the
// face's own points keep out of it (no face nearer the centre than the radius), and, as the
// face rolls over it, without pushing out what a pivot fixed for the step let in (which gained
// up to 2e-3 J a step). Those contacts follow the face each iteration: 10-16 iterations a step
// while they hold (the contact's curvature is not in the Newton matrix), 4 on the nodes. The contact's normal row runs from the centre, less the radius: from
// the touched point, a turn would carry that point off under the node, and the sphere spun at
// 70 rad/s to let it in. The sphere's joint is a ball chain of one link, whose closed-form
// dual kept no rows for the contact's response: the Newton loop then ran to its cap of 50
// iterations every step and let the box 3.7 cm into the sphere.
struct SphereLanding {
  double spin = 0, inside = 0, face_inside = 0, gain = 0;  // rad/s, m, m, J (worst of steps)
  int contact_steps = 0, most_iterations = 0;
};

SphereLanding land_on_a_light_sphere(bool face_contacts) {
  World w(exact_contact(0.01));
  BodyDef ball;
  ball.name = "ball";
  ball.shape.type = ShapeType::Sphere;
  ball.shape.radius = 0.05;
  ball.mass = 0.01;
  ball.material.youngs_modulus = 1e9;
  const BodyId b = w.add_body(ball);
  JointDef j;
  j.type = JointType::Ball;
  j.body_b = b;
  j.anchor = Vec3::Zero();
  w.add_joint(j);
  SoftBodyDef d = soft_box(Vec3(-0.02, -0.05, 0.052), Vec3(0.08, 0.05, 0.152), 2, 2, 2, 5e4);
  d.material.friction = 0;
  d.face_contacts = face_contacts;
  const SoftBodyId s = w.add_soft_body(d);
  SphereLanding r;
  double &spin = r.spin, &inside = r.inside, &face_inside = r.face_inside, &gain = r.gain;
  double e_prev = w.kinetic_energy() + w.potential_energy();
  for (int n = 0; n < 60; ++n) {
    w.step();
    spin = std::max(spin, w.twist(b).angular.norm());
    const std::vector<Vec3>& x = w.soft_body_state(s).positions;
    for (const Vec3& p : x) inside = std::max(inside, 0.05 - p.norm());
    for (const auto& t : w.soft_body_tets(s)) {  // every face, inner ones farther than outer
      for (int f = 0; f < 4; ++f) {
        const Vec3& a = x[t[(f + 1) % 4]];
        const Vec3& bb = x[t[(f + 2) % 4]];
        const Vec3& c = x[t[(f + 3) % 4]];
        const Vec3 near = detail::closest_on_triangle(Vec3::Zero(), a, bb, c).point;
        face_inside = std::max(face_inside, 0.05 - near.norm());
      }
    }
    r.contact_steps += w.last_step().contacts > 0;
    r.most_iterations = std::max(r.most_iterations, w.last_step().newton_iterations);
    const double e = w.kinetic_energy() + w.potential_energy();
    gain = std::max(gain, e - e_prev);
    e_prev = e;
  }
  return r;
}

TEST(SoftBody, FrictionlessLandingDoesNotTurnALightSphere) {
  const SphereLanding r = land_on_a_light_sphere(true);
  EXPECT_GT(r.contact_steps, 15);
  EXPECT_LE(r.most_iterations, 20);
  EXPECT_LT(r.spin, 1e-6);         // rad/s
  EXPECT_LT(r.inside, 1e-5);       // m: no node inside the sphere
  EXPECT_LT(r.face_inside, 1e-5);  // m: nor any point of a face
  EXPECT_LT(r.gain, 1e-9);         // J
}

// The same landing with face_contacts off: the nodes alone touch, and a sphere of radius 5 cm under
// 5 cm cells presses into the bottom face between them (what the faces are for), while no
// node enters it and the landing stays as calm (no spin, no energy gained).
TEST(SoftBody, WithoutFaceContactsOnlyTheNodesKeepOut) {
  const SphereLanding r = land_on_a_light_sphere(false);
  EXPECT_GT(r.contact_steps, 15);
  EXPECT_LT(r.spin, 1e-6);         // rad/s
  EXPECT_LT(r.inside, 1e-5);       // m
  EXPECT_GT(r.face_inside, 5e-3);  // m: the faces are not kept out
  EXPECT_LT(r.gain, 1e-9);         // J
}

// A step whose soft loop ends above the tolerance is taken, and said once: a hanging box
// swinging from one pinned corner, with a tolerance below round-off, warns at its first step
// and only then; at the default tolerance it converges and says nothing.
TEST(SoftBody, AnUnconvergedSoftStepIsSaidOnce) {
  for (const double tolerance : {1e-30, 1e-8}) {
    WorldSettings settings = implicit_euler(0.01, Vec3(0, 0, -9.81));
    settings.tolerance = tolerance;
    World w(settings);
    SoftBodyDef d = soft_box(Vec3(0, 0, 0), Vec3(0.1, 0.1, 0.1), 1, 1, 1, 5e4);
    d.attachments.push_back({0, BodyId{}});
    w.add_soft_body(d);
    const std::size_t before = w.warnings().size();
    for (int n = 0; n < 3; ++n) w.step();
    const std::vector<std::string>& said = w.warnings();
    if (tolerance < 1e-20) {
      ASSERT_EQ(said.size(), before + 1);
      EXPECT_NE(said.back().find("step 1: the soft bodies' Newton loop stopped at"),
                std::string::npos)
          << said.back();
      EXPECT_NE(said.back().find("tolerance 1e-30 m"), std::string::npos) << said.back();
    } else {
      EXPECT_EQ(said.size(), before);
    }
  }
}

TEST(SoftBody, BadInputIsNamed) {
  World w(implicit_euler(0.01, Vec3::Zero()));
  const BodyId p = w.add_body(plate(Vec3(0, 0, 0), 1.0));
  auto expect_error = [&](const SoftBodyDef& d, const std::string& what) {
    try {
      w.add_soft_body(d);
      ADD_FAILURE() << "accepted: " << what;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("soft body 'blob'"), std::string::npos) << e.what();
    }
  };
  const SoftBodyDef good = soft_box(Vec3(0, 0, 0.1), Vec3(0.1, 0.1, 0.2), 1, 1, 1, 1e5);
  SoftBodyDef d = good;
  d.tets[2][1] = 99;
  expect_error(d, "tet 2");
  d = good;
  d.attachments = {{0, p}, {0, p}};
  expect_error(d, "attachment 1: node 0 is attached already");
  d = good;
  d.attachments = {{100, p}};
  expect_error(d, "attachment 0: node 100 out of range");
  d = good;
  d.attachments = {{0, BodyId{7}}};
  expect_error(d, "attachment 0: unknown body id 7");
  d = good;
  d.material.poisson_ratio = 0.5;
  expect_error(d, "Poisson ratio");
  d = good;
  d.tets.clear();
  expect_error(d, "no tets");
  EXPECT_EQ(w.soft_body_count(), 0u);
  // Inverted tets are reoriented, not rejected.
  d = good;
  for (auto& t : d.tets) std::swap(t[0], t[1]);
  EXPECT_NO_THROW(w.add_soft_body(d));
  EXPECT_EQ(w.soft_body_count(), 1u);
  expect_error(good, "the name is taken");
}

}  // namespace
}  // namespace mabd
