#include "io/protein.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "io/pdb.h"
#include "mabd/error.h"

namespace {

using namespace mabd::io;
using mabd::Vec3;

const std::string kExamples = std::string(MABD_SOURCE_DIR) + "/examples/protein/";

/// Largest distance (Angstrom) between the atoms of two frames of `model`.
double max_distance(const BackboneModel& model, const BackboneFrame& a, const BackboneFrame& b) {
  double d = 0;
  for (const BackboneResidue& r : model.residues) {
    for (int k = 0; k < kBackboneAtoms; ++k) {
      d = std::max(d, (a[r.chain][r.index][k] - b[r.chain][r.index][k]).norm());
    }
  }
  return d;
}

TEST(Protein, ModelOfThePeptide) {
  const BackboneModel m = build_backbone(read_pdb(kExamples + "pept.pdb"));
  ASSERT_EQ(m.segments.size(), 1u);
  EXPECT_EQ(m.residues.size(), 13u);
  // 13 C-alpha bodies, 12 peptide planes, 1 terminal carbonyl; 12 phi + 13 psi hinges.
  EXPECT_EQ(m.bodies.size(), 26u);
  EXPECT_EQ(m.hinges.size(), 25u);
  // The two hinges at each inner CA meet there at the N-CA-C bond angle (~111 degrees).
  for (std::size_t h = 1; h + 1 < m.hinges.size(); h += 2) {
    ASSERT_EQ(m.hinges[h].kind, DihedralKind::Phi);
    ASSERT_EQ(m.hinges[h + 1].kind, DihedralKind::Psi);
    EXPECT_EQ(m.hinges[h].anchor, m.hinges[h + 1].anchor);
    const double angle = std::acos(-m.hinges[h].axis.dot(m.hinges[h + 1].axis)) * 180 / M_PI;
    EXPECT_NEAR(angle, 111, 6) << h;
  }
}

TEST(Protein, WorldReproducesTheInputAtTimeZero) {
  for (const char* file : {"pept.pdb", "1hpv.pdb"}) {
    const PdbStructure s = read_pdb(kExamples + file);
    const BackboneModel m = build_backbone(s);
    BackboneWorldOptions options;
    options.settings.gravity = mabd::Vec3::Zero();
    const mabd::World world = make_backbone_world(m, options);
    const double d = max_distance(m, place_atoms(m, world_poses(world, m)), frame_of(s));
    std::printf("%s: largest atom distance to the input at t = 0: %.3g Angstrom\n", file, d);
    EXPECT_LT(d, 1e-6) << file;
    const double fk =
        max_distance(m, place_atoms(m, body_poses(m, reference_configuration(m))), frame_of(s));
    EXPECT_LT(fk, 1e-9) << file;
  }
  const BackboneModel two = build_backbone(read_pdb(kExamples + "1hpv.pdb"));
  EXPECT_EQ(two.segments.size(), 2u);
  EXPECT_EQ(two.bodies.size(), 2u * 2u * 99u);
}

TEST(Protein, HingeAnglesTurnTheDihedrals) {
  const PdbStructure s = read_pdb(kExamples + "pept.pdb");
  const BackboneModel m = build_backbone(s);
  BackboneConfiguration config = reference_configuration(m);
  const std::size_t phi = 5, psi = 6;  // phi and psi of residue 3
  ASSERT_EQ(m.hinges[phi].kind, DihedralKind::Phi);
  ASSERT_EQ(m.hinges[psi].kind, DihedralKind::Psi);
  config.angles[phi] = 0.4;
  config.angles[psi] = -0.7;
  const BackboneFrame a = frame_of(s);
  const BackboneFrame b = place_atoms(m, body_poses(m, config));
  const auto& r = a[0];
  const auto& q = b[0];
  auto phi_of = [](const auto& f, int i) {
    return dihedral(f[i - 1][kAtomC], f[i][kAtomN], f[i][kAtomCA], f[i][kAtomC]);
  };
  auto psi_of = [](const auto& f, int i) {
    return dihedral(f[i][kAtomN], f[i][kAtomCA], f[i][kAtomC], f[i + 1][kAtomN]);
  };
  EXPECT_NEAR(std::remainder(phi_of(q, 3) - phi_of(r, 3), 2 * M_PI), 0.4, 1e-12);
  EXPECT_NEAR(std::remainder(psi_of(q, 3) - psi_of(r, 3), 2 * M_PI), -0.7, 1e-12);
  for (int i = 1; i < 12; ++i) {
    if (i == 3) continue;
    EXPECT_NEAR(std::remainder(phi_of(q, i) - phi_of(r, i), 2 * M_PI), 0, 1e-12) << i;
    EXPECT_NEAR(std::remainder(psi_of(q, i) - psi_of(r, i), 2 * M_PI), 0, 1e-12) << i;
  }
  // Bond lengths are those of the input.
  const auto la = bond_lengths(m, a), lb = bond_lengths(m, b);
  ASSERT_EQ(la.size(), 13u * 3u + 12u);
  for (std::size_t i = 0; i < la.size(); ++i) EXPECT_NEAR(la[i], lb[i], 1e-12);
}

TEST(Protein, ResiduesWithMissingAtomsSplitTheChain) {
  PdbStructure s = read_pdb(kExamples + "pept.pdb");
  s.chains[0].residues[5].present[kAtomO] = false;
  const BackboneModel m = build_backbone(s);
  ASSERT_EQ(m.segments.size(), 2u);
  EXPECT_EQ(m.segments[0].residue_count, 5u);
  EXPECT_EQ(m.segments[1].residue_count, 7u);
  ASSERT_FALSE(m.warnings.empty());
  EXPECT_NE(m.warnings.back().find("residue LEU E 6 is left out"), std::string::npos)
      << m.warnings.back();
  EXPECT_EQ(m.find_residue('E', 7), 5u);
  EXPECT_THROW(m.find_residue('E', 6), mabd::InvalidArgument);
}

TEST(Protein, DownstreamInertiaSumsTheChildSide) {
  const BackboneModel m = build_backbone(read_pdb(kExamples + "1hpv.pdb"));
  const std::vector<double> inertia = downstream_inertia(m);
  ASSERT_EQ(inertia.size(), m.hinges.size());
  for (const BackboneSegment& seg : m.segments) {
    for (std::size_t j = seg.first_hinge; j < seg.first_hinge + seg.body_count - 1; ++j) {
      const BackboneHinge& h = m.hinges[j];
      double sum = 0;
      for (std::size_t b = h.child; b < seg.first_body + seg.body_count; ++b) {
        const Vec3 d = m.bodies[b].position - h.anchor;
        sum += *m.bodies[b].mass * (d - d.dot(h.axis) * h.axis).squaredNorm();
      }
      EXPECT_NEAR(inertia[j], sum, 1e-9 * sum) << j;
    }
  }
}

TEST(Protein, IdealBackboneHasTheRequestedGeometry) {
  const double deg = M_PI / 180;
  std::vector<PhiPsi> d;
  for (int i = 0; i < 30; ++i) {
    d.push_back(i < 15 ? PhiPsi{-57 * deg, -47 * deg} : PhiPsi{-120 * deg, 130 * deg});
  }
  const PdbStructure s = ideal_backbone(d);
  const auto& r = s.chains[0].residues;
  ASSERT_EQ(r.size(), 30u);
  for (std::size_t i = 0; i < r.size(); ++i) {
    EXPECT_NEAR((r[i].atoms[kAtomCA] - r[i].atoms[kAtomN]).norm(), 1.458, 1e-12);
    EXPECT_NEAR((r[i].atoms[kAtomC] - r[i].atoms[kAtomCA]).norm(), 1.525, 1e-12);
    EXPECT_NEAR((r[i].atoms[kAtomO] - r[i].atoms[kAtomC]).norm(), 1.231, 1e-12);
    const Vec3 a = r[i].atoms[kAtomN] - r[i].atoms[kAtomCA];
    const Vec3 b = r[i].atoms[kAtomC] - r[i].atoms[kAtomCA];
    EXPECT_NEAR(std::acos(a.dot(b) / a.norm() / b.norm()), 111.2 * deg, 1e-12);
    if (i == 0) continue;
    EXPECT_NEAR((r[i].atoms[kAtomN] - r[i - 1].atoms[kAtomC]).norm(), 1.329, 1e-12);
    EXPECT_NEAR(dihedral(r[i - 1].atoms[kAtomC], r[i].atoms[kAtomN], r[i].atoms[kAtomCA],
                         r[i].atoms[kAtomC]),
                d[i].phi, 1e-12);
    EXPECT_NEAR(dihedral(r[i - 1].atoms[kAtomN], r[i - 1].atoms[kAtomCA], r[i - 1].atoms[kAtomC],
                         r[i].atoms[kAtomN]),
                d[i - 1].psi, 1e-12);
    EXPECT_NEAR(std::abs(dihedral(r[i - 1].atoms[kAtomCA], r[i - 1].atoms[kAtomC],
                                  r[i].atoms[kAtomN], r[i].atoms[kAtomCA])),
                M_PI, 1e-12);
  }
  // A 3.6-residue-per-turn helix rises about 1.5 Angstrom per residue.
  const double rise = (r[14].atoms[kAtomCA] - r[0].atoms[kAtomCA]).norm() / 14;
  EXPECT_NEAR(rise, 1.5, 0.1);
}

}  // namespace
