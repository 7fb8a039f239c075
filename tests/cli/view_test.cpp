// `mabd view`: a .glb run (and its stats) becomes one self-contained HTML page; bad input gets
// a one-line error and exit code 2; --serve answers GET / on the loopback interface.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "test_util.h"

namespace {

using mabd::test::lines_of;
using mabd::test::quote;
using mabd::test::read_text;

namespace fs = std::filesystem;

int run(const std::string& args, const fs::path& out, const fs::path& err) {
  const std::string cmd = quote(MABD_CLI_PATH) + " " + args + " > " + quote(out.string()) +
                          " 2> " + quote(err.string());
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string base64(const std::string& data) {
  static const char* abc = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  int val = 0, bits = -6;
  for (unsigned char c : data) {
    val = (val << 8) + c;
    bits += 8;
    while (bits >= 0) {
      out += abc[(val >> bits) & 0x3F];
      bits -= 6;
    }
  }
  if (bits > -6) out += abc[((val << 8) >> (bits + 8)) & 0x3F];
  while (out.size() % 4) out += '=';
  return out;
}

/// Text of the inline <script id="ID" ...>...</script> element.
std::string script_element(const std::string& html, const std::string& id) {
  const std::size_t tag = html.find("<script id=\"" + id + "\"");
  if (tag == std::string::npos) return "";
  const std::size_t start = html.find('>', tag) + 1;
  return html.substr(start, html.find("</script>", start) - start);
}

/// A run of the pendulum scene with a .glb and stats, made once for all tests.
class ViewCommand : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = fs::temp_directory_path() / ("mabd_view_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    const std::string scene = std::string(MABD_SOURCE_DIR) + "/scenes/pendulum.json";
    ASSERT_EQ(run("run " + quote(scene) + " --steps 100 --quiet --out " +
                      quote((dir_ / "run.glb").string()) + " --stats " +
                      quote((dir_ / "stats.jsonl").string()),
                  dir_ / "out.txt", dir_ / "err.txt"),
              0)
        << read_text(dir_ / "err.txt");
  }
  static void TearDownTestSuite() { fs::remove_all(dir_); }

  void SetUp() override {
    // A build without npm has no viewer bundle: `mabd view` then says so (exit 1).
    if (run("view " + quote((dir_ / "run.glb").string()) + " -o " +
                quote((dir_ / "probe.html").string()),
            dir_ / "out.txt", dir_ / "err.txt") == 1 &&
        read_text(dir_ / "err.txt").find("without the web viewer bundle") != std::string::npos) {
      GTEST_SKIP() << read_text(dir_ / "err.txt");
    }
  }

  static fs::path dir_;
};

fs::path ViewCommand::dir_;

TEST_F(ViewCommand, view_WritesASelfContainedPageNextToTheGlb) {
  const fs::path out = dir_ / "out.txt", err = dir_ / "err.txt";
  ASSERT_EQ(run("view " + quote((dir_ / "run.glb").string()) + " --stats " +
                    quote((dir_ / "stats.jsonl").string()),
                out, err),
            0)
      << read_text(err);
  const fs::path page = dir_ / "run.html";
  EXPECT_EQ(read_text(out), page.string() + "\n");
  const std::string html = read_text(page);
  ASSERT_FALSE(html.empty());
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);

  // The .glb, base64, byte for byte.
  EXPECT_EQ(script_element(html, "mabd-glb"), base64(read_text(dir_ / "run.glb")));

  // The stats as columns: one value per step.
  const auto stats = nlohmann::json::parse(script_element(html, "mabd-stats"));
  ASSERT_TRUE(stats.is_object());
  ASSERT_TRUE(stats.contains("time"));
  EXPECT_EQ(stats["time"].size(), 100u);
  EXPECT_NEAR(stats["time"][0].get<double>(), 0.001, 1e-12);  // pendulum: dt = 1e-3
  for (const char* key : {"kinetic_energy", "potential_energy", "linear_momentum",
                          "angular_momentum", "residual", "joint_residual",
                          "newton_iterations", "wall_ms", "contacts", "max_penetration",
                          "detect_ms", "body_ms", "dual_ms"}) {
    ASSERT_TRUE(stats.contains(key)) << key;
    EXPECT_EQ(stats[key].size(), 100u) << key;
  }
  EXPECT_EQ(stats["linear_momentum"][5].size(), 3u);

  // Self-contained: inline style and script, nothing loaded from elsewhere.
  EXPECT_NE(html.find("<style>"), std::string::npos);
  EXPECT_NE(html.find("mabd-viewer"), std::string::npos);
  EXPECT_GT(html.size(), 100000u);  // the three.js + uPlot bundle is inlined
  EXPECT_EQ(html.find("<script src"), std::string::npos);
  EXPECT_EQ(html.find("<link"), std::string::npos);
  const auto meta = nlohmann::json::parse(script_element(html, "mabd-meta"));
  EXPECT_EQ(meta["glb"], "run.glb");
  EXPECT_EQ(meta["stats"], "stats.jsonl");
}

TEST_F(ViewCommand, view_WithoutStatsAndWithAnOutputPath) {
  const fs::path out = dir_ / "out.txt", err = dir_ / "err.txt";
  const fs::path page = dir_ / "sub dir" / "page.html";
  fs::create_directories(page.parent_path());
  ASSERT_EQ(run("view " + quote((dir_ / "run.glb").string()) + " -o " + quote(page.string()), out,
                err),
            0)
      << read_text(err);
  EXPECT_EQ(read_text(out), page.string() + "\n");
  const std::string html = read_text(page);
  EXPECT_EQ(script_element(html, "mabd-stats"), "null");
  EXPECT_EQ(script_element(html, "mabd-glb"), base64(read_text(dir_ / "run.glb")));
}

