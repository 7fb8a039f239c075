// MJCF (MuJoCo XML) models -> mabd::Scene. What maps to what is documented in
// docs/model-import.md.
//
// A body without joints is welded to its parent (MuJoCo's rule): it joins its parent's mabd
// body (or, under the worldbody, forms a static body). A body with one joint is one mabd body;
// with several, joints k = 1 .. n-1 each get an auxiliary body (1e-3 of the body's mass) so
// that every mabd joint joins two bodies, in MuJoCo's order (the first joint nearest the
// parent). A free joint leaves the body unjoined.
#include "io/mjcf.h"

#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "io/json_reader.h"
#include "io/xml_model.h"
#include "mabd/error.h"

namespace mabd::io {

namespace {

using tinyxml2::XMLElement;

constexpr double kPi = 3.14159265358979323846;
const std::string kWorld = "world";

/// Attribute defaults of one default class: element tag -> attribute -> value.
using ClassDefaults = std::map<std::string, std::map<std::string, std::string>>;

/// One mabd body being assembled from MJCF bodies welded together.
struct Group {
  std::string name;
  const XMLElement* e = nullptr;  ///< the MJCF body that heads the group
  BodyKind kind = BodyKind::Dynamic;
  Pose world;                     ///< body frame at the model's configuration
  MassSum mass;
  std::vector<CollisionPrimitive> prims;
  /// Auxiliary body of a multi-joint body: the group whose mass it takes a fraction of.
  std::string aux_of;
};

/// A welded MJCF body: the group it belongs to and its frame in the group's frame.
struct BodyPlace {
  std::string group;  ///< "world" for bodies welded to the world without geometry
  Pose in_group;
  Pose world;
};

const std::vector<std::string> kOrientationAttrs = {"quat", "euler", "axisangle", "xyaxes",
                                                    "zaxis"};

class MjcfReader {
 public:
  explicit MjcfReader(const std::string& path) : xml_(path), base_dir_(xml_.dir()) {}

  Scene read() {
    const XMLElement* root = xml_.root("mujoco", "an MJCF");
    xml_.check(root, {"model"},
               {"compiler", "option", "default", "asset", "worldbody", "actuator", "equality",
                "contact"});
    scene_.path = xml_.path();
    for (const XMLElement* e = root->FirstChildElement("compiler"); e;
         e = e->NextSiblingElement("compiler")) {
      compiler(e);
    }
    for (const XMLElement* e = root->FirstChildElement("option"); e;
         e = e->NextSiblingElement("option")) {
      option(e);
    }
    classes_["main"] = {};
    for (const XMLElement* e = root->FirstChildElement("default"); e;
         e = e->NextSiblingElement("default")) {
      defaults(e, "main", true);
    }
    for (const XMLElement* e = root->FirstChildElement("asset"); e;
         e = e->NextSiblingElement("asset")) {
      assets(e);
    }
    for (const XMLElement* e = root->FirstChildElement("worldbody"); e;
         e = e->NextSiblingElement("worldbody")) {
      worldbody(e);
    }
    make_bodies();
    for (const XMLElement* e = root->FirstChildElement("equality"); e;
         e = e->NextSiblingElement("equality")) {
      equality(e);
    }
    for (const XMLElement* e = root->FirstChildElement("actuator"); e;
         e = e->NextSiblingElement("actuator")) {
      actuators(e);
    }
    for (const XMLElement* e = root->FirstChildElement("contact"); e;
         e = e->NextSiblingElement("contact")) {
      contact(e);
    }
    scene_.warnings = std::move(xml_.warnings());
    return std::move(scene_);
  }

 private:
  // ---- attributes with default classes ---------------------------------------------------

  /// Class in effect for `e`: its own class attribute, else the enclosing childclass.
  std::string class_of(const XMLElement* e, const std::string& childclass) const {
    if (const char* c = e->Attribute("class")) {
      if (!classes_.count(c)) {
        std::vector<std::string> known;
        for (const auto& [name, d] : classes_) known.push_back(name);
        xml_.fail(e, unknown_name_message("default class", c, known));
      }
      return c;
    }
    return childclass;
  }

  /// Attribute `name` of `e`, else the default of its class for its tag.
  std::optional<std::string> get(const XMLElement* e, const std::string& cls,
                                 const char* name) const {
    if (const char* v = e->Attribute(name)) return std::string(v);
    const auto c = classes_.find(cls);
    if (c == classes_.end()) return std::nullopt;
    const auto tag = c->second.find(e->Name());
    if (tag == c->second.end()) return std::nullopt;
    const auto a = tag->second.find(name);
    if (a == tag->second.end()) return std::nullopt;
    return a->second;
  }

  std::optional<std::vector<double>> nums(const XMLElement* e, const std::string& cls,
                                          const char* name, std::size_t count) const {
    const auto v = get(e, cls, name);
    if (!v) return std::nullopt;
    return xml_.numbers(e, name, *v, count);
  }

