#include "io/json_reader.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <climits>
#include <cmath>
#include <iterator>
#include <set>
#include <utility>

#include "mabd/error.h"

namespace mabd::io {

std::string format_number(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buffer[64];
  auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  if (result.ec != std::errc()) return std::to_string(value);
  return std::string(buffer, result.ptr);
}

std::string one_line(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  return out;
}

namespace {

char lower_char(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

/// Optimal string alignment distance ignoring ASCII case, or `limit + 1` once it is certain
/// to exceed `limit`. Three rolling rows: no allocation per call beyond them.
std::size_t bounded_distance(std::string_view a, std::string_view b, std::size_t limit,
                             std::vector<std::size_t>& rows) {
  const std::size_t n = a.size(), m = b.size();
  if ((n > m ? n - m : m - n) > limit) return limit + 1;
  rows.assign(3 * (m + 1), 0);
  std::size_t* before = rows.data();          // row i - 2
  std::size_t* previous = before + (m + 1);   // row i - 1
  std::size_t* current = previous + (m + 1);  // row i
  for (std::size_t j = 0; j <= m; ++j) previous[j] = j;
  for (std::size_t i = 1; i <= n; ++i) {
    current[0] = i;
    std::size_t row_min = current[0];
    const char ai = lower_char(a[i - 1]);
    for (std::size_t j = 1; j <= m; ++j) {
      const char bj = lower_char(b[j - 1]);
      const std::size_t cost = ai == bj ? 0 : 1;
      std::size_t d = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost});
      if (i > 1 && j > 1 && ai == lower_char(b[j - 2]) && lower_char(a[i - 2]) == bj) {
        d = std::min(d, before[j - 2] + 1);
      }
      current[j] = d;
      row_min = std::min(row_min, d);
    }
    if (row_min > limit) return limit + 1;
    std::size_t* recycled = before;
    before = previous;
    previous = current;
    current = recycled;
  }
  return std::min(previous[m], limit + 1);
}

std::string join(const std::vector<std::string>& items, const char* separator) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += separator;
    out += items[i];
  }
  return out;
}

/// `name` as shown in a message: at most kMaxShownName characters.
std::string shown_name(std::string_view name) {
  constexpr std::size_t kMaxShownName = 60;
  if (name.size() <= kMaxShownName) return std::string(name);
  return std::string(name.substr(0, kMaxShownName)) + "...";
}

}  // namespace

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> rows;
  return bounded_distance(a, b, std::max(a.size(), b.size()), rows);
}

std::vector<std::string> close_matches(std::string_view word,
                                       const std::vector<std::string>& candidates,
                                       std::size_t max_count) {
  // Longer words are no typos of a name worth suggesting (and cost length^2 to compare).
  if (max_count == 0 || word.size() > kMaxSuggestedLength) return {};
  // A typo is at most a third of the word's letters (1 to 3 edits).
  const std::size_t limit =
      std::max<std::size_t>(1, std::min<std::size_t>(3, (word.size() + 1) / 3));
  struct Match {
    std::size_t distance;
    std::size_t index;
  };
  std::vector<Match> best;  // sorted by distance, then by candidate order
  std::vector<std::size_t> rows;
  std::size_t compared = 0;
  for (std::size_t i = 0; i < candidates.size() && compared < kMaxCompared; ++i) {
    const std::string& candidate = candidates[i];
    const std::size_t gap = candidate.size() > word.size() ? candidate.size() - word.size()
                                                           : word.size() - candidate.size();
    if (gap > limit) continue;  // cannot be within the limit: not worth a comparison
    if (best.size() == max_count && best.back().distance == 0) break;
    ++compared;
    const std::size_t worst = best.size() < max_count ? limit : best.back().distance - 1;
    const std::size_t d = bounded_distance(word, candidate, worst, rows);
    if (d > worst) continue;
    const auto at = std::upper_bound(best.begin(), best.end(), d,
                                     [](std::size_t v, const Match& m) { return v < m.distance; });
    best.insert(at, Match{d, i});
    if (best.size() > max_count) best.pop_back();
  }
  std::vector<std::string> out;
  for (const Match& m : best) out.push_back(candidates[m.index]);
  return out;
}

