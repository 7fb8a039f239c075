// Choice of the dual solver from the topology of the row items (paper sections "Case I" to
// "Case IV"); the solvers themselves are in src/solvers.
#include <algorithm>

#include "mabd/error.h"
#include "world/world_impl.h"

namespace mabd {

void World::Impl::update_topology() {
  topology_dirty = false;
  update_joint_lists();
  topology.movable.resize(bodies.size());
  for (std::size_t i = 0; i < bodies.size(); ++i) topology.movable[i] = bodies[i].dynamic();
  set_dynamic_flags(topology.movable);
  topology.items.clear();
  for_each_row_source([&](const detail::RowSource& source) {
    for (std::size_t k = 0; k < source.items(); ++k) {
      topology.items.push_back(source.item_bodies(k));
    }
  });
  all_chains = chain_dual.prepare(topology);
  tree_prepared = false;
  // Chains of point links and general equality items: the closed form (ball_chain_dual.h).
  ball_chain_dual.clear();
  if (!ball_chains_apply()) return;
  std::vector<detail::PointLink> links, some;
  bool all_points = true;
  for_each_row_source([&](const detail::RowSource& source) {
    all_points = all_points && source.chain_items(some);
    if (links.empty()) {
      links.swap(some);  // the first source's links: no copy
    } else {
      links.insert(links.end(), some.begin(), some.end());
    }
  });
  // General items (prismatic joints) cost the closed form about what they cost the row path
  // (one body solve per row and side): where they are the majority the row path is as fast,
  // and measured a little faster. Point links, with or without dot rows (ball, hinge,
  // universal and fixed joints), take no body solve there.
  const auto general = std::count_if(links.begin(), links.end(),
                                     [](const detail::PointLink& l) { return l.rows > 0; });
  if (all_points && 2 * static_cast<std::size_t>(general) <= links.size()) {
    ball_chain_dual.prepare(chain_dual.chains(), links, *this);
  }
}

bool World::Impl::ball_chains_apply() const { return all_chains && geo_body_frame(); }

detail::DualSolver& World::Impl::dual_method() {
  if (topology_dirty || topology.movable.size() != bodies.size()) update_topology();
  set_dynamic_flags(topology.movable);  // (a clone's flags point at the original until here)
  // The tree plan is built only when it can be used (it costs memory on large chains).
  auto tree_method = [&]() -> detail::DualSolver& {
    if (!tree_prepared) tree_prepared = tree_dual.prepare(topology);
    tree_dual.set_sparse_components({});
    return tree_dual;
  };
  switch (settings.solver) {
    case DualSolverKind::Sparse: return sparse_dual;
    case DualSolverKind::Iterative: return iterative_dual;
    case DualSolverKind::Tree: return tree_method();
    case DualSolverKind::Chain:
      if (!all_chains) {
        throw InvalidArgument("settings.solver: \"chain\" needs every joint component to be a "
                              "chain (see mabd info); use \"auto\", \"tree\" or \"sparse\"");
      }
      return chain_dual;
    case DualSolverKind::Auto: break;
  }
  if (all_chains) return chain_dual;
  tree_method();
  // Per component: the tree solver (chains, trees, a few loops) or the sparse one (graphs).
  const auto& comps = tree_dual.plan().components;
  std::vector<char> sparse(comps.size(), 0);
  bool any_tree = false, any_graph = false;
  for (std::size_t c = 0; c < comps.size(); ++c) {
    const bool graph = auto_sparse(comps[c]);
    sparse[c] = graph;
    any_graph |= graph;
    any_tree |= !graph;
  }
  if (!any_graph) return tree_dual;
  if (!any_tree) {  // graphs only: one solve of the whole system
    if (auto_iterative()) return iterative_dual;
    return sparse_dual;
  }
  tree_dual.set_sparse_components(std::move(sparse));
  return tree_dual;
}

void World::Impl::update_joint_lists() {
  limited_joints.clear();
  nonlinear_joints.clear();
  rigid_nonlinear_joints.clear();
  for (std::uint32_t j = 0; j < joints.size(); ++j) {
    const auto& joint = joints[j];
    if (joint.extras().limits || joint.extras().cone) limited_joints.push_back(j);
    if (joint.type == JointType::Ball) continue;
    nonlinear_joints.push_back(j);
    if (!(joint.compliance > 0)) rigid_nonlinear_joints.push_back(j);
  }
}

}  // namespace mabd
