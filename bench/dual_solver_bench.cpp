// Dual-system solvers on the joint graph of an n x n hanging net (the "net" generator: sphere
// nodes, box edge links, ball joints at the node centres, the top row pinned): the dual
// matrix S = G H^{-1} G^T of the rest configuration with the co-rotated body matrices Hb at
// h = 0.01 s, 3 rows per joint, n = 10 ... 100 (100: 29800 bodies, 119100 rows).
//   Cholmod:        SparseDualSolver on CHOLMOD, pattern reused (triplet scatter +
//                   factorisation + solve)
//   CholmodAnalyse: the same with a new pattern every call (ordering + symbolic analysis too)
//   SparseEigen:    SparseDualSolver on Eigen's simplicial LDL^T, pattern reused
//   EigenSetFromTriplets: the previous solver (setFromTriplets + SimplicialLDLT), analysis
//                   reused
//   PcgCold:        IterativeDualSolver with the block-Jacobi preconditioner from x = 0
//   PcgWarm:        the same from the exact solution perturbed by ~1% (a previous step's
//                   multipliers)
//   BlockJacobi, LineJacobi, LineCoarse: IterativeDualSolver with the Blocks / Lines /
//                   LinesCoarse preconditioner (default coarse settings), arguments n,
//                   tolerance exponent (10: 1e-10, 6: 1e-6), warm start (0/1); counters:
//                   iterations, lines (paths of joints, paper Case IV), coarse (unknowns K)
//   PcgSetup:       a solver meeting the pattern for the first time (structure, lines, one
//                   factorisation, no iterations), Blocks (lines:0), Lines (lines:1) or
//                   LinesCoarse (lines:2, with the local eigenproblems of the coarse basis)
// PCG runs to |b - A x| <= 1e-10 |b| unless the arguments say otherwise. The right-hand side
// is b = G y + c: y the gravity displacement h^2 g of every body plus 10% random per-body
// noise, c random constraint errors of 1e-4 m.
#include <benchmark/benchmark.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include <Eigen/SparseCholesky>

#include "body/body_hessian.h"
#include "solvers/iterative_dual.h"
#include "solvers/sparse_dual.h"

