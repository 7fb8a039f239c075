// Choice of the dual solver from the joint topology (paper sections "Case I" to "Case IV").
#include <algorithm>

#include "mabd/error.h"
#include "world/world_impl.h"

namespace mabd {

namespace {

/// Loop joints per component up to which Auto uses the tree solver with a Schur complement
/// (its cost grows as loop rows x component rows); beyond, the sparse Cholesky is cheaper.
constexpr std::size_t kMaxAutoLoopJoints = 8;

}  // namespace

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
  std::size_t loops = 0;
  for (const auto& comp : tree_plan.components) loops = std::max(loops, comp.loop_joints.size());
  return loops <= kMaxAutoLoopJoints ? DualMethod::Tree : DualMethod::Sparse;
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
