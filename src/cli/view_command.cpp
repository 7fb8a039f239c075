// `mabd view RUN.glb [--stats STATS.jsonl] [-o page.html] [--serve [--port P]]`: writes one
// self-contained HTML page that plays the run with three.js and charts its statistics with
// uPlot. The page inlines the JavaScript bundle and the CSS (compiled into this program from
// viewer/, see cmake/ViewerBundle.cmake), the .glb (base64) and the stats (JSON), so it opens
// from file:// without a network. --serve also serves it on http://127.0.0.1:PORT/.
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/http_server.h"

namespace mabd::cli {

// Defined in the source generated from the viewer bundle at build time.
namespace viewer_assets {
bool available();
std::string_view script();
std::string_view style();
}  // namespace viewer_assets

namespace {

std::string read_file(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw UsageError(path + ": is a directory");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(path + ": cannot open file");
  std::ostringstream data;
  data << in.rdbuf();
  if (in.bad()) throw UsageError(path + ": cannot read file");
  return data.str();
}

std::uint32_t le32(const std::string& data, std::size_t offset) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) {
    v = (v << 8) | static_cast<unsigned char>(data[offset + static_cast<std::size_t>(i)]);
  }
  return v;
}

/// Checks the binary glTF container: header, version 2, length, a JSON first chunk.
void check_glb(const std::string& path, const std::string& data) {
  if (data.size() < 12 || data.compare(0, 4, "glTF") != 0) {
    throw UsageError(path + ": not a binary glTF file (.glb; write one with mabd run --out x.glb)");
  }
  const std::uint32_t version = le32(data, 4), length = le32(data, 8);
  if (version != 2) {
    throw UsageError(path + ": unsupported glTF version " + std::to_string(version) +
                     " (expected 2)");
  }
  if (length != data.size()) {
    throw UsageError(path + ": truncated or damaged glTF file (header says " +
                     std::to_string(length) + " bytes, file has " + std::to_string(data.size()) +
                     ")");
  }
  if (data.size() < 20 || le32(data, 16) != 0x4E4F534Au /* "JSON" */ ||
      20 + static_cast<std::size_t>(le32(data, 12)) > data.size()) {
    throw UsageError(path + ": damaged glTF file (no JSON chunk)");
  }
  try {
    const auto json = nlohmann::json::parse(data.begin() + 20, data.begin() + 20 + le32(data, 12));
    if (!json.is_object() || !json.contains("asset")) throw std::runtime_error("no asset");
  } catch (const std::exception&) {
    throw UsageError(path + ": damaged glTF file (its JSON chunk is not a glTF document)");
  }
}

/// Reads a stats file (one JSON object per line, from `mabd run --stats`) into columns:
/// {"time": [...], "kinetic_energy": [...], ...}, keys in order of first appearance, null
/// where a line lacks a key.
nlohmann::ordered_json read_stats(const std::string& path) {
  std::istringstream in(read_file(path));
  nlohmann::ordered_json columns = nlohmann::ordered_json::object();
  std::size_t rows = 0;
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    nlohmann::ordered_json j;
    try {
      j = nlohmann::ordered_json::parse(line);
    } catch (const nlohmann::json::parse_error&) {
      if (in.eof()) {  // an unterminated last line: a run killed while writing it
        std::fprintf(stderr, "mabd: warning: %s:%d: last line is cut (the run was killed while "
                             "writing it); skipped\n", path.c_str(), line_no);
        break;
      }
      throw UsageError(path + ":" + std::to_string(line_no) + ": not a JSON object");
    }
    if (!j.is_object() || !j.contains("time") || !j["time"].is_number()) {
      throw UsageError(path + ":" + std::to_string(line_no) +
                       ": expected a stats object with a numeric \"time\" field");
    }
    for (auto& [key, value] : j.items()) {
      auto& col = columns[key];
      if (col.is_null()) col = nlohmann::ordered_json::array();
      while (col.size() < rows) col.push_back(nullptr);
      col.push_back(value);
    }
    ++rows;
    for (auto& [key, col] : columns.items()) {
      while (col.size() < rows) col.push_back(nullptr);
    }
  }
  if (rows == 0) throw UsageError(path + ": no stats lines");
  return columns;
}

