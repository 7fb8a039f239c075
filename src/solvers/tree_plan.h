// Elimination plan of the tree solver (paper "Case II: Joint tree (ABD-ABA)" and "Case III:
// Joint loop"). The dual matrix S couples the joints that share a dynamic body, so the joints
// at one body form a clique and, when the dynamic bodies and their joints form a forest, the
// cliques form a tree: eliminating the joints body by body from the leaves to the root
// creates no fill (the dual form of the articulated-body recursion). Joints to anything that
// cannot move (world, static, kinematic bodies) couple through one body only. Joints that
// close a cycle between dynamic bodies are loop joints, solved by a Schur complement.
#pragma once

#include <cstdint>
#include <vector>

#include "solvers/topology.h"

namespace mabd::detail {

struct TreeNode {
  std::uint32_t body = 0;
  std::int32_t parent_joint = -1;  ///< joint to the parent body; -1 at a component's root
  std::int32_t parent_node = -1;   ///< index of the parent node in TreePlan::nodes
  /// Joints eliminated at this body: those to its child bodies and to the ground,
  /// as the range [child_begin, child_end) of TreePlan::child_joints.
  std::uint32_t child_begin = 0, child_end = 0;
};

struct TreeComponent {
  std::uint32_t node_begin = 0, node_end = 0;  ///< nodes in post-order (children first)
  std::vector<std::uint32_t> loop_joints;      ///< joints closing cycles (Schur complement)
};

struct TreePlan {
  std::vector<TreeNode> nodes;
  std::vector<std::uint32_t> child_joints;
  std::vector<std::int32_t> child_node_of_joint;  ///< node whose parent joint it is, or -1
  std::vector<TreeComponent> components;
  std::size_t loop_joint_count = 0;
};

/// Plans the elimination over `n` bodies (`movable[i]` false for bodies that cannot move) and
/// one edge per joint. Every joint with a dynamic side belongs to exactly one component, as a
/// tree joint (parent or child joint of a node) or a loop joint.
TreePlan plan_trees(std::size_t n, const std::vector<char>& movable, const std::vector<Edge>& edges);

}  // namespace mabd::detail
