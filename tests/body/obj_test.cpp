// Tests of the Wavefront OBJ reader.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "mabd/error.h"
#include "mabd/shape.h"

namespace mabd {
namespace {

namespace fs = std::filesystem;

/// Writes `text` to a fresh file in the temporary directory, named after the running test.
std::string write_temp(const std::string& text) {
  const auto* info = testing::UnitTest::GetInstance()->current_test_info();
  const fs::path dir = fs::temp_directory_path() / "mabd_obj_test";
  fs::create_directories(dir);
  const fs::path path = dir / (std::string(info->name()) + ".obj");
  std::ofstream(path, std::ios::binary) << text;
  return path.string();
}

/// Error message of load_obj on `text`, which must throw InvalidArgument.
std::string load_error(const std::string& text, std::string* path_out = nullptr) {
  const std::string path = write_temp(text);
  if (path_out) *path_out = path;
  try {
    load_obj(path);
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  ADD_FAILURE() << "no InvalidArgument thrown for:\n" << text;
  return {};
}

using Tri = std::array<int, 3>;

const char* kSquareVertices =
    "v 0 0 0\n"
    "v 1 0 0\n"
    "v 1 1 0\n"
    "v 0 1 0\n";

TEST(LoadObj, Triangles) {
  const auto m = load_obj(write_temp("v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n"));
  ASSERT_EQ(m.vertices.size(), 3u);
  EXPECT_EQ(m.vertices[1], Vec3(1, 0, 0));
  ASSERT_EQ(m.triangles.size(), 1u);
  EXPECT_EQ(m.triangles[0], (Tri{0, 1, 2}));
}

TEST(LoadObj, QuadsAndPolygonsAreFanned) {
  const auto m = load_obj(write_temp(std::string(kSquareVertices) + "v 0.5 1.5 0\n" +
                                     "f 1 2 3 4\n"
                                     "f 1 2 3 5 4\n"));
  ASSERT_EQ(m.triangles.size(), 5u);
  EXPECT_EQ(m.triangles[0], (Tri{0, 1, 2}));
  EXPECT_EQ(m.triangles[1], (Tri{0, 2, 3}));
  EXPECT_EQ(m.triangles[2], (Tri{0, 1, 2}));
  EXPECT_EQ(m.triangles[3], (Tri{0, 2, 4}));
  EXPECT_EQ(m.triangles[4], (Tri{0, 4, 3}));
}

TEST(LoadObj, NegativeIndicesAreRelative) {
  const auto m = load_obj(write_temp(std::string(kSquareVertices) +
                                     "f -4 -3 -2\n"
                                     "v 2 2 0\n"
                                     "f -1 -2 -3\n"));
  ASSERT_EQ(m.triangles.size(), 2u);
  EXPECT_EQ(m.triangles[0], (Tri{0, 1, 2}));
  EXPECT_EQ(m.triangles[1], (Tri{4, 3, 2}));
}

TEST(LoadObj, TextureAndNormalIndexForms) {
  const auto m = load_obj(write_temp(std::string(kSquareVertices) +
                                     "vt 0 0\nvt 1 0\nvt 1 1\n"
                                     "vn 0 0 1\n"
                                     "f 1/1 2/2 3/3\n"
                                     "f 1/1/1 2/2/1 3/3/1\n"
                                     "f 1//1 3//1 4//1\n"
                                     "f -4/-3/-1 -3/-2/-1 -2/-1/-1\n"));
  ASSERT_EQ(m.triangles.size(), 4u);
  EXPECT_EQ(m.triangles[0], (Tri{0, 1, 2}));
  EXPECT_EQ(m.triangles[1], (Tri{0, 1, 2}));
  EXPECT_EQ(m.triangles[2], (Tri{0, 2, 3}));
  EXPECT_EQ(m.triangles[3], (Tri{0, 1, 2}));
}

TEST(LoadObj, IgnoresCommentsBlankLinesAndOtherRecords) {
  const auto m = load_obj(write_temp(
      "# a comment\n"
      "mtllib things.mtl\n"
      "\n"
      "o object\r\n"
      "g group\n"
      "s off\n"
      "usemtl red\n"
      "   v 0 0 0   # trailing comment\n"
      "v 1 0 0 1.0\r\n"
      "\tv 0 1 0\n"
      "vn 0 0 1\n"
      "vt 0.5 0.5\n"
      "f 1 2 3 # done\r\n"));
  ASSERT_EQ(m.vertices.size(), 3u);
  EXPECT_EQ(m.vertices[1], Vec3(1, 0, 0));  // w ignored
  EXPECT_EQ(m.vertices[2], Vec3(0, 1, 0));
  ASSERT_EQ(m.triangles.size(), 1u);
}

TEST(LoadObj, ParsesNumberForms) {
  const auto m = load_obj(write_temp("v -1.5e-2 +2 .25\nv 1 0 0\nv 0 1 0\nf 1 2 3\n"));
  EXPECT_EQ(m.vertices[0], Vec3(-1.5e-2, 2, 0.25));
}

TEST(LoadObj, MeshFilesInRepository) {
  const std::string dir = std::string(MABD_SOURCE_DIR) + "/meshes/";
  const auto tetra = load_obj(dir + "tetra.obj");
  EXPECT_EQ(tetra.vertices.size(), 4u);
  EXPECT_EQ(tetra.triangles.size(), 4u);
  const auto handle = load_obj(dir + "t_handle.obj");
  EXPECT_EQ(handle.vertices.size(), 16u);
  EXPECT_EQ(handle.triangles.size(), 24u);
  ShapeDef s;
  s.type = ShapeType::Mesh;
  s.mesh = handle;
  EXPECT_NO_THROW(validate_shape(s));
}

// ---- errors --------------------------------------------------------------------------------

TEST(LoadObjErrors, CannotOpen) {
  const std::string path = (fs::temp_directory_path() / "mabd_no_such_dir" / "x.obj").string();
  try {
    load_obj(path);
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(std::string(e.what()), path + ": cannot open");
  }
}

/// The message starts with "FILE:LINE: " and contains `words`.
void expect_error_at(const std::string& text, int line, const std::string& words) {
  std::string path;
  const std::string msg = load_error(text, &path);
  const std::string prefix = path + ":" + std::to_string(line) + ": ";
  EXPECT_EQ(msg.rfind(prefix, 0), 0u) << msg;
  EXPECT_NE(msg.find(words), std::string::npos) << msg;
}

TEST(LoadObjErrors, VertexWithTooFewCoordinates) {
  expect_error_at("# header\nv 0 0 0\nv 1 2\n", 3, "3 coordinates");
}

TEST(LoadObjErrors, VertexWithBadNumber) {
  expect_error_at("v 0 0 0\nv 1 abc 2\n", 2, "'abc' is not a number");
  expect_error_at("v 1 2 3x\n", 1, "'3x' is not a number");
  expect_error_at("v 1 nan 2\n", 1, "not finite");
}

TEST(LoadObjErrors, FaceWithTooFewVertices) {
  expect_error_at(std::string(kSquareVertices) + "f 1 2\n", 5, "at least 3 vertices");
}

TEST(LoadObjErrors, FaceIndexOutOfRange) {
  expect_error_at(std::string(kSquareVertices) + "\nf 1 2 9\n", 6, "index 9 is out of range");
  expect_error_at(std::string(kSquareVertices) + "f -5 1 2\n", 5, "index -5 is out of range");
  expect_error_at(std::string(kSquareVertices) + "f 0 1 2\n", 5, "index 0");
}

TEST(LoadObjErrors, FaceIndexNotInteger) {
  expect_error_at(std::string(kSquareVertices) + "f 1 b 3\n", 5, "'b'");
  expect_error_at(std::string(kSquareVertices) + "f 1 2.5 3\n", 5, "'2.5'");
  expect_error_at(std::string(kSquareVertices) + "f 1 /2 3\n", 5, "'/2'");
}

TEST(LoadObjErrors, UnknownRecord) {
  expect_error_at(std::string(kSquareVertices) + "vx 1 2 3\n", 5, "unknown record 'vx'");
}

TEST(LoadObjErrors, NoFaces) {
  std::string path;
  const std::string msg = load_error(kSquareVertices, &path);
  EXPECT_EQ(msg.rfind(path + ": ", 0), 0u) << msg;
  EXPECT_NE(msg.find("no faces"), std::string::npos) << msg;
}

}  // namespace
}  // namespace mabd
