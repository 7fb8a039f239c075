// Robot models and scenes placed in a scene file (src/io/scene_models.cpp): a moved, turned
// and renamed model moves exactly as the model alone does, seen through the placement, and so
// does every copy of a repeated scene; name clashes, bad model files and bad repeats get
// errors naming the entry.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "io/model_test_util.h"
#include "mabd/error.h"
#include "mabd/scene.h"
#include "mabd/world.h"

namespace {

using namespace mabd;
using test::error_of;
using test::write_model;

const std::string kModel = std::string(MABD_SOURCE_DIR) + "/models/double_pendulum.urdf";

TEST(SceneModels, PlacedModelMovesAsTheModelAloneThroughThePlacement) {
  // Turned 90 degrees about z (gravity is along -z, so the motion is the same turned) and
  // moved; a second copy shows that prefixes keep the names apart.
  const double c = std::cos(M_PI / 4), s = std::sin(M_PI / 4);
  const std::string path = write_model(
      "placed.json", R"({"bodies": [], "models": [
        {"file": ")" + kModel + R"(", "position": [1, 2, 3], "orientation": [)" +
                         std::to_string(c) + ", 0, 0, " + std::to_string(s) + R"(],
         "prefix": "a/"},
        {"file": ")" + kModel + R"(", "position": [-4, 0, 0], "prefix": "b/"}]})");
  const Scene placed_scene = load_scene(path);
  World placed = build_world(placed_scene);
  World alone = build_world(load_model(kModel));
  ASSERT_EQ(placed.body_count(), 2 * alone.body_count());
  ASSERT_EQ(placed.joint_count(), 2 * alone.joint_count());
  const Quat R(Eigen::AngleAxisd(M_PI / 2, Vec3::UnitZ()));
  const Vec3 p(1, 2, 3);
  double worst_pose = 0, worst_angle = 0;
  for (int step = 0; step < 500; ++step) {
    placed.step();
    alone.step();
    for (const char* body : {"upper", "lower"}) {
      const Pose a = alone.pose(*alone.find_body(body));
      const Pose m = placed.pose(*placed.find_body(std::string("a/") + body));
      const Pose b = placed.pose(*placed.find_body(std::string("b/") + body));
      worst_pose = std::max(worst_pose, (m.position - (R * a.position + p)).norm());
      worst_pose = std::max(worst_pose, (b.position - (a.position + Vec3(-4, 0, 0))).norm());
      worst_pose = std::max(worst_pose, (m.orientation.toRotationMatrix() -
                                         (R * a.orientation).toRotationMatrix()).norm());
    }
    for (const char* joint : {"shoulder", "elbow"}) {
      const double a = alone.joint_position(*alone.find_joint(joint));
      worst_angle = std::max(worst_angle,
                             std::abs(placed.joint_position(*placed.find_joint(
                                          std::string("a/") + joint)) - a));
    }
  }
  std::printf("placed vs alone, 500 steps: pose %.3g, joint angle %.3g rad\n", worst_pose,
              worst_angle);
  EXPECT_LT(worst_pose, 1e-9);
  EXPECT_LT(worst_angle, 1e-9);
  EXPECT_GT(std::abs(alone.joint_position(*alone.find_joint("shoulder"))), 0.1);  // it swings
}

TEST(SceneModels, ClashesAndBadFilesNameTheEntry) {
  const std::string twice = write_model(
      "twice.json", R"({"bodies": [], "models": [{"file": ")" + kModel + R"("},
                                                  {"file": ")" + kModel + R"("}]})");
  const std::string e1 = error_of(twice);
  EXPECT_NE(e1.find("models[1]"), std::string::npos) << e1;
  EXPECT_NE(e1.find("body name 'base' is already used"), std::string::npos) << e1;

  const std::string missing =
      write_model("missing.json", R"({"bodies": [], "models": [{"file": "nowhere.urdf"}]})");
  const std::string e2 = error_of(missing);
  EXPECT_NE(e2.find("models[0]"), std::string::npos) << e2;
  EXPECT_NE(e2.find("nowhere.urdf"), std::string::npos) << e2;

  const std::string text =
      write_model("notamodel.json", R"({"bodies": [], "models": [{"file": "other.txt"}]})");
  const std::string e3 = error_of(text);
  EXPECT_NE(e3.find("is not a model"), std::string::npos) << e3;

  const std::string broken = write_model("broken.urdf", "<robot name='r'><link name='a'>");
  const std::string bad = write_model(
      "bad.json", R"({"bodies": [], "models": [{"file": "broken.urdf", "prefix": 3}]})");
  const std::string e4 = error_of(bad);
  EXPECT_NE(e4.find("prefix"), std::string::npos) << e4;
  const std::string bad2 =
      write_model("bad2.json", R"({"bodies": [], "models": [{"file": "broken.urdf"}]})");
  const std::string e5 = error_of(bad2);
  EXPECT_NE(e5.find("models[0]"), std::string::npos) << e5;
  EXPECT_NE(e5.find("broken.urdf: line"), std::string::npos) << e5;
  (void)broken;
}

