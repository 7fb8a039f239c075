// Line-by-line reader of a text mesh file that knows where it is, so every error reads
// "FILE: line N: what is wrong" (internal to the mesh readers).
#pragma once

#include <charconv>
#include <cmath>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace mabd::fem::detail {

class TextReader {
 public:
  /// `name` is used in messages; text after `comment` (if not '\0') on a line is ignored.
  TextReader(const std::string& text, std::string name, char comment = '\0')
      : in_(text), name_(std::move(name)), comment_(comment) {}

  /// Moves to the next line that has fields (blank and comment-only lines are skipped).
  /// Returns false at the end of the text.
  bool next() {
    std::string raw;
    while (std::getline(in_, raw)) {
      ++line_;
      if (comment_ != '\0') raw = raw.substr(0, raw.find(comment_));
      fields_.clear();
      std::istringstream s(raw);
      std::string f;
      while (s >> f) fields_.push_back(f);
      if (!fields_.empty()) return true;
    }
    fields_.clear();
    at_end_ = true;
    return false;
  }

  /// Like next(), but an end of text is an error mentioning `expected`.
  void require(const std::string& expected) {
    if (!next()) fail("unexpected end of file, expected " + expected);
  }

  int line() const { return line_; }
  const std::string& name() const { return name_; }
  int size() const { return static_cast<int>(fields_.size()); }
  const std::string& field(int k) const { return fields_[k]; }

  /// Requires between `lo` and `hi` fields on the current line.
  void expect_fields(int lo, int hi, const std::string& what) const {
    if (size() < lo || size() > hi) {
      fail(what + ": " + std::to_string(size()) + " field" + (size() == 1 ? "" : "s") +
           ", expected " + (lo == hi ? std::to_string(lo) : std::to_string(lo) + ".." +
                                                               std::to_string(hi)));
    }
  }

  /// Field k as an integer; `what` names it in the message.
  long long integer(int k, const std::string& what) const {
    if (k >= size()) fail("missing " + what);
    const std::string& f = fields_[k];
    long long v = 0;
    const auto r = std::from_chars(f.data(), f.data() + f.size(), v);
    if (r.ec != std::errc() || r.ptr != f.data() + f.size()) {
      fail(what + " '" + f + "' is not an integer");
    }
    return v;
  }

  /// Field k as a finite real number.
  double real(int k, const std::string& what) const {
    if (k >= size()) fail("missing " + what);
    const std::string& f = fields_[k];
    double v = 0;
    const auto r = std::from_chars(f.data(), f.data() + f.size(), v);
    if (r.ec != std::errc() || r.ptr != f.data() + f.size() || !std::isfinite(v)) {
      fail(what + " '" + f + "' is not a finite number");
    }
    return v;
  }

  /// Throws std::runtime_error "NAME: line N: what".
  [[noreturn]] void fail(const std::string& what) const {
    throw std::runtime_error(name_ + ": line " + std::to_string(line_) + ": " + what);
  }

 private:
  std::istringstream in_;
  std::string name_;
  char comment_;
  int line_ = 0;
  bool at_end_ = false;
  std::vector<std::string> fields_;
};

}  // namespace mabd::fem::detail
