// `mabd plot`: a stats file from `mabd run --stats` becomes an SVG with one panel per
// quantity; bad input gets a one-line error and exit code 2.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "test_util.h"

namespace {

using mabd::test::read_text;

namespace fs = std::filesystem;

int run(const std::string& args, const fs::path& err) {
  const std::string cmd = std::string(MABD_CLI_PATH) + " " + args + " > /dev/null 2> " + err.string();
  const int status = std::system(cmd.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}


std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

TEST(PlotCommand, StatsBecomeAnSvgWithSixPanels) {
  const fs::path dir = fs::temp_directory_path() / "mabd_plot_test";
  fs::create_directories(dir);
  const fs::path stats = dir / "stats.jsonl", svg = dir / "plots.svg", err = dir / "err.txt";
  const std::string scene = std::string(MABD_SOURCE_DIR) + "/scenes/pendulum.json";
  ASSERT_EQ(run("run " + scene + " --steps 200 --quiet --stats " + stats.string(), err), 0);
  ASSERT_EQ(run("plot " + stats.string() + " -o " + svg.string(), err), 0) << read_text(err);
  const std::string text = read_text(svg);
  EXPECT_EQ(text.rfind("<svg", 0), 0u);
  EXPECT_EQ(count(text, "<polyline"), 9u);  // 3 energies, |p|, |L|, 2 residuals, iterations, ms
  EXPECT_NE(text.find("Energy (J)"), std::string::npos);
  EXPECT_NE(text.find("Residuals (m)"), std::string::npos);
}

TEST(PlotCommand, BadInputIsAOneLineError) {
  const fs::path dir = fs::temp_directory_path() / "mabd_plot_test";
  fs::create_directories(dir);
  const fs::path bad = dir / "bad.jsonl", err = dir / "err.txt";
  std::ofstream(bad) << "{\"time\": 0.1}\nnot json\n";
  EXPECT_EQ(run("plot " + bad.string() + " -o " + (dir / "x.svg").string(), err), 2);
  EXPECT_NE(read_text(err).find("bad.jsonl:2: not a JSON object"), std::string::npos) << read_text(err);
  EXPECT_EQ(run("plot " + bad.string() + " -o " + (dir / "x.png").string(), err), 2);
  EXPECT_NE(read_text(err).find("supported: .svg"), std::string::npos) << read_text(err);
  EXPECT_EQ(run("plot " + (dir / "missing.jsonl").string(), err), 2);
}

}  // namespace
