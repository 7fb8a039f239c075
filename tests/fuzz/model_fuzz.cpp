// libFuzzer target: the robot model readers (URDF and MJCF). The bytes are written to a
// temporary file, named .xml when they mention "mujoco" (read as MJCF) and .urdf otherwise,
// and read by load_model; a valid model is built into a world (build_world) that takes one
// step when it is small. The only exceptions the API documents for these calls are SceneError
// (read and build) and SimulationError (step); anything else that escapes, a crash or a
// sanitizer report is a finding. Mesh files named by the seeds ("meshes/...") resolve against
// the good test data through a link in the temporary directory.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "fuzz_util.h"
#include "mabd/error.h"
#include "mabd/scene.h"
#include "mabd/world.h"

namespace {

/// Models up to this many bodies are built into a world, and up to this many take one step
/// with at most this many Newton iterations (a step is as long as its settings ask for).
constexpr std::size_t kMaxBuiltBodies = 300;
constexpr std::size_t kMaxSteppedBodies = 64;
constexpr int kMaxNewtonIterations = 50;

/// One temporary directory per process (with a "meshes" link), removed at exit.
const std::string& temp_dir() {
  static const std::string path = [] {
    const char* dir = std::getenv("TMPDIR");
    std::string tmpl = std::string(dir && *dir ? dir : "/tmp") + "/mabd_model_fuzz_XXXXXX";
    if (mkdtemp(tmpl.data()) == nullptr) {
      std::perror("model_fuzz: mkdtemp");
      std::abort();
    }
    std::error_code ec;
    std::filesystem::create_directory_symlink(std::string(MABD_FUZZ_MESH_DIR) + "/meshes",
                                              tmpl + "/meshes", ec);
    static std::string removed_at_exit;
    removed_at_exit = tmpl;
    std::atexit([] {
      std::error_code ignored;
      std::filesystem::remove_all(removed_at_exit, ignored);
    });
    return tmpl;
  }();
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > mabd::fuzz::kMaxInputBytes) return -1;
  const std::string text = mabd::fuzz::as_text(data, size);
  const bool mjcf = text.find("mujoco") != std::string::npos;
  const std::string path = temp_dir() + (mjcf ? "/model.xml" : "/model.urdf");
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
  }
  try {
    const mabd::Scene scene = mabd::load_model(path);
    if (scene.bodies.size() > kMaxBuiltBodies) return 0;
    mabd::World world = mabd::build_world(scene);
    if (scene.bodies.size() <= kMaxSteppedBodies &&
        scene.settings.newton_iterations <= kMaxNewtonIterations) {
      world.step();
    }
  } catch (const mabd::SceneError&) {
  } catch (const mabd::SimulationError&) {
  }
  return 0;
}
