// `mabd protein FILE.pdb --markers markers.json --out traj.pdb [--out anim.glb]`: the backbone
// of a PDB file as an articulated model, posed by inverse kinematics at the markers' keyframes
// and simulated between them (examples/protein/README.md).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "io/gltf_export.h"
#include "io/pdb.h"
#include "io/protein.h"
#include "io/protein_rollout.h"

namespace mabd::cli {

namespace {

struct ProteinOptions {
  std::string pdb;
  std::string markers;
  std::vector<std::string> out;
  int model = 0;
  io::BackboneOptions backbone;
  io::RolloutOptions rollout;
  bool quiet = false;
};

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// Writes `bytes` to `path` through a temporary file renamed over it.
void write_file(const std::string& path, const std::string& bytes) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << bytes;
    out.close();
    if (!out) {
      std::error_code ignored;
      std::filesystem::remove(tmp, ignored);
      throw OutputError("--out: error writing '" + path + "'");
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec)
    throw OutputError("--out: cannot rename '" + tmp + "' to '" + path + "': " + ec.message());
}

int protein_command(const ProteinOptions& o) {
  for (const std::string& path : o.out) {
    if (!ends_with(path, ".pdb") && !ends_with(path, ".glb")) {
      throw UsageError("--out: '" + path + "' must end in .pdb (trajectory) or .glb (animation)");
    }
  }
  check_positive("--dt", o.rollout.dt);
  check_positive("--drive-period", o.rollout.drive_period);
  check_positive("--frame-every", o.rollout.frame_every);
  check_non_negative("--settle", o.rollout.settle_steps);
  check_positive("--newton", static_cast<std::int64_t>(o.rollout.newton_iterations));
  if (o.model < 0) throw UsageError("--model: must be >= 0 (0 = the first model)");

  // Every input is read and checked before anything is written.
  const io::PdbStructure structure = io::read_structure(o.pdb, io::PdbReadOptions{o.model});
  const io::BackboneModel model = io::build_backbone(structure, o.backbone);
  for (const std::string& w : model.warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
  const std::vector<io::MarkerKeyframe> keys = io::read_markers(o.markers, model);

  std::ostringstream pdb;
  io::TrajectoryRecorder recorder(model.bodies);
  int frame = 0;
  const io::RolloutReport report =
      io::run_rollout(model, keys, o.rollout, [&](double time, const std::vector<Pose>& poses) {
        io::write_pdb_model(pdb, model.structure, io::place_atoms(model, poses), ++frame);
        recorder.record(time, poses);
      });
  pdb << "END\n";

  std::printf("%s: %zu residues in %zu segments, %zu bodies, %zu hinges\n", o.pdb.c_str(),
              model.residues.size(), model.segments.size(), model.bodies.size(),
              model.hinges.size());
  for (std::size_t k = 0; k < keys.size(); ++k) {
    std::printf("keyframe %zu (t = %g s, %zu markers): IK RMS %.3g A, simulated RMS %.3g A\n", k,
                keys[k].time, keys[k].markers.size(), report.keyframes[k].rms,
                report.rollout_rms[k]);
  }
  std::printf(
      "%lld steps of %g s, %.3f ms/step; max relative bond deviation %.3g, "
      "max joint residual %.3g A\n",
      static_cast<long long>(report.steps), o.rollout.dt, report.mean_step_ms,
      report.max_bond_deviation, report.max_joint_residual);
  for (const std::string& path : o.out) {
    if (ends_with(path, ".pdb")) {
      write_file(path, pdb.str());
    } else {
      write_file(path, recorder.to_glb());
    }
    std::printf("wrote %s (%d frames)\n", path.c_str(), frame);
  }
  return kExitOk;
}

}  // namespace

void add_protein_command(CLI::App& app, std::function<int()>& action) {
  auto o = std::make_shared<ProteinOptions>();
  CLI::App* sub = app.add_subcommand(
      "protein", "Pose a PDB backbone at C-alpha marker keyframes (IK) and simulate between them");
  sub->add_option("pdb", o->pdb,
                  "Protein structure: PDB, or mmCIF (.cif, .mmcif); backbone N, CA, C, O")
      ->required();
  sub->add_option("--markers", o->markers, "Keyframes of C-alpha targets (JSON)")->required();
  sub->add_option("--out", o->out,
                  "Write the trajectory: .pdb (MODEL per frame) or .glb (animation); repeatable");
  sub->add_option("--model", o->model,
                  "Model to read (PDB MODEL serial, mmCIF pdbx_PDB_model_num; default: the first)");
  sub->add_option("--dt", o->rollout.dt, "Time step (model s, default 0.005)");
  sub->add_option("--settle", o->rollout.settle_steps, "Steps after the last keyframe (default 0)");
  sub->add_option("--frame-every", o->rollout.frame_every,
                  "One output frame every K steps (default 1)");
  sub->add_option("--drive-period", o->rollout.drive_period,
                  "Response period of the hinge drives (model s, default 0.01); each hinge's "
                  "stiffness follows the inertia of the chain it turns");
  sub->add_option("--damping-ratio", o->rollout.drive_damping_ratio,
                  "Damping ratio of the hinge drives (default 1)");
  sub->add_flag("--rigid-drives", o->rollout.rigid_drives,
                "Hinge angles follow the interpolated keyframe angles exactly");
  sub->add_option("--youngs-modulus", o->backbone.youngs_modulus,
                  "Young's modulus of the bodies (model Pa = Da/(A s^2), default 1e14)");
  sub->add_option("--newton", o->rollout.newton_iterations,
                  "Newton iterations per step (default 4)");
  sub->callback([&action, o] { action = [o] { return protein_command(*o); }; });
}

}  // namespace mabd::cli
