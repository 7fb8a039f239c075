#include "cli/progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace mabd::cli {

namespace {

constexpr auto kRedrawInterval = std::chrono::milliseconds(100);
constexpr int kMaxBarWidth = 30;
constexpr int kMinBarWidth = 8;
/// Room kept for "  1234567 steps/s  ETA 12m34s".
constexpr int kReservedRateEta = 30;

int terminal_columns() {
  winsize ws{};
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 80;
}

std::string format_rate(double steps_per_second) {
  char text[32];
  if (steps_per_second >= 100) {
    std::snprintf(text, sizeof text, "%.0f", steps_per_second);
  } else if (steps_per_second >= 1) {
    std::snprintf(text, sizeof text, "%.1f", steps_per_second);
  } else {
    std::snprintf(text, sizeof text, "%.2g", steps_per_second);
  }
  return text;
}

}  // namespace

std::string format_duration(double seconds) {
  char text[32];
  if (!std::isfinite(seconds) || seconds < 0) return "?";
  if (seconds < 0.1) {
    std::snprintf(text, sizeof text, "%.0f ms", seconds * 1e3);
  } else if (seconds < 10) {
    std::snprintf(text, sizeof text, "%.1f s", seconds);
  } else if (seconds < 60) {
    std::snprintf(text, sizeof text, "%.0f s", seconds);
  } else if (seconds < 3600) {
    const long s = std::lround(seconds);
    std::snprintf(text, sizeof text, "%ldm%02lds", s / 60, s % 60);
  } else {
    const long m = std::lround(seconds / 60);
    std::snprintf(text, sizeof text, "%ldh%02ldm", m / 60, m % 60);
  }
  return text;
}

ProgressBar::ProgressBar(std::int64_t total, bool enabled)
    : total_(std::max<std::int64_t>(total, 0)),
      enabled_(enabled),
      start_(Clock::now()),
      next_draw_(start_ + kRedrawInterval) {}

ProgressBar::~ProgressBar() { abort(); }

bool ProgressBar::stderr_is_terminal() { return isatty(STDERR_FILENO) == 1; }

void ProgressBar::finish(std::int64_t done) {
  if (!enabled_ || closed_) return;
  draw(done, Clock::now(), true);
  std::fputc('\n', stderr);
  std::fflush(stderr);
  closed_ = true;
}

void ProgressBar::abort() {
  if (!enabled_ || closed_) return;
  if (drawn_) {
    std::fputc('\n', stderr);
    std::fflush(stderr);
  }
  closed_ = true;
}

void ProgressBar::draw(std::int64_t done, Clock::time_point now, bool final) {
  if (closed_) return;
  next_draw_ = now + kRedrawInterval;
  done = std::clamp<std::int64_t>(done, 0, total_);
  const double fraction = total_ > 0 ? static_cast<double>(done) / total_ : 1.0;
  const double elapsed = std::chrono::duration<double>(now - start_).count();
  const double rate = elapsed > 0 ? done / elapsed : 0.0;

  // Text after the bar.
  char counts[96];
  const int width = static_cast<int>(std::to_string(total_).size());
  std::snprintf(counts, sizeof counts, "%3d%% %*lld/%lld steps",
                static_cast<int>(std::floor(fraction * 100)), width,
                static_cast<long long>(done), static_cast<long long>(total_));
  std::string tail = counts;
  if (done > 0 && elapsed > 0) tail += "  " + format_rate(rate) + " steps/s";
  if (final) {
    tail += "  " + format_duration(elapsed);
  } else if (done > 0 && rate > 0) {
    tail += "  ETA " + format_duration((total_ - done) / rate);
  }

  // Fit the bar into the terminal width (keeping one spare column to avoid wrapping). The
  // width reserved for the text is fixed for the run so that the bar does not jump.
  const int columns = terminal_columns();
  const int reserved = static_cast<int>(std::strlen(counts)) + kReservedRateEta;
  const int bar_width = std::min(kMaxBarWidth, columns - 1 - reserved - 3);
  std::string line;
  if (bar_width >= kMinBarWidth) {
    const int filled = static_cast<int>(std::floor(fraction * bar_width));
    line.reserve(bar_width + 3 + tail.size());
    line += '[';
    line.append(filled, '#');
    line.append(bar_width - filled, '.');
    line += "] ";
  }
  line += tail;
  if (static_cast<int>(line.size()) > columns - 1 && columns > 1) {
    line.resize(columns - 1);
  }

  // Pad over leftovers of a longer previous line.
  const std::size_t length = line.size();
  if (length < last_length_) line.append(last_length_ - length, ' ');
  last_length_ = length;

  std::fputc('\r', stderr);
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
  drawn_ = true;
}

}  // namespace mabd::cli