namespace {

using mabd::Vec3;
using mabd::detail::Mat12;
using Row12 = Eigen::Matrix<double, 3, 12>;

struct DualSystem {
  int n = 0;  ///< rows
  std::vector<Eigen::Triplet<double>> triplets;
  std::vector<int> block_begin;
  Eigen::VectorXd b;
  Eigen::VectorXd exact;
};

/// Jacobian of the world point x(p) = A p + t of an affine body, q = [a1; a2; a3; t].
Row12 point_jacobian(const Vec3& p) {
  Row12 J = Row12::Zero();
  for (int k = 0; k < 3; ++k) J.block<3, 3>(0, 3 * k) = p[k] * Eigen::Matrix3d::Identity();
  J.block<3, 3>(0, 9).setIdentity();
  return J;
}

/// H^{-1} of a body of second moments sigma, mass m, volume V (E = 1e9 Pa, nu = 0.3).
Mat12 body_inverse(const Vec3& sigma, double m, double V) {
  const double E = 1e9, nu = 0.3, h = 0.01;
  const double mu = E / (2 * (1 + nu)), lambda = E * nu / ((1 + nu) * (1 - 2 * nu));
  return mabd::detail::BodyHessian::dense(sigma, m, V, mu, lambda, h).inverse();
}

/// Dual system of an n x n net in the xz plane, assembled like World::dual_solve (body by
/// body, all row pairs of the body, then the compliance diagonal).
DualSystem build_net(int n) {
  const double rho = 1000, r = 0.01;
  const double a = 0.1, w = 0.01;  // link length and width
  // Nodes: spheres. Links: boxes along x (horizontal) or z (vertical) in their body frames.
  const double pi = 3.14159265358979323846;
  const double vn = 4.0 / 3.0 * pi * r * r * r, mn = rho * vn;
  const double vl = a * w * w, ml = rho * vl;
  const Mat12 hn = body_inverse(Vec3::Constant(mn * r * r / 5), mn, vn);
  const Mat12 hh = body_inverse(Vec3(ml * a * a / 12, ml * w * w / 12, ml * w * w / 12), ml, vl);
  const Mat12 hv = body_inverse(Vec3(ml * w * w / 12, ml * w * w / 12, ml * a * a / 12), ml, vl);

  struct Side {
    int body;
    Row12 g;
  };
  struct Joint {
    Side a, b;  // b.body < 0: the world
  };
  std::vector<Joint> joints;
  std::vector<const Mat12*> hinv;
  auto node = [&](int i, int j) { return i * n + j; };
  for (int k = 0; k < n * n; ++k) hinv.push_back(&hn);
  const Row12 centre = point_jacobian(Vec3::Zero());
  auto add_edge = [&](int n0, int n1, const Mat12* h, const Vec3& half) {
    const int link = static_cast<int>(hinv.size());
    hinv.push_back(h);
    joints.push_back({{n0, centre}, {link, -point_jacobian(-half)}});
    joints.push_back({{n1, centre}, {link, -point_jacobian(half)}});
  };
  for (int i = 0; i < n; ++i)
    for (int j = 0; j + 1 < n; ++j) add_edge(node(i, j), node(i, j + 1), &hh, Vec3(a / 2, 0, 0));
  for (int i = 0; i + 1 < n; ++i)
    for (int j = 0; j < n; ++j) add_edge(node(i, j), node(i + 1, j), &hv, Vec3(0, 0, -a / 2));
  for (int j = 0; j < n; ++j) joints.push_back({{node(0, j), centre}, {-1, Row12::Zero()}});

  DualSystem sys;
  const int nj = static_cast<int>(joints.size());
  sys.n = 3 * nj;
  for (int k = 0; k <= nj; ++k) sys.block_begin.push_back(3 * k);
  // Per body: incident (joint, side) pairs and W = H^{-1} G^T.
  std::vector<std::vector<std::pair<int, const Row12*>>> incident(hinv.size());
  for (int k = 0; k < nj; ++k) {
    incident[joints[k].a.body].push_back({k, &joints[k].a.g});
    if (joints[k].b.body >= 0) incident[joints[k].b.body].push_back({k, &joints[k].b.g});
  }
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<Eigen::Matrix<double, 12, 1>> y(hinv.size());
  for (std::size_t i = 0; i < hinv.size(); ++i) {
    Eigen::Matrix<double, 12, 1> f = Eigen::Matrix<double, 12, 1>::Zero();
    f.tail<3>() = 1e-4 * Vec3(0.1 * u(rng), 0.1 * u(rng), -9.81 * (1 + 0.1 * u(rng)));
    y[i] = f;  // displacement h^2 g (+ noise) of the translation
  }
  sys.b = Eigen::VectorXd::Zero(sys.n);
  for (std::size_t i = 0; i < hinv.size(); ++i) {
    for (const auto& [k1, g1] : incident[i]) {
      sys.b.segment<3>(3 * k1) += *g1 * y[i];
      const Eigen::Matrix<double, 12, 3> w1 = *hinv[i] * g1->transpose();
      for (const auto& [k2, g2] : incident[i]) {
        const Eigen::Matrix3d block = *g2 * w1;  // rows of k2, columns of k1
        for (int r = 0; r < 3; ++r)
          for (int c = 0; c < 3; ++c) sys.triplets.emplace_back(3 * k2 + r, 3 * k1 + c, block(r, c));
      }
    }
  }
  for (int r = 0; r < sys.n; ++r) {
    sys.triplets.emplace_back(r, r, 0.0);
    sys.b[r] += 1e-4 * u(rng);
  }
  mabd::detail::SparseDualSolver direct;
  direct.cholmod_min_rows = 0;
  direct.solve(sys.n, sys.triplets, sys.b, 1, sys.exact);
  return sys;
}

const DualSystem& net(int n) {
  static std::vector<std::pair<int, DualSystem>> cache;
  for (const auto& [k, s] : cache)
    if (k == n) return s;
  cache.emplace_back(n, build_net(n));
  return cache.back().second;
}

void run_sparse(benchmark::State& state, bool cholmod) {
  const DualSystem& s = net(static_cast<int>(state.range(0)));
  mabd::detail::SparseDualSolver solver;
  solver.cholmod_min_rows = cholmod ? 0 : std::numeric_limits<int>::max();
  Eigen::VectorXd x;
  solver.solve(s.n, s.triplets, s.b, 1, x);  // analysis outside the timing
  for (auto _ : state) {
    solver.solve(s.n, s.triplets, s.b, 1, x);
    benchmark::DoNotOptimize(x.data());
  }
  state.counters["rows"] = s.n;
  state.counters["rel_err"] = (x - s.exact).norm() / s.exact.norm();
}

void BM_Cholmod(benchmark::State& state) { run_sparse(state, true); }
void BM_SparseEigen(benchmark::State& state) { run_sparse(state, false); }

void BM_CholmodAnalyse(benchmark::State& state) {
  const DualSystem& s = net(static_cast<int>(state.range(0)));
  Eigen::VectorXd x;
  std::uint64_t pattern = 0;
  for (auto _ : state) {
    mabd::detail::SparseDualSolver fresh;
    fresh.cholmod_min_rows = 0;
    fresh.solve(s.n, s.triplets, s.b, ++pattern, x);
    benchmark::DoNotOptimize(x.data());
  }
  state.counters["rows"] = s.n;
}

void BM_EigenSetFromTriplets(benchmark::State& state) {
  const DualSystem& s = net(static_cast<int>(state.range(0)));
  Eigen::SparseMatrix<double> S(s.n, s.n);
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> ldlt;
  S.setFromTriplets(s.triplets.begin(), s.triplets.end());
  ldlt.analyzePattern(S);
  Eigen::VectorXd x;
  for (auto _ : state) {
    S.setFromTriplets(s.triplets.begin(), s.triplets.end());
    ldlt.factorize(S);
    x = ldlt.solve(s.b);
    benchmark::DoNotOptimize(x.data());
  }
  state.counters["rows"] = s.n;
}

/// Solves the net of state.range(0) with `preconditioner` to |b - A x| <= tolerance |b|, cold
/// (x = 0) or warm (the exact solution perturbed by ~1%).
void run_pcg(benchmark::State& state, bool warm, mabd::detail::DualPreconditioner preconditioner,
             double tolerance) {
  const DualSystem& s = net(static_cast<int>(state.range(0)));
  mabd::detail::IterativeDualSolver solver;
  solver.settings.tolerance = tolerance;
  solver.settings.max_iterations = 100000;
  solver.settings.preconditioner = preconditioner;
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-1, 1);
  Eigen::VectorXd start = s.exact;
  for (int i = 0; i < s.n; ++i) start[i] *= 1 + 0.01 * u(rng);
  if (!warm) start.setZero();
  Eigen::VectorXd x = start;
  solver.solve(s.n, s.triplets, s.block_begin, s.b, 1, x);  // structure outside the timing
  mabd::detail::IterativeDualResult r;
  for (auto _ : state) {
    x = start;
    r = solver.solve(s.n, s.triplets, s.block_begin, s.b, 1, x);
    benchmark::DoNotOptimize(x.data());
  }
  state.counters["rows"] = s.n;
  state.counters["iterations"] = r.iterations;
  state.counters["residual"] = r.residual;
  state.counters["rel_err"] = (x - s.exact).norm() / s.exact.norm();
  if (preconditioner != mabd::detail::DualPreconditioner::Blocks)
    state.counters["lines"] = solver.lines().lines();
  if (preconditioner == mabd::detail::DualPreconditioner::LinesCoarse)
    state.counters["coarse"] = solver.coarse().size();
}

