#include "io/protein_rollout.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "io/json_reader.h"
#include "io/keyframes.h"
#include "mabd/error.h"

namespace mabd::io {

std::vector<MarkerKeyframe> parse_markers(const std::string& text, const std::string& name,
                                          const BackboneModel& model) {
  const Json json = parse_json_text(text, name);
  const Node top(name, json, "", "");
  top.expect_object();
  top.check_fields({"keyframes"});
  const Node keys = top.require("keyframes");
  keys.expect_array();
  if (keys.size() == 0) keys.fail("needs at least one keyframe");
  std::vector<MarkerKeyframe> result;
  for (std::size_t k = 0; k < keys.size(); ++k) {
    const Node key = keys.element(k);
    key.expect_object();
    key.check_fields({"time", "markers"});
    MarkerKeyframe frame;
    const Node time = key.require("time");
    frame.time = time.positive();
    if (!result.empty() && frame.time <= result.back().time) {
      time.fail("must be later than the previous keyframe's (" + format_number(result.back().time) +
                ")");
    }
    const Node markers = key.require("markers");
    markers.expect_array();
    if (markers.size() == 0) markers.fail("needs at least one marker");
    for (std::size_t m = 0; m < markers.size(); ++m) {
      const Node marker = markers.element(m);
      marker.expect_object();
      marker.check_fields({"chain", "residue", "position"});
      const Node chain = marker.require("chain");
      const std::string id = chain.string();
      if (id.size() != 1) chain.fail("must be one character (a PDB chain identifier)");
      const Node residue = marker.require("residue");
      const int seq = residue.integer(-999);
      Marker mk;
      try {
        mk.residue = model.find_residue(id[0], seq);
      } catch (const InvalidArgument& e) {
        residue.fail(e.what());
      }
      mk.target = marker.require("position").vec3();
      frame.markers.push_back(mk);
    }
    result.push_back(std::move(frame));
  }
  return result;
}

std::vector<MarkerKeyframe> read_markers(const std::string& path, const BackboneModel& model) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw_scene_error(path, "", "cannot open");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_markers(ss.str(), path, model);
}

