// The World: a validated model (bodies, shared factorisations) plus its mutable state.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "mabd/body.h"
#include "mabd/ids.h"
#include "mabd/joint.h"
#include "mabd/math.h"
#include "mabd/settings.h"
#include "mabd/soft_body.h"

namespace mabd {

/// What the last step did.
struct StepStats {
  int newton_iterations = 0;  ///< Newton iterations taken
  /// Largest point displacement (m) of the last Newton increment over all bodies: how far
  /// the step was from converged when it stopped.
  double residual = 0;
  double wall_ms = 0;         ///< wall-clock time of the step (ms)
  /// Largest joint constraint violation |C(q)|_inf after the step (m; angular rows are
  /// scaled by the joint's length scale). 0 without joints.
  double joint_residual = 0;
  /// Dual solver used in the last Newton iteration: "chain", "tree", "sparse", "iterative",
  /// "tree+sparse" (Auto: trees and graphs side by side), or "none" without joints.
  const char* solver = "none";
  /// Iterative dual solver: iterations and relative residual |b - S lambda| / |b| of the
  /// last solve (0 for the direct solvers).
  int dual_iterations = 0;
  double dual_residual = 0;
  /// Active contact points at the end of the step: bodies' points and soft bodies' surface
  /// nodes that push (World::contacts() lists them).
  int contacts = 0;
  /// Largest penetration (m) of an active contact at the end of the step (0 without).
  double max_penetration = 0;
  /// Wall-clock time (ms) of the step's phases, which add up to about wall_ms (but for the
  /// trial steps of a first generalized-alpha step with joints): collision detection; the
  /// prediction (inertial target, first iterate, kinematic bodies); the Newton iterations'
  /// body operators (rotations, right-hand sides, contact updates, the position update),
  /// constraint rows (built by their sources, with their right-hand sides) and dual solves
  /// (the solver and the active-set loop); the convergence and state checks, with the joint
  /// projection that closes what the Newton loop left open (README, method notes); the finish
  /// (velocities, limit impacts, joint state and wrenches).
  double detect_ms = 0, predict_ms = 0, body_ms = 0, rows_ms = 0, dual_ms = 0, check_ms = 0,
         finish_ms = 0;
  /// Wall-clock time (ms) of the contact solve between dynamic bodies (their rows' responses
  /// through the joint solve, the complementarity problem and the increment), a phase of its
  /// own beside the ones above.
  double contact_ms = 0;
  /// Contact between dynamic bodies in the last Newton iteration: pushing points, and
  /// Gauss-Seidel sweeps and active-set solves of the complementarity problem.
  int body_contacts = 0, contact_sweeps = 0, contact_pivots = 0;
  /// Wall-clock time (ms) of the soft bodies' Newton iterations (assembly, factorisation,
  /// attachment rows), a phase of its own beside the ones above.
  double soft_ms = 0;
  /// Largest attachment violation |x_node - x_body(p)| (m) over all soft bodies after the
  /// step (0 without attachments to dynamic bodies).
  double attachment_residual = 0;
};

/// A joint's anchor and axis at the current configuration (World::joint_frame), world frame.
struct JointFrame {
  Vec3 anchor = Vec3::Zero();  ///< m
  Vec3 axis = Vec3::Zero();    ///< unit, or zero when the joint has no axis
};

/// One contact point between a dynamic body and a collider after a step (world frame, SI).
struct ContactInfo {
  BodyId body;                   ///< the dynamic body (invalid for a soft body's node)
  /// The body it touches: a static or kinematic body, or another dynamic body (then
  /// collider.index > body.index and the force on it is the opposite of `force`).
  BodyId collider;
  Vec3 point = Vec3::Zero();     ///< contact point on the body (m)
  Vec3 normal = Vec3::UnitZ();   ///< unit normal from the collider towards the body
  double depth = 0;              ///< penetration (m), > 0 when overlapping
  Vec3 force = Vec3::Zero();     ///< force the collider applied to the body (N), normal + friction
  bool sliding = false;          ///< friction at the cone's limit (the point slides)
  /// A soft body's surface node touching `collider` (a body of any kind): the soft body and
  /// the node's index (body is then invalid, point is the node). Invalid and -1 otherwise.
  SoftBodyId soft_body;
  int node = -1;
};

/// One connected component of the joint graph (paper "Case I" to "Case IV").
struct ComponentSummary {
  std::string kind;         ///< "single body", "chain", "tree", "tree with loops" or "graph"
  std::size_t bodies = 0;   ///< dynamic bodies
  std::size_t joints = 0;
  std::size_t rows = 0;     ///< constraint rows of those joints
  std::size_t loops = 0;    ///< independent cycles (joints to the world count)
  /// Dual solver of the component under the world's settings: "chain", "tree", "sparse",
  /// "iterative", or "none" (a body without joints).
  std::string solver;
};

/// Read-only facts about a body, fixed at creation.
struct BodyInfo {
  std::string name;
  BodyKind kind = BodyKind::Dynamic;
  double mass = 0;               ///< kg
  double volume = 0;             ///< m^3
  Vec3 principal_inertia = Vec3::Zero();  ///< principal moments of inertia (kg m^2)
  double size = 0;               ///< bounding radius about the COM (m)
};

/// A snapshot of everything the next step of a World reads (World::save_state): positions,
/// velocities and the integrator's accelerations, the time and step counter, pending loads
/// and kinematic targets, the joints' carried coordinates, drives, limits and springs, the
/// multipliers that warm-start the iterative dual solver, the joint-loop guard, the contacts
/// of the last step (friction anchors, active sets, multipliers) and the last step's
/// statistics. Not the model: a state restores only into a world of the same model.
struct WorldState {
  /// Little-endian encoding (docs/output-formats.md, "World state"); opaque to callers.
  std::vector<std::uint8_t> data;
};

class World {
 public:
  /// Throws InvalidArgument on bad settings.
  explicit World(const WorldSettings& settings);
  ~World();
  World(World&&) noexcept;
  World& operator=(World&&) noexcept;
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  /// Reserves storage for this many bodies and joints in all (an optimisation for building
  /// large worlds: no reallocation while adding them).
  void reserve(std::size_t bodies, std::size_t joints);

