// Joint-graph components and their classification (see topology.h).
#include "solvers/topology.h"

#include <numeric>

namespace mabd::detail {

const char* topology_name(Topology t) {
  switch (t) {
    case Topology::Single: return "single body";
    case Topology::Chain: return "chain";
    case Topology::Tree: return "tree";
    case Topology::TreeWithLoops: return "tree with loops";
    case Topology::Graph: return "graph";
  }
  return "?";
}

namespace {

struct UnionFind {
  std::vector<std::uint32_t> parent;
  explicit UnionFind(std::size_t n) : parent(n) { std::iota(parent.begin(), parent.end(), 0u); }
  std::uint32_t find(std::uint32_t x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  }
  void join(std::uint32_t x, std::uint32_t y) { parent[find(x)] = find(y); }
};

}  // namespace

std::vector<Component> analyse_topology(std::size_t n, const std::vector<char>& movable,
                                        const std::vector<Edge>& edges, std::size_t max_loops) {
  auto moving = [&](int b) { return b >= 0 && movable[b]; };
  UnionFind uf(n);
  for (const Edge& e : edges) {
    if (moving(e.a) && moving(e.b)) uf.join(e.a, e.b);
  }
  std::vector<int> comp_of(n, -1);
  std::vector<Component> out;
  for (std::uint32_t i = 0; i < n; ++i) {
    if (!movable[i]) continue;
    const std::uint32_t r = uf.find(i);
    if (comp_of[r] < 0) {
      comp_of[r] = static_cast<int>(out.size());
      out.emplace_back();
    }
    out[comp_of[r]].bodies.push_back(i);
  }
  // Per component: joints, joints to the ground, and the degree of every body.
  std::vector<std::size_t> degree(n, 0), grounded(out.size(), 0), internal(out.size(), 0);
  for (std::uint32_t j = 0; j < edges.size(); ++j) {
    const Edge& e = edges[j];
    const int body = moving(e.a) ? e.a : e.b;
    if (!moving(body)) continue;  // between two immovable bodies: no component
    const int c = comp_of[uf.find(body)];
    out[c].joints.push_back(j);
    for (int x : {e.a, e.b}) {
      if (moving(x)) ++degree[x];
    }
    if (!moving(e.a) || !moving(e.b)) {
      ++grounded[c];
    } else {
      ++internal[c];
    }
  }
  for (std::size_t c = 0; c < out.size(); ++c) {
    Component& comp = out[c];
    // Graph nodes: the bodies plus one ground node if any joint reaches it.
    const std::size_t nodes = comp.bodies.size() + (grounded[c] > 0 ? 1 : 0);
    comp.loops = comp.joints.size() + 1 - nodes;
    std::size_t max_degree = 0;
    for (std::uint32_t b : comp.bodies) max_degree = std::max(max_degree, degree[b]);
    if (comp.joints.empty()) {
      comp.kind = Topology::Single;
    } else if (internal[c] + 1 == comp.bodies.size() && max_degree <= 2) {
      // The joints form a path (consecutive joints share a body): the dual is
      // block-tridiagonal even when both ends are pinned (a loop through the ground).
      comp.kind = Topology::Chain;
    } else if (comp.loops == 0) {
      comp.kind = Topology::Tree;
    } else if (comp.loops <= max_loops) {
      comp.kind = Topology::TreeWithLoops;
    } else {
      comp.kind = Topology::Graph;
    }
  }
  return out;
}

}  // namespace mabd::detail
