// Scene files: the contact and collision fields (settings.contact, material friction, plane
// shapes, open meshes, body "collision", "keyframes", "collision_exclude", generator parts
// with "collision") parsed into the definitions, and every bad input reported as one line
// naming the file, the item and the problem.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <string>

#include "io/keyframes.h"
#include "mabd/error.h"
#include "mabd/scene.h"
#include "mabd/world.h"

namespace {

using mabd::BodyDef;
using mabd::BodyKind;
using mabd::Quat;
using mabd::Scene;
using mabd::SceneError;
using mabd::ShapeType;
using mabd::Vec3;

const std::string kDataDir = std::string(MABD_SOURCE_DIR) + "/tests/data";

std::string parse_error(const std::string& json, const std::string& base_dir = ".") {
  try {
    mabd::parse_scene(json, "inline.json", base_dir);
  } catch (const SceneError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    return message;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected SceneError, got: " << e.what();
    return {};
  }
  ADD_FAILURE() << "expected SceneError, nothing was thrown";
  return {};
}

Scene parse(const std::string& json, const std::string& base_dir = ".") {
  return mabd::parse_scene(json, "inline.json", base_dir);
}

const BodyDef& body(const Scene& scene, const std::string& name) {
  for (const BodyDef& def : scene.bodies) {
    if (def.name == name) return def;
  }
  throw std::runtime_error("no body " + name);
}

/// A scene with one body given as JSON object text.
std::string one_body(const std::string& body) { return R"({"bodies": [)" + body + "]}"; }

/// Quaternions equal up to sign.
void expect_same_rotation(const Quat& a, const Quat& b, double tol = 1e-12) {
  EXPECT_NEAR(std::abs(a.dot(b)), 1.0, tol) << "a = " << a.coeffs().transpose()
                                            << ", b = " << b.coeffs().transpose();
}

// ---- every field parsed ---------------------------------------------------------------------

TEST(SceneLoaderContact, EveryFieldIsParsedIntoTheDefinitions) {
  const Scene scene = mabd::load_scene(kDataDir + "/good/contact.json");

  const mabd::ContactSettings& c = scene.settings.contact;
  EXPECT_EQ(c.model, mabd::ContactModel::Exact);
  EXPECT_EQ(c.time_constant, 0.01);
  EXPECT_EQ(c.damping_ratio, 0.5);
  EXPECT_EQ(c.margin, 0.002);
  EXPECT_FALSE(c.friction);

  EXPECT_EQ(scene.materials.at("rubber").friction, 0.9);
  EXPECT_EQ(scene.materials.at("ice").friction, 0.0);
  EXPECT_EQ(body(scene, "dumbbell").material.friction, 0.9);

  const BodyDef& ground = body(scene, "ground");
  EXPECT_EQ(ground.shape.type, ShapeType::Plane);
  EXPECT_EQ(ground.kind, BodyKind::Static);
  EXPECT_EQ(ground.position, Vec3(0, 0, -0.5));
  EXPECT_TRUE(ground.collision.enabled);
  EXPECT_TRUE(ground.collision.primitives.empty());

  const BodyDef& bowl = body(scene, "bowl");
  EXPECT_EQ(bowl.shape.type, ShapeType::Mesh);
  EXPECT_EQ(bowl.shape.mesh.vertices.size(), 8u);
  EXPECT_EQ(bowl.shape.mesh.triangles.size(), 10u);
  EXPECT_THROW(mabd::validate_shape(bowl.shape), mabd::InvalidArgument);  // open
  EXPECT_NO_THROW(mabd::validate_shape(bowl.shape, true));

  const mabd::CollisionDef& dumbbell = body(scene, "dumbbell").collision;
  EXPECT_TRUE(dumbbell.enabled);
  EXPECT_EQ(dumbbell.group, 2u);
  EXPECT_EQ(dumbbell.mask, 5u);
  ASSERT_EQ(dumbbell.primitives.size(), 2u);
  EXPECT_EQ(dumbbell.primitives[0].shape.type, ShapeType::Sphere);
  EXPECT_EQ(dumbbell.primitives[0].shape.radius, 0.08);
  EXPECT_EQ(dumbbell.primitives[0].pose.position, Vec3(-0.25, 0, 0));
  expect_same_rotation(dumbbell.primitives[0].pose.orientation, Quat::Identity());
  EXPECT_EQ(dumbbell.primitives[1].shape.type, ShapeType::Capsule);
  EXPECT_EQ(dumbbell.primitives[1].shape.radius, 0.02);
  EXPECT_EQ(dumbbell.primitives[1].shape.length, 0.5);
  // [1, 0, 1, 0] normalised: a quarter turn about y.
  expect_same_rotation(dumbbell.primitives[1].pose.orientation,
                       Quat(std::sqrt(0.5), 0, std::sqrt(0.5), 0));

  EXPECT_FALSE(body(scene, "ghost").collision.enabled);
  const mabd::CollisionDef& quiet = body(scene, "quiet").collision;
  EXPECT_FALSE(quiet.enabled);
  EXPECT_EQ(quiet.group, 0xFFFFFFFFu);
  EXPECT_EQ(quiet.mask, 0u);

  const BodyDef& paddle = body(scene, "paddle");
  EXPECT_EQ(paddle.kind, BodyKind::Kinematic);
  ASSERT_TRUE(paddle.motion);
  EXPECT_EQ(paddle.position, Vec3(0, -1, 0));  // the pose at t = 0
  EXPECT_TRUE((paddle.motion(1.0).position - Vec3(2, -1, 0)).norm() < 1e-15);

  const BodyDef& wiper = body(scene, "wiper");
  ASSERT_TRUE(wiper.motion);
  EXPECT_TRUE((wiper.motion(3.0).position - wiper.motion(1.0).position).norm() < 1e-12);

  const mabd::CollisionDef& ramp = body(scene, "ramp").collision;
  ASSERT_EQ(ramp.primitives.size(), 1u);
  EXPECT_EQ(ramp.primitives[0].shape.type, ShapeType::Plane);
  EXPECT_EQ(ramp.primitives[0].pose.position, Vec3(0, 0, 0.05));

  ASSERT_EQ(scene.collision_exclude.size(), 2u);
  EXPECT_EQ(scene.collision_exclude[0], std::make_pair(std::string("dumbbell"),
                                                       std::string("bowl")));
  EXPECT_EQ(scene.collision_exclude[1], std::make_pair(std::string("paddle"),
                                                       std::string("ground")));
}

TEST(SceneLoaderContact, DefaultsAreThoseOfTheApi) {
  const Scene scene = parse(one_body(
      R"({"name": "b", "shape": {"type": "sphere", "radius": 0.1}, "material": {}})"));
  const mabd::ContactSettings defaults;
  EXPECT_EQ(scene.settings.contact.model, defaults.model);
  EXPECT_EQ(scene.settings.contact.time_constant, defaults.time_constant);
  EXPECT_EQ(scene.settings.contact.damping_ratio, defaults.damping_ratio);
  EXPECT_EQ(scene.settings.contact.margin, defaults.margin);
  EXPECT_EQ(scene.settings.contact.friction, defaults.friction);
  const BodyDef& b = scene.bodies.at(0);
  EXPECT_EQ(b.material.friction, mabd::Material{}.friction);
  EXPECT_TRUE(b.collision.enabled);
  EXPECT_TRUE(b.collision.primitives.empty());
  EXPECT_EQ(b.collision.group, 1u);
  EXPECT_EQ(b.collision.mask, 0xFFFFFFFFu);
  EXPECT_FALSE(b.motion);
  EXPECT_TRUE(scene.collision_exclude.empty());
}

TEST(SceneLoaderContact, ContactModelsAndSettings) {
  for (const char* model : {"none", "penalty", "exact"}) {
    const Scene scene = parse(std::string(R"({"settings": {"contact": {"model": ")") + model +
                              R"("}}, "bodies": []})");
    EXPECT_STREQ(mabd::contact_model_name(scene.settings.contact.model), model);
  }
  const Scene scene = parse(
      R"({"settings": {"contact": {"time_constant": 0, "damping_ratio": 0, "margin": 0,
                                   "friction": true}}, "bodies": []})");
  EXPECT_EQ(scene.settings.contact.time_constant, 0.0);
  EXPECT_EQ(scene.settings.contact.damping_ratio, 0.0);
  EXPECT_EQ(scene.settings.contact.margin, 0.0);
  EXPECT_TRUE(scene.settings.contact.friction);
}

