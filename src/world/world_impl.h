// Internal state of a World: the compiled per-body model (constant after add_body) and the
// mutable state, stored as flat arrays indexed by BodyId::index.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "body/body_hessian.h"
#include "collision/collision_world.h"
#include "joints/joint_model.h"
#include "solvers/block_thomas.h"
#include "solvers/chol3.h"
#include "solvers/iterative_dual.h"
#include "solvers/sparse_dual.h"
#include "solvers/tree_plan.h"
#include "world/loop_guard.h"
#include "mabd/world.h"

namespace mabd {

namespace detail {

class ByteWriter;
class ByteReader;

/// Constant data of one body, in its body frame (COM origin, principal axes).
struct BodyModel {
  BodyInfo info;
  Vec3 sigma = Vec3::Zero();    ///< principal second moments (kg m^2)
  double mass = 0;              ///< kg
  double volume = 0;            ///< m^3
  double mu = 0, lambda = 0;    ///< Lame parameters (Pa)
  double k_vanilla = 0;         ///< vanilla orthogonality stiffness (J), = mu V / 4
  Mat3 R_up = Mat3::Identity(); ///< principal axes in the user frame (columns): user <- body
  Vec3 com_u = Vec3::Zero();    ///< COM in the user frame (m)
  Vec3 origin_b = Vec3::Zero(); ///< user-frame origin in body coordinates (m)
  double friction = 0;          ///< Coulomb coefficient of its material
  std::uint32_t factor = 0;     ///< index into the HessianCache (dynamic bodies)
  /// Prescribed motion of a kinematic body: a function of time, else a constant twist.
  struct Kinematics {
    MotionFunction motion;
    Vec3 w = Vec3::Zero(), v = Vec3::Zero();  ///< rad/s, m/s (world axes)
  };
  std::shared_ptr<const Kinematics> kinematics;  ///< kinematic bodies only

  bool dynamic() const { return info.kind == BodyKind::Dynamic; }
};

}  // namespace detail

struct World::Impl {
  WorldSettings settings;
  StepStats stats;
  double time = 0;
  std::int64_t steps = 0;

  // Model.
  std::vector<detail::BodyModel> bodies;
  std::unordered_map<std::string, std::uint32_t> by_name;
  detail::HessianCache factors;

  // State.
  std::vector<Vec12> q, qdot;
  std::vector<Vec12> acc;    ///< generalized-alpha pseudo-acceleration a
  std::vector<Vec12> qddot;  ///< acceleration d2q/dt2 at the end of the last step
  std::vector<Vec3> force, torque;                 ///< accumulated for the next step
  std::unordered_map<std::uint32_t, Pose> kin_target;  ///< kinematic targets for the next step

  /// Generalized-alpha parameters from the spectral radius rho (Chung-Hulbert).
  struct Alpha {
    double am = 0, af = 0, gamma = 1, beta = 1;
  };
  Alpha alpha() const {
    if (settings.time_integration == TimeIntegration::ImplicitEuler) return {};
    const double r = settings.spectral_radius;
    Alpha p;
    p.am = (2 * r - 1) / (r + 1);
    p.af = r / (r + 1);
    p.gamma = 0.5 + p.af - p.am;
    p.beta = 0.25 * (p.gamma + 0.5) * (p.gamma + 0.5);
    return p;
  }
  /// beta' h^2 (s^2): the step's effective inertia scale, Hb = M_A / (beta' h^2) + Kb.
  double beta_h2() const {
    const double h = settings.dt;
    if (settings.time_integration == TimeIntegration::ImplicitEuler) return h * h;
    const Alpha p = alpha();
    return (1 - p.af) * p.beta * h * h / (1 - p.am);
  }

  // Joints.
  std::vector<detail::JointModel> joints;
  std::unordered_map<std::string, std::uint32_t> joint_by_name;
  std::vector<std::string> warnings;
  detail::SparseDualSolver dual_solver;
  /// Warns once if the last sparse solve regularised redundant rows.
  void note_regularised();
  bool redundancy_reported = false;

  // Step scratch.
  // Displacements from q^n are kept apart from q to avoid cancellation in q - qhat.
  std::vector<Vec12> q_prev;
  Vec12 d_hat(std::size_t i) const;  ///< qhat - q^n of body i (m, in q units)
  std::vector<Vec12> u;      ///< q - q^n
  /// M_A^{-1} f_ext of the step (gravity included): gravity alone for unloaded bodies,
  /// loaded[i] >= 0 indexes loaded_minv_fext for the others.
  std::vector<std::int32_t> loaded;
  std::vector<Vec12> loaded_minv_fext;
  Vec12 minv_fext(std::size_t i) const {
    if (loaded[i] >= 0) return loaded_minv_fext[loaded[i]];
    Vec12 g = Vec12::Zero();
    g.tail<3>() = settings.gravity;
    return g;
  }

