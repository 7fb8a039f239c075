#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cmath>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "mabd/error.h"
#include "mabd/scene.h"
#include "mabd/world.h"

namespace {

namespace fs = std::filesystem;
using mabd::Scene;
using mabd::SceneError;

const std::string kDataDir = std::string(MABD_SOURCE_DIR) + "/tests/data";

std::string good(const std::string& name) { return kDataDir + "/good/" + name; }
std::string bad(const std::string& name) { return kDataDir + "/bad/" + name; }

/// Runs `fn`, which must throw SceneError; returns its message after checking it is one line.
template <class Fn>
std::string scene_error(Fn&& fn) {
  try {
    fn();
  } catch (const SceneError& e) {
    const std::string message = e.what();
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    return message;
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected SceneError, got another exception: " << e.what();
    return {};
  }
  ADD_FAILURE() << "expected SceneError, nothing was thrown";
  return {};
}

std::string parse_error(const std::string& json, const std::string& base_dir = ".") {
  return scene_error([&] { mabd::parse_scene(json, "inline.json", base_dir); });
}

bool starts_with(const std::string& s, const std::string& prefix) {
  return s.rfind(prefix, 0) == 0;
}

// ---- bad inputs: one fixture per class of error ------------------------------------------

struct BadCase {
  const char* file;      // under tests/data/bad
  const char* expected;  // message after "PATH: "
  bool exact;            // whole message, or only its beginning
};

void PrintTo(const BadCase& c, std::ostream* os) { *os << c.file; }

const BadCase kBadCases[] = {
    {"unknown_top_field.json", "top level: unknown field 'bodys' (did you mean 'bodies'?)", true},
    {"unknown_settings_field.json", "settings: unknown field 'dtt' (did you mean 'dt'?)", true},
    {"unknown_body_field.json",
     "bodies[0] 'rod': unknown field 'positon' (did you mean 'position'?)", true},
    {"unknown_shape_field.json",
     "bodies[0] 'rod': shape: unknown field 'sise' (did you mean 'size'?)", true},
    {"unknown_material_field.json",
     "materials 'wood': unknown field 'young_modulus' (did you mean 'youngs_modulus'?)", true},
    {"wrong_type.json", "settings.dt: expected a number, got string", true},
    {"missing_material.json", "bodies[0] 'rod': missing required field 'material'", true},
    {"unknown_material.json", "bodies[1] 'rod': material: unknown material 'steel' (known: wood)",
     true},
    {"zero_size.json", "bodies[0] 'rod': shape.size[1]: must be positive (got 0)", true},
    {"negative_size.json", "bodies[0] 'rod': shape.size[1]: must be positive (got -0.02)", true},
    {"negative_radius.json", "bodies[0] 'ball': shape.radius: must be positive (got -0.1)", true},
    {"nan.json", "malformed JSON at line 3, column 11: ", false},
    {"infinite.json", "bodies[0] 'rod': mass: must be finite (got 1e999)", true},
    {"nonpositive_dt.json", "settings.dt: must be positive (got 0)", true},
    {"malformed.json", "malformed JSON at line 4, column 3: ", false},
    {"bad_rotation.json",
     "settings.rotation: unknown value 'quaternion' (expected one of: polar, normalized)", true},
    {"duplicate_names.json", "bodies[1] 'rod': duplicate body name 'rod' (also used by bodies[0])",
     true},
    {"missing_mesh.json", "bodies[0] 'blob': shape.file: mesh file not found: '", false},
    {"reserved_section.json", "colliders: not supported by this version of mabd", true},
    {"missing_bodies.json", "top level: missing required field 'bodies'", true},
    {"zero_quaternion.json", "bodies[0] 'rod': orientation: must be a non-zero quaternion", false},
    {"duplicate_key.json", "settings: duplicate key 'dt'", true},
    {"empty_name.json", "bodies[0]: name: must not be empty", true},
    {"joint_unknown_body.json",
     "joints[0] 'pivot': bodies[1]: unknown body 'rdo' (known: world, rod); did you mean 'rod'?",
     true},
    {"joint_self.json", "joints[0] 'pivot': bodies: body 'rod' cannot be joined to itself", true},
    {"joint_both_world.json",
     "joints[0] 'pivot': bodies: a joint needs at least one body (both are 'world')", true},
    {"joint_zero_axis.json", "joints[0] 'pivot': axis: must be non-zero", true},
    {"joint_parallel_axes.json",
     "joints[0] 'neck': axes: axes are parallel (|cos| = 0.999988; must be below 0.999)", true},
    {"joint_missing_axis.json", "joints[0] 'pivot': missing required field 'axis'", true},
    {"joint_limits_order.json",
     "joints[0] 'pivot': limits: lower (1) is greater than upper (-1)", true},
    {"joint_unknown_field.json",
     "joints[0] 'pivot': unknown field 'anchr' (did you mean 'anchor'?)", true},
    {"joint_unknown_type.json",
     "joints[0] 'pivot': type: unknown value 'hinges' (expected one of: ball, hinge, universal, "
     "prismatic, fixed); did you mean 'hinge'?",
     true},
    {"joint_wrong_type.json",
     "joints[0] 'pivot': anchor: expected an array of 3 numbers, got string", true},
    {"joint_duplicate_names.json",
     "joints[1] 'pivot': duplicate joint name 'pivot' (also used by joints[0])", true},
    {"joint_axis_on_universal.json",
     "joints[0] 'neck': field 'axis' does not apply to a universal joint (a universal joint "
     "takes: name, type, bodies, anchor, compliance, frames, axes)",
     true},
    // Contact and collision.
    {"plane_on_dynamic.json",
     "bodies[0] 'floor': shape.type: a plane is only for static and kinematic bodies (this body "
     "is dynamic; set \"kind\": \"static\" or \"kinematic\")",
     true},
    {"negative_friction.json", "materials 'ice': friction: must be non-negative (got -0.1)", true},
    {"unknown_contact_model.json",
     "settings.contact.model: unknown value 'penality' (expected one of: none, penalty, exact); "
     "did you mean 'penalty'?",
     true},
    {"keyframes_order.json",
     "bodies[0] 'paddle': keyframes[2].time: must be greater than the time of keyframes[1] (1): "
     "times must increase strictly (got 0.5)",
     true},
    {"keyframes_on_dynamic.json",
     "bodies[0] 'paddle': keyframes: only kinematic bodies follow keyframes (this body is "
     "dynamic; set \"kind\": \"kinematic\")",
     true},
    {"primitive_without_shape.json",
     "bodies[0] 'bell': collision.primitives[1]: missing required field 'shape'", true},
    {"group_not_integer.json", "bodies[0] 'bell': collision.group: must be an integer (got 1.5)",
     true},
    {"exclude_unknown_body.json",
     "collision_exclude[0][1]: unknown body 'tabel' (known: hand, table); did you mean 'table'?",
     true},
};

class BadSceneFile : public ::testing::TestWithParam<BadCase> {};

TEST_P(BadSceneFile, MessageNamesFileItemAndProblem) {
  const BadCase& c = GetParam();
  const std::string path = bad(c.file);
  const std::string message = scene_error([&] { mabd::load_scene(path); });
  const std::string expected = path + ": " + c.expected;
  if (c.exact) {
    EXPECT_EQ(message, expected);
  } else {
    EXPECT_TRUE(starts_with(message, expected)) << message;
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, BadSceneFile, ::testing::ValuesIn(kBadCases),
                         [](const ::testing::TestParamInfo<BadCase>& info) {
                           std::string name = info.param.file;
                           name = name.substr(0, name.find('.'));
                           name.erase(std::remove(name.begin(), name.end(), '_'), name.end());
                           return name;
                         });

TEST(BadSceneFiles, EveryFixtureIsCovered) {
  std::set<std::string> listed;
  for (const BadCase& c : kBadCases) listed.insert(c.file);
  for (const auto& entry : fs::directory_iterator(kDataDir + "/bad")) {
    if (entry.path().extension() != ".json") continue;
    EXPECT_TRUE(listed.count(entry.path().filename().string()))
        << entry.path() << " has no expected message";
  }
}

TEST(SceneErrors, NaNLiteralIsAParseErrorNamingTheToken) {
  const std::string message = scene_error([&] { mabd::load_scene(bad("nan.json")); });
  EXPECT_NE(message.find("invalid literal"), std::string::npos) << message;
}

TEST(SceneErrors, MissingMeshNamesResolvedPath) {
  const std::string message = scene_error([&] { mabd::load_scene(bad("missing_mesh.json")); });
  EXPECT_NE(message.find("bad/no_such_mesh.obj"), std::string::npos) << message;
}

TEST(SceneErrors, CannotOpenFile) {
  const std::string path = bad("does_not_exist.json");
  EXPECT_EQ(scene_error([&] { mabd::load_scene(path); }), path + ": cannot open file");
}

TEST(SceneErrors, DirectoryCannotBeOpened) {
  const std::string path = kDataDir + "/bad";
  EXPECT_EQ(scene_error([&] { mabd::load_scene(path); }), path + ": cannot open file");
}

TEST(SceneErrors, ParseSceneUsesGivenName) {
  EXPECT_EQ(parse_error(R"({"settings": {"dt": -1}, "bodies": []})"),
            "inline.json: settings.dt: must be positive (got -1)");
}

TEST(SceneErrors, EmptyText) {
  EXPECT_TRUE(starts_with(parse_error(""), "inline.json: malformed JSON at line 1, column 1: "));
}

TEST(SceneErrors, MalformedColumnOnLaterLine) {
  const std::string message = parse_error("{\n\"bodies\": [\n  1 2]}");
  EXPECT_TRUE(starts_with(message, "inline.json: malformed JSON at line 3, column 5: ")) << message;
}

TEST(SceneErrors, TopLevelMustBeObject) {
  EXPECT_EQ(parse_error("[]"), "inline.json: top level: expected a JSON object, got array");
}

TEST(SceneErrors, UnknownFieldWithoutCloseMatchListsKnownFields) {
  const std::string message = parse_error(R"({"settings": {"xyz": 1}, "bodies": []})");
  EXPECT_EQ(message,
            "inline.json: settings: unknown field 'xyz' (known fields: dt, gravity, "
            "newton_iterations, tolerance, rotation, integrator, time_integration, spectral_radius, solver, dual_tolerance, "
            "dual_max_iterations, steps, threads, wind, contact)");
}

// A setting the world rejects is named by its own path, once.
TEST(SceneErrors, RejectedSettingsNameTheirField) {
  EXPECT_EQ(parse_error(R"({"settings": {"spectral_radius": 2}, "bodies": []})"),
            "inline.json: settings.spectral_radius: must be in [0, 1] (got 2)");
  EXPECT_EQ(parse_error(R"({"settings": {"threads": 300}, "bodies": []})"),
            "inline.json: settings.threads: must be in [1, 256] (got 300)");
  const std::string exact = parse_error(
      R"({"settings": {"contact": {"model": "exact"}, "time_integration": "generalized_alpha"},
          "bodies": []})");
  EXPECT_TRUE(starts_with(exact, "inline.json: settings.contact.model: 'exact' needs "
                                 "time_integration 'implicit_euler'"))
      << exact;
  const std::string stiff = parse_error(
      R"({"settings": {"dt": 0.01, "contact": {"model": "penalty", "time_constant": 0.004}},
          "bodies": []})");
  EXPECT_TRUE(starts_with(stiff, "inline.json: settings.contact.time_constant: 0.004 s is below "
                                 "dt = 0.01 s"))
      << stiff;
}