  double num(const XMLElement* e, const std::string& cls, const char* name,
             double fallback) const {
    const auto v = nums(e, cls, name, 1);
    return v ? (*v)[0] : fallback;
  }

  Vec3 vec(const XMLElement* e, const std::string& cls, const char* name,
           const Vec3& fallback) const {
    const auto v = nums(e, cls, name, 3);
    return v ? Vec3((*v)[0], (*v)[1], (*v)[2]) : fallback;
  }

  std::string str(const XMLElement* e, const std::string& cls, const char* name,
                  const std::string& fallback) const {
    return get(e, cls, name).value_or(fallback);
  }

  bool boolean(const XMLElement* e, const std::string& cls, const char* name,
               bool fallback) const {
    const auto v = get(e, cls, name);
    if (!v) return fallback;
    if (*v == "true") return true;
    if (*v == "false") return false;
    xml_.fail(e, std::string("attribute '") + name + "': expected true or false, got '" + *v +
                     "'");
  }

  /// limited="true|false|auto" with autolimits: limited when a range is given.
  bool limited(const XMLElement* e, const std::string& cls, const char* flag,
               const char* range) const {
    const std::string v = str(e, cls, flag, "auto");
    if (v == "true") return true;
    if (v == "false") return false;
    if (v != "auto") {
      xml_.fail(e, std::string("attribute '") + flag + "': expected true, false or auto, got '" +
                       v + "'");
    }
    return autolimits_ && get(e, cls, range).has_value();
  }

  double angle(double value) const { return degrees_ ? value * kPi / 180.0 : value; }

  /// Orientation of `e` from quat, euler, axisangle, xyaxes or zaxis (at most one).
  Quat orientation(const XMLElement* e, const std::string& cls) const {
    int given = 0;
    for (const std::string& a : kOrientationAttrs) given += e->Attribute(a.c_str()) ? 1 : 0;
    if (given > 1) xml_.fail(e, "more than one orientation (quat, euler, axisangle, ...)");
    if (const auto q = nums(e, cls, "quat", 4)) {
      const Quat quat((*q)[0], (*q)[1], (*q)[2], (*q)[3]);
      if (!(quat.norm() > 1e-12)) xml_.fail(e, "attribute 'quat': must be non-zero");
      return quat.normalized();
    }
    if (const auto v = nums(e, cls, "euler", 3)) {
      Quat q = Quat::Identity();
      for (int i = 0; i < 3; ++i) {
        const char c = eulerseq_[i];
        const int axis = std::tolower(c) - 'x';
        const Quat r(Eigen::AngleAxisd(angle((*v)[i]), Vec3::Unit(axis)));
        // Lower case: axes that rotate with the frame (intrinsic); upper case: fixed axes.
        q = std::islower(c) ? Quat(q * r) : Quat(r * q);
      }
      return q.normalized();
    }
    if (const auto v = nums(e, cls, "axisangle", 4)) {
      const Vec3 axis((*v)[0], (*v)[1], (*v)[2]);
      if (!(axis.norm() > 1e-12)) xml_.fail(e, "attribute 'axisangle': zero axis");
      return Quat(Eigen::AngleAxisd(angle((*v)[3]), axis.normalized()));
    }
    if (const auto v = nums(e, cls, "xyaxes", 6)) {
      const Vec3 x = Vec3((*v)[0], (*v)[1], (*v)[2]);
      Vec3 y = Vec3((*v)[3], (*v)[4], (*v)[5]);
      if (!(x.norm() > 1e-12)) xml_.fail(e, "attribute 'xyaxes': zero x axis");
      const Vec3 xn = x.normalized();
      y -= xn * xn.dot(y);
      if (!(y.norm() > 1e-12)) xml_.fail(e, "attribute 'xyaxes': y parallel to x");
      Mat3 R;
      R.col(0) = xn;
      R.col(1) = y.normalized();
      R.col(2) = xn.cross(R.col(1));
      return Quat(R);
    }
    if (const auto v = nums(e, cls, "zaxis", 3)) {
      const Vec3 z((*v)[0], (*v)[1], (*v)[2]);
      if (!(z.norm() > 1e-12)) xml_.fail(e, "attribute 'zaxis': must be non-zero");
      return Quat::FromTwoVectors(Vec3::UnitZ(), z.normalized());
    }
    return Quat::Identity();
  }

  Pose pose(const XMLElement* e, const std::string& cls) const {
    return Pose{vec(e, cls, "pos", Vec3::Zero()), orientation(e, cls)};
  }

  // ---- top-level sections --------------------------------------------------------------

