// World state: deep copies, and the snapshot of everything the next step reads
// (World::save_state / restore_state), encoded little-endian (docs/output-formats.md).
//
// What a step reads besides the model (step.cpp, joints.cpp, dual.cpp, contact.cpp):
//  - per body: q, qdot, the generalized-alpha accelerations acc and qddot (implicit Euler
//    keeps them too), the pending wrench (force, torque);
//  - the time and step counter (kinematic motions and the wind's gust phase are functions of
//    the time; generalized-alpha's consistent start runs at step 0);
//  - the kinematic targets set for the next step;
//  - per joint: the unwrapped coordinate, twist and bend at the start of the step (limits,
//    springs, drives), the drive, limits and spring (settable at run time), the wrench of the
//    last step (a query);
//  - the multipliers of the last dual solve (the iterative solver's warm start);
//  - the joint-loop guard's running drift measurement and its schedule;
//  - the contacts of the last step (matched by the next detection: friction anchors, active
//    sets, multipliers);
//  - the statistics of the last step (queries only; without its wall-clock timings, which
//    restore as 0).
// Everything else (rows, operators, scratch, solver plans) is rebuilt by the step itself.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string_view>

#include "body/affine.h"
#include "body/rotation.h"
#include "io/byte_codec.h"
#include "mabd/error.h"
#include "world/world_impl.h"

