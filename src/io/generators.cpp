// Procedural scene generators: "chain", "net" and "tree" (docs/scene-format.md, "Generators").
// Bodies and joints are built directly (one template per part, copied and placed), so a
// million-link chain takes a fraction of a second.
#include "io/generators.h"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <unordered_set>
#include <vector>

#include "mabd/error.h"

namespace mabd::io {

namespace {

constexpr double kPi = 3.14159265358979323846;
/// Most bodies a single generator may create.
constexpr std::int64_t kMaxGeneratedBodies = 100'000'000;
/// Memory a generated body and a generated joint take through a run (bytes): the scene's
/// definitions, the world's state and the joint solvers' plans.
struct Footprint {
  double body, joint;
};
/// Chains (the closed-form chain solver): 1.8 kB per link where the scene's definitions and
/// the world are held together (load_scene, then build_world); `mabd run` and `mabd bench`
/// release the definitions as the world is built and peak at about 1.4 kB per link of a
/// million-link chain.
constexpr Footprint kChainFootprint{800, 1000};
/// Nets and trees (the sparse, iterative and tree solvers' plans): 3.0 kB per link of a
/// million-link tree in `mabd run`.
constexpr Footprint kGraphFootprint{1200, 1800};
/// Most child branches per branch point of a tree.
constexpr int kMaxBranching = 64;
/// Name that stands for the world (not a body).
const std::string kWorldName = "world";

const std::vector<std::string> kGeneratorTypes = {"chain", "net", "tree"};
const std::vector<std::string> kPartFields = {"shape", "material", "mass", "collision"};
const std::vector<std::string> kChainFields = {
    "type",  "name", "links",  "link",   "start",    "direction", "spacing",
    "joint", "axis", "pinned", "attach", "end_mass", "compliance", "pegs"};
const std::vector<std::string> kNetFields = {"type",   "name",   "n",         "spacing",
                                             "node",   "edge",   "origin",    "plane",
                                             "pinned", "attach", "compliance"};
const std::vector<std::string> kTreeFields = {
    "type",    "name",      "links",     "depth", "branching", "segment", "segments_per_branch",
    "spacing", "root",      "direction", "angle", "seed",      "joint",   "pinned",
    "attach",  "compliance", "spring",    "thicken"};

/// A generated part: the body every copy starts from, plus its extent along its long axis.
struct Part {
  BodyDef def;
  Vec3 local_axis = Vec3::UnitX();  ///< body axis laid along the generator's direction
  double length = 0;                ///< extent along local_axis (m); 0 for meshes
};

/// Everything a generator needs besides its own fields.
struct Context {
  Node node;  ///< the generator object, labelled "generators[i] 'name'"
  std::string name;
  const GeneratorParsers& parsers;
  Scene& scene;
  std::vector<SceneJoint>& joints;
};

Part parse_part(const Node& node, const GeneratorParsers& parsers) {
  node.check_fields(kPartFields);
  Part part;
  part.def.shape = parsers.shape(node.require("shape"));
  part.def.material = parsers.material(node.require("material"));
  if (auto n = node.get("mass")) part.def.mass = n->positive();
  if (auto n = node.get("collision")) part.def.collision = parsers.collision(*n);
  const ShapeDef& shape = part.def.shape;
  switch (shape.type) {
    case ShapeType::Box:
      part.length = shape.size.x();
      break;
    case ShapeType::Sphere:
      part.length = 2 * shape.radius;
      break;
    case ShapeType::Capsule:
      part.local_axis = Vec3::UnitZ();
      part.length = shape.length + 2 * shape.radius;
      break;
    case ShapeType::Cylinder:
      part.local_axis = Vec3::UnitZ();
      part.length = shape.length;
      break;
    case ShapeType::Mesh:
    case ShapeType::Plane:  // not a part shape (the shape parser rejects it)
      part.length = 0;
      break;
  }
  return part;
}

/// A direction: three finite numbers, not all zero; returned normalised.
Vec3 unit_vector(const Node& node) {
  const Vec3 v = node.vec3();
  const double norm = v.norm();
  if (!(norm > 0)) node.fail("must be non-zero");
  if (!std::isfinite(norm)) return (v / v.cwiseAbs().maxCoeff()).normalized();
  return v / norm;
}

bool boolean(const Node& node) {
  if (!node.json().is_boolean()) node.fail("expected a boolean, got " + type_name(node.json()));
  return node.json().get<bool>();
}

/// Rotation taking the part's long axis onto `direction` (unit).
Quat align(const Vec3& local_axis, const Vec3& direction) {
  return Quat::FromTwoVectors(local_axis, direction).normalized();
}

/// A unit vector perpendicular to the unit vector `d` (deterministic).
Vec3 perpendicular(const Vec3& d) {
  Eigen::Index smallest = 0;
  d.cwiseAbs().minCoeff(&smallest);
  return d.cross(Vec3::Unit(smallest)).normalized();
}

/// `prefix` followed by the decimal form of `i`.
std::string numbered(const std::string& prefix, std::int64_t i) {
  char digits[24];
  const auto result = std::to_chars(digits, digits + sizeof digits, i);
  std::string out;
  out.reserve(prefix.size() + static_cast<std::size_t>(result.ptr - digits));
  out += prefix;
  out.append(digits, result.ptr);
  return out;
}

std::string numbered(const std::string& prefix, std::int64_t i, std::int64_t j) {
  return numbered(numbered(prefix, i) + "_", j);
}

/// Reads "pinned"-style "attach": the body (or "world") the generator is pinned to.
std::string parse_attach(const Context& ctx, bool pinned) {
  std::string target = kWorldName;
  std::optional<Node> node = ctx.node.get("attach");
  if (node) {
    if (!pinned) node->fail("only applies to a pinned " + ctx.node.require("type").string());
    target = node->string();
    if (target.empty()) node->fail("must not be empty");
  }
  if (!pinned) return target;
  const Node& where = node ? *node : ctx.node;
  const auto& bodies = ctx.scene.bodies;
  const bool exists =
      std::any_of(bodies.begin(), bodies.end(), [&](const BodyDef& b) { return b.name == target; });
  if (target == kWorldName) {
    if (exists) where.fail("'world' is ambiguous: a body is also named 'world' (rename that body)");
    return target;
  }
  if (exists) return target;
  std::vector<std::string> known = {kWorldName};
  known.reserve(bodies.size() + 1);
  for (const BodyDef& b : bodies) known.push_back(b.name);
  node->fail(unknown_name_message("body", target, known));
}

double parse_compliance(const Node& node) {
  if (auto n = node.get("compliance")) return n->non_negative();
  return 0;
}

/// Joint type of a generator: one of `choices` (default "ball").
JointType parse_joint_type(const Node& node, const std::vector<std::string>& choices) {
  if (auto n = node.get("joint")) {
    const std::string& chosen = choices[n->one_of(choices)];
    if (chosen == "hinge") return JointType::Hinge;
    if (chosen == "fixed") return JointType::Fixed;
  }
  return JointType::Ball;
}

void check_count(const Node& node, std::int64_t bodies) {
  if (bodies > kMaxGeneratedBodies) {
    node.fail("would create " + std::to_string(bodies) + " bodies (at most " +
              std::to_string(kMaxGeneratedBodies) + " per generator)");
  }
}

std::string gigabytes(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g GB", bytes / 1e9);
  return text;
}

/// Fails when the scene with this generator's `bodies` and `joints` (each body a copy of a
/// part of `part_bytes` beyond the fixed cost) would not fit in the available memory, before
/// anything is built.
void check_memory(const Context& ctx, std::int64_t bodies, std::int64_t joints,
                  std::size_t part_bytes, const Footprint& footprint) {
  const std::optional<double> available = available_memory();
  if (!available) return;
  const double all_bodies = static_cast<double>(ctx.scene.bodies.size()) + bodies;
  const double all_joints = static_cast<double>(ctx.joints.size()) + joints;
  const double need = all_bodies * (footprint.body + static_cast<double>(part_bytes)) +
                      all_joints * footprint.joint;
  if (need <= *available) return;
  ctx.node.fail("would create " + std::to_string(bodies) + " bodies and " +
                std::to_string(joints) + " joints, which need about " + gigabytes(need) +
                " of memory (about " + std::to_string(static_cast<long>(footprint.body)) +
                " bytes per body" +
                (part_bytes > 0 ? " plus " + std::to_string(part_bytes) + " for its mesh" : "") +
                " and " + std::to_string(static_cast<long>(footprint.joint)) +
                " per joint), more than the " + gigabytes(*available) +
                " available; generate fewer");
}

/// Bytes of mesh data a copy of `part` carries (0 for the other shapes).
std::size_t mesh_bytes(const Part& part) {
  const TriangleMesh& mesh = part.def.shape.mesh;
  return mesh.vertices.size() * sizeof(Vec3) + mesh.triangles.size() * sizeof(mesh.triangles[0]);
}

/// Appends a copy of `part` named `name` at `position` with `orientation`.
void add_body(Scene& scene, const Part& part, std::string name, const Vec3& position,
              const Quat& orientation) {
  scene.bodies.push_back(part.def);
  BodyDef& def = scene.bodies.back();
  def.name = std::move(name);
  def.position = position;
  def.orientation = orientation;
}

/// Appends a copy of `tmpl` with the given name, bodies and anchor (axis for hinges).
void add_joint(std::vector<SceneJoint>& joints, const SceneJoint& tmpl, std::string name,
               const std::string& body_a, const std::string& body_b, const Vec3& anchor) {
  joints.push_back(tmpl);
  SceneJoint& joint = joints.back();
  joint.def.name = std::move(name);
  joint.body_a = body_a;
  joint.body_b = body_b;
  joint.def.anchor = anchor;
}

SceneJoint joint_template(JointType type, double compliance) {
  SceneJoint tmpl;
  tmpl.def.type = type;
  tmpl.def.compliance = compliance;
  return tmpl;
}

// ---- chain ---------------------------------------------------------------------------------

void generate_chain(Context& ctx) {
  const Node& node = ctx.node;
  node.check_fields(kChainFields);
  const int links = node.require("links").integer(1);
  check_count(node, static_cast<std::int64_t>(links) + 1);
  const Part link = parse_part(node.require("link"), ctx.parsers);
  check_memory(ctx, static_cast<std::int64_t>(links) + 1, static_cast<std::int64_t>(links) + 1,
               mesh_bytes(link), kChainFootprint);
  const Vec3 start = node.has("start") ? node.require("start").vec3() : Vec3::Zero();
  const Vec3 direction =
      node.has("direction") ? unit_vector(node.require("direction")) : Vec3::UnitX();
  const double spacing = node.require("spacing").positive();
  const JointType type = parse_joint_type(node, {"ball", "hinge"});
  Vec3 axis = Vec3::UnitZ();
  if (type == JointType::Hinge) {
    axis = unit_vector(node.require("axis"));
  } else if (auto n = node.get("axis")) {
    n->fail("only applies to a hinge chain (\"joint\": \"hinge\")");
  }
  const bool pinned = node.has("pinned") ? boolean(node.require("pinned")) : true;
  const std::string attach = parse_attach(ctx, pinned);
  std::optional<Part> end_mass;
  if (auto n = node.get("end_mass")) end_mass = parse_part(*n, ctx.parsers);
  // Pegs: every `every`-th link (and the first and last) is static and the links between
  // two pegs hang as a festoon, laid out as a circular arc leaving the pegs at `angle` (rad)
  // below the chain direction, sagging towards `down`; released, it swings towards the
  // catenary.
  int peg_every = 0;
  double peg_angle = 0;
  Vec3 down = -Vec3::UnitZ();
  if (auto n = node.get("pegs")) {
    n->check_fields({"every", "angle", "down"});
    peg_every = n->require("every").integer(2);
    if (auto a = n->get("angle")) {
      peg_angle = a->number();
      if (!(peg_angle >= 0 && peg_angle < 1.5)) a->fail("must be in [0, 1.5) rad");
    }
    if (auto d = n->get("down")) down = unit_vector(*d);
    down -= direction * direction.dot(down);
    if (down.norm() < 1e-6) n->fail("down: must not be parallel to the chain direction");
    down.normalize();
    if (node.has("pinned") && boolean(node.require("pinned"))) {
      n->fail("the chain hangs from its pegs: pinned must be false or absent");
    }
    if (end_mass) n->fail("a pegged chain ends on a peg: remove end_mass");
  }
  const bool pin = pinned && peg_every == 0;
  SceneJoint tmpl = joint_template(type, parse_compliance(node));
  tmpl.def.axis = axis;

  const std::string prefix = ctx.name + "/";
  const std::string joint_prefix = prefix + "j";
  Scene& scene = ctx.scene;
  const std::size_t first = scene.bodies.size();
  scene.bodies.reserve(first + static_cast<std::size_t>(links) + (end_mass ? 1 : 0));
  ctx.joints.reserve(ctx.joints.size() + static_cast<std::size_t>(links) + 1);
  auto is_peg = [&](int i) { return peg_every > 0 && (i % peg_every == 0 || i + 1 == links); };
  // Direction of link i: along the chain, or down / up the two halves of a festoon.
  auto direction_of = [&](int i) -> Vec3 {
    if (peg_every == 0 || is_peg(i)) return direction;
    // Festoon links m = 1 .. every - 1 turn evenly from +angle to -angle.
    const int m = i % peg_every;
    const double t = (m - 0.5) / (peg_every - 1);
    const double a = peg_angle * (1 - 2 * t);
    return std::cos(a) * direction + std::sin(a) * down;
  };
  std::vector<Vec3> joint_at;  // the joint positions along the chain (link i starts at joint_at[i])
  joint_at.reserve(static_cast<std::size_t>(links) + 1);
  joint_at.push_back(start);
  for (int i = 0; i < links; ++i) {
    const Vec3 d = direction_of(i);
    add_body(scene, link, numbered(prefix, i), joint_at.back() + 0.5 * spacing * d,
             align(link.local_axis, d));
    if (is_peg(i)) scene.bodies.back().kind = BodyKind::Static;
    joint_at.push_back(joint_at.back() + spacing * d);
  }
  if (pin)
    add_joint(ctx.joints, tmpl, joint_prefix + "0", attach, scene.bodies[first].name, start);
  for (int i = 1; i < links; ++i) {
    if (is_peg(i - 1) && is_peg(i)) continue;  // two pegs side by side: nothing moves
    add_joint(ctx.joints, tmpl, numbered(joint_prefix, i), scene.bodies[first + i - 1].name,
              scene.bodies[first + i].name, joint_at[i]);
  }
  if (end_mass) {
    const Vec3 tip = joint_at.back();
    add_body(scene, *end_mass, prefix + "end", tip + 0.5 * end_mass->length * direction,
             align(end_mass->local_axis, direction));
    SceneJoint ball = joint_template(JointType::Ball, tmpl.def.compliance);
    add_joint(ctx.joints, ball, numbered(joint_prefix, links),
              scene.bodies[first + static_cast<std::size_t>(links) - 1].name,
              scene.bodies.back().name, tip);
  }
}

// ---- net -----------------------------------------------------------------------------------

void generate_net(Context& ctx) {
  const Node& node = ctx.node;
  node.check_fields(kNetFields);
  const Node n_node = node.require("n");
  const int n = n_node.integer(2);
  const std::int64_t n64 = n;
  if (n64 > 10000) n_node.fail("must be at most 10000 (got " + std::to_string(n) + ")");
  check_count(node, n64 * n64 + 2 * n64 * (n64 - 1));
  const double spacing = node.require("spacing").positive();
  const Part node_part = parse_part(node.require("node"), ctx.parsers);
  const Part edge_part = parse_part(node.require("edge"), ctx.parsers);
  check_memory(ctx, n64 * n64 + 2 * n64 * (n64 - 1), 4 * n64 * (n64 - 1) + n64,
               std::max(mesh_bytes(node_part), mesh_bytes(edge_part)), kGraphFootprint);
  const Vec3 origin = node.has("origin") ? node.require("origin").vec3() : Vec3::Zero();
  Vec3 u = Vec3::UnitX();
  Vec3 v = -Vec3::UnitZ();
  if (auto p = node.get("plane")) {
    switch (p->one_of({"xy", "xz", "yz"})) {
      case 0:
        u = Vec3::UnitX();
        v = Vec3::UnitY();
        break;
      case 1:
        u = Vec3::UnitX();
        v = -Vec3::UnitZ();
        break;
      default:
        u = Vec3::UnitY();
        v = -Vec3::UnitZ();
        break;
    }
  }
  int pinned = 0;  // 0 row, 1 corners, 2 none
  if (auto p = node.get("pinned")) pinned = static_cast<int>(p->one_of({"row", "corners", "none"}));
  const std::string attach = parse_attach(ctx, pinned != 2);
  const SceneJoint tmpl = joint_template(JointType::Ball, parse_compliance(node));

  const std::string prefix = ctx.name + "/";
  Scene& scene = ctx.scene;
  const auto count = static_cast<std::size_t>(n);
  scene.bodies.reserve(scene.bodies.size() + count * count + 2 * count * (count - 1));
  ctx.joints.reserve(ctx.joints.size() + 4 * count * (count - 1) + count);
  const auto at = [&](int i, int j) { return origin + spacing * (j * u + i * v); };

  const std::size_t first_node = scene.bodies.size();
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      add_body(scene, node_part, numbered(prefix + "node_", i, j), at(i, j), Quat::Identity());
    }
  }
  const auto node_name = [&](int i, int j) -> const std::string& {
    return scene.bodies[first_node + static_cast<std::size_t>(i) * count + j].name;
  };
  const Quat along_u = align(edge_part.local_axis, u);
  const Quat along_v = align(edge_part.local_axis, v);
  // Each edge link joined by ball joints at its two ends, the centres of its two nodes.
  const auto add_edge = [&](const std::string& name, int i0, int j0, int i1, int j1,
                            const Quat& orientation) {
    add_body(scene, edge_part, name, 0.5 * (at(i0, j0) + at(i1, j1)), orientation);
    add_joint(ctx.joints, tmpl, name + "/a", node_name(i0, j0), name, at(i0, j0));
    add_joint(ctx.joints, tmpl, name + "/b", node_name(i1, j1), name, at(i1, j1));
  };
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j + 1 < n; ++j)
      add_edge(numbered(prefix + "h_", i, j), i, j, i, j + 1, along_u);
  }
  for (int i = 0; i + 1 < n; ++i) {
    for (int j = 0; j < n; ++j) add_edge(numbered(prefix + "v_", i, j), i, j, i + 1, j, along_v);
  }
  const auto pin = [&](int i, int j) {
    add_joint(ctx.joints, tmpl, numbered(prefix + "pin_", i, j), attach, node_name(i, j), at(i, j));
  };
  if (pinned == 0) {
    for (int j = 0; j < n; ++j) pin(0, j);
  } else if (pinned == 1) {
    pin(0, 0);
    pin(0, n - 1);
    pin(n - 1, 0);
    pin(n - 1, n - 1);
  }
}