TEST(SceneSettings, WindIsReadAndChecked) {
  const mabd::Scene scene = mabd::parse_scene(
      R"({"settings": {"wind": {"velocity": [3, 0, 1], "density": 1.1, "drag_coefficient": 0.8,
                                "gust": 0.4, "gust_period": 1.5}}, "bodies": []})",
      "inline.json", ".");
  const mabd::Wind& w = scene.settings.wind;
  EXPECT_EQ(w.velocity, mabd::Vec3(3, 0, 1));
  EXPECT_EQ(w.density, 1.1);
  EXPECT_EQ(w.drag_coefficient, 0.8);
  EXPECT_EQ(w.gust, 0.4);
  EXPECT_EQ(w.gust_period, 1.5);
  EXPECT_NE(parse_error(R"({"settings": {"wind": {"gusts": 1}}, "bodies": []})").find("'gusts'"),
            std::string::npos);
  EXPECT_NE(parse_error(R"({"settings": {"wind": {"density": -1}}, "bodies": []})").find("density"),
            std::string::npos);
  EXPECT_NE(parse_error(R"({"settings": {"wind": {"gust_period": 0}}, "bodies": []})")
                .find("gust_period"),
            std::string::npos);
}

TEST(SceneErrors, DescriptionMustBeString) {
  EXPECT_EQ(parse_error(R"({"description": 3, "bodies": []})"),
            "inline.json: description: expected a string, got number");
}

TEST(SceneErrors, ReservedSectionsAcceptOnlyEmptyArrays) {
  EXPECT_NO_THROW(mabd::parse_scene(R"({"bodies": [], "joints": [], "colliders": [],
                                        "generators": []})",
                                    "inline.json"));
  EXPECT_EQ(parse_error(R"({"bodies": [], "colliders": [{}]})"),
            "inline.json: colliders: not supported by this version of mabd");
  EXPECT_EQ(parse_error(R"({"bodies": [], "generators": [1]})"),
            "inline.json: generators[0]: expected an object, got number");
  EXPECT_EQ(parse_error(R"({"bodies": [], "joints": {}})"),
            "inline.json: joints: expected an array, got object");
}

/// A scene with a rod and a ball plus the given joint objects (JSON text).
std::string joint_scene(const std::string& joints) {
  return R"({"bodies": [
      {"name": "rod", "shape": {"type": "box", "size": [1, 0.02, 0.02]}, "material": {},
       "position": [0.5, 0, 0]},
      {"name": "ball", "shape": {"type": "sphere", "radius": 0.1}, "material": {},
       "position": [1.1, 0, 0]}],
    "joints": [)" +
         joints + "]}";
}

std::string joint_error(const std::string& joint) { return parse_error(joint_scene(joint)); }

TEST(JointErrors, NameAndType) {
  EXPECT_EQ(joint_error("3"), "inline.json: joints[0]: expected an object, got number");
  EXPECT_EQ(joint_error(R"({"type": "ball", "bodies": ["world", "rod"], "anchor": [0, 0, 0]})"),
            "inline.json: joints[0]: missing required field 'name'");
  EXPECT_EQ(joint_error(R"({"name": "", "type": "ball"})"),
            "inline.json: joints[0]: name: must not be empty");
  EXPECT_EQ(joint_error(R"({"name": "j", "bodies": ["world", "rod"], "anchor": [0, 0, 0]})"),
            "inline.json: joints[0] 'j': missing required field 'type'");
  // Without a type, unknown keys are still reported first.
  EXPECT_EQ(joint_error(R"({"name": "j", "bodys": ["world", "rod"]})"),
            "inline.json: joints[0] 'j': unknown field 'bodys' (did you mean 'bodies'?)");
  EXPECT_EQ(joint_error(R"({"name": "j", "type": 1})"),
            "inline.json: joints[0] 'j': type: expected a string, got number");
}