std::optional<std::string> closest_match(std::string_view word,
                                         const std::vector<std::string>& candidates) {
  std::vector<std::string> matches = close_matches(word, candidates, 1);
  if (matches.empty()) return std::nullopt;
  return std::move(matches.front());
}

std::string unknown_name_message(const std::string& kind, std::string_view name,
                                 const std::vector<std::string>& known) {
  std::string listed;
  for (std::size_t i = 0; i < known.size() && i < kMaxListedNames; ++i) {
    listed += (i ? ", " : "") + shown_name(known[i]);
  }
  if (known.size() > kMaxListedNames) {
    listed += ", ... (" + std::to_string(known.size()) + " in all)";
  }
  std::string what = "unknown " + kind + " '" + shown_name(name) + "' (known: " +
                     (known.empty() ? std::string("none") : listed) + ")";
  const std::vector<std::string> matches = close_matches(name, known, kMaxSuggestions);
  for (std::size_t i = 0; i < matches.size(); ++i) {
    what += i == 0 ? "; did you mean '" : i + 1 == matches.size() ? " or '" : ", '";
    what += shown_name(matches[i]) + "'";
  }
  if (!matches.empty()) what += "?";
  return what;
}

void throw_scene_error(const std::string& file, const std::string& where,
                       const std::string& what) {
  std::string message = file + ": ";
  if (!where.empty()) message += where + ": ";
  message += what;
  throw SceneError(one_line(message));
}

std::string type_name(const Json& value) {
  switch (value.type()) {
    case Json::value_t::null: return "null";
    case Json::value_t::boolean: return "boolean";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float: return "number";
    case Json::value_t::string: return "string";
    case Json::value_t::array: return "array";
    case Json::value_t::object: return "object";
    default: return value.type_name();
  }
}

// ---- strict parsing ---------------------------------------------------------------------

namespace {

/// Where the parser is in the document: one frame per open object or array.
struct Frame {
  bool is_object = true;
  std::string key;                  // object: the key whose value is being read
  long index = -1;                  // array: index of the element being read
  std::set<std::string> keys;       // object: keys seen so far
  std::optional<std::string> name;  // object: value of a "name" string member, once seen
};

/// Renders a document location in the loader's item style: "bodies[1] 'rod': shape.size",
/// "joints[0] 'pivot': axis", "materials 'wood': density", "settings.dt".
std::string render_location(const std::vector<Frame>& frames, std::size_t count,
                            std::optional<long> pending_array_index = std::nullopt) {
  // path[i] is the member/element of frames[i] that is open.
  struct Step {
    bool is_key;
    std::string key;
    long index;
  };
  std::vector<Step> path;
  for (std::size_t i = 0; i < count; ++i) {
    const Frame& f = frames[i];
    if (f.is_object) {
      path.push_back({true, f.key, 0});
    } else {
      const bool pending = i + 1 == count && pending_array_index.has_value();
      path.push_back({false, "", pending ? *pending_array_index : f.index});
    }
  }
  std::string label;
  std::size_t first = 0;
  if (path.size() >= 2 && path[0].is_key && (path[0].key == "bodies" || path[0].key == "joints") &&
      !path[1].is_key) {
    label = path[0].key + "[" + std::to_string(path[1].index) + "]";
    if (frames.size() > 2 && frames[2].is_object && frames[2].name) {
      label += " '" + *frames[2].name + "'";
    }
    first = 2;
  } else if (path.size() >= 2 && path[0].is_key && path[0].key == "materials" &&
             path[1].is_key) {
    label = "materials '" + path[1].key + "'";
    first = 2;
  }
  std::string field;
  for (std::size_t i = first; i < path.size(); ++i) {
    if (path[i].is_key) {
      if (!field.empty()) field += ".";
      field += path[i].key;
    } else {
      field += "[" + std::to_string(path[i].index) + "]";
    }
  }
  if (label.empty()) return field;
  if (field.empty()) return label;
  return label + ": " + field;
}

/// Builds the DOM while tracking the location, rejecting duplicate keys and recording errors.
/// (Implements the nlohmann SAX interface.)
class TrackingSax {
 public:
  using number_integer_t = Json::number_integer_t;
  using number_unsigned_t = Json::number_unsigned_t;
  using number_float_t = Json::number_float_t;
  using string_t = Json::string_t;
  using binary_t = Json::binary_t;

