// Lookup of bodies and joints by name without a second copy of the names: an open-addressing
// hash table of indices into the array that holds the names (BodyInfo::name,
// JointModel::name). 4 to 8 bytes per named item, where a std::unordered_map<std::string,
// std::uint32_t> takes about 70 (a node with its own copy of the string, and a bucket).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mabd::detail {

class NameIndex {
 public:
  /// Makes room for `count` names without growing (name_of(i): the name of item i).
  template <class NameOf>
  void reserve(std::size_t count, const NameOf& name_of) {
    if (2 * count > slots_.size()) rehash(capacity_for(count), name_of);
  }
  /// The item named `name`, if any.
  template <class NameOf>
  std::optional<std::uint32_t> find(std::string_view name, const NameOf& name_of) const {
    if (slots_.empty()) return std::nullopt;
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t s = hash(name) & mask;; s = (s + 1) & mask) {
      const std::uint32_t item = slots_[s];
      if (item == kEmpty) return std::nullopt;
      if (std::string_view(name_of(item)) == name) return item;
    }
  }
  /// Adds item `item`, named `name` (not yet in the index; not empty).
  template <class NameOf>
  void insert(std::uint32_t item, std::string_view name, const NameOf& name_of) {
    if (2 * (count_ + 1) > slots_.size()) rehash(capacity_for(count_ + 1), name_of);
    place(item, name);
    ++count_;
  }

 private:
  static constexpr std::uint32_t kEmpty = UINT32_MAX;
  static std::size_t hash(std::string_view name) { return std::hash<std::string_view>{}(name); }
  /// A power of two holding `count` names at a load of at most one half.
  static std::size_t capacity_for(std::size_t count) {
    std::size_t c = 16;
    while (c < 2 * count) c *= 2;
    return c;
  }
  void place(std::uint32_t item, std::string_view name) {
    const std::size_t mask = slots_.size() - 1;
    std::size_t s = hash(name) & mask;
    while (slots_[s] != kEmpty) s = (s + 1) & mask;
    slots_[s] = item;
  }
  template <class NameOf>
  void rehash(std::size_t capacity, const NameOf& name_of) {
    std::vector<std::uint32_t> old(capacity, kEmpty);
    old.swap(slots_);
    for (std::uint32_t item : old) {
      if (item != kEmpty) place(item, name_of(item));
    }
  }

  std::vector<std::uint32_t> slots_;
  std::size_t count_ = 0;
};

}  // namespace mabd::detail
