// Every scene shipped in scenes/ loads, builds and runs a few steps with finite state and
// satisfied joints (the scenes are shared by demos, benchmarks and users). Scenes with more
// than kMaxBodies bodies (the large benchmark scenes) are only loaded, not built and stepped.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>

#include "mabd/mabd.h"

namespace mabd {
namespace {

constexpr std::size_t kMaxBodies = 5000;

TEST(ShippedScenes, LoadBuildAndStep) {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(std::string(MABD_SOURCE_DIR) + "/scenes")) {
    if (entry.path().extension() != ".json") continue;
    SCOPED_TRACE(entry.path().string());
    const Scene scene = load_scene(entry.path().string());
    if (scene.bodies.size() > kMaxBodies) {
      std::printf("skipped %s: %zu bodies (more than %zu)\n",
                  entry.path().filename().string().c_str(), scene.bodies.size(), kMaxBodies);
      continue;
    }
    World world = build_world(scene);
    for (int i = 0; i < 20; ++i) world.step();
    for (std::uint32_t b = 0; b < world.body_count(); ++b) {
      EXPECT_TRUE(world.coordinates(BodyId{b}).allFinite());
    }
    EXPECT_LE(world.last_step().joint_residual, 1e-6);
    ++count;
  }
  EXPECT_GE(count, 5);
}

}  // namespace
}  // namespace mabd
