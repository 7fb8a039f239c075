// URDF robot models -> mabd::Scene. What maps to what is documented in docs/model-import.md.
//
// Links joined by fixed joints form one body (their inertias summed, their collision geometry
// collected), whose frame is the frame of its top link. Every body's shape is a box mesh with
// the body's mass, centre of mass and principal moments (link_body), since a URDF gives
// inertia, not a solid. The root link's body is welded to the world (a static body) unless
// the model is floating-base.
#include "io/urdf.h"

#include <cmath>
#include <deque>
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

const std::string kWorld = "world";
/// Side (m) and mass fraction of the cube that stands in for a link without inertia.
constexpr double kStandInSide = 0.05;

struct Link {
  const XMLElement* e = nullptr;
  std::string name;
  std::string parent_joint;    ///< "" for the root
  std::string owner;           ///< link whose body this link belongs to
  Pose in_owner;               ///< link frame in the owner's frame
  Pose world;                  ///< link frame in the world at the zero configuration
};

struct Joint {
  const XMLElement* e = nullptr;
  std::string name, type, parent, child;
  Pose origin;  ///< child link frame in the parent link frame
};

class UrdfReader {
 public:
  UrdfReader(const std::string& path, const ModelOptions& options)
      : xml_(path), options_(options), base_dir_(xml_.dir()) {}

  Scene read() {
    const XMLElement* robot = xml_.root("robot", "a URDF");
    xml_.check(robot, {"name", "version", "xmlns:xacro"},
               {"link", "joint", "material"});
    read_links(robot);
    read_joints(robot);
    const std::string root = find_root(robot);
    place_links(root);
    Scene scene;
    scene.path = xml_.path();
    build_bodies(root, scene);
    build_joints(scene);
    if (visuals_ > 0) {
      xml_.warnings().push_back(
          xml_.path() + ": " + std::to_string(visuals_) +
          " <visual> element(s): visual geometry is not imported (a body shows as the box of "
          "its inertia; <collision> geometry is imported)");
    }
    if (!unused_velocity_.empty()) {
      xml_.warnings().push_back(xml_.path() +
                                ": joint velocity limits are read but not enforced (the effort "
                                "limits cap the joints' drives): " +
                                unused_velocity_);
    }
    if (!zero_effort_.empty()) {
      xml_.warnings().push_back(xml_.path() + ": effort=\"0\" read as no effort limit: " +
                                zero_effort_);
    }
    scene.warnings = std::move(xml_.warnings());
    return scene;
  }

 private:
  Pose origin(const XMLElement* parent) const {
    Pose pose;
    const XMLElement* o = parent->FirstChildElement("origin");
    if (!o) return pose;
    pose.position = xml_.vec3(o, "xyz", Vec3::Zero());
    pose.orientation = rpy_quat(xml_.vec3(o, "rpy", Vec3::Zero()));
    return pose;
  }

  void check_origin(const XMLElement* parent) {
    if (const XMLElement* o = parent->FirstChildElement("origin")) xml_.check(o, {"xyz", "rpy"});
  }

  void read_links(const XMLElement* robot) {
    for (const XMLElement* e = robot->FirstChildElement("link"); e;
         e = e->NextSiblingElement("link")) {
      Link link;
      link.e = e;
      link.name = xml_.require_text(e, "name");
      if (link.name.empty()) xml_.fail(e, "attribute 'name' must not be empty");
      if (links_.count(link.name)) xml_.fail(e, "duplicate link name '" + link.name + "'");
      xml_.check(e, {"name", "type"}, {"inertial", "visual", "collision"});
      link_order_.push_back(link.name);
      links_.emplace(link.name, link);
    }
    if (links_.empty()) xml_.fail(robot, "the robot has no <link>");
  }

