// Shared pieces of the libFuzzer targets (tests/fuzz/*_fuzz.cpp).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace mabd::fuzz {

/// Inputs longer than this are skipped: the targets look for parser bugs, not for the cost of
/// reading megabytes.
constexpr std::size_t kMaxInputBytes = 64 * 1024;

/// The fuzzer's bytes as a string.
inline std::string as_text(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

}  // namespace mabd::fuzz