TEST(JointErrors, Bodies) {
  const auto joint = [](const std::string& bodies) {
    return joint_error(R"({"name": "j", "type": "ball", "anchor": [0, 0, 0], "bodies": )" +
                       bodies + "}");
  };
  EXPECT_EQ(joint_error(R"({"name": "j", "type": "ball", "anchor": [0, 0, 0]})"),
            "inline.json: joints[0] 'j': missing required field 'bodies'");
  EXPECT_EQ(joint(R"(["rod"])"),
            "inline.json: joints[0] 'j': bodies: expected an array of 2 body names, got 1 element");
  EXPECT_EQ(joint(R"(["rod", "ball", "world"])"),
            "inline.json: joints[0] 'j': bodies: expected an array of 2 body names, got 3 "
            "elements");
  EXPECT_EQ(joint(R"("rod")"),
            "inline.json: joints[0] 'j': bodies: expected an array of 2 body names, got string");
  EXPECT_EQ(joint(R"(["rod", 2])"),
            "inline.json: joints[0] 'j': bodies[1]: expected a string, got number");
  EXPECT_EQ(joint(R"(["Ball", "rod"])"),
            "inline.json: joints[0] 'j': bodies[0]: unknown body 'Ball' (known: world, rod, "
            "ball); did you mean 'ball'?");
  EXPECT_EQ(joint(R"(["wrld", "rod"])"),
            "inline.json: joints[0] 'j': bodies[0]: unknown body 'wrld' (known: world, rod, "
            "ball); did you mean 'world'?");
  EXPECT_EQ(joint(R"(["hinge", "rod"])"),
            "inline.json: joints[0] 'j': bodies[0]: unknown body 'hinge' (known: world, rod, "
            "ball)");
  EXPECT_EQ(joint(R"(["ball", "ball"])"),
            "inline.json: joints[0] 'j': bodies: body 'ball' cannot be joined to itself");
  EXPECT_EQ(joint(R"(["world", "world"])"),
            "inline.json: joints[0] 'j': bodies: a joint needs at least one body (both are "
            "'world')");
  // A body named "world" would make the name ambiguous.
  EXPECT_EQ(parse_error(R"({"bodies": [{"name": "world", "shape": {"type": "sphere",
                               "radius": 1}, "material": {}},
                             {"name": "b", "shape": {"type": "sphere", "radius": 1},
                              "material": {}}],
                            "joints": [{"name": "j", "type": "ball", "bodies": ["world", "b"],
                                        "anchor": [0, 0, 0]}]})"),
            "inline.json: joints[0] 'j': bodies[0]: 'world' is ambiguous: a body is also named "
            "'world' (rename that body)");
}

TEST(JointErrors, FieldsOfOtherTypes) {
  const std::string common = R"("bodies": ["world", "rod"], "anchor": [0, 0, 0])";
  EXPECT_EQ(joint_error(R"({"name": "j", "type": "fixed", "axis": [0, 1, 0], )" + common + "}"),
            "inline.json: joints[0] 'j': field 'axis' does not apply to a fixed joint (a fixed "
            "joint takes: name, type, bodies, anchor, compliance, frames)");
  EXPECT_EQ(joint_error(R"({"name": "j", "type": "ball", "limits": {}, )" + common + "}"),
            "inline.json: joints[0] 'j': field 'limits' does not apply to a ball joint (a ball "
            "joint takes: name, type, bodies, anchor, compliance, frames, axis, cone, spring)");
  EXPECT_EQ(joint_error(R"({"name": "j", "type": "hinge", "axis": [0, 1, 0], "cone": {}, )" +
                        common + "}"),
            "inline.json: joints[0] 'j': field 'cone' does not apply to a hinge joint (a hinge "
            "joint takes: name, type, bodies, anchor, compliance, frames, axis, limits, spring, "
            "drive, effort_limit)");
  EXPECT_EQ(joint_error(R"({"name": "j", "type": "prismatic", "axes": [], )" + common + "}"),
            "inline.json: joints[0] 'j': field 'axes' does not apply to a prismatic joint (a "
            "prismatic joint takes: name, type, bodies, anchor, compliance, frames, axis, limits, "
            "spring, drive, effort_limit)");
  EXPECT_EQ(joint_error(R"({"name": "j", "type": "universal", "drive": {}, )" + common + "}"),
            "inline.json: joints[0] 'j': field 'drive' does not apply to a universal joint (a "
            "universal joint takes: name, type, bodies, anchor, compliance, frames, axes)");
  EXPECT_EQ(joint_error(R"({"name": "j", "type": "hinge", "axis": [0, 1, 0], "limit": {}, )" +
                        common + "}"),
            "inline.json: joints[0] 'j': unknown field 'limit' (did you mean 'limits'?)");
}

TEST(JointErrors, AnchorAndAxes) {
  const std::string head = R"({"name": "j", "bodies": ["rod", "ball"], )";
  EXPECT_EQ(joint_error(head + R"("type": "ball"})"),
            "inline.json: joints[0] 'j': missing required field 'anchor'");
  EXPECT_EQ(joint_error(head + R"("type": "ball", "anchor": [0, 0]})"),
            "inline.json: joints[0] 'j': anchor: expected an array of 3 numbers, got 2 elements");
  EXPECT_EQ(joint_error(head + R"("type": "ball", "anchor": [0, 0, 1e999]})"),
            "inline.json: joints[0] 'j': anchor[2]: must be finite (got 1e999)");
  EXPECT_EQ(joint_error(head + R"("type": "ball", "anchor": [1, 0, 0], "axis": [0, 0, 0]})"),
            "inline.json: joints[0] 'j': axis: must be non-zero");
  EXPECT_EQ(joint_error(head + R"("type": "prismatic", "anchor": [1, 0, 0]})"),
            "inline.json: joints[0] 'j': missing required field 'axis'");
  EXPECT_EQ(joint_error(head + R"("type": "prismatic", "anchor": [1, 0, 0], "axis": [0, 0, 0]})"),
            "inline.json: joints[0] 'j': axis: must be non-zero");
  EXPECT_EQ(joint_error(head + R"("type": "universal", "anchor": [1, 0, 0]})"),
            "inline.json: joints[0] 'j': missing required field 'axes'");
  EXPECT_EQ(joint_error(head + R"("type": "universal", "anchor": [1, 0, 0],
                                  "axes": [[0, 1, 0]]})"),
            "inline.json: joints[0] 'j': axes: expected an array of 2 axes, got 1 element");
  EXPECT_EQ(joint_error(head + R"("type": "universal", "anchor": [1, 0, 0], "axes": [0, 1, 0]})"),
            "inline.json: joints[0] 'j': axes: expected an array of 2 axes, got 3 elements");
  EXPECT_EQ(joint_error(head + R"("type": "universal", "anchor": [1, 0, 0],
                                  "axes": [[0, 1, 0], [0, 0, 0]]})"),
            "inline.json: joints[0] 'j': axes[1]: must be non-zero");
  EXPECT_EQ(joint_error(head + R"("type": "universal", "anchor": [1, 0, 0],
                                  "axes": [[0, 1, 0], 5]})"),
            "inline.json: joints[0] 'j': axes[1]: expected an array of 3 numbers, got number");
  EXPECT_EQ(joint_error(head + R"("type": "universal", "anchor": [1, 0, 0],
                                  "axes": [[0, 1, 0], [0, -3, 0]]})"),
            "inline.json: joints[0] 'j': axes: axes are parallel (|cos| = 1; must be below "
            "0.999)");
}

