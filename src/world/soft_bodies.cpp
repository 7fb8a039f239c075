// Soft bodies in the World: tetrahedral FEM solids stepped in lockstep with the affine
// bodies' Newton loop, their attachments to dynamic bodies solved as linear rows with the
// joints (DESIGN section 8).
//
// One world Newton iteration, with y the affine increment after joints and contacts and
// dx0 = -H_f^{-1} g_f each solid's own Newton increment: an attachment of node n to point p
// of body a is the row C = x_n - J(p) q_a (three rows, linear in both). Its multipliers
// lambda (N) solve
//   (G_a M_J^{-1} G_a^T + H_f^{-1}[n, m]) lambda = C + dx0_n - J(p) y_a,
// the first term the rows' Schur complement over the joint solve (ContactSchur::assemble),
// the second the solid's compliance between attached nodes (H_f^{-1} columns), and then
//   y <- y - M_J^{-1} G_a^T lambda,   dx = dx0 - H_f^{-1} G_f^T lambda.
// Both systems are force balances at the end of the step, so lambda is the attachment force
// on each side; the pair (y, dx) is the Newton step of the coupled system and leaves the rows
// satisfied to round-off.
#include <Eigen/Cholesky>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <string>

#include "body/affine.h"
#include "body/body_hessian.h"
#include "fem/tet_mesh.h"
#include "mabd/error.h"
#include "world/world_impl.h"

namespace mabd {
namespace {

std::string soft_label(const SoftBodyDef& def, std::size_t index) {
  return def.name.empty() ? "soft body " + std::to_string(index) : "soft body '" + def.name + "'";
}

/// Gradient of row component t of x_body(p) on the body's q: J(p)^T e_t.
Vec12 point_row(const Vec3& p, int t) {
  Vec12 g = Vec12::Zero();
  for (int k = 0; k < 3; ++k) g[3 * k + t] = p[k];
  g[9 + t] = 1;
  return g;
}

}  // namespace

World::Impl::SoftBody::SoftBody(const SoftBody& o)
    : name(o.name), links(o.links), pins(o.pins), dx(o.dx) {
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
  if (soft_links > 0) {
    // The attachment rows: C = x_n - J(p) q_a, gradient -J(p)^T e_t on body a.
    detail::ContactRows& rows = soft_rows;
    rows.clear();
    for (const SoftBody& s : soft_bodies) {
      for (const SoftLink& l : s.links) {
        const Vec3 c = s.solid->iterate().segment<3>(3 * l.node) - detail::point(q[l.body], l.p);
        for (int t = 0; t < 3; ++t) {
          rows.ga.push_back(-point_row(l.p, t));
          rows.gb.push_back(Vec12::Zero());
          rows.a.push_back(l.body);
          rows.b.push_back(-1);
          rows.alpha.push_back(0);
          rows.value.push_back(c[t]);
          rows.extra_lo.push_back(-INFINITY);
          rows.extra_hi.push_back(INFINITY);
        }
      }
    }
    update_articulations();
    update_jointed();
    const auto response = [this](std::vector<Vec12>& z, std::vector<std::uint32_t>& touched) {
      joint_response(z, touched);
    };
    const detail::ContactLcp& lcp =
        contact_schur.assemble(rows, *this, articulation, jointed_body, response, y);
    Eigen::MatrixXd K = Eigen::MatrixXd(lcp.D);
    Eigen::VectorXd b = lcp.b;
    // Each solid's part: its increment at the attached nodes, and its compliance between
    // them (columns of H_f^{-1}, one solve per row).
    int first = 0;
    std::vector<int> coords;
    for (const SoftBody& s : soft_bodies) {
      const int k = static_cast<int>(s.links.size());
      if (k == 0) continue;
      coords.clear();
      for (const SoftLink& l : s.links) {
        for (int t = 0; t < 3; ++t) coords.push_back(3 * l.node + t);
      }
      const Eigen::MatrixXd Z = s.solid->hessian_columns(coords);  // one solve, 3k columns
      for (int r = 0; r < 3 * k; ++r) {
        b[first + r] += s.dx[coords[r]];
        for (int j = 0; j < 3 * k; ++j) K(first + j, first + r) += Z(coords[j], r);
      }
      first += 3 * k;
    }
    const Eigen::LDLT<Eigen::MatrixXd> ldlt(0.5 * (K + K.transpose()));
    const Eigen::VectorXd lambda = ldlt.solve(b);  // attachment forces (N)
    if (ldlt.info() != Eigen::Success || !lambda.allFinite()) {
      fail(soft_bodies.front(), "the attachment rows could not be solved (singular)");
    }
    contact_schur.increment(rows, jointed_body, response, lambda, soft_dy);
    // The joints' multipliers of the coupled step: those of the joint solve less those of
    // the response (y - dy = H^{-1} (f - G_a^T lambda_a - G_j^T (lambda_j - mu))).
    if (contact_schur.dy_through_joints()) {
      const std::vector<int>& index = dual_scratch.index;
      for (std::size_t r = 0; r < index.size() && r < this->lambda.size(); ++r) {
        if (index[r] >= 0) this->lambda[r] -= response_sol[index[r]];
      }
    }
    for (std::size_t i = 0; i < bodies.size(); ++i) {
      if (bodies[i].dynamic()) y[i] -= soft_dy[i];
    }
    first = 0;
    for (SoftBody& s : soft_bodies) {
      const int k = static_cast<int>(s.links.size());
      if (k == 0) continue;
      Eigen::VectorXd f = Eigen::VectorXd::Zero(3 * s.solid->model().num_nodes());
      for (int i = 0; i < k; ++i) {
        f.segment<3>(3 * s.links[i].node) = lambda.segment<3>(first + 3 * i);
      }
      s.dx -= s.solid->solve_hessian(f);
      first += 3 * k;
    }
  }
  double largest = 0;
  for (SoftBody& s : soft_bodies) {
    if (!s.dx.allFinite()) fail(s, "non-finite node increment");
    s.solid->add_to_iterate(s.dx);
    if (s.dx.size() > 0) largest = std::max(largest, s.dx.cwiseAbs().maxCoeff());
  }
  return largest;
}

void World::Impl::soft_end_step() {
  stats.attachment_residual = 0;
  for (SoftBody& s : soft_bodies) {
    s.solid->end_step();
    stats.attachment_residual = std::max(stats.attachment_residual, soft_residual(s));
  }
}

}  // namespace mabd
