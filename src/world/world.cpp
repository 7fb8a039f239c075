// World: creation of bodies (validation, compilation into the body frame) and queries.
#include <cmath>
#include <cstring>
#include <sstream>

#include "body/affine.h"
#include "body/elasticity.h"
#include "body/rotation.h"
#include "mabd/error.h"
#include "world/world_impl.h"

namespace mabd {

using detail::BodyConstants;
using detail::BodyModel;

namespace {

std::string body_label(const BodyDef& def, std::size_t index) {
  return def.name.empty() ? "body #" + std::to_string(index) : "body '" + def.name + "'";
}

std::string num(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

/// Bounding radius of a shape about its COM (m).
double bounding_radius(const ShapeDef& s, const Vec3& com) {
  switch (s.type) {
    case ShapeType::Box: return 0.5 * s.size.norm();
    case ShapeType::Sphere: return s.radius;
    case ShapeType::Capsule: return s.radius + 0.5 * s.length;
    case ShapeType::Cylinder: return std::hypot(s.radius, 0.5 * s.length);
    case ShapeType::Plane: return 0;
    case ShapeType::Mesh: {
      double r = 0;
      for (const Vec3& v : s.mesh.vertices) r = std::max(r, (v - com).norm());
      return r;
    }
  }
  return 0;
}

}  // namespace

World::World(const WorldSettings& settings) : impl_(std::make_unique<Impl>()) {
  validate_settings(settings);
  impl_->settings = settings;
}
World::~World() = default;
World::World(World&&) noexcept = default;
World& World::operator=(World&&) noexcept = default;

void World::reserve(std::size_t bodies, std::size_t joints) {
  Impl& w = *impl_;
  w.bodies.reserve(bodies);
  w.by_name.reserve(bodies, [&w](std::uint32_t i) -> const std::string& { return w.body_name(i); });
  for (auto* v : {&w.q, &w.qdot, &w.acc, &w.qddot}) v->reserve(bodies);
  w.collision.reserve(bodies, joints);  // every joint excludes its pair
  w.joints.reserve(joints);
  w.joint_rest.reserve(joints);
  w.joint_by_name.reserve(
      joints, [&w](std::uint32_t i) -> const std::string& { return w.joints[i].name; });
}

BodyId World::add_body(const BodyDef& def) {
  Impl& w = *impl_;
  // A check writes its message only when it fails (as add_joint's): a generated scene adds a
  // million bodies, and formatting the numbers of five messages cost more than the rest.
  const auto label = [&] { return body_label(def, w.bodies.size()); };
  const auto fail = [&](const std::string& what) {
    throw InvalidArgument(label() + ": " + what);
  };
  if (!def.name.empty() && w.find_body(def.name)) fail("duplicate body name");
  const Material& mat = def.material;
  if (!(std::isfinite(mat.youngs_modulus) && mat.youngs_modulus > 0)) {
    fail("material.youngs_modulus: must be positive and finite (got " + num(mat.youngs_modulus) +
         ")");
  }
  if (!(std::isfinite(mat.poisson_ratio) && mat.poisson_ratio >= 0 && mat.poisson_ratio < 0.5)) {
    fail("material.poisson_ratio: must be in [0, 0.5) (got " + num(mat.poisson_ratio) + ")");
  }
  if (!(std::isfinite(mat.density) && mat.density > 0)) {
    fail("material.density: must be positive and finite (got " + num(mat.density) + ")");
  }
  if (def.mass && !(std::isfinite(*def.mass) && *def.mass > 0)) {
    fail("mass: must be positive and finite (got " + num(*def.mass) + ")");
  }
  if (!def.position.allFinite()) fail("position: must be finite");
  if (!def.linear_velocity.allFinite()) fail("linear_velocity: must be finite");
  if (!def.angular_velocity.allFinite()) fail("angular_velocity: must be finite");
  const double qn = def.orientation.coeffs().norm();
  if (!(std::isfinite(qn) && qn > 1e-12)) {
    fail("orientation: must be a non-zero finite quaternion");
  }
  if (def.motion && def.kind != BodyKind::Kinematic) {
    fail("motion: only kinematic bodies follow a prescribed motion");
  }

  if (!(std::isfinite(mat.friction) && mat.friction >= 0)) {
    fail("material.friction: must be >= 0 and finite (got " + num(mat.friction) + ")");
  }
  const bool collider = def.kind != BodyKind::Dynamic;
  MassProperties mp;
  try {
    validate_shape(def.shape, collider);
    for (std::size_t k = 0; k < def.collision.primitives.size(); ++k) {
      const CollisionPrimitive& p = def.collision.primitives[k];
      const std::string at = "collision.primitives[" + std::to_string(k) + "]: ";
      if (!p.pose.position.allFinite()) throw InvalidArgument(at + "position: must be finite");
      const double pn = p.pose.orientation.coeffs().norm();
      if (!(std::isfinite(pn) && pn > 1e-12)) {
        throw InvalidArgument(at + "orientation: must be a non-zero finite quaternion");
      }
      try {
        validate_shape(p.shape, collider);
      } catch (const InvalidArgument& e) {
        throw InvalidArgument(at + e.what());
      }
    }
    // A plane or an open mesh (colliders only) has no volume: a static or kinematic body
    // needs no mass properties, so it keeps its own frame with a nominal unit mass.
    const bool solid = !(def.shape.type == ShapeType::Plane ||
                         (collider && def.shape.type == ShapeType::Mesh && !is_closed(def.shape.mesh)));
    if (solid) {
      mp = compute_mass_properties(def.shape, mat.density);
    } else {
      mp.mass = 1;
      mp.principal_second_moment = Vec3::Ones();
    }
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(label() + ": " + e.what());
  }
  const double scale = def.mass ? *def.mass / mp.mass : 1.0;

  BodyConstants c;
  c.mass = mp.mass * scale;
  c.volume = mp.volume;
  c.sigma = mp.principal_second_moment * scale;
  c.mu = detail::lame_mu(mat.youngs_modulus, mat.poisson_ratio);
  c.lambda = detail::lame_lambda(mat.youngs_modulus, mat.poisson_ratio);
  c.k_vanilla = c.mu * c.volume / 4;  // matches the co-rotated small-strain shear stiffness
  c.R_up = mp.principal_axes;
  c.com_u = mp.com;
  c.friction = mat.friction;
  c.origin_b = c.R_up.transpose() * (-c.com_u);
  BodyModel b;
  b.constants = w.share_constants(c);
  b.info.name = def.name;
  b.info.kind = def.kind;
  b.info.size = bounding_radius(def.shape, mp.com);
  if (def.kind == BodyKind::Kinematic) {
    b.kinematics = std::make_shared<const BodyModel::Kinematics>(
        BodyModel::Kinematics{def.motion, def.angular_velocity, def.linear_velocity});
  }
  if (b.dynamic()) {
    b.factor = w.factors.get(c.sigma, c.mass, c.volume, c.mu, c.lambda, std::sqrt(w.beta_h2()));
  }

  Pose start{def.position, def.orientation.normalized()};
  if (def.motion) start = def.motion(0.0);
  const Vec12 q = w.q_from_pose(b, start);
  Vec12 qdot = Vec12::Zero();
  if (def.kind != BodyKind::Static) qdot = detail::velocities_of(q, def.angular_velocity, def.linear_velocity);

  const Vec3 b_sigma = c.sigma;
  const BodyId id{static_cast<std::uint32_t>(w.bodies.size())};
  w.register_collision(w.bodies.size(), def);
  w.bodies.push_back(std::move(b));
  if (!def.name.empty()) {
    w.by_name.insert(id.index, def.name,
                     [&w](std::uint32_t i) -> const std::string& { return w.body_name(i); });
  }
  w.q.push_back(q);
  w.qdot.push_back(qdot);
  Vec12 a0 = Vec12::Zero();
  if (def.kind == BodyKind::Dynamic) {
    a0 = detail::rigid_acceleration(q, b_sigma, def.angular_velocity, w.settings.gravity);
  }
  w.acc.push_back(a0);
  w.qddot.push_back(w.acc.back());
  if (!w.force.empty()) {
    w.force.push_back(Vec3::Zero());
    w.torque.push_back(Vec3::Zero());
  }
  return id;
}

static_assert(sizeof(BodyConstants) == 24 * sizeof(double), "BodyConstants: doubles only");

bool BodyConstants::same(const BodyConstants& o) const {
  // Bitwise: -0 and 0 (or two NaNs) are not interchangeable here.
  return std::memcmp(this, &o, sizeof(BodyConstants)) == 0;
}

std::shared_ptr<const BodyConstants> World::Impl::share_constants(const BodyConstants& c) {
  for (const auto& known : recent_constants) {
    if (known->same(c)) return known;
  }
  auto made = std::make_shared<const BodyConstants>(c);
  if (recent_constants.size() == kRecentConstants) recent_constants.pop_back();
  recent_constants.insert(recent_constants.begin(), made);
  return made;
}

Vec12 World::Impl::q_from_pose(const BodyModel& b, const Pose& pose) const {
  // World <- user rotation times user <- body rotation; COM sits at the user-frame point com_u.
  const Mat3 R_wu = pose.orientation.normalized().toRotationMatrix();
  return detail::make_q(R_wu * b.R_up(), pose.position + R_wu * b.com_u());
}

void World::Impl::check_id(BodyId id) const {
  if (id.index >= bodies.size()) {
    throw InvalidArgument("unknown body id " + std::to_string(id.index) + " (world has " +
                          std::to_string(bodies.size()) + " bodies)");
  }
}

// ---- inputs -------------------------------------------------------------------------------

void World::apply_wrench(BodyId id, const Vec3& force, const Vec3& torque) {
  impl_->check_id(id);
  if (!force.allFinite() || !torque.allFinite()) {
    throw InvalidArgument("apply_wrench: force and torque must be finite");
  }
  Impl& w = *impl_;
  if (w.force.empty()) {
    w.force.assign(w.bodies.size(), Vec3::Zero());
    w.torque.assign(w.bodies.size(), Vec3::Zero());
  }
  w.force[id.index] += force;
  w.torque[id.index] += torque;
}

void World::apply_force_at(BodyId id, const Vec3& force, const Vec3& point) {
  impl_->check_id(id);
  if (!point.allFinite()) throw InvalidArgument("apply_force_at: point must be finite");
  apply_wrench(id, force, (point - com_position(id)).cross(force));
}

void World::set_kinematic_target(BodyId id, const Pose& pose) {
  impl_->check_id(id);
  const auto& b = impl_->bodies[id.index];
  if (b.info.kind != BodyKind::Kinematic) {
    throw InvalidArgument("set_kinematic_target: body '" + b.info.name + "' is not kinematic");
  }
  if (!pose.position.allFinite() || !pose.orientation.coeffs().allFinite() ||
      pose.orientation.norm() < 1e-12) {
    throw InvalidArgument("set_kinematic_target: pose must be finite with a non-zero quaternion");
  }
  impl_->kin_target[id.index] = pose;
}

// ---- queries ------------------------------------------------------------------------------

const WorldSettings& World::settings() const { return impl_->settings; }
const StepStats& World::last_step() const { return impl_->stats; }
double World::time() const { return impl_->time; }
std::int64_t World::step_count() const { return impl_->steps; }
std::size_t World::body_count() const { return impl_->bodies.size(); }
std::size_t World::factor_count() const { return impl_->factors.size(); }

BodyInfo World::body_info(BodyId id) const {
  impl_->check_id(id);
  const detail::BodyModel& b = impl_->bodies[id.index];
  BodyInfo info;
  info.name = b.info.name;
  info.kind = b.info.kind;
  info.mass = b.mass();
  info.volume = b.volume();
  info.principal_inertia = b.principal_inertia();
  info.size = b.info.size;
  return info;
}

std::optional<BodyId> World::find_body(const std::string& name) const {
  const auto i = impl_->find_body(name);
  if (!i) return std::nullopt;
  return BodyId{*i};
}

Pose World::pose(BodyId id) const {
  impl_->check_id(id);
  const auto& b = impl_->bodies[id.index];
  const Vec12& q = impl_->q[id.index];
  Mat3 R;
  if (!detail::polar_rotation(detail::affine_A(q), R)) R = Mat3::Identity();
  Pose p;
  p.position = detail::point(q, b.origin_b());
  p.orientation = Quat(R * b.R_up().transpose()).normalized();
  return p;
}

Vec3 World::com_position(BodyId id) const {
  impl_->check_id(id);
  return detail::affine_t(impl_->q[id.index]);
}

Twist World::twist(BodyId id) const {
  impl_->check_id(id);
  return detail::twist_of(impl_->q[id.index], impl_->qdot[id.index]);
}

Vec3 World::linear_momentum(BodyId id) const {
  impl_->check_id(id);
  const auto& b = impl_->bodies[id.index];
  if (!b.dynamic()) return Vec3::Zero();
  return b.mass() * detail::block(impl_->qdot[id.index], 3);
}

Vec3 World::angular_momentum(BodyId id) const {
  impl_->check_id(id);
  const auto& b = impl_->bodies[id.index];
  if (!b.dynamic()) return Vec3::Zero();
  const Vec12& q = impl_->q[id.index];
  const Vec12& qd = impl_->qdot[id.index];
  // L = m t x tdot + sum_k sigma_k a_k x adot_k (exact for the affine motion).
  Vec3 L = b.mass() * detail::block(q, 3).cross(detail::block(qd, 3));
  for (int k = 0; k < 3; ++k) L += b.sigma()[k] * detail::block(q, k).cross(detail::block(qd, k));
  return L;
}

double World::kinetic_energy(BodyId id) const {
  impl_->check_id(id);
  const auto& b = impl_->bodies[id.index];
  if (!b.dynamic()) return 0;
  const Vec12& qd = impl_->qdot[id.index];
  double e = b.mass() * detail::block(qd, 3).squaredNorm();
  for (int k = 0; k < 3; ++k) e += b.sigma()[k] * detail::block(qd, k).squaredNorm();
  return 0.5 * e;
}

double World::elastic_energy(BodyId id) const {
  impl_->check_id(id);
  return impl_->elastic(id.index, impl_->q[id.index]);
}

double World::Impl::elastic(std::size_t i, const Vec12& qi) const {
  const auto& b = bodies[i];
  if (!b.dynamic()) return 0;
  const Mat3 A = detail::affine_A(qi);
  // The energy the integrator minimises (see RotationMode, IntegratorMode).
  if (settings.integrator == IntegratorMode::Vanilla) {
    return detail::orthogonality_energy(A, b.k_vanilla());
  }
  if (settings.rotation == RotationMode::Normalized) {
    return b.volume() * detail::stvk_energy_density(A, b.mu(), b.lambda());
  }
  Mat3 R;
  if (!detail::polar_rotation(A, R)) return std::numeric_limits<double>::infinity();
  return b.volume() * detail::corotated_energy_density(A, R, b.mu(), b.lambda());
}

double World::potential_energy(BodyId id) const {
  impl_->check_id(id);
  const auto& b = impl_->bodies[id.index];
  if (!b.dynamic()) return 0;
  return -b.mass() * impl_->settings.gravity.dot(detail::affine_t(impl_->q[id.index])) +
         elastic_energy(id);
}

double World::rigidity_deviation(BodyId id) const {
  impl_->check_id(id);
  const Mat3 A = detail::affine_A(impl_->q[id.index]);
  return (A.transpose() * A - Mat3::Identity()).norm();
}

Mat3 World::affine_matrix(BodyId id) const {
  impl_->check_id(id);
  return detail::affine_A(impl_->q[id.index]);
}

Vec12 World::coordinates(BodyId id) const {
  impl_->check_id(id);
  return impl_->q[id.index];
}

Vec12 World::velocities(BodyId id) const {
  impl_->check_id(id);
  return impl_->qdot[id.index];
}

const Vec12* World::coordinates_data() const { return impl_->q.data(); }
const Vec12* World::velocities_data() const { return impl_->qdot.data(); }

void World::set_body_state(BodyId id, const Vec12& q, const Vec12& qdot) {
  impl_->check_id(id);
  const std::string item = "set_body_state: body " + std::to_string(id.index);
  if (!impl_->bodies[id.index].dynamic()) {
    throw InvalidArgument(item + ": only dynamic bodies (static and kinematic ones are prescribed)");
  }
  if (!q.allFinite() || !qdot.allFinite()) throw InvalidArgument(item + ": non-finite q or dq/dt");
  if (!(detail::affine_A(q).determinant() > 0)) {
    throw InvalidArgument(item + ": det(A) must be positive");
  }
  impl_->q[id.index] = q;
  impl_->qdot[id.index] = qdot;
}

namespace {
template <typename T, typename F>
T sum_over(const World& w, F f) {
  T s{};
  if constexpr (std::is_same_v<T, Vec3>) s = Vec3::Zero();
  for (std::uint32_t i = 0; i < w.body_count(); ++i) s += f(BodyId{i});
  return s;
}
}  // namespace

Vec3 World::linear_momentum() const {
  Vec3 p = sum_over<Vec3>(*this, [&](BodyId i) { return linear_momentum(i); });
  for (const auto& s : impl_->soft_bodies) p += s.solid->linear_momentum();
  return p;
}
Vec3 World::angular_momentum() const {
  Vec3 l = sum_over<Vec3>(*this, [&](BodyId i) { return angular_momentum(i); });
  for (const auto& s : impl_->soft_bodies) l += s.solid->angular_momentum();
  return l;
}
double World::kinetic_energy() const {
  double e = sum_over<double>(*this, [&](BodyId i) { return kinetic_energy(i); });
  for (const auto& s : impl_->soft_bodies) e += s.solid->kinetic_energy();
  return e;
}
double World::joint_energy() const {
  return impl_->joint_energy_at(impl_->q, false, false);
}

double World::contact_energy() const {
  return impl_->contact_energy_at(impl_->q, false);
}

double World::potential_energy() const {
  double e = sum_over<double>(*this, [&](BodyId i) { return potential_energy(i); }) +
             joint_energy() + contact_energy();
  for (const auto& s : impl_->soft_bodies) {
    e += s.solid->gravitational_energy(impl_->settings.gravity) + s.solid->elastic_energy();
  }
  return e;
}

}  // namespace mabd