  // Per-iteration body operators: H_i^{-1} v = D(R) Hb^{-1} D(R)^T v (or Alg. 1, or the
  // vanilla dense inverse).
  std::vector<Mat3> rot;               ///< R (polar) or A (normalized) of each body
  std::vector<detail::Mat12> vanilla_inv;
  std::vector<Vec12> y;                ///< H^{-1} f of each body
  /// Geometric-stiffness correction of H^{-1} (Woodbury, rank 3 on rotations):
  /// H_true^{-1} v = H^{-1} v - Z C Z^T v for the bodies that need one; geo[i] is the index of
  /// body i's term in geo_C, or -1. Co-rotated polar bodies (geo_body_frame()): the rotation
  /// directions are E(R), Z = H^{-1} E(R) = D(R) Z0 R^T with the factor's constant Z0, and
  /// geo_C holds R^T C R (9 doubles per body). Other modes: E(A), Z kept in geo_Z, C in the
  /// world frame.
  std::vector<Mat3> geo_C;
  std::vector<Eigen::Matrix<double, 12, 3>> geo_Z;
  std::vector<std::int32_t> geo;
  bool geo_body_frame() const {
    return settings.integrator == IntegratorMode::CoRotated &&
           settings.rotation == RotationMode::Polar;
  }
  /// J(p1) Z C Z^T J(p2)^T of body i with geo[i] >= 0: the geometric term's coupling of body
  /// points p1 and p2 (body frame, m) in H^{-1}, world frame.
  Mat3 geo_point_block(std::size_t i, const Vec3& p1, const Vec3& p2) const;
  /// The same in the body frame, R^T (J(p1) Z C Z^T J(p2)^T) R = Y(p1) C_b Y(p2)^T with
  /// Y(p) = sum_k p_k Z0_k; geo_body_frame() only.
  Mat3 geo_body_block(std::size_t i, const Vec3& p1, const Vec3& p2) const;
  std::vector<detail::Row> rows;       ///< rows of all joints at the current iterate
  std::vector<std::uint32_t> row_joint;
  std::vector<std::int32_t> row_a, row_b;  ///< bodies of each row's joint (-1: the world)
  std::vector<double> lambda;          ///< multipliers of `rows` (N)
  // Dual-solve scratch, kept between steps to avoid reallocations.
  std::vector<Vec12> wa, wb;                   ///< H^{-1} G^T per row and side
  std::vector<std::vector<int>> rows_of;       ///< rows touching each body
  std::vector<Eigen::Triplet<double>> trip;
  enum class DualRowState { Active, Inactive, Saturated };
  struct DualScratch {
    std::vector<DualRowState> state;
    std::vector<Vec12> y0;
    std::vector<int> index;
    Eigen::VectorXd sol, rhs;
  };
  DualScratch dual_scratch;
  // Dual solve (dual.cpp): G y + C of every row, computed while its row is built (the
  // right-hand side of the first active-set pass without another pass over the rows). The
  // tree solver on co-rotated polar bodies assembles its cliques in the body frame
  // (tree_dual.cpp): wa and wb are then computed only for a sparse fallback.
  std::vector<double> row_rhs;
  /// Starts loading row r of `rows` into the cache (for passes that read the rows out of
  /// their joint order: by body, by elimination order).
  void prefetch_row(std::size_t r) const {
    const char* p = reinterpret_cast<const char*>(&rows[r]);
    for (std::size_t off = 0; off < sizeof(detail::Row); off += 64) __builtin_prefetch(p + off);
  }
  std::vector<std::size_t> joint_row_begin;    ///< first row of each joint in `rows`
  // Chain solver: joints of every chain component in path order, rebuilt when joints change.
  bool topology_dirty = true;
  /// Joints with limits or a cone (limit_violation), and joints carrying a coordinate, twist
  /// or bend between steps (update_joint_state): every joint but a plain ball joint.
  std::vector<std::uint32_t> limited_joints, stateful_joints;
  void update_joint_lists();
  bool all_chains = false;
  std::vector<std::vector<std::uint32_t>> chains;
  void update_chains();
  /// The dual solver of this step (solver_choice.cpp): the forced one, or under Auto the
  /// chain solver when every component is a chain, the sparse solver when every component has
  /// more than a few loop joints, else the tree solver, which then hands those components
  /// (graphs) to the sparse solver (tree.sparse_component).
  enum class DualMethod { Chain, Tree, Sparse, Iterative };
  DualMethod dual_method();
  /// Auto leaves a component to the sparse solver beyond 8 loop joints (the Schur complement's
  /// cost grows as loop rows x component rows; beyond, the sparse Cholesky is cheaper).
  static bool auto_sparse(const detail::TreeComponent& c) { return c.loop_joints.size() > 8; }
  bool solve_chains(const std::vector<int>& index, const Eigen::VectorXd& rhs,
                    const std::vector<Vec12>& w_a, const std::vector<Vec12>& w_b,
                    Eigen::VectorXd& sol);
  // Chain-solver scratch, kept between steps.
  std::vector<std::vector<int>> chain_active;
  detail::BlockTridiagonal chain_system;
  std::vector<Eigen::VectorXd> chain_x;
  // Chains of plain ball joints (ball_chain_dual.cpp): the chain solver with constant 3x3
  // dual blocks K = J(p1) Hb^{-1} J(p2)^T per body and anchor pair (DESIGN section 3).
  struct BallChainLink {
    std::int32_t a = -1, b = -1;  ///< bodies of the joint (-1 world), as in its JointModel
    std::uint32_t joint = 0;
    std::int8_t next_side = -1;   ///< side (0 = a, 1 = b) shared with the next joint, -1 at the end
    std::int8_t prev_side = -1;   ///< side shared with the previous joint, -1 at the start
    std::uint32_t kaa = 0, kbb = 0, kn = 0;  ///< K(pa, pa), K(pb, pb), signed K(p_k, p_k+1)
  };
  struct BallChains {
    bool ready = false;
    std::vector<BallChainLink> links;  ///< every chain's joints in path order, concatenated
    std::vector<Mat3> K;               ///< distinct constant blocks (identical links share one)
    std::vector<Mat3> X;               ///< X_k = D'_k^{-1} B_k of the elimination (0 at chain ends)
  };
  BallChains ball_chain;
  bool closed_form_dual = false;  ///< the last dual solve was solve_ball_chains (no rows)
  bool ball_chains_apply() const;
  void prepare_ball_chains();
  /// Solves the dual of an all-ball-chain world into `lambda` (3 per joint, in joint order)
  /// and y; false (nothing changed) if a pivot is singular.
  bool solve_ball_chains();
  // Tree solver (tree_dual.cpp): elimination plan, rebuilt when joints change, and per-node
  // factors kept between steps.
  struct TreeNodeFactor {
    int c_off = 0, nc = 0;  ///< child rows: local positions [c_off, c_off + nc)
    int p_off = 0, np = 0;  ///< parent rows
    /// Offsets in TreeScratch::factor of the node's factor [L; Y^T] (the first nc columns,
    /// column-major with nc + np rows; K_cc = L L^T, Y = L^{-1} K_cp) and of its message
    /// K_pp - Y^T Y (np x np, lower triangle).
    std::size_t at = 0, msg_at = 0;
  };
  struct TreeScratch {
    std::vector<TreeNodeFactor> nodes;
    std::vector<char> is_loop;  ///< per joint
    std::vector<int> local_rows, pos;
    std::vector<double> factor;  ///< every node's factor in node order, then the messages
    Eigen::VectorXd x;
    /// Per component of the plan: solved by the sparse solver instead (Auto, many loops).
    std::vector<char> sparse_component;
    bool mixed = false;  ///< some component is sparse_component
    // Sparse part (component_sparse_dual.cpp): its rows, their local index, the system.
    std::vector<int> sparse_rows, sparse_pos;
    std::vector<Vec12> sparse_w;
    std::vector<Eigen::Triplet<double>> sparse_trip;
    Eigen::VectorXd sparse_rhs, sparse_sol;
  };
  // Iterative solver (graph_dual.cpp), warm-started from the last multipliers.
  detail::IterativeDualSolver iterative_solver;
  std::vector<double> lambda_warm;
  std::vector<int> block_begin;
  Eigen::VectorXd iterative_x;
  bool iterative_fallback_reported = false;
  bool solve_iterative(int m, const std::vector<int>& index, const Eigen::VectorXd& rhs,
                       std::uint64_t pattern, Eigen::VectorXd& sol);
  detail::TreePlan tree_plan;
  bool tree_plan_valid = false;
  TreeScratch tree;
  void update_tree_plan();
  bool solve_trees(const std::vector<int>& index, const Eigen::VectorXd& rhs, Eigen::VectorXd& sol);
  /// The rows of the tree plan's sparse_component components, by the sparse solver.
  bool solve_sparse_components(const std::vector<int>& index, const Eigen::VectorXd& rhs,
                               Eigen::VectorXd& sol);
  void tree_solve(const detail::TreeComponent& comp, Eigen::Ref<Eigen::MatrixXd> v) const;
  // Contact with colliders (contact.cpp, DESIGN section 7). A dynamic body's active contact
  // rows (normal, and two friction rows while sticking) enter its operator as a low-rank
  // update of the pre-factored inverse, with V = H^{-1} G^T and S_c = G V + diag(alpha):
  //   H_c^{-1} = H^{-1} - V S_c^{-1} V^T,  y = H^{-1} f - V S_c^{-1} (V^T f + c),
  // the primal form of compliant rows (C + G dq = alpha lambda), so the joint dual keeps its
  // topology: chains stay chains, trees stay trees.
  struct Contact {
    std::uint32_t body = 0, collider = 0, feature = 0;
    Vec3 p = Vec3::Zero();        ///< point on the body, body frame (m)
    Vec3 pc = Vec3::Zero();       ///< point on the collider, its body frame (m)
    Vec3 nc = Vec3::UnitZ();      ///< normal in the collider's body frame
    Vec3 anchor = Vec3::Zero();   ///< friction anchor on the collider, its body frame (m)
    double mu = 0;                ///< friction coefficient of the pair
    double s0[3] = {0, 0, 0};     ///< row values at the start of the step (damping)
    Vec3 t1c = Vec3::UnitX(), t2c = Vec3::UnitY();  ///< tangents, the collider's body frame
    bool active = false;          ///< normal row in the active set
    bool was_active = false;      ///< active at the end of the last step (not an impact)
    bool sliding = false;         ///< friction at the cone (exact: a fixed force; penalty:
                                  ///< the anchor is dragged and the rows lose their dampers)
    bool dragged = false;         ///< penalty: the anchor was dragged in this step
    double lambda[3] = {0, 0, 0}; ///< multipliers (normal pushes when < 0), N
  };
  std::vector<Contact> contacts, contacts_prev;  ///< sorted by body, then collider, feature
  /// Bodies with contacts this step: their contact range and low-rank operator.
  struct ContactBody {
    std::uint32_t body = 0, begin = 0, end = 0;
    int rows = 0;                                  ///< active rows
    Eigen::Matrix<double, 12, Eigen::Dynamic> V;   ///< H^{-1} G^T (world)
    Eigen::MatrixXd S_inv;                         ///< S_c^{-1}
    Eigen::VectorXd c, alpha;                      ///< row values, compliances
    Eigen::Matrix<double, Eigen::Dynamic, 12> G;   ///< row gradients
    Vec12 f = Vec12::Zero();                       ///< the body's right-hand side
    Vec12 f_rows = Vec12::Zero();                  ///< f with the sliding friction forces
    std::vector<std::pair<int, int>> row_of;       ///< (contact, 0 normal / 1-2 tangent)
    bool dirty = false;                            ///< its sets changed: rebuild the operator
  };
  std::vector<ContactBody> contact_bodies;
  std::vector<std::int32_t> contact_of;  ///< per body: index in contact_bodies, or -1
  /// Per body: 1 when a joint holds it (kept for joints_seen joints); see detect_contacts.
  std::vector<char> jointed_body;
  std::size_t jointed_joints_seen = 0;
  bool contact_jointed(std::size_t i) const { return i < jointed_body.size() && jointed_body[i]; }
  detail::CollisionWorld collision;
  std::size_t collision_bodies = 0;      ///< bodies registered with `collision`
  bool has_colliders = false, has_collidable_dynamic = false;
  std::vector<Pose> collision_poses;
  std::vector<detail::ContactPoint> contact_points;
  bool contact_first_build = false;  ///< the step's first build activates penetrating points
  void register_collision(std::size_t i, const BodyDef& def);
  /// Phase: contact candidates at the start of the step (q = q^n), matched with the last
  /// step's contacts (friction anchors, active sets).
  void detect_contacts();
  /// Builds the active rows and the low-rank operator of contact body k at the current
  /// iterate from its right-hand side cb.f, and sets y of its body.
  void contact_operator(ContactBody& cb);
  void contact_operators();
  /// After the dual solve: the contact multipliers from the increments, the active set and
  /// the friction cone. Returns true if a set changed (the caller rebuilds the `dirty` bodies'
  /// operators and solves again).
  bool update_contacts(bool last_pass);
  /// H^{-1} of contact body i's correction blocks: J(p1) V S^{-1} V^T J(p2)^T (world).
  Mat3 contact_point_block(std::size_t i, const Vec3& p1, const Vec3& p2) const;
  bool corrected(std::size_t i) const { return geo[i] >= 0 || (!contact_of.empty() && contact_of[i] >= 0); }
  /// The body-frame correction block of body i (geometric term and contacts), R^T (...) R.
  Mat3 correction_body_block(std::size_t i, const Vec3& p1, const Vec3& p2) const;

