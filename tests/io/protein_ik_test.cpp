#include "io/protein_ik.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>

#include "io/pdb.h"
#include "mabd/error.h"

namespace {

using namespace mabd::io;

const std::string kExamples = std::string(MABD_SOURCE_DIR) + "/examples/protein/";

/// A configuration away from the reference: every hinge turned by up to `amplitude` rad, the
/// segments moved and turned.
BackboneConfiguration perturbed(const BackboneModel& m, double amplitude) {
  BackboneConfiguration c = reference_configuration(m);
  for (std::size_t j = 0; j < c.angles.size(); ++j) {
    c.angles[j] = amplitude * std::sin(1.7 * j + 0.4);
  }
  for (std::size_t s = 0; s < c.roots.size(); ++s) {
    c.roots[s].orientation = mabd::Quat(Eigen::AngleAxisd(0.3, mabd::Vec3(1, 2, 3).normalized()));
    c.roots[s].position = mabd::Vec3(1.0, -2.0, 0.5 * s);
  }
  return c;
}

/// Markers on every `stride`-th residue's CA at configuration `c`.
std::vector<Marker> markers_at(const BackboneModel& m, const BackboneConfiguration& c,
                               std::size_t stride) {
  const BackboneFrame f = place_atoms(m, body_poses(m, c));
  std::vector<Marker> markers;
  for (std::size_t i = 0; i < m.residues.size(); i += stride) {
    const BackboneResidue& r = m.residues[i];
    markers.push_back({i, f[r.chain][r.index][kAtomCA]});
  }
  return markers;
}

/// Solves `markers` on `m` from the reference and checks the fit: the markers start more than
/// 1 Angstrom away and end within 0.1 Angstrom RMS.
IkResult fit(const BackboneModel& m, const std::vector<Marker>& markers, const char* label) {
  const BackboneConfiguration start = reference_configuration(m);
  const double before = marker_rms(m, markers, start);
  const IkResult r = solve_ik(m, markers, start);
  std::printf("%s: %zu markers, RMS %.3g -> %.3g Angstrom in %d steps\n", label, markers.size(),
              before, r.rms, r.iterations);
  EXPECT_GT(before, 1.0);
  EXPECT_LT(r.rms, 0.1);
  EXPECT_NEAR(r.rms, marker_rms(m, markers, r.config), 1e-12);
  return r;
}

TEST(ProteinIk, FitsSparseMarkersOnThePeptide) {
  const BackboneModel m = build_backbone(read_pdb(kExamples + "pept.pdb"));
  const std::vector<Marker> markers = markers_at(m, perturbed(m, 0.5), 3);
  ASSERT_EQ(markers.size(), 5u);
  fit(m, markers, "pept");
}

TEST(ProteinIk, FitsBothChainsOf1hpv) {
  const BackboneModel m = build_backbone(read_pdb(kExamples + "1hpv.pdb"));
  const IkResult r = fit(m, markers_at(m, perturbed(m, 0.2), 7), "1hpv");
  // The bonds keep their lengths: only the hinges moved.
  const auto a = bond_lengths(m, place_atoms(m, body_poses(m, reference_configuration(m))));
  const auto b = bond_lengths(m, place_atoms(m, body_poses(m, r.config)));
  for (std::size_t i = 0; i < a.size(); ++i) ASSERT_NEAR(a[i], b[i], 1e-9);
}

TEST(ProteinIk, RejectsBadMarkers) {
  const BackboneModel m = build_backbone(read_pdb(kExamples + "pept.pdb"));
  EXPECT_THROW(solve_ik(m, {{13, mabd::Vec3::Zero()}}, reference_configuration(m)),
               mabd::InvalidArgument);
  EXPECT_THROW(solve_ik(m, {{2, mabd::Vec3(NAN, 0, 0)}}, reference_configuration(m)),
               mabd::InvalidArgument);
}

}  // namespace