TEST(SceneLoaderContact, CollisionTrueIsTheDefaultAndGroupsTakeTheFullRange) {
  const Scene scene = parse(R"({"bodies": [
      {"name": "a", "shape": {"type": "sphere", "radius": 0.1}, "material": {},
       "collision": true},
      {"name": "b", "shape": {"type": "sphere", "radius": 0.1}, "material": {},
       "collision": {"group": 0, "mask": 4294967295.0}},
      {"name": "c", "shape": {"type": "sphere", "radius": 0.1}, "material": {},
       "collision": {}}]})");
  EXPECT_TRUE(scene.bodies[0].collision.enabled);
  EXPECT_EQ(scene.bodies[1].collision.group, 0u);
  EXPECT_EQ(scene.bodies[1].collision.mask, 0xFFFFFFFFu);
  EXPECT_TRUE(scene.bodies[2].collision.enabled);
  EXPECT_EQ(scene.bodies[2].collision.group, 1u);
}

TEST(SceneLoaderContact, PlanesAndOpenMeshesForStaticAndKinematicBodies) {
  const Scene scene = parse(R"({"bodies": [
      {"name": "floor", "shape": {"type": "plane"}, "material": {}, "kind": "static"},
      {"name": "wall", "shape": {"type": "plane"}, "material": {}, "kind": "kinematic",
       "orientation": [0.7071068, 0.7071068, 0, 0]},
      {"name": "bowl", "shape": {"type": "mesh", "file": "meshes/bowl.obj"}, "material": {},
       "kind": "kinematic"}]})",
                            kDataDir + "/good");
  EXPECT_EQ(scene.bodies[0].shape.type, ShapeType::Plane);
  EXPECT_EQ(scene.bodies[1].shape.type, ShapeType::Plane);
  EXPECT_EQ(scene.bodies[2].shape.mesh.triangles.size(), 10u);
}

