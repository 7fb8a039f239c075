// World state snapshots and deep copies: a run interrupted by save_state and continued from
// restore_state in a freshly built world (or continued in a clone) ends bit-identical to the
// uninterrupted run, on worlds with limits, drives, springs and generalized-alpha, with
// penalty contact and friction, with joint loops and wind; snapshots of another model or
// malformed ones are rejected and leave the world unchanged.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>

#include "mabd/mabd.h"

namespace mabd {
namespace {

constexpr double kPi = 3.14159265358979323846;

using Builder = std::function<World()>;

BodyDef box(const std::string& name, const Vec3& size, const Vec3& position, double mass) {
  BodyDef d;
  d.name = name;
  d.shape.type = ShapeType::Box;
  d.shape.size = size;
  d.material = {1000.0, 1e9, 0.3};
  d.mass = mass;
  d.position = position;
  return d;
}

JointDef joint(const std::string& name, JointType type, BodyId a, BodyId b, const Vec3& anchor,
               const Vec3& axis) {
  JointDef j;
  j.name = name;
  j.type = type;
  j.body_a = a;
  j.body_b = b;
  j.anchor = anchor;
  j.axis = axis;
  return j;
}

/// Generalized-alpha world with every joint extra: a double pendulum on hinges (a bounded
/// position drive and limits it runs into; a velocity drive), a slider with limits and a
/// spring, a ball joint with a cone, twist limits and a spring, and a universal joint.
World limits_world(TimeIntegration integration = TimeIntegration::GeneralizedAlpha,
                   double dt = 2e-3) {
  WorldSettings s;
  s.dt = dt;
  s.time_integration = integration;
  World w(s);
  BodyDef d1 = box("arm1", Vec3(0.5, 0.04, 0.04), Vec3(0.25, 0, 0), 1.0);
  d1.angular_velocity = Vec3(0, 3.0, 0);
  const BodyId arm1 = w.add_body(d1);
  const BodyId arm2 = w.add_body(box("arm2", Vec3(0.5, 0.04, 0.04), Vec3(0.75, 0, 0), 0.5));
  JointDef h1 = joint("shoulder", JointType::Hinge, BodyId{}, arm1, Vec3::Zero(), Vec3::UnitY());
  h1.limits = JointLimits{-0.4, 0.3};
  h1.drive = JointDrive{DriveMode::Position, 0.2, 20.0, 1.0, 8.0};
  w.add_joint(h1);
  JointDef h2 = joint("elbow", JointType::Hinge, arm1, arm2, Vec3(0.5, 0, 0), Vec3::UnitY());
  h2.drive = JointDrive{DriveMode::Velocity, 2.0, 0.0, 0.5, 3.0};
  h2.limits = JointLimits{-1.0, 1.0};
  w.add_joint(h2);

  BodyDef ds = box("slider", Vec3(0.1, 0.1, 0.1), Vec3(0, 1, 0), 2.0);
  ds.linear_velocity = Vec3(0, 0, 1.5);
  const BodyId slider = w.add_body(ds);
  JointDef p = joint("slide", JointType::Prismatic, BodyId{}, slider, Vec3(0, 1, 0), Vec3::UnitZ());
  p.limits = JointLimits{-0.2, 0.15};
  p.spring = JointSpring{50.0, 2.0, 0.05};
  w.add_joint(p);

  BodyDef db = box("bob", Vec3(0.06, 0.06, 0.4), Vec3(0, 2, -0.2), 1.0);
  db.angular_velocity = Vec3(2.0, 1.0, 4.0);
  const BodyId bob = w.add_body(db);
  JointDef b = joint("ball", JointType::Ball, BodyId{}, bob, Vec3(0, 2, 0), -Vec3::UnitZ());
  b.cone = ConeLimits{0.3, -0.2, 0.25};
  w.add_joint(b);
  const BodyId tail = w.add_body(box("tail", Vec3(0.05, 0.05, 0.3), Vec3(0, 2, -0.55), 0.3));
  JointDef bs = joint("ball_spring", JointType::Ball, bob, tail, Vec3(0, 2, -0.4), Vec3::UnitZ());
  bs.spring = JointSpring{5.0, 0.1, 0.0};
  w.add_joint(bs);

  BodyDef du = box("cardan", Vec3(0.3, 0.05, 0.05), Vec3(0.15, 3, 0), 0.4);
  du.angular_velocity = Vec3(1.0, 2.0, -1.0);
  const BodyId cardan = w.add_body(du);
  JointDef u = joint("universal", JointType::Universal, BodyId{}, cardan, Vec3(0, 3, 0),
                     Vec3::UnitZ());
  u.axes = {Vec3::UnitY(), Vec3::UnitZ()};
  w.add_joint(u);
  return w;
}

/// Penalty contact with friction: boxes thrown onto a ground plane, and a ball that a
/// kinematic paddle (a prescribed motion in time) sweeps along the ground.
World contact_world() {
  WorldSettings s;
  s.dt = 5e-3;
  s.contact.model = ContactModel::Penalty;
  World w(s);
  BodyDef g;
  g.name = "ground";
  g.kind = BodyKind::Static;
  g.shape.type = ShapeType::Plane;
  g.material.friction = 0.6;
  w.add_body(g);
  for (int k = 0; k < 3; ++k) {
    BodyDef d = box("box" + std::to_string(k), Vec3(0.2, 0.2, 0.2),
                    Vec3(0.5 * k, 0, 0.11 + 0.05 * k), 8.0);
    d.material.friction = 0.5;
    d.linear_velocity = Vec3(1.0 - 0.5 * k, 0.3 * k, 0);
    d.angular_velocity = Vec3(0.5 * k, 0, 1.0);
    d.orientation = Quat(Eigen::AngleAxisd(0.1 * k, Vec3::UnitX()));
    w.add_body(d);
  }
  BodyDef ball;
  ball.name = "ball";
  ball.shape.type = ShapeType::Sphere;
  ball.shape.radius = 0.1;
  ball.material = {1100.0, 1e8, 0.3};
  ball.material.friction = 0.9;
  ball.position = Vec3(-0.5, 2, 0.3);
  ball.linear_velocity = Vec3(0.3, 0, 0);
  w.add_body(ball);
  BodyDef paddle = box("paddle", Vec3(0.05, 0.6, 0.2), Vec3::Zero(), 1.0);
  paddle.kind = BodyKind::Kinematic;
  paddle.mass.reset();
  paddle.motion = [](double t) {
    Pose p;
    p.position = Vec3(-1.0 + 1.5 * t, 2, 0.1);
    p.orientation = Quat(Eigen::AngleAxisd(0.3 * t, Vec3::UnitZ()));
    return p;
  };
  w.add_body(paddle);
  return w;
}

/// Three plates hanging on ball joints with springs (branch stiffness) in a gusty wind: the
/// gust phase is a function of the time and the positions.
World wind_world() {
  WorldSettings s;
  s.dt = 2e-3;
  s.wind.velocity = Vec3(6, 1, 0);
  s.wind.gust = 0.6;
  s.wind.gust_period = 0.25;
  World w(s);
  BodyId parent{};
  for (int k = 0; k < 3; ++k) {
    const BodyId plate = w.add_body(box("plate" + std::to_string(k), Vec3(0.02, 0.3, 0.3),
                                        Vec3(0, 0, -0.15 - 0.3 * k), 0.5));
    JointDef j = joint("branch" + std::to_string(k), JointType::Ball, parent, plate,
                       Vec3(0, 0, -0.3 * k), Vec3::UnitZ());
    j.spring = JointSpring{20.0, 0.2, 0.0};
    w.add_joint(j);
    parent = plate;
  }
  return w;
}

World scene_world(const std::string& name) {
  return build_world(load_scene(std::string(MABD_SOURCE_DIR) + "/scenes/" + name));
}

void step(World& w, int n) {
  for (int i = 0; i < n; ++i) w.step();
}

/// Number of entries of q and qdot over all bodies that differ (bitwise) between a and b.
int differences(const World& a, const World& b) {
  int diff = 0;
  for (std::uint32_t i = 0; i < a.body_count(); ++i) {
    const Vec12 qa = a.coordinates(BodyId{i}), qb = b.coordinates(BodyId{i});
    const Vec12 va = a.velocities(BodyId{i}), vb = b.velocities(BodyId{i});
    for (int k = 0; k < 12; ++k) diff += (qa[k] != qb[k]) + (va[k] != vb[k]);
  }
  return diff;
}

void expect_identical(const World& a, const World& b) {
  ASSERT_EQ(a.step_count(), b.step_count());
  EXPECT_EQ(a.time(), b.time());
  EXPECT_EQ(differences(a, b), 0);
  for (std::uint32_t j = 0; j < a.joint_count(); ++j) {
    const JointWrench wa = a.joint_wrench(JointId{j}), wb = b.joint_wrench(JointId{j});
    EXPECT_TRUE(wa.force == wb.force && wa.torque == wb.torque) << "joint " << j;
    EXPECT_EQ(a.joint_position(JointId{j}), b.joint_position(JointId{j})) << "joint " << j;
  }
  EXPECT_EQ(a.last_step().contacts, b.last_step().contacts);
  EXPECT_EQ(a.last_step().joint_residual, b.last_step().joint_residual);
}

/// `total` steps straight vs `split` steps, save_state, a freshly built world restored from
/// it, and the remaining steps.
void check_resume(const Builder& build, int split, int total) {
  World straight = build();
  step(straight, total);
  World first = build();
  step(first, split);
  const WorldState state = first.save_state();
  World resumed = build();
  resumed.restore_state(state);
  EXPECT_EQ(resumed.step_count(), split);
  step(resumed, total - split);
  expect_identical(straight, resumed);
  // The snapshot of the continued world is the straight run's, byte for byte.
  EXPECT_EQ(resumed.save_state().data, straight.save_state().data);
}

TEST(WorldState, ResumeWithLimitsDrivesAndGeneralizedAlphaIsBitIdentical) {
  World probe = limits_world();
  step(probe, 200);
  // The run exercises what the state carries: limits hit and drives saturated.
  EXPECT_GT(std::abs(probe.joint_position(*probe.find_joint("shoulder"))), 0.1);
  check_resume([] { return limits_world(); }, 100, 200);
}

TEST(WorldState, ResumeWithImplicitEulerIsBitIdentical) {
  check_resume([] { return limits_world(TimeIntegration::ImplicitEuler); }, 100, 200);
}

TEST(WorldState, ResumeWithPenaltyContactIsBitIdentical) {
  World probe = contact_world();
  step(probe, 100);
  EXPECT_GT(probe.last_step().contacts, 4);  // the state carries live contacts
  check_resume(contact_world, 100, 200);
}

TEST(WorldState, ResumeOfSceneFilesIsBitIdentical) {
  // Cone and twist limits (ragdoll), joint loops (bridge: the loop guard's schedule), the
  // ball-chain solver (heavy chain).
  for (const char* name : {"ragdoll_tumble.json", "rope_bridge.json", "heavy_chain.json"}) {
    SCOPED_TRACE(name);
    check_resume([name] { return scene_world(name); }, 60, 120);
  }
}

TEST(WorldState, ResumeInGustyWindIsBitIdentical) {
  World probe = wind_world();
  step(probe, 100);
  EXPECT_GT(probe.com_position(BodyId{2}).x(), 0.01);  // the wind acts
  check_resume(wind_world, 100, 200);
}

TEST(WorldState, ResumeAtStepZeroRunsTheConsistentStart) {
  check_resume([] { return limits_world(); }, 0, 50);
}

TEST(WorldState, PendingLoadsAndKinematicTargetsAreCarried) {
  auto build = [] {
    World w = contact_world();
    return w;
  };
  const BodyId box0 = *build().find_body("box0");
  const BodyId paddle = *build().find_body("paddle");
  Pose target;
  target.position = Vec3(-0.6, 2.05, 0.1);
  auto load = [&](World& w) {
    w.apply_wrench(box0, Vec3(30, 0, 50), Vec3(0, 0, 2));
    w.set_kinematic_target(paddle, target);
  };
  World straight = build();
  step(straight, 50);
  load(straight);
  step(straight, 50);
  World first = build();
  step(first, 50);
  load(first);  // pending: applied by the next step, which happens after the restore
  const WorldState state = first.save_state();
  World resumed = build();
  resumed.restore_state(state);
  step(resumed, 50);
  expect_identical(straight, resumed);
  // Without the pending load the run differs: the comparison can fail.
  World unloaded = build();
  step(unloaded, 100);
  EXPECT_GT(differences(straight, unloaded), 0);
}

TEST(WorldState, RunTimeControlIsPartOfTheState) {
  const auto build = [] { return limits_world(); };
  World straight = build();
  const JointId elbow = *straight.find_joint("elbow");
  const JointId shoulder = *straight.find_joint("shoulder");
  auto control = [&](World& w) {
    w.set_drive_target(elbow, -1.5);
    w.set_joint_limits(shoulder, JointLimits{-0.6, 0.6});
  };
  step(straight, 80);
  control(straight);
  step(straight, 80);
  World first = build();
  step(first, 80);
  control(first);
  const WorldState state = first.save_state();
  World resumed = build();  // built with the scene's drive and limits
  resumed.restore_state(state);
  EXPECT_EQ(resumed.joint_drive(elbow)->target, -1.5);
  EXPECT_EQ(resumed.joint_limits(shoulder)->upper, 0.6);
  step(resumed, 80);
  expect_identical(straight, resumed);
}

TEST(WorldState, CloneContinuesBitIdentically) {
  for (const Builder& build : {Builder([] { return limits_world(); }), Builder(contact_world)}) {
    World a = build();
    step(a, 70);
    World b = a.clone();
    expect_identical(a, b);
    step(a, 70);
    step(b, 70);
    expect_identical(a, b);
    // The copy is independent of the original.
    b.apply_wrench(BodyId{1}, Vec3(0, 0, 100), Vec3::Zero());
    b.step();
    a.step();
    EXPECT_GT(differences(a, b), 0);
  }
}

TEST(WorldState, RestoringTheSameStateTwiceReplaysTheSameSteps) {
  World w = contact_world();
  step(w, 40);
  const WorldState state = w.save_state();
  step(w, 40);
  const WorldState end = w.save_state();
  w.restore_state(state);
  step(w, 40);
  EXPECT_EQ(w.save_state().data, end.data);
}

TEST(WorldState, IterativeSolverResumesWithinItsTolerance) {
  // The iterative solver's preconditioner is rebuilt from the values of the first solve after
  // the restore: the run continues to within the solver's tolerance, not to the bit.
  auto build = [] {
    Scene scene = load_scene(std::string(MABD_SOURCE_DIR) + "/scenes/net_10.json");
    scene.settings.solver = DualSolverKind::Iterative;
    return build_world(scene);
  };
  World straight = build();
  step(straight, 60);
  World first = build();
  step(first, 30);
  World resumed = build();
  resumed.restore_state(first.save_state());
  step(resumed, 30);
  double worst = 0;
  for (std::uint32_t i = 0; i < straight.body_count(); ++i) {
    worst = std::max(worst, (straight.com_position(BodyId{i}) - resumed.com_position(BodyId{i}))
                                .lpNorm<Eigen::Infinity>());
  }
  std::printf("iterative solver: largest position difference after resume %.3g m\n", worst);
  EXPECT_LT(worst, 1e-7);
}

TEST(WorldState, SnapshotsOfAnotherModelAreRejected) {
  World source = limits_world();
  step(source, 10);
  const WorldState state = source.save_state();

  World other = contact_world();
  step(other, 3);
  const WorldState before = other.save_state();
  try {
    other.restore_state(state);
    FAIL() << "restored a state of another model";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("a different scene"), std::string::npos) << e.what();
  }
  EXPECT_EQ(other.save_state().data, before.data);  // unchanged

