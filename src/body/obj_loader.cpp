// Wavefront OBJ reader: vertex positions and faces (fanned into triangles) of a triangle mesh.
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "mabd/error.h"
#include "mabd/shape.h"

namespace mabd {
namespace {

/// Records that carry nothing the mesh needs (normals, texture coordinates, grouping,
/// materials, smoothing, point and line elements).
const std::set<std::string, std::less<>> kIgnoredRecords = {
    "vn", "vt", "vp", "o", "g", "s", "usemtl", "mtllib", "l", "p"};

/// Reading position, used to prefix error messages with "FILE:LINE: ".
struct Cursor {
  const std::string& path;
  int line = 0;

  [[noreturn]] void fail(const std::string& what) const {
    throw InvalidArgument(path + ":" + std::to_string(line) + ": " + what);
  }
};

std::vector<std::string_view> split_whitespace(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    const std::size_t start = i;
    while (i < s.size() && !std::isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

double parse_coordinate(std::string_view token, const Cursor& at) {
  double value = 0;
  const char* begin = token.data();
  const char* end = begin + token.size();
  if (token.size() > 1 && token[0] == '+' && token[1] != '-') ++begin;  // from_chars rejects '+'
  const auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || ptr != end) {
    at.fail("vertex coordinate '" + std::string(token) + "' is not a number");
  }
  if (!std::isfinite(value)) at.fail("vertex coordinate '" + std::string(token) + "' is not finite");
  return value;
}

/// 'v x y z [w]' (extra values such as w or vertex colours are checked and ignored) (m).
Vec3 parse_vertex(const std::vector<std::string_view>& tokens, const Cursor& at) {
  const std::size_t n = tokens.size() - 1;
  if (n < 3 || n > 7) {
    at.fail("vertex record needs 3 coordinates (x y z [w]), got " + std::to_string(n) + " values");
  }
  Vec3 v;
  for (int k = 0; k < 3; ++k) v[k] = parse_coordinate(tokens[k + 1], at);
  for (std::size_t k = 4; k <= n; ++k) parse_coordinate(tokens[k], at);
  return v;
}

/// One face corner "i", "i/t", "i/t/n" or "i//n": returns the 0-based vertex index.
/// Negative indices count back from the last vertex read so far.
int parse_corner(std::string_view token, int vertex_count, const Cursor& at) {
  const std::string_view index = token.substr(0, token.find('/'));
  long long i = 0;
  const char* end = index.data() + index.size();
  const auto [ptr, ec] = std::from_chars(index.data(), end, i);
  if (index.empty() || ec != std::errc() || ptr != end) {
    at.fail("face vertex '" + std::string(token) + "' does not start with an integer index");
  }
  if (i == 0) at.fail("face vertex index 0 is invalid (OBJ indices start at 1)");
  const long long resolved = i > 0 ? i - 1 : vertex_count + i;
  if (resolved < 0 || resolved >= vertex_count) {
    at.fail("face vertex index " + std::to_string(i) + " is out of range (" +
            std::to_string(vertex_count) + " vertices defined so far)");
  }
  return static_cast<int>(resolved);
}

/// 'f a b c ...': a polygon fanned into triangles (a b c), (a c d), ...
void parse_face(const std::vector<std::string_view>& tokens, TriangleMesh& mesh,
                const Cursor& at) {
  if (tokens.size() < 4) {
    at.fail("face record needs at least 3 vertices, got " + std::to_string(tokens.size() - 1));
  }
  const int count = static_cast<int>(mesh.vertices.size());
  std::vector<int> corners;
  for (std::size_t k = 1; k < tokens.size(); ++k) {
    corners.push_back(parse_corner(tokens[k], count, at));
  }
  for (std::size_t k = 1; k + 1 < corners.size(); ++k) {
    mesh.triangles.push_back({corners[0], corners[k], corners[k + 1]});
  }
}

void parse_line(std::string_view line, TriangleMesh& mesh, const Cursor& at) {
  line = line.substr(0, line.find('#'));
  const auto tokens = split_whitespace(line);
  if (tokens.empty()) return;
  const std::string_view keyword = tokens[0];
  if (keyword == "v") {
    mesh.vertices.push_back(parse_vertex(tokens, at));
  } else if (keyword == "f") {
    parse_face(tokens, mesh, at);
  } else if (!kIgnoredRecords.contains(keyword)) {
    at.fail("unknown record '" + std::string(keyword) + "'");
  }
}

}  // namespace

TriangleMesh load_obj(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InvalidArgument(path + ": cannot open");
  TriangleMesh mesh;
  Cursor at{path};
  std::string line;
  while (std::getline(in, line)) {
    ++at.line;
    parse_line(line, mesh, at);
  }
  if (in.bad()) throw InvalidArgument(path + ": read error");
  if (mesh.triangles.empty()) throw InvalidArgument(path + ": no faces (f records) found");
  return mesh;
}

}  // namespace mabd
