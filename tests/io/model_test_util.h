// Helpers shared by the robot-model import tests (urdf_test.cpp, mjcf_test.cpp).
#pragma once

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "mabd/error.h"
#include "mabd/scene.h"

namespace mabd::test {

/// Writes `text` to a file named `name` in a directory of this test process; returns its path.
inline std::string write_model(const std::string& name, const std::string& text) {
  const std::filesystem::path dir =
      std::filesystem::path(testing::TempDir()) / ("model_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::filesystem::path path = dir / name;
  std::ofstream(path) << text;
  return path.string();
}

/// The SceneError message of loading `path` (a test failure if it loads).
inline std::string error_of(const std::string& path) {
  try {
    load_model(path);
  } catch (const SceneError& e) {
    return e.what();
  }
  ADD_FAILURE() << path << ": no SceneError";
  return {};
}

/// True if one of the scene's warnings contains `part`.
inline bool has_warning(const Scene& scene, const std::string& part) {
  return std::any_of(scene.warnings.begin(), scene.warnings.end(),
                     [&](const std::string& w) { return w.find(part) != std::string::npos; });
}

}  // namespace mabd::test