TEST(JointErrors, LimitsConeSpringDriveCompliance) {
  const std::string hinge =
      R"({"name": "j", "type": "hinge", "bodies": ["world", "rod"], "anchor": [0, 0, 0],
          "axis": [0, 1, 0], )";
  const std::string ball =
      R"({"name": "j", "type": "ball", "bodies": ["world", "rod"], "anchor": [0, 0, 0], )";
  EXPECT_EQ(joint_error(hinge + R"("limits": {"lower": -1}})"),
            "inline.json: joints[0] 'j': limits: missing required field 'upper'");
  EXPECT_EQ(joint_error(hinge + R"("limits": {"lower": -1, "upper": 1, "soft": true}})"),
            "inline.json: joints[0] 'j': limits: unknown field 'soft' (known fields: lower, "
            "upper)");
  EXPECT_EQ(joint_error(hinge + R"("limits": [-1, 1]})"),
            "inline.json: joints[0] 'j': limits: expected an object, got array");
  EXPECT_EQ(joint_error(ball + R"("cone": {"swing": 0}})"),
            "inline.json: joints[0] 'j': cone.swing: must be in (0, pi) (got 0)");
  EXPECT_EQ(joint_error(ball + R"("cone": {"swing": 3.5}})"),
            "inline.json: joints[0] 'j': cone.swing: must be in (0, pi) (got 3.5)");
  EXPECT_EQ(joint_error(ball + R"("cone": {"twist_lower": 0}})"),
            "inline.json: joints[0] 'j': cone: missing required field 'swing'");
  EXPECT_EQ(joint_error(ball + R"("cone": {"swing": 1, "twist_lower": -0.5}})"),
            "inline.json: joints[0] 'j': cone: 'twist_lower' and 'twist_upper' must be given "
            "together (missing 'twist_upper')");
  EXPECT_EQ(joint_error(ball + R"("cone": {"swing": 1, "twist_lower": 0.5,
                                           "twist_upper": -0.5}})"),
            "inline.json: joints[0] 'j': cone: twist_lower (0.5) is greater than twist_upper "
            "(-0.5)");
  EXPECT_EQ(joint_error(hinge + R"("spring": {"stiffness": -1}})"),
            "inline.json: joints[0] 'j': spring.stiffness: must be non-negative (got -1)");
  EXPECT_EQ(joint_error(hinge + R"("spring": {"damping": -0.1}})"),
            "inline.json: joints[0] 'j': spring.damping: must be non-negative (got -0.1)");
  EXPECT_EQ(joint_error(hinge + R"("spring": {"stifness": 1}})"),
            "inline.json: joints[0] 'j': spring: unknown field 'stifness' (did you mean "
            "'stiffness'?)");
  EXPECT_EQ(joint_error(hinge + R"("drive": {"target": 1}})"),
            "inline.json: joints[0] 'j': drive: missing required field 'mode'");
  EXPECT_EQ(joint_error(hinge + R"("drive": {"mode": "torque", "target": 1}})"),
            "inline.json: joints[0] 'j': drive.mode: unknown value 'torque' (expected one of: "
            "position, velocity, effort)");
  EXPECT_EQ(joint_error(hinge + R"("drive": {"mode": "effort", "target": 1, "damping": 2}})"),
            "inline.json: joints[0] 'j': drive.damping: does not apply to an effort drive (it "
            "takes: mode, target, max_force)");
  EXPECT_EQ(joint_error(hinge + R"("effort_limit": 0})"),
            "inline.json: joints[0] 'j': effort_limit: must be positive (got 0)");
  EXPECT_EQ(joint_error(hinge + R"("drive": {"mode": "position"}})"),
            "inline.json: joints[0] 'j': drive: missing required field 'target'");
  EXPECT_EQ(joint_error(hinge + R"("drive": {"mode": "position", "target": 0,
                                             "max_force": 0}})"),
            "inline.json: joints[0] 'j': drive.max_force: must be positive (got 0)");
  EXPECT_EQ(joint_error(hinge + R"("drive": {"mode": "position", "target": 0,
                                             "damping": -2}})"),
            "inline.json: joints[0] 'j': drive.damping: must be non-negative (got -2)");
  EXPECT_EQ(joint_error(hinge + R"("drive": {"mode": "velocity", "target": 1,
                                             "stiffness": 5}})"),
            "inline.json: joints[0] 'j': drive.stiffness: does not apply to a velocity drive "
            "(it takes: mode, target, damping, max_force)");
  EXPECT_EQ(joint_error(hinge + R"("compliance": -1e-6})"),
            "inline.json: joints[0] 'j': compliance: must be non-negative (got -1e-06)");
}

TEST(JointErrors, DuplicateKeysAndNamesReportTheJoint) {
  EXPECT_EQ(joint_error(R"({"name": "j", "type": "ball", "type": "hinge"})"),
            "inline.json: joints[0] 'j': duplicate key 'type'");
  EXPECT_EQ(joint_error(R"({"name": "j", "type": "hinge", "bodies": ["world", "rod"],
                            "anchor": [0, 0, 0], "axis": [0, 1, 0],
                            "limits": {"lower": 0, "lower": 1}})"),
            "inline.json: joints[0] 'j': limits: duplicate key 'lower'");
  // A joint may share its name with a body.
  EXPECT_NO_THROW(mabd::parse_scene(
      joint_scene(R"({"name": "rod", "type": "ball", "bodies": ["world", "rod"],
                      "anchor": [0, 0, 0]})"),
      "inline.json"));
}

TEST(SceneErrors, VectorLengthAndElementType) {
  EXPECT_EQ(parse_error(R"({"settings": {"gravity": [0, -9.81]}, "bodies": []})"),
            "inline.json: settings.gravity: expected an array of 3 numbers, got 2 elements");
  EXPECT_EQ(parse_error(R"({"settings": {"gravity": 9.81}, "bodies": []})"),
            "inline.json: settings.gravity: expected an array of 3 numbers, got number");
  EXPECT_EQ(parse_error(R"({"settings": {"gravity": [0, 0, "down"]}, "bodies": []})"),
            "inline.json: settings.gravity[2]: expected a number, got string");
  EXPECT_EQ(parse_error(R"({"settings": {"gravity": [0, 0, null]}, "bodies": []})"),
            "inline.json: settings.gravity[2]: expected a number, got null");
}

TEST(SceneErrors, InfiniteNumbersAnywhere) {
  EXPECT_EQ(parse_error(R"({"settings": {"gravity": [0, 0, -1e999]}, "bodies": []})"),
            "inline.json: settings.gravity[2]: must be finite (got -1e999)");
  EXPECT_EQ(parse_error(R"({"settings": {"dt": 1e400}, "bodies": []})"),
            "inline.json: settings.dt: must be finite (got 1e400)");
  EXPECT_EQ(parse_error(R"({"materials": {"wood": {"density": 1E999}}, "bodies": []})"),
            "inline.json: materials 'wood': density: must be finite (got 1E999)");
  EXPECT_EQ(parse_error(R"({"bodies": [{"name": "b", "shape": {"type": "box",
                               "size": [1, 1e999, 1]}, "material": {}}]})"),
            "inline.json: bodies[0] 'b': shape.size[1]: must be finite (got 1e999)");
}

TEST(SceneErrors, IntegerSettings) {
  EXPECT_EQ(parse_error(R"({"settings": {"newton_iterations": 1.5}, "bodies": []})"),
            "inline.json: settings.newton_iterations: must be an integer (got 1.5)");
  EXPECT_EQ(parse_error(R"({"settings": {"newton_iterations": 0}, "bodies": []})"),
            "inline.json: settings.newton_iterations: must be at least 1 (got 0)");
  EXPECT_EQ(parse_error(R"({"settings": {"steps": -5}, "bodies": []})"),
            "inline.json: settings.steps: must be at least 1 (got -5)");
  EXPECT_EQ(parse_error(R"({"settings": {"steps": 1e12}, "bodies": []})"),
            "inline.json: settings.steps: must be at most 2147483647 (got 1e+12)");
  EXPECT_EQ(parse_error(R"({"settings": {"tolerance": 0}, "bodies": []})"),
            "inline.json: settings.tolerance: must be positive (got 0)");
}

TEST(SceneErrors, EnumSuggestions) {
  EXPECT_EQ(parse_error(R"({"settings": {"rotation": "normalised"}, "bodies": []})"),
            "inline.json: settings.rotation: unknown value 'normalised' (expected one of: "
            "polar, normalized); did you mean 'normalized'?");
  EXPECT_EQ(parse_error(R"({"settings": {"integrator": "implicit"}, "bodies": []})"),
            "inline.json: settings.integrator: unknown value 'implicit' (expected one of: "
            "corotated, vanilla)");
  EXPECT_EQ(parse_error(R"({"settings": {"rotation": 1}, "bodies": []})"),
            "inline.json: settings.rotation: expected a string, got number");
}

TEST(SceneErrors, MaterialRanges) {
  EXPECT_EQ(parse_error(R"({"materials": {"wood": {"poisson_ratio": 0.5}}, "bodies": []})"),
            "inline.json: materials 'wood': poisson_ratio: must be in [0, 0.5) (got 0.5)");
  EXPECT_EQ(parse_error(R"({"materials": {"wood": {"poisson_ratio": -0.1}}, "bodies": []})"),
            "inline.json: materials 'wood': poisson_ratio: must be in [0, 0.5) (got -0.1)");
  EXPECT_EQ(parse_error(R"({"materials": {"wood": {"youngs_modulus": 0}}, "bodies": []})"),
            "inline.json: materials 'wood': youngs_modulus: must be positive (got 0)");
  EXPECT_EQ(parse_error(R"({"materials": {"wood": 5}, "bodies": []})"),
            "inline.json: materials 'wood': expected an object, got number");
  EXPECT_EQ(parse_error(R"({"materials": [], "bodies": []})"),
            "inline.json: materials: expected an object, got array");
}