// ---- tree ----------------------------------------------------------------------------------

/// Deterministic draws from std::mt19937 (its output sequence is fixed by the standard;
/// the distributions of <random> are not, so they are not used).
class Draws {
 public:
  explicit Draws(std::uint32_t seed) : gen_(seed) {}
  /// Uniform in [0, 1).
  double uniform() { return static_cast<double>(gen_()) * (1.0 / 4294967296.0); }
  /// Uniform in [0, n), n > 0.
  std::uint64_t index(std::uint64_t n) {
    const std::uint64_t hi = gen_();
    const std::uint64_t x = (hi << 32) | gen_();
    return x % n;
  }
  /// `m` distinct values of [0, n), sorted (Floyd's sampling).
  std::vector<std::uint64_t> sample(std::uint64_t m, std::uint64_t n) {
    std::unordered_set<std::uint64_t> chosen;
    chosen.reserve(static_cast<std::size_t>(m));
    for (std::uint64_t j = n - m; j < n; ++j) {
      const std::uint64_t t = index(j + 1);
      if (!chosen.insert(t).second) chosen.insert(j);
    }
    std::vector<std::uint64_t> out(chosen.begin(), chosen.end());
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  std::mt19937 gen_;
};

struct Branch {
  std::int64_t parent = -1;  ///< index in the branch list, -1 for the trunk
  int slot = 0;              ///< which child of the parent (0 .. branching-1)
  std::int64_t segments = 0;
  bool leaf = true;
};

void generate_tree(Context& ctx) {
  const Node& node = ctx.node;
  node.check_fields(kTreeFields);
  const int depth = node.require("depth").integer(0);
  const Node branching_node = node.require("branching");
  const int branching = branching_node.integer(1);
  if (branching > kMaxBranching) {
    branching_node.fail("must be at most " + std::to_string(kMaxBranching) + " (got " +
                        std::to_string(branching) + ")");
  }
  const Part segment = parse_part(node.require("segment"), ctx.parsers);
  const std::int64_t k = node.require("segments_per_branch").integer(1);
  double spacing = segment.length;
  if (auto n = node.get("spacing")) {
    spacing = n->positive();
  } else if (segment.def.shape.type == ShapeType::Mesh) {
    node.fail("missing required field 'spacing' (a mesh segment has no length of its own)");
  }

  // Segment count of the full skeleton (saturating).
  std::int64_t full = 0;
  {
    std::int64_t level_branches = 1;
    for (int level = 0; level <= depth && full <= kMaxGeneratedBodies; ++level) {
      full += k * level_branches;
      level_branches = std::min<std::int64_t>(level_branches * branching, kMaxGeneratedBodies + 1);
    }
  }
  std::int64_t target = full;
  if (auto n = node.get("links")) {
    target = n->integer(1);
  } else if (full > kMaxGeneratedBodies) {
    node.fail("depth " + std::to_string(depth) + " with branching " + std::to_string(branching) +
              " gives more than " + std::to_string(kMaxGeneratedBodies) +
              " segments (lower them or set 'links')");
  }
  check_count(node, target);
  check_memory(ctx, target, target, mesh_bytes(segment), kGraphFootprint);

  const Vec3 root = node.has("root") ? node.require("root").vec3() : Vec3::Zero();
  const Vec3 direction =
      node.has("direction") ? unit_vector(node.require("direction")) : Vec3::UnitZ();
  double angle = 0.5;
  if (auto n = node.get("angle")) {
    angle = n->number();
    if (!(angle >= 0 && angle <= kPi)) {
      n->fail("must be in [0, pi] (got " + format_number(angle) + ")");
    }
  }
  const int seed = node.has("seed") ? node.require("seed").integer(0) : 0;
  const JointType type = parse_joint_type(node, {"ball", "hinge", "fixed"});
  const bool pinned = node.has("pinned") ? boolean(node.require("pinned")) : true;
  const std::string attach = parse_attach(ctx, pinned);
  SceneJoint tmpl = joint_template(type, parse_compliance(node));
  if (auto n = node.get("spring")) {
    // Branch stiffness (N m/rad) and damping (N m s/rad) at every joint of the tree.
    n->check_fields({"stiffness", "damping"});
    JointSpring spring;
    if (auto s = n->get("stiffness")) spring.stiffness = s->non_negative();
    if (auto s = n->get("damping")) spring.damping = s->non_negative();
    if (type == JointType::Fixed) n->fail("a fixed joint takes no spring");
    tmpl.def.spring = spring;
  }
  const bool thicken = node.has("thicken") ? boolean(node.require("thicken")) : false;
  if (thicken && segment.def.shape.type != ShapeType::Capsule &&
      segment.def.shape.type != ShapeType::Cylinder) {
    node.require("thicken").fail("needs a capsule or cylinder segment (it scales the radius)");
  }
  Draws draws(static_cast<std::uint32_t>(seed));

  // ---- topology: whole levels while they fit, a random part of the next level, and the
  // remaining segments spread over the leaves (which lengthens them).
  std::vector<Branch> branches;
  branches.push_back({-1, 0, std::min(k, target), true});
  std::int64_t used = branches[0].segments;
  std::size_t level_begin = 0;
  for (int level = 1; level <= depth && used < target; ++level) {
    const std::size_t level_end = branches.size();
    const auto parents = static_cast<std::uint64_t>(level_end - level_begin);
    const std::uint64_t slots = parents * static_cast<std::uint64_t>(branching);
    const auto fit = static_cast<std::uint64_t>((target - used) / k);
    std::vector<std::uint64_t> chosen;
    if (fit >= slots) {
      chosen.resize(static_cast<std::size_t>(slots));
      for (std::uint64_t s = 0; s < slots; ++s) chosen[static_cast<std::size_t>(s)] = s;
    } else {
      chosen = draws.sample(fit, slots);
    }
    for (std::uint64_t s : chosen) {
      const auto parent = static_cast<std::int64_t>(level_begin + s / branching);
      branches[static_cast<std::size_t>(parent)].leaf = false;
      branches.push_back({parent, static_cast<int>(s % branching), k, true});
    }
    used += static_cast<std::int64_t>(chosen.size()) * k;
    level_begin = level_end;
    if (chosen.size() < slots) break;
  }
  if (used < target) {
    std::vector<std::size_t> leaves;
    for (std::size_t b = 0; b < branches.size(); ++b) {
      if (branches[b].leaf) leaves.push_back(b);
    }
    const std::int64_t extra = target - used;
    const auto leaf_count = static_cast<std::int64_t>(leaves.size());
    for (std::size_t leaf : leaves) branches[leaf].segments += extra / leaf_count;
    for (std::uint64_t s : draws.sample(static_cast<std::uint64_t>(extra % leaf_count),
                                        static_cast<std::uint64_t>(leaf_count))) {
      ++branches[leaves[static_cast<std::size_t>(s)]].segments;
    }
  }

  // Da Vinci's rule (thicken): a branch carrying n tips has sqrt(n) times the tip radius, so
  // that it can bear them; its joints' spring stiffness grows with the bending stiffness,
  // as radius^4 = n^2.
  std::vector<double> tips(branches.size(), 0.0);
  for (std::size_t b = branches.size(); b-- > 0;) {
    if (branches[b].leaf) tips[b] = 1;
    if (branches[b].parent >= 0) tips[static_cast<std::size_t>(branches[b].parent)] += tips[b];
  }

  // ---- geometry, branch by branch (parents come first).
  struct Placed {
    Vec3 start, dir, bend;
    double spin;       ///< azimuth offset of this branch's children (rad)
    std::size_t last;  ///< index in scene.bodies of the branch's last segment
  };
  std::vector<Placed> placed(branches.size());
  const std::string prefix = ctx.name + "/";
  const std::string joint_prefix = prefix + "j";
  Scene& scene = ctx.scene;
  scene.bodies.reserve(scene.bodies.size() + static_cast<std::size_t>(target));
  ctx.joints.reserve(ctx.joints.size() + static_cast<std::size_t>(target));
  std::int64_t count = 0;
  for (std::size_t b = 0; b < branches.size(); ++b) {
    const Branch& branch = branches[b];
    Placed& p = placed[b];
    std::string parent_name = attach;
    if (branch.parent < 0) {
      p.start = root;
      p.dir = direction;
      p.bend = perpendicular(direction);
    } else {
      const Placed& parent = placed[static_cast<std::size_t>(branch.parent)];
      const double azimuth = parent.spin + 2 * kPi * branch.slot / branching;
      const Vec3 e1 = perpendicular(parent.dir);
      const Vec3 e2 = parent.dir.cross(e1);
      p.bend = (std::cos(azimuth) * e1 + std::sin(azimuth) * e2).normalized();
      const double tilt = angle * (0.75 + 0.5 * draws.uniform());
      p.dir = (Eigen::AngleAxisd(tilt, p.bend) * parent.dir).normalized();
      p.start =
          parent.start +
          parent.dir * (spacing * static_cast<double>(
                                      branches[static_cast<std::size_t>(branch.parent)].segments));
      parent_name = scene.bodies[parent.last].name;
    }
    p.spin = 2 * kPi * draws.uniform();
    const Quat orientation = align(segment.local_axis, p.dir);
    SceneJoint joint = tmpl;
    joint.def.axis = p.bend;
    Part part = segment;
    if (thicken) {
      part.def.shape.radius *= std::sqrt(tips[b]);
      if (joint.def.spring) {
        joint.def.spring->stiffness *= tips[b] * tips[b];
        joint.def.spring->damping *= tips[b] * tips[b];
      }
    }
    for (std::int64_t s = 0; s < branch.segments; ++s) {
      const Vec3 begin = p.start + (spacing * static_cast<double>(s)) * p.dir;
      add_body(scene, part, numbered(prefix, count), begin + 0.5 * spacing * p.dir, orientation);
      const bool joined = branch.parent >= 0 || s > 0 || pinned;
      if (joined) {
        add_joint(ctx.joints, joint, numbered(joint_prefix, count),
                  s > 0 ? scene.bodies[scene.bodies.size() - 2].name : parent_name,
                  scene.bodies.back().name, begin);
      }
      ++count;
    }
    p.last = scene.bodies.size() - 1;
  }
}

/// Fails if an explicit body or joint uses a name reserved for generator `name`.
void check_reserved(const Context& ctx, const Node& top, std::size_t explicit_bodies) {
  const std::string prefix = ctx.name + "/";
  const auto reserved = [&](const std::string& s) { return s.rfind(prefix, 0) == 0; };
  for (std::size_t i = 0; i < explicit_bodies; ++i) {
    if (reserved(ctx.scene.bodies[i].name)) {
      ctx.node.fail("body name '" + ctx.scene.bodies[i].name + "' (bodies[" + std::to_string(i) +
                    "]) starts with '" + prefix + "', which is reserved for this generator");
    }
  }
  const auto joints = top.get("joints");
  if (!joints || !joints->json().is_array()) return;
  for (std::size_t i = 0; i < joints->size(); ++i) {
    const Json& item = joints->json()[i];
    if (!item.is_object()) continue;
    auto it = item.find("name");
    if (it == item.end() || !it->is_string()) continue;
    const std::string& joint_name = it->get_ref<const std::string&>();
    if (reserved(joint_name)) {
      ctx.node.fail("joint name '" + joint_name + "' (joints[" + std::to_string(i) +
                    "]) starts with '" + prefix + "', which is reserved for this generator");
    }
  }
}

}  // namespace

