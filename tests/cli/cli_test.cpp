// End-to-end tests of the `mabd` executable: runs the built binary and checks its outputs,
// messages and exit codes.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace fs = std::filesystem;

#include "test_util.h"

namespace {

using mabd::test::quote;
using mabd::test::read_text;
using mabd::test::lines_of;

const std::string kCli = MABD_CLI_PATH;
const fs::path kData = fs::path(MABD_SOURCE_DIR) / "tests" / "data" / "cli";




/// Splits one CSV record (RFC 4180 quoting, no embedded line breaks).
std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

using Result = mabd::test::CommandResult;

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("mabd_cli_test_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  fs::path tmp(const std::string& name) const { return dir_ / name; }
  static std::string scene(const std::string& name) { return (kData / name).string(); }

  /// Runs `mabd ARGS` (ARGS already shell-quoted), capturing stdout, stderr and exit code.
  Result run(const std::string& args) const {
    return mabd::test::run_captured(quote(kCli) + " " + args, dir_);
  }

  fs::path dir_;
};

void expect_one_error_line(const Result& r) {
  const auto lines = lines_of(r.err);
  ASSERT_EQ(lines.size(), 1u) << r.err;
  EXPECT_EQ(lines[0].rfind("mabd: ", 0), 0u) << lines[0];
}

// ---- run ----------------------------------------------------------------------------------

TEST_F(CliTest, RunWritesPoseCsvEveryKSteps) {
  const fs::path csv = tmp("poses.csv");
  const Result r = run("run " + quote(scene("spin_box.json")) + " --steps 20 --every 5 --out " +
                       quote(csv.string()));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto lines = lines_of(read_text(csv));
  ASSERT_EQ(lines.size(), 1u + (20 / 5 + 1) * 1);
  EXPECT_EQ(lines[0], "step,time,body,x,y,z,qw,qx,qy,qz");
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const auto f = csv_fields(lines[i]);
    ASSERT_EQ(f.size(), 10u) << lines[i];
    EXPECT_EQ(std::stoi(f[0]), static_cast<int>(5 * (i - 1)));
    EXPECT_NEAR(std::stod(f[1]), 0.001 * 5 * (i - 1), 1e-12);
    EXPECT_EQ(f[2], "box");
    double norm2 = 0;
    for (int k = 6; k < 10; ++k) norm2 += std::stod(f[k]) * std::stod(f[k]);
    EXPECT_NEAR(norm2, 1.0, 1e-6) << lines[i];
  }
  // Initial state: at the origin, identity orientation.
  const auto first = csv_fields(lines[1]);
  EXPECT_DOUBLE_EQ(std::stod(first[3]), 0.0);
  EXPECT_DOUBLE_EQ(std::stod(first[6]), 1.0);
  // The box spins: the final orientation differs from the initial one.
  const auto last = csv_fields(lines.back());
  EXPECT_LT(std::stod(last[6]), 1.0);
}

TEST_F(CliTest, RunWritesOneRowPerBodyAndQuotesNames) {
  const fs::path csv = tmp("poses.csv");
  const Result r =
      run("run " + quote(scene("two_bodies.json")) + " --steps 10 --out " + quote(csv.string()));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto lines = lines_of(read_text(csv));
  ASSERT_EQ(lines.size(), 1u + (10 + 1) * 2);
  const auto ball = csv_fields(lines[1]);
  const auto rod = csv_fields(lines[2]);
  ASSERT_EQ(ball.size(), 10u);
  ASSERT_EQ(rod.size(), 10u);
  EXPECT_EQ(ball[2], "ball");
  EXPECT_EQ(rod[2], "rod, long");
  EXPECT_NEAR(std::stod(ball[5]), 1.0, 1e-12);  // initial z
  EXPECT_NEAR(std::stod(rod[3]), 0.5, 1e-12);   // initial x
  // The ball falls and moves along +x.
  const auto ball_end = csv_fields(lines[lines.size() - 2]);
  EXPECT_EQ(ball_end[0], "10");
  EXPECT_EQ(ball_end[2], "ball");
  EXPECT_GT(std::stod(ball_end[3]), 0.0);
  EXPECT_LT(std::stod(ball_end[5]), 1.0);
}

TEST_F(CliTest, RunWritesStatsJsonlForEveryStep) {
  const fs::path stats = tmp("stats.jsonl");
  const Result r =
      run("run " + quote(scene("spin_box.json")) + " --steps 30 --stats " + quote(stats.string()));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto lines = lines_of(read_text(stats));
  ASSERT_EQ(lines.size(), 30u);
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const auto j = nlohmann::json::parse(lines[i]);
    for (const char* key : {"step", "time", "newton_iterations", "residual", "kinetic_energy",
                            "potential_energy", "linear_momentum", "angular_momentum",
                            "wall_ms"}) {
      EXPECT_TRUE(j.contains(key)) << key << " missing in " << lines[i];
    }
    EXPECT_EQ(j["step"].get<int>(), static_cast<int>(i + 1));
    EXPECT_NEAR(j["time"].get<double>(), 0.001 * (i + 1), 1e-12);
    EXPECT_GE(j["newton_iterations"].get<int>(), 1);
    ASSERT_EQ(j["linear_momentum"].size(), 3u);
    ASSERT_EQ(j["angular_momentum"].size(), 3u);
    EXPECT_GT(j["kinetic_energy"].get<double>(), 0.0);  // the box spins
  }
}

