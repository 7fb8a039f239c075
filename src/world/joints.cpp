// Joints in the World: validation and compilation of JointDef into body-local quantities,
// joint state after a step, and joint queries.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "body/affine.h"
#include "mabd/error.h"
#include "solvers/topology.h"
#include "world/world_impl.h"

namespace mabd {

using detail::JointModel;

namespace {

int rows_of_type(JointType t) {
  switch (t) {
    case JointType::Ball: return 3;
    case JointType::Hinge: return 5;
    case JointType::Universal: return 4;
    case JointType::Prismatic: return 5;
    case JointType::Fixed: return 6;
  }
  return 0;
}

std::string num(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

/// Two unit vectors completing n to a right-handed frame (p1 x p2 = n).
void perpendiculars(const Vec3& n, Vec3& p1, Vec3& p2) {
  const Vec3 helper = std::abs(n.x()) < 0.9 ? Vec3::UnitX() : Vec3::UnitY();
  p1 = (helper - n * n.dot(helper)).normalized();
  p2 = n.cross(p1);
}

/// A joint defined by frames must hold in the configuration it is added in: throws
/// InvalidArgument "`label`: frames: ..." if the frames' origins (m, relative to the length
/// scale L) or axes (rad) violate the joint's constraints by more than 1e-6.
void check_frames(const std::string& label, JointType type, const Vec3& oa, const Vec3& ob,
                  const Mat3& Fa, const Mat3& Fb, double L) {
  constexpr double kTol = 1e-6;
  auto fail = [&](const std::string& what) {
    throw InvalidArgument(label + ": frames: " + what + " in the bodies' configuration");
  };
  const bool prismatic = type == JointType::Prismatic;
  const Vec3 d = ob - oa;
  // A prismatic joint's frames may be apart along the axis (the slide).
  const double gap = (prismatic ? Vec3(d - Fa.col(2) * Fa.col(2).dot(d)) : d).norm();
  if (gap > kTol * L) {
    fail("the frame origins are " + num(gap) + " m apart" + (prismatic ? " across the axis" : ""));
  }
  const double tilt = Fa.col(2).cross(Fb.col(2)).norm();
  if ((type == JointType::Hinge || prismatic || type == JointType::Fixed) &&
      (tilt > kTol || Fa.col(2).dot(Fb.col(2)) < 0)) {
    fail("the z axes are not aligned");
  }
  const double twist = Fa.col(0).cross(Fb.col(0)).norm();
  if ((prismatic || type == JointType::Fixed) &&
      (twist > kTol || Fa.col(0).dot(Fb.col(0)) < 0)) {
    fail("the frames are rotated about their z axes");
  }
  if (type == JointType::Universal && std::abs(Fa.col(0).dot(Fb.col(1))) > kTol) {
    fail("frame a's x axis is not perpendicular to frame b's y axis");
  }
}

}  // namespace

JointId World::add_joint(const JointDef& def) {
  Impl& w = *impl_;
  const std::string label =
      def.name.empty() ? "joint #" + std::to_string(w.joints.size()) : "joint '" + def.name + "'";
  auto fail = [&](const std::string& what) { throw InvalidArgument(label + ": " + what); };
  auto body_index = [&](BodyId id, const char* which) -> int {
    if (!id.valid()) return -1;
    if (id.index >= w.bodies.size()) {
      fail(std::string(which) + ": unknown body id " + std::to_string(id.index));
    }
    return static_cast<int>(id.index);
  };
  if (!def.name.empty() && w.find_joint(def.name)) fail("duplicate joint name");
  const int a = body_index(def.body_a, "body_a"), b = body_index(def.body_b, "body_b");
  if (a < 0 && b < 0) fail("both bodies are the world");
  if (a == b) fail("a body cannot be joined to itself");
  if ((a < 0 || !w.bodies[a].dynamic()) && (b < 0 || !w.bodies[b].dynamic())) {
    fail("joins two bodies that cannot move (world, static or kinematic)");
  }
  const bool has_axis = def.type == JointType::Hinge || def.type == JointType::Prismatic ||
                        (def.type == JointType::Ball && def.cone);
  if (def.frames) {
    for (const Pose* f : {&def.frames->a, &def.frames->b}) {
      const char* which = f == &def.frames->a ? "frames.a" : "frames.b";
      if (!f->position.allFinite()) fail(std::string(which) + ".position: must be finite");
      if (!f->orientation.coeffs().allFinite() || f->orientation.norm() < 1e-12) {
        fail(std::string(which) + ".orientation: must be a non-zero finite quaternion");
      }
    }
  } else {
    if (!def.anchor.allFinite()) fail("anchor: must be finite");
    if (has_axis && (!def.axis.allFinite() || def.axis.norm() < 1e-12)) {
      fail("axis: must be non-zero and finite");
    }
  }
  if (def.type == JointType::Universal && !def.frames) {
    for (int k = 0; k < 2; ++k) {
      if (!def.axes[k].allFinite() || def.axes[k].norm() < 1e-12) {
        fail("axes[" + std::to_string(k) + "]: must be non-zero and finite");
      }
    }
    if (std::abs(def.axes[0].normalized().dot(def.axes[1].normalized())) > 0.999) {
      fail("axes: the two axes are parallel");
    }
  }
  Impl::check_extras(label, def.type, def.limits, def.spring, def.drive);
  if (def.cone) {
    if (def.type != JointType::Ball) fail("cone: only ball joints take a cone limit");
    if (!(def.cone->swing > 0 && def.cone->swing < M_PI)) fail("cone.swing: must be in (0, pi)");
  }
  if (!std::isfinite(def.compliance) || def.compliance < 0) fail("compliance: must be >= 0 and finite");

  JointModel j;
  j.name = def.name;
  j.type = def.type;
  j.a = a;
  j.b = b;
  if (!(def.effort_limit > 0)) fail("effort_limit: must be positive (infinite: no limit)");
  if (std::isfinite(def.effort_limit) && def.type != JointType::Hinge &&
      def.type != JointType::Prismatic) {
    fail("effort_limit: only hinge and prismatic joints take an effort limit");
  }
  if (def.limits || def.cone || def.spring || def.drive || std::isfinite(def.effort_limit)) {
    auto sigma = [&](int body) {
      return body >= 0 && w.bodies[body].dynamic() ? w.bodies[body].sigma() : Vec3(Vec3::Ones());
    };
    auto ex = std::make_shared<detail::JointExtras>(detail::JointExtras{
        def.limits, def.cone, def.spring, def.drive, def.effort_limit, sigma(a), sigma(b)});
    if (ex->drive) ex->drive->max_force = std::min(ex->drive->max_force, def.effort_limit);
    j.ex = std::move(ex);
  }
  j.compliance = def.compliance;
  j.base_rows = rows_of_type(def.type);
  // Body-local quantities from the current configuration x = A xb + t. Each side's joint
  // point and basis (columns p1, p2, n) in world coordinates: one for both sides, or each
  // side's own frame.
  const Vec12 qa = w.joint_q(a), qb = w.joint_q(b);
  const Mat3 Ai_a = detail::affine_A(qa).inverse(), Ai_b = detail::affine_A(qb).inverse();
  Vec3 anchor_a = def.anchor, anchor_b = def.anchor;
  Mat3 basis_a, basis_b;
  Vec3 u = Vec3::UnitX(), v = Vec3::UnitY();  // universal axes, world
  if (def.frames) {
    // A frame given in a body's own (user) frame, in world coordinates now (World::pose).
    const auto in_world = [&](int body, const Pose& f) {
      const Quat fq = f.orientation.normalized();
      if (body < 0) return Pose{f.position, fq};
      const Mat3 R = w.user_rotation(body);
      const Vec3 origin = detail::point(w.q[body], w.bodies[body].origin_b());
      return Pose{origin + R * f.position, Quat(R * fq.toRotationMatrix()).normalized()};
    };
    const Pose fa = in_world(a, def.frames->a), fb = in_world(b, def.frames->b);
    anchor_a = fa.position;
    anchor_b = fb.position;
    basis_a = fa.orientation.toRotationMatrix();
    basis_b = fb.orientation.toRotationMatrix();
    u = basis_a.col(0);
    v = basis_b.col(1);
  } else {
    Vec3 p1, p2;
    const Vec3 n = has_axis ? def.axis.normalized() : Vec3::UnitZ();
    perpendiculars(n, p1, p2);
    basis_a << p1, p2, n;
    basis_b = basis_a;
    if (def.type == JointType::Universal) {
      u = def.axes[0].normalized();
      v = (def.axes[1] - u * u.dot(def.axes[1])).normalized();  // made perpendicular
    }
  }
  j.pa = Ai_a * (anchor_a - detail::affine_t(qa));
  j.pb = Ai_b * (anchor_b - detail::affine_t(qb));
  detail::JointAxes ax;
  ax.na = Ai_a * basis_a.col(2);
  ax.nb = Ai_b * basis_b.col(2);
  ax.wa1 = Ai_a * basis_a.col(0);
  ax.wa2 = Ai_a * basis_a.col(1);
  ax.wb1 = Ai_b * basis_b.col(0);
  ax.wb2 = Ai_b * basis_b.col(1);
  // Rotation locks: images of one orthonormal frame (the world's, or the joint frames).
  const Mat3 lock_a = def.frames ? basis_a : Mat3::Identity();
  const Mat3 lock_b = def.frames ? basis_b : Mat3::Identity();
  for (int i = 0; i < 3; ++i) {
    ax.ea[i] = Ai_a * lock_a.col(i);
    ax.eb[i] = Ai_b * lock_b.col(i);
  }
  if (def.type == JointType::Universal) {
    ax.ua = Ai_a * u;
    ax.vb = Ai_b * v;
  }
  if (def.type != JointType::Ball || def.cone || def.spring) {
    j.ax = std::make_shared<const detail::JointAxes>(ax);
  }
  // Length scale of angular rows: the larger body's size.
  double L = 0;
  for (int body : {a, b}) {
    if (body >= 0) L = std::max(L, w.bodies[body].info.size);
  }
  j.L = std::max(L, 1e-3);
  if (def.frames) check_frames(label, def.type, anchor_a, anchor_b, basis_a, basis_b, j.L);
  // A joint anchored far from both bodies is legal but usually a units or frame mistake.
  double nearest = INFINITY;
  for (int body : {a, b}) {
    if (body < 0) continue;
    const double dist = (anchor_a - detail::affine_t(w.q[body])).norm();
    nearest = std::min(nearest, dist / std::max(w.bodies[body].info.size, 1e-12));
  }
  if (nearest > 3) {
    w.warnings.push_back(label + ": anchor is far outside both bodies (" + num(nearest) +
                         " body sizes from the nearest centre of mass)");
  }

  // Jointed bodies do not collide with each other.
  if (a >= 0 && b >= 0) w.collision.exclude_pair(static_cast<std::uint32_t>(a), static_cast<std::uint32_t>(b));
  const JointId id{static_cast<std::uint32_t>(w.joints.size())};
  w.record_joint_rest(j);
  if (def.frames) {
    // The zero of the coordinates is where the frames coincide: R_a^T R_b = F_a F_b^T.
    const Mat3 Fa = def.frames->a.orientation.normalized().toRotationMatrix();
    const Mat3 Fb = def.frames->b.orientation.normalized().toRotationMatrix();
    w.joint_rest.back() = Quat(Fa * Fb.transpose()).normalized();
    // The carried coordinates start at their values now (unwrapped from within (-pi, pi]).
    double value;
    Vec12 ga, gb;
    if (detail::joint_coordinate(j, qa, qb, 0.0, value, ga, gb)) j.coord_prev = value;
    if (j.type == JointType::Ball && j.extras().cone) {
      detail::twist_angle(j, qa, qb, 0.0, value, ga, gb);
      j.twist_prev = value;
    }
    if (j.type == JointType::Ball && j.extras().spring) j.bend_prev = detail::ball_bend(j, qa, qb);
  }
  w.joints.push_back(std::move(j));
  if (!def.name.empty()) {
    w.joint_by_name.insert(id.index, def.name, [&w](std::uint32_t i) -> const std::string& {
      return w.joints[i].name;
    });
  }
  w.topology_dirty = true;
  return id;
}

void World::Impl::check_joint(JointId id) const {
  if (id.index >= joints.size()) {
    throw InvalidArgument("unknown joint id " + std::to_string(id.index) + " (world has " +
                          std::to_string(joints.size()) + " joints)");
  }
}

// After a step: joint coordinates (unwrapped), wrenches from the multipliers, residual; one
// pass over the joints.
void World::Impl::update_joint_state() {
  // The wrench at the anchor of the generalised force fa of the multipliers on the reported
  // body (b, or a when b is the world).
  auto wrench_of = [&](const detail::JointModel& j, const Vec12& fa) {
    const Vec12& qb = q[j.b >= 0 ? j.b : j.a];
    Vec3 torque_com = Vec3::Zero();  // sum_k a_k x f_k
    for (int k = 0; k < 3; ++k) torque_com += detail::block(qb, k).cross(fa.segment<3>(3 * k));
    const Vec3 F = fa.tail<3>();
    const Vec3 anchor = detail::point(qb, j.b >= 0 ? j.pb : j.pa);
    return JointWrench{F, torque_com + (detail::affine_t(qb) - anchor).cross(F)};
  };
  // The wrench of n rows of joint j with multipliers x (on the reported body).
  auto rows_wrench = [&](detail::JointModel& j, const detail::Row* g, std::size_t n,
                         const double* x) {
    Vec12 fa = Vec12::Zero();
    for (std::size_t r = 0; r < n; ++r) fa -= (j.b >= 0 ? g[r].gb : g[r].ga) * x[r];
    j.wrench = wrench_of(j, fa);
  };
  // The wrench of joint ji from the closed form's multipliers (3 per point link, then its dot
  // rows; a general item's rows).
  auto closed_form_wrench = [&](std::uint32_t ji, detail::JointModel& j) {
    const std::size_t at = ball_chain_dual.offset(ji);
    if (const auto* rows = ball_chain_dual.general_rows(ji)) {
      rows_wrench(j, rows->data(), rows->size(), &lambda[at]);
      return;
    }
    Vec12 f;
    if (j.type != JointType::Ball &&
        ball_chain_dual.item_force(ji, j.b >= 0 ? 1 : 0, &lambda[at], f)) {
      j.wrench = wrench_of(j, Vec12(-f));  // hinge, universal, fixed: point and dot rows
      return;
    }
    // Ball joints: the force lambda on body b at the anchor (-lambda when b is the world).
    const Vec3 F(lambda[at], lambda[at + 1], lambda[at + 2]);
    j.wrench = JointWrench{j.b >= 0 ? F : Vec3(-F), Vec3::Zero()};
  };
  // Item k of the row set is joint k (the joints are the first row source), its rows
  // [item_begin[k], item_begin[k + 1]).
  const auto& rows = row_set.rows;
  const std::size_t items = row_set.items();
  auto row_wrench = [&](std::uint32_t ji, detail::JointModel& j) {
    const std::size_t begin = ji < items ? row_set.item_begin[ji] : 0;
    const std::size_t end = ji < items ? std::min(row_set.item_begin[ji + 1], lambda.size()) : 0;
    if (end <= begin) return rows_wrench(j, nullptr, 0, nullptr);
    rows_wrench(j, &rows[begin], end - begin, &lambda[begin]);
  };
  // Joint by joint, each on its own (the worst residual is a maximum): the same bits on any
  // number of threads.
  const Vec12 world_q = detail::make_q(Mat3::Identity(), Vec3::Zero());
  const int parts = range_count(joints.size());
  std::vector<double> worst_of(static_cast<std::size_t>(parts), 0.0);
  for_ranges(joints.size(), parts, [&](int part, std::size_t first, std::size_t last) {
    double worst = 0;
    std::vector<detail::Row> scratch;
    for (auto ji = static_cast<std::uint32_t>(first); ji < last; ++ji) {
      auto& j = joints[ji];
      const Vec12& qa = j.a >= 0 ? q[j.a] : world_q;
      const Vec12& qb = j.b >= 0 ? q[j.b] : world_q;
      if (j.ax) {  // every type but the plain ball joint carries state
        double value;
        if (detail::joint_coordinate_value(j, qa, qb, j.coord_prev, value)) j.coord_prev = value;
        if (j.type == JointType::Ball && j.extras().cone) {
          j.twist_prev = detail::twist_value(j, qa, qb, j.twist_prev);
        }
        if (j.type == JointType::Ball && j.extras().spring) {
          j.bend_prev = detail::ball_bend(j, qa, qb);
        }
      }
      if (closed_form_dual) {
        closed_form_wrench(ji, j);
      } else {
        row_wrench(ji, j);
      }
      worst = std::max(worst, detail::type_residual(j, qa, qb, scratch));
    }
    worst_of[part] = worst;
  });
  stats.joint_residual = *std::max_element(worst_of.begin(), worst_of.end());
}

std::size_t World::joint_count() const { return impl_->joints.size(); }

std::size_t World::constraint_rows() const {
  std::size_t n = 0;
  for (const auto& j : impl_->joints) n += j.base_rows;
  return n;
}

const std::string& World::joint_name(JointId id) const {
  impl_->check_joint(id);
  return impl_->joints[id.index].name;
}

std::optional<JointId> World::find_joint(const std::string& name) const {
  const auto i = impl_->find_joint(name);
  if (!i) return std::nullopt;
  return JointId{*i};
}

std::vector<ComponentSummary> World::topology() const {
  const Impl& w = *impl_;
  std::vector<char> movable(w.bodies.size());
  for (std::size_t i = 0; i < w.bodies.size(); ++i) movable[i] = w.bodies[i].dynamic();
  std::vector<detail::Edge> edges;
  edges.reserve(w.joints.size());
  for (const auto& j : w.joints) edges.push_back({j.a, j.b});
  const auto comps = detail::analyse_topology(w.bodies.size(), movable, edges);
  std::vector<ComponentSummary> out;
  bool all_chains = true;
  for (const auto& c : comps) {
    ComponentSummary s;
    s.kind = detail::topology_name(c.kind);
    s.bodies = c.bodies.size();
    s.joints = c.joints.size();
    for (std::uint32_t j : c.joints) s.rows += w.joints[j].base_rows;
    s.loops = c.loops;
    s.solver = c.joints.empty() ? "none" : dual_solver_name(w.settings.solver);
    all_chains &= c.joints.empty() || c.kind == detail::Topology::Chain;
    out.push_back(s);
  }
  if (w.settings.solver != DualSolverKind::Auto) return out;
  // Auto, as World::Impl::dual_method: per component of the elimination plan (its loop
  // joints: cycles between dynamic bodies), tree or sparse; sparse alone for graphs only.
  std::vector<int> comp_of_body(w.bodies.size(), -1);
  for (std::size_t i = 0; i < comps.size(); ++i) {
    for (std::uint32_t b : comps[i].bodies) comp_of_body[b] = static_cast<int>(i);
  }
  std::vector<char> sparse(comps.size(), 0);
  if (!all_chains) {
    const detail::TreePlan plan = detail::plan_trees(w.bodies.size(), movable, edges);
    for (const auto& tc : plan.components) {
      if (tc.node_end == tc.node_begin) continue;
      const int i = comp_of_body[plan.nodes[tc.node_begin].body];
      if (i >= 0) sparse[i] = Impl::auto_sparse(tc);
    }
  }
  bool any_tree = false;
  for (std::size_t i = 0; i < comps.size(); ++i) any_tree |= !comps[i].joints.empty() && !sparse[i];
  const char* graph_solver = !any_tree && w.auto_iterative() ? "iterative" : "sparse";
  for (std::size_t i = 0; i < comps.size(); ++i) {
    if (comps[i].joints.empty()) continue;
    out[i].solver = all_chains ? "chain" : sparse[i] || !any_tree ? graph_solver : "tree";
  }
  return out;
}

const std::vector<std::string>& World::warnings() const { return impl_->warnings; }

JointWrench World::joint_wrench(JointId id) const {
  impl_->check_joint(id);
  return impl_->joints[id.index].wrench;
}

double World::joint_residual(JointId id) const {
  impl_->check_joint(id);
  const auto& j = impl_->joints[id.index];
  std::vector<detail::Row> rows;
  detail::type_rows(j, impl_->joint_q(j.a), impl_->joint_q(j.b), rows);
  double r = 0;
  for (const auto& row : rows) r = std::max(r, std::abs(row.c));
  return r;
}

double World::joint_position(JointId id) const {
  impl_->check_joint(id);
  const auto& j = impl_->joints[id.index];
  double value = 0;
  Vec12 ga, gb;
  if (!detail::joint_coordinate(j, impl_->joint_q(j.a), impl_->joint_q(j.b), j.coord_prev, value, ga, gb)) {
    return 0;
  }
  return value;
}

}  // namespace mabd