  void compiler(const XMLElement* e) {
    xml_.check(e, {"angle", "eulerseq", "autolimits", "inertiafromgeom", "meshdir", "assetdir",
                   "coordinate"});
    if (const char* a = e->Attribute("angle")) {
      const std::string v = a;
      if (v != "degree" && v != "radian") {
        xml_.fail(e, "attribute 'angle': expected degree or radian, got '" + v + "'");
      }
      degrees_ = v == "degree";
    }
    if (const char* s = e->Attribute("eulerseq")) {
      const std::string v = s;
      bool ok = v.size() == 3;
      for (char c : v) ok = ok && std::string("xyzXYZ").find(c) != std::string::npos;
      if (!ok) xml_.fail(e, "attribute 'eulerseq': expected three of x, y, z, X, Y, Z");
      eulerseq_ = v;
    }
    autolimits_ = boolean(e, "", "autolimits", autolimits_);
    if (const char* v = e->Attribute("inertiafromgeom")) {
      const std::string s = v;
      if (s != "true" && s != "false" && s != "auto") {
        xml_.fail(e, "attribute 'inertiafromgeom': expected true, false or auto");
      }
      inertiafromgeom_ = s;
    }
    if (const char* v = e->Attribute("assetdir")) meshdir_ = v;
    if (const char* v = e->Attribute("meshdir")) meshdir_ = v;
    if (const char* v = e->Attribute("coordinate")) {
      if (std::string(v) != "local") {
        xml_.fail(e, "attribute 'coordinate': only local coordinates are supported");
      }
    }
  }

  void option(const XMLElement* e) {
    xml_.check(e, {"timestep", "gravity"});
    if (e->Attribute("timestep")) {
      const double dt = xml_.number(e, "timestep", 0);
      if (!(dt > 0)) xml_.fail(e, "attribute 'timestep': must be > 0");
      scene_.settings.dt = dt;
    }
    scene_.settings.gravity = xml_.vec3(e, "gravity", scene_.settings.gravity);
  }

  const std::vector<std::string>& default_tags() const {
    static const std::vector<std::string> kTags = {"geom", "joint", "motor", "position",
                                                   "velocity", "general", "site", "mesh",
                                                   "camera", "light", "equality", "tendon",
                                                   "pair"};
    return kTags;
  }

  /// <default class="c">: a copy of the parent's defaults with this level's attributes.
  void defaults(const XMLElement* e, const std::string& parent, bool top) {
    std::string name = top ? "main" : xml_.require_text(e, "class");
    if (top && e->Attribute("class")) name = e->Attribute("class");
    if (!top && classes_.count(name)) xml_.fail(e, "duplicate default class '" + name + "'");
    ClassDefaults d = classes_[parent];
    std::vector<std::string> children = default_tags();
    children.push_back("default");
    xml_.check(e, {"class"}, children);
    for (const XMLElement* c = e->FirstChildElement(); c; c = c->NextSiblingElement()) {
      if (std::string(c->Name()) == "default") continue;
      for (const tinyxml2::XMLAttribute* a = c->FirstAttribute(); a; a = a->Next()) {
        d[c->Name()][a->Name()] = a->Value();
      }
    }
    classes_[name] = d;
    for (const XMLElement* c = e->FirstChildElement("default"); c;
         c = c->NextSiblingElement("default")) {
      defaults(c, name, false);
    }
  }

  void assets(const XMLElement* e) {
    xml_.check(e, {}, {"mesh"});
    for (const XMLElement* m = e->FirstChildElement("mesh"); m; m = m->NextSiblingElement("mesh")) {
      const std::string cls = class_of(m, "main");
      xml_.check(m, {"name", "file", "scale", "class"});
      const std::string file = xml_.require_text(m, "file");
      std::string name = m->Attribute("name") ? m->Attribute("name")
                                              : std::filesystem::path(file).stem().string();
      meshes_[name] = {m, file};
      mesh_scale_[name] = vec(m, cls, "scale", Vec3::Ones());
    }
  }

  // ---- bodies --------------------------------------------------------------------------

  void worldbody(const XMLElement* e) {
    xml_.check(e, {}, {"body", "geom"});
    int n = 0;
    for (const XMLElement* g = e->FirstChildElement("geom"); g; g = g->NextSiblingElement("geom")) {
      // Each world geom is a static body of its own.
      const std::string cls = class_of(g, "main");
      Group group;
      group.e = g;
      group.kind = BodyKind::Static;
      group.name = g->Attribute("name") ? g->Attribute("name")
                                        : "world geom " + std::to_string(n);
      ++n;
      MassSum unused;
      geom(g, cls, Pose{}, unused, group.prims, /*static_body=*/true);
      if (group.prims.empty()) continue;
      add_group(std::move(group));
      // MuJoCo always collides: a model with ground geometry gets contact (penalty model).
      scene_.settings.contact.model = ContactModel::Penalty;
    }
    for (const XMLElement* b = e->FirstChildElement("body"); b; b = b->NextSiblingElement("body")) {
      body(b, BodyPlace{kWorld, Pose{}, Pose{}}, "main");
    }
  }

