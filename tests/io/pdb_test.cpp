#include "io/pdb.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "mabd/error.h"

namespace {

using mabd::io::kAtomCA;
using mabd::io::kAtomN;
using mabd::io::kAtomO;
using mabd::io::parse_pdb;
using mabd::io::PdbStructure;
using mabd::io::read_pdb;

const std::string kExamples = std::string(MABD_SOURCE_DIR) + "/examples/protein/";
const std::string kBad = std::string(MABD_SOURCE_DIR) + "/tests/data/protein/";

std::size_t backbone_atoms(const PdbStructure& s) {
  std::size_t n = 0;
  for (const auto& c : s.chains) {
    for (const auto& r : c.residues) {
      for (bool p : r.present) n += p ? 1 : 0;
    }
  }
  return n;
}

/// The message of the InvalidArgument `f` throws ("" if none).
template <class F>
std::string error_of(F f) {
  try {
    f();
  } catch (const mabd::InvalidArgument& e) {
    return e.what();
  }
  return "";
}

TEST(Pdb, ReadsThePeptide) {
  const PdbStructure s = read_pdb(kExamples + "pept.pdb");
  ASSERT_EQ(s.chains.size(), 1u);
  EXPECT_EQ(s.chains[0].id, 'E');
  ASSERT_EQ(s.chains[0].residues.size(), 13u);
  EXPECT_EQ(backbone_atoms(s), 52u);
  EXPECT_TRUE(s.warnings.empty());
  const auto& first = s.chains[0].residues[0];
  EXPECT_EQ(first.name, "ASP");
  EXPECT_EQ(first.seq, 1);
  // ATOM 1 and 2 of the file.
  EXPECT_EQ(first.atoms[kAtomN], mabd::Vec3(4.868, -17.809, 25.188));
  EXPECT_EQ(first.atoms[kAtomCA], mabd::Vec3(3.984, -16.723, 25.698));
  // The last residue's O, not its OXT.
  EXPECT_EQ(s.chains[0].residues[12].atoms[kAtomO], mabd::Vec3(5.962, -19.432, 22.570));
}

TEST(Pdb, ReadsBothChainsOf1hpv) {
  const PdbStructure s = read_pdb(kExamples + "1hpv.pdb");
  ASSERT_EQ(s.chains.size(), 2u);
  EXPECT_EQ(s.chains[0].id, 'A');
  EXPECT_EQ(s.chains[1].id, 'B');
  for (const auto& c : s.chains) {
    ASSERT_EQ(c.residues.size(), 99u);
    EXPECT_EQ(c.residues.front().seq, 1);
    EXPECT_EQ(c.residues.back().seq, 99);
    for (const auto& r : c.residues) EXPECT_TRUE(r.complete()) << r.seq;
  }
  EXPECT_EQ(backbone_atoms(s), 2u * 99u * 4u);
}

const char* kTwoModels =
    "MODEL        1\n"
    "ATOM      1  N   GLY A   1       1.000   2.000   3.000  1.00  0.00           N\n"
    "ATOM      2  CA AGLY A   1       1.500   2.000   3.000  0.50  0.00           C\n"
    "ATOM      3  CA BGLY A   1       9.000   9.000   9.000  0.50  0.00           C\n"
    "ATOM      4  C   GLY A   1       2.000   2.500   3.000  1.00  0.00           C\n"
    "ATOM      5  O   GLY A   1       2.000   3.500   3.000  1.00  0.00           O\n"
    "ATOM      6  N   GLY A   2       3.000   2.500   3.000  1.00  0.00           N\n"
    "ENDMDL\n"
    "MODEL        2\n"
    "ATOM      1  N   GLY A   1      11.000   2.000   3.000  1.00  0.00           N\n"
    "ATOM      2  CA  GLY A   1      11.500   2.000   3.000  1.00  0.00           C\n"
    "ATOM      3  C   GLY A   1      12.000   2.500   3.000  1.00  0.00           C\n"
    "ATOM      4  O   GLY A   1      12.000   3.500   3.000  1.00  0.00           O\n"
    "ENDMDL\n";

TEST(Pdb, FirstModelFirstAltlocAndMissingAtomsReported) {
  const PdbStructure s = parse_pdb(kTwoModels, "two.pdb");
  EXPECT_EQ(s.model, 1);
  ASSERT_EQ(s.chains.size(), 1u);
  ASSERT_EQ(s.chains[0].residues.size(), 2u);
  EXPECT_EQ(s.chains[0].residues[0].atoms[kAtomCA], mabd::Vec3(1.5, 2, 3));
  EXPECT_FALSE(s.chains[0].residues[1].complete());
  ASSERT_EQ(s.warnings.size(), 1u);
  EXPECT_EQ(s.warnings[0], "two.pdb:7: residue GLY A 2 lacks backbone atom(s) CA, C, O");
}

TEST(Pdb, ReadsARequestedModel) {
  const PdbStructure s = parse_pdb(kTwoModels, "two.pdb", {2});
  EXPECT_EQ(s.model, 2);
  ASSERT_EQ(s.chains[0].residues.size(), 1u);
  EXPECT_EQ(s.chains[0].residues[0].atoms[kAtomN], mabd::Vec3(11, 2, 3));
  EXPECT_EQ(error_of([] { parse_pdb(kTwoModels, "two.pdb", {3}); }),
            "two.pdb: no MODEL 3 in the file");
}

TEST(Pdb, ChainsAreKeptApartAcrossTer) {
  const std::string text =
      "ATOM      1  N   GLY A   1       1.000   2.000   3.000  1.00  0.00           N\n"
      "TER\n"
      "ATOM      2  N   GLY A   2       1.000   2.000   3.000  1.00  0.00           N\n"
      "ATOM      3  CA  GLY A   2       1.000   2.000   3.000  1.00  0.00           C\n"
      "ATOM      4  C   GLY A   2       1.000   2.000   3.000  1.00  0.00           C\n"
      "ATOM      5  O   GLY A   2       1.000   2.000   3.000  1.00  0.00           O\n";
  const PdbStructure s = parse_pdb(text, "ter.pdb");
  ASSERT_EQ(s.chains.size(), 2u);
  EXPECT_EQ(s.chains[0].residues.size(), 1u);
  EXPECT_EQ(s.chains[1].residues.size(), 1u);
}

TEST(Pdb, BadFilesNameFileLineAndProblem) {
  EXPECT_EQ(error_of([] { read_pdb(kBad + "bad_coordinate.pdb"); }),
            kBad + "bad_coordinate.pdb:3: z coordinate (columns 47-54) '0.0x0' is not a number");
  EXPECT_EQ(error_of([] { read_pdb(kBad + "short_record.pdb"); }),
            kBad +
                "short_record.pdb:3: ATOM record is 46 characters long; coordinates need "
                "columns 31-54");
  EXPECT_EQ(error_of([] { read_pdb(kBad + "bad_residue_number.pdb"); }),
            kBad +
                "bad_residue_number.pdb:1: residue number (columns 23-26) 'x' is not an "
                "integer");
  EXPECT_EQ(error_of([] { read_pdb(kBad + "no_atoms.pdb"); }),
            kBad +
                "no_atoms.pdb: no residue with all backbone atoms (N, CA, C, O) in ATOM "
                "records");
  EXPECT_EQ(error_of([] { read_pdb(kBad + "missing.pdb"); }), kBad + "missing.pdb: cannot open");
}

TEST(Pdb, WrittenModelReadsBackTheSameAtoms) {
  const PdbStructure s = read_pdb(kExamples + "1hpv.pdb");
  std::ostringstream out;
  write_pdb_model(out, s, mabd::io::frame_of(s), 1);
  write_pdb_model(out, s, mabd::io::frame_of(s), 2);
  const PdbStructure back = parse_pdb(out.str(), "written.pdb", {2});
  ASSERT_EQ(back.chains.size(), 2u);
  for (std::size_t c = 0; c < 2; ++c) {
    ASSERT_EQ(back.chains[c].residues.size(), 99u);
    for (std::size_t i = 0; i < 99; ++i) {
      const auto& a = s.chains[c].residues[i];
      const auto& b = back.chains[c].residues[i];
      EXPECT_EQ(a.name, b.name);
      EXPECT_EQ(a.seq, b.seq);
      for (int k = 0; k < 4; ++k) EXPECT_LT((a.atoms[k] - b.atoms[k]).norm(), 1e-9);
    }
  }
}

}  // namespace
