// `mabd`: command-line front end (run, bench, info, plot, view, protein). Exit codes: 0 success,
// 1 output or internal failure, 2 bad usage or invalid scene, 3 simulation diverged, 130 interrupted
// (SIGINT), 143 terminated (SIGTERM).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <iostream>
#include <new>
#include <string>

#include <CLI/CLI.hpp>

#ifdef MABD_HAVE_OPENMP
#include <omp.h>
#endif

#include "cli/commands.h"
#include "mabd/error.h"

namespace mabd::cli {
/// Registers `mabd protein` (protein_command.cpp).
void add_protein_command(CLI::App& app, std::function<int()>& action);
}  // namespace mabd::cli

namespace {

using namespace mabd::cli;

int fail(int code, const std::string& message) {
  std::fflush(stdout);
  std::fprintf(stderr, "mabd: %s\n", one_line(message).c_str());
  std::fflush(stderr);
  return code;
}

/// Options shared by `run` and `bench` that override scene settings.
struct OverrideOptions {
  double dt = 0;
  std::string rotation;
  std::string integrator;
  std::string solver;
  CLI::Option* solver_option = nullptr;
  CLI::Option* dt_option = nullptr;
  CLI::Option* rotation_option = nullptr;
  CLI::Option* integrator_option = nullptr;
  int threads = 1;
  CLI::Option* threads_option = nullptr;
  bool floating_base = false;

  void add(CLI::App& app, bool with_dt) {
    if (with_dt) {
      dt_option = app.add_option("--dt", dt, "Time step (s), overrides settings.dt");
    }
    rotation_option = app.add_option("--rotation", rotation,
                                     "Rotation extraction: polar | normalized")
                          ->check(CLI::IsMember({"polar", "normalized"}));
    integrator_option = app.add_option("--integrator", integrator,
                                       "Single-body integrator: corotated | vanilla")
                            ->check(CLI::IsMember({"corotated", "vanilla"}));
    solver_option =
        app.add_option("--solver", solver, "Dual solver: auto | sparse | chain | tree | iterative")
            ->check(CLI::IsMember(mabd::dual_solver_names()));
    threads_option = app.add_option("--threads", threads,
                                    "Threads of the per-body phases of a step (overrides "
                                    "settings.threads; results are identical for any count)");
    app.add_flag("--floating-base", floating_base,
                 "URDF model: its root link moves freely instead of being welded to the world");
  }

