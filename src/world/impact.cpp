// Inelastic limit impacts of generalized-alpha (finish_step). The step's positions hold the
// limits, its accelerations leave their push out (limit_smooth), and the rigid motion of
// every component held by an active limit row is then projected onto the motions its joints
// and active limits allow. Per body, the velocity qdot splits M-orthogonally into a rigid part
// E(A) V (V = [w; v], the twist whose momenta [sum_k sigma_k a_k x adot_k; m tdot] are those
// of qdot) and a deformation rate; the impact changes the twists only:
//   V+ = argmin 1/2 |V - Vs|^2_Mr   subject to   Gr V = 0 (joint rows),  Gr V >= 0 (limits),
// Mr = diag(I(A), m I) the rigid inertia, Gr = G E(A) the rows on twists ([sum_k a_k x g_k;
// g_t]). Written as one dual solve of a displacement h V in the metric Mr / (beta' h^2), so
// that a row's compliance means what it means in the step:
//   (beta' h^2 Gr Mr^{-1} Gr^T + diag(alpha)) lambda = Gr (h Vs),  V+ = Vs - beta' h Mr^{-1} Gr^T lambda,
// with the active-set loop of dual_solve on the limit rows (a limit that would pull is
// released, a released one that the result approaches is taken back): the limits' velocity
// complementarity with zero restitution, the rigid-body impact law. An Mr-orthogonal
// projection onto a cone containing 0, and the deformation rates are untouched and
// M-orthogonal to the twists: the kinetic energy never grows (a compliant row makes it a
// contraction). Linear and angular momentum change only by the impulses of rows to the world.
// In the full affine metric M instead, the impulse would go where the mass is least, into
// the light columns of a slender body (a shear rate of little kinetic energy, but large
// elastic energy one step later). Springs and drives are forces of the smooth step, not part
// of the impact. Mr is 6x6 per body: the system costs no body solves.
#include <string>
#include <vector>

#include "mabd/error.h"
#include "world/world_impl.h"

namespace mabd {

using detail::RowKind;

namespace {

/// Relative shift of the diagonal of the impact system (a compliance of this fraction of
/// each row's own S_rr). Rows independent on the affine motion (a closed loop the bodies'
/// elasticity absorbs) can be redundant on the rigid twists, and slender bodies make the
/// system ill-conditioned there; the shift keeps it definite and well-conditioned, so that no
/// pivot test decides how it is solved and the dual solvers' round-off is not amplified
/// (tests/solvers compare them to 1e-9). After an impact a row's rate is then this fraction of
/// its rate before instead of 0; like any compliance, it keeps the projection a contraction.
constexpr double kRegularisation = 1e-6;

}  // namespace

void World::Impl::impact_projection() {
  using State = DualRowState;
  const auto& state = dual_scratch.state;
  // The rows of the last dual solve; item k is joint k (the joints are the first row source).
  const auto& rows = row_set.rows;
  const auto& row_a = row_set.row_a;
  const auto& row_b = row_set.row_b;
  const auto& rows_of = row_set.rows_of;
  const auto& item_begin = row_set.item_begin;
  const double h = settings.dt, bh2 = beta_h2();
  auto dynamic = [&](int body) { return body >= 0 && bodies[body].dynamic(); };
  using Vec6 = Eigen::Matrix<double, 6, 1>;

  // Bodies of the components held by an active limit: a flood fill over the joints.
  std::vector<char> in_body(bodies.size(), 0), in_joint(joints.size(), 0);
  std::vector<std::size_t> group, stack;
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    if (impact[i] && dynamic(static_cast<int>(i))) {
      in_body[i] = 1;
      stack.push_back(i);
    }
  }
  std::vector<std::uint32_t> group_joints;
  while (!stack.empty()) {
    const std::size_t i = stack.back();
    stack.pop_back();
    group.push_back(i);
    for (int r : rows_of[i]) {
      const std::uint32_t ji = row_set.row_item[r];
      if (in_joint[ji]) continue;
      in_joint[ji] = 1;
      group_joints.push_back(ji);
      for (int other : {topology.items[ji].a, topology.items[ji].b}) {
        if (dynamic(other) && !in_body[other]) {
          in_body[other] = 1;
          stack.push_back(other);
        }
      }
    }
  }

  // Rigid coordinates of the group: inverse inertia and twist of every body.
  std::vector<Mat3> inertia_inv(bodies.size());
  std::vector<Vec6> twist(bodies.size(), Vec6::Zero());
  for (std::size_t i : group) {
    const auto& b = bodies[i];
    Mat3 I = Mat3::Zero();
    Vec3 L = Vec3::Zero();
    for (int k = 0; k < 3; ++k) {
      const Vec3 a = q[i].segment<3>(3 * k);
      I += b.sigma()[k] * (a.squaredNorm() * Mat3::Identity() - a * a.transpose());
      L += b.sigma()[k] * a.cross(Vec3(qdot[i].segment<3>(3 * k)));
    }
    inertia_inv[i] = I.inverse();
    twist[i] << inertia_inv[i] * L, qdot[i].tail<3>();
  }
  auto rigid = [&](std::size_t i, const Vec12& g) {  // E(A)^T g: [sum_k a_k x g_k; g_t]
    Vec6 r = Vec6::Zero();
    for (int k = 0; k < 3; ++k) r.head<3>() += Vec3(q[i].segment<3>(3 * k)).cross(Vec3(g.segment<3>(3 * k)));
    r.tail<3>() = g.tail<3>();
    return r;
  };
  auto mr_inv = [&](std::size_t i, const Vec6& f) {  // Mr^{-1} f
    Vec6 r;
    r << inertia_inv[i] * f.head<3>(), f.tail<3>() / bodies[i].mass();
    return r;
  };