// ---- keyframes --------------------------------------------------------------------------------

TEST(SceneLoaderContact, KeyframesInterpolateLinearlyAndBySlerp) {
  // Identity at t = 0 (origin), a quarter turn about x at t = 2 at (2, 4, 0), then held;
  // a third key at t = 3 turns back and moves up.
  const Scene scene = parse(one_body(R"({"name": "k", "shape": {"type": "box", "size": [1, 1, 1]},
      "material": {}, "kind": "kinematic", "keyframes": [
        {"time": 0, "position": [0, 0, 0]},
        {"time": 2, "position": [2, 4, 0], "orientation": [0.7071067811865476, 0.7071067811865476, 0, 0]},
        {"time": 3, "position": [2, 4, 1]}]})"));
  const mabd::MotionFunction& motion = scene.bodies.at(0).motion;
  ASSERT_TRUE(motion);
  const double deg = std::numbers::pi / 180;
  // Midpoint of the first segment: half the position, half the angle (45 degrees about x).
  mabd::Pose p = motion(1.0);
  EXPECT_NEAR((p.position - Vec3(1, 2, 0)).norm(), 0, 1e-15);
  expect_same_rotation(p.orientation, Quat(std::cos(22.5 * deg), std::sin(22.5 * deg), 0, 0));
  // A quarter of the way: 22.5 degrees.
  p = motion(0.5);
  EXPECT_NEAR((p.position - Vec3(0.5, 1, 0)).norm(), 0, 1e-15);
  expect_same_rotation(p.orientation, Quat(std::cos(11.25 * deg), std::sin(11.25 * deg), 0, 0));
  // On a key.
  p = motion(2.0);
  EXPECT_NEAR((p.position - Vec3(2, 4, 0)).norm(), 0, 1e-15);
  expect_same_rotation(p.orientation, Quat(std::cos(45 * deg), std::sin(45 * deg), 0, 0));
  // Second segment, midpoint: back to 45 degrees, halfway up.
  p = motion(2.5);
  EXPECT_NEAR((p.position - Vec3(2, 4, 0.5)).norm(), 0, 1e-15);
  expect_same_rotation(p.orientation, Quat(std::cos(22.5 * deg), std::sin(22.5 * deg), 0, 0));
  // Held before the first and after the last key.
  p = motion(-1.0);
  EXPECT_EQ(p.position, Vec3(0, 0, 0));
  expect_same_rotation(p.orientation, Quat::Identity());
  p = motion(10.0);
  EXPECT_EQ(p.position, Vec3(2, 4, 1));
  expect_same_rotation(p.orientation, Quat::Identity());
  // The body starts at the pose of t = 0.
  EXPECT_EQ(scene.bodies[0].position, Vec3(0, 0, 0));
}

TEST(SceneLoaderContact, SlerpTakesTheShortWayRound) {
  // 350 degrees about z is -10 degrees: the midpoint is -5 degrees, not 175.
  const double deg = std::numbers::pi / 180;
  std::vector<mabd::io::Keyframe> keys(2);
  keys[1].time = 1;
  keys[1].pose.orientation = Quat(std::cos(175 * deg), 0, 0, std::sin(175 * deg));
  const mabd::Pose p = mabd::io::interpolate_keyframes(keys, false, 0.5);
  expect_same_rotation(p.orientation, Quat(std::cos(-2.5 * deg), 0, 0, std::sin(-2.5 * deg)));
}

