// CollisionWorld: body registry, broad phase (planes tested against every dynamic body's
// bounding sphere, other collider primitives in a dynamic AABB tree), narrow-phase dispatch
// and conversion of the world-frame contacts to the bodies' user frames.
//
// Cost model: a detect costs one bounding-sphere computation per dynamic body that may
// collide with some collider (group/mask), a plane test per plane and one box test against
// the tree root (a tree descent only near colliders); nothing is allocated once the buffers
// have grown. Identical geometries are stored once (bodies refer to them by index).
//
// Colliders: a primitive's world box enters the tree at the first detect (add_body has no
// pose) and moves only when its body's pose changes, so static bodies are inserted once and
// kinematic ones updated as they move. Lengths in m; poses are those of the user frames.
#include "collision/collision_world.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <deque>
#include <set>
#include <limits>
#include <string>
#include <unordered_map>

#include "collision/aabb_tree.h"
#include "collision/narrow_phase.h"
#include "collision/primitive.h"
#include "collision/triangle_contacts.h"
#include "mabd/error.h"

namespace mabd::detail {
namespace {

constexpr std::uint32_t kNone = 0xFFFFFFFFu;

/// Primitives of a body (shared by all bodies with the same definition) and their bounding
/// sphere in the body's user frame.
struct Geometry {
  std::vector<Primitive> prims;
  Vec3 center = Vec3::Zero();
  double radius = 0;
  bool centered = true;  ///< center is the frame origin
};

struct BodyRecord {
  std::uint32_t geometry = kNone;  ///< kNone: the body does not collide
  BodyKind kind = BodyKind::Dynamic;
  std::uint32_t group = 1;
  std::uint32_t mask = 0xFFFFFFFFu;
};

/// One primitive of a static or kinematic body, placed at the current poses.
struct ColliderPrim {
  std::uint32_t body = 0;
  std::uint32_t prim = 0;
  bool is_plane = false;
  bool placed_once = false;
  Pose pose;                  ///< the body pose it was last placed at
  Placed placed;              ///< world placement
  Vec3 lower = Vec3::Zero();  ///< world box (non-planes)
  Vec3 upper = Vec3::Zero();
};

bool filters_match(const BodyRecord& a, const BodyRecord& b) {
  return (a.group & b.mask) != 0 && (b.group & a.mask) != 0;
}

std::uint64_t pair_key(std::uint32_t a, std::uint32_t b) {
  if (a > b) std::swap(a, b);
  return (std::uint64_t(a) << 32) | b;
}

/// Byte string identifying a geometry definition (for sharing identical geometries).
std::string geometry_key(const CollisionGeometry& g) {
  std::string key(1, g.kind == BodyKind::Dynamic ? 'd' : 'c');
  auto put = [&key](const void* data, std::size_t size) {
    key.append(static_cast<const char*>(data), size);
  };
  for (const CollisionPrimitive& p : g.primitives) {
    const ShapeDef& s = p.shape;
    const double values[] = {double(int(s.type)),
                             s.size.x(),
                             s.size.y(),
                             s.size.z(),
                             s.radius,
                             s.length,
                             p.pose.position.x(),
                             p.pose.position.y(),
                             p.pose.position.z(),
                             p.pose.orientation.w(),
                             p.pose.orientation.x(),
                             p.pose.orientation.y(),
                             p.pose.orientation.z()};
    put(values, sizeof values);
    if (s.type == ShapeType::Mesh) {
      const std::size_t counts[] = {s.mesh.vertices.size(), s.mesh.triangles.size()};
      put(counts, sizeof counts);
      for (const Vec3& v : s.mesh.vertices) put(v.data(), 3 * sizeof(double));
      put(s.mesh.triangles.data(), s.mesh.triangles.size() * sizeof(s.mesh.triangles[0]));
    }
  }
  return key;
}

/// Feature id unique within a body pair: the primitive pair in the high bits (when either
/// body has several primitives), the pair's own feature in the rest.
std::uint32_t local_mask(std::uint32_t pair_count) {
  if (pair_count <= 1) return 0xFFFFFFFFu;
  const int bits = std::min(24, int(std::bit_width(pair_count - 1)));
  return 0xFFFFFFFFu >> bits;
}

std::uint32_t encode_feature(std::uint32_t local, std::uint32_t pair, std::uint32_t mask) {
  if (mask == 0xFFFFFFFFu) return local;
  const int shift = std::popcount(mask);
  return (pair << shift) | (local & mask);
}

bool sphere_hits_box(const Vec3& c, double r, const Vec3& lower, const Vec3& upper) {
  return (c.cwiseMax(lower).cwiseMin(upper) - c).squaredNorm() <= r * r;
}

}  // namespace

struct CollisionWorld::Impl {
  /// Calls fn(body, primitive index, pose's rotation, placed primitive) for every primitive
  /// of every colliding body that `skip` (may be empty) does not name, at the given poses.
  template <class Fn>
  void for_each_placed(const std::vector<Pose>& poses,
                       const std::function<bool(std::uint32_t)>& skip, Fn&& fn) const;
  std::vector<BodyRecord> bodies;
  std::deque<Geometry> geometries;  ///< deque: Placed keeps pointers to the primitives
  std::unordered_map<std::string, std::uint32_t> geometry_ids;
  std::vector<ColliderPrim> colliders;  ///< in (body, prim) order; ids of the tree leaves
  std::vector<std::uint32_t> planes;    ///< ids in `colliders` of the plane primitives
  /// Per plane at the current poses: unit normal and offset (n . x = offset on the plane).
  std::vector<Eigen::Vector4d> plane_equations;
  AabbTree tree;
  /// Excluded pairs (pair_key), sorted and unique once settle_excluded has run: 8 bytes a
  /// pair (every joint adds one) where a hash set takes about 30.
  std::vector<std::uint64_t> excluded;
  bool excluded_sorted = true;
  void settle_excluded() {
    if (excluded_sorted) return;
    std::sort(excluded.begin(), excluded.end());
    excluded.erase(std::unique(excluded.begin(), excluded.end()), excluded.end());
    excluded_sorted = true;
  }
  /// Whether pair_key `key` is excluded (after settle_excluded).
  bool is_excluded(std::uint64_t key) const {
    return !excluded.empty() && std::binary_search(excluded.begin(), excluded.end(), key);
  }
  std::size_t colliding = 0;
  DetectStats stats;

