// Two worlds built from the same scene and stepped the same way end in bit-identical states.
#include <gtest/gtest.h>

#include "mabd/mabd.h"

namespace mabd {
namespace {

TEST(Determinism, SameSceneSameBits) {
  const Scene scene = load_scene(std::string(MABD_SOURCE_DIR) + "/scenes/heavy_chain.json");
  World a = build_world(scene), b = build_world(scene);
  for (int i = 0; i < 100; ++i) {
    a.step();
    b.step();
  }
  for (std::uint32_t i = 0; i < a.body_count(); ++i) {
    const Vec12 qa = a.coordinates(BodyId{i}), qb = b.coordinates(BodyId{i});
    for (int k = 0; k < 12; ++k) ASSERT_EQ(qa[k], qb[k]) << "body " << i << " entry " << k;
  }
  EXPECT_EQ(a.last_step().joint_residual, b.last_step().joint_residual);
}

}  // namespace
}  // namespace mabd