std::optional<double> available_memory() {
  std::ifstream meminfo("/proc/meminfo");
  std::string line;
  while (std::getline(meminfo, line)) {
    double kilobytes = 0;
    if (std::sscanf(line.c_str(), "MemAvailable: %lf kB", &kilobytes) == 1) return kilobytes * 1024;
  }
  const long pages = sysconf(_SC_AVPHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page_size > 0) return static_cast<double>(pages) * page_size;
  return std::nullopt;
}

std::vector<SceneJoint> run_generators(const Node& top, const Node& generators,
                                       const GeneratorParsers& parsers, Scene& scene) {
  generators.expect_array();
  std::vector<SceneJoint> joints;
  const std::size_t explicit_bodies = scene.bodies.size();
  std::map<std::string, std::size_t> seen;
  for (std::size_t i = 0; i < generators.size(); ++i) {
    const Node item = generators.element(i).relabel("generators[" + std::to_string(i) + "]");
    item.expect_object();
    const Node name_node = item.require("name");
    const std::string name = name_node.string();
    if (name.empty()) name_node.fail("must not be empty");
    if (name.find('/') != std::string::npos) name_node.fail("must not contain '/'");
    const Node node = item.relabel(item.where() + " '" + name + "'");
    auto [it, inserted] = seen.emplace(name, i);
    if (!inserted) {
      node.fail("duplicate generator name '" + name + "' (also used by generators[" +
                std::to_string(it->second) + "])");
    }
    if (!node.has("type")) {
      std::vector<std::string> all = kChainFields;
      for (const auto* list : {&kNetFields, &kTreeFields}) {
        for (const std::string& f : *list) {
          if (std::find(all.begin(), all.end(), f) == all.end()) all.push_back(f);
        }
      }
      node.check_fields(all);
    }
    const std::size_t type = node.require("type").one_of(kGeneratorTypes);
    Context ctx{node, name, parsers, scene, joints};
    check_reserved(ctx, top, explicit_bodies);
    switch (type) {
      case 0:
        generate_chain(ctx);
        break;
      case 1:
        generate_net(ctx);
        break;
      default:
        generate_tree(ctx);
        break;
    }
  }
  return joints;
}

}  // namespace mabd::io