  SettingsOverrides get() const {
    SettingsOverrides overrides;
    if (dt_option != nullptr && dt_option->count() > 0) overrides.dt = dt;
    overrides.floating_base = floating_base;
    if (rotation_option->count() > 0) overrides.rotation = parse_rotation(rotation);
    if (integrator_option->count() > 0) overrides.integrator = parse_integrator(integrator);
    if (threads_option->count() > 0) overrides.threads = threads;
    if (solver_option->count() > 0) {
      const auto& names = mabd::dual_solver_names();
      overrides.solver = static_cast<mabd::DualSolverKind>(
          std::find(names.begin(), names.end(), solver) - names.begin());
    }
    return overrides;
  }
};

int run_main(int argc, char** argv) {
  CLI::App app{"mabd: multibody simulation with Multi-Affine-Body Dynamics", "mabd"};
  app.set_version_flag("--version", std::string("mabd ") + kVersion);
  app.require_subcommand(1);

  std::function<int()> action;

  // ---- run ----------------------------------------------------------------------------
  RunOptions run;
  std::int64_t run_steps = 0;
  OverrideOptions run_overrides;
  CLI::App* run_app = app.add_subcommand("run", "Simulate a scene");
  run_app->add_option("scene", run.scene, "Scene file (JSON) or robot model (.urdf, .xml, .mjcf)")->required();
  CLI::Option* run_steps_option = run_app->add_option(
      "--steps", run_steps, "Number of steps (default: the scene's settings.steps)");
  run_overrides.add(*run_app, true);
  run_app->add_option("--out", run.out,
                      "Write body poses to this CSV file "
                      "(step,time,body,x,y,z,qw,qx,qy,qz) or animated binary glTF (.glb)");
  run_app->add_option("--stats", run.stats,
                      "Write per-step statistics to this JSON Lines file (.jsonl)");
  run_app->add_option("--joint-forces", run.joint_forces,
                      "Write joint wrenches to this CSV file "
                      "(step,time,joint,fx,fy,fz,tx,ty,tz)");
  run_app->add_option("--every", run.every,
                      "Write poses and joint wrenches every K steps (default 1)");
  std::int64_t run_frame_every = 0;
  CLI::Option* run_frame_every_option = run_app->add_option(
      "--frame-every", run_frame_every,
      "With --out x.glb: one animation frame every K steps (default: ~60 per simulated second)");
  run_app->add_option("--bodies", run.gltf_bodies,
                      "With --out x.glb: export only the first N bodies (default: all)");
  run_app->add_flag("-q,--quiet", run.quiet, "No progress bar");
  run_app->add_option("--checkpoint", run.checkpoint,
                      "Write a checkpoint of the state to this file at the end of the run "
                      "(and every N steps with --checkpoint-every)");
  run_app->add_option("--checkpoint-every", run.checkpoint_every,
                      "With --checkpoint: also write it every N steps");
  run_app->add_option("--resume", run.resume,
                      "Continue from this checkpoint (same scene and settings); --steps is "
                      "then the step to end at");
  run_app->callback([&] {
    action = [&] {
      if (run_steps_option->count() > 0) run.steps = run_steps;
      if (run_frame_every_option->count() > 0) run.frame_every = run_frame_every;
      run.overrides = run_overrides.get();
      return run_command(run);
    };
  });

  // ---- bench --------------------------------------------------------------------------
  BenchOptions bench;
  std::int64_t bench_steps = 0;
  OverrideOptions bench_overrides;
  CLI::App* bench_app =
      app.add_subcommand("bench", "Time the steps of a scene; prints one JSON line");
  bench_app->add_option("scene", bench.scene, "Scene file (JSON) or robot model (.urdf, .xml, .mjcf)")->required();
  CLI::Option* bench_steps_option = bench_app->add_option(
      "--steps", bench_steps, "Number of timed steps (default: the scene's settings.steps)");
  bench_overrides.add(*bench_app, true);
  bench_app->add_option("--warmup", bench.warmup, "Untimed steps before timing (default 0)");
  bench_app->callback([&] {
    action = [&] {
      if (bench_steps_option->count() > 0) bench.steps = bench_steps;
      bench.overrides = bench_overrides.get();
      return bench_command(bench);
    };
  });

  // ---- info ---------------------------------------------------------------------------
  InfoOptions info;
  CLI::App* info_app = app.add_subcommand("info", "Summarise a scene");
  info_app->add_option("scene", info.scene, "Scene file (JSON) or robot model (.urdf, .xml, .mjcf)")->required();
  info_app->add_flag("--floating-base", info.floating_base,
                     "URDF model: its root link moves freely instead of being welded to the world");
  info_app->callback([&] { action = [&] { return info_command(info); }; });

  // ---- plot ---------------------------------------------------------------------------
  PlotOptions plot;
  CLI::App* plot_app = app.add_subcommand("plot", "Plot a stats file (from run --stats) as SVG");
  plot_app->add_option("stats", plot.stats, "Stats file (JSONL)")->required();
  plot_app->add_option("-o,--output", plot.output, "Output file (.svg)");
  plot_app->callback([&] { action = [&] { return plot_command(plot); }; });

  // ---- view ---------------------------------------------------------------------------
  ViewOptions view;
  CLI::App* view_app = app.add_subcommand(
      "view", "Write a self-contained HTML page that plays a .glb run (with charts of its stats)");
  view_app->add_option("glb", view.glb, "Animated binary glTF (from run --out x.glb)")->required();
  view_app->add_option("--stats", view.stats,
                       "Stats file (JSONL, from run --stats) charted beside the 3D view");
  view_app->add_option("-o,--output", view.output,
                       "Output page (.html; default: next to the .glb, same name)");
  CLI::Option* view_serve_option = view_app->add_flag(
      "--serve", view.serve, "Also serve the page at http://127.0.0.1:PORT/ until Ctrl-C");
  view_app->add_option("--port", view.port, "Port for --serve (default 8000; 0 = any free port)")
      ->needs(view_serve_option);
  view_app->callback([&] { action = [&] { return view_command(view); }; });

  add_protein_command(app, action);

  if (argc <= 1) {
    std::cerr << app.help();
    return kExitUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    if (app.get_subcommands().empty() && argv[1][0] != '-') {
      return fail(kExitUsage,
                  std::string("unknown command '") + argv[1] +
                      "' (expected run, bench, info, plot, view or protein; see 'mabd --help')");
    }
    std::string message = e.what();
    const std::string help = app.get_subcommands().empty()
                                 ? std::string("mabd --help")
                                 : "mabd " + app.get_subcommands().front()->get_name() +
                                       " --help";
    return fail(kExitUsage, message + " (see '" + help + "')");
  }
  if (!action) return fail(kExitUsage, "no command given (see 'mabd --help')");
  return action();
}

}  // namespace

int main(int argc, char** argv) {
#ifdef MABD_HAVE_OPENMP
  if (!std::getenv("OMP_NUM_THREADS")) omp_set_num_threads(1);
  // CHOLMOD's supernodal factorisation asks for 4 threads in its own regions whatever the
  // thread count: with one thread wanted, no region forks (the workers' wake-ups cost more
  // than its small loops gain).
  if (omp_get_max_threads() == 1) omp_set_max_active_levels(0);
#endif
  try {
    return run_main(argc, argv);
  } catch (const UsageError& e) {
    return fail(kExitUsage, e.what());
  } catch (const mabd::SceneError& e) {
    return fail(kExitUsage, e.what());
  } catch (const mabd::InvalidArgument& e) {
    return fail(kExitUsage, e.what());
  } catch (const mabd::SimulationError& e) {
    return fail(kExitSimulation, e.what());
  } catch (const Interrupted& e) {
    return fail(e.exit_code(), e.what());
  } catch (const OutputError& e) {
    return fail(kExitFailure, e.what());
  } catch (const std::bad_alloc&) {
    return fail(kExitFailure, "out of memory");
  } catch (const std::exception& e) {
    return fail(kExitFailure, std::string("internal error: ") + e.what());
  }
}
