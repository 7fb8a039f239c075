#include "io/protein_rollout.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "io/pdb.h"
#include "mabd/error.h"

namespace {

using namespace mabd::io;

const std::string kExamples = std::string(MABD_SOURCE_DIR) + "/examples/protein/";

/// Markers on every `stride`-th CA of `m` with the hinges turned by `amplitude` sin(...) and
/// the segments moved by `shift` (Angstrom).
std::vector<Marker> markers_for(const BackboneModel& m, double amplitude, double shift,
                                std::size_t stride) {
  BackboneConfiguration c = reference_configuration(m);
  for (std::size_t j = 0; j < c.angles.size(); ++j)
    c.angles[j] = amplitude * std::sin(1.7 * j + 0.4);
  for (mabd::Pose& root : c.roots) {
    root.orientation = mabd::Quat(Eigen::AngleAxisd(shift * 0.1, mabd::Vec3(0, 0, 1)));
    root.position = mabd::Vec3(shift, 0, 0);
  }
  const BackboneFrame f = place_atoms(m, body_poses(m, c));
  std::vector<Marker> markers;
  for (std::size_t i = 0; i < m.residues.size(); i += stride) {
    markers.push_back({i, f[m.residues[i].chain][m.residues[i].index][kAtomCA]});
  }
  return markers;
}

/// A rollout of the peptide through two keyframes (1 s and 2 s) of sparse markers (every
/// third CA), 100 settling steps after.
RolloutReport peptide_rollout(double youngs_modulus, std::size_t* frames = nullptr) {
  BackboneOptions bo;
  bo.youngs_modulus = youngs_modulus;
  const BackboneModel m = build_backbone(read_pdb(kExamples + "pept.pdb"), bo);
  const std::vector<MarkerKeyframe> keys = {{1.0, markers_for(m, 0.3, 1.0, 3)},
                                            {2.0, markers_for(m, 0.6, 2.0, 3)}};
  RolloutOptions ro;
  ro.settle_steps = 100;
  const RolloutReport r = run_rollout(m, keys, ro, [&](double, const std::vector<mabd::Pose>&) {
    if (frames != nullptr) ++*frames;
  });
  for (std::size_t k = 0; k < keys.size(); ++k) {
    std::printf("keyframe %zu (t = %g s): IK RMS %.3g Angstrom, rollout RMS %.3g Angstrom\n", k,
                keys[k].time, r.keyframes[k].rms, r.rollout_rms[k]);
  }
  std::printf(
      "E = %g: max relative bond deviation %.3g, max joint residual %.3g, %lld steps, "
      "%.3f ms/step\n",
      youngs_modulus, r.max_bond_deviation, r.max_joint_residual, static_cast<long long>(r.steps),
      r.mean_step_ms);
  return r;
}

TEST(ProteinRollout, TracksTheKeyframesAndKeepsTheBonds) {
  std::size_t frames = 0;
  const RolloutReport r = peptide_rollout(BackboneOptions{}.youngs_modulus, &frames);
  EXPECT_EQ(r.steps, 500);  // 2 s at 0.005 s, then 100
  EXPECT_EQ(frames, 501u);
  for (const IkResult& ik : r.keyframes) EXPECT_LT(ik.rms, 0.1);
  // The drives lag behind the interpolated targets, but the keyframe poses are reached
  // closely (a wrong drive sign or target would leave several Angstrom).
  for (double rms : r.rollout_rms) EXPECT_LT(rms, 0.05);
  EXPECT_LT(r.max_bond_deviation, 1e-6);
  EXPECT_LT(r.max_joint_residual, 1e-8);
}

TEST(ProteinRollout, BondDriftFollowsTheBodiesStrain) {
  // Atoms ride on the bodies' rigid poses while the hinges join the affine bodies: the bonds
  // across hinges stretch with the bodies' strain, proportional to 1 / E once the bodies are
  // stiff (at 1e10 it is 5.7e-5, only 41 times the 1.4e-6 at 1e12).
  const double soft = peptide_rollout(1e12).max_bond_deviation;
  const double stiff = peptide_rollout(1e14).max_bond_deviation;
  EXPECT_GT(soft / stiff, 50);
  EXPECT_LT(soft / stiff, 200);
}

TEST(ProteinRollout, MarkersFileErrorsNameTheItem) {
  const BackboneModel m = build_backbone(read_pdb(kExamples + "pept.pdb"));
  auto error_of = [&](const std::string& text) {
    try {
      parse_markers(text, "m.json", m);
    } catch (const mabd::SceneError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(parse_markers(R"({"keyframes": [{"time": 1, "markers": [{"chain": "E",
            "residue": 4, "position": [1, 2, 3]}]}]})",
                          "m.json", m)[0]
                .markers[0]
                .residue,
            3u);
  EXPECT_EQ(error_of(R"({"keyframes": [{"time": 1, "markers": [{"chain": "E", "residue": 40,
            "position": [1, 2, 3]}]}]})"),
            "m.json: keyframes[0].markers[0].residue: no modelled residue 40 in chain 'E' of " +
                kExamples + "pept.pdb");
  EXPECT_EQ(error_of(R"({"keyframes": [{"time": 0, "markers": []}]})"),
            "m.json: keyframes[0].time: must be positive (got 0)");
  EXPECT_NE(error_of(R"({"keyframes": [{"time": 2, "markers": [{"chain": "E", "residue": 4,
            "position": [1, 2, 3]}]}, {"time": 1, "markers": []}]})")
                .find("keyframes[1].time: must be later"),
            std::string::npos);
}

}  // namespace