  void add_group(Group group) {
    if (group_index_.count(group.name) || group.name == kWorld) {
      xml_.fail(group.e, "duplicate body name '" + group.name + "'");
    }
    group_index_[group.name] = groups_.size();
    groups_.push_back(std::move(group));
  }

  Group& group(const std::string& name) { return groups_[group_index_.at(name)]; }

  void body(const XMLElement* e, const BodyPlace& parent, const std::string& parent_class) {
    const std::string childclass =
        e->Attribute("childclass") ? class_of_name(e, e->Attribute("childclass")) : parent_class;
    xml_.check(e, {"name", "pos", "quat", "euler", "axisangle", "xyaxes", "zaxis", "childclass"},
               {"body", "geom", "joint", "freejoint", "inertial"});
    const std::string name =
        e->Attribute("name") ? e->Attribute("name")
                             : "body line " + std::to_string(e->GetLineNum());
    if (body_place_.count(name)) xml_.fail(e, "duplicate body name '" + name + "'");
    const Pose local = pose(e, "");
    const Pose world = compose(parent.world, local);

    std::vector<const XMLElement*> joints;
    bool free = false;
    for (const XMLElement* j = e->FirstChildElement(); j; j = j->NextSiblingElement()) {
      const std::string tag = j->Name();
      if (tag == "freejoint") {
        free = true;
        xml_.check(j, {"name"});
      } else if (tag == "joint") {
        if (str(j, class_of(j, childclass), "type", "hinge") == "free") {
          free = true;
        } else {
          joints.push_back(j);
        }
      }
    }
    if (free && !joints.empty()) {
      xml_.fail(e, "a body with a free joint cannot have other joints");
    }

    BodyPlace place;
    place.world = world;
    if (joints.empty() && !free) {
      // Welded to the parent body; under the world, a static body of its own.
      if (parent.group == kWorld) {
        Group g;
        g.name = name;
        g.e = e;
        g.kind = BodyKind::Static;
        g.world = world;
        add_group(std::move(g));
        place.group = name;
      } else {
        place.group = parent.group;
        place.in_group = compose(parent.in_group, local);
      }
    } else {
      std::string previous = parent.group;
      for (std::size_t k = 0; k < joints.size(); ++k) {
        std::string child = name;
        if (k + 1 < joints.size()) {
          Group aux;
          aux.name = name + "/" + joint_name(joints[k]);
          aux.e = joints[k];
          aux.world = world;
          aux.aux_of = name;
          add_group(std::move(aux));
          child = groups_.back().name;
        }
        joint(joints[k], class_of(joints[k], childclass), previous, child, world);
        previous = child;
      }
      Group g;
      g.name = name;
      g.e = e;
      g.world = world;
      add_group(std::move(g));
      place.group = name;
    }
    body_place_[name] = place;

    // Mass: an <inertial> element, else the geoms (inertiafromgeom).
    MassSum geoms_mass;
    std::vector<CollisionPrimitive> prims;
    for (const XMLElement* g = e->FirstChildElement("geom"); g; g = g->NextSiblingElement("geom")) {
      geom(g, class_of(g, childclass), place.in_group, geoms_mass, prims,
           group(place.group).kind == BodyKind::Static);
    }
    Group& owner = group(place.group);
    for (auto& p : prims) owner.prims.push_back(std::move(p));
    const XMLElement* inertial = e->FirstChildElement("inertial");
    if (inertial && inertiafromgeom_ != "true") {
      owner.mass.add(inertial_mass(inertial), place.in_group);
    } else {
      owner.mass.add(geoms_mass, Pose{});
    }
    for (const XMLElement* b = e->FirstChildElement("body"); b; b = b->NextSiblingElement("body")) {
      body(b, place, childclass);
    }
  }

  std::string class_of_name(const XMLElement* e, const std::string& name) const {
    if (!classes_.count(name)) {
      std::vector<std::string> known;
      for (const auto& [n, d] : classes_) known.push_back(n);
      xml_.fail(e, unknown_name_message("default class", name, known));
    }
    return name;
  }

  std::string joint_name(const XMLElement* j) const {
    return j->Attribute("name") ? j->Attribute("name")
                                : "joint line " + std::to_string(j->GetLineNum());
  }

