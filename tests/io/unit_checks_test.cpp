// Warnings for likely unit slips: degrees for radians, millimetres for metres, grams for
// kilograms. Each slip is reported once, naming the item; plausible scenes get none.
#include "io/unit_checks.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "mabd/scene.h"

namespace {

using Lines = std::vector<std::string>;

/// An arm: upper arm, forearm and hand (capsules and a box of flesh), elbow and wrist hinges.
/// `forearm` and `elbow` are spliced in as JSON members.
std::string arm(const std::string& forearm = "", const std::string& elbow = "",
                const std::string& hand_size = "[0.08, 0.02, 0.1]") {
  return R"({"materials": {"flesh": {"density": 1050, "youngs_modulus": 1e7}},
    "bodies": [
      {"name": "upper", "shape": {"type": "capsule", "radius": 0.04, "length": 0.25},
       "material": "flesh", "position": [0, 0, 1]},
      {"name": "forearm", "shape": {"type": "capsule", "radius": 0.035, "length": 0.22},
       "material": "flesh", "position": [0, 0, 0.65])" + forearm + R"(},
      {"name": "hand", "shape": {"type": "box", "size": )" + hand_size + R"(},
       "material": "flesh", "position": [0, 0, 0.45]}],
    "joints": [
      {"name": "elbow", "type": "hinge", "bodies": ["upper", "forearm"], "anchor": [0, 0, 0.8],
       "axis": [0, 1, 0])" + elbow + R"(},
      {"name": "wrist", "type": "hinge", "bodies": ["forearm", "hand"], "anchor": [0, 0, 0.5],
       "axis": [1, 0, 0]}]})";
}

Lines warnings(const std::string& json) { return mabd::parse_scene(json, "arm.json").warnings; }

TEST(UnitChecks, APlausibleArmHasNoWarning) {
  EXPECT_EQ(warnings(arm(R"(, "mass": 1.4)", R"(, "limits": {"lower": 0, "upper": 2.6})")),
            Lines{});
}

TEST(UnitChecks, LimitsInDegrees) {
  EXPECT_EQ(warnings(arm("", R"(, "limits": {"lower": -90, "upper": 90})")),
            (Lines{"arm.json: joints[0] 'elbow': limits.lower -90 is beyond a full turn: angles "
                   "are in radians (-90 degrees would be -1.571 rad)",
                   "arm.json: joints[0] 'elbow': limits.upper 90 is beyond a full turn: angles "
                   "are in radians (90 degrees would be 1.571 rad)"}));
  EXPECT_EQ(warnings(arm("", R"(, "drive": {"mode": "position", "target": 45})")),
            (Lines{"arm.json: joints[0] 'elbow': drive.target 45 is beyond a full turn: angles "
                   "are in radians (45 degrees would be 0.7854 rad)"}));
}

TEST(UnitChecks, AThousandKilogramForearm) {
  // Capsule r = 0.035 m, length 0.22 m: pi r^2 l + 4/3 pi r^3 = 1.0262e-3 m^3.
  EXPECT_EQ(warnings(arm(R"(, "mass": 1000)")),
            (Lines{"arm.json: bodies[1] 'forearm': density 9.744e+05 kg/m^3 (mass 1000 kg in "
                   "0.001026 m^3) is beyond any solid (at most 3e+04 kg/m^3): a mass in grams, "
                   "or a size in millimetres?"}));
  EXPECT_EQ(warnings(arm(R"(, "mass": 0.0001)")),
            (Lines{"arm.json: bodies[1] 'forearm': density 0.09744 kg/m^3 (mass 0.0001 kg in "
                   "0.001026 m^3) is below any solid (at least 1 kg/m^3): a density in g/cm^3, "
                   "or a size in the wrong unit?"}));
}

TEST(UnitChecks, SizesInMillimetres) {
  // A 50 mm hand written as 50 (m) among bodies of a few decimetres.
  EXPECT_EQ(warnings(arm("", "", "[80, 20, 100]")),
            (Lines{"arm.json: bodies[2] 'hand': shape is 100 m across, 303 times the median "
                   "body (0.33 m): sizes are in metres (millimetres meant?)"}));
  // Beyond a kilometre, or under 0.1 mm, whatever the other bodies.
  EXPECT_EQ(warnings(arm("", "", "[1500, 0.02, 0.1]")).front(),
            "arm.json: bodies[2] 'hand': shape is 1500 m across, over a kilometre: sizes are in "
            "metres (millimetres meant?)");
  EXPECT_EQ(warnings(arm("", "", "[0.08, 0.00005, 0.1]")),
            (Lines{"arm.json: bodies[2] 'hand': shape is 5e-05 m thin, under 0.1 mm: sizes are "
                   "in metres"}));
}

TEST(UnitChecks, GeneratedBodiesAreCountedNotListed) {
  // A 20-link chain of 1000-kg, 10 cm capsules: five warnings, then a count.
  const Lines lines = warnings(R"({"materials": {"m": {"density": 1000, "youngs_modulus": 1e8}},
    "bodies": [], "generators": [{"type": "chain", "name": "rope", "links": 20,
      "link": {"shape": {"type": "capsule", "radius": 0.01, "length": 0.08}, "material": "m",
               "mass": 1000}, "spacing": 0.1}]})");
  ASSERT_EQ(lines.size(), mabd::io::kMaxWarningsPerKind + 1);
  EXPECT_EQ(lines.front().rfind("arm.json: generated body 'rope/0': density ", 0), 0u)
      << lines.front();
  EXPECT_EQ(lines.back(), "arm.json: ... and 15 more bodies denser than any solid");
}

}  // namespace
