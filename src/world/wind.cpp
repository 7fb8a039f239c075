// Prescribed wind field (paper, tree scenes: "a prescribed wind field applies aerodynamic
// loads, accumulated as external wrenches"): quadratic drag on the air velocity relative to
// each body, through its centre of mass (mabd::Wind in settings.h).
#include <algorithm>
#include <cmath>
#include <numbers>

#include "body/affine.h"
#include "world/world_impl.h"

namespace mabd {

Vec3 World::Impl::wind_force(std::size_t i) const {
  const Wind& w = settings.wind;
  const double speed = w.velocity.norm();
  if (speed == 0) return Vec3::Zero();
  const auto& b = bodies[i];
  const Vec3 x = q[i].tail<3>();     // centre of mass (m)
  const Vec3 v = qdot[i].tail<3>();  // its velocity (m/s)
  // Travelling gust: the phase moves downwind with the mean wind.
  const double phase = 2 * std::numbers::pi * (time - x.dot(w.velocity) / (speed * speed)) / w.gust_period;
  const Vec3 rel = w.velocity * (1 + w.gust * std::sin(phase)) - v;
  const double s = rel.norm();
  if (s == 0 || b.mass() <= 0) return Vec3::Zero();
  const Vec3 n = rel / s;
  // Equivalent box: sides a_k = sqrt(12 sigma_k / m) along the body axes A e_k.
  Vec3 side;
  for (int k = 0; k < 3; ++k) side[k] = std::sqrt(12 * std::max(b.sigma()[k], 0.0) / b.mass());
  const Mat3 A = detail::affine_A(q[i]);
  double area = 0;  // m^2, projected on the plane normal to n
  for (int k = 0; k < 3; ++k) {
    const double len = A.col(k).norm();
    if (len > 0) area += std::abs(n.dot(A.col(k))) / len * side[(k + 1) % 3] * side[(k + 2) % 3];
  }
  Vec3 f = 0.5 * w.density * w.drag_coefficient * area * s * rel;
  // A body cannot overtake the air within a step: impulse at most m |w|.
  const double cap = b.mass() * s / settings.dt, fn = f.norm();
  if (fn > cap) f *= cap / fn;
  return f;
}

}  // namespace mabd