  MassSum inertial_mass(const XMLElement* in) {
    xml_.check(in, {"pos", "quat", "euler", "axisangle", "xyaxes", "zaxis", "mass",
                    "diaginertia", "fullinertia"});
    const auto m = xml_.numbers(in, "mass", 1);
    if (!m) xml_.fail(in, "missing attribute 'mass'");
    if (!((*m)[0] > 0)) xml_.fail(in, "attribute 'mass': must be > 0");
    Mat3 inertia = Mat3::Zero();
    if (const auto d = xml_.numbers(in, "diaginertia", 3)) {
      inertia.diagonal() = Vec3((*d)[0], (*d)[1], (*d)[2]);
    } else if (const auto f = xml_.numbers(in, "fullinertia", 6)) {
      // ixx iyy izz ixy ixz iyz
      const auto& v = *f;
      inertia << v[0], v[3], v[4], v[3], v[1], v[5], v[4], v[5], v[2];
    } else {
      xml_.fail(in, "missing attribute 'diaginertia' or 'fullinertia'");
    }
    const Vec3 d = inertia.diagonal();
    if (d.minCoeff() < 0 || d[0] > d[1] + d[2] + 1e-12 * d.sum() ||
        d[1] > d[0] + d[2] + 1e-12 * d.sum() || d[2] > d[0] + d[1] + 1e-12 * d.sum()) {
      xml_.fail(in, "not a physical inertia: the diagonal moments must be >= 0 and satisfy the "
                    "triangle inequality");
    }
    MassSum sum;
    sum.add((*m)[0], Vec3::Zero(), second_moment_of_inertia(inertia), pose(in, ""));
    return sum;
  }

  /// A geom: its mass properties into `mass` and its collision primitive into `prims`, both
  /// in the frame `frame` (the geom's body in its group).
  void geom(const XMLElement* g, const std::string& cls, const Pose& frame, MassSum& mass,
            std::vector<CollisionPrimitive>& prims, bool static_body) {
    xml_.check(g, {"name", "class", "type", "size", "fromto", "pos", "quat", "euler",
                   "axisangle", "xyaxes", "zaxis", "mass", "density", "rgba", "material",
                   "group", "contype", "conaffinity", "friction", "mesh"});
    const std::string type = str(g, cls, "type", "sphere");
    Pose local = pose(g, cls);
    const auto size = nums(g, cls, "size", 0);
    auto size_at = [&](std::size_t i) {
      if (!size || size->size() <= i) {
        xml_.fail(g, "attribute 'size': a " + type + " needs at least " + std::to_string(i + 1) +
                         " value" + (i ? "s" : ""));
      }
      if (!((*size)[i] > 0) && type != "plane") {
        xml_.fail(g, "attribute 'size': must be > 0");
      }
      return (*size)[i];
    };
    ShapeDef shape;
    bool collides = true;
    double volume_override = -1;
    Mat3 ellipsoid_sigma = Mat3::Zero();
    const auto fromto = nums(g, cls, "fromto", 6);
    if (type == "sphere") {
      shape.type = ShapeType::Sphere;
      shape.radius = size_at(0);
    } else if (type == "capsule" || type == "cylinder") {
      shape.type = type == "capsule" ? ShapeType::Capsule : ShapeType::Cylinder;
      shape.radius = size_at(0);
      if (fromto) {
        const Vec3 a((*fromto)[0], (*fromto)[1], (*fromto)[2]);
        const Vec3 b((*fromto)[3], (*fromto)[4], (*fromto)[5]);
        if (!((b - a).norm() > 1e-12)) xml_.fail(g, "attribute 'fromto': the two ends coincide");
        shape.length = (b - a).norm();
        local.position = 0.5 * (a + b);
        local.orientation = Quat::FromTwoVectors(Vec3::UnitZ(), (b - a).normalized());
      } else {
        shape.length = 2 * size_at(1);
      }
    } else if (type == "box") {
      shape.type = ShapeType::Box;
      shape.size = 2 * Vec3(size_at(0), size_at(1), size_at(2));
    } else if (type == "ellipsoid") {
      const Vec3 r(size_at(0), size_at(1), size_at(2));
      xml_.warn(g, "ellipsoid geoms do not collide (no ellipsoid shape); their mass is kept");
      collides = false;
      shape.type = ShapeType::Sphere;
      volume_override = 4.0 / 3.0 * kPi * r.prod();
      ellipsoid_sigma = (r.array().square() / 5.0).matrix().asDiagonal();
    } else if (type == "plane") {
      if (!static_body) {
        xml_.warn(g, "a plane on a moving body is not supported; left out");
        return;
      }
      shape.type = ShapeType::Plane;
    } else if (type == "mesh") {
      const std::string mesh_name = str(g, cls, "mesh", "");
      const auto m = meshes_.find(mesh_name);
      if (m == meshes_.end()) xml_.fail(g, "unknown mesh '" + mesh_name + "'");
      std::string dir = base_dir_;
      if (!meshdir_.empty()) dir = (std::filesystem::path(base_dir_) / meshdir_).string();
      const auto mesh =
          obj_mesh(xml_, m->second.first, m->second.second, dir, mesh_scale_.at(mesh_name));
      if (!mesh) return;
      shape = *mesh;
    } else {
      xml_.warn(g, "geom type '" + type + "' is not supported; left out");
      return;
    }
    if (fromto && type != "capsule" && type != "cylinder") {
      xml_.fail(g, "attribute 'fromto': only capsules and cylinders take it here");
    }
    const Pose in_frame = compose(frame, local);
    if (!static_body) {
      const double density = num(g, cls, "density", 1000.0);
      if (!(density >= 0)) xml_.fail(g, "attribute 'density': must be >= 0");
      MassProperties mp;
      if (volume_override > 0) {
        mp.volume = volume_override;
        mp.mass = density * mp.volume;
        mp.second_moment = ellipsoid_sigma * mp.mass;
      } else {
        try {
          mp = compute_mass_properties(shape, 1.0);
        } catch (const InvalidArgument& ex) {
          xml_.fail(g, ex.what());
        }
        mp.mass = density * mp.volume;
        mp.second_moment *= density;
      }
      if (const auto m = nums(g, cls, "mass", 1)) {
        if (!((*m)[0] >= 0)) xml_.fail(g, "attribute 'mass': must be >= 0");
        mp.second_moment *= (*m)[0] / mp.mass;
        mp.mass = (*m)[0];
      }
      if (mp.mass > 0) mass.add(mp.mass, mp.com, mp.second_moment, in_frame);
    }
    // contype = conaffinity = 0: a geom that never collides (MuJoCo's visual-only geoms).
    if (num(g, cls, "contype", 1) == 0 && num(g, cls, "conaffinity", 1) == 0) collides = false;
    if (collides) prims.push_back(CollisionPrimitive{shape, in_frame});
  }

