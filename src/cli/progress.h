// Single-line terminal progress bar on stderr.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace mabd::cli {

/// Draws "[#####.....] 52% 5200/10000 steps  8400 steps/s  ETA 0.6 s" on stderr, redrawn in
/// place with '\r' at most ~10 times per second. A disabled bar does nothing.
class ProgressBar {
 public:
  ProgressBar(std::int64_t total, bool enabled);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  /// True when stderr is a terminal.
  static bool stderr_is_terminal();

  bool enabled() const { return enabled_; }

  /// Reports `done` completed steps; redraws if enough time has passed.
  void update(std::int64_t done) {
    if (!enabled_) return;
    const auto now = Clock::now();
    if (now < next_draw_) return;
    draw(done, now, false);
  }

  /// Draws the final state and ends the line.
  void finish(std::int64_t done);

  /// Ends the line (if anything was drawn) so that a following message starts on its own
  /// line; the bar stays as it was.
  void abort();

 private:
  using Clock = std::chrono::steady_clock;
  void draw(std::int64_t done, Clock::time_point now, bool final);

  std::int64_t total_;
  bool enabled_;
  bool drawn_ = false;
  bool closed_ = false;
  std::size_t last_length_ = 0;
  Clock::time_point start_;
  Clock::time_point next_draw_;
};

/// Formats a duration in seconds for humans: "0.6 s", "42 s", "3m05s", "1h02m".
std::string format_duration(double seconds);

}  // namespace mabd::cli