  /// Validates `def` and adds the body. Throws InvalidArgument naming the body and field.
  BodyId add_body(const BodyDef& def);

  /// Validates `def` (existing bodies, non-zero axes, ...) and adds the joint. Throws
  /// InvalidArgument naming the joint and the problem. The anchor and axes are world
  /// quantities at the bodies' current configuration.
  JointId add_joint(const JointDef& def);

  /// Advances the state by settings().dt. Throws SimulationError (naming step, body and
  /// quantity) if the state would become non-finite or diverge; the state is then left at
  /// the last valid step.
  void step();

  const WorldSettings& settings() const;
  const StepStats& last_step() const;
  double time() const;             ///< simulated time (s)
  std::int64_t step_count() const;
  std::size_t body_count() const;
  std::size_t joint_count() const;
  /// Total number of constraint rows of all joints (without active limits and drives).
  std::size_t constraint_rows() const;
  const std::string& joint_name(JointId id) const;
  std::optional<JointId> find_joint(const std::string& name) const;
  /// Connected components of the joint graph and their classification. Static and
  /// kinematic bodies and the world form one ground node.
  std::vector<ComponentSummary> topology() const;
  /// Non-fatal remarks collected while building (e.g. an anchor far outside both bodies).
  const std::vector<std::string>& warnings() const;
  /// The body's name, kind, mass, volume, inertia and size (a copy).
  BodyInfo body_info(BodyId id) const;
  std::optional<BodyId> find_body(const std::string& name) const;

  // ---- Inputs ----------------------------------------------------------------------------
  /// Adds a wrench for the next step only: `force` (N, world) through the centre of mass and
  /// `torque` (N m, world). Dynamic bodies only.
  void apply_wrench(BodyId id, const Vec3& force, const Vec3& torque);
  /// Adds a force (N, world) at a world point (m) for the next step only.
  void apply_force_at(BodyId id, const Vec3& force, const Vec3& point);
  /// Kinematic bodies: the pose of the body frame at the end of the next step.
  void set_kinematic_target(BodyId id, const Pose& pose);

