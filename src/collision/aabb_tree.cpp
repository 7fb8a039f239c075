// AabbTree on Bullet's dynamic bounding volume tree (double precision build).
#include "collision/aabb_tree.h"

#include <BulletCollision/BroadphaseCollision/btDbvt.h>

#include <cstdint>

namespace mabd::detail {
namespace {

btVector3 bt(const Vec3& v) { return btVector3(v.x(), v.y(), v.z()); }

/// Collects leaf ids (stored in the leaf's data pointer) into a vector.
struct Collector : btDbvt::ICollide {
  std::vector<std::uint32_t>* hits = nullptr;
  void Process(const btDbvtNode* leaf) override {
    hits->push_back(std::uint32_t(reinterpret_cast<std::uintptr_t>(leaf->data)));
  }
};

/// Collects pairs of leaf ids.
struct PairCollector : btDbvt::ICollide {
  std::vector<std::pair<std::uint32_t, std::uint32_t>>* out = nullptr;
  void Process(const btDbvtNode* a, const btDbvtNode* b) override {
    out->emplace_back(std::uint32_t(reinterpret_cast<std::uintptr_t>(a->data)),
                      std::uint32_t(reinterpret_cast<std::uintptr_t>(b->data)));
  }
};

}  // namespace

struct AabbTree::Impl {
  btDbvt tree;
  std::vector<btDbvtNode*> leaves;  // by id; nullptr when absent
  mutable btNodeStack stack;        // traversal stack reused by queries
};

AabbTree::AabbTree() : impl_(std::make_unique<Impl>()) {}
AabbTree::~AabbTree() = default;

void AabbTree::set(std::uint32_t id, const Vec3& lower, const Vec3& upper) {
  btDbvtVolume volume = btDbvtVolume::FromMM(bt(lower), bt(upper));
  if (id >= impl_->leaves.size()) impl_->leaves.resize(id + 1, nullptr);
  btDbvtNode*& leaf = impl_->leaves[id];
  if (leaf == nullptr) {
    leaf = impl_->tree.insert(volume, reinterpret_cast<void*>(std::uintptr_t(id)));
  } else {
    impl_->tree.update(leaf, volume);
  }
}

bool AabbTree::empty() const { return impl_->tree.empty(); }

void AabbTree::bounds(Vec3& lower, Vec3& upper) const {
  const btDbvtNode* root = impl_->tree.m_root;
  if (root == nullptr) return;
  const btVector3& lo = root->volume.Mins();
  const btVector3& hi = root->volume.Maxs();
  lower = Vec3(lo.x(), lo.y(), lo.z());
  upper = Vec3(hi.x(), hi.y(), hi.z());
}

void AabbTree::query(const Vec3& lower, const Vec3& upper, std::vector<std::uint32_t>& hits) const {
  const btDbvtNode* root = impl_->tree.m_root;
  if (root == nullptr) return;
  const btDbvtVolume volume = btDbvtVolume::FromMM(bt(lower), bt(upper));
  if (!Intersect(root->volume, volume)) return;  // the common far-away case: one box test
  Collector collector;
  collector.hits = &hits;
  impl_->tree.collideTVNoStackAlloc(root, volume, impl_->stack, collector);
}

void AabbTree::overlapping_pairs(std::vector<std::pair<std::uint32_t, std::uint32_t>>& out) {
  const btDbvtNode* root = impl_->tree.m_root;
  if (root == nullptr) return;
  PairCollector collector;
  collector.out = &out;
  impl_->tree.collideTT(root, root, collector);
}

}  // namespace mabd::detail
