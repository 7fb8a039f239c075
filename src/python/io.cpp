// Scenes in, glTF out: worlds from scene files or JSON text, and the trajectory recorder
// (binary glTF of the bodies' motion, the file `mabd view` turns into a viewer page).
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "io/gltf_export.h"
#include "python/bindings.h"

namespace mabd::python {

namespace {

bool is_model(const std::string& name) {
  const std::string ext = std::filesystem::path(name).extension().string();
  return ext == ".urdf" || ext == ".xml" || ext == ".mjcf";
}

/// A robot model (URDF, MJCF) from its text: read from its file in base_dir when that still
/// holds the same text (its meshes resolve there), else from a temporary copy.
Scene model_from_text(const std::string& text, const std::string& name,
                      const std::string& base_dir, const ModelOptions& options) {
  const std::filesystem::path original =
      std::filesystem::path(base_dir) / std::filesystem::path(name).filename();
  std::ifstream in(original, std::ios::binary);
  std::ostringstream now;
  if (in) now << in.rdbuf();
  if (in && now.str() == text) return load_model(original.string(), options);
  const std::filesystem::path dir = std::filesystem::temp_directory_path() /
                                    ("mabd-model-" + std::to_string(std::hash<std::string>{}(text)));
  std::filesystem::create_directories(dir);
  const std::filesystem::path copy = dir / std::filesystem::path(name).filename();
  {
    std::ofstream out(copy, std::ios::binary);
    out << text;
  }
  Scene scene = load_model(copy.string(), options);
  std::error_code ec;
  std::filesystem::remove_all(dir, ec);
  return scene;
}

}  // namespace

std::unique_ptr<PyWorld> world_from_scene_text(const std::string& text, const std::string& name,
                                               const std::string& base_dir, bool floating_base) {
  if (floating_base && std::filesystem::path(name).extension() != ".urdf") {
    throw SceneError(name + ": floating_base: applies to URDF models only (an MJCF body floats "
                            "with a free joint; in a scene file, set models[i].floating_base)");
  }
  ModelOptions options;
  options.floating_base = floating_base;
  Scene scene = is_model(name) ? model_from_text(text, name, base_dir, options)
                               : parse_scene(text, name, base_dir);
  scene.path = name;
  World world = build_world(scene);
  return std::make_unique<PyWorld>(std::move(world),
                                   SceneSource{text, name, base_dir, floating_base},
                                   std::move(scene.bodies), scene.default_steps,
                                   std::move(scene.warnings));
}

namespace {

std::unique_ptr<PyWorld> world_from_scene_file(const std::string& path, bool floating_base) {
  std::ifstream in(path, std::ios::binary);
  std::error_code ec;
  if (!in || std::filesystem::is_directory(path, ec)) {
    load_scene(path);  // throws the loader's own SceneError for the file
  }
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) load_scene(path);
  std::string base_dir = std::filesystem::absolute(path).parent_path().string();
  return world_from_scene_text(text.str(), path, base_dir, floating_base);
}

/// The recorder of a Python world: the world object stays alive while the recorder lives.
struct PyRecorder {
  PyRecorder(const py::object& world_object, std::size_t max_bodies)
      : owner(world_object),
        recorder(owner.cast<const PyWorld&>().world, owner.cast<const PyWorld&>().defs,
                 max_bodies) {}
  py::object owner;
  io::TrajectoryRecorder recorder;
};

}  // namespace

void bind_io(py::module_& m, py::class_<PyWorld>& cls) {
  cls.def_static("from_scene", &world_from_scene_file, py::arg("path"),
                 py::arg("floating_base") = false,
                 "A world built from a scene file (docs/scene-format.md) or a robot model "
                 "(.urdf, .xml, .mjcf; floating_base: a URDF root link moves freely instead of "
                 "being welded to the world). SceneError (a ValueError) names the file, the "
                 "item and what is wrong.")
      .def_static(
          "from_json",
          [](const std::string& text, const std::string& name, const std::string& base_dir) {
            return world_from_scene_text(text, name, std::filesystem::absolute(base_dir).string());
          },
          py::arg("text"), py::arg("name") = "scene", py::arg("base_dir") = ".",
          "A world built from scene JSON text; `name` is used in messages, `base_dir` "
          "resolves relative mesh paths.")
      .def_property_readonly(
          "scene_path",
          [](const PyWorld& w) -> py::object {
            if (!w.scene) return py::none();
            return py::str(w.scene->name);
          },
          "the scene file the world was built from, or None")
      .def_property_readonly(
          "default_steps", [](const PyWorld& w) { return w.default_steps; },
          "the scene's settings.steps (1000 when not from a scene)")
      .def_property_readonly(
          "scene_warnings", [](const PyWorld& w) { return w.scene_warnings; },
          "likely unit slips the scene loader noticed");
  m.def("load_scene", &world_from_scene_file, py::arg("path"), py::arg("floating_base") = false,
        "World.from_scene(path): a world built from a scene file.");

  py::class_<PyRecorder>(m, "Recorder",
                         "Records the bodies' poses over time and writes them as one binary "
                         "glTF 2.0 file (one node per body, one animation).")
      .def(py::init<const py::object&, std::size_t>(), py::arg("world"), py::arg("max_bodies") = 0,
           "Recorder(world, max_bodies=0): exports the first max_bodies bodies (0: all). "
           "Bodies added to the world later are not recorded.")
      .def(
          "record",
          [](PyRecorder& r) {
            const auto& w = r.owner.cast<const PyWorld&>();
            if (w.world.body_count() < r.recorder.body_count()) {
              throw InvalidArgument("Recorder.record: the world has fewer bodies than recorded");
            }
            r.recorder.record(w.world);
          },
          "Appends one frame: the world's time (s) and every recorded body's pose.")
      .def(
          "reserve", [](PyRecorder& r, std::size_t frames) { r.recorder.reserve(frames); },
          py::arg("frames"))
      .def_property_readonly("frame_count",
                             [](const PyRecorder& r) { return r.recorder.frame_count(); })
      .def_property_readonly("body_count",
                             [](const PyRecorder& r) { return r.recorder.body_count(); })
      .def(
          "write_glb",
          [](const PyRecorder& r, const std::string& path) { r.recorder.write_glb(path); },
          py::arg("path"), "Writes the .glb file.")
      .def(
          "to_glb", [](const PyRecorder& r) { return py::bytes(r.recorder.to_glb()); },
          "The .glb as bytes.");
  m.def("default_frame_every", &io::default_frame_every, py::arg("dt"),
        "Steps between recorded frames for about 60 frames per simulated second.");
}

}  // namespace mabd::python
