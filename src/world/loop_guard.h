// State of the Newton iteration guard on joint loops (World::Impl::advance, step.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace mabd::detail {

/// One Newton iteration per step leaves a remainder (the co-rotated Hessian omits the
/// stress terms, the rows are linearised): a small fraction of the step's increment that the
/// generalized-alpha update turns into velocity as if it were a force. On joint loops its
/// work is systematic and adds energy (a rope bridge on 124 hinges: +0.25 J in 6 s at
/// h = 1e-3, on a swing of up to 13 J of kinetic energy). The guard measures it with one
/// more iteration: the energy change that remainder would have left, per second and relative
/// to the loops' kinetic energy, taken in absolute value (an upper bound: the remainder's work
/// changes sign from step to step, its systematic part is smaller). While the running
/// average exceeds kDrift every step takes the extra iteration; below it the measurement is
/// repeated after 2, 4, ... kMaxInterval steps. On the bridge the measure is about 2e-3 per
/// second at h = 1e-3 and 2.4e-4 at h = 2e-4, where one iteration does not drift.
struct LoopGuard {
  static constexpr double kDrift = 5e-4;     ///< relative energy drift per second tolerated
  static constexpr int kMaxInterval = 64;    ///< steps between measurements at most
  std::vector<std::uint32_t> bodies;         ///< dynamic bodies of components with a loop
  std::size_t joints_seen = SIZE_MAX, bodies_seen = SIZE_MAX;  ///< counts `bodies` is for
  double drift = 0;  ///< measured drift of the capped iterations (1/s), running average
  int wait = 0;      ///< steps until the next measurement
  int interval = 1;  ///< current measurement interval (steps)
};

}  // namespace mabd::detail