  void read_joints(const XMLElement* robot) {
    std::set<std::string> names;
    for (const XMLElement* e = robot->FirstChildElement("joint"); e;
         e = e->NextSiblingElement("joint")) {
      Joint j;
      j.e = e;
      j.name = xml_.require_text(e, "name");
      if (!names.insert(j.name).second) xml_.fail(e, "duplicate joint name '" + j.name + "'");
      j.type = xml_.require_text(e, "type");
      static const std::vector<std::string> kTypes = {"revolute", "continuous", "prismatic",
                                                      "fixed",    "floating",   "planar"};
      if (std::find(kTypes.begin(), kTypes.end(), j.type) == kTypes.end()) {
        xml_.fail(e, "unknown joint type '" + j.type +
                         "' (known: revolute, continuous, prismatic, fixed, floating, planar)");
      }
      xml_.check(e, {"name", "type"},
                 {"origin", "parent", "child", "axis", "limit", "dynamics", "mimic"});
      const XMLElement* parent = e->FirstChildElement("parent");
      const XMLElement* child = e->FirstChildElement("child");
      if (!parent) xml_.fail(e, "missing <parent>");
      if (!child) xml_.fail(e, "missing <child>");
      j.parent = xml_.require_text(parent, "link");
      j.child = xml_.require_text(child, "link");
      for (const auto& [tag, name] : {std::pair{parent, j.parent}, std::pair{child, j.child}}) {
        if (!links_.count(name)) {
          xml_.fail(tag, unknown_name_message("link", name, link_order_));
        }
      }
      if (j.parent == j.child) xml_.fail(e, "a link cannot be joined to itself");
      Link& c = links_.at(j.child);
      if (!c.parent_joint.empty()) {
        xml_.fail(e, "link '" + j.child + "' already has a parent joint ('" + c.parent_joint +
                         "')");
      }
      c.parent_joint = j.name;
      check_origin(e);
      j.origin = origin(e);
      joint_order_.push_back(j.name);
      joints_.emplace(j.name, j);
    }
  }

  std::string find_root(const XMLElement* robot) {
    std::vector<std::string> roots;
    for (const std::string& name : link_order_) {
      if (links_.at(name).parent_joint.empty()) roots.push_back(name);
    }
    if (roots.size() != 1) {
      std::string names;
      for (const auto& n : roots) names += (names.empty() ? "'" : ", '") + n + "'";
      xml_.fail(robot, roots.empty() ? "the joints form a loop: no root link"
                                     : "the links form " + std::to_string(roots.size()) +
                                           " separate trees (roots " + names +
                                           "); join them into one");
    }
    return roots[0];
  }

  /// Zero-configuration poses, body owners and the order of links from the root down.
  void place_links(const std::string& root) {
    std::map<std::string, std::vector<std::string>> children;  // link -> child joints
    for (const std::string& jn : joint_order_) children[joints_.at(jn).parent].push_back(jn);
    Link& r = links_.at(root);
    r.owner = root;
    std::deque<std::string> queue = {root};
    while (!queue.empty()) {
      const std::string name = queue.front();
      queue.pop_front();
      tree_order_.push_back(name);
      const Link& parent = links_.at(name);
      for (const std::string& jn : children[name]) {
        const Joint& j = joints_.at(jn);
        Link& child = links_.at(j.child);
        child.world = compose(parent.world, j.origin);
        if (j.type == "fixed") {
          child.owner = parent.owner;
          child.in_owner = compose(parent.in_owner, j.origin);
        } else {
          child.owner = child.name;
        }
        queue.push_back(child.name);
      }
    }
    if (tree_order_.size() != links_.size()) {
      xml_.fail(xml_.root(), "the joints form a loop (URDF describes trees only)");
    }
    // A root link named "world" with a floating joint below it: the robot floats.
    world_root_ = root == kWorld;
  }