  // ---- Queries (world frame, SI) -----------------------------------------------------------
  /// Pose of the body's own (user) frame. The orientation is the polar rotation of A.
  Pose pose(BodyId id) const;
  Vec3 com_position(BodyId id) const;                ///< m
  Twist twist(BodyId id) const;                      ///< rad/s, m/s (paper Eq. G)
  Vec3 linear_momentum(BodyId id) const;             ///< kg m/s
  Vec3 angular_momentum(BodyId id) const;            ///< about the world origin, kg m^2/s
  double kinetic_energy(BodyId id) const;            ///< J (all 12 affine DOFs)
  double potential_energy(BodyId id) const;          ///< J: gravity (zero at origin) + elastic
  double elastic_energy(BodyId id) const;            ///< J
  double rigidity_deviation(BodyId id) const;        ///< |A^T A - I|_F, dimensionless
  Mat3 affine_matrix(BodyId id) const;               ///< A
  Vec12 coordinates(BodyId id) const;                ///< q = [a1; a2; a3; t]
  Vec12 velocities(BodyId id) const;                 ///< dq/dt
  /// q of every body in body-id order: body_count() consecutive Vec12 (12 doubles each), the
  /// storage coordinates() reads. step() updates it in place; add_body, reserve and
  /// restore_state may move it (then the pointer must be taken again).
  const Vec12* coordinates_data() const;
  /// dq/dt of every body, laid out and kept as coordinates_data().
  const Vec12* velocities_data() const;
  /// Sets q = [a1; a2; a3; t] (as coordinates() returns it, m) and dq/dt (m/s) of a dynamic
  /// body for the next step, in place (coordinates_data() stays valid). The integrator's
  /// accelerations, the joints' carried coordinates, pending loads and the last step's contacts
  /// are kept, and joints are not projected: give a configuration that satisfies them. Throws
  /// InvalidArgument for a static or kinematic body, a non-finite value or det(A) <= 0.
  void set_body_state(BodyId id, const Vec12& q, const Vec12& qdot);

  // Totals over all bodies, soft bodies included.
  Vec3 linear_momentum() const;
  Vec3 angular_momentum() const;
  double kinetic_energy() const;
  /// J: the bodies' potential_energy(id), the soft bodies' gravity and elastic energy,
  /// joint_energy() and contact_energy().
  double potential_energy() const;
  /// J: the energy stored in the joints: springs (1/2 k (theta - rest)^2 on a hinge or
  /// prismatic coordinate, 1/2 k |bend|^2 on a ball joint) and compliant joints
  /// (1/2 C^2 / compliance over their rows). Drives and limits store none.
  double joint_energy() const;
  /// J: the energy stored in the penalty contacts' springs now (0 for the exact model): the
  /// normal rows' 1/2 k d^2 at penetration depth d (m) and the friction rows' 1/2 k s^2 at
  /// their stretch s (m) from the anchor on the collider, with the stiffness k = m_eff / tau^2
  /// (N/m) of each row (ContactSettings::time_constant). Of the last step's contacts.
  double contact_energy() const;

  // Joints.
  /// Wrench the joint applied during the last step (see JointWrench).
  JointWrench joint_wrench(JointId id) const;
  /// |C(q)|_inf of the joint's rows now (m).
  double joint_residual(JointId id) const;
  /// Joint coordinate now: hinge angle (rad) or prismatic slide (m) relative to the initial
  /// configuration; 0 for other types.
  double joint_position(JointId id) const;
  /// Rate of joint_position (its exact time derivative at the current velocities): rad/s or
  /// m/s; 0 for other types.
  double joint_velocity(JointId id) const;
  /// Coordinates and rates of any joint type (see JointCoordinates for units and frames).
  JointCoordinates joint_coordinates(JointId id) const;
  /// Where the joint is now, world frame: its anchor on the second body (the first if the
  /// second is the world) (m), and its axis carried by the first body (unit; the world axis
  /// if the first body is the world; zero for ball and fixed joints without an axis). With
  /// the bodies' joint state, what inverse kinematics needs (include/mabd/robotics.h).
  JointFrame joint_frame(JointId id) const;
  /// The two bodies of the joint (an invalid id for the world).
  std::pair<BodyId, BodyId> joint_bodies(JointId id) const;
  /// The joint's type.
  JointType joint_type(JointId id) const;

  // Contact.
  /// Contacts of the last step (active points: pushing, or holding by friction).
  std::vector<ContactInfo> contacts() const;
  /// Bodies a and b never collide with each other (jointed pairs are excluded already).
  void exclude_collision(BodyId a, BodyId b);

