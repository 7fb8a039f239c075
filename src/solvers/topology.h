// Topology analysis of the joint graph (paper sections "Case I" to "Case IV"): connected
// components of the dynamic bodies, each classified as a chain, a tree, a tree with a few
// loops, or a general graph. Everything that cannot move (the world, static and kinematic
// bodies) is one ground node. A chain is a component whose joints form a path (every body
// in at most two joints, no cycle between dynamic bodies), pinned at neither, one or both
// ends: its dual matrix is block-tridiagonal.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace mabd::detail {

enum class Topology { Single, Chain, Tree, TreeWithLoops, Graph };

const char* topology_name(Topology t);

struct Component {
  Topology kind = Topology::Single;
  std::vector<std::uint32_t> bodies;  ///< dynamic bodies
  std::vector<std::uint32_t> joints;
  std::size_t loops = 0;              ///< independent cycles (cycle rank)
};

/// Joint endpoints: body index or -1 for anything that cannot move.
struct Edge {
  int a = -1, b = -1;
};

/// Components over `n` bodies (`movable[i]` false for static / kinematic ones) and `edges`
/// (one per joint). A component with more than `max_loops` cycles is a general graph.
std::vector<Component> analyse_topology(std::size_t n, const std::vector<char>& movable,
                                        const std::vector<Edge>& edges, std::size_t max_loops = 16);

}  // namespace mabd::detail