TEST(SceneErrors, InlineMaterial) {
  EXPECT_EQ(parse_error(R"({"bodies": [{"name": "b", "shape": {"type": "sphere", "radius": 1},
                                        "material": {"density": -1}}]})"),
            "inline.json: bodies[0] 'b': material.density: must be positive (got -1)");
  EXPECT_EQ(parse_error(R"({"bodies": [{"name": "b", "shape": {"type": "sphere", "radius": 1},
                                        "material": {"densty": 1}}]})"),
            "inline.json: bodies[0] 'b': material: unknown field 'densty' (did you mean "
            "'density'?)");
  EXPECT_EQ(parse_error(R"({"bodies": [{"name": "b", "shape": {"type": "sphere", "radius": 1},
                                        "material": 7}]})"),
            "inline.json: bodies[0] 'b': material: expected a material name (string) or a "
            "material object, got number");
  EXPECT_EQ(parse_error(R"({"bodies": [{"name": "b", "shape": {"type": "sphere", "radius": 1},
                                        "material": "wood"}]})"),
            "inline.json: bodies[0] 'b': material: unknown material 'wood' (known: none)");
}

TEST(SceneErrors, BodyFields) {
  EXPECT_EQ(parse_error(R"({"bodies": [3]})"),
            "inline.json: bodies[0]: expected an object, got number");
  EXPECT_EQ(parse_error(R"({"bodies": {}})"), "inline.json: bodies: expected an array, got object");
  EXPECT_EQ(parse_error(R"({"bodies": [{"shape": {"type": "sphere", "radius": 1}}]})"),
            "inline.json: bodies[0]: missing required field 'name'");
  EXPECT_EQ(parse_error(R"({"bodies": [{"name": 4}]})"),
            "inline.json: bodies[0]: name: expected a string, got number");
  EXPECT_EQ(parse_error(R"({"bodies": [{"name": "b", "material": {}}]})"),
            "inline.json: bodies[0] 'b': missing required field 'shape'");
  EXPECT_EQ(parse_error(R"({"bodies": [{"name": "b", "shape": {"type": "sphere", "radius": 1},
                                        "material": {}, "mass": 0}]})"),
            "inline.json: bodies[0] 'b': mass: must be positive (got 0)");
  EXPECT_EQ(parse_error(R"({"bodies": [{"name": "b", "shape": {"type": "sphere", "radius": 1},
                                        "material": {}, "kind": "fixed"}]})"),
            "inline.json: bodies[0] 'b': kind: unknown value 'fixed' (expected one of: dynamic, "
            "static, kinematic)");
  EXPECT_EQ(parse_error(R"({"bodies": [{"name": "b", "shape": {"type": "sphere", "radius": 1},
                                        "material": {}, "orientation": [1, 0, 0]}]})"),
            "inline.json: bodies[0] 'b': orientation: expected an array of 4 numbers, got 3 "
            "elements");
  EXPECT_EQ(parse_error(R"({"bodies": [{"name": "b", "shape": {"type": "sphere", "radius": 1},
                                        "material": {}, "angular_velocity": [0, 0, true]}]})"),
            "inline.json: bodies[0] 'b': angular_velocity[2]: expected a number, got boolean");
}

TEST(SceneErrors, ShapeFields) {
  const auto body = [](const std::string& shape) {
    return R"({"bodies": [{"name": "s", "material": {}, "shape": )" + shape + "}]}";
  };
  EXPECT_EQ(parse_error(body(R"({"type": "cube", "size": [1, 1, 1]})")),
            "inline.json: bodies[0] 's': shape.type: unknown value 'cube' (expected one of: box, "
            "sphere, capsule, cylinder, mesh, plane)");
  EXPECT_EQ(parse_error(body(R"({"size": [1, 1, 1]})")),
            "inline.json: bodies[0] 's': shape: missing required field 'type'");
  EXPECT_EQ(parse_error(body(R"({"tpye": "box", "size": [1, 1, 1]})")),
            "inline.json: bodies[0] 's': shape: unknown field 'tpye' (did you mean 'type'?)");
  EXPECT_EQ(parse_error(body(R"({"type": "sphere", "size": [1, 1, 1]})")),
            "inline.json: bodies[0] 's': shape: field 'size' does not apply to a sphere shape (a "
            "sphere takes: radius)");
  EXPECT_EQ(parse_error(body(R"({"type": "box"})")),
            "inline.json: bodies[0] 's': shape: missing required field 'size'");
  EXPECT_EQ(parse_error(body(R"({"type": "capsule", "radius": 0.1, "length": 0})")),
            "inline.json: bodies[0] 's': shape.length: must be positive (got 0)");
  EXPECT_EQ(parse_error(body(R"({"type": "cylinder", "radius": 0, "length": 1})")),
            "inline.json: bodies[0] 's': shape.radius: must be positive (got 0)");
  EXPECT_EQ(parse_error(body(R"({"type": "cylinder", "radius": 1})")),
            "inline.json: bodies[0] 's': shape: missing required field 'length'");
  EXPECT_EQ(parse_error(body(R"({"type": "mesh", "file": ""})")),
            "inline.json: bodies[0] 's': shape.file: must not be empty");
  EXPECT_EQ(parse_error(body(R"("box")")),
            "inline.json: bodies[0] 's': shape: expected an object, got string");
}

TEST(SceneErrors, BrokenMeshFileErrorIsPrefixed) {
  const std::string message = parse_error(
      R"({"bodies": [{"name": "m", "material": {},
                      "shape": {"type": "mesh", "file": "meshes/broken.obj"}}]})",
      kDataDir + "/bad");
  EXPECT_TRUE(starts_with(message, "inline.json: bodies[0] 'm': shape.file: ")) << message;
}

TEST(SceneErrors, OpenMeshIsRejectedByShapeValidation) {
  const std::string message = parse_error(
      R"({"bodies": [{"name": "m", "material": {},
                      "shape": {"type": "mesh", "file": "meshes/open.obj"}}]})",
      kDataDir + "/bad");
  EXPECT_TRUE(starts_with(message, "inline.json: bodies[0] 'm': shape")) << message;
}

TEST(SceneErrors, DuplicateKeysReportTheirObject) {
  EXPECT_EQ(parse_error(R"({"bodies": [{"name": "a", "name": "b"}]})"),
            "inline.json: bodies[0] 'a': duplicate key 'name'");
  EXPECT_EQ(parse_error(R"({"bodies": [], "bodies": []})"),
            "inline.json: top level: duplicate key 'bodies'");
  EXPECT_EQ(parse_error(R"({"materials": {"w": {"density": 1, "density": 2}}, "bodies": []})"),
            "inline.json: materials 'w': duplicate key 'density'");
}

// ---- good inputs ----------------------------------------------------------------------------

