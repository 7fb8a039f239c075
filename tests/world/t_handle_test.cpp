// The T-handle (Dzhanibekov) flip: an asymmetric body spun about its intermediate axis flips
// periodically. The flip period must match an RK4 integration of Euler's rigid-body equations
// that this test computes itself. No gyroscopic term is added anywhere in mabd.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "mabd/mabd.h"

namespace mabd {
namespace {

const std::string kMesh = std::string(MABD_SOURCE_DIR) + "/meshes/t_handle.obj";
constexpr double kDensity = 2700;  // aluminium
const Vec3 kOmega0Body(0.01, 3.0, 0.01);  // rad/s on principal axes (intermediate = axis 1)

/// Times (s) at which the intermediate-axis angular velocity changes sign.
double mean_half_period(const std::vector<double>& crossings) {
  if (crossings.size() < 3) return NAN;
  return (crossings.back() - crossings.front()) / (crossings.size() - 1);
}

// Euler's equations on principal axes, I w' = (I w) x w, by RK4.
std::vector<double> rk4_crossings(const Vec3& I, double h, double T) {
  auto rhs = [&](const Vec3& w) {
    const Vec3 Iw = I.cwiseProduct(w);
    return Vec3(Iw.cross(w).cwiseQuotient(I));
  };
  Vec3 w = kOmega0Body;
  std::vector<double> out;
  const int n = static_cast<int>(T / h);
  for (int i = 0; i < n; ++i) {
    const Vec3 k1 = rhs(w), k2 = rhs(w + 0.5 * h * k1), k3 = rhs(w + 0.5 * h * k2),
               k4 = rhs(w + h * k3);
    const Vec3 next = w + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4);
    if (next[1] * w[1] < 0) out.push_back((i + w[1] / (w[1] - next[1])) * h);
    w = next;
  }
  return out;
}

std::vector<double> mabd_crossings(double h, double T, RotationMode mode, Vec3* inertia) {
  ShapeDef shape;
  shape.type = ShapeType::Mesh;
  shape.mesh = load_obj(kMesh);
  const MassProperties mp = compute_mass_properties(shape, kDensity);
  const double tr = mp.principal_second_moment.sum();
  *inertia = Vec3::Constant(tr) - mp.principal_second_moment;
  // The intermediate principal axis is the middle one (ascending second moments).
  WorldSettings s;
  s.dt = h;
  s.gravity = Vec3::Zero();
  s.rotation = mode;
  World w(s);
  BodyDef d;
  d.name = "t_handle";
  d.shape = shape;
  d.material = {kDensity, 7e10, 0.33};
  d.angular_velocity = mp.principal_axes * kOmega0Body;  // body frame = user frame at t = 0
  const BodyId id = w.add_body(d);
  std::vector<double> out;
  double prev = kOmega0Body[1];
  const int n = static_cast<int>(T / h);
  for (int i = 0; i < n; ++i) {
    w.step();
    // Body-frame angular velocity component on the intermediate axis.
    const Mat3 R = w.pose(id).orientation.toRotationMatrix() * mp.principal_axes;
    const double now = (R.transpose() * w.twist(id).angular)[1];
    if (now * prev < 0) out.push_back((i + prev / (prev - now)) * h);
    prev = now;
  }
  return out;
}

TEST(THandle, FlipPeriodMatchesRigidBodyReference) {
  const double T = 30.0;
  Vec3 I;
  const std::vector<double> ours = mabd_crossings(1e-3, T, RotationMode::Polar, &I);
  const std::vector<double> ref = rk4_crossings(I, 1e-4, T);
  ASSERT_GE(ref.size(), 3u) << "reference did not flip; inertia " << I.transpose();
  ASSERT_GE(ours.size(), 3u) << "mabd did not flip";
  const double p_ref = 2 * mean_half_period(ref), p_ours = 2 * mean_half_period(ours);
  const double err = std::abs(p_ours - p_ref) / p_ref;
  std::printf("  principal inertia %s kg m^2\n", "");
  std::printf("  %.6e %.6e %.6e\n", I[0], I[1], I[2]);
  std::printf("  flip period: RK4 reference %.4f s, mabd h=1e-3 %.4f s, error %.2f%%\n", p_ref,
              p_ours, 100 * err);
  std::printf("  first flip: RK4 %.4f s, mabd %.4f s\n", ref[0], ours[0]);
  EXPECT_LT(err, 0.05);
}

}  // namespace
}  // namespace mabd
