// Fixed worker pool (see thread_pool.h).
#include "solvers/thread_pool.h"

namespace mabd::detail {

ThreadPool::ThreadPool(int threads) {
  errors_.resize(static_cast<std::size_t>(threads > 1 ? threads : 1));
  for (int k = 1; k < threads; ++k) workers_.emplace_back([this, k] { work(k); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  start_.notify_all();
  for (auto& t : workers_) t.join();
}

namespace {
// Range k of n items split into `parts` contiguous ranges.
std::size_t range_begin(std::size_t n, int parts, int k) {
  return n * static_cast<std::size_t>(k) / static_cast<std::size_t>(parts);
}
}  // namespace

void ThreadPool::work(int index) {
  std::size_t seen = 0;
  for (;;) {
    const std::function<void(int, std::size_t, std::size_t)>* job;
    std::size_t n;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      start_.wait(lock, [&] { return stop_ || epoch_ != seen; });
      if (stop_) return;
      seen = epoch_;
      job = job_;
      n = n_;
    }
    const int parts = threads();
    try {
      const std::size_t b = range_begin(n, parts, index), e = range_begin(n, parts, index + 1);
      if (b < e) (*job)(index, b, e);
    } catch (...) {
      errors_[static_cast<std::size_t>(index)] = std::current_exception();
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (--pending_ == 0) done_.notify_one();
    }
  }
}

void ThreadPool::run(std::size_t n, const std::function<void(int, std::size_t, std::size_t)>& fn) {
  if (workers_.empty()) {
    if (n > 0) fn(0, 0, n);
    return;
  }
  for (auto& e : errors_) e = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job_ = &fn;
    n_ = n;
    pending_ = static_cast<int>(workers_.size());
    ++epoch_;
  }
  start_.notify_all();
  try {
    const std::size_t e = range_begin(n, threads(), 1);
    if (e > 0) fn(0, 0, e);
  } catch (...) {
    errors_[0] = std::current_exception();
  }
  {
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return pending_ == 0; });
    job_ = nullptr;
  }
  for (auto& e : errors_)
    if (e) std::rethrow_exception(e);
}

}  // namespace mabd::detail
