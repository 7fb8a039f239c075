// Contact manifold reduction (see manifold.h).
#include "collision/manifold.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace mabd::detail {
namespace {

/// Twice the signed area of (a, b, c) seen along n (m^2).
double signed_area(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& n) {
  return (b - a).cross(c - a).dot(n);
}

/// How much adding p spreads the kept points `kept[0..count)` across n (larger is better).
double spread_score(const Contact* kept, int count, const Vec3& p, const Vec3& n) {
  const Vec3& p0 = kept[0].p_body;
  if (count == 1) {
    const Vec3 d = p - p0;
    return (d - d.dot(n) * n).norm();
  }
  if (count == 2) return std::abs(signed_area(p0, kept[1].p_body, p, n));
  double gain = 0;  // area added outside the triangle
  for (int e = 0; e < 3; ++e) {
    const Vec3& a = kept[e].p_body;
    const Vec3& b = kept[(e + 1) % 3].p_body;
    const double s_opposite = signed_area(a, b, kept[(e + 2) % 3].p_body, n);
    const double s = signed_area(a, b, p, n);
    if (s * s_opposite < 0) gain = std::max(gain, std::abs(s));
  }
  return gain;
}

}  // namespace

int reduce_manifold(Contact* c, int n, Contact* out, double tie_band, double merge_distance) {
  constexpr double kUsed = std::numeric_limits<double>::infinity();
  int count = 0;
  while (count < kManifoldPoints) {
    double min_gap = kUsed;
    for (int i = 0; i < n; ++i) min_gap = std::min(min_gap, c[i].gap);
    if (min_gap == kUsed) break;  // none left
    int best = -1;
    double best_score = -1;
    for (int i = 0; i < n; ++i) {
      if (c[i].gap == kUsed || c[i].gap > min_gap + tie_band) continue;
      bool duplicate = false;
      for (int k = 0; k < count && !duplicate; ++k) {
        duplicate =
            (c[i].p_body - out[k].p_body).squaredNorm() <= merge_distance * merge_distance &&
            c[i].normal.dot(out[k].normal) > 1 - 1e-6;
      }
      if (duplicate) {
        c[i].gap = kUsed;
        continue;
      }
      const double score = count == 0 ? 0 : spread_score(out, count, c[i].p_body, out[0].normal);
      if (score > best_score) {
        best_score = score;
        best = i;
      }
    }
    if (best < 0) continue;  // only duplicates in the band, now dropped
    out[count++] = c[best];
    c[best].gap = kUsed;
  }
  return count;
}

int reduce_mesh_manifolds(Contact* c, int n, Contact* out, double tie_band) {
  // Scratch reused from call to call (the narrow phase does not allocate once warm).
  thread_local std::vector<int> order, group;
  thread_local std::vector<Contact> members;
  order.resize(n);
  group.resize(n);
  for (int i = 0; i < n; ++i) order[i] = i;
  // Deepest first (ties keep the candidates' order), so the deepest candidates found groups.
  std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return c[x].gap < c[y].gap; });
  Vec3 normal[kMaxMeshManifolds];
  int groups = 0;
  for (int i : order) {
    int best = -1;
    double best_cos = -2;
    for (int g = 0; g < groups; ++g) {
      const double cos = c[i].normal.dot(normal[g]);
      if (cos > best_cos) {
        best_cos = cos;
        best = g;
      }
    }
    if ((best < 0 || best_cos < kManifoldNormalCos) && groups < kMaxMeshManifolds) {
      best = groups;
      normal[groups++] = c[i].normal;
    }
    group[i] = best;
  }
  if (groups <= 1) return reduce_manifold(c, n, out, tie_band);
  // Each group's candidates in their own order, reduced on their own.
  int count = 0;
  for (int g = 0; g < groups; ++g) {
    members.clear();
    for (int i = 0; i < n; ++i) {
      if (group[i] == g) members.push_back(c[i]);
    }
    count += reduce_manifold(members.data(), int(members.size()), out + count, tie_band);
  }
  for (int i = 0; i < n; ++i) c[i].gap = std::numeric_limits<double>::infinity();
  return count;
}

}  // namespace mabd::detail