TEST_F(ViewCommand, view_BadInputIsAOneLineErrorWithExitCode2) {
  const fs::path out = dir_ / "out.txt", err = dir_ / "err.txt";
  const std::string glb = quote((dir_ / "run.glb").string());
  auto expect_error = [&](const std::string& args, const std::string& message) {
    SCOPED_TRACE(args);
    EXPECT_EQ(run(args, out, err), 2);
    const std::string text = read_text(err);
    EXPECT_EQ(lines_of(text).size(), 1u) << text;
    EXPECT_NE(text.find(message), std::string::npos) << text;
  };
  expect_error("view " + quote((dir_ / "missing.glb").string()), "missing.glb: cannot open file");
  expect_error("view " + quote((dir_ / "stats.jsonl").string()),
               "stats.jsonl: not a binary glTF file");
  {
    const std::string data = read_text(dir_ / "run.glb");
    std::ofstream(dir_ / "cut.glb", std::ios::binary) << data.substr(0, data.size() / 2);
  }
  expect_error("view " + quote((dir_ / "cut.glb").string()), "cut.glb: truncated or damaged");
  std::ofstream(dir_ / "bad.jsonl") << "{\"time\": 0.1}\nnot json\n";
  expect_error("view " + glb + " --stats " + quote((dir_ / "bad.jsonl").string()),
               "bad.jsonl:2: not a JSON object");
  std::ofstream(dir_ / "notime.jsonl") << "{\"step\": 1}\n";
  expect_error("view " + glb + " --stats " + quote((dir_ / "notime.jsonl").string()),
               "notime.jsonl:1: expected a stats object");
  expect_error("view " + glb + " --stats " + quote((dir_ / "none.jsonl").string()),
               "none.jsonl: cannot open file");
  expect_error("view " + glb + " -o " + quote((dir_ / "x.png").string()), "supported: .html");
  expect_error("view " + glb + " --port 8001", "--port requires --serve");
  EXPECT_FALSE(fs::exists(dir_ / "x.png"));
}

// ---- --serve ------------------------------------------------------------------------------

/// Starts `mabd view ... --serve --port 0` with stdout and stderr in files.
pid_t start_server(const fs::path& glb, const fs::path& out, const fs::path& err, int port = 0) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::FILE* o = std::freopen(out.c_str(), "w", stdout);
    std::FILE* e = std::freopen(err.c_str(), "w", stderr);
    if (o == nullptr || e == nullptr) ::_exit(126);
    const std::string port_text = std::to_string(port);
    ::execl(MABD_CLI_PATH, MABD_CLI_PATH, "view", glb.c_str(), "--serve", "--port",
            port_text.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  return pid;
}

/// Waits for the "http://127.0.0.1:PORT/" line; returns the port (0 on timeout).
int wait_for_url(const fs::path& out) {
  const std::regex url("http://127\\.0\\.0\\.1:([0-9]+)/");
  for (int i = 0; i < 200; ++i) {
    std::smatch m;
    const std::string text = read_text(out);
    if (std::regex_search(text, m, url)) return std::stoi(m[1]);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return 0;
}

std::string http_get(int port, const std::string& target) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string response;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0) {
    const std::string request = "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    if (::send(fd, request.data(), request.size(), 0) == static_cast<ssize_t>(request.size())) {
      char buffer[65536];
      ssize_t n;
      while ((n = ::recv(fd, buffer, sizeof buffer, 0)) > 0) response.append(buffer, n);
    }
  }
  ::close(fd);
  return response;
}

int stop(pid_t pid) {
  ::kill(pid, SIGINT);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST_F(ViewCommand, view_ServeAnswersGetSlashWithThePage) {
  const fs::path out = dir_ / "serve_out.txt", err = dir_ / "serve_err.txt";
  const pid_t pid = start_server(dir_ / "run.glb", out, err);
  ASSERT_GT(pid, 0);
  const int port = wait_for_url(out);
  if (port == 0) {
    stop(pid);
    FAIL() << "no URL printed: " << read_text(out) << read_text(err);
  }
  const std::string page = read_text(dir_ / "run.html");
  const std::string response = http_get(port, "/");
  EXPECT_EQ(response.rfind("HTTP/1.1 200 OK\r\n", 0), 0u) << response.substr(0, 200);
  EXPECT_NE(response.find("Content-Type: text/html; charset=utf-8\r\n"), std::string::npos);
  EXPECT_NE(response.find("Content-Length: " + std::to_string(page.size()) + "\r\n"),
            std::string::npos);
  const std::size_t body = response.find("\r\n\r\n");
  ASSERT_NE(body, std::string::npos);
  EXPECT_TRUE(response.compare(body + 4, std::string::npos, page) == 0) << "body differs from the file";
  EXPECT_EQ(http_get(port, "/nothing").rfind("HTTP/1.1 404", 0), 0u);

  // The port is taken: a second server says so (exit 2, one line).
  const fs::path out2 = dir_ / "serve_out2.txt", err2 = dir_ / "serve_err2.txt";
  const pid_t second = start_server(dir_ / "run.glb", out2, err2, port);
  int status = 0;
  ::waitpid(second, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 2) << read_text(err2);
  EXPECT_NE(read_text(err2).find("cannot listen"), std::string::npos) << read_text(err2);
  EXPECT_EQ(lines_of(read_text(err2)).size(), 1u);

  EXPECT_EQ(stop(pid), 0) << read_text(err);  // Ctrl-C stops the server cleanly
}

}  // namespace
