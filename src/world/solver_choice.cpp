// Choice of the dual solver from the joint topology (paper sections "Case I" to "Case IV").
#include "mabd/error.h"
#include "world/world_impl.h"

namespace mabd {

World::Impl::DualMethod World::Impl::dual_method() {
  if (topology_dirty) {
    update_joint_lists();
    update_chains();
    tree_plan_valid = false;
  }
  // The tree plan is built only when it can be used (it costs memory on large chains).
  auto tree_method = [&] {
    if (!tree_plan_valid) update_tree_plan();
    return DualMethod::Tree;
  };
  tree.mixed = false;
  tree.sparse_component.clear();
  switch (settings.solver) {
    case DualSolverKind::Sparse: return DualMethod::Sparse;
    case DualSolverKind::Iterative: return DualMethod::Iterative;
    case DualSolverKind::Tree: return tree_method();
    case DualSolverKind::Chain:
      if (!all_chains) {
        throw InvalidArgument("settings.solver: \"chain\" needs every joint component to be a "
                              "chain (see mabd info); use \"auto\", \"tree\" or \"sparse\"");
      }
      return DualMethod::Chain;
    case DualSolverKind::Auto: break;
  }
  if (all_chains) return DualMethod::Chain;
  tree_method();
  // Per component: the tree solver (chains, trees, a few loops) or the sparse one (graphs).
  const auto& comps = tree_plan.components;
  tree.sparse_component.assign(comps.size(), 0);
  bool any_tree = false;
  for (std::size_t c = 0; c < comps.size(); ++c) {
    const bool graph = auto_sparse(comps[c]);
    tree.sparse_component[c] = graph;
    tree.mixed |= graph;
    any_tree |= !graph;
  }
  if (!tree.mixed) return DualMethod::Tree;
  if (!any_tree) {  // graphs only: one sparse solve of the whole system
    tree.mixed = false;
    tree.sparse_component.clear();
    return DualMethod::Sparse;
  }
  return DualMethod::Tree;
}

void World::Impl::update_joint_lists() {
  limited_joints.clear();
  stateful_joints.clear();
  for (std::uint32_t j = 0; j < joints.size(); ++j) {
    const auto& joint = joints[j];
    if (joint.extras().limits || joint.extras().cone) limited_joints.push_back(j);
    if (joint.ax) stateful_joints.push_back(j);  // every type but the plain ball joint
  }
}

}  // namespace mabd
