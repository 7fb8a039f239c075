// Wind (settings.wind): quadratic drag on a free body against the analytic solution, the
// projected area of a turned box, the time-averaged gust load and the per-step impulse cap.
#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "mabd/mabd.h"

namespace mabd {
namespace {

constexpr double kRho = 1.2;  // kg/m^3
const Vec3 kSize(0.2, 0.1, 0.05);  // m

struct Windy {
  World world;
  BodyId box;
};

Windy windy_box(double density, double h, const Wind& wind, double yaw = 0,
                TimeIntegration scheme = TimeIntegration::GeneralizedAlpha) {
  WorldSettings s;
  s.dt = h;
  s.time_integration = scheme;
  s.gravity = Vec3::Zero();
  s.wind = wind;
  Windy w{World(s), {}};
  BodyDef d;
  d.shape.type = ShapeType::Box;
  d.shape.size = kSize;
  d.material = {density, 1e8, 0.3};
  d.orientation = Quat(Eigen::AngleAxisd(yaw, Vec3::UnitZ()));
  w.box = w.world.add_body(d);
  return w;
}

Wind wind_x(double speed) {
  Wind w;
  w.velocity = Vec3(speed, 0, 0);
  w.density = kRho;
  w.drag_coefficient = 1.0;
  return w;
}

double mass(double density) { return density * kSize.prod(); }

// dv/dt = k (U - v)^2 with k = rho C_d A / (2 m): U - v(t) = U / (1 + k U t).
TEST(Wind, FreeBoxFollowsTheQuadraticDragSolution) {
  const double U = 10, density = 100, h = 1e-3;
  Windy w = windy_box(density, h, wind_x(U));
  const double k = kRho * kSize.y() * kSize.z() / (2 * mass(density));
  for (int i = 0; i < 2000; ++i) w.world.step();
  const double t = w.world.time();
  const Vec3 v = w.world.twist(w.box).linear;
  const double expected = U - U / (1 + k * U * t);
  EXPECT_NEAR(v.x(), expected, 2e-3 * expected);  // explicit load: O(h)
  EXPECT_LT(std::abs(v.y()) + std::abs(v.z()), 1e-9);
  EXPECT_LT(w.world.twist(w.box).angular.norm(), 1e-9);
  // The error is first order in h: halving h halves it.
  Windy fine = windy_box(density, h / 2, wind_x(U));
  for (int i = 0; i < 4000; ++i) fine.world.step();
  const double e1 = std::abs(v.x() - expected);
  const double e2 = std::abs(fine.world.twist(fine.box).linear.x() - expected);
  EXPECT_LT(e2, 0.7 * e1);
}

// A box turned by yaw about z presents |cos| sy sz + |sin| sx sz to a wind along x (one
// implicit Euler step from rest: v = a h).
TEST(Wind, TurnedBoxPresentsItsProjectedArea) {
  const double U = 5, density = 500, h = 1e-4;
  for (double yaw : {0.0, std::numbers::pi / 4, std::numbers::pi / 2, 0.3}) {
    Windy w = windy_box(density, h, wind_x(U), yaw, TimeIntegration::ImplicitEuler);
    w.world.step();
    const double area = std::abs(std::cos(yaw)) * kSize.y() * kSize.z() +
                        std::abs(std::sin(yaw)) * kSize.x() * kSize.z();
    const double a = 0.5 * kRho * area * U * U / mass(density);  // m/s^2
    const Vec3 v = w.world.twist(w.box).linear;
    EXPECT_NEAR(v.x() / h, a, 1e-6 * a) << "yaw " << yaw;
    EXPECT_LT(std::abs(v.y()) + std::abs(v.z()), 1e-12) << "yaw " << yaw;
  }
}

// Over one gust period the load averages to rho C_d A U^2 (1 + g^2 / 2) / 2.
TEST(Wind, GustLoadAveragesOverAPeriod) {
  const double U = 8, g = 0.5, period = 0.5, density = 1e6, h = 1e-3;
  Wind wind = wind_x(U);
  wind.gust = g;
  wind.gust_period = period;
  Windy w = windy_box(density, h, wind);
  for (int i = 0; i < 500; ++i) w.world.step();
  const double area = kSize.y() * kSize.z();
  const double dv = 0.5 * kRho * area * U * U * (1 + g * g / 2) / mass(density) * period;
  EXPECT_NEAR(w.world.twist(w.box).linear.x(), dv, 1e-3 * dv);
  // Without the gust: the plain mean load.
  Windy calm = windy_box(density, h, wind_x(U));
  for (int i = 0; i < 500; ++i) calm.world.step();
  EXPECT_NEAR(calm.world.twist(calm.box).linear.x(), dv / (1 + g * g / 2), 1e-3 * dv);
}

// A very light body in a strong wind reaches at most the air speed in one step.
TEST(Wind, OneStepNeverOvertakesTheAir) {
  const double U = 50;
  Windy w = windy_box(0.01, 1e-2, wind_x(U));
  w.world.step();
  const double v = w.world.twist(w.box).linear.x();
  EXPECT_GT(v, 0.5 * U);
  EXPECT_LE(v, U * (1 + 1e-9));
}

TEST(Wind, InvalidSettingsAreRejected) {
  auto rejects = [](const Wind& wind, const std::string& field) {
    WorldSettings s;
    s.wind = wind;
    try {
      validate_settings(s);
      ADD_FAILURE() << field << " accepted";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("settings.wind." + field), std::string::npos) << e.what();
    }
  };
  Wind w;
  w.density = -1;
  rejects(w, "density");
  w = Wind{};
  w.drag_coefficient = std::nan("");
  rejects(w, "drag_coefficient");
  w = Wind{};
  w.gust_period = 0;
  rejects(w, "gust_period");
  w = Wind{};
  w.velocity = Vec3(INFINITY, 0, 0);
  rejects(w, "velocity");
}

}  // namespace
}  // namespace mabd
