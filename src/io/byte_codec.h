// Little-endian binary encoding of the world state and of checkpoint files
// (docs/output-formats.md): fixed-width integers and IEEE-754 doubles, independent of the
// host's byte order, and a bounds-checked reader whose errors name what it was reading.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "mabd/error.h"
#include "mabd/math.h"

namespace mabd::detail {

/// FNV-1a (64 bit) of `size` bytes, continuing from `hash`.
inline std::uint64_t fnv1a(const std::uint8_t* data, std::size_t size,
                           std::uint64_t hash = 14695981039346656037ull) {
  for (std::size_t i = 0; i < size; ++i) hash = (hash ^ data[i]) * 1099511628211ull;
  return hash;
}

class ByteWriter {
 public:
  void u8(std::uint8_t v) { bytes_.push_back(v); }
  void u32(std::uint32_t v) { put(v, 4); }
  void u64(std::uint64_t v) { put(v, 8); }
  void i64(std::int64_t v) { put(static_cast<std::uint64_t>(v), 8); }
  void f64(double v) {
    std::uint64_t bits;
    std::memcpy(&bits, &v, 8);
    put(bits, 8);
  }
  template <typename Derived>
  void vec(const Eigen::MatrixBase<Derived>& v) {
    for (Eigen::Index k = 0; k < v.size(); ++k) f64(v[k]);
  }
  void quat(const Quat& q) {
    for (double c : {q.w(), q.x(), q.y(), q.z()}) f64(c);
  }
  void str(const std::string& s) {
    u64(s.size());
    bytes_.insert(bytes_.end(), s.begin(), s.end());
  }
  std::vector<std::uint8_t>& bytes() { return bytes_; }

 private:
  void put(std::uint64_t v, int n) {
    for (int k = 0; k < n; ++k) bytes_.push_back(static_cast<std::uint8_t>(v >> (8 * k)));
  }
  std::vector<std::uint8_t> bytes_;
};

/// Reads what ByteWriter wrote. Every read past the end throws InvalidArgument
/// "`context`: truncated: ... needs N bytes at offset O of S".
class ByteReader {
 public:
  ByteReader(const std::uint8_t* data, std::size_t size, std::string context)
      : data_(data), size_(size), context_(std::move(context)) {}

  std::uint8_t u8(const char* what) { return static_cast<std::uint8_t>(get(1, what)); }
  std::uint32_t u32(const char* what) { return static_cast<std::uint32_t>(get(4, what)); }
  std::uint64_t u64(const char* what) { return get(8, what); }
  std::int64_t i64(const char* what) { return static_cast<std::int64_t>(get(8, what)); }
  double f64(const char* what) {
    const std::uint64_t bits = get(8, what);
    double v;
    std::memcpy(&v, &bits, 8);
    return v;
  }
  template <typename Vec>
  Vec vec(const char* what) {
    Vec v;
    for (Eigen::Index k = 0; k < v.size(); ++k) v[k] = f64(what);
    return v;
  }
  Quat quat(const char* what) {
    const double w = f64(what), x = f64(what), y = f64(what), z = f64(what);
    return Quat(w, x, y, z);
  }
  std::string str(const char* what) {
    const std::uint64_t n = u64(what);
    need(n, what);
    std::string s(reinterpret_cast<const char*>(data_ + pos_), n);
    pos_ += n;
    return s;
  }
  std::size_t position() const { return pos_; }
  std::size_t remaining() const { return size_ - pos_; }
  /// Throws InvalidArgument "`context`: `what`".
  [[noreturn]] void fail(const std::string& what) const {
    throw InvalidArgument(context_ + ": " + what);
  }

 private:
  void need(std::uint64_t n, const char* what) const {
    if (n > size_ - pos_) {
      fail(std::string("truncated: ") + what + " needs " + std::to_string(n) +
           " bytes at offset " + std::to_string(pos_) + " of " + std::to_string(size_));
    }
  }
  std::uint64_t get(int n, const char* what) {
    need(static_cast<std::uint64_t>(n), what);
    std::uint64_t v = 0;
    for (int k = 0; k < n; ++k) v |= static_cast<std::uint64_t>(data_[pos_ + k]) << (8 * k);
    pos_ += n;
    return v;
  }
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
  std::string context_;
};

}  // namespace mabd::detail
