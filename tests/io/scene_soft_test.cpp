// Soft bodies in scene files: meshes from files and generated boxes, placement, attachments
// by node list and by region, and the errors that name the item.
#include <gtest/gtest.h>

#include <string>

#include "mabd/error.h"
#include "mabd/scene.h"
#include "mabd/world.h"

namespace mabd {
namespace {

const std::string kBase = std::string(MABD_SOURCE_DIR) + "/scenes";

std::string scene_with(const std::string& soft) {
  return R"({"settings": {"dt": 0.01},
    "bodies": [{"name": "plate", "shape": {"type": "box", "size": [0.2, 0.2, 0.05]},
                "material": {"density": 1000, "youngs_modulus": 1e9}, "position": [0, 0, 0.375]}],
    "soft_bodies": [)" + soft + "]}";
}

std::string error_of(const std::string& soft) {
  try {
    build_world(parse_scene(scene_with(soft), "s.json", kBase));
  } catch (const SceneError& e) {
    return e.what();
  }
  return "accepted";
}

TEST(SceneSoft, BoxPlacedAndAttachedByRegion) {
  const Scene scene = parse_scene(scene_with(R"({"name": "blob",
      "box": {"size": [0.2, 0.2, 0.2], "cells": [2, 2, 2]}, "position": [0, 0, 0.25],
      "material": {"density": 500, "youngs_modulus": 2e5, "poisson_ratio": 0.25},
      "face_contacts": false,
      "attach": [{"body": "plate", "region": {"min": [-1, -1, 0.349], "max": [1, 1, 0.351]}},
                 {"body": "world", "nodes": [0]}]})"), "s.json", kBase);
  ASSERT_EQ(scene.soft_bodies.size(), 1u);
  const SceneSoftBody& s = scene.soft_bodies[0];
  EXPECT_EQ(s.def.nodes.size(), 27u);
  EXPECT_EQ(s.def.tets.size(), 48u);
  EXPECT_DOUBLE_EQ(s.def.nodes[0].z(), 0.15);
  EXPECT_DOUBLE_EQ(s.def.material.youngs_modulus, 2e5);
  EXPECT_FALSE(s.def.face_contacts);
  ASSERT_EQ(s.def.attachments.size(), 10u);  // the top face's 9 nodes, and node 0
  EXPECT_EQ(s.attach_bodies[0], "plate");
  EXPECT_EQ(s.attach_bodies[9], "world");
  World w = build_world(scene);
  ASSERT_EQ(w.soft_body_count(), 1u);
  EXPECT_EQ(w.soft_body_name(SoftBodyId{0}), "blob");
  w.step();
  EXPECT_LT(w.last_step().attachment_residual, 1e-9);
}

TEST(SceneSoft, MeshFileIsRead) {
  const Scene scene = parse_scene(scene_with(R"({"name": "blob", "mesh": "../models/soft_blob.node",
      "scale": 0.5, "position": [0, 0, 1]})"), "s.json", kBase);
  ASSERT_EQ(scene.soft_bodies.size(), 1u);
  EXPECT_GT(scene.soft_bodies[0].def.tets.size(), 100u);
  EXPECT_TRUE(scene.soft_bodies[0].def.face_contacts);
  EXPECT_NO_THROW(build_world(scene));
}

TEST(SceneSoft, ErrorsNameTheItem) {
  EXPECT_NE(error_of(R"({"name": "b"})").find("soft_bodies[0] 'b': needs one of 'mesh' or 'box'"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"name": "b", "box": {"size": [0.1, 0.1, 0.1], "cells": [1, 1, 1]},
                         "attach": [{"body": "nobody", "nodes": [0]}]})")
                .find("soft_bodies[0] 'b': attach: unknown body 'nobody'"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"name": "b", "box": {"size": [0.1, 0.1, 0.1], "cells": [1, 1, 1]},
                         "attach": [{"body": "plate", "region": {"min": [5, 5, 5], "max": [6, 6, 6]}}]})")
                .find("holds no node"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"name": "b", "box": {"size": [0.1, 0.1, 0.1], "cells": [1, 1, 1]},
                         "attach": [{"body": "plate", "nodes": [0, 0]}]})")
                .find("soft_bodies[0] 'b': attachment 1: node 0 is attached already"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"name": "b", "box": {"size": [0.1, 0.1, 0.1], "cells": [1, 1, 1]},
                         "face_contacts": 1})")
                .find("soft_bodies[0] 'b': face_contacts: expected a boolean"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"name": "b", "mesh": "missing.node"})").find("missing"),
            std::string::npos);
  EXPECT_NE(error_of(R"({"name": "b", "box": {"size": [0.1, 0.1, 0.1], "cells": [1, 1, 1]},
                         "colour": 1})").find("unknown field 'colour'"),
            std::string::npos);
}

}  // namespace
}  // namespace mabd
