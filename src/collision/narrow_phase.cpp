// Narrow-phase dispatch on the pair of primitive types.
#include "collision/narrow_phase.h"

namespace mabd::detail {

int collide(const Placed& body, const Placed& collider, double margin, NarrowScratch& scratch,
            Contact* out) {
  switch (collider.prim->type) {
    case ShapeType::Plane:
      return collide_plane(body, collider, margin, scratch, out);
    case ShapeType::Mesh:
      return collide_mesh(body, collider, margin, scratch, out);
    default:
      return collide_convex(body, collider, margin, scratch, out);
  }
}

}  // namespace mabd::detail
