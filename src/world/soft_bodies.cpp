// Soft bodies in the World: tetrahedral FEM solids stepped in lockstep with the affine
// bodies' Newton loop, their attachments and contacts solved as rows with the joints.
//
// One world Newton iteration, with y the affine increment after joints and contacts and
// dx0 = -H_f^{-1} g_f each solid's own Newton increment: an attachment of node n to point p
// of body a is the row C = x_n - J(p) q_a (three rows, linear in both). Its multipliers
// lambda (N) solve
//   (G_a M_J^{-1} G_a^T + H_f^{-1}[n, m]) lambda = C + dx0_n - J(p) y_a,
// the first term the rows' Schur complement over the joint solve (ContactSchur::assemble),
// the second the solid's compliance between attached nodes (H_f^{-1} columns), and then
//   y <- y - M_J^{-1} G_a^T lambda,   dx = dx0 - H_f^{-1} G_f^T lambda.
// Contacts (soft_contact.cpp) are rows of the same form along their normal and tangents:
// with them the system is the complementarity problem of contact_lcp.h, attachments its free
// rows.
// Both systems are force balances at the end of the step, so lambda is the attachment force
// on each side; the pair (y, dx) is the Newton step of the coupled system and leaves the rows
// satisfied to round-off.
#include <Eigen/Cholesky>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <string>

#include "body/affine.h"
#include "body/body_hessian.h"
#include "fem/tet_mesh.h"
#include "joints/row.h"
#include "mabd/error.h"
#include "world/contact_laws.h"
#include "world/world_impl.h"