  // Soft bodies (include/mabd/soft_body.h).
  /// Validates `def` and adds the soft body: at least one tet; node indices in range and
  /// distinct within a tet; finite positions; no degenerate tet (inverted ones are reoriented);
  /// every node in a tet; density > 0, Young's modulus > 0, Poisson ratio in (-1, 0.5);
  /// attachments on existing bodies, one per node. Throws InvalidArgument naming the soft
  /// body and the item.
  SoftBodyId add_soft_body(const SoftBodyDef& def);
  std::size_t soft_body_count() const;
  const std::string& soft_body_name(SoftBodyId id) const;
  std::optional<SoftBodyId> find_soft_body(const std::string& name) const;
  /// Node positions (m) and velocities (m/s) now, world frame.
  SoftBodyState soft_body_state(SoftBodyId id) const;
  /// Tets of the soft body (node indices, positively oriented: as the solver uses them).
  const std::vector<std::array<int, 4>>& soft_body_tets(SoftBodyId id) const;
  double soft_kinetic_energy(SoftBodyId id) const;    ///< J
  double soft_elastic_energy(SoftBodyId id) const;    ///< J, zero at the rest shape
  /// J: gravity (zero at the origin) + elastic.
  double soft_potential_energy(SoftBodyId id) const;
  Vec3 soft_linear_momentum(SoftBodyId id) const;     ///< kg m/s
  /// Largest |x_node - x_body(p)| (m) over the soft body's attachments to dynamic bodies now.
  double soft_attachment_residual(SoftBodyId id) const;

  /// Number of distinct factored system matrices Hb shared between bodies.
  std::size_t factor_count() const;

  // ---- State -------------------------------------------------------------------------------
  /// A deep copy: the same model and state (see restore_state for what stepping it gives).
  World clone() const;
  /// Snapshot of the state (see WorldState).
  WorldState save_state() const;
  /// Restores a snapshot taken from this world or from one built the same way (same bodies,
  /// joints, dt and time integration). Stepping on from it is bit-identical to stepping on
  /// from where it was taken, except with the iterative dual solver, whose preconditioner is
  /// rebuilt: there the results agree to settings.dual_tolerance. Throws InvalidArgument
  /// naming what does not match or is malformed; the world is then unchanged.
  void restore_state(const WorldState& state);

  // ---- Joint control (hinge and prismatic joints; from the next step on) --------------------
  /// Sets the target of the joint's drive: rad or m in position mode, rad/s or m/s in velocity
  /// mode. Throws InvalidArgument if the joint has no drive or the target is not finite.
  void set_drive_target(JointId id, double target);
  /// Sets the gains of the joint's drive: stiffness (N m/rad or N/m), damping (N m s/rad or
  /// N s/m), both finite and >= 0, and max_force (N m or N, > 0; INFINITY = unbounded).
  /// Throws InvalidArgument if the joint has no drive or a gain is invalid.
  void set_drive_gains(JointId id, double stiffness, double damping, double max_force = INFINITY);
  /// The joint's JointDef::effort_limit (N m or N; infinite when it has none).
  double joint_effort_limit(JointId id) const;
  /// Adds or replaces the joint's drive (std::nullopt removes it); validated as in add_joint.
  void set_drive(JointId id, const std::optional<JointDrive>& drive);
  /// Sets the range of the joint coordinate (rad or m; std::nullopt removes the limits).
  void set_joint_limits(JointId id, const std::optional<JointLimits>& limits);
  /// Sets the joint's spring-damper (std::nullopt removes it); validated as in add_joint. A
  /// ball joint added without a spring cannot take one later (its spring acts on directions
  /// recorded when it is added).
  void set_joint_spring(JointId id, const std::optional<JointSpring>& spring);
  /// The joint's drive, limits and spring as they are now.
  std::optional<JointDrive> joint_drive(JointId id) const;
  std::optional<JointLimits> joint_limits(JointId id) const;
  std::optional<JointSpring> joint_spring(JointId id) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Writes world.save_state() to `path` as a checkpoint file (docs/output-formats.md,
/// "Checkpoint files"): first to `path`.tmp, then renamed over `path`, so that `path` always
/// holds a complete checkpoint. Throws Error naming the file if it cannot be written.
void write_checkpoint(const World& world, const std::string& path);

/// Reads the checkpoint file `path` and restores it into `world`, which must be built from the
/// same scene. Throws InvalidArgument "PATH: what is wrong" for a missing, truncated or corrupt
/// file, a newer format version, or a checkpoint of another scene; the world is then unchanged.
void read_checkpoint(World& world, const std::string& path);

}  // namespace mabd