TEST(SceneLoaderContact, LoopedKeyframesRepeat) {
  const Scene scene = parse(one_body(R"({"name": "k", "shape": {"type": "box", "size": [1, 1, 1]},
      "material": {}, "kind": "kinematic", "loop": true, "keyframes": [
        {"time": 1, "position": [0, 0, 0]},
        {"time": 2, "position": [1, 0, 0]},
        {"time": 3, "position": [0, 0, 0]}]})"));
  const mabd::MotionFunction& motion = scene.bodies.at(0).motion;
  ASSERT_TRUE(motion);
  // Before the first key: held. Period 2 s from t = 1.
  EXPECT_EQ(motion(0.0).position, Vec3(0, 0, 0));
  EXPECT_NEAR(motion(1.5).position.x(), 0.5, 1e-15);
  EXPECT_NEAR(motion(3.5).position.x(), 0.5, 1e-12);
  EXPECT_NEAR(motion(4.0).position.x(), 1.0, 1e-12);
  // 104.25 = 1 + 51 periods + 1.25: on the way back from 1 to 0.
  EXPECT_NEAR(motion(104.25).position.x(), 0.75, 1e-9);
  EXPECT_NEAR(motion(3.0).position.x(), 0.0, 1e-15);
}

TEST(SceneLoaderContact, OneKeyframeIsAPose) {
  const Scene scene = parse(one_body(R"({"name": "k", "shape": {"type": "sphere", "radius": 1},
      "material": {}, "kind": "kinematic",
      "keyframes": [{"time": 0.5, "position": [1, 2, 3], "orientation": [0, 0, 0, 2]}]})"));
  const BodyDef& def = scene.bodies.at(0);
  EXPECT_EQ(def.position, Vec3(1, 2, 3));
  expect_same_rotation(def.orientation, Quat(0, 0, 0, 1));
  EXPECT_EQ(def.motion(7.0).position, Vec3(1, 2, 3));
}

// ---- bad inputs -------------------------------------------------------------------------------

TEST(SceneLoaderContact, ContactSettingErrors) {
  EXPECT_EQ(parse_error(R"({"settings": {"contact": {"modle": "exact"}}, "bodies": []})"),
            "inline.json: settings.contact: unknown field 'modle' (did you mean 'model'?)");
  EXPECT_EQ(parse_error(R"({"settings": {"contact": {"model": "Exact"}}, "bodies": []})"),
            "inline.json: settings.contact.model: unknown value 'Exact' (expected one of: none, "
            "penalty, exact); did you mean 'exact'?");
  EXPECT_EQ(parse_error(R"({"settings": {"contact": {"friction": 1}}, "bodies": []})"),
            "inline.json: settings.contact.friction: expected a boolean, got number");
  EXPECT_EQ(parse_error(R"({"settings": {"contact": {"time_constant": -0.1}}, "bodies": []})"),
            "inline.json: settings.contact.time_constant: must be non-negative (got -0.1)");
  EXPECT_EQ(parse_error(R"({"settings": {"contact": {"damping_ratio": -1}}, "bodies": []})"),
            "inline.json: settings.contact.damping_ratio: must be non-negative (got -1)");
  EXPECT_EQ(parse_error(R"({"settings": {"contact": {"margin": "1mm"}}, "bodies": []})"),
            "inline.json: settings.contact.margin: expected a number, got string");
  EXPECT_EQ(parse_error(R"({"settings": {"contact": "penalty"}, "bodies": []})"),
            "inline.json: settings.contact: expected an object, got string");
}

TEST(SceneLoaderContact, FrictionErrors) {
  EXPECT_EQ(parse_error(R"({"materials": {"ice": {"friction": -0.1}}, "bodies": []})"),
            "inline.json: materials 'ice': friction: must be non-negative (got -0.1)");
  EXPECT_EQ(parse_error(one_body(R"({"name": "b", "shape": {"type": "sphere", "radius": 1},
                                     "material": {"friction": "high"}})")),
            "inline.json: bodies[0] 'b': material.friction: expected a number, got string");
  EXPECT_EQ(parse_error(R"({"materials": {"ice": {"fricton": 0.1}}, "bodies": []})"),
            "inline.json: materials 'ice': unknown field 'fricton' (did you mean 'friction'?)");
}

