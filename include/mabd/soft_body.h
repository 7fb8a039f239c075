// Soft bodies: tetrahedral finite-element solids (stable Neo-Hookean) stepped with the affine
// bodies in one implicit step, their nodes attached to body points by linear constraint rows.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "mabd/body.h"
#include "mabd/ids.h"
#include "mabd/math.h"

namespace mabd {

/// A node of a soft body held at a point of a body. The point is where the node is when the
/// soft body is added (its rest position), carried by the body from then on. On a dynamic
/// body it is a three-row constraint x_node = x_body(p) solved with the joints (forces act on
/// both); on a static or kinematic body, or the world (an invalid BodyId), the node is pinned
/// and follows the point.
struct SoftAttachment {
  int node = 0;   ///< node index in SoftBodyDef::nodes
  BodyId body;    ///< the body; invalid: the world
};

/// A tetrahedral soft body. Backward Euler over its node positions in the world's time step,
/// whatever the world's time integration (an implicit, dissipative scheme; the affine bodies
/// keep theirs); lumped mass, one Newton iteration per iteration of the world's Newton loop.
/// With soft bodies the loop goes on until their largest node increment is within
/// WorldSettings::tolerance (m), up to 30 iterations a step, whatever newton_iterations says:
/// a single linearised iteration of a nonlinear solid can gain energy.
/// Contact (WorldSettings::contact, when its model is not None): the nodes on the mesh's
/// boundary against every colliding body (static, kinematic or dynamic) but the ones the soft
/// body is attached to, and (face_contacts) its boundary faces against spheres and capsules,
/// found at the step's start; each is a contact point (normal row and two friction rows, exact
/// or penalty as the settings say) solved with the attachments in one complementarity problem
/// over the joints and the solid's compliance. Soft bodies do not collide with each other or
/// with themselves.
struct SoftBodyDef {
  std::string name;                       ///< unique among soft bodies; may be empty
  std::vector<Vec3> nodes;                ///< rest positions, world frame at time 0 (m)
  std::vector<std::array<int, 4>> tets;   ///< node indices, any orientation
  /// density (kg/m^3), Young's modulus (Pa), Poisson ratio, and the friction coefficient of
  /// its contacts (combined with the other body's as for bodies: geometric mean).
  Material material{1000.0, 1e6, 0.3, 0.5};
  Vec3 linear_velocity = Vec3::Zero();    ///< initial velocity of every node (m/s)
  /// Boundary faces touch spheres and capsules at their points between the nodes (a round
  /// body thinner than the node spacing would pass between nodes). Off: nodes only, which is
  /// enough where every round body is thicker than half the surface's node spacing.
  bool face_contacts = true;
  std::vector<SoftAttachment> attachments;  ///< one per node at most
};

/// What a soft body is doing (World::soft_body_state), world frame.
struct SoftBodyState {
  std::vector<Vec3> positions;   ///< node positions (m)
  std::vector<Vec3> velocities;  ///< node velocities (m/s)
};

}  // namespace mabd