  CollisionPrimitive geometry(const XMLElement* g, const Pose& pose, bool& ok) {
    ok = false;
    CollisionPrimitive prim;
    prim.pose = pose;
    int count = 0;
    for (const XMLElement* s = g->FirstChildElement(); s; s = s->NextSiblingElement()) ++count;
    if (count != 1) xml_.fail(g, "<geometry> must hold exactly one shape");
    const XMLElement* s = g->FirstChildElement();
    const std::string type = s->Name();
    auto positive = [&](const char* attr) {
      const double v = xml_.numbers(s, attr, 1).value_or(std::vector<double>{NAN})[0];
      if (std::isnan(v)) xml_.fail(s, std::string("missing attribute '") + attr + "'");
      if (!(v > 0)) xml_.fail(s, std::string("attribute '") + attr + "': must be > 0");
      return v;
    };
    if (type == "box") {
      xml_.check(s, {"size"});
      const auto size = xml_.numbers(s, "size", 3);
      if (!size) xml_.fail(s, "missing attribute 'size'");
      prim.shape.type = ShapeType::Box;
      prim.shape.size = Vec3((*size)[0], (*size)[1], (*size)[2]);
      if (!(prim.shape.size.minCoeff() > 0)) xml_.fail(s, "attribute 'size': must be > 0");
    } else if (type == "sphere") {
      xml_.check(s, {"radius"});
      prim.shape.type = ShapeType::Sphere;
      prim.shape.radius = positive("radius");
    } else if (type == "cylinder" || type == "capsule") {
      xml_.check(s, {"radius", "length"});
      prim.shape.type = type == "cylinder" ? ShapeType::Cylinder : ShapeType::Capsule;
      prim.shape.radius = positive("radius");
      prim.shape.length = positive("length");
    } else if (type == "mesh") {
      xml_.check(s, {"filename", "scale"});
      std::string file = xml_.require_text(s, "filename");
      if (file.rfind("file://", 0) == 0) file = file.substr(7);
      if (file.rfind("package://", 0) == 0) {
        // package://NAME/REST: look for REST next to the model and one level up.
        const std::string rest = file.substr(file.find('/', 10) == std::string::npos
                                                 ? file.size()
                                                 : file.find('/', 10) + 1);
        std::error_code ec;
        file = std::filesystem::is_regular_file(std::filesystem::path(base_dir_) / rest, ec)
                   ? rest
                   : "../" + rest;
      }
      const auto mesh = obj_mesh(xml_, s, file, base_dir_, xml_.vec3(s, "scale", Vec3::Ones()));
      if (!mesh) return prim;
      prim.shape = *mesh;
    } else {
      xml_.warn(s, "geometry <" + type + "> is not supported; left out");
      return prim;
    }
    ok = true;
    return prim;
  }

