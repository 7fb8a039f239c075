// Scratch of solve_contact_lcp (contact_lcp.h) kept from one call to the next by its owner
// (ContactSchur): the problem's 3x3 blocks and the groups' sub-problems, rebuilt each call
// into the memory of the last.
#pragma once

#include <vector>

#include <Eigen/SparseCore>

#include "solvers/contact_lcp.h"
#include "solvers/lcp_blocks.h"

namespace mabd::detail {

struct LcpWorkspace {
  LcpBlocks blocks;
  ContactLcp sub;  ///< one group's problem
  std::vector<int> group, local;
};

}  // namespace mabd::detail
