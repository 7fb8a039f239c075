// End-to-end tests of `mabd run --checkpoint / --checkpoint-every / --resume`: a run
// interrupted at a checkpoint and resumed ends bit-identical to the uninterrupted run (its
// final checkpoints are byte-identical, its pose rows the same text), and bad checkpoint files
// are rejected with one error line naming the file.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test_util.h"

namespace fs = std::filesystem;

namespace {

using mabd::test::lines_of;
using mabd::test::quote;
using mabd::test::read_text;

const std::string kCli = MABD_CLI_PATH;

/// Generalized-alpha, a hinge pendulum swinging into its limits under a bounded position
/// drive, a second link on a velocity drive, penalty contact with friction: boxes thrown onto
/// a ground plane and a ball swept by a keyframed kinematic paddle.
constexpr const char* kScene = R"({
  "settings": {"dt": 0.005, "steps": 200, "contact": {"model": "penalty", "friction": true}},
  "materials": {"wood": {"density": 700, "youngs_modulus": 1e9, "friction": 0.5},
                "ground": {"friction": 0.6}},
  "bodies": [
    {"name": "ground", "shape": {"type": "plane"}, "material": "ground", "kind": "static"},
    {"name": "arm1", "shape": {"type": "box", "size": [0.5, 0.04, 0.04]}, "material": "wood",
     "mass": 1.0, "position": [0.25, 0, 1.5], "angular_velocity": [0, 3, 0],
     "collision": false},
    {"name": "arm2", "shape": {"type": "box", "size": [0.5, 0.04, 0.04]}, "material": "wood",
     "mass": 0.5, "position": [0.75, 0, 1.5], "collision": false},
    {"name": "box0", "shape": {"type": "box", "size": [0.2, 0.2, 0.2]}, "material": "wood",
     "mass": 8, "position": [0, 1, 0.11], "linear_velocity": [1, 0, 0],
     "angular_velocity": [0, 0, 1]},
    {"name": "box1", "shape": {"type": "box", "size": [0.2, 0.2, 0.2]}, "material": "wood",
     "mass": 8, "position": [0.5, 1, 0.16], "linear_velocity": [0.5, 0.3, 0],
     "angular_velocity": [0.5, 0, 1]},
    {"name": "ball", "shape": {"type": "sphere", "radius": 0.1}, "material": "wood",
     "position": [-0.5, 2, 0.3], "linear_velocity": [0.3, 0, 0]},
    {"name": "paddle", "shape": {"type": "box", "size": [0.05, 0.6, 0.2]}, "material": "ground",
     "kind": "kinematic",
     "keyframes": [{"time": 0, "position": [-1, 2, 0.1]},
                   {"time": 2, "position": [2, 2, 0.1], "orientation": [0.9888, 0, 0, 0.1494]}]}
  ],
  "joints": [
    {"name": "shoulder", "type": "hinge", "bodies": ["world", "arm1"], "anchor": [0, 0, 1.5],
     "axis": [0, 1, 0], "limits": {"lower": -0.4, "upper": 0.3},
     "drive": {"mode": "position", "target": 0.2, "stiffness": 20, "damping": 1, "max_force": 8}},
    {"name": "elbow", "type": "hinge", "bodies": ["arm1", "arm2"], "anchor": [0.5, 0, 1.5],
     "axis": [0, 1, 0], "limits": {"lower": -1, "upper": 1},
     "drive": {"mode": "velocity", "target": 2, "damping": 0.5, "max_force": 3}}
  ]
})";

using Result = mabd::test::CommandResult;

class CheckpointCli : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("mabd_checkpoint_cli_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::ofstream(tmp("scene.json")) << kScene;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  std::string tmp(const std::string& name) const { return (dir_ / name).string(); }

  /// Runs `mabd run scene.json ARGS` (ARGS already shell-quoted).
  Result run(const std::string& args) const {
    return mabd::test::run_captured(
        quote(kCli) + " run " + quote(tmp("scene.json")) + " -q " + args, dir_);
  }

  /// Runs with a bad --resume file: exit code 2, one error line naming the file and `what`.
  void expect_rejected(const std::string& file, const std::string& what) const {
    const Result r = run("--resume " + quote(file) + " --out " + quote(tmp("rejected.csv")));
    EXPECT_EQ(r.code, 2) << r.err;
    const auto lines = lines_of(r.err);
    ASSERT_EQ(lines.size(), 1u) << r.err;
    EXPECT_NE(lines[0].find(file), std::string::npos) << lines[0];
    EXPECT_NE(lines[0].find(what), std::string::npos) << lines[0];
    EXPECT_FALSE(fs::exists(tmp("rejected.csv")));  // nothing written for a rejected input
  }

  fs::path dir_;
};