TEST(LoadScene, FullExample) {
  const std::string path = good("full.json");
  const Scene scene = mabd::load_scene(path);
  EXPECT_EQ(scene.path, path);

  EXPECT_DOUBLE_EQ(scene.settings.dt, 0.002);
  EXPECT_EQ(scene.settings.gravity, mabd::Vec3(0, 0, -9.81));
  EXPECT_EQ(scene.settings.newton_iterations, 3);
  EXPECT_DOUBLE_EQ(scene.settings.tolerance, 1e-6);
  EXPECT_EQ(scene.settings.rotation, mabd::RotationMode::Normalized);
  EXPECT_EQ(scene.settings.integrator, mabd::IntegratorMode::Vanilla);
  EXPECT_EQ(scene.settings.time_integration, mabd::TimeIntegration::ImplicitEuler);
  EXPECT_EQ(scene.default_steps, 250);

  ASSERT_EQ(scene.materials.size(), 2u);
  EXPECT_DOUBLE_EQ(scene.materials.at("wood").density, 500);
  EXPECT_DOUBLE_EQ(scene.materials.at("wood").youngs_modulus, 1e8);
  EXPECT_DOUBLE_EQ(scene.materials.at("wood").poisson_ratio, 0.3);
  // Missing keys take the Material defaults.
  EXPECT_DOUBLE_EQ(scene.materials.at("soft").density, mabd::Material{}.density);
  EXPECT_DOUBLE_EQ(scene.materials.at("soft").youngs_modulus, 1e6);
  EXPECT_DOUBLE_EQ(scene.materials.at("soft").poisson_ratio, mabd::Material{}.poisson_ratio);

  ASSERT_EQ(scene.bodies.size(), 5u);

  const mabd::BodyDef& rod = scene.bodies[0];
  EXPECT_EQ(rod.name, "rod");
  EXPECT_EQ(rod.shape.type, mabd::ShapeType::Box);
  EXPECT_EQ(rod.shape.size, mabd::Vec3(1.0, 0.02, 0.02));
  EXPECT_DOUBLE_EQ(rod.material.density, 500);
  ASSERT_TRUE(rod.mass.has_value());
  EXPECT_DOUBLE_EQ(*rod.mass, 2.0);
  EXPECT_EQ(rod.position, mabd::Vec3(0.5, 0, 0));
  // [2, 0, 0, 0] is normalised to the identity.
  EXPECT_DOUBLE_EQ(rod.orientation.w(), 1.0);
  EXPECT_DOUBLE_EQ(rod.orientation.vec().norm(), 0.0);
  EXPECT_EQ(rod.linear_velocity, mabd::Vec3(1, 2, 3));
  EXPECT_EQ(rod.angular_velocity, mabd::Vec3(0, 0, 1));
  EXPECT_EQ(rod.kind, mabd::BodyKind::Dynamic);

  const mabd::BodyDef& ball = scene.bodies[1];
  EXPECT_EQ(ball.shape.type, mabd::ShapeType::Sphere);
  EXPECT_DOUBLE_EQ(ball.shape.radius, 0.1);
  EXPECT_DOUBLE_EQ(ball.material.density, 2000);
  EXPECT_DOUBLE_EQ(ball.material.youngs_modulus, mabd::Material{}.youngs_modulus);
  EXPECT_DOUBLE_EQ(ball.material.poisson_ratio, 0.25);
  EXPECT_FALSE(ball.mass.has_value());
  EXPECT_EQ(ball.position, mabd::Vec3(0, 0, 1));
  EXPECT_TRUE(ball.orientation.isApprox(mabd::Quat::Identity()));
  EXPECT_EQ(ball.linear_velocity, mabd::Vec3::Zero());
  EXPECT_EQ(ball.kind, mabd::BodyKind::Dynamic);

  const mabd::BodyDef& pill = scene.bodies[2];
  EXPECT_EQ(pill.shape.type, mabd::ShapeType::Capsule);
  EXPECT_DOUBLE_EQ(pill.shape.radius, 0.05);
  EXPECT_DOUBLE_EQ(pill.shape.length, 0.2);
  EXPECT_DOUBLE_EQ(pill.material.youngs_modulus, 1e6);
  EXPECT_DOUBLE_EQ(pill.orientation.w(), 0.0);
  EXPECT_DOUBLE_EQ(pill.orientation.z(), 1.0);
  EXPECT_EQ(pill.kind, mabd::BodyKind::Kinematic);

  const mabd::BodyDef& drum = scene.bodies[3];
  EXPECT_EQ(drum.shape.type, mabd::ShapeType::Cylinder);
  EXPECT_DOUBLE_EQ(drum.shape.radius, 0.3);
  EXPECT_DOUBLE_EQ(drum.shape.length, 0.1);
  EXPECT_EQ(drum.kind, mabd::BodyKind::Static);

  const mabd::BodyDef& tet = scene.bodies[4];
  EXPECT_EQ(tet.shape.type, mabd::ShapeType::Mesh);
  EXPECT_EQ(tet.shape.mesh.vertices.size(), 4u);
  EXPECT_EQ(tet.shape.mesh.triangles.size(), 4u);
  // Resolved against the scene file's directory.
  EXPECT_TRUE(fs::equivalent(tet.shape.mesh_file, good("meshes/tetra.obj")))
      << tet.shape.mesh_file;
}

TEST(LoadScene, MinimalSceneTakesDefaults) {
  const Scene scene = mabd::load_scene(good("minimal.json"));
  const mabd::WorldSettings defaults;
  EXPECT_EQ(scene.settings.dt, defaults.dt);
  EXPECT_EQ(scene.settings.gravity, defaults.gravity);
  EXPECT_EQ(scene.settings.newton_iterations, defaults.newton_iterations);
  EXPECT_EQ(scene.settings.tolerance, defaults.tolerance);
  EXPECT_EQ(scene.settings.rotation, defaults.rotation);
  EXPECT_EQ(scene.settings.time_integration, defaults.time_integration);
  EXPECT_EQ(scene.settings.integrator, defaults.integrator);
  EXPECT_EQ(scene.default_steps, 1000);
  EXPECT_TRUE(scene.materials.empty());
  EXPECT_TRUE(scene.bodies.empty());
}

TEST(ParseScene, StringSceneHasNoPathAndResolvesMeshesAgainstBaseDir) {
  const Scene scene = mabd::parse_scene(
      R"({"bodies": [{"name": "t", "material": {},
                      "shape": {"type": "mesh", "file": "meshes/tetra.obj"}}]})",
      "inline.json", kDataDir + "/good");
  EXPECT_EQ(scene.path, "");
  ASSERT_EQ(scene.bodies.size(), 1u);
  EXPECT_EQ(scene.bodies[0].shape.mesh.triangles.size(), 4u);
}

TEST(ParseScene, AbsoluteMeshPath) {
  const std::string mesh = fs::absolute(good("meshes/tetra.obj")).string();
  const Scene scene = mabd::parse_scene(
      R"({"bodies": [{"name": "t", "material": {}, "shape": {"type": "mesh", "file": ")" + mesh +
          R"("}}]})",
      "inline.json", "/nonexistent");
  EXPECT_EQ(scene.bodies[0].shape.mesh.vertices.size(), 4u);
}

TEST(ParseScene, IntegersAreAcceptedAsNumbersAndIntegralFloatsAsIntegers) {
  const Scene scene = mabd::parse_scene(
      R"({"settings": {"dt": 1, "newton_iterations": 4.0, "steps": 20},
          "bodies": [{"name": "b", "shape": {"type": "box", "size": [1, 2, 3]},
                      "material": {"density": 7}, "mass": 3}]})",
      "inline.json");
  EXPECT_DOUBLE_EQ(scene.settings.dt, 1.0);
  EXPECT_EQ(scene.settings.newton_iterations, 4);
  EXPECT_EQ(scene.default_steps, 20);
  EXPECT_EQ(scene.bodies[0].shape.size, mabd::Vec3(1, 2, 3));
  EXPECT_DOUBLE_EQ(*scene.bodies[0].mass, 3.0);
}

TEST(ParseScene, OrientationIsNormalised) {
  const Scene scene = mabd::parse_scene(
      R"({"bodies": [{"name": "b", "shape": {"type": "sphere", "radius": 1}, "material": {},
                      "orientation": [1, 1, 0, 0]}]})",
      "inline.json");
  const mabd::Quat& q = scene.bodies[0].orientation;
  EXPECT_NEAR(q.norm(), 1.0, 1e-15);
  EXPECT_NEAR(q.w(), std::sqrt(0.5), 1e-15);
  EXPECT_NEAR(q.x(), std::sqrt(0.5), 1e-15);
}