TEST(SceneLoaderContact, PlaneErrors) {
  EXPECT_EQ(parse_error(one_body(R"({"name": "floor", "shape": {"type": "plane"},
                                     "material": {}})")),
            "inline.json: bodies[0] 'floor': shape.type: a plane is only for static and "
            "kinematic bodies (this body is dynamic; set \"kind\": \"static\" or "
            "\"kinematic\")");
  EXPECT_EQ(parse_error(one_body(R"({"name": "floor", "shape": {"type": "plane"},
                                     "material": {}, "kind": "dynamic"})")),
            "inline.json: bodies[0] 'floor': shape.type: a plane is only for static and "
            "kinematic bodies (this body is dynamic; set \"kind\": \"static\" or "
            "\"kinematic\")");
  EXPECT_EQ(parse_error(one_body(R"({"name": "floor", "kind": "static", "material": {},
                                     "shape": {"type": "plane", "size": [1, 1, 1]}})")),
            "inline.json: bodies[0] 'floor': shape: field 'size' does not apply to a plane shape "
            "(a plane takes no other field than 'type')");
  EXPECT_EQ(parse_error(one_body(R"({"name": "floor", "kind": "static", "material": {},
                                     "shape": {"type": "plane", "normal": [0, 0, 1]}})")),
            "inline.json: bodies[0] 'floor': shape: unknown field 'normal' (known fields: type)");
  EXPECT_EQ(parse_error(one_body(R"({"name": "floor", "kind": "static", "material": {},
                                     "shape": {"type": "plnae"}})")),
            "inline.json: bodies[0] 'floor': shape.type: unknown value 'plnae' (expected one of: "
            "box, sphere, capsule, cylinder, mesh, plane); did you mean 'plane'?");
}

TEST(SceneLoaderContact, OpenMeshOnADynamicBodySaysWhy) {
  const std::string message = parse_error(
      one_body(R"({"name": "bowl", "material": {},
                   "shape": {"type": "mesh", "file": "meshes/bowl.obj"}})"),
      kDataDir + "/good");
  EXPECT_EQ(message.rfind("inline.json: bodies[0] 'bowl': shape: mesh is not closed", 0), 0u)
      << message;
  EXPECT_NE(message.find("(open meshes are only for static and kinematic bodies; this body is "
                         "dynamic; set \"kind\": \"static\" or \"kinematic\")"),
            std::string::npos)
      << message;
}

TEST(SceneLoaderContact, CollisionErrors) {
  const auto collision = [](const std::string& value) {
    return parse_error(one_body(R"({"name": "bell", "shape": {"type": "sphere", "radius": 0.1},
                                    "material": {}, "collision": )" +
                                value + "}"));
  };
  EXPECT_EQ(collision(R"("yes")"),
            "inline.json: bodies[0] 'bell': collision: expected false, true or a collision "
            "object, got string");
  EXPECT_EQ(collision(R"({"gruop": 2})"),
            "inline.json: bodies[0] 'bell': collision: unknown field 'gruop' (did you mean "
            "'group'?)");
  EXPECT_EQ(collision(R"({"group": 1.5})"),
            "inline.json: bodies[0] 'bell': collision.group: must be an integer (got 1.5)");
  EXPECT_EQ(collision(R"({"group": "2"})"),
            "inline.json: bodies[0] 'bell': collision.group: expected an integer in [0, "
            "4294967295], got string");
  EXPECT_EQ(collision(R"({"mask": -1})"),
            "inline.json: bodies[0] 'bell': collision.mask: must be in [0, 4294967295] (got -1)");
  EXPECT_EQ(collision(R"({"mask": 4294967296})"),
            "inline.json: bodies[0] 'bell': collision.mask: must be in [0, 4294967295] (got "
            "4294967296)");
  EXPECT_EQ(collision(R"({"enabled": 0})"),
            "inline.json: bodies[0] 'bell': collision.enabled: expected a boolean, got number");
  EXPECT_EQ(collision(R"({"primitives": []})"),
            "inline.json: bodies[0] 'bell': collision.primitives: must not be empty (leave "
            "'primitives' out to collide with the body's own shape)");
  EXPECT_EQ(collision(R"({"primitives": {"shape": {"type": "sphere", "radius": 1}}})"),
            "inline.json: bodies[0] 'bell': collision.primitives: expected an array, got object");
  EXPECT_EQ(collision(R"({"primitives": [{"position": [0, 0, 1]}]})"),
            "inline.json: bodies[0] 'bell': collision.primitives[0]: missing required field "
            "'shape'");
  EXPECT_EQ(collision(R"({"primitives": [{"shape": {"type": "sphere", "radius": 1},
                                          "positon": [0, 0, 1]}]})"),
            "inline.json: bodies[0] 'bell': collision.primitives[0]: unknown field 'positon' "
            "(did you mean 'position'?)");
  EXPECT_EQ(collision(R"({"primitives": [{"shape": {"type": "sphere", "radius": -1}}]})"),
            "inline.json: bodies[0] 'bell': collision.primitives[0].shape.radius: must be "
            "positive (got -1)");
  EXPECT_EQ(collision(R"({"primitives": [{"shape": {"type": "box", "size": [1, 1, 1]},
                                          "orientation": [0, 0, 0, 0]}]})"),
            "inline.json: bodies[0] 'bell': collision.primitives[0].orientation: must be a "
            "non-zero quaternion [w, x, y, z]");
  EXPECT_EQ(collision(R"({"primitives": [{"shape": {"type": "plane"}}]})"),
            "inline.json: bodies[0] 'bell': collision.primitives[0].shape.type: a plane is only "
            "for static and kinematic bodies (this body is dynamic)");
}