  // Rows: the joints' own rows and their active limit rows (limit: kind Lower), on twists.
  const int n = static_cast<int>(rows.size());
  std::vector<char> selected(n, 0), active(n, 0);
  std::vector<int> limit_rows, selected_rows;
  std::vector<Vec6> gra(n), grb(n);
  for (std::uint32_t ji : group_joints) {
    const std::size_t begin = item_begin[ji], end = item_begin[ji + 1];
    for (std::size_t r = begin; r < end; ++r) {
      const bool own = r < begin + static_cast<std::size_t>(joints[ji].base_rows);
      const bool limit = rows[r].kind == RowKind::Lower && state[r] == State::Active;
      if (!own && !limit) continue;
      selected[r] = active[r] = 1;
      selected_rows.push_back(static_cast<int>(r));
      if (limit) limit_rows.push_back(static_cast<int>(r));
      if (dynamic(row_a[r])) gra[r] = rigid(row_a[r], rows[r].ga);
      if (dynamic(row_b[r])) grb[r] = rigid(row_b[r], rows[r].gb);
    }
  }
  auto g_of = [&](int r, std::size_t body) -> const Vec6& {
    return row_a[r] == static_cast<int>(body) ? gra[r] : grb[r];
  };
  // Rate of a row: twists of the group's bodies; kinematic bodies move with qdot; the world
  // and static bodies do not.
  auto row_rate = [&](int r, const std::vector<Vec6>& v) {
    double s = 0;
    for (int side = 0; side < 2; ++side) {
      const int body = side == 0 ? row_a[r] : row_b[r];
      if (body < 0) continue;
      if (in_body[body]) {
        s += g_of(r, body).dot(v[body]);
      } else {
        s += (side == 0 ? rows[r].ga : rows[r].gb).dot(qdot[body]);
      }
    }
    return s;
  };

  const std::vector<Vec6> twist_smooth = twist;
  std::vector<int> index(n, -1);
  std::vector<Eigen::Triplet<double>> triplets;
  Eigen::VectorXd rhs, lambda_v;
  for (int pass = 0; pass < 6; ++pass) {
    int m = 0;
    std::uint64_t pattern = 1469598103934665603ull;
    for (int r : selected_rows) {
      index[r] = active[r] ? m++ : -1;
      if (index[r] >= 0) pattern = (pattern ^ static_cast<std::uint64_t>(r)) * 1099511628211ull;
    }
    triplets.clear();
    for (std::size_t i : group) {
      for (int r1 : rows_of[i]) {
        if (!selected[r1] || index[r1] < 0) continue;
        const Vec6 w1 = bh2 * mr_inv(i, g_of(r1, i));
        for (int r2 : rows_of[i]) {
          if (selected[r2] && index[r2] >= 0) triplets.emplace_back(index[r1], index[r2], g_of(r2, i).dot(w1));
        }
      }
    }
    rhs.resize(m);
    std::vector<double> diag(m, 0.0);
    for (const auto& t : triplets) {
      if (t.row() == t.col()) diag[t.row()] += t.value();
    }
    for (int r : selected_rows) {
      if (index[r] < 0) continue;
      triplets.emplace_back(index[r], index[r], rows[r].compliance + kRegularisation * diag[index[r]]);
      rhs[index[r]] = h * row_rate(r, twist_smooth);
    }
    if (!impact_solver.solve(m, triplets, rhs, pattern, lambda_v)) {
      throw SimulationError("step " + std::to_string(steps + 1) +
                            ": the impact system could not be solved (dual matrix singular)");
    }
    for (std::size_t i : group) {
      Vec6 f = Vec6::Zero();
      for (int r : rows_of[i]) {
        if (selected[r] && index[r] >= 0) f += g_of(r, i) * lambda_v[index[r]];
      }
      twist[i] = twist_smooth[i] - (bh2 / h) * mr_inv(i, f);
    }
    bool changed = false;
    for (int r : limit_rows) {
      if (active[r] && lambda_v[index[r]] > 0) {  // would pull: the limit separates
        active[r] = 0;
        changed = true;
      } else if (!active[r] && row_rate(r, twist) < 0) {
        active[r] = 1;
        changed = true;
      }
    }
    if (!changed) break;
  }
  // qdot += E(A) (V+ - Vs): the rigid part changes, the deformation rate stays.
  for (std::size_t i : group) {
    const Vec6 d = twist[i] - twist_smooth[i];
    for (int k = 0; k < 3; ++k) {
      qdot[i].segment<3>(3 * k) += d.head<3>().cross(Vec3(q[i].segment<3>(3 * k)));
    }
    qdot[i].tail<3>() += d.tail<3>();
  }
}

}  // namespace mabd