TEST_F(CliTest, RunStatsCarryContactsAndPhaseTimes) {
  const fs::path stats = tmp("stats.jsonl");
  const Result r = run("run " + quote(scene("contact_box.json")) + " --quiet --stats " +
                       quote(stats.string()));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto lines = lines_of(read_text(stats));
  ASSERT_EQ(lines.size(), 40u);  // settings.steps
  for (const std::string& line : lines) {
    const auto j = nlohmann::json::parse(line);
    ASSERT_TRUE(j.contains("contacts")) << line;
    EXPECT_TRUE(j["contacts"].is_number_integer()) << line;
    EXPECT_GE(j["contacts"].get<int>(), 0);
    for (const char* key : {"max_penetration", "detect_ms", "body_ms", "dual_ms"}) {
      ASSERT_TRUE(j.contains(key)) << key << " missing in " << line;
      EXPECT_TRUE(j[key].is_number()) << line;
      EXPECT_GE(j[key].get<double>(), 0.0) << key;
    }
    // The phases are parts of the step.
    double phases = 0;
    for (const char* key : {"detect_ms", "predict_ms", "body_ms", "rows_ms", "dual_ms",
                            "contact_ms", "check_ms", "finish_ms"}) {
      ASSERT_GE(j[key].get<double>(), 0.0) << key << ": " << line;
      phases += j[key].get<double>();
    }
    EXPECT_LE(phases, j["wall_ms"].get<double>() + 1e-3) << line;
  }
  // The keys of a line without contacts too, in the documented order.
  const auto first = nlohmann::ordered_json::parse(lines.front());
  std::vector<std::string> keys;
  for (const auto& item : first.items()) keys.push_back(item.key());
  const std::vector<std::string> expected = {
      "step",           "time",            "newton_iterations", "residual",
      "joint_residual", "solver",          "contacts",          "max_penetration",
      "kinetic_energy", "potential_energy", "linear_momentum",  "angular_momentum",
      "wall_ms",        "detect_ms",       "body_ms",           "dual_ms",
      "contact_ms",     "body_contacts",   "predict_ms",        "rows_ms",
      "check_ms",       "finish_ms"};
  EXPECT_EQ(keys, expected);
}

// Steps that solve contacts between dynamic bodies (the shipped box stack) report the sweeps
// and active-set solves of their complementarity problem.
TEST_F(CliTest, RunStatsCarryTheContactSolvesWork) {
  const fs::path stats = tmp("stack.jsonl");
  const std::string stack =
      quote((fs::path(MABD_SOURCE_DIR) / "scenes" / "box_stack.json").string());
  const Result r = run("run " + stack + " --steps 5 --quiet --stats " + quote(stats.string()));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto lines = lines_of(read_text(stats));
  ASSERT_EQ(lines.size(), 5u);
  for (const std::string& line : lines) {
    const auto j = nlohmann::json::parse(line);
    ASSERT_GT(j["body_contacts"].get<int>(), 0) << line;  // the boxes rest on one another
    ASSERT_TRUE(j.contains("contact_sweeps")) << line;
    ASSERT_TRUE(j.contains("contact_pivots")) << line;
    EXPECT_GE(j["contact_sweeps"].get<int>(), 0) << line;
    EXPECT_GE(j["contact_pivots"].get<int>(), 1) << line;  // an exact active-set solve
  }
}

TEST_F(CliTest, RunPrintsSummaryAndNoProgressWhenNotATerminal) {
  const Result r = run("run " + quote(scene("spin_box.json")) + " --steps 7");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(lines_of(r.out).size(), 1u) << r.out;
  EXPECT_NE(r.out.find("7 steps"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("ms/step"), std::string::npos) << r.out;
  EXPECT_EQ(r.err, "");
}

TEST_F(CliTest, RunUsesSceneDefaultSteps) {
  const fs::path stats = tmp("stats.jsonl");
  const Result r = run("run " + quote(scene("spin_box.json")) + " --quiet --stats " +
                       quote(stats.string()));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(lines_of(read_text(stats)).size(), 50u);  // settings.steps in the scene
}

TEST_F(CliTest, RunAppliesOverrides) {
  const fs::path csv = tmp("poses.csv");
  const Result r = run("run " + quote(scene("spin_box.json")) +
                       " --steps 4 --dt 0.0025 --rotation normalized --integrator vanilla --out " +
                       quote(csv.string()));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto lines = lines_of(read_text(csv));
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_NEAR(std::stod(csv_fields(lines.back())[1]), 0.01, 1e-12);
}

TEST_F(CliTest, SimulationErrorExits3AndKeepsCompleteRows) {
  const fs::path csv = tmp("poses.csv");
  const fs::path stats = tmp("stats.jsonl");
  const Result r = run("run " + quote(scene("diverging.json")) + " --out " + quote(csv.string()) +
                       " --stats " + quote(stats.string()));
  EXPECT_EQ(r.code, 3) << r.err;
  expect_one_error_line(r);
  EXPECT_NE(r.err.find("jelly"), std::string::npos) << r.err;
  const std::string csv_text = read_text(csv);
  const std::string stats_text = read_text(stats);
  ASSERT_FALSE(csv_text.empty());
  EXPECT_EQ(csv_text.back(), '\n');
  const auto rows = lines_of(csv_text);
  ASSERT_GE(rows.size(), 2u);  // header + initial state at least
  EXPECT_EQ(rows[0], "step,time,body,x,y,z,qw,qx,qy,qz");
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const auto f = csv_fields(rows[i]);
    ASSERT_EQ(f.size(), 10u) << rows[i];
    EXPECT_EQ(std::stoi(f[0]), static_cast<int>(i - 1));
    for (int k = 3; k < 10; ++k) EXPECT_TRUE(std::isfinite(std::stod(f[k]))) << rows[i];
  }
  // One stats line per completed step, i.e. per pose row after the initial one.
  const auto stats_lines = lines_of(stats_text);
  EXPECT_EQ(stats_lines.size(), rows.size() - 2);
  for (const auto& line : stats_lines) EXPECT_TRUE(nlohmann::json::accept(line)) << line;
}

