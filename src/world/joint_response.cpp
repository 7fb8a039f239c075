// The joint-constrained response of the contacts between dynamic bodies (pair_contact.cpp,
// solvers/contact_schur.h): z <- z - H^{-1} G^T lambda with (S + alpha) lambda = G z, on the
// active rows of the last dual solve. A response stays in the articulations it starts in, so
// each articulation with a nonzero z solves only its own rows: its block of S + diag(alpha),
// assembled body by body like assemble_dual and factored once per dual solve (dense LDLT
// for small articulations, sparse LDLT for large ones), then one solve per response. A
// contact's column of D then costs its articulations' size, not the whole world's.
// joint_block gives all the columns of one articulation at once from the same factor
// (solvers/ldlt_block.h).
#include <algorithm>
#include <span>
#include <unordered_map>

#include <Eigen/Cholesky>
#include <Eigen/OrderingMethods>
#include <Eigen/SparseCholesky>

#include "mabd/error.h"
#include "solvers/ldlt_block.h"
#include "world/world_impl.h"

namespace mabd {

namespace {
constexpr int kDenseRows = 96;  ///< articulations with more active rows factor sparse

/// What a factor's pattern and a row order are made from: per row (in the given order) its
/// id and bodies, then the bodies.
std::vector<int> rows_key(const std::vector<int>& rows, const std::vector<std::uint32_t>& bodies,
                          const detail::RowSet& rs) {
  std::vector<int> key;
  key.reserve(3 * rows.size() + bodies.size() + 1);
  for (int r : rows) key.insert(key.end(), {r, rs.row_a[r], rs.row_b[r]});
  for (std::uint32_t b : bodies) key.push_back(static_cast<int>(b));
  return key;
}
}  // namespace

struct World::Impl::ArticulationFactor {
  std::vector<int> rows;                    ///< active rows (global ids), local order
  std::vector<std::uint32_t> bodies;        ///< dynamic bodies with rows
  /// Per body k: (local row, H^{-1} g of that row on the body), at [w_begin[k],
  /// w_begin[k + 1]) of w.
  std::vector<std::pair<int, Vec12>> w;
  std::vector<int> w_begin;
  std::span<const std::pair<int, Vec12>> w_of(std::size_t k) const {
    return {w.data() + w_begin[k], w.data() + w_begin[k + 1]};
  }
  std::unordered_map<std::uint32_t, int> slot;  ///< body -> its index in `bodies`
  detail::LdltBlock block;                      ///< batched responses (sparse factors)
  Eigen::LDLT<Eigen::MatrixXd> dense;
  detail::LdltBlock::Factor sparse;  ///< in the rows' order (order_rows)
  /// The sparse factor's pattern: per row its id and bodies, then the bodies.
  std::vector<int> pattern;
  bool use_dense = true;
  bool ok = false;
};

namespace {

/// Leaves-first order of a loop-free articulation's rows: bodies from the deepest (from the
/// first body) up, each giving its rows to the world and then those to its parent (the rows to
/// its children went before). Eliminating a row then joins only rows on one body, which already
/// meet there: no fill, at the cost of one pass. Rows flagged in `last` are left out.
std::vector<int> leaves_first(const std::vector<std::uint32_t>& bodies,
                              const std::unordered_map<std::uint32_t, int>& slot,
                              const detail::RowSet& rs,
                              const std::vector<std::vector<std::pair<int, int>>>& on_body,
                              const std::vector<char>& last, int m) {
  const int nb = static_cast<int>(bodies.size());
  auto other = [&](int k, int r) {
    const std::int32_t o = rs.row_a[r] == static_cast<std::int32_t>(bodies[k]) ? rs.row_b[r]
                                                                               : rs.row_a[r];
    const auto it = o < 0 ? slot.end() : slot.find(static_cast<std::uint32_t>(o));
    return it == slot.end() ? -1 : it->second;
  };
  // Breadth-first depths; every body of the articulation is reached through its rows.
  std::vector<int> depth(nb, -1), queue;
  for (int start = 0; start < nb; ++start) {
    if (depth[start] >= 0) continue;
    depth[start] = 0;
    queue.assign(1, start);
    for (std::size_t q = 0; q < queue.size(); ++q) {
      const int k = queue[q];
      for (const auto& [l, r] : on_body[k]) {
        const int o = other(k, r);
        if (o >= 0 && depth[o] < 0) {
          depth[o] = depth[k] + 1;
          queue.push_back(o);
        }
      }
    }
  }
  std::vector<int> by_depth(nb);
  for (int k = 0; k < nb; ++k) by_depth[k] = k;
  std::stable_sort(by_depth.begin(), by_depth.end(),
                   [&](int a, int b) { return depth[a] > depth[b]; });
  std::vector<char> done(m, 0);
  std::vector<int> order;
  order.reserve(m);
  for (int k : by_depth) {
    for (int pass = 0; pass < 2; ++pass) {  // rows to the world, then to the parent
      for (const auto& [l, r] : on_body[k]) {
        if (done[l] || last[l] || (pass == 0) != (other(k, r) < 0)) continue;
        done[l] = 1;
        order.push_back(l);
      }
    }
  }
  return order;
}

/// Puts f.rows (the active rows of an articulation of `members` bodies) in elimination order
/// for a sparse factor: AMD over the rows' graph (rows meet on the bodies they share), or, on a
/// loop-free articulation (a chain or a tree: its distinct body pairs number members - 1), the
/// leaves-first order, with the rows on the contact columns' bodies last. Every
/// elimination-tree path from a contact body's row then stays among those last rows, so a
/// contact's column in LdltBlock costs the rows near the contacts, not the articulation: a
/// chain over a wheel has two paths that end where it touches. Returns true for the AMD order.
bool order_rows_impl(std::vector<int>& rows, const std::vector<std::uint32_t>& bodies,
                     const std::unordered_map<std::uint32_t, int>& slot,
                     const detail::RowSet& rs,
                     const std::vector<std::vector<std::pair<int, int>>>& on_body,
                     std::size_t members, const std::vector<char>& contact_row) {
  const int m = static_cast<int>(rows.size());
  // Loop-free: distinct pairs of the articulation's bodies joined by its rows.
  std::vector<std::pair<int, int>> pairs;
  for (int r : rows) {
    const int a = rs.row_a[r], b = rs.row_b[r];
    if (a >= 0 && b >= 0) pairs.emplace_back(std::min(a, b), std::max(a, b));
  }
  std::sort(pairs.begin(), pairs.end());
  pairs.erase(std::unique(pairs.begin(), pairs.end()), pairs.end());
  std::vector<int> ordered;
  ordered.reserve(m);
  if (pairs.size() + 1 == members) {
    // (Every row on a contact body: nothing to keep last.)
    const bool split = std::find(contact_row.begin(), contact_row.end(), 0) != contact_row.end();
    const std::vector<char> last = split ? contact_row : std::vector<char>(m, 0);
    for (int l : leaves_first(bodies, slot, rs, on_body, last, m)) ordered.push_back(rows[l]);
    for (int l = 0; l < m; ++l) {
      if (last[l]) ordered.push_back(rows[l]);
    }
    if (static_cast<int>(ordered.size()) == m) {  // (every row lies on one of the bodies)
      rows.swap(ordered);
      return false;
    }
    ordered.clear();
  }
  std::vector<Eigen::Triplet<double>> trip;
  for (std::size_t bi = 0; bi < bodies.size(); ++bi) {
    for (const auto& [li, unused_i] : on_body[bi]) {
      for (const auto& [lj, unused_j] : on_body[bi]) trip.emplace_back(li, lj, 1.0);
    }
  }
  Eigen::SparseMatrix<double> A(m, m);
  A.setFromTriplets(trip.begin(), trip.end());
  Eigen::PermutationMatrix<Eigen::Dynamic, Eigen::Dynamic, int> perm;
  Eigen::AMDOrdering<int>()(A, perm);  // perm.indices()[new] = old (Eigen's P^{-1})
  for (int e = 0; e < m; ++e) ordered.push_back(rows[perm.indices()[e]]);
  rows.swap(ordered);
  return true;
}

}  // namespace

void World::Impl::order_rows(std::uint32_t art, ArticulationFactor& f,
                             const std::vector<int>& local, std::size_t members,
                             const std::vector<detail::ContactSchur::BlockColumn>* columns) {
  const int m = static_cast<int>(f.rows.size());
  // The slots of the contact columns' bodies (the leaves-first order keeps their rows last).
  std::vector<int> contact_slots;
  if (columns != nullptr) {
    for (const auto& c : *columns) {
      for (std::int32_t body : c.body) {
        if (body < 0) continue;
        const auto it = f.slot.find(static_cast<std::uint32_t>(body));
        if (it != f.slot.end()) contact_slots.push_back(it->second);
      }
    }
    std::sort(contact_slots.begin(), contact_slots.end());
    contact_slots.erase(std::unique(contact_slots.begin(), contact_slots.end()),
                        contact_slots.end());
  }
  std::vector<int> key = rows_key(f.rows, f.bodies, row_set);
  key.push_back(static_cast<int>(members));
  const auto it = row_orders.find(art);
  if (it != row_orders.end() && it->second.key == key &&
      (it->second.amd || it->second.contact_slots == contact_slots)) {
    f.rows = it->second.rows;
    return;
  }
  // The local rows on each body, and those on a contact column's body.
  std::vector<std::vector<std::pair<int, int>>> on_body(f.bodies.size());
  for (std::size_t k = 0; k < f.bodies.size(); ++k) {
    for (int r : row_set.rows_of[f.bodies[k]]) {
      if (local[r] >= 0) on_body[k].emplace_back(local[r], r);
    }
  }
  std::vector<char> contact_row(m, 0);
  for (int k : contact_slots) {
    for (const auto& [l, r] : on_body[k]) contact_row[l] = 1;
  }
  const bool amd = order_rows_impl(f.rows, f.bodies, f.slot, row_set, on_body, members,
                                   contact_row);
  row_orders[art] = RowOrder{std::move(key), std::move(contact_slots), f.rows, amd};
}

World::Impl::ArticulationFactor& World::Impl::articulation_factor(
    std::uint32_t art, const std::vector<detail::ContactSchur::BlockColumn>* columns) {
  if (response_cache_stamp != response_stamp || response_cache_limits != response_limits) {
    response_cache.clear();
    response_cache_stamp = response_stamp;
    response_cache_limits = response_limits;
  }
  auto it = response_cache.find(art);
  if (it != response_cache.end()) return *it->second;
  auto f = std::make_shared<ArticulationFactor>();
  const auto& rs = row_set;
  const auto& index = dual_scratch.index;
  // The active rows, or only the equality ones when the others join the contacts' problem.
  auto in_response = [&](int r) {
    return index[r] >= 0 && (response_limits || rs.rows[r].kind == detail::RowKind::Equality);
  };
  // Its bodies (members of the articulation) and their active rows; local: row -> its local
  // number (-1 outside, reset on return).
  auto& local = row_local;
  local.resize(rs.rows.size(), -1);
  struct Reset {  // local back to -1 on the rows set, however the function leaves
    std::vector<int>& local;
    const std::vector<int>& rows;
    ~Reset() {
      for (int r : rows) local[r] = -1;
    }
  } reset{local, f->rows};
  for (std::uint32_t i = art_begin[art]; i < art_begin[art + 1]; ++i) {
    const std::uint32_t b = art_members[i];
    bool any = false;
    for (int r : rs.rows_of[b]) {
      if (!in_response(r)) continue;
      any = true;
      if (local[r] < 0) {
        local[r] = static_cast<int>(f->rows.size());
        f->rows.push_back(r);
      }
    }
    if (any) {
      f->slot.emplace(b, static_cast<int>(f->bodies.size()));
      f->bodies.push_back(b);
    }
  }
  const int m = static_cast<int>(f->rows.size());
  f->use_dense = m <= kDenseRows;
  // The articulation's last sparse factor, when it has the same pattern: its symbolic
  // analysis and elimination tree serve again (unless a copy of the world shares it).
  std::shared_ptr<ArticulationFactor> same;
  if (!f->use_dense) {
    order_rows(art, *f, local, art_begin[art + 1] - art_begin[art], columns);
    for (int l = 0; l < m; ++l) local[f->rows[l]] = l;
    f->pattern = rows_key(f->rows, f->bodies, rs);
    const auto last = sparse_factors.find(art);
    if (last != sparse_factors.end() && last->second.use_count() == 1 && last->second->ok &&
        last->second->pattern == f->pattern) {
      same = last->second;
      same->w.clear();
    }
  }
  ArticulationFactor& a = same ? *same : *f;  // (same rows, bodies and slots as f)
  // H^{-1} g per row and body: the dual solve's, when it computed them on these operators.
  const bool reuse_w = rs.have_w && rows_stamp == operator_stamp;
  a.w_begin.resize(a.bodies.size() + 1);
  a.w.reserve(2 * static_cast<std::size_t>(m));  // a row lies on at most two bodies
  for (std::size_t k = 0; k < a.bodies.size(); ++k) {
    const std::uint32_t b = a.bodies[k];
    a.w_begin[k] = static_cast<int>(a.w.size());
    for (int r : rs.rows_of[b]) {
      if (!in_response(r)) continue;
      a.w.emplace_back(local[r], reuse_w ? rs.w_of(r, b) : solve_body(b, rs.g_of(r, b)));
    }
  }
  a.w_begin.back() = static_cast<int>(a.w.size());
  // S_rs = sum over bodies of g_r . H^{-1} g_s, plus the compliances: every entry for the
  // dense factor, the lower triangle (r >= s), all that it reads, for the sparse LDLT.
  Eigen::MatrixXd S;
  std::vector<Eigen::Triplet<double>> sparse_trip;
  if (a.use_dense) S = Eigen::MatrixXd::Zero(m, m);
  for (std::size_t k = 0; k < a.bodies.size(); ++k) {
    const std::uint32_t b = a.bodies[k];
    const auto wb = a.w_of(k);
    for (const auto& [lr, wr] : wb) {
      const Vec12& gr = rs.g_of(a.rows[lr], b);
      for (const auto& [ls, ws] : wb) {
        if (!a.use_dense && ls > lr) continue;
        const double v = gr.dot(ws);
        if (a.use_dense) {
          S(lr, ls) += v;
        } else {
          sparse_trip.emplace_back(lr, ls, v);
        }
      }
    }
  }
  for (int l = 0; l < m; ++l) {
    const double c = rs.rows[a.rows[l]].compliance;
    if (a.use_dense) {
      S(l, l) += c;
    } else {
      sparse_trip.emplace_back(l, l, c);
    }
  }
  if (a.use_dense) {
    S = 0.5 * (S + S.transpose());
    a.dense.compute(S);
    a.ok = a.dense.info() == Eigen::Success;
  } else {
    Eigen::SparseMatrix<double> A(m, m);
    A.setFromTriplets(sparse_trip.begin(), sparse_trip.end());
    if (same) {
      a.sparse.factorize(A);
    } else {
      a.sparse.compute(A);
    }
    a.ok = a.sparse.info() == Eigen::Success;
    if (a.ok && !same) a.block.prepare(a.sparse);
    if (!same) sparse_factors[art] = f;
  }
  response_cache.emplace(art, same ? same : f);
  return a;
}

namespace {

[[noreturn]] void singular_response(std::uint64_t step) {
  throw SimulationError("step " + std::to_string(step) +
                        ": the joint system could not be solved for a contact's response "
                        "(singular joint rows)");
}

}  // namespace

void World::Impl::joint_block(std::uint32_t art,
                              const std::vector<detail::ContactSchur::BlockColumn>& columns,
                              Eigen::MatrixXd& C) {
  const int n = static_cast<int>(columns.size());
  C.setZero(n, n);
  if (dual_used == nullptr || dual_active == 0) return;
  ArticulationFactor& f = articulation_factor(art, &columns);
  const int m = static_cast<int>(f.rows.size());
  if (m == 0) return;
  if (!f.ok) singular_response(steps + 1);
  // P[l, j] = g_l . H^{-1} g_j on the column's sides (as joint_response's right-hand side).
  std::vector<Eigen::Triplet<double>> trip;
  for (int j = 0; j < n; ++j) {
    for (int side = 0; side < 2; ++side) {
      if (columns[j].body[side] < 0) continue;
      const auto it = f.slot.find(static_cast<std::uint32_t>(columns[j].body[side]));
      if (it == f.slot.end()) continue;  // a body without active rows: no share
      const std::uint32_t b = f.bodies[it->second];
      for (const auto& [l, w] : f.w_of(it->second)) {
        trip.emplace_back(l, j, row_set.g_of(f.rows[l], b).dot(columns[j].w[side]));
      }
    }
  }
  Eigen::SparseMatrix<double> P(m, n);
  P.setFromTriplets(trip.begin(), trip.end());
  if (f.use_dense) {
    const Eigen::MatrixXd Pd(P);
    C = Pd.transpose() * f.dense.solve(Pd);
  } else {
    f.block.product(f.sparse, P, C);
  }
}

void World::Impl::joint_response(std::vector<Vec12>& z, std::vector<std::uint32_t>& touched) {
  if (dual_used == nullptr || dual_active == 0) return;
  // The articulations z touches (a response stays in them).
  touched_arts.clear();
  for (std::uint32_t i : touched) touched_arts.push_back(articulation[i]);
  std::sort(touched_arts.begin(), touched_arts.end());
  touched_arts.erase(std::unique(touched_arts.begin(), touched_arts.end()), touched_arts.end());
  // Multipliers of this response at the active rows' positions (pair_joint_sets_change).
  for (int k : response_written) response_sol[k] = 0;
  response_written.clear();
  if (response_sol.size() != dual_active) response_sol = Eigen::VectorXd::Zero(dual_active);
  const auto& rs = row_set;
  const auto& index = dual_scratch.index;
  for (std::uint32_t art : touched_arts) {
    ArticulationFactor& f = articulation_factor(art);
    const int m = static_cast<int>(f.rows.size());
    if (m == 0) continue;
    if (!f.ok) singular_response(steps + 1);
    Eigen::VectorXd rhs = Eigen::VectorXd::Zero(m);  // G z
    for (std::size_t k = 0; k < f.bodies.size(); ++k) {
      const std::uint32_t b = f.bodies[k];
      for (const auto& [l, w] : f.w_of(k)) rhs[l] += rs.g_of(f.rows[l], b).dot(z[b]);
    }
    const Eigen::VectorXd lambda = f.use_dense ? Eigen::VectorXd(f.dense.solve(rhs))
                                               : Eigen::VectorXd(f.sparse.solve(rhs));
    for (std::size_t k = 0; k < f.bodies.size(); ++k) {
      Vec12& zb = z[f.bodies[k]];
      for (const auto& [l, w] : f.w_of(k)) zb.noalias() -= w * lambda[l];
      touched.push_back(f.bodies[k]);
    }
    for (int l = 0; l < m; ++l) {
      const int k = index[f.rows[l]];
      response_sol[k] = lambda[l];
      response_written.push_back(k);
    }
  }
}

}  // namespace mabd