std::vector<char> bytes_of(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::vector<char>((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

void write_bytes(const std::string& path, const std::vector<char>& bytes) {
  std::ofstream(path, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

TEST_F(CheckpointCli, ResumedRunIsBitIdenticalToTheUninterruptedOne) {
  Result r = run("--steps 200 --out " + quote(tmp("straight.csv")) + " --checkpoint " +
                 quote(tmp("straight.ckpt")));
  ASSERT_EQ(r.code, 0) << r.err;
  r = run("--steps 100 --checkpoint " + quote(tmp("half.ckpt")) + " --checkpoint-every 40");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(fs::exists(tmp("half.ckpt.tmp")));  // renamed into place
  r = run("--steps 200 --resume " + quote(tmp("half.ckpt")) + " --out " +
          quote(tmp("resumed.csv")) + " --checkpoint " + quote(tmp("resumed.ckpt")));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("100 steps"), std::string::npos) << r.out;  // the remaining steps

  // The whole state at step 200, byte for byte.
  const std::vector<char> straight = bytes_of(tmp("straight.ckpt"));
  ASSERT_GT(straight.size(), 1000u);
  EXPECT_TRUE(straight == bytes_of(tmp("resumed.ckpt")));

  // The resumed CSV starts at the checkpoint's step with absolute steps and times, and its
  // rows are those of the uninterrupted run from there on.
  const auto all = lines_of(read_text(tmp("straight.csv")));
  const auto resumed = lines_of(read_text(tmp("resumed.csv")));
  ASSERT_GT(resumed.size(), 1u);
  EXPECT_EQ(resumed[0], all[0]);
  std::vector<std::string> tail;
  for (std::size_t i = 1; i < all.size(); ++i) {
    if (std::stoi(all[i]) >= 100) tail.push_back(all[i]);
  }
  ASSERT_EQ(resumed.size() - 1, tail.size());
  for (std::size_t i = 0; i < tail.size(); ++i) ASSERT_EQ(resumed[i + 1], tail[i]) << "row " << i;
  EXPECT_EQ(resumed[1].rfind("100,0.5,", 0), 0u) << resumed[1];
}

TEST_F(CheckpointCli, PeriodicCheckpointsResumeFromTheirStep) {
  // Every 30 steps up to 90, then the end at 100: resuming the step-90 file (a copy taken
  // when the run is cut at 90) continues from step 90.
  Result r = run("--steps 90 --checkpoint " + quote(tmp("a.ckpt")) + " --checkpoint-every 30");
  ASSERT_EQ(r.code, 0) << r.err;
  r = run("--steps 120 --resume " + quote(tmp("a.ckpt")) + " --checkpoint " + quote(tmp("b.ckpt")));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("30 steps"), std::string::npos) << r.out;
  r = run("--steps 120 --checkpoint " + quote(tmp("c.ckpt")));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_TRUE(bytes_of(tmp("b.ckpt")) == bytes_of(tmp("c.ckpt")));
}

TEST_F(CheckpointCli, BadCheckpointFilesAreRejected) {
  ASSERT_EQ(run("--steps 20 --checkpoint " + quote(tmp("good.ckpt"))).code, 0);
  const std::vector<char> good = bytes_of(tmp("good.ckpt"));

  expect_rejected(tmp("missing.ckpt"), "cannot open");

  write_bytes(tmp("text.ckpt"), std::vector<char>{'h', 'e', 'l', 'l', 'o'});
  expect_rejected(tmp("text.ckpt"), "not a mabd checkpoint");

  std::vector<char> truncated(good.begin(), good.begin() + static_cast<long>(good.size() / 2));
  write_bytes(tmp("truncated.ckpt"), truncated);
  expect_rejected(tmp("truncated.ckpt"), "truncated");

  std::vector<char> corrupt = good;
  corrupt[corrupt.size() / 2] ^= 0x10;
  write_bytes(tmp("corrupt.ckpt"), corrupt);
  expect_rejected(tmp("corrupt.ckpt"), "checksum mismatch");

  std::vector<char> newer = good;
  newer[8] = 7;  // format version 7
  write_bytes(tmp("newer.ckpt"), newer);
  expect_rejected(tmp("newer.ckpt"), "version 7");

  // A checkpoint of another scene.
  const std::string pendulum = std::string(MABD_SOURCE_DIR) + "/scenes/pendulum.json";
  const std::string command = quote(kCli) + " run " + quote(pendulum) + " -q --steps 5 " +
                              "--checkpoint " + quote(tmp("pendulum.ckpt")) + " >/dev/null";
  ASSERT_EQ(std::system(command.c_str()), 0);
  expect_rejected(tmp("pendulum.ckpt"), "a different scene");

  // Same scene at another dt.
  Result r = run("--dt 0.001 --resume " + quote(tmp("good.ckpt")));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("dt"), std::string::npos) << r.err;
}

TEST_F(CheckpointCli, BadOptionsAreRejected) {
  Result r = run("--checkpoint-every 10");
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--checkpoint-every: needs --checkpoint"), std::string::npos) << r.err;
  r = run("--checkpoint " + quote(tmp("x.ckpt")) + " --checkpoint-every 0");
  EXPECT_EQ(r.code, 0) << r.err;  // 0: only at the end
  r = run("--checkpoint " + quote(tmp("x.ckpt")) + " --checkpoint-every -3");
  EXPECT_EQ(r.code, 2);
  r = run("--out " + quote(tmp("same")) + ".csv --checkpoint " + quote(tmp("same")) + ".csv");
  EXPECT_EQ(r.code, 2);
  ASSERT_EQ(run("--steps 50 --checkpoint " + quote(tmp("at50.ckpt"))).code, 0);
  r = run("--steps 20 --resume " + quote(tmp("at50.ckpt")));
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("beyond"), std::string::npos) << r.err;
}

}  // namespace
