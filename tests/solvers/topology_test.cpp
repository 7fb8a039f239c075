// Joint-graph components and their classification.
#include <gtest/gtest.h>

#include "solvers/topology.h"

namespace mabd::detail {
namespace {

std::vector<Component> analyse(std::size_t n, const std::vector<Edge>& edges,
                               std::vector<char> movable = {}) {
  if (movable.empty()) movable.assign(n, 1);
  return analyse_topology(n, movable, edges);
}

TEST(Topology, PinnedChainIsAChain) {
  std::vector<Edge> e = {{-1, 0}};
  for (int i = 1; i < 10; ++i) e.push_back({i - 1, i});
  const auto c = analyse(10, e);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].kind, Topology::Chain);
  EXPECT_EQ(c[0].bodies.size(), 10u);
  EXPECT_EQ(c[0].joints.size(), 10u);
  EXPECT_EQ(c[0].loops, 0u);
}

TEST(Topology, ChainPinnedAtBothEndsIsAChainWithALoopThroughTheGround) {
  std::vector<Edge> e = {{-1, 0}, {0, 1}, {1, 2}, {2, -1}};
  const auto c = analyse(3, e);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].kind, Topology::Chain);  // its joints still form a path
  EXPECT_EQ(c[0].loops, 1u);
}

TEST(Topology, RingAndMiddlePinAreNotChains) {
  const auto ring = analyse(3, {{0, 1}, {1, 2}, {2, 0}});
  ASSERT_EQ(ring.size(), 1u);
  EXPECT_EQ(ring[0].kind, Topology::TreeWithLoops);
  const auto pinned_middle = analyse(3, {{0, 1}, {1, 2}, {1, -1}});
  ASSERT_EQ(pinned_middle.size(), 1u);
  EXPECT_EQ(pinned_middle[0].kind, Topology::Tree);
}

TEST(Topology, BranchingIsATreeAndComponentsSeparate) {
  // Body 0 pinned with children 1, 2, 3; bodies 4-5 a separate free pair; 6 alone.
  const std::vector<Edge> e = {{-1, 0}, {0, 1}, {0, 2}, {0, 3}, {4, 5}};
  const auto c = analyse(7, e);
  ASSERT_EQ(c.size(), 3u);
  EXPECT_EQ(c[0].kind, Topology::Tree);
  EXPECT_EQ(c[1].kind, Topology::Chain);
  EXPECT_EQ(c[2].kind, Topology::Single);
}

TEST(Topology, NetIsAGraph) {
  // n x n grid of bodies joined to right and lower neighbours: (n-1)^2 loops.
  const int n = 6;
  std::vector<Edge> e;
  for (int r = 0; r < n; ++r)
    for (int k = 0; k < n; ++k) {
      if (k + 1 < n) e.push_back({r * n + k, r * n + k + 1});
      if (r + 1 < n) e.push_back({r * n + k, (r + 1) * n + k});
    }
  const auto c = analyse(n * n, e);
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0].loops, static_cast<std::size_t>((n - 1) * (n - 1)));
  EXPECT_EQ(c[0].kind, Topology::Graph);
}

TEST(Topology, StaticBodiesAreGround) {
  // Body 1 static: 0 - 1 - 2 splits into two pinned single-joint chains.
  const std::vector<Edge> e = {{0, 1}, {1, 2}};
  const auto c = analyse(3, e, {1, 0, 1});
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].kind, Topology::Chain);
  EXPECT_EQ(c[1].kind, Topology::Chain);
}

}  // namespace
}  // namespace mabd::detail
