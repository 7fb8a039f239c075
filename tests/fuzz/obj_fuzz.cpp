// libFuzzer target: the Wavefront OBJ loader. load_obj reads a file, so the bytes go to a
// temporary file first; the mesh then goes through the checks that use it (validate_shape,
// is_closed, and the mass properties of a closed mesh). The API documents InvalidArgument for
// malformed files and degenerate meshes; anything else that escapes, a crash or a sanitizer
// report is a finding.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "fuzz_util.h"
#include "mabd/error.h"
#include "mabd/shape.h"

namespace {

/// One temporary file per process, removed at exit.
const std::string& temp_path() {
  static const std::string path = [] {
    const char* dir = std::getenv("TMPDIR");
    std::string tmpl = std::string(dir && *dir ? dir : "/tmp") + "/mabd_obj_fuzz_XXXXXX.obj";
    const int fd = mkstemps(tmpl.data(), 4);
    if (fd < 0) {
      std::perror("obj_fuzz: mkstemps");
      std::abort();
    }
    close(fd);
    static std::string removed_at_exit;
    removed_at_exit = tmpl;
    std::atexit([] { std::remove(removed_at_exit.c_str()); });
    return tmpl;
  }();
  return path;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size > mabd::fuzz::kMaxInputBytes) return -1;
  {
    std::ofstream out(temp_path(), std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  try {
    mabd::ShapeDef shape;
    shape.type = mabd::ShapeType::Mesh;
    shape.mesh = mabd::load_obj(temp_path());
    mabd::validate_shape(shape, /*collider_only=*/true);
    if (mabd::is_closed(shape.mesh)) {
      mabd::validate_shape(shape);
      mabd::compute_mass_properties(shape, 1000.0);
    }
  } catch (const mabd::InvalidArgument&) {
  }
  return 0;
}