  // Dynamic bodies that some collider's group/mask accepts; rebuilt after add_body.
  std::vector<std::uint32_t> active;
  bool active_dirty = true;

  // Dynamic-dynamic pairs (detect_pairs): a tree over the dynamic bodies' bounding boxes,
  // refitted at each call, and the bodies in it.
  AabbTree dynamic_tree;
  std::vector<std::uint32_t> dynamic_bodies;
  std::vector<Vec3> dynamic_fat;    ///< per body: lower and upper corner of its fat box
  std::vector<char> dynamic_fresh;  ///< per body: not in the tree yet
  bool dynamic_dirty = true;
  std::size_t pair_candidates = 0;
  std::vector<Placed> other_prims;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> pair_list;

  // Scratch, reused by detect.
  std::vector<std::uint32_t> hits;
  std::vector<Placed> body_prims;
  NarrowScratch narrow;

  void rebuild_active();
  void update_colliders(const std::vector<Pose>& poses);
  void collide_body(std::uint32_t b, const Pose& pose, double margin,
                    std::vector<ContactPoint>& out);
};

template <class Fn>
void CollisionWorld::Impl::for_each_placed(const std::vector<Pose>& poses,
                                           const std::function<bool(std::uint32_t)>& skip,
                                           Fn&& fn) const {
  for (std::uint32_t b = 0; b < bodies.size(); ++b) {
    const BodyRecord& rec = bodies[b];
    if (rec.geometry == kNone || (skip && skip(b))) continue;
    const Geometry& geo = geometries[rec.geometry];
    const Pose& pose = poses[b];
    const Mat3 rot = pose.orientation.toRotationMatrix();
    for (std::size_t pi = 0; pi < geo.prims.size(); ++pi) {
      fn(b, pi, rot, place(geo.prims[pi], rot, pose.position));
    }
  }
}

void CollisionWorld::Impl::rebuild_active() {
  active.clear();
  std::vector<std::pair<std::uint32_t, std::uint32_t>> filters;  // distinct collider filters
  for (const ColliderPrim& c : colliders) {
    const BodyRecord& r = bodies[c.body];
    const std::pair<std::uint32_t, std::uint32_t> f(r.group, r.mask);
    if (std::find(filters.begin(), filters.end(), f) == filters.end()) filters.push_back(f);
  }
  for (std::uint32_t i = 0; i < bodies.size(); ++i) {
    const BodyRecord& r = bodies[i];
    if (r.kind != BodyKind::Dynamic || r.geometry == kNone) continue;
    for (const auto& [group, mask] : filters) {
      if ((r.group & mask) != 0 && (group & r.mask) != 0) {
        active.push_back(i);
        break;
      }
    }
  }
  active_dirty = false;
}

void CollisionWorld::Impl::update_colliders(const std::vector<Pose>& poses) {
  for (std::uint32_t id = 0; id < colliders.size(); ++id) {
    ColliderPrim& c = colliders[id];
    const Pose& pose = poses[c.body];
    if (c.placed_once && pose.position == c.pose.position &&
        pose.orientation.coeffs() == c.pose.orientation.coeffs()) {
      continue;  // static bodies stay where they were placed first
    }
    const Primitive& prim = geometries[bodies[c.body].geometry].prims[c.prim];
    c.pose = pose;
    c.placed = place(prim, pose.orientation.toRotationMatrix(), pose.position);
    c.placed_once = true;
    if (!c.is_plane) {
      world_aabb(c.placed, c.lower, c.upper);
      tree.set(id, c.lower, c.upper);
    }
  }
  plane_equations.resize(planes.size());
  for (std::size_t k = 0; k < planes.size(); ++k) {
    const Placed& p = colliders[planes[k]].placed;
    const Vec3 n = p.rotation.col(2);
    plane_equations[k] << n, n.dot(p.translation);
  }
}

void CollisionWorld::Impl::collide_body(std::uint32_t b, const Pose& pose, double margin,
                                        std::vector<ContactPoint>& out) {
  const BodyRecord& rec = bodies[b];
  const Geometry& geo = geometries[rec.geometry];
  const Mat3 rot = pose.orientation.toRotationMatrix();
  body_prims.clear();
  for (const Primitive& p : geo.prims) body_prims.push_back(place(p, rot, pose.position));

  std::sort(hits.begin(), hits.end());
  const std::size_t first = out.size();
  Contact points[kMaxPairPoints];
  for (std::uint32_t id : hits) {
    const ColliderPrim& c = colliders[id];
    const BodyRecord& crec = bodies[c.body];
    if (!c.is_plane && !filters_match(rec, crec)) continue;  // planes were filtered already
    if (is_excluded(pair_key(b, c.body))) continue;
    const auto ncp = std::uint32_t(geometries[crec.geometry].prims.size());
    const auto nbp = std::uint32_t(body_prims.size());
    const std::uint32_t mask = local_mask(nbp * ncp);
    const Mat3 crot_t = c.pose.orientation.toRotationMatrix().transpose();
    for (std::uint32_t bp = 0; bp < nbp; ++bp) {
      const Placed& placed = body_prims[bp];
      const Vec3 center = placed.bound_center();
      const double reach = placed.prim->bound_radius + margin;
      if (c.is_plane) {
        if (c.placed.rotation.col(2).dot(center - c.placed.translation) >= reach) continue;
      } else if (!sphere_hits_box(center, reach, c.lower, c.upper)) {
        continue;
      }
      ++stats.primitive_pairs;
      const int n = collide(placed, c.placed, margin, narrow, points);
      const std::size_t pair_first = out.size();
      for (int k = 0; k < n; ++k) {
        const Contact& p = points[k];
        ContactPoint cp;
        cp.body = b;
        cp.collider = c.body;
        cp.p_body = rot.transpose() * (p.p_body - pose.position);
        cp.p_collider = crot_t * (p.p_collider - c.pose.position);
        cp.normal = p.normal;
        cp.gap = p.gap;
        cp.body_radius = p.body_radius;
        cp.collider_radius = p.collider_radius;
        cp.feature = encode_feature(p.feature, bp * ncp + c.prim, mask);
        // Keep features unique within the pair should the masking have merged two.
        for (std::size_t j = pair_first; j < out.size(); ++j) {
          if (out[j].feature == cp.feature) {
            cp.feature = encode_feature(cp.feature + 1, bp * ncp + c.prim, mask);
            j = pair_first - 1;
          }
        }
        out.push_back(cp);
      }
    }
  }
  std::sort(out.begin() + std::ptrdiff_t(first), out.end(),
            [](const ContactPoint& x, const ContactPoint& y) {
              return x.collider != y.collider ? x.collider < y.collider : x.feature < y.feature;
            });
}

CollisionWorld::CollisionWorld() : impl_(std::make_unique<Impl>()) {}
CollisionWorld::~CollisionWorld() = default;
CollisionWorld::CollisionWorld(CollisionWorld&&) noexcept = default;
CollisionWorld& CollisionWorld::operator=(CollisionWorld&&) noexcept = default;

CollisionWorld::CollisionWorld(const CollisionWorld& other) : impl_(std::make_unique<Impl>()) {
  const Impl& o = *other.impl_;
  Impl& m = *impl_;
  m.bodies = o.bodies;
  m.geometries = o.geometries;
  m.geometry_ids = o.geometry_ids;
  m.colliders = o.colliders;
  for (ColliderPrim& c : m.colliders) c.placed_once = false;  // into the new tree, next detect
  m.planes = o.planes;
  m.excluded = o.excluded;
  m.excluded_sorted = o.excluded_sorted;
  m.colliding = o.colliding;
  m.stats = o.stats;
  m.active = o.active;
  m.active_dirty = o.active_dirty;
}

void CollisionWorld::add_body(std::uint32_t index, const CollisionGeometry& geometry) {
  Impl& m = *impl_;
  if (index != m.bodies.size()) {
    throw InvalidArgument("collision body " + std::to_string(index) +
                          ": bodies must be added in order (expected index " +
                          std::to_string(m.bodies.size()) + ")");
  }
  BodyRecord rec;
  rec.kind = geometry.kind;
  rec.group = geometry.group;
  rec.mask = geometry.mask;
  if (!geometry.primitives.empty()) {
    const std::string key = geometry_key(geometry);
    auto it = m.geometry_ids.find(key);
    if (it == m.geometry_ids.end()) {
      Geometry geo;
      Vec3 lower = Vec3::Constant(std::numeric_limits<double>::infinity());
      Vec3 upper = -lower;
      for (std::size_t k = 0; k < geometry.primitives.size(); ++k) {
        const std::string where =
            "collision body " + std::to_string(index) + " primitive " + std::to_string(k);
        geo.prims.push_back(make_primitive(geometry.primitives[k], geometry.kind, where));
        const Primitive& p = geo.prims.back();
        if (p.type == ShapeType::Plane) continue;
        const Vec3 c = p.rotation * p.bound_center + p.translation;
        lower = lower.cwiseMin(c - Vec3::Constant(p.bound_radius));
        upper = upper.cwiseMax(c + Vec3::Constant(p.bound_radius));
      }
      if (lower.x() <= upper.x()) {
        geo.center = 0.5 * (lower + upper);
        for (const Primitive& p : geo.prims) {
          if (p.type == ShapeType::Plane) continue;
          const Vec3 c = p.rotation * p.bound_center + p.translation;
          geo.radius = std::max(geo.radius, (c - geo.center).norm() + p.bound_radius);
        }
      }
      geo.centered = geo.center.isZero(0);
      it = m.geometry_ids.emplace(key, std::uint32_t(m.geometries.size())).first;
      m.geometries.push_back(std::move(geo));
    }
    rec.geometry = it->second;
    ++m.colliding;
    if (rec.kind != BodyKind::Dynamic) {
      const auto& prims = m.geometries[rec.geometry].prims;
      for (std::uint32_t k = 0; k < prims.size(); ++k) {
        ColliderPrim c;
        c.body = index;
        c.prim = k;
        c.is_plane = prims[k].type == ShapeType::Plane;
        if (c.is_plane) m.planes.push_back(std::uint32_t(m.colliders.size()));
        m.colliders.push_back(c);
      }
    }
  }
  m.bodies.push_back(rec);
  m.active_dirty = true;
  m.dynamic_dirty = true;
}

void CollisionWorld::reserve(std::size_t bodies, std::size_t excluded_pairs) {
  impl_->bodies.reserve(bodies);
  impl_->excluded.reserve(excluded_pairs);
}

void CollisionWorld::exclude_pair(std::uint32_t a, std::uint32_t b) {
  impl_->excluded.push_back(pair_key(a, b));
  impl_->excluded_sorted = false;
}

std::size_t CollisionWorld::colliding_bodies() const { return impl_->colliding; }

std::size_t CollisionWorld::pair_candidates() const { return impl_->pair_candidates; }

void CollisionWorld::detect_pairs(const std::vector<Pose>& poses, double margin,
                                  std::vector<ContactPoint>& out,
                                  const std::function<bool(std::uint32_t, std::uint32_t)>& accept) {
  Impl& m = *impl_;
  m.settle_excluded();
  out.clear();
  m.pair_candidates = 0;
  if (poses.size() != m.bodies.size()) {
    throw InvalidArgument("collision detect_pairs: " + std::to_string(poses.size()) +
                          " poses given for " + std::to_string(m.bodies.size()) + " bodies");
  }
  if (!(margin >= 0) || !std::isfinite(margin)) {
    throw InvalidArgument("collision detect_pairs: margin must be >= 0 and finite");
  }
  if (m.dynamic_dirty) {
    m.dynamic_bodies.clear();
    for (std::uint32_t i = 0; i < m.bodies.size(); ++i) {
      if (m.bodies[i].kind == BodyKind::Dynamic && m.bodies[i].geometry != kNone) {
        m.dynamic_bodies.push_back(i);
      }
    }
    m.dynamic_dirty = false;
  }
  if (m.dynamic_bodies.size() < 2) return;
  // Bounding spheres swollen by half the margin: two boxes overlap when the bodies may be
  // closer than the margin.
  auto sphere = [&](std::uint32_t b, Vec3& center) {
    const Geometry& geo = m.geometries[m.bodies[b].geometry];
    const Pose& pose = poses[b];
    center = geo.centered ? pose.position : Vec3(pose.position + pose.orientation * geo.center);
    return geo.radius + 0.5 * margin;
  };
  // The tree holds boxes fattened by a fifth of each body's radius, moved only when a body
  // leaves its box (a query then tests the tight box against the fat ones).
  m.dynamic_fat.resize(m.bodies.size() * 2, Vec3::Zero());
  if (m.dynamic_fresh.size() != m.bodies.size()) m.dynamic_fresh.assign(m.bodies.size(), 1);
  for (std::uint32_t b : m.dynamic_bodies) {
    Vec3 c;
    const double r = sphere(b, c);
    Vec3& lo = m.dynamic_fat[2 * b];
    Vec3& hi = m.dynamic_fat[2 * b + 1];
    const Vec3 tight_lo = c - Vec3::Constant(r), tight_hi = c + Vec3::Constant(r);
    if (m.dynamic_fresh[b] || (tight_lo.array() < lo.array()).any() ||
        (tight_hi.array() > hi.array()).any()) {
      const double fat = 0.2 * m.geometries[m.bodies[b].geometry].radius;
      lo = tight_lo - Vec3::Constant(fat);
      hi = tight_hi + Vec3::Constant(fat);
      m.dynamic_tree.set(b, lo, hi);
      m.dynamic_fresh[b] = 0;
    }
  }
  Contact points[kMaxPairPoints];
  m.pair_list.clear();
  m.dynamic_tree.overlapping_pairs(m.pair_list);
  // The caller's rules and the filters first (most overlapping boxes are neighbours in a
  // chain or net), then the bounding spheres; the survivors in order.
  std::size_t kept = 0;
  for (auto [a, b] : m.pair_list) {
    if (a > b) std::swap(a, b);
    if (a == b || (accept && !accept(a, b))) continue;
    if (!filters_match(m.bodies[a], m.bodies[b])) continue;
    if (m.is_excluded(pair_key(a, b))) continue;
    Vec3 ca, cb;
    const double ra = sphere(a, ca), rb = sphere(b, cb);
    if ((ca - cb).norm() >= ra + rb) continue;
    m.pair_list[kept++] = {a, b};
  }
  m.pair_list.resize(kept);
  std::sort(m.pair_list.begin(), m.pair_list.end());
  std::uint32_t placed = kNone;  // the body whose primitives body_prims holds
  for (const auto& [a, b] : m.pair_list) {
    const BodyRecord& rec_a = m.bodies[a];
    const BodyRecord& rec_b = m.bodies[b];
    ++m.pair_candidates;
    {
      if (placed != a) {
        const Mat3 rot = poses[a].orientation.toRotationMatrix();
        m.body_prims.clear();
        for (const Primitive& p : m.geometries[rec_a.geometry].prims) {
          m.body_prims.push_back(place(p, rot, poses[a].position));
        }
        placed = a;
      }
      const Mat3 rot_b = poses[b].orientation.toRotationMatrix();
      m.other_prims.clear();
      for (const Primitive& p : m.geometries[rec_b.geometry].prims) {
        m.other_prims.push_back(place(p, rot_b, poses[b].position));
      }
      const auto nap = std::uint32_t(m.body_prims.size());
      const auto nbp = std::uint32_t(m.other_prims.size());
      const std::uint32_t mask = local_mask(nap * nbp);
      const Mat3 rot_a_t = poses[a].orientation.toRotationMatrix().transpose();
      const std::size_t pair_first = out.size();
      for (std::uint32_t pa = 0; pa < nap; ++pa) {
        const Placed& xa = m.body_prims[pa];
        for (std::uint32_t pb = 0; pb < nbp; ++pb) {
          const Placed& xb = m.other_prims[pb];
          const double reach = xa.prim->bound_radius + xb.prim->bound_radius + margin;
          if ((xa.bound_center() - xb.bound_center()).squaredNorm() >= reach * reach) continue;
          ++m.stats.primitive_pairs;
          const auto round = [](const Placed& x) {
            return x.prim->type == ShapeType::Sphere || x.prim->type == ShapeType::Capsule;
          };
          const int n = round(xa) || round(xb)
                            ? collide_convex(xa, xb, margin, m.narrow, points)
                            : collide_polytopes(xa, xb, margin, m.narrow, points);
          for (int k = 0; k < n; ++k) {
            const Contact& p = points[k];
            ContactPoint cp;
            cp.body = a;
            cp.collider = b;
            cp.p_body = rot_a_t * (p.p_body - poses[a].position);
            cp.p_collider = rot_b.transpose() * (p.p_collider - poses[b].position);
            cp.normal = p.normal;
            cp.gap = p.gap;
            cp.body_radius = p.body_radius;
            cp.collider_radius = p.collider_radius;
            cp.feature = encode_feature(p.feature, pa * nbp + pb, mask);
            for (std::size_t j = pair_first; j < out.size(); ++j) {
              if (out[j].feature == cp.feature) {
                cp.feature = encode_feature(cp.feature + 1, pa * nbp + pb, mask);
                j = pair_first - 1;
              }
            }
            out.push_back(cp);
          }
        }
      }
      std::sort(out.begin() + std::ptrdiff_t(pair_first), out.end(),
                [](const ContactPoint& x, const ContactPoint& y) { return x.feature < y.feature; });
    }
  }
}

const DetectStats& CollisionWorld::stats() const { return impl_->stats; }

void CollisionWorld::detect(const std::vector<Pose>& poses, double margin,
                            std::vector<ContactPoint>& out) {
  Impl& m = *impl_;
  m.settle_excluded();
  out.clear();
  m.stats = DetectStats();
  if (poses.size() != m.bodies.size()) {
    throw InvalidArgument("collision detect: " + std::to_string(poses.size()) +
                          " poses given for " + std::to_string(m.bodies.size()) + " bodies");
  }
  if (!(margin >= 0) || !std::isfinite(margin)) {
    throw InvalidArgument("collision detect: margin must be >= 0 and finite");
  }
  if (m.active_dirty) m.rebuild_active();
  if (m.active.empty()) return;
  m.update_colliders(poses);

  const bool has_tree = !m.tree.empty();
  Vec3 tree_lower = Vec3::Zero(), tree_upper = Vec3::Zero();
  if (has_tree) m.tree.bounds(tree_lower, tree_upper);
  for (std::uint32_t b : m.active) {
    const BodyRecord& rec = m.bodies[b];
    const Geometry& geo = m.geometries[rec.geometry];
    const Pose& pose = poses[b];
    const Vec3 center =
        geo.centered ? pose.position : Vec3(pose.position + pose.orientation * geo.center);
    const double reach = geo.radius + margin;
    m.hits.clear();
    for (std::size_t k = 0; k < m.planes.size(); ++k) {
      const Eigen::Vector4d& e = m.plane_equations[k];
      if (e.head<3>().dot(center) - e[3] < reach &&
          filters_match(rec, m.bodies[m.colliders[m.planes[k]].body])) {
        m.hits.push_back(m.planes[k]);
      }
    }
    if (has_tree && sphere_hits_box(center, reach, tree_lower, tree_upper)) {
      const Vec3 half = Vec3::Constant(reach);
      m.tree.query(center - half, center + half, m.hits);
    }
    m.stats.broad_hits += m.hits.size();
    if (!m.hits.empty()) m.collide_body(b, pose, margin, out);
  }
  m.stats.bodies_tested = m.active.size();
  m.stats.points = out.size();
}

void CollisionWorld::detect_points(const std::vector<Pose>& poses, const std::vector<Vec3>& points,
                                   double margin, const std::function<bool(std::uint32_t)>& skip,
                                   std::vector<PointContact>& out) {
  Impl& m = *impl_;
  out.clear();
  if (poses.size() != m.bodies.size()) {
    throw InvalidArgument("collision detect_points: " + std::to_string(poses.size()) +
                          " poses given for " + std::to_string(m.bodies.size()) + " bodies");
  }
  if (points.empty()) return;
  Vec3 lower = points[0], upper = points[0];
  for (const Vec3& x : points) {
    lower = lower.cwiseMin(x);
    upper = upper.cwiseMax(x);
  }
  lower.array() -= margin;
  upper.array() += margin;
  // Each point is a sphere of radius 0 (a point) against the body's primitives.
  Primitive dot;
  dot.type = ShapeType::Sphere;
  Contact found[kMaxPairPoints];
  auto test = [&](std::uint32_t b, const Pose& pose, const Placed& prim) {
    Vec3 lo, hi;
    const bool plane = prim.prim->type == ShapeType::Plane;
    if (!plane) {
      world_aabb(prim, lo, hi);
      lo.array() -= margin;
      hi.array() += margin;
    }
    const Mat3 rot_t = pose.orientation.toRotationMatrix().transpose();
    for (std::uint32_t i = 0; i < points.size(); ++i) {
      const Vec3& x = points[i];
      if (plane) {
        if (prim.rotation.col(2).dot(x - prim.translation) >= margin) continue;
      } else if ((x.array() < lo.array()).any() || (x.array() > hi.array()).any()) {
        continue;
      }
      Placed p;
      p.prim = &dot;
      p.translation = x;
      const int n = collide(p, prim, margin, m.narrow, found);
      for (int k = 0; k < std::min(n, 1); ++k) {
        PointContact c;
        c.point = i;
        c.body = b;
        c.p_body = rot_t * (found[k].p_collider - pose.position);
        c.normal = found[k].normal;
        c.gap = found[k].gap;
        c.radius = found[k].collider_radius;
        out.push_back(c);
      }
    }
  };
  m.for_each_placed(poses, skip, [&](std::uint32_t b, std::size_t, const Mat3&,
                                      const Placed& placed) {
    const Primitive& prim = *placed.prim;
    // Bounding sphere against the points' box.
    if (prim.type != ShapeType::Plane &&
        !sphere_hits_box(placed.bound_center(), prim.bound_radius + margin, lower, upper)) {
      return;
    }
    test(b, poses[b], placed);
  });
  std::sort(out.begin(), out.end(), [](const PointContact& x, const PointContact& y) {
    return x.point != y.point ? x.point < y.point : x.body < y.body;
  });
}

void CollisionWorld::detect_triangles(const std::vector<Pose>& poses,
                                      const std::vector<Vec3>& vertices,
                                      const std::vector<std::array<int, 3>>& triangles,
                                      const std::vector<Vec3>& outward, double margin,
                                      const std::function<bool(std::uint32_t)>& skip,
                                      std::vector<TriangleContact>& out) {
  Impl& m = *impl_;
  out.clear();
  if (poses.size() != m.bodies.size() || outward.size() != triangles.size()) {
    throw InvalidArgument("collision detect_triangles: " + std::to_string(poses.size()) +
                          " poses for " + std::to_string(m.bodies.size()) + " bodies, " +
                          std::to_string(outward.size()) + " normals for " +
                          std::to_string(triangles.size()) + " triangles");
  }
  if (triangles.empty()) return;
  // Each triangle's box, and the box of them all, grown by the margin.
  std::vector<Vec3> lo(triangles.size()), hi(triangles.size());
  Vec3 lower = Vec3::Constant(INFINITY), upper = Vec3::Constant(-INFINITY);
  for (std::size_t t = 0; t < triangles.size(); ++t) {
    lo[t] = hi[t] = vertices[triangles[t][0]];
    for (int k = 1; k < 3; ++k) {
      lo[t] = lo[t].cwiseMin(vertices[triangles[t][k]]);
      hi[t] = hi[t].cwiseMax(vertices[triangles[t][k]]);
    }
    lo[t].array() -= margin;
    hi[t].array() += margin;
    lower = lower.cwiseMin(lo[t]);
    upper = upper.cwiseMax(hi[t]);
  }
  // An edge's point is found from both its triangles: the first keeps it.
  std::set<std::array<std::uint64_t, 2>> edges;
  m.for_each_placed(poses, skip, [&](std::uint32_t b, std::size_t pi, const Mat3& rot,
                                      const Placed& placed) {
    const Primitive& prim = *placed.prim;
    const Pose& pose = poses[b];
    if (prim.type != ShapeType::Sphere && prim.type != ShapeType::Capsule) return;
    if (!sphere_hits_box(placed.bound_center(), prim.bound_radius, lower, upper)) return;
    Vec3 plo, phi;
    world_aabb(placed, plo, phi);
    for (std::uint32_t t = 0; t < triangles.size(); ++t) {
      if ((phi.array() < lo[t].array()).any() || (plo.array() > hi[t].array()).any()) continue;
      const std::array<int, 3>& tri = triangles[t];
      TriangleContact c;
      Vec3 p_world;
      if (!primitive_triangle(placed, vertices[tri[0]], vertices[tri[1]], vertices[tri[2]],
                              outward[t], margin, c, p_world)) {
        continue;
      }
      bool kept = true;
      for (int k = 0; k < 3 && kept; ++k) {
        if (c.weights[k] != 0) continue;  // on the edge opposite corner k
        int u = tri[(k + 1) % 3], v = tri[(k + 2) % 3];
        if (u > v) std::swap(u, v);
        const std::uint64_t edge = (static_cast<std::uint64_t>(u) << 32) | std::uint32_t(v);
        kept = edges.insert({edge, (std::uint64_t{b} << 16) | pi}).second;
      }
      if (!kept) continue;
      c.triangle = t;
      c.body = b;
      c.p_body = rot.transpose() * (p_world - pose.position);
      const double hl = prim.type == ShapeType::Capsule ? prim.half_length : 0.0;
      c.core0 = rot.transpose() * (placed.to_world(Vec3(0, 0, -hl)) - pose.position);
      c.core1 = rot.transpose() * (placed.to_world(Vec3(0, 0, hl)) - pose.position);
      out.push_back(c);
    }
  });
  std::sort(out.begin(), out.end(), [](const TriangleContact& x, const TriangleContact& y) {
    return x.triangle != y.triangle ? x.triangle < y.triangle : x.body < y.body;
  });
}

}  // namespace mabd::detail
