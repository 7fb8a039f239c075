// Small helpers shared by the tests that run the `mabd` program and read its files.
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace mabd::test {

/// The what() of the exception of type E that f() throws ("" if it throws none).
template <class E, class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const E& e) {
    return e.what();
  }
  return "";
}

/// Single-quotes `s` for a POSIX shell.
inline std::string quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') {
      q += "'\\''";
    } else {
      q += c;
    }
  }
  return q + "'";
}

/// Whole file as a string ("" if it cannot be read).
inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

/// Exit code and captured output of a shell command.
struct CommandResult {
  int code = -1;
  std::string out;
  std::string err;
};

/// Runs `command` (a shell command line without redirections) with stdin from /dev/null,
/// capturing stdout and stderr through files in `dir`.
inline CommandResult run_captured(const std::string& command, const std::filesystem::path& dir) {
  const std::filesystem::path out = dir / "stdout.txt", err = dir / "stderr.txt";
  const std::string line =
      command + " </dev/null >" + quote(out.string()) + " 2>" + quote(err.string());
  const int status = std::system(line.c_str());
  CommandResult r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = read_text(out);
  r.err = read_text(err);
  return r;
}

}  // namespace mabd::test