TEST(SceneLoaderContact, KeyframeErrors) {
  const auto kinematic = [](const std::string& fields) {
    return parse_error(one_body(R"({"name": "paddle", "shape": {"type": "box", "size": [1, 1, 1]},
                                    "material": {}, "kind": "kinematic", )" +
                                fields + "}"));
  };
  EXPECT_EQ(kinematic(R"("keyframes": [{"time": 0, "position": [0, 0, 0]},
                                       {"time": 0, "position": [1, 0, 0]}])"),
            "inline.json: bodies[0] 'paddle': keyframes[1].time: must be greater than the time "
            "of keyframes[0] (0): times must increase strictly (got 0)");
  EXPECT_EQ(kinematic(R"("keyframes": [])"),
            "inline.json: bodies[0] 'paddle': keyframes: must hold at least one keyframe");
  EXPECT_EQ(kinematic(R"("keyframes": {"time": 0, "position": [0, 0, 0]})"),
            "inline.json: bodies[0] 'paddle': keyframes: expected an array, got object");
  EXPECT_EQ(kinematic(R"("keyframes": [{"time": 0}])"),
            "inline.json: bodies[0] 'paddle': keyframes[0]: missing required field 'position'");
  EXPECT_EQ(kinematic(R"("keyframes": [{"position": [0, 0, 0]}])"),
            "inline.json: bodies[0] 'paddle': keyframes[0]: missing required field 'time'");
  EXPECT_EQ(kinematic(R"("keyframes": [{"time": 0, "position": [0, 0, 0], "angle": 0}])"),
            "inline.json: bodies[0] 'paddle': keyframes[0]: unknown field 'angle' (known "
            "fields: time, position, orientation)");
  EXPECT_EQ(kinematic(R"("keyframes": [{"time": 0, "position": [0, 0, 0],
                                        "orientation": [0, 0, 0, 0]}])"),
            "inline.json: bodies[0] 'paddle': keyframes[0].orientation: must be a non-zero "
            "quaternion [w, x, y, z]");
  EXPECT_EQ(kinematic(R"("position": [1, 0, 0], "keyframes": [{"time": 0, "position": [0, 0, 0]}])"),
            "inline.json: bodies[0] 'paddle': position: does not apply to a body with keyframes "
            "(they give its pose and velocity at every time; put the initial pose in a keyframe "
            "at time 0)");
  EXPECT_EQ(kinematic(R"("linear_velocity": [1, 0, 0],
                         "keyframes": [{"time": 0, "position": [0, 0, 0]}])"),
            "inline.json: bodies[0] 'paddle': linear_velocity: does not apply to a body with "
            "keyframes (they give its pose and velocity at every time; put the initial pose in a "
            "keyframe at time 0)");
  EXPECT_EQ(kinematic(R"("loop": true)"),
            "inline.json: bodies[0] 'paddle': loop: only applies to a body with keyframes");
  EXPECT_EQ(kinematic(R"("loop": true, "keyframes": [{"time": 0, "position": [0, 0, 0]}])"),
            "inline.json: bodies[0] 'paddle': loop: a loop needs at least 2 keyframes");
  EXPECT_EQ(kinematic(R"("loop": "yes", "keyframes": [{"time": 0, "position": [0, 0, 0]}])"),
            "inline.json: bodies[0] 'paddle': loop: expected a boolean, got string");
  EXPECT_EQ(kinematic(R"("loop": true, "keyframes": [{"time": 0, "position": [0, 0, 0]},
                                                     {"time": 1, "position": [1, 0, 0]}])"),
            "inline.json: bodies[0] 'paddle': loop: the last keyframe must repeat the position "
            "and orientation of the first (a loop must not jump)");
  EXPECT_EQ(kinematic(R"("loop": true, "keyframes": [
                            {"time": 0, "position": [0, 0, 0]},
                            {"time": 1, "position": [0, 0, 0], "orientation": [0, 1, 0, 0]}])"),
            "inline.json: bodies[0] 'paddle': loop: the last keyframe must repeat the position "
            "and orientation of the first (a loop must not jump)");
  // A loop may end on the first pose written with the opposite quaternion sign.
  EXPECT_NO_THROW(parse(one_body(R"({"name": "p", "shape": {"type": "box", "size": [1, 1, 1]},
      "material": {}, "kind": "kinematic", "loop": true, "keyframes": [
        {"time": 0, "position": [0, 0, 0], "orientation": [0, 1, 0, 0]},
        {"time": 1, "position": [1, 0, 0]},
        {"time": 2, "position": [0, 0, 0], "orientation": [0, -1, 0, 0]}]})")));

  // Dynamic and static bodies.
  EXPECT_EQ(parse_error(one_body(R"({"name": "paddle", "shape": {"type": "box", "size": [1, 1, 1]},
                                     "material": {},
                                     "keyframes": [{"time": 0, "position": [0, 0, 0]}]})")),
            "inline.json: bodies[0] 'paddle': keyframes: only kinematic bodies follow keyframes "
            "(this body is dynamic; set \"kind\": \"kinematic\")");
  EXPECT_EQ(parse_error(one_body(R"({"name": "paddle", "shape": {"type": "box", "size": [1, 1, 1]},
                                     "material": {}, "kind": "static",
                                     "keyframes": [{"time": 0, "position": [0, 0, 0]}]})")),
            "inline.json: bodies[0] 'paddle': keyframes: only kinematic bodies follow keyframes "
            "(this body is static; set \"kind\": \"kinematic\")");
}

