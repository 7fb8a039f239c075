// Typed integer ids: users hold ids, never pointers into the engine.
#pragma once

#include <cstdint>
#include <functional>

namespace mabd {

/// Id of a body in a World; index is dense and stable (bodies are never removed).
struct BodyId {
  std::uint32_t index = UINT32_MAX;
  constexpr bool valid() const { return index != UINT32_MAX; }
  friend constexpr bool operator==(BodyId a, BodyId b) { return a.index == b.index; }
  friend constexpr bool operator!=(BodyId a, BodyId b) { return a.index != b.index; }
};

/// Id of a soft body in a World (include/mabd/soft_body.h); dense and stable.
struct SoftBodyId {
  std::uint32_t index = UINT32_MAX;
  constexpr bool valid() const { return index != UINT32_MAX; }
  friend constexpr bool operator==(SoftBodyId a, SoftBodyId b) { return a.index == b.index; }
  friend constexpr bool operator!=(SoftBodyId a, SoftBodyId b) { return a.index != b.index; }
};

}  // namespace mabd
