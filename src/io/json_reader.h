// Typed, path-tracking access to a parsed JSON document, for the scene loader.
//
// Every failure throws mabd::SceneError with the one-line message "FILE: ITEM: what is wrong",
// where ITEM is built from an item label (e.g. "bodies[2] 'rod'") and a field path inside the
// item (e.g. "shape.size[1]").
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "mabd/math.h"

namespace mabd::io {

using Json = nlohmann::json;

/// Shortest round-trip decimal form of `value` ("0", "-0.02", "1e+08", "inf", "nan").
std::string format_number(double value);

/// Replaces line breaks and other control characters by spaces so a message stays on one line.
std::string one_line(std::string_view text);

/// Edit distance between two strings (insertions, deletions, substitutions, adjacent swaps),
/// ignoring ASCII case.
std::size_t edit_distance(std::string_view a, std::string_view b);

/// Most candidates close_matches compares with the word (bounds the work on huge lists).
inline constexpr std::size_t kMaxCompared = 200000;
/// Longest word close_matches looks for (characters).
inline constexpr std::size_t kMaxSuggestedLength = 200;
/// Most names an "unknown name" message lists, and most suggestions it makes.
inline constexpr std::size_t kMaxListedNames = 10;
inline constexpr std::size_t kMaxSuggestions = 3;

/// Up to `max_count` candidates close enough to `word` to be likely typos of it, closest first
/// (ties in candidate order). The work is bounded: a candidate whose length rules it out is
/// skipped without a comparison, at most kMaxCompared candidates are compared, and each
/// comparison stops as soon as it exceeds the typo limit (1 to 3 edits).
std::vector<std::string> close_matches(std::string_view word,
                                       const std::vector<std::string>& candidates,
                                       std::size_t max_count);

/// The candidate closest to `word` if it is close enough to be a likely typo, else nullopt.
std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string>& candidates);

/// "unknown KIND 'name' (known: a, b, ...); did you mean 'x', 'y' or 'z'?": at most
/// kMaxListedNames known names listed (with the total when there are more), at most
/// kMaxSuggestions suggestions, long names shortened, so the message stays short whatever
/// the size of `known`.
std::string unknown_name_message(const std::string& kind, std::string_view name,
                                 const std::vector<std::string>& known);

/// Throws SceneError("FILE: WHERE: WHAT") (or "FILE: WHAT" when `where` is empty).
[[noreturn]] void throw_scene_error(const std::string& file, const std::string& where,
                                    const std::string& what);

/// Parses JSON text strictly (no comments, no duplicate keys). Malformed input throws
/// SceneError "FILE: malformed JSON at line L, column C: reason"; a number too large for a
/// double throws "FILE: ITEM: must be finite (got 1e999)".
Json parse_json_text(const std::string& text, const std::string& file);

/// A JSON value together with where it sits in the document.
class Node {
 public:
  Node(const std::string& file, const Json& value, std::string label, std::string field);

  const Json& json() const { return *value_; }
  const std::string& file() const { return *file_; }

  /// "LABEL: FIELD", "LABEL", "FIELD", or "top level".
  std::string where() const;
  [[noreturn]] void fail(const std::string& what) const;

  /// The same value, addressed as a new item (field path reset).
  Node relabel(std::string label) const;

  // ---- objects ---------------------------------------------------------------------------
  void expect_object() const;
  /// Fails on the first key that is not in `known`, suggesting the closest known key.
  void check_fields(const std::vector<std::string>& known) const;
  bool has(const std::string& key) const;
  std::optional<Node> get(const std::string& key) const;
  /// Fails with "missing required field 'key'" when absent.
  Node require(const std::string& key) const;

  // ---- arrays ----------------------------------------------------------------------------
  void expect_array() const;
  std::size_t size() const;
  Node element(std::size_t index) const;

  // ---- scalars ---------------------------------------------------------------------------
  /// A finite number.
  double number() const;
  double positive() const;
  /// A finite number >= 0.
  double non_negative() const;
  /// An integral number in [min_value, INT_MAX].
  int integer(int min_value) const;
  /// An integral number in [0, 2^32 - 1] (a bit mask).
  std::uint32_t uint32() const;
  /// true or false.
  bool boolean() const;
  std::string string() const;
  /// A string equal to one of `choices`; returns its index.
  std::size_t one_of(const std::vector<std::string>& choices) const;
  /// Exactly three finite numbers.
  Vec3 vec3() const;
  /// Exactly four finite numbers.
  std::array<double, 4> vec4() const;

 private:
  Node child_node(const Json& value, std::string field) const;
  std::vector<double> numbers(std::size_t count) const;

  const std::string* file_;
  const Json* value_;
  std::string label_;
  std::string field_;
};

/// JSON type name used in messages ("number", "string", "array", "object", "boolean", "null").
std::string type_name(const Json& value);

}  // namespace mabd::io