TEST(SceneLoaderContact, ExcludedPairErrors) {
  const std::string bodies = R"("bodies": [
      {"name": "hand", "shape": {"type": "sphere", "radius": 0.1}, "material": {}},
      {"name": "table", "shape": {"type": "box", "size": [1, 1, 0.1]}, "material": {},
       "kind": "static"}])";
  const auto exclude = [&](const std::string& pairs) {
    return parse_error("{" + bodies + R"(, "collision_exclude": )" + pairs + "}");
  };
  EXPECT_EQ(exclude(R"([["hand", "tabel"]])"),
            "inline.json: collision_exclude[0][1]: unknown body 'tabel' (known: hand, table); "
            "did you mean 'table'?");
  EXPECT_EQ(exclude(R"([["hand", "table"], ["hand", "hand"]])"),
            "inline.json: collision_exclude[1]: names body 'hand' twice (a pair needs two "
            "different bodies)");
  EXPECT_EQ(exclude(R"([["hand", "table", "hand"]])"),
            "inline.json: collision_exclude[0]: expected an array of 2 body names, got 3 "
            "elements");
  EXPECT_EQ(exclude(R"([{"a": "hand"}])"),
            "inline.json: collision_exclude[0]: expected an array of 2 body names, got object");
  EXPECT_EQ(exclude(R"([["hand", 3]])"),
            "inline.json: collision_exclude[0][1]: expected a string, got number");
  EXPECT_EQ(exclude(R"({"hand": "table"})"),
            "inline.json: collision_exclude: expected an array, got object");
  EXPECT_EQ(exclude(R"([["world", "hand"]])"),
            "inline.json: collision_exclude[0][0]: unknown body 'world' (known: hand, table)");
  EXPECT_EQ(parse_error(R"({"bodies": [], "collision_exclude": [["a", "b"]]})"),
            "inline.json: collision_exclude[0][0]: unknown body 'a' (known: none)");
  EXPECT_EQ(parse_error("{" + bodies + R"(, "collision_exlude": []})"),
            "inline.json: top level: unknown field 'collision_exlude' (did you mean "
            "'collision_exclude'?)");
  EXPECT_NO_THROW(parse("{" + bodies + R"(, "collision_exclude": []})"));
}

// ---- generators ---------------------------------------------------------------------------

