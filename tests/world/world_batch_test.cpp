// WorldBatch: copies stepped on threads give the same bits as the copies stepped one by one,
// whatever the thread count; per-world set-up, controls, failures, resets and rollouts.
#include <gtest/gtest.h>

#include <cmath>

#include "mabd/batch.h"
#include "mabd/mabd.h"

namespace mabd {
namespace {

/// A hinged rod (0.5 m box, pivot at one end) with a position drive on the hinge.
World driven_pendulum() {
  WorldSettings s;
  s.dt = 1e-2;
  World w(s);
  BodyDef rod;
  rod.name = "rod";
  rod.shape.type = ShapeType::Box;
  rod.shape.size = Vec3(0.5, 0.04, 0.04);
  rod.position = Vec3(0.25, 0, 0);
  const BodyId id = w.add_body(rod);
  JointDef hinge;
  hinge.name = "hinge";
  hinge.type = JointType::Hinge;
  hinge.body_b = id;
  hinge.axis = Vec3::UnitY();
  hinge.drive = JointDrive{DriveMode::Position, 0.0, 40.0, 2.0};
  w.add_joint(hinge);
  return w;
}

/// World i's drive targets 0.1 i rad.
void target_by_index(std::size_t i, std::uint64_t, World& w) {
  w.set_drive_target(*w.find_joint("hinge"), 0.1 * static_cast<double>(i));
}

std::vector<Vec12> states(const World& w) {
  std::vector<Vec12> out;
  for (std::uint32_t b = 0; b < w.body_count(); ++b) out.push_back(w.coordinates(BodyId{b}));
  return out;
}

void expect_same_bits(const World& a, const World& b, const std::string& what) {
  const auto qa = states(a), qb = states(b);
  ASSERT_EQ(qa.size(), qb.size());
  for (std::size_t i = 0; i < qa.size(); ++i) {
    for (int k = 0; k < 12; ++k) ASSERT_EQ(qa[i][k], qb[i][k]) << what << ": body " << i;
  }
}

TEST(WorldBatch, ThreadsGiveTheSameBitsAsSerialCopies) {
  const World proto = driven_pendulum();
  constexpr std::size_t kWorlds = 7;
  // The reference: each copy built and stepped alone.
  std::vector<World> serial;
  for (std::size_t i = 0; i < kWorlds; ++i) {
    serial.push_back(proto.clone());
    target_by_index(i, 0, serial.back());
    for (int k = 0; k < 150; ++k) serial.back().step();
  }
  // Different targets move the rods differently: the comparison below can fail.
  EXPECT_NE(states(serial[1])[0][0], states(serial[2])[0][0]);
  for (int threads : {1, 2, 3}) {
    WorldBatch batch(proto, kWorlds, threads, target_by_index);
    EXPECT_EQ(batch.threads(), threads);
    batch.step(100);
    batch.step(50);
    for (std::size_t i = 0; i < kWorlds; ++i) {
      EXPECT_FALSE(batch.failed(i));
      expect_same_bits(batch.world(i), serial[i],
                       "threads " + std::to_string(threads) + ", world " + std::to_string(i));
    }
  }
}

TEST(WorldBatch, ControlsAndRecordsRunPerWorld) {
  const World proto = driven_pendulum();
  WorldBatch batch(proto, 4, 2);
  std::vector<std::vector<double>> angle(4);
  // Control: world i's target steps to 0.2 i rad at step 10; record the hinge angle.
  batch.step(
      200,
      [](std::size_t i, int k, World& w) {
        if (k == 10) w.set_drive_target(*w.find_joint("hinge"), 0.2 * static_cast<double>(i));
      },
      [&](std::size_t i, int, const World& w) {
        angle[i].push_back(w.joint_position(*w.find_joint("hinge")));
      });
  // The rod (0.8 kg, 0.5 m) settles where the drive balances gravity:
  // 40 (theta - target) = m g (L / 2) cos(theta).
  const double m = 1000 * 0.5 * 0.04 * 0.04, sag = m * 9.81 * 0.25 / 40;
  for (std::size_t i = 0; i < 4; ++i) {
    ASSERT_EQ(angle[i].size(), 200u);
    const double target = 0.2 * static_cast<double>(i);
    double theta = target;
    for (int it = 0; it < 50; ++it) theta = target + sag * std::cos(theta);
    EXPECT_NEAR(angle[i].back(), theta, 1e-3) << "world " << i;
  }
}

TEST(WorldBatch, AFailingWorldStopsAloneWithItsMessage) {
  const World proto = driven_pendulum();
  WorldBatch batch(proto, 5, 2);
  batch.step(20, [](std::size_t i, int k, World& w) {
    if (i == 3 && k == 5) w.apply_wrench(*w.find_body("rod"), Vec3(1e200, 0, 0), Vec3::Zero());
  });
  EXPECT_EQ(batch.failed_count(), 1u);
  EXPECT_TRUE(batch.failed(3));
  EXPECT_NE(batch.error(3).find("diverged at step 6"), std::string::npos) << batch.error(3);
  EXPECT_EQ(batch.world(3).step_count(), 5);  // left at its last valid step
  for (std::size_t i : {0u, 1u, 2u, 4u}) EXPECT_EQ(batch.world(i).step_count(), 20) << i;
  batch.step(5);  // the failed world is not stepped again
  EXPECT_EQ(batch.world(3).step_count(), 5);
  batch.reset({3});
  EXPECT_FALSE(batch.failed(3));
  EXPECT_EQ(batch.world(3).step_count(), 0);
  expect_same_bits(batch.world(3), proto, "reset world");
  EXPECT_THROW(batch.reset({5}), InvalidArgument);
  EXPECT_THROW(batch.world(5), InvalidArgument);
}

TEST(WorldBatch, RolloutFromGivenStates) {
  World proto = driven_pendulum();
  // Initial states: the pendulum after 10, 20 and 30 steps towards a target of 0.5 rad (a
  // state carries the drive targets with it).
  std::vector<World> starts;
  std::vector<WorldState> initial;
  World moved = proto.clone();
  moved.set_drive_target(*moved.find_joint("hinge"), 0.5);
  for (int k = 1; k <= 30; ++k) {
    moved.step();
    if (k % 10 == 0) {
      starts.push_back(moved.clone());
      initial.push_back(moved.save_state());
    }
  }
  WorldBatch batch(proto, 3, 2, target_by_index);
  batch.step(7);
  auto control = [](std::size_t i, int k, World& w) {
    if (k == 20) w.set_drive_target(*w.find_joint("hinge"), -0.1 * static_cast<double>(i));
  };
  batch.rollout(initial, 40, control);
  for (std::size_t i = 0; i < 3; ++i) {
    World ref = starts[i].clone();
    for (int k = 0; k < 40; ++k) {
      control(i, k, ref);
      ref.step();
    }
    expect_same_bits(batch.world(i), ref, "rollout world " + std::to_string(i));
  }
  EXPECT_NE(states(batch.world(0))[0][0], states(batch.world(2))[0][0]);
  // One state for every world.
  batch.rollout({initial[1]}, 5);
  expect_same_bits(batch.world(0), batch.world(2), "one initial state");
  // A count that is neither 1 nor the batch size is rejected, and nothing changes.
  const auto before = states(batch.world(0));
  EXPECT_THROW(batch.rollout({moved.save_state(), moved.save_state()}, 1), InvalidArgument);
  EXPECT_EQ(states(batch.world(0))[0], before[0]);
  // A state of another model, after a good one: rejected, the first world restored too.
  World other(WorldSettings{});
  const auto before_all = states(batch.world(0));
  EXPECT_THROW(batch.rollout({initial[0], other.save_state(), initial[2]}, 1), InvalidArgument);
  EXPECT_EQ(states(batch.world(0))[0], before_all[0]);
  EXPECT_THROW(WorldBatch(proto, 0), InvalidArgument);
  EXPECT_THROW(WorldBatch(proto, 2, 0), InvalidArgument);
}

}  // namespace
}  // namespace mabd