  explicit TrackingSax(Json& root) : root_(root) {}

  bool null() { return add(Json(nullptr)); }
  bool boolean(bool v) { return add(Json(v)); }
  bool number_integer(number_integer_t v) { return add(Json(v)); }
  bool number_unsigned(number_unsigned_t v) { return add(Json(v)); }
  bool number_float(number_float_t v, const string_t& /*text*/) { return add(Json(v)); }
  bool string(string_t& v) {
    if (!frames_.empty() && frames_.back().is_object && frames_.back().key == "name") {
      frames_.back().name = v;
    }
    return add(Json(v));
  }
  bool binary(binary_t& v) { return add(Json::binary(v)); }
  bool start_object(std::size_t /*size*/) {
    containers_.push_back(insert(Json::object()));
    frames_.push_back(Frame{});
    return true;
  }
  bool key(string_t& k) {
    Frame& top = frames_.back();
    if (!top.keys.insert(k).second) {
      duplicate_key = k;
      duplicate_location = render_location(frames_, frames_.size() - 1);
      return false;
    }
    top.key = k;
    return true;
  }
  bool end_object() {
    frames_.pop_back();
    containers_.pop_back();
    return true;
  }
  bool start_array(std::size_t /*size*/) {
    containers_.push_back(insert(Json::array()));
    Frame f;
    f.is_object = false;
    frames_.push_back(std::move(f));
    return true;
  }
  bool end_array() {
    frames_.pop_back();
    containers_.pop_back();
    return true;
  }
  template <class Exception>
  bool parse_error(std::size_t position, const std::string& last_token, const Exception& ex) {
    failed = true;
    error_position = position;
    error_id = ex.id;
    if (ex.id == 406) error_token = last_token;  // the number text, for the message
    error_what = ex.what();
    if (ex.id == 406) {
      // Number overflow: the failing value is the next member/element of the open container.
      std::optional<long> pending;
      if (!frames_.empty() && !frames_.back().is_object) pending = frames_.back().index + 1;
      error_location = render_location(frames_, frames_.size(), pending);
    }
    return false;
  }

  bool failed = false;
  std::size_t error_position = 0;
  std::string error_token;
  int error_id = 0;
  std::string error_what;
  std::string error_location;
  std::optional<std::string> duplicate_key;
  std::string duplicate_location;

 private:
  /// Stores `value` at the current location (root, next array element or current key) and
  /// returns where it now lives.
  Json* insert(Json&& value) {
    if (frames_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    Json& container = *containers_.back();
    Frame& top = frames_.back();
    if (top.is_object) {
      Json& slot = container[top.key];
      slot = std::move(value);
      return &slot;
    }
    ++top.index;
    container.push_back(std::move(value));
    return &container.back();
  }
  bool add(Json&& value) {
    insert(std::move(value));
    return true;
  }

  Json& root_;
  std::vector<Json*> containers_;  // open objects and arrays, parallel to frames_
  std::vector<Frame> frames_;
};

/// The reason part of an nlohmann message, without the "[json.exception...] parse error at
/// ...: " prefix.
std::string short_reason(const std::string& what) {
  std::string s = what;
  const std::size_t bracket = s.find("] ");
  if (s.rfind("[json.exception", 0) == 0 && bracket != std::string::npos) s = s.substr(bracket + 2);
  if (s.rfind("parse error", 0) == 0) {
    const std::size_t colon = s.find(": ");
    if (colon != std::string::npos) s = s.substr(colon + 2);
  }
  return s;
}

/// Where the characters of a run of blanks the lexer did not see were cut: `at` characters of
/// the text had been read when `count` characters were skipped.
struct BlankCut {
  std::size_t at;
  std::size_t count;
};

/// Input iterator over a JSON text that passes on at most kKeptBlanks characters of a run of
/// whitespace and skips the rest, recording the cuts. The lexer keeps every character it
/// skipped since the start of the last number, string or literal, and copies them, escaped
/// (up to 8 bytes each), for its error reports: a long run of blanks would otherwise cost
/// many times its size in memory before a one-line message. Blanks between tokens carry no
/// meaning, and a run inside a string is never cut (blanks there are data).
class BlankSqueezer {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  static constexpr std::size_t kKeptBlanks = 64;