TEST_F(CliTest, RunWritesJointForcesEveryKStepsFromStep1) {
  const fs::path csv = tmp("joints.csv");
  const Result r = run("run " + quote(scene("pendulum.json")) + " --quiet --joint-forces " +
                       quote(csv.string()));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto lines = lines_of(read_text(csv));
  ASSERT_EQ(lines.size(), 1u + 200u);  // header + one row per step (one joint)
  EXPECT_EQ(lines[0], "step,time,joint,fx,fy,fz,tx,ty,tz");
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const auto f = csv_fields(lines[i]);
    ASSERT_EQ(f.size(), 9u) << lines[i];
    EXPECT_EQ(std::stoi(f[0]), static_cast<int>(i));
    EXPECT_NEAR(std::stod(f[1]), 0.001 * static_cast<double>(i), 1e-12);
    EXPECT_EQ(f[2], "pivot");
    for (int k = 3; k < 9; ++k) EXPECT_TRUE(std::isfinite(std::stod(f[k]))) << lines[i];
  }
  // Released horizontally, the rod starts to fall: over the first steps the pivot holds it up
  // with about m g / 4 (uniform rod pivoted at one end).
  double fz = 0;
  for (std::size_t i = 1; i <= 10; ++i) fz += std::stod(csv_fields(lines[i])[5]);
  EXPECT_NEAR(fz / 10, 9.81 / 4, 0.25);
}

TEST_F(CliTest, RunJointForcesHonoursEvery) {
  const fs::path csv = tmp("joints.csv");
  const fs::path poses = tmp("poses.csv");
  const Result r = run("run " + quote(scene("pendulum.json")) + " --steps 20 --every 5 --out " +
                       quote(poses.string()) + " --joint-forces " + quote(csv.string()));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto lines = lines_of(read_text(csv));
  ASSERT_EQ(lines.size(), 1u + 4u);  // steps 5, 10, 15, 20
  for (std::size_t i = 1; i < lines.size(); ++i) {
    EXPECT_EQ(std::stoi(csv_fields(lines[i])[0]), static_cast<int>(5 * i)) << lines[i];
  }
  EXPECT_EQ(lines_of(read_text(poses)).size(), 1u + 5u);  // steps 0, 5, ..., 20
}

TEST_F(CliTest, RunJointForcesWithoutJointsWritesOnlyTheHeader) {
  const fs::path csv = tmp("joints.csv");
  const Result r = run("run " + quote(scene("spin_box.json")) + " --steps 5 --joint-forces " +
                       quote(csv.string()));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(read_text(csv), "step,time,joint,fx,fy,fz,tx,ty,tz\n");
}

TEST_F(CliTest, RunStatsReportJointResidual) {
  const fs::path stats = tmp("stats.jsonl");
  const Result r = run("run " + quote(scene("pendulum.json")) + " --steps 50 --stats " +
                       quote(stats.string()));
  ASSERT_EQ(r.code, 0) << r.err;
  const auto lines = lines_of(read_text(stats));
  ASSERT_EQ(lines.size(), 50u);
  for (const std::string& line : lines) {
    const auto j = nlohmann::ordered_json::parse(line);
    ASSERT_TRUE(j.contains("joint_residual")) << line;
    const double residual = j["joint_residual"].get<double>();
    EXPECT_TRUE(std::isfinite(residual)) << line;
    EXPECT_GE(residual, 0.0) << line;
    EXPECT_LT(residual, 1e-3) << line;  // the hinge holds
    // "joint_residual" follows "residual".
    auto it = j.begin();
    while (it != j.end() && it.key() != "residual") ++it;
    ASSERT_NE(it, j.end()) << line;
    ++it;
    ASSERT_NE(it, j.end()) << line;
    EXPECT_EQ(it.key(), "joint_residual") << line;
  }
  // Without joints the residual is 0.
  const Result free = run("run " + quote(scene("spin_box.json")) + " --steps 3 --stats " +
                          quote(stats.string()));
  ASSERT_EQ(free.code, 0) << free.err;
  for (const std::string& line : lines_of(read_text(stats))) {
    EXPECT_EQ(nlohmann::json::parse(line)["joint_residual"].get<double>(), 0.0) << line;
    EXPECT_EQ(nlohmann::json::parse(line)["solver"], "none") << line;
  }
}

TEST_F(CliTest, RunStatsNameTheDualSolverAndItsIterations) {
  const fs::path stats = tmp("stats.jsonl");
  Result r = run("run " + quote(scene("pendulum.json")) + " --steps 5 --stats " +
                 quote(stats.string()));
  ASSERT_EQ(r.code, 0) << r.err;
  for (const std::string& line : lines_of(read_text(stats))) {
    const auto j = nlohmann::json::parse(line);
    EXPECT_EQ(j["solver"], "chain") << line;
    EXPECT_FALSE(j.contains("dual_iterations")) << line;
  }
  r = run("run " + quote(scene("pendulum.json")) + " --steps 5 --solver iterative --stats " +
          quote(stats.string()));
  ASSERT_EQ(r.code, 0) << r.err;
  for (const std::string& line : lines_of(read_text(stats))) {
    const auto j = nlohmann::json::parse(line);
    EXPECT_EQ(j["solver"], "iterative") << line;
    EXPECT_GE(j["dual_iterations"].get<int>(), 1) << line;
    EXPECT_LE(j["dual_residual"].get<double>(), 1e-10) << line;  // the default tolerance
  }
}

TEST_F(CliTest, RunPrintsWorldWarningsToStderr) {
  const Result r = run("run " + quote(scene("far_anchor.json")) + " --quiet");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto lines = lines_of(r.err);
  ASSERT_GE(lines.size(), 1u) << r.err;
  for (const std::string& line : lines) {
    EXPECT_EQ(line.rfind("mabd: warning: ", 0), 0u) << line;
  }
  EXPECT_NE(r.out.find("10 steps"), std::string::npos) << r.out;
  // A scene the world has no remarks about prints nothing on stderr.
  const Result quiet = run("run " + quote(scene("pendulum.json")) + " --steps 5");
  ASSERT_EQ(quiet.code, 0) << quiet.err;
  EXPECT_EQ(quiet.err, "");
}

// ---- errors -------------------------------------------------------------------------------