  void joint(const XMLElement* j, const std::string& cls, const std::string& parent,
             const std::string& child, const Pose& body_world) {
    xml_.check(j, {"name", "class", "type", "pos", "axis", "range", "limited", "damping",
                   "stiffness", "springref", "ref", "armature", "frictionloss"});
    const std::string type = str(j, cls, "type", "hinge");
    SceneJoint sj;
    sj.def.name = joint_name(j);
    sj.body_a = parent;
    sj.body_b = child;
    sj.def.anchor = compose(body_world, Pose{vec(j, cls, "pos", Vec3::Zero()), Quat::Identity()})
                        .position;
    const Vec3 axis = vec(j, cls, "axis", Vec3::UnitZ());
    if (!(axis.norm() > 1e-12)) xml_.fail(j, "attribute 'axis': must be non-zero");
    sj.def.axis = (body_world.orientation * axis.normalized()).normalized();
    const bool angular = type == "hinge" || type == "ball";
    auto coordinate = [&](double v) { return angular ? angle(v) : v; };
    if (type == "hinge" || type == "slide") {
      sj.def.type = type == "hinge" ? JointType::Hinge : JointType::Prismatic;
      if (limited(j, cls, "limited", "range")) {
        const auto r = nums(j, cls, "range", 2);
        if (!r) xml_.fail(j, "limited joint without 'range'");
        if ((*r)[0] > (*r)[1]) xml_.fail(j, "attribute 'range': lower above upper");
        sj.def.limits = JointLimits{coordinate((*r)[0]), coordinate((*r)[1])};
      }
    } else if (type == "ball") {
      sj.def.type = JointType::Ball;
      if (limited(j, cls, "limited", "range")) {
        xml_.warn(j, "ball joint range (a bound on the rotation angle) is not supported; the "
                     "joint is unlimited");
      }
    } else {
      xml_.fail(j, "unknown joint type '" + type + "' (known: hinge, slide, ball, free)");
    }
    const double damping = num(j, cls, "damping", 0);
    const double stiffness = num(j, cls, "stiffness", 0);
    if (damping < 0) xml_.fail(j, "attribute 'damping': must be >= 0");
    if (stiffness < 0) xml_.fail(j, "attribute 'stiffness': must be >= 0");
    const double springref = coordinate(num(j, cls, "springref", 0));
    const double ref = coordinate(num(j, cls, "ref", 0));
    if (ref != 0) {
      if (type == "ball") xml_.fail(j, "attribute 'ref' does not apply to a ball joint");
      // The model's configuration is at coordinate `ref`: a joint frame in each body, the
      // child's displaced by ref from the parent's (rotated about or moved along the axis).
      const Pose joint_frame{sj.def.anchor, Quat::FromTwoVectors(Vec3::UnitZ(), sj.def.axis)};
      const Pose shift = type == "hinge"
                             ? Pose{Vec3::Zero(), Quat(Eigen::AngleAxisd(ref, Vec3::UnitZ()))}
                             : Pose{Vec3(0, 0, ref), Quat::Identity()};
      const Pose parent_world = parent == kWorld ? Pose{} : group(parent).world;
      sj.def.frames = JointFrames{relative(parent_world, joint_frame),
                                  relative(body_world, compose(joint_frame, shift))};
    }
    if (damping > 0 || stiffness > 0) {
      if (type == "ball" && springref != 0) xml_.fail(j, "a ball joint spring has rest 0");
      sj.def.spring = JointSpring{stiffness, damping, springref};
    }
    for (const char* a : {"armature", "frictionloss"}) {
      if (num(j, cls, a, 0) != 0) {
        xml_.warn(j, std::string("attribute '") + a + "'" +
                         (j->Attribute(a) ? "" : " (from class '" + cls + "')") +
                         " is not supported; ignored");
      }
    }
    joint_index_[sj.def.name] = scene_.joints.size();
    scene_.joints.push_back(std::move(sj));
  }