std::string base64(const std::string& data) {
  static constexpr char kAlphabet[] =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((data.size() + 2) / 3 * 4);
  std::size_t i = 0;
  for (; i + 2 < data.size(); i += 3) {
    const std::uint32_t v = (static_cast<unsigned char>(data[i]) << 16) |
                            (static_cast<unsigned char>(data[i + 1]) << 8) |
                            static_cast<unsigned char>(data[i + 2]);
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += kAlphabet[(v >> 6) & 63];
    out += kAlphabet[v & 63];
  }
  if (i < data.size()) {
    std::uint32_t v = static_cast<unsigned char>(data[i]) << 16;
    if (i + 1 < data.size()) v |= static_cast<unsigned char>(data[i + 1]) << 8;
    out += kAlphabet[(v >> 18) & 63];
    out += kAlphabet[(v >> 12) & 63];
    out += i + 1 < data.size() ? kAlphabet[(v >> 6) & 63] : '=';
    out += '=';
  }
  return out;
}

/// JSON text safe inside a <script> element: "</" becomes the equivalent "<\/".
std::string script_json(const nlohmann::ordered_json& value) {
  const std::string text = value.dump();
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    out += text[i];
    if (text[i] == '<' && i + 1 < text.size() && text[i + 1] == '/') out += '\\';
  }
  return out;
}

std::string html_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string default_output(const std::string& glb) {
  std::filesystem::path p(glb);
  p.replace_extension(".html");
  return p.string();
}

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

int view_command(const ViewOptions& options) {
  if (!viewer_assets::available()) {
    std::fflush(stdout);
    std::fprintf(stderr,
                 "mabd: view: this mabd was built without the web viewer bundle (npm was not "
                 "found when CMake configured the build); install Node.js and npm (Debian: "
                 "apt-get install nodejs npm, or run scripts/bootstrap.sh), then re-run cmake "
                 "and rebuild\n");
    return kExitFailure;
  }
  const std::string output = options.output.empty() ? default_output(options.glb) : options.output;
  if (!ends_with(output, ".html") && !ends_with(output, ".htm")) {
    throw UsageError("-o: unsupported output '" + output + "' (supported: .html)");
  }
  if (options.serve && (options.port < 0 || options.port > 65535)) {
    throw UsageError("--port " + std::to_string(options.port) + ": not a port number (0 to 65535)");
  }

  const std::string glb = read_file(options.glb);
  check_glb(options.glb, glb);
  nlohmann::ordered_json stats = nullptr;
  if (!options.stats.empty()) stats = read_stats(options.stats);

  const std::string glb_name = std::filesystem::path(options.glb).filename().string();
  nlohmann::ordered_json meta = nlohmann::ordered_json::object();
  meta["title"] = glb_name;
  meta["glb"] = glb_name;
  meta["stats"] = nullptr;
  if (!options.stats.empty()) {
    meta["stats"] = std::filesystem::path(options.stats).filename().string();
  }
  meta["generator"] = std::string("mabd ") + kVersion;

  const std::string_view script = viewer_assets::script();
  const std::string_view style = viewer_assets::style();
  const std::string encoded = base64(glb);
  const std::string stats_json = script_json(stats);
  std::string page;
  page.reserve(encoded.size() + stats_json.size() + script.size() + style.size() + 4096);
  page += "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  page += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  page += "<meta name=\"generator\" content=\"mabd ";
  page += kVersion;
  page += "\">\n<title>" + html_escape(glb_name) + " \xE2\x80\x94 mabd viewer</title>\n<style>\n";
  page += style;
  page += "\n</style>\n</head>\n<body>\n<div id=\"mabd-viewer\"></div>\n";
  page += "<script id=\"mabd-meta\" type=\"application/json\">" + script_json(meta) + "</script>\n";
  page += "<script id=\"mabd-stats\" type=\"application/json\">" + stats_json + "</script>\n";
  page += "<script id=\"mabd-glb\" type=\"application/octet-stream\">";
  page += encoded;
  page += "</script>\n<script>\n";
  page += script;
  page += "\n</script>\n</body>\n</html>\n";

  const auto write_page = [&] {
    std::ofstream file(output, std::ios::binary);
    if (!file || !file.write(page.data(), static_cast<std::streamsize>(page.size())) ||
        !file.flush()) {
      throw OutputError(output + ": cannot write");
    }
    std::printf("%s\n", output.c_str());
    std::fflush(stdout);
  };
  if (!options.serve) {
    write_page();
    return kExitOk;
  }
  // The page is written once the port is bound, so that a busy port leaves no file behind.
  serve_page(page, options.port, [&](int port) {
    write_page();
    std::printf("Serving at http://127.0.0.1:%d/ (Ctrl-C to stop)\n", port);
    std::fflush(stdout);
  });
  std::fprintf(stderr, "mabd: view: server stopped\n");
  return kExitOk;
}

}  // namespace mabd::cli