TEST_F(CliTest, JointForcesOptionIsCheckedBeforeAnythingRuns) {
  // Bad extension: nothing is created, not even the other outputs.
  const fs::path bad = tmp("joints.txt");
  const fs::path poses = tmp("poses.csv");
  Result r = run("run " + quote(scene("pendulum.json")) + " --out " + quote(poses.string()) +
                 " --joint-forces " + quote(bad.string()));
  EXPECT_EQ(r.code, 2);
  expect_one_error_line(r);
  EXPECT_NE(r.err.find("--joint-forces: unsupported extension '.txt' (supported: .csv)"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(bad));
  EXPECT_FALSE(fs::exists(poses));

  // The same file for two outputs.
  r = run("run " + quote(scene("pendulum.json")) + " --out " + quote(poses.string()) +
          " --joint-forces " + quote(poses.string()));
  EXPECT_EQ(r.code, 2);
  expect_one_error_line(r);
  EXPECT_NE(r.err.find("--joint-forces"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(poses));

  // Bad scene: no joint-force file.
  const fs::path csv = tmp("joints.csv");
  r = run("run " + quote(scene("bad_unknown_field.json")) + " --joint-forces " +
          quote(csv.string()));
  EXPECT_EQ(r.code, 2);
  expect_one_error_line(r);
  EXPECT_FALSE(fs::exists(csv));
}

TEST_F(CliTest, JointForcesKeepCompleteRowsOnDivergence) {
  const fs::path csv = tmp("joints.csv");
  const fs::path stats = tmp("stats.jsonl");
  const Result r = run("run " + quote(scene("diverging_joint.json")) + " --joint-forces " +
                       quote(csv.string()) + " --stats " + quote(stats.string()));
  EXPECT_EQ(r.code, 3) << r.err;
  expect_one_error_line(r);
  const std::string text = read_text(csv);
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n');
  const auto rows = lines_of(text);
  EXPECT_EQ(rows[0], "step,time,joint,fx,fy,fz,tx,ty,tz");
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const auto f = csv_fields(rows[i]);
    ASSERT_EQ(f.size(), 9u) << rows[i];
    EXPECT_EQ(std::stoi(f[0]), static_cast<int>(i));
    EXPECT_EQ(f[2], "axle");
    for (int k = 3; k < 9; ++k) EXPECT_TRUE(std::isfinite(std::stod(f[k]))) << rows[i];
  }
  // One row per completed step, like the stats.
  EXPECT_EQ(rows.size() - 1, lines_of(read_text(stats)).size());
}

TEST_F(CliTest, BadSceneExits2WithOneLineAndCreatesNoOutput) {
  const fs::path csv = tmp("poses.csv");
  const fs::path stats = tmp("stats.jsonl");
  const Result r = run("run " + quote(scene("bad_unknown_field.json")) + " --out " +
                       quote(csv.string()) + " --stats " + quote(stats.string()));
  EXPECT_EQ(r.code, 2);
  expect_one_error_line(r);
  EXPECT_NE(r.err.find("bad_unknown_field.json"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("angular_velocty"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(csv));
  EXPECT_FALSE(fs::exists(stats));
  EXPECT_EQ(r.out, "");
}

TEST_F(CliTest, MissingSceneFileExits2) {
  const fs::path csv = tmp("poses.csv");
  const Result r =
      run("run " + quote(tmp("no_such_scene.json").string()) + " --out " + quote(csv.string()));
  EXPECT_EQ(r.code, 2);
  expect_one_error_line(r);
  EXPECT_NE(r.err.find("no_such_scene.json"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(csv));
}

TEST_F(CliTest, NonPositiveDtExits2) {
  for (const char* dt : {"0", "-0.001", "nan"}) {
    const fs::path csv = tmp("poses.csv");
    const Result r = run("run " + quote(scene("spin_box.json")) + " --dt " + dt + " --out " +
                         quote(csv.string()));
    EXPECT_EQ(r.code, 2) << dt;
    expect_one_error_line(r);
    EXPECT_NE(r.err.find("--dt"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(csv));
  }
}

TEST_F(CliTest, BadCountsExit2) {
  for (const char* args : {"--steps 0", "--steps -3", "--every 0", "--steps abc"}) {
    const Result r = run("run " + quote(scene("spin_box.json")) + " " + args);
    EXPECT_EQ(r.code, 2) << args;
    expect_one_error_line(r);
  }
}

TEST_F(CliTest, UnsupportedOutputExtensionExits2) {
  const fs::path bad = tmp("poses.xyz");
  const Result r = run("run " + quote(scene("spin_box.json")) + " --out " + quote(bad.string()));
  EXPECT_EQ(r.code, 2);
  expect_one_error_line(r);
  EXPECT_NE(r.err.find("--out: unsupported extension '.xyz' (supported: .csv)"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(bad));
}

TEST_F(CliTest, UnknownOptionsAndModesExit2) {
  const std::vector<std::string> cases = {
      "run " + quote(scene("spin_box.json")) + " --no-such-option",
      "run " + quote(scene("spin_box.json")) + " --rotation sideways",
      "run " + quote(scene("spin_box.json")) + " --integrator magic",
      "run", "explode " + quote(scene("spin_box.json"))};
  for (const std::string& args : cases) {
    const Result r = run(args);
    EXPECT_EQ(r.code, 2) << args;
    EXPECT_EQ(r.err.rfind("mabd: ", 0), 0u) << args << ": " << r.err;
  }
}

TEST_F(CliTest, NoSubcommandPrintsHelpAndExits2) {
  const Result r = run("");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("run"), std::string::npos);
  EXPECT_NE(r.err.find("bench"), std::string::npos);
  EXPECT_NE(r.err.find("info"), std::string::npos);
}

TEST_F(CliTest, VersionAndHelp) {
  Result r = run("--version");
  EXPECT_EQ(r.code, 0);
  EXPECT_EQ(r.out, "mabd 0.1.0\n");
  r = run("run --help");
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("--every"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--joint-forces"), std::string::npos) << r.out;
}

// ---- bench --------------------------------------------------------------------------------

TEST_F(CliTest, BenchPrintsOneJsonLine) {
  const Result r = run("bench " + quote(scene("spin_box.json")) +
                       " --steps 25 --warmup 3 --rotation normalized");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 1u) << r.out;
  const auto j = nlohmann::json::parse(lines[0]);
  for (const char* key :
       {"scene", "bodies", "joints", "rows", "steps", "ms_per_step_median", "ms_per_step_min",
        "residual_max", "newton_iterations_mean", "peak_rss_mb", "rotation", "integrator"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["scene"], scene("spin_box.json"));
  EXPECT_EQ(j["bodies"].get<int>(), 1);
  EXPECT_EQ(j["joints"].get<int>(), 0);
  EXPECT_EQ(j["rows"].get<int>(), 0);
  EXPECT_EQ(j["steps"].get<int>(), 25);
  EXPECT_EQ(j["rotation"], "normalized");
  EXPECT_EQ(j["integrator"], "corotated");
  EXPECT_GT(j["ms_per_step_median"].get<double>(), 0.0);
  EXPECT_LE(j["ms_per_step_min"].get<double>(), j["ms_per_step_median"].get<double>());
  EXPECT_GE(j["newton_iterations_mean"].get<double>(), 1.0);
  EXPECT_GT(j["peak_rss_mb"].get<double>(), 0.0);
}

TEST_F(CliTest, BenchReportsPhaseTimesAndContacts) {
  const Result r = run("bench " + quote(scene("contact_box.json")) + " --steps 10");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 1u) << r.out;
  const auto j = nlohmann::json::parse(lines[0]);
  for (const char* key : {"detect_ms_median", "body_ms_median", "dual_ms_median",
                          "contacts_mean", "max_penetration"}) {
    ASSERT_TRUE(j.contains(key)) << key << " not in " << lines[0];
    EXPECT_GE(j[key].get<double>(), 0.0) << key;
  }
  ASSERT_TRUE(j.contains("contacts_max"));
  EXPECT_TRUE(j["contacts_max"].is_number_integer());
  EXPECT_GE(j["contacts_max"].get<double>(), j["contacts_mean"].get<double>());
  EXPECT_EQ(j["contact_model"], "penalty");
  EXPECT_LE(j["detect_ms_median"].get<double>(), j["ms_per_step_median"].get<double>() + 1e-9);
  EXPECT_EQ(j["bodies"].get<int>(), 4);
}

TEST_F(CliTest, BenchCountsJointsAndRows) {
  const Result r = run("bench " + quote(scene("pendulum.json")) + " --steps 10");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 1u) << r.out;
  const auto j = nlohmann::json::parse(lines[0]);
  EXPECT_EQ(j["bodies"].get<int>(), 1);
  EXPECT_EQ(j["joints"].get<int>(), 1);
  EXPECT_EQ(j["rows"].get<int>(), 5);
  ASSERT_TRUE(j.contains("joint_residual_max"));
  EXPECT_GE(j["joint_residual_max"].get<double>(), 0.0);
  EXPECT_LT(j["joint_residual_max"].get<double>(), 1e-3);
}

TEST_F(CliTest, BenchBadSceneExits2WithoutJson) {
  const Result r = run("bench " + quote(scene("bad_unknown_field.json")));
  EXPECT_EQ(r.code, 2);
  expect_one_error_line(r);
  EXPECT_EQ(r.out, "");
}

// ---- info ---------------------------------------------------------------------------------

TEST_F(CliTest, InfoSummarisesTheScene) {
  const Result r = run("info " + quote(scene("two_bodies.json")));
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* text : {"two_bodies.json", "ball", "rod, long", "sphere", "capsule",
                           "dynamic", "polar", "corotated", "0.002"}) {
    EXPECT_NE(r.out.find(text), std::string::npos) << text << " not in:\n" << r.out;
  }
}

TEST_F(CliTest, InfoListsJoints) {
  const Result r = run("info " + quote(scene("pendulum.json")));
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* text : {"joints", "1 (hinge 1)", "constraint rows", "pivot", "world - rod"}) {
    EXPECT_NE(r.out.find(text), std::string::npos) << text << " not in:\n" << r.out;
  }
  const Result free = run("info " + quote(scene("spin_box.json")));
  ASSERT_EQ(free.code, 0) << free.err;
  EXPECT_EQ(free.out.find("world - "), std::string::npos) << free.out;
}

TEST_F(CliTest, InfoShowsTheTopologyAndTheSolverPerComponent) {
  // The demo: a chain (tree solver) beside a net (sparse solver) under auto, and five free
  // crates on the ground.
  const std::string demo = quote((fs::path(MABD_SOURCE_DIR) / "scenes" / "demo.json").string());
  const Result r = run("info " + demo);
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* text : {"7 component(s): 1 chain, 1 graph, 5 single body",
                           "sparse (1 component), tree (1 component)"}) {
    EXPECT_NE(r.out.find(text), std::string::npos) << text << " not in:\n" << r.out;
  }
  EXPECT_EQ(r.out.find("wind"), std::string::npos) << r.out;  // the demo has none
}

TEST_F(CliTest, InfoShowsTheWind) {
  const std::string willow =
      quote((fs::path(MABD_SOURCE_DIR) / "scenes" / "tree_willow.json").string());
  const Result r = run("info " + willow);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("[4, 1, 0] m/s, air 1.2 kg/m^3, C_d 1, gusts +-50% every 2 s"),
            std::string::npos)
      << r.out;
}