TEST(LoadScene, JointsOfEveryType) {
  const Scene scene = mabd::load_scene(good("joints.json"));
  ASSERT_EQ(scene.bodies.size(), 6u);
  ASSERT_EQ(scene.joints.size(), 5u);
  const double r2 = std::sqrt(0.5);

  for (const mabd::SceneJoint& joint : scene.joints) {
    // Bodies are resolved by build_world.
    EXPECT_FALSE(joint.def.body_a.valid()) << joint.def.name;
    EXPECT_FALSE(joint.def.body_b.valid()) << joint.def.name;
  }

  const mabd::SceneJoint& shoulder = scene.joints[0];
  EXPECT_EQ(shoulder.def.name, "shoulder");
  EXPECT_EQ(shoulder.def.type, mabd::JointType::Ball);
  EXPECT_EQ(shoulder.body_a, "world");
  EXPECT_EQ(shoulder.body_b, "rod");
  EXPECT_EQ(shoulder.def.anchor, mabd::Vec3(0, 0, 0));
  EXPECT_EQ(shoulder.def.axis, mabd::Vec3(0, 0, 1));  // normalised
  ASSERT_TRUE(shoulder.def.cone.has_value());
  EXPECT_DOUBLE_EQ(shoulder.def.cone->swing, 0.5);
  ASSERT_TRUE(shoulder.def.cone->twist_lower.has_value());
  ASSERT_TRUE(shoulder.def.cone->twist_upper.has_value());
  EXPECT_DOUBLE_EQ(*shoulder.def.cone->twist_lower, -0.2);
  EXPECT_DOUBLE_EQ(*shoulder.def.cone->twist_upper, 0.3);
  EXPECT_DOUBLE_EQ(shoulder.def.compliance, 1e-6);
  EXPECT_FALSE(shoulder.def.limits.has_value());
  EXPECT_FALSE(shoulder.def.spring.has_value());
  EXPECT_FALSE(shoulder.def.drive.has_value());

  const mabd::SceneJoint& elbow = scene.joints[1];
  EXPECT_EQ(elbow.def.name, "elbow");
  EXPECT_EQ(elbow.def.type, mabd::JointType::Hinge);
  EXPECT_EQ(elbow.body_a, "rod");
  EXPECT_EQ(elbow.body_b, "arm");
  EXPECT_EQ(elbow.def.anchor, mabd::Vec3(1, 0, 0));
  EXPECT_EQ(elbow.def.axis, mabd::Vec3(0, 1, 0));
  ASSERT_TRUE(elbow.def.limits.has_value());
  EXPECT_DOUBLE_EQ(elbow.def.limits->lower, -1);
  EXPECT_DOUBLE_EQ(elbow.def.limits->upper, 1.5);
  ASSERT_TRUE(elbow.def.spring.has_value());
  EXPECT_DOUBLE_EQ(elbow.def.spring->stiffness, 10);
  EXPECT_DOUBLE_EQ(elbow.def.spring->damping, 0.5);
  EXPECT_DOUBLE_EQ(elbow.def.spring->rest, 0.1);
  ASSERT_TRUE(elbow.def.drive.has_value());
  EXPECT_EQ(elbow.def.drive->mode, mabd::DriveMode::Position);
  EXPECT_DOUBLE_EQ(elbow.def.drive->target, 0.2);
  EXPECT_DOUBLE_EQ(elbow.def.drive->stiffness, 100);
  EXPECT_DOUBLE_EQ(elbow.def.drive->damping, 2);
  EXPECT_DOUBLE_EQ(elbow.def.drive->max_force, 50);
  EXPECT_DOUBLE_EQ(elbow.def.compliance, 0);
  EXPECT_FALSE(elbow.def.cone.has_value());

  const mabd::SceneJoint& wrist = scene.joints[2];
  EXPECT_EQ(wrist.def.type, mabd::JointType::Universal);
  EXPECT_EQ(wrist.body_a, "arm");
  EXPECT_EQ(wrist.body_b, "cross");
  EXPECT_EQ(wrist.def.axes[0], mabd::Vec3(0, 1, 0));
  EXPECT_EQ(wrist.def.axes[1], mabd::Vec3(0, 0, 1));
  EXPECT_DOUBLE_EQ(wrist.def.compliance, 1e-7);

  const mabd::SceneJoint& rail = scene.joints[3];
  EXPECT_EQ(rail.def.type, mabd::JointType::Prismatic);
  EXPECT_EQ(rail.body_a, "base");
  EXPECT_EQ(rail.body_b, "slider");
  EXPECT_EQ(rail.def.anchor, mabd::Vec3(0, 0, -0.95));
  EXPECT_NEAR(rail.def.axis[0], r2, 1e-15);
  EXPECT_NEAR(rail.def.axis[1], r2, 1e-15);
  EXPECT_EQ(rail.def.axis[2], 0.0);
  ASSERT_TRUE(rail.def.limits.has_value());
  EXPECT_DOUBLE_EQ(rail.def.limits->lower, 0);
  EXPECT_DOUBLE_EQ(rail.def.limits->upper, 0.5);
  ASSERT_TRUE(rail.def.spring.has_value());
  EXPECT_DOUBLE_EQ(rail.def.spring->stiffness, 200);
  EXPECT_DOUBLE_EQ(rail.def.spring->rest, 0.25);
  ASSERT_TRUE(rail.def.drive.has_value());
  EXPECT_EQ(rail.def.drive->mode, mabd::DriveMode::Velocity);
  EXPECT_DOUBLE_EQ(rail.def.drive->target, 0.1);
  EXPECT_DOUBLE_EQ(rail.def.drive->stiffness, 0);
  EXPECT_DOUBLE_EQ(rail.def.drive->damping, 5);
  EXPECT_TRUE(std::isinf(rail.def.drive->max_force));  // default: unlimited
  EXPECT_DOUBLE_EQ(rail.def.compliance, 0);  // default

  const mabd::SceneJoint& weld = scene.joints[4];
  EXPECT_EQ(weld.def.type, mabd::JointType::Fixed);
  EXPECT_EQ(weld.body_a, "slider");
  EXPECT_EQ(weld.body_b, "plate");
  EXPECT_DOUBLE_EQ(weld.def.compliance, 1e-8);
}

TEST(ParseScene, MinimalJointsTakeDefaults) {
  const Scene scene = mabd::parse_scene(
      R"({"bodies": [{"name": "b", "shape": {"type": "sphere", "radius": 1}, "material": {}}],
          "joints": [{"name": "ball", "type": "ball", "bodies": ["b", "world"],
                      "anchor": [0, 0, 1]},
                     {"name": "spring", "type": "hinge", "bodies": ["world", "b"],
                      "anchor": [0, 0, 1], "axis": [1, 0, 0], "spring": {}}]})",
      "inline.json");
  ASSERT_EQ(scene.joints.size(), 2u);
  const mabd::JointDef& ball = scene.joints[0].def;
  EXPECT_EQ(scene.joints[0].body_a, "b");
  EXPECT_EQ(scene.joints[0].body_b, "world");
  EXPECT_EQ(ball.axis, mabd::JointDef{}.axis);
  EXPECT_FALSE(ball.cone.has_value());
  EXPECT_DOUBLE_EQ(ball.compliance, 0);
  const mabd::JointDef& hinge = scene.joints[1].def;
  ASSERT_TRUE(hinge.spring.has_value());
  EXPECT_DOUBLE_EQ(hinge.spring->stiffness, 0);
  EXPECT_DOUBLE_EQ(hinge.spring->damping, 0);
  EXPECT_DOUBLE_EQ(hinge.spring->rest, 0);
  EXPECT_FALSE(hinge.limits.has_value());
  EXPECT_FALSE(hinge.drive.has_value());
}

TEST(ParseScene, ConeWithoutTwistLimits) {
  const Scene scene = mabd::parse_scene(
      joint_scene(R"({"name": "j", "type": "ball", "bodies": ["rod", "ball"],
                      "anchor": [1, 0, 0], "axis": [1, 0, 0], "cone": {"swing": 3.1}})"),
      "inline.json");
  const mabd::JointDef& def = scene.joints.at(0).def;
  ASSERT_TRUE(def.cone.has_value());
  EXPECT_DOUBLE_EQ(def.cone->swing, 3.1);
  EXPECT_FALSE(def.cone->twist_lower.has_value());
  EXPECT_FALSE(def.cone->twist_upper.has_value());
}