  BlankSqueezer(const char* position, const char* end, std::vector<BlankCut>* cuts)
      : position_(position), end_(end), cuts_(cuts) {}

  reference operator*() const { return *position_; }
  BlankSqueezer& operator++() {
    const char c = *position_++;
    ++read_;
    if (in_string_) {
      if (escaped_) {
        escaped_ = false;
      } else if (c == '\\') {
        escaped_ = true;
      } else if (c == '"') {
        in_string_ = false;
      }
      blanks_ = 0;
      return *this;
    }
    if (c == '"') in_string_ = true;
    blanks_ = is_blank(c) ? blanks_ + 1 : 0;
    if (blanks_ >= kKeptBlanks && position_ != end_ && is_blank(*position_)) {
      const char* next = position_;
      while (next != end_ && is_blank(*next)) ++next;
      cuts_->push_back({read_, static_cast<std::size_t>(next - position_)});
      position_ = next;
    }
    return *this;
  }
  BlankSqueezer operator++(int) {
    BlankSqueezer before = *this;
    ++*this;
    return before;
  }
  bool operator==(const BlankSqueezer& other) const { return position_ == other.position_; }
  bool operator!=(const BlankSqueezer& other) const { return position_ != other.position_; }

 private:
  static bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

  const char* position_;
  const char* end_;
  std::vector<BlankCut>* cuts_;
  std::size_t read_ = 0;    // characters passed on so far
  std::size_t blanks_ = 0;  // length of the current run of blanks passed on
  bool in_string_ = false;
  bool escaped_ = false;
};

/// Offset in the text of the character the lexer saw as its `read`-th (0-based).
std::size_t text_offset(std::size_t read, const std::vector<BlankCut>& cuts) {
  std::size_t offset = read;
  for (const BlankCut& cut : cuts) {
    if (cut.at > read) break;
    offset += cut.count;
  }
  return offset;
}

}  // namespace

Json parse_json_text(const std::string& text, const std::string& file) {
  Json root;
  TrackingSax sax(root);
  bool ok = false;
  std::vector<BlankCut> cuts;
  try {
    const char* begin = text.data();
    const char* end = begin + text.size();
    ok = Json::sax_parse(BlankSqueezer(begin, end, &cuts), BlankSqueezer(end, end, &cuts), &sax,
                         Json::input_format_t::json, /*strict=*/true,
                         /*ignore_comments=*/false);
  } catch (const nlohmann::json::exception& e) {
    throw_scene_error(file, "", std::string("malformed JSON: ") + short_reason(e.what()));
  }
  if (ok) return root;
  if (sax.duplicate_key) {
    throw_scene_error(file, sax.duplicate_location.empty() ? "top level" : sax.duplicate_location,
                      "duplicate key '" + *sax.duplicate_key + "'");
  }
  if (sax.failed && sax.error_id == 406) {
    throw_scene_error(file, sax.error_location.empty() ? "top level" : sax.error_location,
                      "must be finite (got " + sax.error_token + ")");
  }
  // Line and column (1-based) of the character the parser stopped at.
  const std::size_t offset =
      text_offset(sax.error_position == 0 ? 0 : sax.error_position - 1, cuts);
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  throw_scene_error(file, "",
                    "malformed JSON at line " + std::to_string(line) + ", column " +
                        std::to_string(column) + ": " + short_reason(sax.error_what));
}

// ---- Node ---------------------------------------------------------------------------------

Node::Node(const std::string& file, const Json& value, std::string label, std::string field)
    : file_(&file), value_(&value), label_(std::move(label)), field_(std::move(field)) {}

std::string Node::where() const {
  if (label_.empty() && field_.empty()) return "top level";
  if (label_.empty()) return field_;
  if (field_.empty()) return label_;
  return label_ + ": " + field_;
}

void Node::fail(const std::string& what) const { throw_scene_error(*file_, where(), what); }

Node Node::relabel(std::string label) const { return Node(*file_, *value_, std::move(label), ""); }

Node Node::child_node(const Json& value, std::string field) const {
  return Node(*file_, value, label_, std::move(field));
}

void Node::expect_object() const {
  if (!value_->is_object()) fail("expected an object, got " + type_name(*value_));
}

void Node::check_fields(const std::vector<std::string>& known) const {
  expect_object();
  for (const auto& item : value_->items()) {
    if (std::find(known.begin(), known.end(), item.key()) != known.end()) continue;
    std::string what = "unknown field '" + item.key() + "'";
    if (auto suggestion = closest_match(item.key(), known)) {
      what += " (did you mean '" + *suggestion + "'?)";
    } else {
      what += " (known fields: " + join(known, ", ") + ")";
    }
    fail(what);
  }
}

bool Node::has(const std::string& key) const {
  return value_->is_object() && value_->contains(key);
}

std::optional<Node> Node::get(const std::string& key) const {
  expect_object();
  auto it = value_->find(key);
  if (it == value_->end()) return std::nullopt;
  return child_node(*it, field_.empty() ? key : field_ + "." + key);
}

Node Node::require(const std::string& key) const {
  auto node = get(key);
  if (!node) fail("missing required field '" + key + "'");
  return *node;
}

void Node::expect_array() const {
  if (!value_->is_array()) fail("expected an array, got " + type_name(*value_));
}

std::size_t Node::size() const { return value_->size(); }

Node Node::element(std::size_t index) const {
  expect_array();
  return child_node((*value_)[index], field_ + "[" + std::to_string(index) + "]");
}

double Node::number() const {
  if (!value_->is_number()) fail("expected a number, got " + type_name(*value_));
  const double v = value_->get<double>();
  if (!std::isfinite(v)) fail("must be finite (got " + format_number(v) + ")");
  return v;
}

double Node::positive() const {
  const double v = number();
  if (!(v > 0)) fail("must be positive (got " + format_number(v) + ")");
  return v;
}

double Node::non_negative() const {
  const double v = number();
  if (!(v >= 0)) fail("must be non-negative (got " + format_number(v) + ")");
  return v;
}

int Node::integer(int min_value) const {
  const double v = number();
  if (v != std::floor(v)) fail("must be an integer (got " + format_number(v) + ")");
  if (v < min_value) {
    fail("must be at least " + std::to_string(min_value) + " (got " + format_number(v) + ")");
  }
  if (v > static_cast<double>(INT_MAX)) {
    fail("must be at most " + std::to_string(INT_MAX) + " (got " + format_number(v) + ")");
  }
  return static_cast<int>(v);
}

std::uint32_t Node::uint32() const {
  if (!value_->is_number()) {
    fail("expected an integer in [0, 4294967295], got " + type_name(*value_));
  }
  const double v = number();
  if (v != std::floor(v)) fail("must be an integer (got " + format_number(v) + ")");
  if (v < 0 || v > 4294967295.0) {
    fail("must be in [0, 4294967295] (got " + format_number(v) + ")");
  }
  return static_cast<std::uint32_t>(v);
}

bool Node::boolean() const {
  if (!value_->is_boolean()) fail("expected a boolean, got " + type_name(*value_));
  return value_->get<bool>();
}

std::string Node::string() const {
  if (!value_->is_string()) fail("expected a string, got " + type_name(*value_));
  return value_->get<std::string>();
}

std::size_t Node::one_of(const std::vector<std::string>& choices) const {
  const std::string s = string();
  auto it = std::find(choices.begin(), choices.end(), s);
  if (it != choices.end()) return static_cast<std::size_t>(it - choices.begin());
  std::string what = "unknown value '" + s + "' (expected one of: " + join(choices, ", ") + ")";
  if (auto suggestion = closest_match(s, choices)) what += "; did you mean '" + *suggestion + "'?";
  fail(what);
}

std::vector<double> Node::numbers(std::size_t count) const {
  if (!value_->is_array()) {
    fail("expected an array of " + std::to_string(count) + " numbers, got " +
         type_name(*value_));
  }
  if (value_->size() != count) {
    fail("expected an array of " + std::to_string(count) + " numbers, got " +
         std::to_string(value_->size()) + " element" + (value_->size() == 1 ? "" : "s"));
  }
  std::vector<double> out(count);
  for (std::size_t i = 0; i < count; ++i) out[i] = element(i).number();
  return out;
}

Vec3 Node::vec3() const {
  const auto v = numbers(3);
  return Vec3(v[0], v[1], v[2]);
}

std::array<double, 4> Node::vec4() const {
  const auto v = numbers(4);
  return {v[0], v[1], v[2], v[3]};
}

}  // namespace mabd::io
