// A fixed pool of worker threads for the per-body phases of a step and independent
// components of the dual solve (settings.threads).
// Work is split into contiguous index ranges, one per thread, so a phase whose bodies are
// independent gives the same result to the bit for every thread count.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace mabd::detail {

class ThreadPool {
 public:
  /// A pool running work on `threads` threads in all: the caller's and threads - 1 workers.
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int threads() const { return static_cast<int>(workers_.size()) + 1; }

  /// Calls fn(k, begin, end) on threads() contiguous ranges covering [0, n), range k on
  /// thread k (the caller runs range 0), and returns when all are done. An exception thrown by fn is
  /// rethrown here, the one of the lowest range first.
  void run(std::size_t n, const std::function<void(int, std::size_t, std::size_t)>& fn);

 private:
  void work(int index);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable start_, done_;
  const std::function<void(int, std::size_t, std::size_t)>* job_ = nullptr;
  std::size_t n_ = 0;
  std::size_t epoch_ = 0;
  int pending_ = 0;
  bool stop_ = false;
  std::vector<std::exception_ptr> errors_;
};

}  // namespace mabd::detail
