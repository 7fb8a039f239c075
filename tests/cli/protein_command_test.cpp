// `mabd protein`: the shipped example end to end, and a rejected markers file.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "io/pdb.h"

namespace fs = std::filesystem;

#include "test_util.h"

namespace {

using mabd::test::quote;
using mabd::test::read_text;
using mabd::test::run_captured;

const std::string kCli = MABD_CLI_PATH;
const fs::path kExamples = fs::path(MABD_SOURCE_DIR) / "examples" / "protein";

class ProteinCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("mabd_protein_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(ProteinCommand, WritesAMultiModelPdbAndAGlb) {
  const fs::path pdb = dir_ / "traj.pdb", glb = dir_ / "traj.glb";
  const auto r = run_captured(
      kCli + " protein " + quote((kExamples / "pept.pdb").string()) + " --markers " +
          quote((kExamples / "pept_markers.json").string()) + " --frame-every 20 --out " +
          quote(pdb.string()) + " --out " + quote(glb.string()),
      dir_);
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("keyframe 2 (t = 3 s, 5 markers)"), std::string::npos) << r.out;
  // 600 steps of 0.005 s, a frame every 20: 31 models.
  const std::string text = read_text(pdb);
  std::size_t models = 0;
  for (std::size_t at = text.find("MODEL "); at != std::string::npos;
       at = text.find("MODEL ", at + 1)) {
    ++models;
  }
  EXPECT_EQ(models, 31u);
  // The first model is the input (to the 3 decimals of the format), the last one a stretched
  // peptide with the same bond lengths.
  const auto input = mabd::io::read_pdb((kExamples / "pept.pdb").string());
  const auto first = mabd::io::read_pdb(pdb.string());
  const auto last = mabd::io::read_pdb(pdb.string(), {31});
  ASSERT_EQ(first.chains.size(), 1u);
  ASSERT_EQ(first.chains[0].residues.size(), 13u);
  for (std::size_t i = 0; i < 13; ++i) {
    for (int k = 0; k < 4; ++k) {
      EXPECT_LT(
          (first.chains[0].residues[i].atoms[k] - input.chains[0].residues[i].atoms[k]).norm(),
          1e-3);
    }
  }
  const auto& a = input.chains[0].residues;
  const auto& b = last.chains[0].residues;
  const double end_to_end_in = (a[12].atoms[1] - a[0].atoms[1]).norm();
  const double end_to_end_out = (b[12].atoms[1] - b[0].atoms[1]).norm();
  EXPECT_GT(end_to_end_out, end_to_end_in + 5) << "the markers stretch the peptide";
  for (std::size_t i = 0; i < 13; ++i) {
    EXPECT_NEAR((b[i].atoms[1] - b[i].atoms[0]).norm(), (a[i].atoms[1] - a[i].atoms[0]).norm(),
                2e-3);
  }
  EXPECT_EQ(read_text(glb).substr(0, 4), "glTF");
}

TEST_F(ProteinCommand, BadMarkersWriteNothing) {
  const fs::path markers = dir_ / "m.json", out = dir_ / "traj.pdb";
  std::ofstream(markers) << R"({"keyframes": [{"time": 1, "markers": [{"chain": "X",
      "residue": 1, "position": [0, 0, 0]}]}]})";
  const auto r =
      run_captured(kCli + " protein " + quote((kExamples / "pept.pdb").string()) + " --markers " +
                       quote(markers.string()) + " --out " + quote(out.string()),
                   dir_);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find(markers.string() + ": keyframes[0].markers[0].residue: no modelled "
                                          "residue 1 in chain 'X'"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(out));
}

}  // namespace
