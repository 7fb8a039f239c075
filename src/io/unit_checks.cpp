// Likely unit slips in a scene (docs/scene-format.md, "Warnings").
#include "io/unit_checks.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <utility>

#include "mabd/shape.h"

namespace mabd::io {

namespace {

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.4g", v);
  return text;
}

/// Collects warnings by kind: the first kMaxWarningsPerKind of each kind in full, then a count.
class Warnings {
 public:
  void add(const std::string& kind, std::string text) {
    Kind& k = kinds_[kind];
    if (k.texts.empty()) order_.push_back(kind);
    ++k.count;
    if (k.texts.size() < kMaxWarningsPerKind) k.texts.push_back(std::move(text));
  }
  std::vector<std::string> lines() const {
    std::vector<std::string> out;
    for (const std::string& kind : order_) {
      const Kind& k = kinds_.at(kind);
      out.insert(out.end(), k.texts.begin(), k.texts.end());
      if (k.count > k.texts.size()) {
        out.push_back("... and " + std::to_string(k.count - k.texts.size()) + " more " + kind);
      }
    }
    return out;
  }

 private:
  struct Kind {
    std::size_t count = 0;
    std::vector<std::string> texts;
  };
  std::map<std::string, Kind> kinds_;
  std::vector<std::string> order_;
};

/// Smallest and largest extent (m) of a shape; nullopt-like {0, 0} for planes.
std::pair<double, double> extents(const ShapeDef& shape) {
  switch (shape.type) {
    case ShapeType::Box: return {shape.size.minCoeff(), shape.size.maxCoeff()};
    case ShapeType::Sphere: return {2 * shape.radius, 2 * shape.radius};
    case ShapeType::Capsule: return {2 * shape.radius, shape.length + 2 * shape.radius};
    case ShapeType::Cylinder:
      return {std::min(2 * shape.radius, shape.length), std::max(2 * shape.radius, shape.length)};
    case ShapeType::Mesh: {
      if (shape.mesh.vertices.empty()) return {0, 0};
      Vec3 lo = shape.mesh.vertices.front(), hi = lo;
      for (const Vec3& v : shape.mesh.vertices) {
        lo = lo.cwiseMin(v);
        hi = hi.cwiseMax(v);
      }
      const Vec3 size = hi - lo;
      return {size.minCoeff(), size.maxCoeff()};
    }
    case ShapeType::Plane: return {0, 0};
  }
  return {0, 0};
}

std::string body_label(const Scene& scene, std::size_t i, std::size_t explicit_bodies) {
  const std::string& name = scene.bodies[i].name;
  if (i < explicit_bodies) return "bodies[" + std::to_string(i) + "] '" + name + "'";
  return "generated body '" + name + "'";
}

std::string joint_label(const Scene& scene, std::size_t i, std::size_t explicit_joints) {
  const std::string& name = scene.joints[i].def.name;
  if (i < explicit_joints) return "joints[" + std::to_string(i) + "] '" + name + "'";
  return "generated joint '" + name + "'";
}

void check_bodies(const Scene& scene, std::size_t explicit_bodies, Warnings& out) {
  std::vector<double> largest(scene.bodies.size(), 0);
  std::vector<double> dynamic_sizes;
  for (std::size_t i = 0; i < scene.bodies.size(); ++i) {
    const BodyDef& body = scene.bodies[i];
    if (body.shape.type == ShapeType::Plane) continue;
    const auto [small, large] = extents(body.shape);
    largest[i] = large;
    const std::string label = body_label(scene, i, explicit_bodies);
    if (large > kMaxPlausibleSize) {
      out.add("bodies over a kilometre",
              label + ": shape is " + number(large) + " m across, over a kilometre: sizes are " +
                  "in metres (millimetres meant?)");
    }
    const bool flat_collider = body.kind != BodyKind::Dynamic && body.shape.type == ShapeType::Mesh;
    if (small > 0 && small < kMinPlausibleSize && !flat_collider) {
      out.add("bodies under 0.1 mm",
              label + ": shape is " + number(small) + " m thin, under 0.1 mm: sizes are in " +
                  "metres");
    }
    if (body.kind != BodyKind::Dynamic) continue;
    dynamic_sizes.push_back(large);
    double density = body.material.density;
    std::string source = "material density";
    if (body.mass && body.shape.type != ShapeType::Mesh) {
      const double volume = compute_mass_properties(body.shape, 1.0).volume;
      if (volume > 0) {
        density = *body.mass / volume;
        source = "mass " + number(*body.mass) + " kg in " + number(volume) + " m^3";
      }
    }
    if (density > kMaxPlausibleDensity) {
      out.add("bodies denser than any solid",
              label + ": density " + number(density) + " kg/m^3 (" + source +
                  ") is beyond any solid (at most " + number(kMaxPlausibleDensity) +
                  " kg/m^3): a mass in grams, or a size in millimetres?");
    } else if (density < kMinPlausibleDensity) {
      out.add("bodies lighter than any solid",
              label + ": density " + number(density) + " kg/m^3 (" + source +
                  ") is below any solid (at least " + number(kMinPlausibleDensity) +
                  " kg/m^3): a density in g/cm^3, or a size in the wrong unit?");
    }
  }
  // A body a hundred times larger than the scene's median body: likely a size in millimetres
  // among sizes in metres.
  if (dynamic_sizes.size() < 3) return;
  const auto middle = dynamic_sizes.begin() + static_cast<std::ptrdiff_t>(dynamic_sizes.size() / 2);
  std::nth_element(dynamic_sizes.begin(), middle, dynamic_sizes.end());
  const double median = *middle;
  if (!(median > 0)) return;
  for (std::size_t i = 0; i < scene.bodies.size(); ++i) {
    if (scene.bodies[i].kind != BodyKind::Dynamic) continue;
    if (largest[i] > kMaxSizeRatio * median) {
      out.add("bodies far larger than the others",
              body_label(scene, i, explicit_bodies) + ": shape is " + number(largest[i]) +
                  " m across, " + number(largest[i] / median) +
                  " times the median body (" + number(median) +
                  " m): sizes are in metres (millimetres meant?)");
    }
  }
}

void check_angle(const std::string& label, const std::string& field, double value,
                 Warnings& out) {
  if (!(std::abs(value) > kMaxPlausibleAngle)) return;
  out.add("angles beyond a full turn",
          label + ": " + field + " " + number(value) + " is beyond a full turn: angles are in " +
              "radians (" + number(value) + " degrees would be " +
              number(value * 3.14159265358979323846 / 180) + " rad)");
}

void check_joints(const Scene& scene, std::size_t explicit_joints, Warnings& out) {
  for (std::size_t i = 0; i < scene.joints.size(); ++i) {
    const JointDef& def = scene.joints[i].def;
    if (def.type == JointType::Hinge) {
      const std::string label = joint_label(scene, i, explicit_joints);
      if (def.limits) {
        check_angle(label, "limits.lower", def.limits->lower, out);
        check_angle(label, "limits.upper", def.limits->upper, out);
      }
      if (def.spring) check_angle(label, "spring.rest", def.spring->rest, out);
      if (def.drive && def.drive->mode == DriveMode::Position) {
        check_angle(label, "drive.target", def.drive->target, out);
      }
    } else if (def.type == JointType::Ball && def.cone) {
      const std::string label = joint_label(scene, i, explicit_joints);
      const ConeLimits& cone = *def.cone;
      if (cone.twist_lower) check_angle(label, "cone.twist_lower", *cone.twist_lower, out);
      if (cone.twist_upper) check_angle(label, "cone.twist_upper", *cone.twist_upper, out);
    }
  }
}

}  // namespace

std::vector<std::string> unit_warnings(const Scene& scene, std::size_t explicit_bodies,
                                       std::size_t explicit_joints) {
  Warnings out;
  check_bodies(scene, explicit_bodies, out);
  check_joints(scene, explicit_joints, out);
  return out.lines();
}

}  // namespace mabd::io
