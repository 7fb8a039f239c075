// Elimination plan of the tree solver (see tree_plan.h): a spanning forest of the dynamic
// bodies by depth-first search, nodes listed in post-order, the remaining joints between
// dynamic bodies marked as loop joints.
#include "solvers/tree_plan.h"

#include <algorithm>

namespace mabd::detail {

TreePlan plan_trees(std::size_t n, const std::vector<char>& movable, const std::vector<Edge>& edges) {
  auto moving = [&](int b) { return b >= 0 && movable[b]; };
  // Body -> joints incidence (compressed).
  std::vector<std::uint32_t> start(n + 1, 0);
  for (const Edge& e : edges) {
    if (moving(e.a)) ++start[e.a + 1];
    if (moving(e.b)) ++start[e.b + 1];
  }
  for (std::size_t i = 0; i < n; ++i) start[i + 1] += start[i];
  std::vector<std::uint32_t> incident(start[n]);
  {
    std::vector<std::uint32_t> fill(start.begin(), start.end() - 1);
    for (std::uint32_t j = 0; j < edges.size(); ++j) {
      if (moving(edges[j].a)) incident[fill[edges[j].a]++] = j;
      if (moving(edges[j].b)) incident[fill[edges[j].b]++] = j;
    }
  }
  TreePlan plan;
  plan.child_node_of_joint.assign(edges.size(), -1);
  std::vector<char> seen(n, 0), used(edges.size(), 0);
  std::vector<std::uint32_t> order;           // DFS preorder of one component
  std::vector<std::uint32_t> stack;
  std::vector<std::int32_t> parent_joint(n, -1);
  std::vector<std::int32_t> node_of(n, -1);
  for (std::uint32_t root = 0; root < n; ++root) {
    if (!movable[root] || seen[root]) continue;
    if (start[root + 1] == start[root]) continue;  // a body without joints: nothing to solve
    TreeComponent comp;
    order.clear();
    stack.assign(1, root);
    seen[root] = 1;
    while (!stack.empty()) {
      const std::uint32_t b = stack.back();
      stack.pop_back();
      order.push_back(b);
      for (std::uint32_t s = start[b]; s < start[b + 1]; ++s) {
        const std::uint32_t j = incident[s];
        if (used[j]) continue;
        used[j] = 1;
        const Edge& e = edges[j];
        if (!moving(e.a) || !moving(e.b)) continue;  // to the ground: a child joint of b
        const int other = e.a == static_cast<int>(b) ? e.b : e.a;
        if (seen[other]) {
          comp.loop_joints.push_back(j);
        } else {
          seen[other] = 1;
          parent_joint[other] = static_cast<std::int32_t>(j);
          stack.push_back(static_cast<std::uint32_t>(other));
        }
      }
    }
    // Post-order: the reverse of the preorder puts every child before its parent and keeps
    // every subtree contiguous (a chain of bodies is eliminated link after link, in memory
    // order when the bodies were created along it).
    comp.node_begin = static_cast<std::uint32_t>(plan.nodes.size());
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      node_of[*it] = static_cast<std::int32_t>(plan.nodes.size());
      TreeNode node;
      node.body = *it;
      node.parent_joint = *it == root ? -1 : parent_joint[*it];
      plan.nodes.push_back(node);
    }
    comp.node_end = static_cast<std::uint32_t>(plan.nodes.size());
    std::sort(comp.loop_joints.begin(), comp.loop_joints.end());
    for (std::uint32_t k = comp.node_begin; k < comp.node_end; ++k) {
      TreeNode& node = plan.nodes[k];
      const std::uint32_t b = node.body;
      if (node.parent_joint >= 0) {
        const Edge& e = edges[node.parent_joint];
        const int p = e.a == static_cast<int>(b) ? e.b : e.a;
        node.parent_node = node_of[p];
        plan.child_node_of_joint[node.parent_joint] = static_cast<std::int32_t>(k);
      }
      node.child_begin = static_cast<std::uint32_t>(plan.child_joints.size());
      for (std::uint32_t s = start[b]; s < start[b + 1]; ++s) {
        const std::uint32_t j = incident[s];
        if (static_cast<std::int32_t>(j) == node.parent_joint) continue;
        if (std::binary_search(comp.loop_joints.begin(), comp.loop_joints.end(), j)) continue;
        plan.child_joints.push_back(j);
      }
      node.child_end = static_cast<std::uint32_t>(plan.child_joints.size());
    }
    plan.loop_joint_count += comp.loop_joints.size();
    plan.components.push_back(std::move(comp));
  }
  return plan;
}

}  // namespace mabd::detail