RolloutReport run_rollout(
    const BackboneModel& model, const std::vector<MarkerKeyframe>& keyframes,
    const RolloutOptions& options,
    const std::function<void(double time, const std::vector<Pose>& poses)>& on_frame) {
  if (keyframes.empty()) throw InvalidArgument("rollout: no keyframes");
  if (!(options.dt > 0) || !std::isfinite(options.dt)) {
    throw InvalidArgument("rollout: dt must be positive and finite");
  }
  if (!(options.drive_period > 0) || !std::isfinite(options.drive_period)) {
    throw InvalidArgument("rollout: drive_period must be positive and finite");
  }
  if (!(options.drive_damping_ratio >= 0) || !std::isfinite(options.drive_damping_ratio)) {
    throw InvalidArgument("rollout: drive_damping_ratio must be >= 0 and finite");
  }
  if (options.frame_every < 1) throw InvalidArgument("rollout: frame_every must be >= 1");
  if (options.settle_steps < 0) throw InvalidArgument("rollout: settle_steps must be >= 0");
  for (std::size_t k = 0; k < keyframes.size(); ++k) {
    if (!(keyframes[k].time > (k == 0 ? 0.0 : keyframes[k - 1].time))) {
      throw InvalidArgument("rollout: keyframe " + std::to_string(k) +
                            ": times must be > 0 and increasing");
    }
  }
  RolloutReport report;
  // IK pose of every keyframe, each from the previous one (angles then vary continuously).
  std::vector<BackboneConfiguration> poses{reference_configuration(model)};
  std::vector<double> times{0.0};
  for (const MarkerKeyframe& key : keyframes) {
    report.keyframes.push_back(solve_ik(model, key.markers, poses.back(), options.ik));
    poses.push_back(report.keyframes.back().config);
    times.push_back(key.time);
  }

  // Roots follow the keyframes' placements.
  BackboneWorldOptions wo;
  wo.settings.dt = options.dt;
  wo.settings.gravity = Vec3::Zero();
  wo.settings.newton_iterations = options.newton_iterations;
  wo.settings.tolerance = options.newton_tolerance;
  // A rigid drive is the placeholder until the gains are set per hinge below.
  wo.drive = JointDrive{DriveMode::Position, 0.0, 0.0, 0.0};
  for (std::size_t s = 0; s < model.segments.size(); ++s) {
    const BodyDef& root = model.bodies[model.segments[s].first_body];
    std::vector<Keyframe> keys;
    for (std::size_t k = 0; k < poses.size(); ++k) {
      const Pose& g = poses[k].roots[s];
      keys.push_back({times[k], Pose{g.orientation * root.position + g.position,
                                     g.orientation * root.orientation.normalized()}});
    }
    wo.root_motion.push_back(keyframe_motion(std::move(keys), false));
  }
  World world = make_backbone_world(model, wo);
  if (!options.rigid_drives) {
    const double w = 2 * M_PI / options.drive_period;
    const std::vector<double> inertia = downstream_inertia(model);
    for (std::size_t j = 0; j < model.hinges.size(); ++j) {
      world.set_drive_gains(JointId{static_cast<std::uint32_t>(j)}, inertia[j] * w * w,
                            2 * options.drive_damping_ratio * inertia[j] * w);
    }
  }

  const std::vector<double> rest =
      bond_lengths(model, place_atoms(model, body_poses(model, poses.front())));
  const std::int64_t steps =
      static_cast<std::int64_t>(std::ceil(times.back() / options.dt - 1e-9)) + options.settle_steps;
  std::vector<std::int64_t> keyframe_steps;
  for (std::size_t k = 1; k < times.size(); ++k) {
    keyframe_steps.push_back(std::llround(times[k] / options.dt));
  }
  report.rollout_rms.assign(keyframes.size(), 0.0);
  double step_ms = 0;
  std::vector<Pose> body(model.bodies.size());
  auto measure = [&](std::int64_t step) {
    body = world_poses(world, model);
    const BackboneFrame frame = place_atoms(model, body);
    const std::vector<double> l = bond_lengths(model, frame);
    for (std::size_t i = 0; i < l.size(); ++i) {
      report.max_bond_deviation = std::max(report.max_bond_deviation, std::abs(l[i] / rest[i] - 1));
    }
    for (std::size_t k = 0; k < keyframe_steps.size(); ++k) {
      if (keyframe_steps[k] != step) continue;
      double sum = 0;
      for (const Marker& m : keyframes[k].markers) {
        const BackboneResidue& r = model.residues[m.residue];
        sum += (frame[r.chain][r.index][kAtomCA] - m.target).squaredNorm();
      }
      report.rollout_rms[k] = std::sqrt(sum / keyframes[k].markers.size());
    }
    if (on_frame && (step % options.frame_every == 0 || step == steps)) {
      on_frame(world.time(), body);
    }
  };
  measure(0);
  // A spring-damper (k, c) following a ramp of slope v lags by c v / k = 2 zeta v / w: the
  // targets lead the interpolated angles by that much (velocity feed-forward).
  const double lead = options.rigid_drives
                          ? 0.0
                          : 2 * options.drive_damping_ratio * options.drive_period / (2 * M_PI);
  for (std::int64_t step = 1; step <= steps; ++step) {
    // Drive targets: the keyframe angles interpolated at the end of this step.
    const double t = step * options.dt;
    const std::size_t k = std::min<std::size_t>(
        std::upper_bound(times.begin(), times.end(), t) - times.begin(), times.size() - 1);
    const bool moving = k > 0 && t < times[k];
    const double w =
        k == 0 ? 1.0 : std::clamp((t - times[k - 1]) / (times[k] - times[k - 1]), 0.0, 1.0);
    const BackboneConfiguration& a = poses[k == 0 ? 0 : k - 1];
    const BackboneConfiguration& b = poses[k];
    const double ahead = moving ? lead / (times[k] - times[k - 1]) : 0.0;
    for (std::size_t j = 0; j < model.hinges.size(); ++j) {
      const double delta = b.angles[j] - a.angles[j];
      world.set_drive_target(JointId{static_cast<std::uint32_t>(j)},
                             a.angles[j] + w * delta + ahead * delta);
    }
    world.step();
    step_ms += world.last_step().wall_ms;
    report.max_joint_residual =
        std::max(report.max_joint_residual, world.last_step().joint_residual);
    measure(step);
  }
  report.steps = steps;
  report.mean_step_ms = steps > 0 ? step_ms / steps : 0;
  return report;
}

}  // namespace mabd::io
