// numpy arrays to and from the definitions' point and index lists (mesh vertices, soft body
// nodes, triangles, tets): (n, 3) float64 points in m, (n, K) int64 indices. A wrong shape or
// a negative or too large index is an InvalidArgument naming the field.
#pragma once

#include <array>
#include <climits>
#include <cstdint>
#include <string>
#include <vector>

#include "python/bindings.h"

namespace mabd::python {

/// "(2, 3)" for a 2 x 3 array.
inline std::string shape_of(const py::array& a) {
  std::string out = "(";
  for (py::ssize_t i = 0; i < a.ndim(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(a.shape(i));
  }
  return out + (a.ndim() == 1 ? ",)" : ")");
}

/// Checks that `a` is a 2-D array with `cols` columns; throws InvalidArgument naming `what`.
inline void check_columns(const py::array& a, py::ssize_t cols, const char* what) {
  if (a.ndim() != 2 || a.shape(1) != cols) {
    throw InvalidArgument(std::string(what) + ": expected an (n, " + std::to_string(cols) +
                          ") array, got shape " + shape_of(a));
  }
}

/// (n, 3) float64 array of the points (m).
inline py::array_t<double> points_array(const std::vector<Vec3>& points) {
  py::array_t<double> out({static_cast<py::ssize_t>(points.size()), py::ssize_t{3}});
  auto a = out.mutable_unchecked<2>();
  for (std::size_t i = 0; i < points.size(); ++i) {
    for (int k = 0; k < 3; ++k) a(static_cast<py::ssize_t>(i), k) = points[i][k];
  }
  return out;
}

/// The rows of an (n, 3) array as points (m); `what` names the field in errors.
inline std::vector<Vec3> read_points(const py::array_t<double, py::array::forcecast>& a,
                                     const char* what) {
  check_columns(a, 3, what);
  auto v = a.unchecked<2>();
  std::vector<Vec3> out(static_cast<std::size_t>(a.shape(0)));
  for (py::ssize_t i = 0; i < a.shape(0); ++i) {
    out[static_cast<std::size_t>(i)] = Vec3(v(i, 0), v(i, 1), v(i, 2));
  }
  return out;
}

/// (n, K) int64 array of the index rows.
template <std::size_t K>
py::array_t<std::int64_t> index_array(const std::vector<std::array<int, K>>& rows) {
  py::array_t<std::int64_t> out({static_cast<py::ssize_t>(rows.size()), static_cast<py::ssize_t>(K)});
  auto a = out.mutable_unchecked<2>();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    for (std::size_t k = 0; k < K; ++k) {
      a(static_cast<py::ssize_t>(i), static_cast<py::ssize_t>(k)) = rows[i][k];
    }
  }
  return out;
}

/// The rows of an (n, K) array as indices in [0, INT32_MAX] (the upper bound of each list is
/// checked where the list is used); `what` names the field, `item` an index ("node").
template <std::size_t K>
std::vector<std::array<int, K>> read_index_rows(
    const py::array_t<std::int64_t, py::array::forcecast>& a, const char* what, const char* item) {
  check_columns(a, static_cast<py::ssize_t>(K), what);
  auto t = a.unchecked<2>();
  std::vector<std::array<int, K>> out(static_cast<std::size_t>(a.shape(0)));
  for (py::ssize_t i = 0; i < a.shape(0); ++i) {
    for (std::size_t k = 0; k < K; ++k) {
      const std::int64_t index = t(i, static_cast<py::ssize_t>(k));
      if (index < 0 || index > INT32_MAX) {
        throw InvalidArgument(std::string(what) + "[" + std::to_string(i) + "]: " + item +
                              " index " + std::to_string(index) + " out of range");
      }
      out[static_cast<std::size_t>(i)][k] = static_cast<int>(index);
    }
  }
  return out;
}

}  // namespace mabd::python