  void build_bodies(const std::string& root, Scene& scene) {
    std::map<std::string, MassSum> mass;
    std::map<std::string, std::vector<CollisionPrimitive>> prims;
    for (const std::string& name : tree_order_) {
      const Link& link = links_.at(name);
      for (const XMLElement* in = link.e->FirstChildElement("inertial"); in;
           in = in->NextSiblingElement("inertial")) {
        xml_.check(in, {}, {"origin", "mass", "inertia"});
        check_origin(in);
        const XMLElement* m = in->FirstChildElement("mass");
        if (!m) xml_.fail(in, "missing <mass>");
        xml_.check(m, {"value"});
        const double value = xml_.numbers(m, "value", 1).value_or(std::vector<double>{NAN})[0];
        if (std::isnan(value)) xml_.fail(m, "missing attribute 'value'");
        if (value < 0) xml_.fail(m, "attribute 'value': mass must be >= 0");
        Mat3 inertia = Mat3::Zero();
        if (const XMLElement* i = in->FirstChildElement("inertia")) {
          xml_.check(i, {"ixx", "ixy", "ixz", "iyy", "iyz", "izz"});
          const double ixx = xml_.number(i, "ixx", 0), ixy = xml_.number(i, "ixy", 0),
                       ixz = xml_.number(i, "ixz", 0), iyy = xml_.number(i, "iyy", 0),
                       iyz = xml_.number(i, "iyz", 0), izz = xml_.number(i, "izz", 0);
          inertia << ixx, ixy, ixz, ixy, iyy, iyz, ixz, iyz, izz;
          const Vec3 d = inertia.diagonal();
          if (d.minCoeff() < 0 || d[0] > d[1] + d[2] + 1e-12 * d.sum() ||
              d[1] > d[0] + d[2] + 1e-12 * d.sum() || d[2] > d[0] + d[1] + 1e-12 * d.sum()) {
            xml_.fail(i, "not a physical inertia: the diagonal moments must be >= 0 and "
                         "satisfy the triangle inequality");
          }
        } else if (value > 0) {
          xml_.fail(in, "missing <inertia>");
        }
        if (value == 0) continue;
        const Pose o = compose(link.in_owner, origin(in));
        mass[link.owner].add(value, Vec3::Zero(), second_moment_of_inertia(inertia), o);
      }
      for (const XMLElement* c = link.e->FirstChildElement("collision"); c;
           c = c->NextSiblingElement("collision")) {
        xml_.check(c, {"name"}, {"origin", "geometry"});
        check_origin(c);
        const XMLElement* g = c->FirstChildElement("geometry");
        if (!g) xml_.fail(c, "missing <geometry>");
        bool ok = false;
        CollisionPrimitive prim = geometry(g, compose(link.in_owner, origin(c)), ok);
        if (ok) prims[link.owner].push_back(std::move(prim));
      }
      for (const XMLElement* v = link.e->FirstChildElement("visual"); v;
           v = v->NextSiblingElement("visual")) {
        ++visuals_;
      }
    }
    // Mean mass of the links that have one: the scale of the stand-in for massless links.
    double total = 0;
    int with_mass = 0;
    for (const auto& [name, m] : mass) {
      total += m.mass;
      ++with_mass;
    }
    const double typical = with_mass > 0 ? total / with_mass : 1.0;

    const bool root_static = !options_.floating_base || world_root_;
    for (const std::string& name : tree_order_) {
      const Link& link = links_.at(name);
      if (link.owner != name) continue;
      const bool is_root = name == root;
      // A link joined to the world root by a floating joint is a free body.
      const bool is_static = is_root && root_static;
      std::string body_name = name;
      MassSum m = mass[name];
      const std::string label = XmlFile::where(link.e);
      if (is_root && world_root_) {
        // The world itself: a static body only if geometry is welded to it.
        if (prims[name].empty()) {
          body_names_[name] = kWorld;
          continue;
        }
        body_name = "world_geometry";
      }
      if (!(m.mass > 0)) {
        if (!is_static) {
          xml_.warn(link.e, "link without mass between moving joints: it gets a " +
                                format_number(kAuxiliaryMassFraction * typical) +
                                " kg cube of side " + format_number(kStandInSide) + " m");
        }
        m = cube_mass(is_static ? 1.0 : kAuxiliaryMassFraction * typical, kStandInSide);
      }
      body_names_[name] = body_name;
      BodyDef def = link_body(body_name, m, std::move(prims[name]),
                              is_static ? BodyKind::Static : BodyKind::Dynamic, link.world,
                              xml_.path() + ": " + label, xml_.warnings());
      scene.bodies.push_back(std::move(def));
    }
    for (const std::string& name : tree_order_) {
      const Link& link = links_.at(name);
      body_names_[name] = body_names_.at(link.owner);
    }
  }

