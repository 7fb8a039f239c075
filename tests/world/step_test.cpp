// The step's phase times (StepStats) add up to its wall time.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include "mabd/mabd.h"

namespace mabd {
namespace {

TEST(Step, PhaseTimesAddUpToTheWallTime) {
  const Scene scene = load_scene(std::string(MABD_SOURCE_DIR) + "/scenes/chain_1e3.json");
  World world = build_world(scene);
  world.step();  // the first step also takes the trial steps of a consistent start
  std::vector<double> ratio;
  for (int i = 0; i < 15; ++i) {
    world.step();
    const StepStats& s = world.last_step();
    for (double ms : {s.detect_ms, s.predict_ms, s.body_ms, s.rows_ms, s.dual_ms, s.check_ms,
                      s.finish_ms}) {
      EXPECT_GE(ms, 0.0);
    }
    EXPECT_GT(s.body_ms, 0.0);
    EXPECT_GT(s.dual_ms, 0.0);
    const double sum = s.detect_ms + s.predict_ms + s.body_ms + s.rows_ms + s.dual_ms +
                       s.check_ms + s.finish_ms;
    EXPECT_LE(sum, s.wall_ms * (1 + 1e-9));
    ratio.push_back(sum / s.wall_ms);
  }
  // Clock reads between the phases are all that is left out (a preempted step may lose more).
  std::nth_element(ratio.begin(), ratio.begin() + ratio.size() / 2, ratio.end());
  EXPECT_GT(ratio[ratio.size() / 2], 0.95);
}

TEST(Step, RowsArePartOfTheStepWithoutTheClosedForm) {
  // A tree solve builds rows; the closed-form ball chains do not.
  const Scene scene = load_scene(std::string(MABD_SOURCE_DIR) + "/scenes/chain_1e3.json");
  World closed = build_world(scene);
  Scene tree_scene = scene;
  tree_scene.settings.solver = DualSolverKind::Tree;
  World tree = build_world(tree_scene);
  for (int i = 0; i < 3; ++i) {
    closed.step();
    tree.step();
  }
  EXPECT_EQ(closed.last_step().rows_ms, 0.0);
  EXPECT_GT(tree.last_step().rows_ms, 0.0);
  EXPECT_STREQ(tree.last_step().solver, "tree");
}

}  // namespace
}  // namespace mabd