TEST_F(CliTest, InfoShowsContactSettingsAndCollisionShapes) {
  const Result r = run("info " + quote(scene("contact_box.json")));
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* text :
       {"penalty, time constant 0.004 s, damping ratio 1, margin 0.002 m, friction on",
        "2 colliders (static/kinematic), 1 colliding dynamic, 1 with collision off",
        "excluded pairs", "1: paddle - slab", "collision",
        "2 primitives: box, sphere, group 0x2, mask 0x3", "own shape", "off",
        "kinematic (scripted)"}) {
    EXPECT_NE(r.out.find(text), std::string::npos) << text << " not in:\n" << r.out;
  }
  // The default contact settings, and no excluded pairs.
  const Result plain = run("info " + quote(scene("spin_box.json")));
  ASSERT_EQ(plain.code, 0) << plain.err;
  EXPECT_NE(plain.out.find("none (no collision detection)"), std::string::npos)
      << plain.out;
  EXPECT_NE(plain.out.find("0 colliders (static/kinematic), 1 colliding dynamic"),
            std::string::npos)
      << plain.out;
  EXPECT_EQ(plain.out.find("excluded pairs"), std::string::npos) << plain.out;
}

TEST_F(CliTest, InfoShowsPlanesAndOpenMeshes) {
  const Result r = run("info " + quote(scene("contact_plane.json")));
  if (r.code == 2 && (r.err.find("plane") != std::string::npos ||
                      r.err.find("closed") != std::string::npos)) {
    GTEST_SKIP() << "this World does not accept planes or open meshes yet: " << r.err;
  }
  ASSERT_EQ(r.code, 0) << r.err;
  for (const char* text : {"plane 1", "mesh bowl.obj (10 tris, open)", "2 colliders"}) {
    EXPECT_NE(r.out.find(text), std::string::npos) << text << " not in:\n" << r.out;
  }
}