namespace mabd {

using detail::ByteReader;
using detail::ByteWriter;

namespace {

// 2: contacts between dynamic bodies; 3: the normal-row points of contacts; 4: soft bodies
// (version 3 states still restore into worlds without soft bodies); 5: the penalty contacts'
// effective masses (older states restore them as unknown: taken again at the next step)
constexpr std::uint32_t kStateVersion = 5;

/// Solver names StepStats::solver can hold (it points at literals).
constexpr const char* kSolverNames[] = {"none", "chain", "tree", "sparse", "iterative",
                                        "tree+sparse"};

void put_limits(ByteWriter& out, const std::optional<JointLimits>& l) {
  out.u8(l ? 1 : 0);
  if (!l) return;
  out.f64(l->lower);
  out.f64(l->upper);
}

void put_spring(ByteWriter& out, const std::optional<JointSpring>& s) {
  out.u8(s ? 1 : 0);
  if (!s) return;
  out.f64(s->stiffness);
  out.f64(s->damping);
  out.f64(s->rest);
}

void put_drive(ByteWriter& out, const std::optional<JointDrive>& d) {
  out.u8(d ? 1 : 0);
  if (!d) return;
  out.u8(d->mode == DriveMode::Position ? 0 : d->mode == DriveMode::Velocity ? 1 : 2);
  out.f64(d->target);
  out.f64(d->stiffness);
  out.f64(d->damping);
  out.f64(d->max_force);
}

bool flag(ByteReader& in, const char* what) {
  const std::uint8_t v = in.u8(what);
  if (v > 1) in.fail(std::string(what) + ": flag byte " + std::to_string(v) + " is not 0 or 1");
  return v == 1;
}

std::optional<JointLimits> get_limits(ByteReader& in) {
  if (!flag(in, "joint limits")) return std::nullopt;
  JointLimits l;
  l.lower = in.f64("joint limits");
  l.upper = in.f64("joint limits");
  return l;
}

std::optional<JointSpring> get_spring(ByteReader& in) {
  if (!flag(in, "joint spring")) return std::nullopt;
  JointSpring s;
  s.stiffness = in.f64("joint spring");
  s.damping = in.f64("joint spring");
  s.rest = in.f64("joint spring");
  return s;
}

std::optional<JointDrive> get_drive(ByteReader& in) {
  if (!flag(in, "joint drive")) return std::nullopt;
  JointDrive d;
  const std::uint8_t mode = in.u8("joint drive mode");
  if (mode > 2) in.fail("joint drive mode: byte " + std::to_string(mode) + " is not 0, 1 or 2");
  d.mode = mode == 0 ? DriveMode::Position : mode == 1 ? DriveMode::Velocity : DriveMode::Effort;
  d.target = in.f64("joint drive");
  d.stiffness = in.f64("joint drive");
  d.damping = in.f64("joint drive");
  d.max_force = in.f64("joint drive");
  return d;
}

/// Carried state of one joint.
struct JointCarried {
  double coord_prev = 0, twist_prev = 0;
  Vec3 bend_prev = Vec3::Zero();
  JointWrench wrench;
  std::optional<JointLimits> limits;
  std::optional<JointSpring> spring;
  std::optional<JointDrive> drive;
};

}  // namespace

// ---- Copies ---------------------------------------------------------------------------------

World World::clone() const {
  World copy(impl_->settings);
  copy.impl_ = std::make_unique<Impl>(*impl_);
  return copy;
}

// ---- Model fingerprint ----------------------------------------------------------------------

std::uint64_t World::Impl::model_hash() const {
  ByteWriter out;
  out.u64(bodies.size());
  for (const auto& b : bodies) {
    out.str(b.info.name);
    out.u8(static_cast<std::uint8_t>(b.info.kind));
    out.f64(b.mass());
    out.f64(b.volume());
    out.vec(b.sigma());
    out.f64(b.mu());
    out.f64(b.lambda());
    out.f64(b.friction());
    out.vec(b.com_u());
  }
  out.u64(joints.size());
  for (const auto& j : joints) {
    out.str(j.name);
    out.u8(static_cast<std::uint8_t>(j.type));
    out.i64(j.a);
    out.i64(j.b);
    out.vec(j.pa);
    out.vec(j.pb);
    out.f64(j.compliance);
    const auto& cone = j.extras().cone;
    out.u8(cone ? 1 : 0);
    if (cone) {
      out.f64(cone->swing);
      out.f64(cone->twist_lower.value_or(NAN));
      out.f64(cone->twist_upper.value_or(NAN));
    }
  }
  // Soft bodies (only when there are some: the fingerprints of older states stay valid).
  if (!soft_bodies.empty()) out.u64(soft_bodies.size());
  for (const SoftBody& sb : soft_bodies) {
    const fem::FemModel& m = sb.solid->model();
    out.str(sb.name);
    out.u64(m.num_nodes());
    out.u64(m.mesh().num_tets());
    for (const Vec3& x : m.mesh().rest) out.vec(x);
    for (const fem::Tet& t : m.mesh().tets) {
      for (int a : t) out.i64(a);
    }
    out.f64(m.material().density);
    out.f64(m.material().young);
    out.f64(m.material().poisson);
    for (const auto* list : {&sb.links, &sb.pins}) {
      out.u64(list->size());
      for (const SoftLink& l : *list) {
        out.i64(l.node);
        out.i64(l.body);
        out.vec(l.p);
      }
    }
  }
  return detail::fnv1a(out.bytes().data(), out.bytes().size());
}

// ---- Contacts -------------------------------------------------------------------------------

void World::Impl::save_contacts(ByteWriter& out) const {
  out.u64(contacts.size());
  for (const Contact& c : contacts) {
    out.u32(c.body);
    out.u32(c.collider);
    out.u32(c.feature);
    for (const Vec3* v : {&c.p, &c.pc, &c.nc, &c.pn, &c.pcn, &c.anchor, &c.t1c, &c.t2c}) {
      out.vec(*v);
    }
    out.f64(c.mu);
    for (double m : c.m_eff) out.f64(m);
    for (double s : c.s0) out.f64(s);
    for (double l : c.lambda) out.f64(l);
    out.u8(c.active);
    out.u8(c.was_active);
    out.u8(c.sliding);
    out.u8(c.dragged);
  }
  out.u64(pair_contacts.size());
  for (const PairContact& c : pair_contacts) {
    out.u32(c.a);
    out.u32(c.b);
    out.u32(c.feature);
    for (const Vec3* v : {&c.pa, &c.pb, &c.pan, &c.pbn, &c.n, &c.t1, &c.t2}) out.vec(*v);
    out.f64(c.offset);
    for (double l : c.lambda) out.f64(l);
  }
}

std::vector<World::Impl::PairContact> World::Impl::read_pair_contacts(ByteReader& in) const {
  const std::uint64_t n = in.u64("pair contact count");
  // Each takes 3 * 4 + 7 * 24 + 4 * 8 bytes: a count beyond the rest is corrupt.
  if (n > in.remaining() / 212) {
    in.fail("pair contact count " + std::to_string(n) + " exceeds the data");
  }
  std::vector<PairContact> out(n);
  for (std::uint64_t k = 0; k < n; ++k) {
    PairContact& c = out[k];
    c.a = in.u32("pair contact");
    c.b = in.u32("pair contact");
    c.feature = in.u32("pair contact");
    for (Vec3* v : {&c.pa, &c.pb, &c.pan, &c.pbn, &c.n, &c.t1, &c.t2}) {
      *v = in.vec<Vec3>("pair contact");
    }
    c.offset = in.f64("pair contact");
    for (double& l : c.lambda) l = in.f64("pair contact");
    const std::string at = "pair contact " + std::to_string(k);
    if (c.a >= bodies.size() || c.b >= bodies.size() || c.a == c.b || !bodies[c.a].dynamic() ||
        (bodies[c.b].dynamic() && c.b < c.a)) {
      in.fail(at + ": bodies " + std::to_string(c.a) + ", " + std::to_string(c.b) +
              " are not a dynamic body and another body of the world (two dynamic bodies in "
              "increasing order)");
    }
    bool finite = true;
    for (const Vec3* v : {&c.pa, &c.pb, &c.pan, &c.pbn, &c.n, &c.t1, &c.t2}) {
      finite &= v->allFinite();
    }
    finite &= std::isfinite(c.offset);
    for (double l : c.lambda) finite &= std::isfinite(l);
    if (!finite) in.fail(at + ": non-finite value");
    if (k > 0) {
      const PairContact& p = out[k - 1];
      if (std::tie(p.a, p.b, p.feature) >= std::tie(c.a, c.b, c.feature)) {
        in.fail(at + ": pair contacts are not sorted by bodies and feature");
      }
    }
  }
  return out;
}

std::vector<World::Impl::Contact> World::Impl::read_contacts(ByteReader& in,
                                                             std::uint32_t version) const {
  const std::uint64_t n = in.u64("contact count");
  // Each contact takes 3 * 4 + 8 * 24 + 7 * 8 + 4 bytes (from version 5, 3 * 8 more): a count
  // beyond the rest is corrupt.
  const std::size_t each = version >= 5 ? 288 : 264;
  if (n > in.remaining() / each) {
    in.fail("contact count " + std::to_string(n) + " exceeds the data");
  }
  std::vector<Contact> out(n);
  for (std::uint64_t k = 0; k < n; ++k) {
    Contact& c = out[k];
    c.body = in.u32("contact");
    c.collider = in.u32("contact");
    c.feature = in.u32("contact");
    for (Vec3* v : {&c.p, &c.pc, &c.nc, &c.pn, &c.pcn, &c.anchor, &c.t1c, &c.t2c}) {
      *v = in.vec<Vec3>("contact");
    }
    c.mu = in.f64("contact");
    if (version >= 5) {
      for (double& m : c.m_eff) m = in.f64("contact");
    }
    for (double& s : c.s0) s = in.f64("contact");
    for (double& l : c.lambda) l = in.f64("contact");
    c.active = flag(in, "contact active");
    c.was_active = flag(in, "contact was_active");
    c.sliding = flag(in, "contact sliding");
    c.dragged = flag(in, "contact dragged");
    const std::string at = "contact " + std::to_string(k);
    if (c.body >= bodies.size() || !bodies[c.body].dynamic()) {
      in.fail(at + ": body " + std::to_string(c.body) + " is not a dynamic body of the world");
    }
    if (c.collider >= bodies.size() || bodies[c.collider].dynamic()) {
      in.fail(at + ": collider " + std::to_string(c.collider) +
              " is not a static or kinematic body of the world");
    }
    bool finite = std::isfinite(c.mu);
    // All three positive and finite, or all three 0 (not taken yet): a zero stiffness would
    // divide by zero in the friction anchors' drag.
    const bool unknown = c.m_eff[0] == 0 && c.m_eff[1] == 0 && c.m_eff[2] == 0;
    for (double m : c.m_eff) {
      if (!unknown && !(m > 0 && std::isfinite(m))) {
        in.fail(at + ": effective masses must be all finite and > 0, or all 0 (got " +
                std::to_string(m) + ")");
      }
    }
    for (const Vec3* v : {&c.p, &c.pc, &c.nc, &c.pn, &c.pcn, &c.anchor, &c.t1c, &c.t2c}) {
      finite &= v->allFinite();
    }
    for (int i = 0; i < 3; ++i) finite &= std::isfinite(c.s0[i]) && std::isfinite(c.lambda[i]);
    if (!finite) in.fail(at + ": non-finite value");
    if (k > 0) {
      const Contact& p = out[k - 1];
      if (std::tie(p.body, p.collider, p.feature) >= std::tie(c.body, c.collider, c.feature)) {
        in.fail(at + ": contacts are not sorted by body, collider and feature");
      }
    }
  }
  return out;
}

// ---- Snapshot -------------------------------------------------------------------------------

WorldState World::save_state() const {
  const Impl& w = *impl_;
  ByteWriter out;
  out.u32(kStateVersion);
  out.u64(w.model_hash());
  out.u64(w.bodies.size());
  out.u64(w.joints.size());
  out.f64(w.settings.dt);
  out.u8(static_cast<std::uint8_t>(w.settings.time_integration));
  out.i64(w.steps);
  out.f64(w.time);
  for (std::size_t i = 0; i < w.bodies.size(); ++i) {
    out.vec(w.q[i]);
    out.vec(w.qdot[i]);
    out.vec(w.acc[i]);
    out.vec(w.qddot[i]);
    out.vec(w.pending_force(i));
    out.vec(w.pending_torque(i));
  }
  std::vector<std::uint32_t> targets;
  for (const auto& [body, pose] : w.kin_target) targets.push_back(body);
  std::sort(targets.begin(), targets.end());  // a byte-stable order
  out.u64(targets.size());
  for (std::uint32_t body : targets) {
    const Pose& pose = w.kin_target.at(body);
    out.u32(body);
    out.vec(pose.position);
    out.quat(pose.orientation);
  }
  for (const auto& j : w.joints) {
    out.f64(j.coord_prev);
    out.f64(j.twist_prev);
    out.vec(j.bend_prev);
    out.vec(j.wrench.force);
    out.vec(j.wrench.torque);
    put_limits(out, j.extras().limits);
    put_spring(out, j.extras().spring);
    put_drive(out, j.extras().drive);
  }
  out.u64(w.lambda.size());
  for (double l : w.lambda) out.f64(l);
  out.f64(w.loop_guard.drift);
  out.i64(w.loop_guard.wait);
  out.i64(w.loop_guard.interval);
  const StepStats& s = w.stats;
  out.str(s.solver);
  out.i64(s.newton_iterations);
  out.i64(s.dual_iterations);
  out.i64(s.contacts);
  // Without the wall-clock timings: a state depends on the simulation only.
  for (double v : {s.residual, s.joint_residual, s.dual_residual, s.max_penetration}) out.f64(v);
  w.save_contacts(out);
  out.f64(s.attachment_residual);
  out.u64(w.soft_bodies.size());
  for (const Impl::SoftBody& sb : w.soft_bodies) {
    const fem::FemState& st = sb.solid->state();
    out.u64(static_cast<std::uint64_t>(st.x.size()));
    for (Eigen::Index k = 0; k < st.x.size(); ++k) out.f64(st.x[k]);
    for (Eigen::Index k = 0; k < st.v.size(); ++k) out.f64(st.v[k]);
  }
  return WorldState{std::move(out.bytes())};
}

void World::restore_state(const WorldState& state) {
  Impl& w = *impl_;
  ByteReader in(state.data.data(), state.data.size(), "restore_state");
  auto count_check = [&](const char* what, std::uint64_t have, std::size_t want) {
    if (have != want) {
      in.fail(std::string("the state has ") + std::to_string(have) + " " + what +
              ", the world " + std::to_string(want) + " (a different scene)");
    }
  };
  const std::uint32_t version = in.u32("version");
  if (version < 3 || version > kStateVersion || (version == 3 && !w.soft_bodies.empty())) {
    in.fail("state version " + std::to_string(version) + " is not supported (this build reads " +
            (w.soft_bodies.empty() ? "3 to " : "4 to ") + std::to_string(kStateVersion) + ")");
  }
  const std::uint64_t hash = in.u64("model hash");
  count_check("bodies", in.u64("body count"), w.bodies.size());
  count_check("joints", in.u64("joint count"), w.joints.size());
  if (hash != w.model_hash()) {
    in.fail("the state belongs to a different model (bodies or joints differ in name, kind, "
            "mass, material, shape or anchors)");
  }
  const double dt = in.f64("dt");
  if (dt != w.settings.dt) {
    in.fail("the state was taken at dt = " + std::to_string(dt) + " s, the world steps " +
            std::to_string(w.settings.dt) + " s");
  }
  const std::uint8_t integration = in.u8("time integration");
  if (integration != static_cast<std::uint8_t>(w.settings.time_integration)) {
    in.fail("the state was taken with another settings.time_integration");
  }
  const std::int64_t steps = in.i64("step count");
  const double time = in.f64("time");
  if (steps < 0 || !std::isfinite(time)) in.fail("invalid step count or time");

  const std::size_t n = w.bodies.size();
  std::vector<Vec12> q(n), qdot(n), acc(n), qddot(n);
  std::vector<Vec3> force(n), torque(n);
  for (std::size_t i = 0; i < n; ++i) {
    q[i] = in.vec<Vec12>("body state");
    qdot[i] = in.vec<Vec12>("body state");
    acc[i] = in.vec<Vec12>("body state");
    qddot[i] = in.vec<Vec12>("body state");
    force[i] = in.vec<Vec3>("body state");
    torque[i] = in.vec<Vec3>("body state");
    if (!(q[i].allFinite() && qdot[i].allFinite() && acc[i].allFinite() &&
          qddot[i].allFinite() && force[i].allFinite() && torque[i].allFinite())) {
      in.fail("body " + std::to_string(i) + ": non-finite state");
    }
  }
  const std::uint64_t n_targets = in.u64("kinematic target count");
  if (n_targets > n) in.fail("kinematic target count " + std::to_string(n_targets) + " exceeds the bodies");
  std::unordered_map<std::uint32_t, Pose> targets;
  for (std::uint64_t k = 0; k < n_targets; ++k) {
    const std::uint32_t body = in.u32("kinematic target");
    Pose pose;
    pose.position = in.vec<Vec3>("kinematic target");
    pose.orientation = in.quat("kinematic target");
    if (body >= n || w.bodies[body].info.kind != BodyKind::Kinematic) {
      in.fail("kinematic target for body " + std::to_string(body) + ", not a kinematic body");
    }
    if (!pose.position.allFinite() || !pose.orientation.coeffs().allFinite()) {
      in.fail("kinematic target for body " + std::to_string(body) + ": non-finite pose");
    }
    targets[body] = pose;
  }
  std::vector<JointCarried> carried(w.joints.size());
  for (std::size_t ji = 0; ji < w.joints.size(); ++ji) {
    JointCarried& c = carried[ji];
    c.coord_prev = in.f64("joint state");
    c.twist_prev = in.f64("joint state");
    c.bend_prev = in.vec<Vec3>("joint state");
    c.wrench.force = in.vec<Vec3>("joint state");
    c.wrench.torque = in.vec<Vec3>("joint state");
    c.limits = get_limits(in);
    c.spring = get_spring(in);
    c.drive = get_drive(in);
    const detail::JointModel& j = w.joints[ji];
    const std::string label = "joint " + (j.name.empty() ? "#" + std::to_string(ji) : "'" + j.name + "'");
    try {
      Impl::check_extras(label, j.type, c.limits, c.spring, c.drive);
    } catch (const InvalidArgument& e) {
      in.fail(e.what());
    }
    if (!std::isfinite(c.coord_prev) || !std::isfinite(c.twist_prev) || !c.bend_prev.allFinite()) {
      in.fail(label + ": non-finite joint state");
    }
  }
  const std::uint64_t n_lambda = in.u64("multiplier count");
  if (n_lambda > in.remaining() / 8) in.fail("multiplier count " + std::to_string(n_lambda) + " exceeds the data");
  std::vector<double> lambda(n_lambda);
  for (double& l : lambda) l = in.f64("multipliers");
  detail::LoopGuard guard = w.loop_guard;
  guard.drift = in.f64("loop guard");
  guard.wait = static_cast<int>(in.i64("loop guard"));
  guard.interval = static_cast<int>(in.i64("loop guard"));
  if (!std::isfinite(guard.drift) || guard.interval < 1) in.fail("invalid loop guard state");
  StepStats stats;
  const std::string solver = in.str("step statistics");
  stats.solver = nullptr;
  for (const char* name : kSolverNames) {
    if (solver == name) stats.solver = name;
  }
  if (!stats.solver) in.fail("unknown solver name '" + solver + "' in the step statistics");
  stats.newton_iterations = static_cast<int>(in.i64("step statistics"));
  stats.dual_iterations = static_cast<int>(in.i64("step statistics"));
  stats.contacts = static_cast<int>(in.i64("step statistics"));
  for (double* v : {&stats.residual, &stats.joint_residual, &stats.dual_residual,
                    &stats.max_penetration}) {
    *v = in.f64("step statistics");
  }
  std::vector<Impl::Contact> contacts = w.read_contacts(in, version);
  std::vector<Impl::PairContact> pair_contacts = w.read_pair_contacts(in);
  std::vector<fem::FemState> soft(w.soft_bodies.size());
  if (version >= 4) {
    stats.attachment_residual = in.f64("step statistics");
    count_check("soft bodies", in.u64("soft body count"), w.soft_bodies.size());
    for (std::size_t k = 0; k < soft.size(); ++k) {
      const std::size_t dofs = static_cast<std::size_t>(w.soft_bodies[k].solid->state().x.size());
      count_check("soft body node coordinates", in.u64("soft body state"), dofs);
      soft[k].x.resize(static_cast<Eigen::Index>(dofs));
      soft[k].v.resize(static_cast<Eigen::Index>(dofs));
      for (std::size_t c = 0; c < dofs; ++c) soft[k].x[c] = in.f64("soft body state");
      for (std::size_t c = 0; c < dofs; ++c) soft[k].v[c] = in.f64("soft body state");
      if (!soft[k].x.allFinite() || !soft[k].v.allFinite()) {
        in.fail("soft body " + std::to_string(k) + ": non-finite state");
      }
    }
  }
  if (in.remaining() != 0) {
    in.fail(std::to_string(in.remaining()) + " unexpected bytes after the state");
  }

  // Everything read and checked: commit.
  w.steps = steps;
  w.time = time;
  w.q = std::move(q);
  w.qdot = std::move(qdot);
  w.acc = std::move(acc);
  w.qddot = std::move(qddot);
  // No pending loads (every component +0): no arrays, as after a step.
  const auto unloaded = [](const std::vector<Vec3>& v) {
    for (const Vec3& x : v) {
      for (int k = 0; k < 3; ++k) {
        if (x[k] != 0 || std::signbit(x[k])) return false;
      }
    }
    return true;
  };
  if (unloaded(force) && unloaded(torque)) {
    std::vector<Vec3>().swap(force);
    std::vector<Vec3>().swap(torque);
  }
  w.force = std::move(force);
  w.torque = std::move(torque);
  w.kin_target = std::move(targets);
  for (std::size_t ji = 0; ji < w.joints.size(); ++ji) {
    detail::JointModel& j = w.joints[ji];
    const JointCarried& c = carried[ji];
    j.coord_prev = c.coord_prev;
    j.twist_prev = c.twist_prev;
    j.bend_prev = c.bend_prev;
    j.wrench = c.wrench;
    w.set_extras(static_cast<std::uint32_t>(ji), c.limits, c.spring, c.drive);
  }
  w.lambda = std::move(lambda);
  w.loop_guard = guard;
  w.stats = stats;
  w.contacts = std::move(contacts);
  w.contacts_prev.clear();
  w.pair_contacts = std::move(pair_contacts);
  w.pair_contacts_prev.clear();
  for (std::size_t k = 0; k < soft.size(); ++k) w.soft_bodies[k].solid->set_state(soft[k]);
}

}  // namespace mabd