namespace mabd {
namespace {

std::string soft_label(const SoftBodyDef& def, std::size_t index) {
  return def.name.empty() ? "soft body " + std::to_string(index) : "soft body '" + def.name + "'";
}

}  // namespace

World::Impl::SoftBody::SoftBody(const SoftBody& o)
    : name(o.name),
      surface(o.surface),
      faces(o.faces),
      contacts(o.contacts),
      contacts_prev(o.contacts_prev),
      friction(o.friction),
      face_contacts(o.face_contacts),
      links(o.links),
      pins(o.pins),
      dx(o.dx) {
  if (o.solid) {
    solid = std::make_unique<fem::FemSolid>(o.solid->model(), o.solid->settings());
    solid->set_state(o.solid->state());
    for (const SoftLink& l : o.pins) solid->set_pin_target(l.node, o.solid->pin_target(l.node));
  }
}

World::Impl::SoftBody& World::Impl::SoftBody::operator=(const SoftBody& o) {
  if (this != &o) *this = SoftBody(o);
  return *this;
}

const World::Impl::SoftBody& World::Impl::soft(SoftBodyId id) const {
  if (id.index >= soft_bodies.size()) {
    throw InvalidArgument("unknown soft body id " + std::to_string(id.index) + " (world has " +
                          std::to_string(soft_bodies.size()) + " soft bodies)");
  }
  return soft_bodies[id.index];
}

SoftBodyId World::add_soft_body(const SoftBodyDef& def) {
  Impl& w = *impl_;
  const std::string label = soft_label(def, w.soft_bodies.size());
  if (!def.name.empty() && find_soft_body(def.name)) {
    throw InvalidArgument(label + ": the name is taken by another soft body");
  }
  if (def.tets.empty()) throw InvalidArgument(label + ": no tets");
  const int n = static_cast<int>(def.nodes.size());
  // Inverted tets (any orientation is accepted) are reoriented by swapping two nodes.
  std::vector<fem::Tet> tets(def.tets.begin(), def.tets.end());
  for (std::size_t e = 0; e < tets.size(); ++e) {
    fem::Tet& t = tets[e];
    bool in_range = true;
    for (int a : t) in_range &= a >= 0 && a < n;
    if (!in_range) continue;  // make_tet_mesh names it
    const Vec3 &x0 = def.nodes[t[0]], &x1 = def.nodes[t[1]], &x2 = def.nodes[t[2]],
               &x3 = def.nodes[t[3]];
    if ((x1 - x0).cross(x2 - x0).dot(x3 - x0) < 0) std::swap(t[2], t[3]);
  }
  fem::TetMesh mesh;
  try {
    mesh = fem::make_tet_mesh(def.nodes, std::move(tets), fem::MeshSource{label, {}});
  } catch (const InvalidArgument&) {
    throw;
  } catch (const std::exception& e) {
    throw InvalidArgument(e.what());
  }
  const Material& m = def.material;
  if (!(m.youngs_modulus > 0) || !std::isfinite(m.youngs_modulus)) {
    throw InvalidArgument(label + ": Young's modulus " + std::to_string(m.youngs_modulus) +
                          " Pa must be positive");
  }
  if (!(m.poisson_ratio > -1 && m.poisson_ratio < 0.5)) {
    throw InvalidArgument(label + ": Poisson ratio " + std::to_string(m.poisson_ratio) +
                          " must lie in (-1, 0.5)");
  }
  if (!(m.density > 0) || !std::isfinite(m.density)) {
    throw InvalidArgument(label + ": density " + std::to_string(m.density) +
                          " kg/m^3 must be positive");
  }
  if (!def.linear_velocity.allFinite()) {
    throw InvalidArgument(label + ": linear_velocity must be finite");
  }
  Impl::SoftBody s;
  s.name = def.name;
  s.friction = m.friction;
  s.face_contacts = def.face_contacts;
  if (!(m.friction >= 0) || !std::isfinite(m.friction)) {
    throw InvalidArgument(label + ": friction " + std::to_string(m.friction) + " must be >= 0");
  }
  {
    // Boundary faces belong to one tet: their nodes are the contact candidates, and the
    // faces themselves, turned to face away from their tet's fourth node (outward).
    struct FaceUse {
      int count = 0;
      std::array<int, 3> nodes{};
      int opposite = 0;
    };
    std::map<std::array<int, 3>, FaceUse> faces;
    for (const fem::Tet& t : mesh.tets) {
      for (int f = 0; f < 4; ++f) {
        const std::array<int, 3> nodes = {t[f == 0 ? 1 : 0], t[f <= 1 ? 2 : 1],
                                          t[f <= 2 ? 3 : 2]};
        std::array<int, 3> key = nodes;
        std::sort(key.begin(), key.end());
        FaceUse& use = faces[key];
        ++use.count;
        use.nodes = nodes;
        use.opposite = t[f];
      }
    }
    std::vector<char> on_surface(n, 0);
    for (const auto& [key, use] : faces) {
      if (use.count != 1) continue;
      for (int v : key) on_surface[v] = 1;
      std::array<int, 3> f = use.nodes;
      const Vec3& a = mesh.rest[f[0]];
      if ((mesh.rest[f[1]] - a).cross(mesh.rest[f[2]] - a).dot(mesh.rest[use.opposite] - a) > 0) {
        std::swap(f[1], f[2]);
      }
      s.faces.push_back(f);
    }
    for (int i = 0; i < n; ++i) {
      if (on_surface[i]) s.surface.push_back(i);
    }
  }
  std::vector<char> attached(n, 0);
  std::vector<int> pinned;
  for (std::size_t k = 0; k < def.attachments.size(); ++k) {
    const SoftAttachment& a = def.attachments[k];
    const std::string item = label + ": attachment " + std::to_string(k);
    if (a.node < 0 || a.node >= n) {
      throw InvalidArgument(item + ": node " + std::to_string(a.node) + " out of range [0, " +
                            std::to_string(n) + ")");
    }
    if (attached[a.node]) {
      throw InvalidArgument(item + ": node " + std::to_string(a.node) + " is attached already");
    }
    attached[a.node] = 1;
    Impl::SoftLink link;
    link.node = a.node;
    const Vec3& x = def.nodes[a.node];
    if (a.body.valid()) {
      if (a.body.index >= w.bodies.size()) {
        throw InvalidArgument(item + ": unknown body id " + std::to_string(a.body.index));
      }
      link.body = static_cast<std::int32_t>(a.body.index);
      link.p = detail::to_body_frame(w.q[a.body.index], x - detail::affine_t(w.q[a.body.index]));
    } else {
      link.p = x;
    }
    if (link.body >= 0 && w.bodies[link.body].dynamic()) {
      s.links.push_back(link);
    } else {
      s.pins.push_back(link);
      pinned.push_back(a.node);
    }
  }
  fem::FemModel model(std::move(mesh), {m.density, m.youngs_modulus, m.poisson_ratio},
                      fem::MassType::lumped, pinned);
  s.solid = std::make_unique<fem::FemSolid>(std::move(model));
  fem::FemState state = s.solid->state();
  for (int i = 0; i < n; ++i) state.v.segment<3>(3 * i) = def.linear_velocity;
  for (int i : pinned) state.v.segment<3>(3 * i).setZero();
  s.solid->set_state(state);
  w.soft_links += s.links.size();
  w.soft_bodies.push_back(std::move(s));
  return SoftBodyId{static_cast<std::uint32_t>(w.soft_bodies.size() - 1)};
}

std::size_t World::soft_body_count() const { return impl_->soft_bodies.size(); }

const std::string& World::soft_body_name(SoftBodyId id) const { return impl_->soft(id).name; }

std::optional<SoftBodyId> World::find_soft_body(const std::string& name) const {
  const auto& list = impl_->soft_bodies;
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (list[i].name == name) return SoftBodyId{static_cast<std::uint32_t>(i)};
  }
  return std::nullopt;
}