TEST_F(CliTest, InfoBadSceneExits2) {
  const Result r = run("info " + quote(scene("bad_unknown_field.json")));
  EXPECT_EQ(r.code, 2);
  expect_one_error_line(r);
}

}  // namespace

// ---- input hardening --------------------------------------------------------------------

namespace {

/// How a child process ended, and the most memory it used.
struct Ended {
  int code = -1;    ///< exit status, -1 when killed by a signal
  int signal = 0;   ///< the signal that killed it, 0 when it exited
  long max_rss_kb = 0;
};

/// Starts `mabd ARGS...` with stdin from /dev/null and stdout, stderr to the given files.
pid_t start_cli(const std::vector<std::string>& args, const fs::path& out, const fs::path& err) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    std::FILE* in = std::freopen("/dev/null", "r", stdin);
    std::FILE* o = std::freopen(out.c_str(), "w", stdout);
    std::FILE* e = std::freopen(err.c_str(), "w", stderr);
    if (in == nullptr || o == nullptr || e == nullptr) ::_exit(127);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(kCli.c_str()));
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    ::execv(kCli.c_str(), argv.data());
    ::_exit(127);
  }
  return pid;
}

Ended wait_for(pid_t pid) {
  int status = 0;
  struct rusage usage {};
  Ended ended;
  if (::wait4(pid, &status, 0, &usage) != pid) return ended;
  if (WIFEXITED(status)) ended.code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) ended.signal = WTERMSIG(status);
  ended.max_rss_kb = usage.ru_maxrss;
  return ended;
}

/// Waits (at most `seconds`) until `path` holds more than `bytes`.
bool wait_for_size(const fs::path& path, std::uintmax_t bytes, double seconds) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < deadline) {
    std::error_code ec;
    if (fs::file_size(path, ec) > bytes && !ec) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

/// Every line of a pose CSV is a whole row: 10 fields, finite numbers, the file ends with a
/// line break. Returns the number of rows after the header.
std::size_t expect_whole_pose_rows(const std::string& text) {
  EXPECT_FALSE(text.empty());
  if (text.empty()) return 0;
  EXPECT_EQ(text.back(), '\n');
  const auto rows = lines_of(text);
  EXPECT_EQ(rows[0], "step,time,body,x,y,z,qw,qx,qy,qz");
  for (std::size_t i = 1; i < rows.size(); ++i) {
    const auto f = csv_fields(rows[i]);
    EXPECT_EQ(f.size(), 10u) << "row " << i << ": " << rows[i];
    if (f.size() != 10u) break;
    for (int k = 3; k < 10; ++k) EXPECT_TRUE(std::isfinite(std::stod(f[k]))) << rows[i];
  }
  return rows.size() - 1;
}

/// Every line of a stats file is a whole JSON object with a finite kinetic energy.
std::size_t expect_whole_stats_lines(const std::string& text) {
  if (!text.empty()) EXPECT_EQ(text.back(), '\n');
  const auto lines = lines_of(text);
  for (const auto& line : lines) {
    EXPECT_TRUE(nlohmann::json::accept(line)) << line;
    if (!nlohmann::json::accept(line)) break;
    EXPECT_TRUE(nlohmann::json::parse(line).at("kinetic_energy").is_number()) << line;
  }
  return lines.size();
}

/// A binary glTF: the "glTF" magic and a total length equal to the file size.
void expect_valid_glb(const fs::path& path) {
  const std::string bytes = read_text(path);
  ASSERT_GE(bytes.size(), 12u);
  EXPECT_EQ(bytes.substr(0, 4), "glTF");
  std::uint32_t length = 0;
  for (int k = 3; k >= 0; --k) {
    length = (length << 8) | static_cast<unsigned char>(bytes[8 + static_cast<std::size_t>(k)]);
  }
  EXPECT_EQ(length, bytes.size());
}

}  // namespace

TEST_F(CliTest, ChainSolverOnATreeIsRejectedBeforeAnyOutput) {
  const fs::path csv = tmp("poses.csv");
  const fs::path stats = tmp("stats.jsonl");
  const std::string file = scene("chain_solver_tree.json");
  const std::string expected = "mabd: " + file +
                               ": settings.solver: \"chain\" needs every joint component to be a "
                               "chain, but one is a tree (4 bodies, 3 joints, 0 loops; see mabd "
                               "info); use \"auto\", \"tree\" or \"sparse\"\n";
  const Result r = run("run " + quote(file) + " --out " + quote(csv.string()) + " --stats " +
                       quote(stats.string()));
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, expected);
  EXPECT_FALSE(fs::exists(csv));
  EXPECT_FALSE(fs::exists(stats));
  // `mabd info` no longer says "solved by chain": it reports the same error.
  const Result info = run("info " + quote(file));
  EXPECT_EQ(info.code, 2);
  EXPECT_EQ(info.err, expected);
  EXPECT_EQ(info.out, "");
  // The other solvers take the tree; --solver chain is named as the option.
  EXPECT_EQ(run("run " + quote(file) + " --solver tree").code, 0);
  const Result option = run("run " + quote(scene("two_bodies.json")) + " --solver chain");
  EXPECT_EQ(option.code, 0) << option.err;  // no joints: nothing that is not a chain
  const Result tree = run("bench " + quote(file) + " --solver chain");
  EXPECT_EQ(tree.code, 2);
  EXPECT_EQ(tree.err.rfind("mabd: " + file + ": --solver: \"chain\" needs every joint component", 0),
            0u)
      << tree.err;
}

