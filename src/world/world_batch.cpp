// WorldBatch: independent copies of a world on a small pool of threads. Worlds are handed out
// one at a time from an atomic counter (load balance when some worlds are costlier); each is
// stepped by one thread at a time, so the assignment changes nothing in the results.
#include "mabd/batch.h"

#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>

#include "mabd/error.h"

namespace mabd {

namespace {

/// Persistent workers that run job(i) for i in [0, count), the calling thread taking part.
class Pool {
 public:
  explicit Pool(int threads) {
    for (int t = 1; t < threads; ++t) workers_.emplace_back([this] { work(); });
  }
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(m_);
      stop_ = true;
    }
    wake_.notify_all();
    for (auto& w : workers_) w.join();
  }
  int threads() const { return static_cast<int>(workers_.size()) + 1; }

  /// Runs job(i) for every i in [0, count); job must not throw.
  void run(std::size_t count, const std::function<void(std::size_t)>& job) {
    if (workers_.empty() || count <= 1) {
      for (std::size_t i = 0; i < count; ++i) job(i);
      return;
    }
    {
      std::lock_guard<std::mutex> lock(m_);
      job_ = &job;
      count_ = count;
      next_ = 0;
      busy_ = static_cast<int>(workers_.size());
      ++generation_;
    }
    wake_.notify_all();
    drain();
    std::unique_lock<std::mutex> lock(m_);
    done_.wait(lock, [this] { return busy_ == 0; });
    job_ = nullptr;
  }

 private:
  void drain() {
    for (std::size_t i; (i = next_.fetch_add(1)) < count_;) (*job_)(i);
  }
  void work() {
    std::uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(m_);
        wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
      }
      drain();
      {
        std::lock_guard<std::mutex> lock(m_);
        --busy_;
      }
      done_.notify_one();
    }
  }

  std::vector<std::thread> workers_;
  std::mutex m_;
  std::condition_variable wake_, done_;
  const std::function<void(std::size_t)>* job_ = nullptr;
  std::size_t count_ = 0;
  std::atomic<std::size_t> next_{0};
  int busy_ = 0;
  std::uint64_t generation_ = 0;
  bool stop_ = false;
};

std::string what_of(std::exception_ptr e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  } catch (...) {
    return "unknown error";
  }
}

}  // namespace

struct WorldBatch::Impl {
  World prototype;
  std::vector<World> worlds;
  std::vector<std::string> errors;  ///< "" while the world has not failed
  Setup setup;
  std::uint64_t base_seed = 0;
  Pool pool;

  Impl(const World& proto, int threads) : prototype(proto.clone()), pool(threads) {}

  /// A fresh copy of the prototype for world i, set up.
  World make(std::size_t i) const {
    World w = prototype.clone();
    if (setup) {
      try {
        setup(i, base_seed + i, w);
      } catch (const InvalidArgument& e) {
        throw InvalidArgument("batch world " + std::to_string(i) + ": set-up: " + e.what());
      }
    }
    return w;
  }
  void check(std::size_t i) const {
    if (i >= worlds.size()) {
      throw InvalidArgument("batch world " + std::to_string(i) + " out of range (size " +
                            std::to_string(worlds.size()) + ")");
    }
  }
  void run(int steps, const Control& control, const Record& record) {
    if (steps < 0) throw InvalidArgument("batch step: steps must be >= 0, got " +
                                         std::to_string(steps));
    pool.run(worlds.size(), [&](std::size_t i) {
      if (!errors[i].empty()) return;
      World& w = worlds[i];
      try {
        for (int k = 0; k < steps; ++k) {
          if (control) control(i, k, w);
          w.step();
          if (record) record(i, k, w);
        }
      } catch (...) {
        errors[i] = what_of(std::current_exception());
        if (errors[i].empty()) errors[i] = "error";
      }
    });
  }
};

WorldBatch::WorldBatch(const World& prototype, std::size_t n, int threads, Setup setup,
                       std::uint64_t base_seed) {
  if (n == 0) throw InvalidArgument("batch: the number of worlds must be positive");
  if (threads < 1) {
    throw InvalidArgument("batch: threads must be >= 1, got " + std::to_string(threads));
  }
  impl_ = std::make_unique<Impl>(prototype, threads);
  impl_->setup = std::move(setup);
  impl_->base_seed = base_seed;
  impl_->worlds.reserve(n);
  for (std::size_t i = 0; i < n; ++i) impl_->worlds.push_back(impl_->make(i));
  impl_->errors.assign(n, "");
}

WorldBatch::~WorldBatch() = default;
WorldBatch::WorldBatch(WorldBatch&&) noexcept = default;
WorldBatch& WorldBatch::operator=(WorldBatch&&) noexcept = default;

std::size_t WorldBatch::size() const { return impl_->worlds.size(); }
int WorldBatch::threads() const { return impl_->pool.threads(); }

World& WorldBatch::world(std::size_t index) {
  impl_->check(index);
  return impl_->worlds[index];
}
const World& WorldBatch::world(std::size_t index) const {
  impl_->check(index);
  return impl_->worlds[index];
}

void WorldBatch::step(int steps, const Control& control, const Record& record) {
  impl_->run(steps, control, record);
}

void WorldBatch::rollout(const std::vector<WorldState>& initial, int steps,
                         const Control& control, const Record& record) {
  const std::size_t n = size();
  if (initial.size() != 1 && initial.size() != n) {
    throw InvalidArgument("batch rollout: " + std::to_string(initial.size()) +
                          " initial states for " + std::to_string(n) +
                          " worlds (give 1 or one per world)");
  }
  // restore_state leaves a world unchanged when it throws; the worlds restored before a bad
  // state get their own states back, so that nothing changes.
  std::vector<WorldState> before;
  before.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t s = initial.size() == 1 ? 0 : i;
    before.push_back(impl_->worlds[i].save_state());
    try {
      impl_->worlds[i].restore_state(initial[s]);
    } catch (const InvalidArgument& e) {
      for (std::size_t k = 0; k < i; ++k) impl_->worlds[k].restore_state(before[k]);
      throw InvalidArgument("batch rollout: initial state " + std::to_string(s) + ": " +
                            e.what());
    }
  }
  for (auto& e : impl_->errors) e.clear();
  impl_->run(steps, control, record);
}

void WorldBatch::reset(const std::vector<std::size_t>& indices) {
  for (std::size_t i : indices) impl_->check(i);
  for (std::size_t i : indices) {
    impl_->worlds[i] = impl_->make(i);
    impl_->errors[i].clear();
  }
}

void WorldBatch::reset_all() {
  std::vector<std::size_t> all(size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  reset(all);
}

bool WorldBatch::failed(std::size_t index) const {
  impl_->check(index);
  return !impl_->errors[index].empty();
}

const std::string& WorldBatch::error(std::size_t index) const {
  impl_->check(index);
  return impl_->errors[index];
}

std::size_t WorldBatch::failed_count() const {
  std::size_t n = 0;
  for (const auto& e : impl_->errors) n += !e.empty();
  return n;
}

}  // namespace mabd