SoftBodyState World::soft_body_state(SoftBodyId id) const {
  const fem::FemSolid& s = *impl_->soft(id).solid;
  SoftBodyState out;
  const int n = s.model().num_nodes();
  out.positions.resize(n);
  out.velocities.resize(n);
  for (int i = 0; i < n; ++i) {
    out.positions[i] = s.state().x.segment<3>(3 * i);
    out.velocities[i] = s.state().v.segment<3>(3 * i);
  }
  return out;
}

const std::vector<std::array<int, 4>>& World::soft_body_tets(SoftBodyId id) const {
  return impl_->soft(id).solid->model().mesh().tets;
}

double World::soft_kinetic_energy(SoftBodyId id) const {
  return impl_->soft(id).solid->kinetic_energy();
}

double World::soft_elastic_energy(SoftBodyId id) const {
  return impl_->soft(id).solid->elastic_energy();
}

double World::soft_potential_energy(SoftBodyId id) const {
  const fem::FemSolid& s = *impl_->soft(id).solid;
  return s.gravitational_energy(impl_->settings.gravity) + s.elastic_energy();
}

Vec3 World::soft_linear_momentum(SoftBodyId id) const {
  return impl_->soft(id).solid->linear_momentum();
}

double World::soft_attachment_residual(SoftBodyId id) const {
  return impl_->soft_residual(impl_->soft(id));
}

double World::Impl::soft_residual(const SoftBody& s) const {
  double r = 0;
  for (const SoftLink& l : s.links) {
    const Vec3 d = s.solid->position(l.node) - detail::point(q[l.body], l.p);
    r = std::max(r, d.cwiseAbs().maxCoeff());
  }
  return r;
}

// ---- Step phases ------------------------------------------------------------------------

void World::Impl::soft_begin_step() {
  for (SoftBody& s : soft_bodies) {
    for (const SoftLink& l : s.pins) {
      s.solid->set_pin_target(l.node, l.body >= 0 ? detail::point(q[l.body], l.p) : l.p);
    }
    s.solid->begin_step(settings.dt, settings.gravity);
  }
  soft_detect();
}

