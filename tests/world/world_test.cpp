// World::add_body's checks: each bad definition is rejected with a message that names the body
// and the field, and nothing is added.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>

#include "mabd/mabd.h"

namespace mabd {
namespace {

BodyDef good_box() {
  BodyDef d;
  d.name = "box";
  d.shape.type = ShapeType::Box;
  d.shape.size = Vec3(0.2, 0.1, 0.05);
  d.material = {1000.0, 1e7, 0.3};
  return d;
}

TEST(WorldAddBody, RejectsEachBadFieldWithItsMessage) {
  struct Case {
    std::function<void(BodyDef&)> spoil;
    std::string message;
  };
  const Case cases[] = {
      {[](BodyDef& d) { d.material.youngs_modulus = -2; },
       "body 'box': material.youngs_modulus: must be positive and finite (got -2)"},
      {[](BodyDef& d) { d.material.poisson_ratio = 0.5; },
       "body 'box': material.poisson_ratio: must be in [0, 0.5) (got 0.5)"},
      {[](BodyDef& d) { d.material.density = NAN; },
       "body 'box': material.density: must be positive and finite (got nan)"},
      {[](BodyDef& d) { d.mass = 0.0; }, "body 'box': mass: must be positive and finite (got 0)"},
      {[](BodyDef& d) { d.position.x() = INFINITY; }, "body 'box': position: must be finite"},
      {[](BodyDef& d) { d.linear_velocity.y() = NAN; },
       "body 'box': linear_velocity: must be finite"},
      {[](BodyDef& d) { d.angular_velocity.z() = NAN; },
       "body 'box': angular_velocity: must be finite"},
      {[](BodyDef& d) { d.orientation = Quat(0, 0, 0, 0); },
       "body 'box': orientation: must be a non-zero finite quaternion"},
      {[](BodyDef& d) { d.motion = [](double) { return Pose{}; }; },
       "body 'box': motion: only kinematic bodies follow a prescribed motion"},
      {[](BodyDef& d) { d.material.friction = -0.5; },
       "body 'box': material.friction: must be >= 0 and finite (got -0.5)"},
      {[](BodyDef& d) { d.name.clear(), d.material.density = 0; },
       "body #1: material.density: must be positive and finite (got 0)"},
  };
  for (const Case& c : cases) {
    World world{WorldSettings{}};  // one body already, so a nameless one is "body #1"
    BodyDef other = good_box();
    other.name = "other";
    world.add_body(other);
    BodyDef d = good_box();
    c.spoil(d);
    try {
      world.add_body(d);
      ADD_FAILURE() << "accepted: " << c.message;
    } catch (const InvalidArgument& e) {
      EXPECT_EQ(std::string(e.what()), c.message);
    }
    EXPECT_EQ(world.body_count(), 1u);
  }
}

TEST(WorldAddBody, RejectsADuplicateName) {
  World world{WorldSettings{}};
  world.add_body(good_box());
  try {
    world.add_body(good_box());
    ADD_FAILURE() << "a second 'box' was accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(std::string(e.what()), "body 'box': duplicate body name");
  }
  EXPECT_EQ(world.body_count(), 1u);
}

}  // namespace
}  // namespace mabd