  /// Bodies from the groups: inertia boxes, static bodies, auxiliary bodies.
  void make_bodies() {
    for (const Group& g : groups_) {
      if (g.kind == BodyKind::Static && g.prims.size() == 1 && g.e &&
          std::string(g.e->Name()) == "geom") {
        // A world geom: a static body whose shape is the geom.
        BodyDef def;
        def.name = g.name;
        def.kind = BodyKind::Static;
        def.shape = g.prims[0].shape;
        const Pose p = compose(g.world, g.prims[0].pose);
        def.position = p.position;
        def.orientation = p.orientation;
        scene_.bodies.push_back(std::move(def));
        continue;
      }
      MassSum m = g.mass;
      const std::string label = xml_.path() + ": " + XmlFile::where(g.e);
      if (!g.aux_of.empty()) {
        const double owner = group(g.aux_of).mass.mass;
        m = cube_mass(kAuxiliaryMassFraction * (owner > 0 ? owner : 1.0), 0.05);
      } else if (!(m.mass > 0)) {
        if (g.kind != BodyKind::Static) {
          xml_.warn(g.e, "body without mass: it gets a 0.001 kg cube of side 0.05 m");
        }
        m = cube_mass(g.kind == BodyKind::Static ? 1.0 : 1e-3, 0.05);
      }
      scene_.bodies.push_back(
          link_body(g.name, m, g.prims, g.kind, g.world, label, xml_.warnings()));
    }
  }

  /// Group (mabd body) of MJCF body `name`, or "world".
  std::string body_group(const XMLElement* e, const char* attr) {
    const std::string name = xml_.require_text(e, attr);
    if (name == kWorld) return kWorld;
    const auto it = body_place_.find(name);
    if (it == body_place_.end()) {
      std::vector<std::string> known;
      for (const auto& [n, p] : body_place_) known.push_back(n);
      xml_.fail(e, unknown_name_message("body", name, known));
    }
    return it->second.group;
  }

  void equality(const XMLElement* e) {
    xml_.check(e, {}, {"connect", "weld"});
    int n = 0;
    for (const XMLElement* c = e->FirstChildElement(); c; c = c->NextSiblingElement(), ++n) {
      const std::string tag = c->Name();
      if (tag != "connect" && tag != "weld") continue;
      const std::string cls = class_of(c, "main");
      xml_.check(c, {"name", "class", "body1", "body2", "anchor", "active", "relpose"});
      if (!boolean(c, cls, "active", true)) continue;
      SceneJoint sj;
      sj.def.name = c->Attribute("name") ? c->Attribute("name")
                                         : "equality " + std::to_string(n);
      sj.body_a = body_group(c, "body1");
      sj.body_b = c->Attribute("body2") ? body_group(c, "body2") : kWorld;
      if (sj.body_a == sj.body_b) xml_.fail(c, "body1 and body2 are the same mabd body");
      const Pose w1 = sj.body_a == kWorld ? Pose{} : place_of(c, "body1").world;
      if (tag == "connect") {
        sj.def.type = JointType::Ball;
        const auto anchor = nums(c, cls, "anchor", 3);
        if (!anchor) xml_.fail(c, "missing attribute 'anchor'");
        sj.def.anchor = compose(w1, Pose{Vec3((*anchor)[0], (*anchor)[1], (*anchor)[2]),
                                         Quat::Identity()})
                            .position;
      } else {
        sj.def.type = JointType::Fixed;
        if (c->Attribute("relpose")) {
          xml_.warn(c, "attribute 'relpose' is not supported: the weld keeps the bodies' "
                       "relative pose in the model");
        }
        const Pose w2 = sj.body_b == kWorld ? Pose{} : place_of(c, "body2").world;
        sj.def.anchor = w2.position;
      }
      joint_index_[sj.def.name] = scene_.joints.size();
      scene_.joints.push_back(std::move(sj));
    }
  }

  const BodyPlace& place_of(const XMLElement* e, const char* attr) const {
    return body_place_.at(e->Attribute(attr));
  }