  /// Bodies held by an active limit row at the end of the last dual solve.
  std::vector<char> impact;
  /// The step's displacement q - q^n without its active limit rows (dual.cpp), empty while
  /// none is active; limit_smooth_set identifies the active set it was computed for.
  /// Generalized-alpha takes its accelerations from it; the limits act on the velocities
  /// through impact_projection (finish_step).
  std::vector<Vec12> limit_smooth;
  std::uint64_t limit_smooth_set = 0;
  /// End-of-step generalized-alpha acceleration qddot, pseudo-acceleration a and velocity v
  /// of dynamic body i from the smooth part of its step.
  void alpha_update(std::size_t i, Vec12& qdd, Vec12& a, Vec12& v) const;
  /// Inelastic limit impacts (impact.cpp): projects the rigid motion of the components held
  /// by an active limit row onto the joints and the active limits (rigid-inertia metric).
  void impact_projection();
  detail::SparseDualSolver impact_solver;
  detail::LoopGuard loop_guard;  ///< Newton iterations on joint loops (advance)

  void check_id(BodyId id) const;
  void check_joint(JointId id) const;
  Vec12 solve_body(std::size_t i, const Vec12& v) const;       ///< H_i^{-1} v
  Vec12 solve_body_base(std::size_t i, const Vec12& v) const;  ///< without geometric term
  Vec12 geo_correction(std::size_t i, const Vec12& v) const;   ///< -Z C Z^T v (geo[i] >= 0)
  std::vector<Vec12> y_free;  ///< y before the dual solve (contact passes)
  void contact_stats();       ///< contacts and max_penetration of the step
  Vec12 joint_q(int body) const;  ///< q of a joint side; the world is [I; 0]
  /// One step without timing. A trial step (consistent_start) stops before finish_step: q
  /// holds the end of the step, q_prev the start, u and impact its scratch.
  void advance(bool trial = false);
  double limit_violation() const;
  double constraint_residual() const;
  void consistent_start();   ///< initial accelerations of jointed systems
  double newton_iteration();
  void body_operators();
  void geometric_stiffness(std::size_t i, const Mat3& A, const Mat3& P);
  void dual_solve();
  void update_joint_state();
  Vec12 q_from_pose(const detail::BodyModel& b, const Pose& pose) const;

