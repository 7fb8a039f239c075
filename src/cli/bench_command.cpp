// `mabd bench`: time every step of a scene and print one JSON line of results.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/commands.h"

namespace mabd::cli {

namespace {

double peak_rss_mb() {
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0.0;
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  const std::size_t mid = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + mid, values.end());
  const double upper = values[mid];
  if (values.size() % 2 == 1) return upper;
  const double lower = *std::max_element(values.begin(), values.begin() + mid);
  return 0.5 * (lower + upper);
}

}  // namespace

int bench_command(const BenchOptions& options) {
  if (options.steps) check_positive("--steps", *options.steps);
  check_non_negative("--warmup", options.warmup);

  // The definitions are released as the world is built: only the world is timed.
  LoadedScene loaded = load_and_build(options.scene, options.overrides, false);
  World& world = loaded.world;
  const std::int64_t steps = resolve_steps(options.steps, loaded.scene);
  loaded.scene = Scene{};

  for (std::int64_t i = 0; i < options.warmup; ++i) world.step();

  using Clock = std::chrono::steady_clock;
  // The step's phases (StepStats), in step order.
  struct Phase {
    const char* name;
    double StepStats::*ms;
    std::vector<double> values;
  };
  std::vector<Phase> phases = {
      {"detect", &StepStats::detect_ms, {}}, {"predict", &StepStats::predict_ms, {}},
      {"body", &StepStats::body_ms, {}},     {"rows", &StepStats::rows_ms, {}},
      {"dual", &StepStats::dual_ms, {}},     {"contact", &StepStats::contact_ms, {}},
      {"check", &StepStats::check_ms, {}},   {"finish", &StepStats::finish_ms, {}}};
  if (world.soft_body_count() > 0) phases.push_back({"soft", &StepStats::soft_ms, {}});
  std::vector<double> step_ms;
  step_ms.reserve(static_cast<std::size_t>(steps));
  for (Phase& phase : phases) phase.values.reserve(static_cast<std::size_t>(steps));
  double contacts_sum = 0.0, max_penetration = 0.0;
  int contacts_max = 0;
  double residual_max = 0.0;
  double joint_residual_max = 0.0;
  double newton_sum = 0.0;
  double dual_iterations_sum = 0.0, dual_residual_max = 0.0;
  for (std::int64_t i = 0; i < steps; ++i) {
    const auto t0 = Clock::now();
    world.step();
    const auto t1 = Clock::now();
    step_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    const StepStats& stats = world.last_step();
    residual_max = std::max(residual_max, stats.residual);
    joint_residual_max = std::max(joint_residual_max, stats.joint_residual);
    newton_sum += stats.newton_iterations;
    dual_iterations_sum += stats.dual_iterations;
    dual_residual_max = std::max(dual_residual_max, stats.dual_residual);
    for (Phase& phase : phases) phase.values.push_back(stats.*phase.ms);
    contacts_sum += stats.contacts;
    contacts_max = std::max(contacts_max, stats.contacts);
    max_penetration = std::max(max_penetration, stats.max_penetration);
  }

  const StructureCounts structure = structure_counts(world);
  nlohmann::ordered_json result;
  result["scene"] = options.scene;
  result["bodies"] = world.body_count();
  result["joints"] = structure.joints;
  result["rows"] = structure.rows;
  result["steps"] = steps;
  result["warmup"] = options.warmup;
  result["dt"] = world.settings().dt;
  result["ms_per_step_median"] = median(step_ms);
  result["ms_per_step_min"] =
      step_ms.empty() ? 0.0 : *std::min_element(step_ms.begin(), step_ms.end());
  // Medians of the step phases (each over the steps, so they need not add up to the step's),
  // and their means, which add up to about the mean step.
  nlohmann::ordered_json means;
  for (const Phase& phase : phases) {
    result[std::string(phase.name) + "_ms_median"] = median(phase.values);
    double sum = 0.0;
    for (double v : phase.values) sum += v;
    means[phase.name] = steps > 0 ? sum / static_cast<double>(steps) : 0.0;
  }
  double step_sum = 0.0;
  for (double v : step_ms) step_sum += v;
  result["ms_per_step_mean"] = steps > 0 ? step_sum / static_cast<double>(steps) : 0.0;
  result["phase_ms_mean"] = means;
  result["contact_model"] = contact_model_name(world.settings().contact.model);
  result["contacts_mean"] = steps > 0 ? contacts_sum / static_cast<double>(steps) : 0.0;
  result["contacts_max"] = contacts_max;
  result["max_penetration"] = max_penetration;
  result["residual_max"] = residual_max;
  result["joint_residual_max"] = joint_residual_max;
  result["newton_iterations_mean"] = steps > 0 ? newton_sum / static_cast<double>(steps) : 0.0;
  result["peak_rss_mb"] = peak_rss_mb();
  result["rotation"] = rotation_name(world.settings().rotation);
  result["solver"] = world.last_step().solver;
  if (std::string(world.last_step().solver) == "iterative") {
    result["dual_iterations_mean"] = dual_iterations_sum / static_cast<double>(steps);
    result["dual_residual_max"] = dual_residual_max;
  }
  result["integrator"] = integrator_name(world.settings().integrator);
  const std::string line =
      result.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fflush(stdout);
  return kExitOk;
}

}  // namespace mabd::cli