  void actuators(const XMLElement* e) {
    xml_.check(e, {}, {"motor", "position", "velocity"});
    for (const XMLElement* a = e->FirstChildElement(); a; a = a->NextSiblingElement()) {
      const std::string tag = a->Name();
      if (tag != "motor" && tag != "position" && tag != "velocity") continue;
      const std::string cls = class_of(a, "main");
      xml_.check(a, {"name", "class", "joint", "gear", "kp", "kv", "forcerange",
                     "forcelimited", "ctrlrange", "ctrllimited", "tendon", "site"});
      if (!a->Attribute("joint")) {
        xml_.warn(a, "only joint transmissions are supported (no 'joint' attribute); not "
                     "imported");
        continue;
      }
      const std::string joint = a->Attribute("joint");
      const auto it = joint_index_.find(joint);
      if (it == joint_index_.end()) {
        std::vector<std::string> known;
        for (const auto& [n, i] : joint_index_) known.push_back(n);
        xml_.fail(a, unknown_name_message("joint", joint, known));
      }
      JointDef& def = scene_.joints[it->second].def;
      if (def.type != JointType::Hinge && def.type != JointType::Prismatic) {
        xml_.warn(a, "actuator on joint '" + joint +
                         "', which is not a hinge or slide joint; not imported");
        continue;
      }
      const auto gear = nums(a, cls, "gear", 0);
      const double g = gear ? (*gear)[0] : 1.0;
      if (gear && gear->size() > 1) {
        for (std::size_t i = 1; i < gear->size(); ++i) {
          if ((*gear)[i] != 0) {
            xml_.fail(a, "attribute 'gear': only the first entry applies to a joint");
          }
        }
      }
      if (g == 0) xml_.fail(a, "attribute 'gear': must be non-zero");
      JointDrive drive;
      if (tag == "position") {
        drive.mode = DriveMode::Position;
        drive.stiffness = num(a, cls, "kp", 1.0) * g * g;
        drive.damping = num(a, cls, "kv", 0.0) * g * g;
      } else if (tag == "velocity") {
        drive.mode = DriveMode::Velocity;
        drive.damping = num(a, cls, "kv", 1.0) * g * g;
      } else {  // motor: joint torque gear * ctrl, the drive's target (0 until set)
        drive.mode = DriveMode::Effort;
        if (limited(a, cls, "ctrllimited", "ctrlrange")) {
          const auto r = nums(a, cls, "ctrlrange", 2);
          if (!r) xml_.fail(a, "control-limited actuator without 'ctrlrange'");
          if ((*r)[0] > (*r)[1]) xml_.fail(a, "attribute 'ctrlrange': lower above upper");
          const double limit = std::abs(g) * std::max(std::abs((*r)[0]), std::abs((*r)[1]));
          if (!(limit > 0)) xml_.fail(a, "attribute 'ctrlrange': must not be zero");
          if ((*r)[0] != -(*r)[1]) {
            xml_.warn(a, "asymmetric ctrlrange: the motor is limited to the larger magnitude");
          }
          drive.max_force = limit;
        }
      }
      if (drive.stiffness < 0 || drive.damping < 0) xml_.fail(a, "gains must be >= 0");
      if (limited(a, cls, "forcelimited", "forcerange")) {
        const auto r = nums(a, cls, "forcerange", 2);
        if (!r) xml_.fail(a, "force-limited actuator without 'forcerange'");
        const double lo = (*r)[0], hi = (*r)[1];
        if (lo > hi) xml_.fail(a, "attribute 'forcerange': lower above upper");
        if (lo != -hi) {
          xml_.warn(a, "asymmetric forcerange: the drive is limited to the larger magnitude");
        }
        const double limit = std::abs(g) * std::max(std::abs(lo), std::abs(hi));
        if (!(limit > 0)) xml_.fail(a, "attribute 'forcerange': must not be zero");
        drive.max_force = std::min(drive.max_force, limit);
      }
      if (def.drive) xml_.warn(a, "joint '" + joint + "' already has an actuator; replaced");
      def.drive = drive;
    }
  }

  void contact(const XMLElement* e) {
    xml_.check(e, {}, {"exclude"});
    for (const XMLElement* x = e->FirstChildElement("exclude"); x;
         x = x->NextSiblingElement("exclude")) {
      xml_.check(x, {"name", "body1", "body2"});
      const std::string a = body_group(x, "body1"), b = body_group(x, "body2");
      if (a == b || a == kWorld || b == kWorld) continue;
      scene_.collision_exclude.emplace_back(a, b);
    }
  }

  XmlFile xml_;
  Scene scene_;
  std::string base_dir_;
  bool degrees_ = true;
  bool autolimits_ = true;
  std::string eulerseq_ = "xyz";
  std::string inertiafromgeom_ = "auto";
  std::string meshdir_;
  std::map<std::string, ClassDefaults> classes_;
  std::map<std::string, std::pair<const XMLElement*, std::string>> meshes_;
  std::map<std::string, Vec3> mesh_scale_;
  std::vector<Group> groups_;
  std::map<std::string, std::size_t> group_index_;
  std::map<std::string, BodyPlace> body_place_;
  std::map<std::string, std::size_t> joint_index_;
};

}  // namespace

Scene load_mjcf(const std::string& path, const ModelOptions& /*options*/) {
  return MjcfReader(path).read();
}

}  // namespace mabd::io