TEST_F(CliTest, NonFiniteKineticEnergyIsADivergence) {
  const fs::path csv = tmp("poses.csv");
  const fs::path stats = tmp("stats.jsonl");
  const Result r = run("run " + quote(scene("runaway_velocity.json")) + " --out " +
                       quote(csv.string()) + " --stats " + quote(stats.string()));
  EXPECT_EQ(r.code, 3) << r.err;
  expect_one_error_line(r);
  EXPECT_EQ(r.err.rfind("mabd: simulation diverged at step 1 (t = 0.001000 s): body 'bullet': "
                        "kinetic energy is not finite (speed 1e+155 m/s); it moved 1e+152 m in "
                        "the last step, more than its own size (0.1 m): check its initial "
                        "velocity and units, or use a smaller dt",
                        0),
            0u)
      << r.err;
  // The outputs hold the initial state, whole; no stats line with a null energy.
  EXPECT_EQ(expect_whole_pose_rows(read_text(csv)), 2u);
  EXPECT_EQ(expect_whole_stats_lines(read_text(stats)), 0u);
}

TEST_F(CliTest, DivergenceAdviceNamesTheLikelyCause) {
  // A 10 Pa jelly spun at 20 rad/s: the material is far too soft for the load.
  const Result r = run("run " + quote(scene("diverging.json")));
  EXPECT_EQ(r.code, 3);
  expect_one_error_line(r);
  EXPECT_NE(r.err.find("body 'jelly': deformation |A^T A - I| = "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("; material too soft for its load: youngs_modulus 10 Pa under up to "),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("40 kg of jointed bodies at "), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("try a smaller dt"), std::string::npos) << r.err;
}

TEST_F(CliTest, DivergenceAdviceNamesGeneralizedAlphaOnAWhippingChain) {
  // The shipped heavy-end chain with two Newton iterations per step: generalized-alpha's
  // instability whips a link faster than a step can follow after about 2.4 s. Its speed is
  // not an initial velocity, and more iterations would not help.
  std::string text = read_text(fs::path(MABD_SOURCE_DIR) / "scenes" / "heavy_chain.json");
  const std::string one = "\"newton_iterations\": 1", steps = "\"steps\": 300";
  ASSERT_NE(text.find(one), std::string::npos);
  ASSERT_NE(text.find(steps), std::string::npos);
  text.replace(text.find(one), one.size(), "\"newton_iterations\": 2");
  text.replace(text.find(steps), steps.size(), "\"steps\": 400");
  const fs::path file = tmp("whip.json");
  std::ofstream(file, std::ios::binary) << text;
  const Result r = run("run " + quote(file.string()));
  EXPECT_EQ(r.code, 3) << r.err;
  expect_one_error_line(r);
  EXPECT_NE(r.err.find("more than its own size"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("try time_integration \"implicit_euler\" (generalized-alpha can grow "
                       "unstable on fast-turning slender bodies, at any dt and with any number "
                       "of Newton iterations) or a smaller dt"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(r.err.find("initial velocity"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("more Newton iterations"), std::string::npos) << r.err;
}

TEST_F(CliTest, DivergenceAdviceNamesATooStiffSpring) {
  // A light flap on a 1e7 N m/rad hinge spring: a period of 0.09 ms against a 50 ms step.
  const Result r = run("run " + quote(scene("stiff_spring.json")));
  EXPECT_EQ(r.code, 3);
  expect_one_error_line(r);
  EXPECT_NE(r.err.find("body 'flap': "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("; step too large for the stiffness of joint 'hinge' (1e+07 N m/rad on a "
                       "body of moment of inertia up to 0.00209 kg m^2: period about 9.08e-05 s "
                       "against dt = 0.05 s); use a smaller dt or a softer spring"),
            std::string::npos)
      << r.err;
}

TEST_F(CliTest, UnitSlipsAreWarnedAbout) {
  const Result r = run("info " + quote(scene("unit_slips.json")));
  EXPECT_EQ(r.code, 0) << r.err;
  const std::string file = scene("unit_slips.json");
  EXPECT_EQ(lines_of(r.err),
            (std::vector<std::string>{
                "mabd: warning: " + file +
                    ": bodies[1] 'forearm': density 9.744e+05 kg/m^3 (mass 1000 kg in 0.001026 "
                    "m^3) is beyond any solid (at most 3e+04 kg/m^3): a mass in grams, or a size "
                    "in millimetres?",
                "mabd: warning: " + file +
                    ": joints[0] 'elbow': limits.lower -90 is beyond a full turn: angles are in "
                    "radians (-90 degrees would be -1.571 rad)",
                "mabd: warning: " + file +
                    ": joints[0] 'elbow': limits.upper 90 is beyond a full turn: angles are in "
                    "radians (90 degrees would be 1.571 rad)"}));
}

TEST_F(CliTest, AFileOfBlanksIsRejectedQuicklyWithBoundedMemory) {
  // 20 MB of blanks: the JSON lexer used to keep and escape every one of them (about 20
  // times the file in memory, seconds) for a message that does not show them.
  const fs::path file = tmp("blank.json");
  {
    std::ofstream out(file, std::ios::binary);
    const std::string block(1 << 20, '\n');
    for (int i = 0; i < 20; ++i) out << block;
  }
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = start_cli({"info", file.string()}, tmp("out.txt"), tmp("err.txt"));
  const Ended ended = wait_for(pid);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(ended.code, 2);
  EXPECT_EQ(read_text(tmp("err.txt")),
            "mabd: " + file.string() +
                ": malformed JSON at line 20971521, column 1: syntax error while parsing value - "
                "unexpected end of input; expected '[', '{', or a literal\n");
  // The time and memory bounds hold for the plain build; AddressSanitizer's shadow memory
  // and quarantine add their own (102 MB measured).
#if !defined(__SANITIZE_ADDRESS__)
  EXPECT_LT(seconds, 2.0);
  EXPECT_LT(ended.max_rss_kb, 80 * 1024);  // the file once, and little more
#else
  std::printf("under AddressSanitizer: %.2f s, %ld kB peak (bounds not applied)\n", seconds,
              static_cast<long>(ended.max_rss_kb));
#endif
}

TEST_F(CliTest, SigtermClosesTheOutputsLikeSigint) {
  const fs::path csv = tmp("poses.csv");
  const fs::path stats = tmp("stats.jsonl");
  const fs::path glb = tmp("run.glb");
  const std::string pendulum = scene("pendulum.json");
  const pid_t a = start_cli({"run", pendulum, "--steps", "100000000", "--out", csv.string(),
                             "--stats", stats.string()},
                            tmp("a_out.txt"), tmp("a_err.txt"));
  const fs::path b_stats = tmp("b_stats.jsonl");
  const pid_t b = start_cli({"run", pendulum, "--steps", "100000000", "--out", glb.string(),
                             "--frame-every", "100", "--stats", b_stats.string()},
                            tmp("b_out.txt"), tmp("b_err.txt"));
  const fs::path interrupted_csv = tmp("interrupted.csv");
  const pid_t c = start_cli({"run", pendulum, "--steps", "100000000", "--out",
                             interrupted_csv.string()},
                            tmp("c_out.txt"), tmp("c_err.txt"));
  // Stopped mid-run, once every run has written rows and so has its handlers in place (the
  // glTF is written at the end). Under load a run may take seconds to start.
  EXPECT_TRUE(wait_for_size(stats, 100000, 60.0));
  EXPECT_TRUE(wait_for_size(b_stats, 1000, 60.0));
  EXPECT_TRUE(wait_for_size(interrupted_csv, 1000, 60.0));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  ::kill(a, SIGTERM);
  ::kill(b, SIGTERM);
  ::kill(c, SIGINT);
  const Ended ended_a = wait_for(a);
  const Ended ended_b = wait_for(b);
  const Ended ended_c = wait_for(c);
  EXPECT_EQ(ended_c.code, 130) << read_text(tmp("c_err.txt"));
  EXPECT_EQ(read_text(tmp("c_err.txt")).rfind("mabd: interrupted after ", 0), 0u);
  EXPECT_GT(expect_whole_pose_rows(read_text(interrupted_csv)), 0u);
  EXPECT_EQ(ended_a.code, 143) << read_text(tmp("a_err.txt"));
  EXPECT_EQ(ended_b.code, 143) << read_text(tmp("b_err.txt"));
  const std::string err = read_text(tmp("a_err.txt"));
  EXPECT_EQ(err.rfind("mabd: terminated (SIGTERM) after ", 0), 0u) << err;
  EXPECT_NE(err.find(" of 100000000 steps (outputs are complete up to there)"),
            std::string::npos)
      << err;
  // Whole rows: one stats line per step taken, one pose row per step plus the initial one.
  const std::size_t poses = expect_whole_pose_rows(read_text(csv));
  const std::size_t steps = expect_whole_stats_lines(read_text(stats));
  EXPECT_GT(steps, 0u);
  EXPECT_EQ(poses, steps + 1);
  expect_valid_glb(glb);
}

TEST_F(CliTest, AKilledRunLeavesWholeRows) {
  // SIGKILL cannot be handled: the files hold what was written, which ends on a row.
  const fs::path csv = tmp("poses.csv");
  const fs::path stats = tmp("stats.jsonl");
  const pid_t pid = start_cli({"run", scene("pendulum.json"), "--steps", "100000000", "--out",
                               csv.string(), "--stats", stats.string()},
                              tmp("out.txt"), tmp("err.txt"));
  EXPECT_TRUE(wait_for_size(csv, 3'000'000, 30.0));  // several buffers written
  ::kill(pid, SIGKILL);
  const Ended ended = wait_for(pid);
  EXPECT_EQ(ended.signal, SIGKILL);
  // The kernel may stop a large write when SIGKILL arrives: whole rows, then at most one
  // cut row without its newline (docs/output-formats.md), which the readers skip.
  auto whole_part = [](std::string text) {
    const std::size_t end = text.rfind('\n');
    text.resize(end == std::string::npos ? 0 : end + 1);
    return text;
  };
  const std::string pose_text = read_text(csv), stats_text = read_text(stats);
  EXPECT_GT(expect_whole_pose_rows(whole_part(pose_text)), 0u);
  EXPECT_GT(expect_whole_stats_lines(whole_part(stats_text)), 0u);
  EXPECT_LT(pose_text.size() - whole_part(pose_text).size(), 200u);  // at most one cut row
  const Result plot = run("plot " + quote(stats.string()) + " -o " + quote(tmp("k.svg").string()));
  EXPECT_EQ(plot.code, 0) << plot.err;
}

TEST_F(CliTest, ReadersSkipACutLastLine) {
  // What SIGKILL can leave: whole stats lines and a cut one without its newline.
  const fs::path stats = tmp("cut.jsonl");
  {
    std::ofstream out(stats);
    out << R"({"step": 1, "time": 0.01, "kinetic_energy": 1, "potential_energy": 0})" << "\n"
        << R"({"step": 2, "time": 0.02, "kinetic_energy": 1, "potential_energy": 0})" << "\n"
        << R"({"step": 3, "time": 0.03, "kinet)";
  }
  const Result plot = run("plot " + quote(stats.string()) + " -o " + quote(tmp("cut.svg").string()));
  EXPECT_EQ(plot.code, 0) << plot.err;
  EXPECT_NE(plot.err.find("last line is cut"), std::string::npos) << plot.err;
  // A bad line that is not the last is still an error.
  {
    std::ofstream out(stats);
    out << R"({"step": 1, "time": 0.01, "kinet)" << "\n"
        << R"({"step": 2, "time": 0.02, "kinetic_energy": 1, "potential_energy": 0})" << "\n";
  }
  const Result bad = run("plot " + quote(stats.string()) + " -o " + quote(tmp("bad.svg").string()));
  EXPECT_NE(bad.code, 0);
  EXPECT_NE(bad.err.find(":1: not a JSON object"), std::string::npos) << bad.err;
}