  // Step phases (step.cpp).
  void predict();
  /// Aerodynamic force on dynamic body i at the start of the step (N, world; wind.cpp).
  Vec3 wind_force(std::size_t i) const;
  void move_kinematic();
  void check_state() const;
  void finish_step();

  // State and control (state.cpp, control.cpp).
  /// Per joint: the relative rotation R_a^T R_b of its bodies' user frames (the world: I)
  /// when it was added, the zero of World::joint_coordinates.
  std::vector<Quat> joint_rest;
  /// Rotation of the user frame of `body` (polar part of A; identity for the world, -1).
  Mat3 user_rotation(int body) const;
  /// Records joint_rest of the joint just added (add_joint).
  void record_joint_rest(const detail::JointModel& j);
  /// Validates run-time joint extras for a joint of type `type` as add_joint does; throws
  /// InvalidArgument "`label`: what is wrong".
  static void check_extras(const std::string& label, JointType type,
                           const std::optional<JointLimits>& limits,
                           const std::optional<JointSpring>& spring,
                           const std::optional<JointDrive>& drive);
  /// Replaces the limits, spring and drive of joint `ji` (copy on write: clones share extras).
  void set_extras(std::uint32_t ji, const std::optional<JointLimits>& limits,
                  const std::optional<JointSpring>& spring, const std::optional<JointDrive>& drive);
  /// Fingerprint of the model (bodies, joints) that a saved state belongs to.
  std::uint64_t model_hash() const;
  /// The contact part of World::save_state / restore_state: the contacts of the last step,
  /// which the next step matches for its friction anchors and active sets (detect_contacts).
  void save_contacts(detail::ByteWriter& out) const;
  std::vector<Contact> read_contacts(detail::ByteReader& in) const;
};

}  // namespace mabd
