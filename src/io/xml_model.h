// Shared pieces of the URDF and MJCF loaders (urdf.cpp, mjcf.cpp): reading an XML file with
// line-numbered errors, typed attribute access, and turning a link's mass properties and
// collision geometry into a mabd body.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <tinyxml2.h>

#include "mabd/body.h"
#include "mabd/math.h"
#include "mabd/scene.h"
#include "mabd/shape.h"

namespace mabd::io {

/// An XML file being read: its name (for messages), the parsed document and the warnings the
/// loader collects (copied into Scene::warnings).
class XmlFile {
 public:
  /// Reads and parses `path`. Throws SceneError "PATH: cannot open file" or
  /// "PATH: line L: malformed XML: reason".
  explicit XmlFile(const std::string& path);

  const std::string& path() const { return path_; }
  /// Directory of the file ("." for a bare name): relative paths in the model start there.
  std::string dir() const;
  const tinyxml2::XMLElement* root() const { return doc_.RootElement(); }
  /// The root element; fails "the root element of a FORMAT file must be <TAG>" if it is not
  /// `tag`.
  const tinyxml2::XMLElement* root(const char* tag, const char* format) const;

  /// "line L: <tag name='n'>" for messages.
  static std::string where(const tinyxml2::XMLElement* e);
  /// Throws SceneError "PATH: line L: <tag name='n'>: what".
  [[noreturn]] void fail(const tinyxml2::XMLElement* e, const std::string& what) const;
  /// Adds the warning "PATH: line L: <tag name='n'>: what".
  void warn(const tinyxml2::XMLElement* e, const std::string& what);
  std::vector<std::string>& warnings() { return warnings_; }

  /// Warns about every attribute of `e` not in `known`, and every child element whose tag is
  /// not in `known_children` ("... is not supported; ignored").
  void check(const tinyxml2::XMLElement* e, const std::vector<std::string>& known,
             const std::vector<std::string>& known_children = {});

  /// Attribute text, or nullopt when absent.
  static std::optional<std::string> text(const tinyxml2::XMLElement* e, const char* name);
  /// Attribute text; fails "missing attribute 'name'" when absent.
  std::string require_text(const tinyxml2::XMLElement* e, const char* name) const;
  /// Whitespace-separated finite numbers parsed from `value` (attribute `name` of `e`, for
  /// messages). `count` > 0: exactly that many; `count` = 0: one or more.
  std::vector<double> numbers(const tinyxml2::XMLElement* e, const char* name,
                              const std::string& value, std::size_t count) const;
  /// Attribute `name` as `count` numbers, or nullopt when absent.
  std::optional<std::vector<double>> numbers(const tinyxml2::XMLElement* e, const char* name,
                                             std::size_t count) const;
  /// One number, or `fallback` when absent.
  double number(const tinyxml2::XMLElement* e, const char* name, double fallback) const;
  /// Three numbers, or `fallback` when absent.
  Vec3 vec3(const tinyxml2::XMLElement* e, const char* name, const Vec3& fallback) const;

 private:
  std::string path_;
  tinyxml2::XMLDocument doc_;
  std::vector<std::string> warnings_;
};

/// Pose composition: `parent` * `child` (child given in the parent's frame).
Pose compose(const Pose& parent, const Pose& child);
/// The pose `child` expressed in the frame `parent` (inverse(parent) * child).
Pose relative(const Pose& parent, const Pose& child);
/// Fixed-axis roll-pitch-yaw (URDF: R = Rz(yaw) Ry(pitch) Rx(roll)), rad.
Quat rpy_quat(const Vec3& rpy);

/// Mass, centre of mass and second moment of the parts of a body, in the body's frame.
struct MassSum {
  double mass = 0;                       ///< kg
  Vec3 first_moment = Vec3::Zero();      ///< kg m
  Mat3 second_moment = Mat3::Zero();     ///< integral rho x x^T about the frame origin, kg m^2

  /// Adds a part of `mass` (kg) whose centre of mass is at `com` and whose second moment about
  /// its centre of mass is `sigma` (kg m^2), both in the frame `pose` (in the body frame).
  void add(double mass, const Vec3& com, const Mat3& sigma, const Pose& pose);
  /// Adds another sum given in the frame `pose` (in this body's frame).
  void add(const MassSum& other, const Pose& pose);
};

/// Second moment (kg m^2) of the inertia tensor `inertia` (kg m^2): tr(I)/2 I3 - I.
Mat3 second_moment_of_inertia(const Mat3& inertia);

/// The body of a link: its shape is a box mesh with the link's mass, centre of mass and
/// second moment (in the link frame, so the body frame is the link frame), its collision
/// primitives the link's geometry (collision off when it has none). A link whose second
/// moment is not positive along a principal axis (a rod with zero inertia about its axis)
/// gets a box 1e-3 as thick as its largest side there, with a warning in `warnings` naming
/// `label`. `mass.mass` must be > 0.
BodyDef link_body(const std::string& name, const MassSum& mass,
                  std::vector<CollisionPrimitive> primitives, BodyKind kind, const Pose& pose,
                  const std::string& label, std::vector<std::string>& warnings);

/// Mass properties of a solid cube of `mass` (kg) and side `side` (m) centred at the origin:
/// the stand-in for links without inertia (docs/model-import.md).
MassSum cube_mass(double mass, double side);

/// A mesh shape read from the OBJ file `file` (relative to `base_dir`), its vertices scaled
/// by `scale`. Other formats and missing files give nullopt and a warning on `e`.
std::optional<ShapeDef> obj_mesh(XmlFile& xml, const tinyxml2::XMLElement* e,
                                 const std::string& file, const std::string& base_dir,
                                 const Vec3& scale);

/// Mass (kg) of the auxiliary bodies the loaders insert (massless links, several joints on
/// one MJCF body), as a fraction of the body they belong to.
inline constexpr double kAuxiliaryMassFraction = 1e-3;

}  // namespace mabd::io
