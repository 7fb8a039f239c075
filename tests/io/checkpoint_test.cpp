// Checkpoint files: a written and read checkpoint continues bit-identically; every truncation
// and every single-byte corruption of a checkpoint is rejected with an error naming the file
// (never a crash, never a partial restore); writing replaces the file atomically.
#include "io/checkpoint.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "mabd/mabd.h"

namespace fs = std::filesystem;

namespace mabd {
namespace {

World ragdoll() {
  return build_world(load_scene(std::string(MABD_SOURCE_DIR) + "/scenes/ragdoll_tumble.json"));
}

std::string temp_path(const std::string& name) {
  return (fs::temp_directory_path() / ("mabd_checkpoint_test_" + std::to_string(::getpid()) +
                                       "_" + name)).string();
}

bool same_state(const World& a, const World& b) { return a.save_state().data == b.save_state().data; }

TEST(Checkpoint, EncodesTheFrameDocumented) {
  const WorldState state{{1, 2, 3, 4, 5}};
  const std::vector<std::uint8_t> bytes = io::encode_checkpoint(state);
  ASSERT_EQ(bytes.size(), 24u + 5u + 8u);
  EXPECT_EQ(std::string(bytes.begin(), bytes.begin() + 8), "MABDCKPT");
  EXPECT_EQ(bytes[8], 1);  // version 1, little-endian
  EXPECT_EQ(bytes[9] | bytes[10] | bytes[11], 0);
  EXPECT_EQ(bytes[16], 5);  // payload length
  // FNV-1a 64 of everything before the checksum, little-endian.
  std::uint64_t h = 14695981039346656037ull;
  for (std::size_t i = 0; i < 29; ++i) h = (h ^ bytes[i]) * 1099511628211ull;
  std::uint64_t stored = 0;
  for (int k = 0; k < 8; ++k) stored |= std::uint64_t(bytes[29 + k]) << (8 * k);
  EXPECT_EQ(stored, h);
  EXPECT_EQ(io::decode_checkpoint(bytes, "x").data, state.data);
}

TEST(Checkpoint, WrittenAndReadContinuesBitIdentically) {
  const std::string path = temp_path("roundtrip.ckpt");
  World straight = ragdoll();
  for (int i = 0; i < 80; ++i) straight.step();
  World first = ragdoll();
  for (int i = 0; i < 40; ++i) first.step();
  write_checkpoint(first, path);
  EXPECT_FALSE(fs::exists(path + ".tmp"));
  World resumed = ragdoll();
  read_checkpoint(resumed, path);
  EXPECT_TRUE(same_state(resumed, first));
  for (int i = 0; i < 40; ++i) resumed.step();
  EXPECT_TRUE(same_state(resumed, straight));

  // Writing again replaces the file with the newer state.
  write_checkpoint(straight, path);
  World again = ragdoll();
  read_checkpoint(again, path);
  EXPECT_EQ(again.step_count(), 80);
  fs::remove(path);
}

TEST(Checkpoint, EveryTruncationAndCorruptionIsRejected) {
  World w = ragdoll();
  for (int i = 0; i < 5; ++i) w.step();
  const std::vector<std::uint8_t> good = io::encode_checkpoint(w.save_state());
  World target = ragdoll();
  const WorldState before = target.save_state();
  int rejected = 0;
  auto expect_rejected = [&](const std::vector<std::uint8_t>& bytes, const std::string& what) {
    try {
      target.restore_state(io::decode_checkpoint(bytes, "ck.bin"));
      ADD_FAILURE() << what << " was accepted";
    } catch (const InvalidArgument& e) {
      EXPECT_EQ(std::string(e.what()).rfind("ck.bin: ", 0), 0u) << e.what();
      ++rejected;
    }
  };
  for (std::size_t n = 0; n < good.size(); ++n) {
    expect_rejected(std::vector<std::uint8_t>(good.begin(), good.begin() + n),
                    "truncation to " + std::to_string(n) + " bytes");
  }
  for (std::size_t i = 0; i < good.size(); ++i) {
    std::vector<std::uint8_t> bad = good;
    bad[i] ^= static_cast<std::uint8_t>(1u << (i % 8));
    expect_rejected(bad, "a flipped bit in byte " + std::to_string(i));
  }
  EXPECT_EQ(rejected, static_cast<int>(2 * good.size()));
  EXPECT_EQ(target.save_state().data, before.data);  // never partially restored
}

TEST(Checkpoint, ReadErrorsNameTheFileAndLeaveTheWorldUnchanged) {
  World w = ragdoll();
  const WorldState before = w.save_state();
  const std::string missing = temp_path("missing.ckpt");
  try {
    read_checkpoint(w, missing);
    ADD_FAILURE() << "read a missing file";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(missing + ": cannot open"), std::string::npos) << e.what();
  }
  // A valid checkpoint of another scene.
  const std::string other = temp_path("other.ckpt");
  write_checkpoint(build_world(load_scene(std::string(MABD_SOURCE_DIR) + "/scenes/pendulum.json")),
                   other);
  try {
    read_checkpoint(w, other);
    ADD_FAILURE() << "restored another scene";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(std::string(e.what()).rfind(other + ": the state has 1 bodies", 0), 0u) << e.what();
  }
  EXPECT_EQ(w.save_state().data, before.data);
  fs::remove(other);
}

TEST(Checkpoint, AFailedWriteKeepsThePreviousCheckpoint) {
  World w = ragdoll();
  const std::string dir = temp_path("dir");
  fs::create_directories(dir);
  const std::string path = dir + "/ck.bin";
  write_checkpoint(w, path);
  const auto size = fs::file_size(path);
  // The temporary file cannot be created where a directory of that name exists.
  fs::create_directories(path + ".tmp");
  w.step();
  try {
    write_checkpoint(w, path);
    ADD_FAILURE() << "wrote through a directory";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()).rfind(path + ": cannot write checkpoint", 0), 0u) << e.what();
  }
  EXPECT_EQ(fs::file_size(path), size);
  World back = ragdoll();
  read_checkpoint(back, path);
  EXPECT_EQ(back.step_count(), 0);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mabd