  void build_joints(Scene& scene) {
    for (const std::string& jn : joint_order_) {
      const Joint& j = joints_.at(jn);
      const XMLElement* e = j.e;
      const XMLElement* limit = e->FirstChildElement("limit");
      if (limit) xml_.check(limit, {"lower", "upper", "effort", "velocity"});
      if (const XMLElement* d = e->FirstChildElement("dynamics")) {
        xml_.check(d, {"damping", "friction"});
      }
      if (const XMLElement* m = e->FirstChildElement("mimic")) {
        xml_.check(m, {"joint", "multiplier", "offset"});
        xml_.warn(m, "mimic joints are not supported (no coupling between joint coordinates); "
                     "the joint moves on its own");
      }
      if (j.type == "fixed") continue;
      if (j.type == "floating" || j.type == "planar") {
        if (j.type == "planar") {
          xml_.warn(e, "planar joints are not supported; the child link moves freely");
        }
        if (j.parent != tree_order_.front() || !world_root_) {
          if (j.type == "floating") {
            xml_.warn(e, "floating joint below the root: the child link moves freely");
          }
        }
        continue;
      }
      SceneJoint sj;
      sj.def.name = j.name;
      sj.body_a = body_names_.at(j.parent);
      sj.body_b = body_names_.at(j.child);
      const Link& child = links_.at(j.child);
      sj.def.anchor = child.world.position;
      Vec3 axis = Vec3::UnitX();
      if (const XMLElement* a = e->FirstChildElement("axis")) {
        xml_.check(a, {"xyz"});
        axis = xml_.vec3(a, "xyz", Vec3::UnitX());
        if (!(axis.norm() > 1e-12)) xml_.fail(a, "attribute 'xyz': the axis must be non-zero");
      }
      sj.def.axis = (child.world.orientation * axis.normalized()).normalized();
      sj.def.type = j.type == "prismatic" ? JointType::Prismatic : JointType::Hinge;
      if (j.type != "continuous") {
        if (!limit) xml_.fail(e, "a " + j.type + " joint needs <limit>");
        const double lower = xml_.number(limit, "lower", 0);
        const double upper = xml_.number(limit, "upper", 0);
        if (lower > upper) {
          xml_.fail(limit, "lower limit " + format_number(lower) + " is above upper limit " +
                               format_number(upper));
        }
        sj.def.limits = JointLimits{lower, upper};
      }
      if (limit) {
        for (const char* attr : {"effort", "velocity"}) {
          const double v = xml_.number(limit, attr, 0);
          if (v < 0) xml_.fail(limit, std::string("attribute '") + attr + "': must be >= 0");
        }
        // The effort limit caps any drive put on the joint; 0 (often written for "none")
        // is no limit. The velocity limit is not enforced.
        const double effort = xml_.number(limit, "effort", 0);
        if (effort > 0 && j.type != "fixed") sj.def.effort_limit = effort;
        if (limit->Attribute("effort") && effort == 0) {
          zero_effort_ += (zero_effort_.empty() ? "'" : ", '") + j.name + "'";
        }
        if (xml_.number(limit, "velocity", 0) > 0) {
          unused_velocity_ += (unused_velocity_.empty() ? "'" : ", '") + j.name + "'";
        }
      }
      if (const XMLElement* d = e->FirstChildElement("dynamics")) {
        const double damping = xml_.number(d, "damping", 0);
        const double friction = xml_.number(d, "friction", 0);
        if (damping < 0) xml_.fail(d, "attribute 'damping': must be >= 0");
        if (friction < 0) xml_.fail(d, "attribute 'friction': must be >= 0");
        if (damping > 0) sj.def.spring = JointSpring{0, damping, 0};
        if (friction > 0) {
          xml_.warn(d, "joint friction is not supported (no Coulomb friction on joint "
                       "coordinates); ignored");
        }
      }
      scene.joints.push_back(std::move(sj));
    }
  }

  XmlFile xml_;
  ModelOptions options_;
  std::string base_dir_;
  std::map<std::string, Link> links_;
  std::vector<std::string> link_order_;  ///< document order
  std::map<std::string, Joint> joints_;
  std::vector<std::string> joint_order_;  ///< document order
  std::vector<std::string> tree_order_;   ///< breadth first from the root
  std::map<std::string, std::string> body_names_;  ///< link -> body ("world" for the world)
  bool world_root_ = false;
  int visuals_ = 0;
  std::string unused_velocity_;  ///< joints whose velocity limit is not enforced
  std::string zero_effort_;      ///< joints with effort="0" (no limit)
};

}  // namespace

Scene load_urdf(const std::string& path, const ModelOptions& options) {
  return UrdfReader(path, options).read();
}

}  // namespace mabd::io