TEST(SceneLoaderContact, GeneratedPartsCarryCollision) {
  const Scene scene = parse(R"({"bodies": [
      {"name": "post", "shape": {"type": "box", "size": [0.1, 0.1, 1]}, "material": {},
       "kind": "static", "position": [0, 0, -0.5]}],
    "generators": [
      {"type": "chain", "name": "rope", "links": 7, "spacing": 0.1, "pinned": false,
       "pegs": {"every": 3},
       "link": {"shape": {"type": "box", "size": [0.1, 0.02, 0.02]}, "material": {},
                "collision": {"group": 4, "mask": 1,
                              "primitives": [{"shape": {"type": "capsule", "radius": 0.01,
                                                        "length": 0.08},
                                              "orientation": [0.7071068, 0, 0.7071068, 0]}]}}},
      {"type": "chain", "name": "light", "links": 2, "spacing": 0.1, "attach": "post",
       "link": {"shape": {"type": "sphere", "radius": 0.05}, "material": {},
                "collision": false}}],
    "collision_exclude": [["rope/0", "post"], ["light/1", "rope/6"]]})");
  std::size_t pegs = 0, rope = 0;
  for (const BodyDef& def : scene.bodies) {
    if (def.name.rfind("rope/", 0) == 0) {
      ++rope;
      EXPECT_EQ(def.collision.group, 4u) << def.name;
      EXPECT_EQ(def.collision.mask, 1u) << def.name;
      ASSERT_EQ(def.collision.primitives.size(), 1u) << def.name;
      EXPECT_EQ(def.collision.primitives[0].shape.type, ShapeType::Capsule);
      // Pegs are static colliders with the link's collision.
      if (def.kind == BodyKind::Static) ++pegs;
    } else if (def.name.rfind("light/", 0) == 0) {
      EXPECT_FALSE(def.collision.enabled) << def.name;
    }
  }
  EXPECT_EQ(rope, 7u);
  EXPECT_EQ(pegs, 3u);  // links 0, 3 and 6
  ASSERT_EQ(scene.collision_exclude.size(), 2u);
  EXPECT_EQ(scene.collision_exclude[1].first, "light/1");
}

TEST(SceneLoaderContact, GeneratedPartErrors) {
  const auto chain = [](const std::string& link) {
    return parse_error(R"({"bodies": [], "generators": [
        {"type": "chain", "name": "rope", "links": 2, "spacing": 0.1, "link": )" +
                       link + "}]}");
  };
  EXPECT_EQ(chain(R"({"shape": {"type": "plane"}, "material": {}})"),
            "inline.json: generators[0] 'rope': link.shape.type: a plane is only for static and "
            "kinematic bodies (generated parts are dynamic)");
  EXPECT_EQ(chain(R"({"shape": {"type": "sphere", "radius": 0.05}, "material": {},
                      "collision": {"group": -2}})"),
            "inline.json: generators[0] 'rope': link.collision.group: must be in [0, "
            "4294967295] (got -2)");
  EXPECT_EQ(chain(R"({"shape": {"type": "sphere", "radius": 0.05}, "material": {},
                      "collision": {"primitives": [{"shape": {"type": "plane"}}]}})"),
            "inline.json: generators[0] 'rope': link.collision.primitives[0].shape.type: a plane "
            "is only for static and kinematic bodies (generated parts are dynamic)");
  EXPECT_EQ(chain(R"({"shape": {"type": "sphere", "radius": 0.05}, "material": {},
                      "colision": false})"),
            "inline.json: generators[0] 'rope': link: unknown field 'colision' (did you mean "
            "'collision'?)");
  EXPECT_EQ(parse_error(R"({"bodies": [], "generators": [
        {"type": "chain", "name": "rope", "links": 2, "spacing": 0.1,
         "link": {"shape": {"type": "sphere", "radius": 0.05}, "material": {}}}],
        "collision_exclude": [["rope/2", "rope/0"]]})"),
            "inline.json: collision_exclude[0][0]: unknown body 'rope/2' (known: rope/0, rope/1); "
            "did you mean 'rope/0' or 'rope/1'?");
}

// ---- building the world ---------------------------------------------------------------------

TEST(SceneLoaderContact, BuildWorldFromCollidersAndKeyframes) {
  // Colliders the world accepts without planes or open meshes; excluded pairs are passed on.
  const Scene scene = mabd::load_scene(kDataDir + "/cli/contact_box.json");
  ASSERT_EQ(scene.collision_exclude.size(), 1u);
  mabd::World world = mabd::build_world(scene);
  EXPECT_EQ(world.body_count(), 4u);
  const auto paddle = world.find_body("paddle");
  ASSERT_TRUE(paddle);
  EXPECT_NEAR((world.pose(*paddle).position - Vec3(-0.6, 0, 0.1)).norm(), 0, 1e-12);
  for (int i = 0; i < 20; ++i) world.step();
  // The paddle follows its keyframes: -0.6 -> -0.5 over 0.04 s, halfway at 0.02 s.
  EXPECT_NEAR(world.pose(*paddle).position.x(), -0.55, 1e-9);
  EXPECT_EQ(world.settings().contact.time_constant, 0.004);
}

}  // namespace