// ---- build_world ------------------------------------------------------------------------------

TEST(BuildWorld, CreatesEveryBody) {
  const Scene scene = mabd::load_scene(good("full.json"));
  const mabd::World world = mabd::build_world(scene);
  EXPECT_EQ(world.body_count(), 5u);
  EXPECT_DOUBLE_EQ(world.settings().dt, 0.002);
  const auto rod = world.find_body("rod");
  ASSERT_TRUE(rod.has_value());
  EXPECT_EQ(world.body_info(*rod).name, "rod");
  EXPECT_NEAR(world.body_info(*rod).mass, 2.0, 1e-12);  // mass overrides density
  const auto tet = world.find_body("tet");
  ASSERT_TRUE(tet.has_value());
  EXPECT_NEAR(world.body_info(*tet).volume, 1.0 / 6.0, 1e-12);
  EXPECT_FALSE(world.find_body("nope").has_value());
}

TEST(BuildWorld, HingePendulum) {
  const mabd::World world = mabd::build_world(mabd::load_scene(good("pendulum.json")));
  EXPECT_EQ(world.body_count(), 1u);
  EXPECT_EQ(world.joint_count(), 1u);
  EXPECT_EQ(world.constraint_rows(), 5u);
  const auto pivot = world.find_joint("pivot");
  ASSERT_TRUE(pivot.has_value());
  EXPECT_EQ(world.joint_name(*pivot), "pivot");
}

TEST(BuildWorld, JointsOfEveryType) {
  const mabd::World world = mabd::build_world(mabd::load_scene(good("joints.json")));
  EXPECT_EQ(world.body_count(), 6u);
  EXPECT_EQ(world.joint_count(), 5u);
  EXPECT_EQ(world.constraint_rows(), 3u + 5u + 4u + 5u + 6u);
  for (const char* name : {"shoulder", "elbow", "wrist", "rail", "weld"}) {
    EXPECT_TRUE(world.find_joint(name).has_value()) << name;
  }
}

TEST(BuildWorld, JointBodiesAreResolvedByName) {
  Scene scene = mabd::load_scene(good("pendulum.json"));
  scene.path = "my.json";
  scene.joints.at(0).body_b = "nope";  // bypasses the loader's checks
  EXPECT_EQ(scene_error([&] { mabd::build_world(scene); }),
            "my.json: joints[0] 'pivot': unknown body 'nope'");
}

TEST(BuildWorld, WorldJointErrorsBecomeSceneErrors) {
  Scene scene = mabd::load_scene(good("pendulum.json"));
  scene.path = "my.json";
  scene.joints.at(0).def.axis = mabd::Vec3::Zero();  // bypasses the loader's checks
  const std::string message = scene_error([&] { mabd::build_world(scene); });
  EXPECT_TRUE(starts_with(message, "my.json: joints[0] 'pivot': ")) << message;
}

TEST(BuildWorld, EmptyScene) {
  const mabd::World world = mabd::build_world(mabd::load_scene(good("minimal.json")));
  EXPECT_EQ(world.body_count(), 0u);
}

TEST(BuildWorld, WorldErrorsBecomeSceneErrors) {
  Scene scene;
  scene.path = "my.json";
  mabd::BodyDef ok;
  ok.name = "fine";
  mabd::BodyDef def;
  def.name = "bad";
  def.material.density = -1;  // bypasses the loader's checks
  scene.bodies = {ok, def};
  const std::string message = scene_error([&] { mabd::build_world(scene); });
  EXPECT_TRUE(starts_with(message, "my.json: bodies[1] 'bad': ")) << message;

  scene.bodies = {};
  scene.settings.dt = -1;
  const std::string settings_message = scene_error([&] { mabd::build_world(scene); });
  EXPECT_TRUE(starts_with(settings_message, "my.json: settings: ")) << settings_message;
}

}  // namespace

// ---- large scenes: linear-time lookups, bounded messages ----------------------------------

namespace {

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

/// An explicit chain of `n` boxes hanging from the world, joint i naming its bodies; the
/// second body of joint `typo` (if any) gets an "x" appended.
std::string explicit_chain(int n, int typo = -1) {
  std::string json = R"({"materials": {"m": {"density": 1000, "youngs_modulus": 1e8}},
    "bodies": [)";
  for (int i = 0; i < n; ++i) {
    json += (i ? "," : "") + std::string(R"({"name": "l)") + std::to_string(i) +
            R"(", "shape": {"type": "box", "size": [0.1, 0.02, 0.02]}, "material": "m",
            "position": [)" + std::to_string(0.1 * i + 0.05) + ", 0, 0]}";
  }
  json += R"(], "joints": [)";
  for (int i = 0; i < n; ++i) {
    const std::string a = i == 0 ? "world" : "l" + std::to_string(i - 1);
    const std::string b = "l" + std::to_string(i) + (i == typo ? "x" : "");
    json += (i ? "," : "") + std::string(R"({"name": "j)") + std::to_string(i) +
            R"(", "type": "ball", "bodies": [")" + a + R"(", ")" + b + R"("], "anchor": [)" +
            std::to_string(0.1 * i) + ", 0, 0]}";
  }
  return json + "]}";
}

}  // namespace

/// The shortest of three wall times of f() (s): a ratio of two such times is robust to the
/// load of a shared machine where an absolute limit is not.
template <class F>
double best_time(F&& f) {
  double best = 1e300;
  for (int k = 0; k < 3; ++k) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, seconds_since(t0));
  }
  return best;
}

TEST(LargeScenes, ExplicitChainLoadsInLinearTime) {
  // Each joint looked its two bodies up by a linear search: 20000 joints took seconds, and
  // eight times the joints 64 times as long. Linear: about eight times.
  const std::string small = explicit_chain(2500), large = explicit_chain(20000);
  Scene scene;
  const double t_small = best_time([&] { mabd::parse_scene(small, "chain.json"); });
  const double t_large = best_time([&] { scene = mabd::parse_scene(large, "chain.json"); });
  std::printf("2500 joints %.3f s, 20000 joints %.3f s (ratio %.2f)\n", t_small, t_large,
              t_large / t_small);
  EXPECT_LT(t_large / t_small, 24.0);
  ASSERT_EQ(scene.joints.size(), 20000u);
  EXPECT_EQ(scene.joints.back().body_a, "l19998");
}

TEST(LargeScenes, UnknownBodyMessageIsShortAndQuick) {
  // Edit distances against every body, and every name in the message, made one typo in a
  // large scene cost seconds and megabytes.
  // Reporting the typo costs no more than loading the scene (with the uncapped search it
  // cost many times as much).
  const std::string json = explicit_chain(20000, /*typo=*/12345);
  std::string message;
  const double t_error = best_time([&] { message = parse_error(json); });
  const std::string good = explicit_chain(20000);
  const double t_load = best_time([&] { mabd::parse_scene(good, "chain.json"); });
  std::printf("error %.3f s, load %.3f s\n", t_error, t_load);
  EXPECT_LT(t_error, 2.0 * t_load);
  EXPECT_EQ(message,
            "inline.json: joints[12345] 'j12345': bodies[1]: unknown body 'l12345x' (known: "
            "world, l0, l1, l2, l3, l4, l5, l6, l7, l8, ... (20001 in all)); did you mean "
            "'l12345', 'l1234' or 'l1235'?");

  // Unknown materials are listed the same way.
  std::string materials = R"({"materials": {)";
  for (int i = 0; i < 20000; ++i) {
    materials += (i ? "," : "") + std::string("\"wood") + std::to_string(i) +
                 R"(": {"density": 700})";
  }
  materials += R"(}, "bodies": [{"name": "b", "shape": {"type": "sphere", "radius": 0.1},
                 "material": "wood_1"}]})";
  EXPECT_EQ(parse_error(materials),
            "inline.json: bodies[0] 'b': material: unknown material 'wood_1' (known: wood0, "
            "wood1, wood10, wood100, wood1000, wood10000, wood10001, wood10002, wood10003, "
            "wood10004, ... (20000 in all)); did you mean 'wood1', 'wood11' or 'wood21'?");
}