  // Same counts, another model: other masses.
  WorldSettings s;
  s.dt = 2e-3;
  World changed(s);
  World ref = limits_world();
  for (std::uint32_t i = 0; i < ref.body_count(); ++i) {
    changed.add_body(box(ref.body_info(BodyId{i}).name, Vec3(0.1, 0.1, 0.1),
                         ref.com_position(BodyId{i}), 1.0 + i));
  }
  EXPECT_THROW(changed.restore_state(state), InvalidArgument);

  // The same model at another time step.
  World finer = limits_world(TimeIntegration::GeneralizedAlpha, 1e-3);
  try {
    finer.restore_state(state);
    ADD_FAILURE() << "restored a state taken at another dt";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("dt"), std::string::npos) << e.what();
  }
}

TEST(WorldState, MalformedSnapshotsAreRejected) {
  World w = contact_world();
  step(w, 20);
  const WorldState good = w.save_state();
  World target = contact_world();
  const WorldState before = target.save_state();
  auto rejected = [&](WorldState bad, const char* expect) {
    try {
      target.restore_state(bad);
      ADD_FAILURE() << "accepted: " << expect;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(expect), std::string::npos) << e.what();
    }
    EXPECT_EQ(target.save_state().data, before.data);
  };
  WorldState truncated = good;
  truncated.data.resize(good.data.size() / 2);
  rejected(truncated, "truncated");
  WorldState empty;
  rejected(empty, "truncated");
  WorldState extended = good;
  extended.data.push_back(0);
  rejected(extended, "unexpected bytes");
  WorldState version = good;
  version.data[0] = 99;
  rejected(version, "version 99");
  // A NaN coordinate of the first body (after the 53-byte header).
  WorldState nan = good;
  const double bad = NAN;
  std::memcpy(nan.data.data() + 53, &bad, 8);
  rejected(nan, "non-finite");
}

}  // namespace
}  // namespace mabd
