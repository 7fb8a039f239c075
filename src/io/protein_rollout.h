// Keyframed motion of a protein backbone: C-alpha markers at sparse times (a JSON file), the
// inverse-kinematics pose of each keyframe, and the affine-body dynamics between them, driven
// towards those poses.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "io/protein.h"
#include "io/protein_ik.h"

namespace mabd::io {

/// The C-alpha targets observed at one time.
struct MarkerKeyframe {
  double time = 0;  ///< model seconds, > 0 (time 0 is the input structure)
  std::vector<Marker> markers;
};

/// Reads a markers file (examples/protein/README.md):
///   {"keyframes": [{"time": 1.0, "markers": [{"chain": "E", "residue": 4,
///                                              "position": [x, y, z]}, ...]}, ...]}
/// with times > 0 and strictly increasing, residues by chain identifier and residue number
/// (the first chain of that identifier), positions in Angstrom. Throws SceneError
/// "FILE: keyframes[K].markers[M].FIELD: what is wrong".
std::vector<MarkerKeyframe> read_markers(const std::string& path, const BackboneModel& model);
/// As read_markers, from JSON text; `name` stands for the file in messages.
std::vector<MarkerKeyframe> parse_markers(const std::string& text, const std::string& name,
                                          const BackboneModel& model);

struct RolloutOptions {
  double dt = 0.005;  ///< time step (model s)
  /// Hinge drives towards the keyframe angles, interpolated linearly in time between
  /// keyframes. Hinge j gets the stiffness I_j w^2 and the damping 2 zeta I_j w, where I_j is
  /// the moment of inertia of the chain on its child side about its axis (downstream_inertia)
  /// and w = 2 pi / drive_period: alone, every hinge would follow with that period, however
  /// much chain it turns (the hinges near the root of a long chain turn most of it). The
  /// targets lead the interpolated angles by 2 zeta / w times their rate, which cancels the
  /// lag of a spring-damper on a ramp.
  double drive_period = 0.01;        ///< model s, > 0
  double drive_damping_ratio = 1.0;  ///< zeta, >= 0
  /// Rigid drives instead: every hinge angle follows the interpolated targets exactly.
  bool rigid_drives = false;
  /// Newton iterations per step (cap) and their stopping tolerance (model m): the joints are
  /// exact at convergence, so these bound how far the bonds across hinges drift.
  int newton_iterations = 4;
  double newton_tolerance = 1e-8;
  /// Steps taken after the last keyframe (the drives hold its pose).
  std::int64_t settle_steps = 0;
  /// Calls `on_frame` every this many steps (and at step 0 and the last step).
  std::int64_t frame_every = 1;
  IkOptions ik;
};

/// What a rollout measured.
struct RolloutReport {
  std::vector<IkResult> keyframes;  ///< the IK solution of each keyframe
  /// RMS distance (Angstrom) of each keyframe's markers to the simulated C-alpha atoms at the
  /// step nearest the keyframe's time (the drives lag behind the IK pose).
  std::vector<double> rollout_rms;
  /// Largest |l - l0| / l0 over every bond of bond_lengths and every step, l0 the input's.
  double max_bond_deviation = 0;
  double max_joint_residual = 0;  ///< largest StepStats::joint_residual (model m)
  std::int64_t steps = 0;
  double mean_step_ms = 0;  ///< wall time of World::step
};

/// Solves the IK pose of every keyframe (each starting from the previous one), builds the
/// world (every segment's root kinematic along the keyframes' placements, every hinge
/// position-driven) and steps it to the last keyframe plus settle_steps, calling
/// `on_frame(time, body poses)` on the frames. Throws InvalidArgument on bad options or an
/// empty keyframe list, SimulationError if the dynamics diverge.
RolloutReport run_rollout(
    const BackboneModel& model, const std::vector<MarkerKeyframe>& keyframes,
    const RolloutOptions& options,
    const std::function<void(double time, const std::vector<Pose>& poses)>& on_frame = {});

}  // namespace mabd::io
