#include "io/pdb.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "mabd/error.h"
#include "test_util.h"

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
  return mabd::test::error_of<mabd::InvalidArgument>(f);
}

/// `b` has the chains, residues and backbone atoms of `a` (to the 3 decimals of the files).
void expect_same_backbone(const PdbStructure& a, const PdbStructure& b) {
  ASSERT_EQ(a.chains.size(), b.chains.size());
  for (std::size_t c = 0; c < a.chains.size(); ++c) {
    EXPECT_EQ(a.chains[c].id, b.chains[c].id);
    ASSERT_EQ(a.chains[c].residues.size(), b.chains[c].residues.size());
    for (std::size_t i = 0; i < a.chains[c].residues.size(); ++i) {
      const auto& ra = a.chains[c].residues[i];
      const auto& rb = b.chains[c].residues[i];
      EXPECT_EQ(ra.name, rb.name);
      EXPECT_EQ(ra.seq, rb.seq);
      EXPECT_EQ(ra.present, rb.present);
      for (int k = 0; k < 4; ++k) EXPECT_LT((ra.atoms[k] - rb.atoms[k]).norm(), 1e-9);
    }
  }
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
  expect_same_backbone(s, parse_pdb(out.str(), "written.pdb", {2}));
}

/// The backbone atoms of `s` as an mmCIF _atom_site loop (model `model`), written the way the
/// PDB writes them: label and author columns, '.' and '?' for empty values.
std::string mmcif_rows(const PdbStructure& s, int model, double shift) {
  std::string rows;
  char buffer[200];
  int serial = 0;
  for (const auto& c : s.chains) {
    for (const auto& r : c.residues) {
      for (int k = 0; k < 4; ++k) {
        const mabd::Vec3 x = r.atoms[k] + mabd::Vec3(shift, 0, 0);
        std::snprintf(buffer, sizeof buffer,
                      "ATOM %d %s %s . %s %c 1 %d ? %.3f %.3f %.3f 1.00 0.00 %d %s %c %s %d\n",
                      ++serial,
                      k == 3   ? "O"
                      : k == 0 ? "N"
                               : "C",
                      mabd::io::kBackboneAtomNames[k], r.name.c_str(), c.id, r.seq, x.x(), x.y(),
                      x.z(), r.seq, r.name.c_str(), c.id, mabd::io::kBackboneAtomNames[k], model);
        rows += buffer;
      }
    }
  }
  return rows;
}

const char* kCifHeader =
    "data_TEST\n#\nloop_\n_atom_type.symbol\nC\nN\n#\nloop_\n"
    "_atom_site.group_PDB\n_atom_site.id\n_atom_site.type_symbol\n_atom_site.label_atom_id\n"
    "_atom_site.label_alt_id\n_atom_site.label_comp_id\n_atom_site.label_asym_id\n"
    "_atom_site.label_entity_id\n_atom_site.label_seq_id\n_atom_site.pdbx_PDB_ins_code\n"
    "_atom_site.Cartn_x\n_atom_site.Cartn_y\n_atom_site.Cartn_z\n_atom_site.occupancy\n"
    "_atom_site.B_iso_or_equiv\n_atom_site.auth_seq_id\n_atom_site.auth_comp_id\n"
    "_atom_site.auth_asym_id\n_atom_site.auth_atom_id\n_atom_site.pdbx_PDB_model_num\n";

TEST(Mmcif, ReadsTheSameBackboneAsThePdbFile) {
  const PdbStructure pdb = read_pdb(kExamples + "1hpv.pdb");
  // An alternate CA (quoted values) after the first residue's atoms, a ligand, a second model.
  std::string rows = mmcif_rows(pdb, 1, 0);
  std::size_t fifth = 0;
  for (int i = 0; i < 4; ++i) fifth = rows.find('\n', fifth) + 1;
  rows.insert(fifth, "ATOM 9998 C CA B 'PRO' A 1 1 ? 9.0 9.0 9.0 0.50 0.00 1 PRO A \"CA\" 1\n");
  const std::string text = std::string(kCifHeader) + rows +
                           "HETATM 9999 C C1 . LIG C 2 . ? 1.0 2.0 3.0 1.00 0.00 200 LIG C C1 1\n" +
                           mmcif_rows(pdb, 2, 10.0) + "#\nloop_\n_other.item\nvalue\n";
  const PdbStructure cif = mabd::io::parse_mmcif(text, "t.cif");
  EXPECT_EQ(cif.model, 1);
  expect_same_backbone(pdb, cif);
  EXPECT_TRUE(cif.warnings.empty());
  // Model 2 is model 1 moved 10 Angstrom along x.
  const PdbStructure two = mabd::io::parse_mmcif(text, "t.cif", {2});
  EXPECT_EQ(two.model, 2);
  EXPECT_NEAR(two.chains[1].residues[5].atoms[kAtomCA].x(),
              pdb.chains[1].residues[5].atoms[kAtomCA].x() + 10, 1e-9);
}

TEST(Mmcif, BadFilesNameFileLineAndProblem) {
  const PdbStructure pdb = read_pdb(kExamples + "pept.pdb");
  const std::string rows = mmcif_rows(pdb, 1, 0);
  const std::string header(kCifHeader);
  // Line 29 is the first row (28 header lines).
  std::string bad_x = rows;
  bad_x.replace(bad_x.find("4.868"), 5, "4.8x8");
  EXPECT_EQ(error_of([&] { mabd::io::parse_mmcif(header + bad_x, "t.cif"); }),
            "t.cif:29: x coordinate (columns Cartn_x) '4.8x8' is not a number");
  const std::string cut = rows.substr(0, rows.find("\n") - 10) + "\n";
  EXPECT_EQ(error_of([&] { mabd::io::parse_mmcif(header + cut, "t.cif"); }),
            "t.cif:29: _atom_site row has 16 values, the loop has 20 columns");
  std::string long_chain = rows;
  long_chain.replace(long_chain.find(" ASP E N "), 9, " ASP EE N ");
  EXPECT_EQ(error_of([&] { mabd::io::parse_mmcif(header + long_chain, "t.cif"); }),
            "t.cif:29: chain identifier 'EE' is not one character (not supported)");
  std::string no_z = header;
  no_z.replace(no_z.find("_atom_site.Cartn_z"), 18, "_atom_site.Cartn_w");
  EXPECT_EQ(error_of([&] { mabd::io::parse_mmcif(no_z + rows, "t.cif"); }),
            "t.cif:29: the _atom_site loop has no Cartn_z column");
  EXPECT_EQ(error_of([] { mabd::io::parse_mmcif("data_X\n", "t.cif"); }),
            "t.cif: no _atom_site loop");
}

}  // namespace