double World::Impl::soft_iteration() {
  auto fail = [&](const SoftBody& s, const std::string& what) {
    q = q_prev;  // leave the world at the last valid step
    const std::string label = s.name.empty()
                                  ? "soft body " + std::to_string(&s - soft_bodies.data())
                                  : "soft body '" + s.name + "'";
    throw SimulationError("step " + std::to_string(steps + 1) + ": " + label + ": " + what);
  };
  for (SoftBody& s : soft_bodies) {
    try {
      s.dx = s.solid->newton_increment();
    } catch (const SimulationError& e) {
      fail(s, e.what());
    }
  }
  // The coupling rows: every candidate contact point (normal, t1, t2), then attachments.
  std::vector<SoftRow>& all = soft_row_list;
  all.clear();
  soft_contact_rows();
  std::vector<SoftContact*> candidates;
  for (SoftBody& s : soft_bodies) {
    for (SoftContact& c : s.contacts) candidates.push_back(&c);
  }
  const std::size_t first_link = all.size();
  for (std::uint32_t k = 0; k < soft_bodies.size(); ++k) {
    const SoftBody& s = soft_bodies[k];
    for (const SoftLink& l : s.links) {
      const Vec3 c = s.solid->iterate().segment<3>(3 * l.node) - detail::point(q[l.body], l.p);
      for (int t = 0; t < 3; ++t) {
        SoftRow r;
        r.soft = k;
        r.node = r.nodes[0] = l.node;
        r.d = Vec3::Unit(t);
        r.body = l.body;
        r.p = l.p;
        r.value = c[t];
        all.push_back(r);
      }
    }
  }
  // The normal row's value after node increments dx and affine increments y - dy (m).
  const auto gap_after = [&](const SoftRow& row, const std::vector<Eigen::VectorXd>& dx,
                             bool with_dy) {
    double g = row.value + row.d.dot(soft_point(dx[row.soft], row.corners, row.nodes, row.weights));
    if (row.body >= 0) {
      Vec12 dq = y[row.body];
      if (with_dy) dq -= soft_dy[row.body];
      g -= row.d.dot(detail::point(dq, row.p));
    }
    return g;
  };
  // Working set: it starts with the candidates that push (in the last step or iteration) or
  // lie within kJoin of touching at this iterate, and a candidate that joins stays for the
  // step. After each solve the points left out are checked at the new increments; any that
  // would sink past kSink joins and the rows are solved again. A point left out that stays
  // clear has no force in the full problem either, so the set's solution is the full one.
  // Far candidates (most, as a body nears) then cost nothing, and neither do the many near
  // ones that a resting soft body's free increments (gravity alone) would sink.
  constexpr double kJoin = 1e-4, kSink = 1e-7;  // m
  for (std::size_t p = 0; p < candidates.size(); ++p) {
    SoftContact& c = *candidates[p];
    if (!c.in_set && (c.lambda[0] != 0 || all[3 * p].value < kJoin)) c.in_set = true;
  }
  std::vector<SoftRow> list;
  std::vector<SoftContact*> members;
  Eigen::VectorXd lambda;
  std::vector<Eigen::VectorXd> dx(soft_bodies.size());
  bool has_dy = false;
  for (;;) {
    list.clear();
    members.clear();
    for (std::size_t p = 0; p < candidates.size(); ++p) {
      if (!candidates[p]->in_set) continue;
      members.push_back(candidates[p]);
      list.insert(list.end(), all.begin() + 3 * p, all.begin() + 3 * p + 3);
    }
    list.insert(list.end(), all.begin() + first_link, all.end());
    const int m = static_cast<int>(list.size());
    has_dy = false;
    if (m > 0) {
      if (const char* error = soft_solve(list, members, lambda, has_dy)) {
        fail(soft_bodies.front(), error);
      }
    }
    // The solids' increment dx = dx0 - H_f^{-1} sum_r d_r lambda_r (at the row's node), dx0
    // their own Newton increments (s.dx until the end of the iteration).
    for (std::uint32_t k = 0; k < soft_bodies.size(); ++k) {
      SoftBody& s = soft_bodies[k];
      dx[k] = s.dx;
      Eigen::VectorXd f = Eigen::VectorXd::Zero(3 * s.solid->model().num_nodes());
      bool any = false;
      for (int r = 0; r < m; ++r) {
        const SoftRow& row = list[r];
        if (row.soft != k || lambda[r] == 0) continue;
        for (int c = 0; c < row.corners; ++c) {
          f.segment<3>(3 * row.nodes[c]) += row.weights[c] * lambda[r] * row.d;
        }
        any = true;
      }
      if (any) dx[k] -= s.solid->solve_hessian(f);
    }
    bool joined = false;
    for (std::size_t p = 0; p < candidates.size(); ++p) {
      SoftContact& c = *candidates[p];
      if (c.in_set || gap_after(all[3 * p], dx, has_dy) >= -kSink) continue;
      c.in_set = joined = true;
    }
    if (!joined) break;
  }
  for (SoftContact* c : candidates) {
    if (!c->in_set) c->lambda = {};
  }
  if (has_dy) {
    // The affine increment y -= M_J^{-1} G_q^T lambda, and the joints' multipliers of the
    // coupled step: those of the joint solve less those of the response
    // (y - dy = H^{-1} (f - G_q^T lambda - G_j^T (lambda_j - mu))).
    for (std::size_t i = 0; i < bodies.size(); ++i) {
      if (bodies[i].dynamic()) y[i] -= soft_dy[i];
    }
    if (contact_schur.dy_through_joints()) {
      const std::vector<int>& index = dual_scratch.index;
      for (std::size_t r = 0; r < index.size() && r < this->lambda.size(); ++r) {
        if (index[r] >= 0) this->lambda[r] -= response_sol[index[r]];
      }
    }
  }
  double largest = 0;
  for (std::size_t k = 0; k < soft_bodies.size(); ++k) {
    SoftBody& s = soft_bodies[k];
    s.dx = dx[k];
    if (!s.dx.allFinite()) fail(s, "non-finite node increment");
    s.solid->add_to_iterate(s.dx);
    if (s.dx.size() > 0) largest = std::max(largest, s.dx.cwiseAbs().maxCoeff());
  }
  return largest;
}

