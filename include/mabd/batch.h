// Batches of independent worlds stepped together on a pool of threads (data synthesis,
// parameter sweeps, reinforcement-learning rollouts).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "mabd/world.h"

namespace mabd {

/// n independent copies of one world. Each world is stepped by one thread at a time and
/// shares nothing with the others, so every result is independent of the thread count and of
/// which thread stepped which world (bit-identical to stepping the copies one after another).
/// A world whose step throws stops where it was (its last valid state) and is marked failed
/// with the message; the other worlds go on. Not thread-safe itself: call it from one thread.
class WorldBatch {
 public:
  /// Per-world set-up: called with the world's index, its seed (base_seed + index) and the
  /// world, right after the copy is made and again on reset. Sets per-world parameters: drive
  /// gains and targets, joint limits, loads, or an initial state (World::restore_state).
  using Setup = std::function<void(std::size_t index, std::uint64_t seed, World& world)>;
  /// Called before step `step` (0-based, within the call) of world `index`, on the thread
  /// that steps it: sets drive targets, wrenches or kinematic targets of that world only.
  using Control = std::function<void(std::size_t index, int step, World& world)>;
  /// Called after step `step` of world `index`, on the thread that steps it: reads its state.
  /// Writes into per-world storage only (different worlds run at the same time).
  using Record = std::function<void(std::size_t index, int step, const World& world)>;

  /// `n` copies of `prototype` (its model and its state now), stepped on `threads` threads
  /// (>= 1; 1 steps them in the calling thread). Throws InvalidArgument if n is 0 or threads
  /// is not positive; a throwing `setup` propagates, naming the world.
  WorldBatch(const World& prototype, std::size_t n, int threads = 1, Setup setup = {},
             std::uint64_t base_seed = 0);
  ~WorldBatch();
  WorldBatch(WorldBatch&&) noexcept;
  WorldBatch& operator=(WorldBatch&&) noexcept;

  std::size_t size() const;
  int threads() const;
  World& world(std::size_t index);              ///< throws InvalidArgument out of range
  const World& world(std::size_t index) const;  ///< throws InvalidArgument out of range

  /// Steps every world that has not failed `steps` times, calling `control` before and
  /// `record` after each of its steps when given.
  void step(int steps = 1, const Control& control = {}, const Record& record = {});
  /// Restores `initial` (one state for every world, or one per world) into the worlds, clears
  /// their failures, then steps them as step() does: a rollout from given initial states with
  /// given controls, its states read by `record`. Throws InvalidArgument (the worlds are then
  /// unchanged) if the count is neither 1 nor size() or a state does not fit the model.
  void rollout(const std::vector<WorldState>& initial, int steps, const Control& control = {},
               const Record& record = {});
  /// Back to the prototype's state, the set-up applied again, the failure cleared, for the
  /// worlds `indices` (throws InvalidArgument, changing nothing, on an index out of range).
  void reset(const std::vector<std::size_t>& indices);
  void reset_all();

  bool failed(std::size_t index) const;
  /// The message of the step that failed ("" if it has not).
  const std::string& error(std::size_t index) const;
  std::size_t failed_count() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mabd