// A scene of two pendulums (a hinge and a ball joint, one body excluded from colliding with
// the other) placed 2 x 3 times on a turned grid: every copy moves as the scene alone, through
// its own placement, under its "<prefix><copy>/" names.
TEST(SceneModels, RepeatedSceneCopiesMoveAsTheSceneAlone) {
  const std::string unit = write_model("unit.json", R"({
    "materials": {"m": {"density": 1000, "youngs_modulus": 1e8, "poisson_ratio": 0.3}},
    "bodies": [
      {"name": "bob", "material": "m", "shape": {"type": "box", "size": [0.1, 0.1, 0.1]},
       "position": [0.5, 0, 0]},
      {"name": "ball", "material": "m", "shape": {"type": "sphere", "radius": 0.05},
       "position": [0, 0.3, -0.4]}],
    "joints": [
      {"name": "hinge", "type": "hinge", "bodies": ["world", "bob"], "anchor": [0, 0, 0],
       "axis": [0, 1, 0]},
      {"name": "ball_joint", "type": "ball", "bodies": ["world", "ball"], "anchor": [0, 0, 0]}],
    "collision_exclude": [["bob", "ball"]]})");
  const double c = std::cos(M_PI / 4), s = std::sin(M_PI / 4);
  const std::string path = write_model(
      "grid.json", R"({"settings": {"dt": 0.01}, "bodies": [], "models": [
        {"file": ")" + unit + R"(", "position": [1, 2, 3], "orientation": [)" +
                       std::to_string(c) + ", 0, 0, " + std::to_string(s) + R"(],
         "prefix": "u", "repeat": {"count": [2, 3], "spacing": [4, 5, 0]}}]})");
  const Scene scene = load_scene(path);
  ASSERT_EQ(scene.collision_exclude.size(), 6u);
  EXPECT_EQ(scene.collision_exclude[5].first, "u5/bob");
  World placed = build_world(scene);
  Scene alone_scene = load_scene(unit);
  alone_scene.settings = scene.settings;  // the placing scene's settings apply
  World alone = build_world(alone_scene);
  ASSERT_EQ(placed.body_count(), 6 * alone.body_count());
  ASSERT_EQ(placed.joint_count(), 6 * alone.joint_count());
  const Quat R(Eigen::AngleAxisd(M_PI / 2, Vec3::UnitZ()));
  double worst = 0;
  for (int step = 0; step < 200; ++step) {
    placed.step();
    alone.step();
    for (int copy = 0; copy < 6; ++copy) {
      const Vec3 at = Vec3(1, 2, 3) + R * Vec3(4.0 * (copy % 2), 5.0 * (copy / 2), 0);
      for (const char* body : {"bob", "ball"}) {
        const Pose a = alone.pose(*alone.find_body(body));
        const Pose m = placed.pose(*placed.find_body("u" + std::to_string(copy) + "/" + body));
        worst = std::max(worst, (m.position - (R * a.position + at)).norm());
      }
    }
  }
  std::printf("6 placed copies vs the scene alone, 200 steps: %.3g m\n", worst);
  EXPECT_LT(worst, 1e-9);
  EXPECT_GT(std::abs(alone.joint_position(*alone.find_joint("hinge"))), 0.1);  // it swings
}

TEST(SceneModels, BadRepeatsAndNestingNameTheEntry) {
  const std::string unit = write_model(
      "one_box.json", R"({"materials": {"m": {"density": 1000, "youngs_modulus": 1e8}},
                          "bodies": [{"name": "box", "material": "m",
                          "shape": {"type": "box", "size": [0.1, 0.1, 0.1]}}]})");
  auto placing = [&](const std::string& name, const std::string& repeat) {
    return write_model(name, R"({"bodies": [], "models": [{"file": ")" + unit +
                                 R"(", "repeat": )" + repeat + "}]}");
  };
  const std::string e1 = error_of(placing("zero.json", R"({"count": [2, 0]})"));
  EXPECT_NE(e1.find("models[0]: repeat.count[1]: must be at least 1"), std::string::npos) << e1;
  const std::string e2 = error_of(placing("four.json", R"({"count": [1, 1, 1, 1]})"));
  EXPECT_NE(e2.find("1 to 3 counts"), std::string::npos) << e2;
  const std::string e3 =
      error_of(placing("spacing.json", R"({"count": [2], "spacing": [1, 0]})"));
  EXPECT_NE(e3.find("spacing"), std::string::npos) << e3;
  const std::string e4 = error_of(placing("typo.json", R"({"count": [2], "step": 1})"));
  EXPECT_NE(e4.find("step"), std::string::npos) << e4;
  const std::string e6 = error_of(placing("many.json", R"({"count": [100000, 100000, 100000]})"));
  EXPECT_NE(e6.find("more than 100,000,000 bodies"), std::string::npos) << e6;
  // Copies without a prefix still get their own names; a scene placing itself stops.
  EXPECT_EQ(load_scene(placing("plain.json", R"({"count": [3]})")).bodies[2].name, "2/box");
  const std::string self = write_model(
      "self.json", R"({"bodies": [], "models": [{"file": "self.json", "prefix": "a"}]})");
  const std::string e5 = error_of(self);
  EXPECT_NE(e5.find("nest more than 8 deep"), std::string::npos) << e5;
}

}  // namespace