const char* World::Impl::soft_solve(const std::vector<SoftRow>& list,
                                    const std::vector<SoftContact*>& contacts,
                                    Eigen::VectorXd& lambda, bool& has_dy) {
  const int m = static_cast<int>(list.size());
  const int points = static_cast<int>(contacts.size());
  // b = C + d . dx0 + G_q y and K = G_q M_J^{-1} G_q^T + d^T H_f^{-1} d'.
  Eigen::MatrixXd K = Eigen::MatrixXd::Zero(m, m);
  Eigen::VectorXd b(m);
  for (int r = 0; r < m; ++r) {
    const SoftRow& row = list[r];
    b[r] = row.value +
           row.d.dot(soft_point(soft_bodies[row.soft].dx, row.corners, row.nodes, row.weights));
  }
  // Rows on dynamic bodies: their Schur complement over the joint solve.
  detail::ContactRows& rows = soft_rows;
  rows.clear();
  std::vector<int> full;  // row of `rows` -> row of `list`
  for (int r = 0; r < m; ++r) {
    const SoftRow& row = list[r];
    if (row.body < 0) continue;
    rows.ga.push_back(-detail::grad_point(row.p, row.d));
    rows.gb.push_back(Vec12::Zero());
    rows.a.push_back(row.body);
    rows.b.push_back(-1);
    rows.alpha.push_back(0);
    rows.value.push_back(0);
    full.push_back(r);
  }
  const auto response = [this](std::vector<Vec12>& z, std::vector<std::uint32_t>& touched) {
    joint_response(z, touched);
  };
  if (!full.empty()) {
    update_articulations();
    update_jointed();
    const detail::ContactSchur::JointBlock block = joint_block_fn();
    const detail::ContactLcp& lcp =
        contact_schur.assemble(rows, *this, articulation, jointed_body, response, y, &block);
    for (int k = 0; k < lcp.D.outerSize(); ++k) {
      for (Eigen::SparseMatrix<double>::InnerIterator it(lcp.D, k); it; ++it) {
        K(full[it.row()], full[it.col()]) += it.value();
      }
    }
    for (std::size_t i = 0; i < full.size(); ++i) b[full[i]] += lcp.b[i];  // G_q y
  }
  // Each solid's compliance between its rows' nodes: columns of H_f^{-1}, one solve.
  std::vector<int> coords, column_of;
  for (std::uint32_t k = 0; k < soft_bodies.size(); ++k) {
    const SoftBody& s = soft_bodies[k];
    const int nodes = s.solid->model().num_nodes();
    column_of.assign(nodes, -1);
    coords.clear();
    std::vector<int> mine;
    for (int r = 0; r < m; ++r) {
      if (list[r].soft != k) continue;
      mine.push_back(r);
      for (int c = 0; c < list[r].corners; ++c) {
        const int node = list[r].nodes[c];
        if (column_of[node] >= 0) continue;
        column_of[node] = static_cast<int>(coords.size());
        for (int t = 0; t < 3; ++t) coords.push_back(3 * node + t);
      }
    }
    if (mine.empty()) continue;
    const Eigen::MatrixXd Z = s.solid->hessian_columns(coords);
    for (int r : mine) {
      const SoftRow& a = list[r];
      for (int c : mine) {
        const SoftRow& b2 = list[c];
        // d_r . (sum_i w_i x_i) against d_c . (sum_j w_j x_j): the weighted node blocks.
        double v = 0;
        for (int i = 0; i < a.corners; ++i) {
          for (int j = 0; j < b2.corners; ++j) {
            const Mat3 block = Z.block<3, 3>(3 * a.nodes[i], column_of[b2.nodes[j]]);
            v += a.weights[i] * b2.weights[j] * a.d.dot(block * b2.d);
          }
        }
        K(r, c) += v;
      }
    }
  }
  K = 0.5 * (K + K.transpose()).eval();
  // Compliance per row: the exact contact floor or the penalty spring (normal rows), the
  // stick floor (tangent rows), round-off for attachments.
  Eigen::VectorXd alpha(m);
  const double h = settings.dt;
  const bool penalty = settings.contact.model == ContactModel::Penalty;
  for (int r = 0; r < m; ++r) {
    const double krr = std::max(K(r, r), 1e-300);
    const SoftRow& row = list[r];
    if (row.axis == 0 && penalty) {
      const detail::PenaltyLaw law = detail::penalty_law(settings, h * h / krr, row.s0);
      alpha[r] = 1.0 / law.k_eff;
      b[r] -= law.pull / law.k_eff;
    } else if (row.axis == 0) {
      alpha[r] = (row.body >= 0 ? detail::kExactFloor : detail::kSoftStaticFloor) * krr;
    } else if (row.axis > 0) {
      alpha[r] = detail::kStickFloor * krr;
    } else {
      alpha[r] = 1e-12 * krr;
    }
  }
  lambda.resize(m);
  if (points == 0) {
    K.diagonal() += alpha;
    const Eigen::LDLT<Eigen::MatrixXd> ldlt(K);
    lambda = ldlt.solve(b);  // attachment forces (N)
    if (ldlt.info() != Eigen::Success || !lambda.allFinite()) {
      return "the attachment rows could not be solved (singular)";
    }
  } else {
    // Contacts: the complementarity problem (contact_lcp.h), attachments as free rows.
    detail::ContactLcp lcp;
    lcp.D = K.sparseView();
    lcp.alpha = alpha;
    lcp.b = b;
    for (int p = 0; p < points; ++p) {
      lcp.mu.push_back(contacts[p]->mu);
      for (int t = 0; t < 3; ++t) lambda[3 * p + t] = contacts[p]->lambda[t];
    }
    lcp.extra_lo.assign(m - 3 * points, -INFINITY);
    lcp.extra_hi.assign(m - 3 * points, INFINITY);
    lambda.tail(m - 3 * points).setZero();
    detail::solve_contact_lcp(lcp, lambda, {});
    if (!lambda.allFinite()) return "the contact rows could not be solved";
    for (int p = 0; p < points; ++p) {
      for (int t = 0; t < 3; ++t) contacts[p]->lambda[t] = lambda[3 * p + t];
    }
  }
  // The response of the affine bodies, M_J^{-1} G_q^T lambda.
  has_dy = !full.empty();
  if (has_dy) {
    Eigen::VectorXd sub(static_cast<Eigen::Index>(full.size()));
    for (std::size_t i = 0; i < full.size(); ++i) sub[i] = lambda[full[i]];
    contact_schur.increment(rows, jointed_body, response, sub, soft_dy);
  }
  return nullptr;
}

void World::Impl::soft_end_step() {
  stats.attachment_residual = 0;
  for (SoftBody& s : soft_bodies) {
    s.solid->end_step();
    stats.attachment_residual = std::max(stats.attachment_residual, soft_residual(s));
  }
}

}  // namespace mabd