using mabd::detail::DualPreconditioner;
void BM_PcgCold(benchmark::State& state) {
  run_pcg(state, false, DualPreconditioner::Blocks, 1e-10);
}
void BM_PcgWarm(benchmark::State& state) {
  run_pcg(state, true, DualPreconditioner::Blocks, 1e-10);
}
/// Arguments: n, tolerance exponent (10: 1e-10), warm start (0/1).
void BM_BlockJacobi(benchmark::State& state) {
  run_pcg(state, state.range(2) != 0, DualPreconditioner::Blocks,
          std::pow(10.0, -static_cast<double>(state.range(1))));
}
void BM_LineJacobi(benchmark::State& state) {
  run_pcg(state, state.range(2) != 0, DualPreconditioner::Lines,
          std::pow(10.0, -static_cast<double>(state.range(1))));
}
void BM_LineCoarse(benchmark::State& state) {
  run_pcg(state, state.range(2) != 0, DualPreconditioner::LinesCoarse,
          std::pow(10.0, -static_cast<double>(state.range(1))));
}
/// A solver that meets the pattern for the first time: structure (and lines) plus one
/// factorisation, no iterations. Arguments: n, preconditioner (0: Blocks, 1: Lines,
/// 2: LinesCoarse).
void BM_PcgSetup(benchmark::State& state) {
  const DualSystem& s = net(static_cast<int>(state.range(0)));
  Eigen::VectorXd x;
  for (auto _ : state) {
    mabd::detail::IterativeDualSolver fresh;
    fresh.settings.max_iterations = 0;
    const DualPreconditioner kinds[] = {DualPreconditioner::Blocks, DualPreconditioner::Lines,
                                        DualPreconditioner::LinesCoarse};
    fresh.settings.preconditioner = kinds[state.range(1)];
    x.resize(0);
    fresh.solve(s.n, s.triplets, s.block_begin, s.b, 1, x);
    benchmark::DoNotOptimize(x.data());
  }
  state.counters["rows"] = s.n;
}

/// n = 10 ... 100, tolerances 1e-10 and 1e-6, cold and warm.
void pcg_cases(benchmark::internal::Benchmark* b) {
  for (int warm : {0, 1})
    for (int tol : {10, 6})
      for (int n : {10, 20, 50, 100}) b->Args({n, tol, warm});
  b->ArgNames({"n", "tol_exp", "warm"})->Unit(benchmark::kMillisecond);
}

#define NET_SIZES Arg(10)->Arg(20)->Arg(50)->Arg(100)->Unit(benchmark::kMillisecond)
BENCHMARK(BM_Cholmod)->NET_SIZES;
BENCHMARK(BM_CholmodAnalyse)->NET_SIZES;
BENCHMARK(BM_SparseEigen)->NET_SIZES;
BENCHMARK(BM_EigenSetFromTriplets)->NET_SIZES;
BENCHMARK(BM_PcgCold)->NET_SIZES;
BENCHMARK(BM_PcgWarm)->NET_SIZES;
BENCHMARK(BM_BlockJacobi)->Apply(pcg_cases);
BENCHMARK(BM_LineJacobi)->Apply(pcg_cases);
BENCHMARK(BM_LineCoarse)->Apply(pcg_cases);
BENCHMARK(BM_PcgSetup)
    ->ArgsProduct({{10, 20, 50, 100}, {0, 1, 2}})
    ->ArgNames({"n", "lines"})
    ->Unit(benchmark::kMillisecond);


}  // namespace

BENCHMARK_MAIN();
