// Internal state of a World: the compiled per-body model (constant after add_body) and the
// mutable state, stored as flat arrays indexed by BodyId::index.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "body/affine.h"
#include "body/body_hessian.h"
#include "collision/collision_world.h"
#include "fem/fem_solid.h"
#include "joints/joint_model.h"
#include "solvers/ball_chain_dual.h"
#include "solvers/body_operators.h"
#include "solvers/cg_dual.h"
#include "solvers/chain_dual.h"
#include "solvers/contact_schur.h"
#include "solvers/cholesky_dual.h"
#include "solvers/row_set.h"
#include "solvers/sparse_dual.h"
#include "solvers/tree_dual.h"
#include "world/joint_rows.h"
#include "world/loop_guard.h"
#include "world/name_index.h"
#include "solvers/thread_pool.h"
#include "mabd/world.h"

namespace mabd {

namespace detail {

class ByteWriter;
class ByteReader;

/// Constant data of a body's shape, material and mass, in its body frame (COM origin,
/// principal axes). Bodies with equal values share one (the copies of a generated part).
struct BodyConstants {
  Vec3 sigma = Vec3::Zero();    ///< principal second moments (kg m^2)
  double mass = 0;              ///< kg
  double volume = 0;            ///< m^3
  double mu = 0, lambda = 0;    ///< Lame parameters (Pa)
  double k_vanilla = 0;         ///< vanilla orthogonality stiffness (J), = mu V / 4
  Mat3 R_up = Mat3::Identity(); ///< principal axes in the user frame (columns): user <- body
  Vec3 com_u = Vec3::Zero();    ///< COM in the user frame (m)
  Vec3 origin_b = Vec3::Zero(); ///< user-frame origin in body coordinates (m)
  double friction = 0;          ///< Coulomb coefficient of its material
  /// Bitwise equality (the sharing test: equal values give equal results).
  bool same(const BodyConstants& o) const;
};

/// Constant data of one body: its info, its constants (shared) and prescribed motion.
struct BodyModel {
  /// The facts of BodyInfo that the constants do not hold (World::body_info adds mass,
  /// volume and inertia from them: a million-link chain saves 40 bytes per link).
  struct Info {
    std::string name;
    BodyKind kind = BodyKind::Dynamic;
    double size = 0;  ///< bounding radius about the COM (m)
  } info;
  std::uint32_t factor = 0;     ///< index into the HessianCache (dynamic bodies)
  std::shared_ptr<const BodyConstants> constants;
  /// Prescribed motion of a kinematic body: a function of time, else a constant twist.
  struct Kinematics {
    MotionFunction motion;
    Vec3 w = Vec3::Zero(), v = Vec3::Zero();  ///< rad/s, m/s (world axes)
  };
  std::shared_ptr<const Kinematics> kinematics;  ///< kinematic bodies only

  bool dynamic() const { return info.kind == BodyKind::Dynamic; }
  const Vec3& sigma() const { return constants->sigma; }
  double mass() const { return constants->mass; }
  double volume() const { return constants->volume; }
  double mu() const { return constants->mu; }
  double lambda() const { return constants->lambda; }
  double k_vanilla() const { return constants->k_vanilla; }
  const Mat3& R_up() const { return constants->R_up; }
  const Vec3& com_u() const { return constants->com_u; }
  const Vec3& origin_b() const { return constants->origin_b; }
  double friction() const { return constants->friction; }
  /// Principal moments of inertia about the COM (kg m^2): tr(sigma) - sigma_i about axis i.
  Vec3 principal_inertia() const {
    const Vec3& s = sigma();
    const double tr = s.sum();
    return Vec3(tr - s[0], tr - s[1], tr - s[2]);
  }
};

}  // namespace detail

/// The world's model, state and step scratch. It supplies the body operators of the current
/// Newton iterate to the dual solvers (BodyOperators).
struct World::Impl final : detail::BodyOperators {
  using Mat12x3 = Eigen::Matrix<double, 12, 3>;
  WorldSettings settings;
  StepStats stats;
  /// Workers of the per-body phases (settings.threads > 1), made by the first step. A copy
  /// of the world (clone) makes its own.
  struct PoolSlot {
    std::unique_ptr<detail::ThreadPool> workers;
    PoolSlot() = default;
    PoolSlot(const PoolSlot&) {}
    PoolSlot& operator=(const PoolSlot&) { return *this; }
    explicit operator bool() const { return workers != nullptr; }
    detail::ThreadPool* operator->() const { return workers.get(); }
  } pool;
  /// Phases over fewer bodies than this run on the calling thread alone.
  static constexpr std::size_t kParallelBodies = 4096;
  /// How many ranges a per-body phase over n items is split into.
  int range_count(std::size_t n) const {
    return pool && n >= kParallelBodies ? pool->threads() : 1;
  }
  /// Runs fn(part, begin, end) over `parts` contiguous ranges of [0, n) (range_count(n)).
  void for_ranges(std::size_t n, int parts,
                  const std::function<void(int, std::size_t, std::size_t)>& fn) const {
    if (parts <= 1) {
      if (n > 0) fn(0, 0, n);
    } else {
      pool->run(n, fn);
    }
  }
  double time = 0;
  std::int64_t steps = 0;

  // Model.
  std::vector<detail::BodyModel> bodies;
  detail::NameIndex by_name;  ///< named bodies (names in bodies[i].info.name)
  const std::string& body_name(std::uint32_t i) const { return bodies[i].info.name; }
  std::optional<std::uint32_t> find_body(std::string_view name) const {
    return by_name.find(name, [this](std::uint32_t i) -> const std::string& { return body_name(i); });
  }
  detail::HessianCache factors;
  /// The constants of the last bodies added, most recent first, which a new body with equal
  /// values shares (a generated part's copies come one after another, or alternate between a
  /// few parts).
  std::vector<std::shared_ptr<const detail::BodyConstants>> recent_constants;
  static constexpr std::size_t kRecentConstants = 8;
  std::shared_ptr<const detail::BodyConstants> share_constants(const detail::BodyConstants& c);

  // State.
  std::vector<Vec12> q, qdot;
  std::vector<Vec12> acc;    ///< generalized-alpha pseudo-acceleration a
  std::vector<Vec12> qddot;  ///< acceleration d2q/dt2 at the end of the last step
  /// True while consistent_start keeps the initial acc in qddot's array (acc = qddot then):
  /// qddot_of reads acc instead.
  bool qddot_is_acc = false;
  const Vec12& qddot_of(std::size_t i) const { return qddot_is_acc ? acc[i] : qddot[i]; }
  /// Loads accumulated for the next step (apply_wrench), per body; empty while none is
  /// pending (all zero), so a world without applied loads keeps no array for them.
  std::vector<Vec3> force, torque;
  Vec3 pending_force(std::size_t i) const { return force.empty() ? Vec3::Zero() : force[i]; }
  Vec3 pending_torque(std::size_t i) const { return torque.empty() ? Vec3::Zero() : torque[i]; }
  std::unordered_map<std::uint32_t, Pose> kin_target;  ///< kinematic targets for the next step

  /// Generalized-alpha parameters from the spectral radius rho (Chung-Hulbert).
  struct Alpha {
    double am = 0, af = 0, gamma = 1, beta = 1;
  };
  Alpha alpha() const { return coefs.fits(settings) ? coefs.alpha : StepCoefs(settings).alpha; }
  /// beta' h^2 (s^2): the step's effective inertia scale, Hb = M_A / (beta' h^2) + Kb.
  double beta_h2() const { return coefs.fits(settings) ? coefs.bh2 : StepCoefs(settings).bh2; }
  /// 1 / (beta' h^2) (1/s^2).
  double inv_beta_h2() const { return coefs.fits(settings) ? coefs.ih2 : StepCoefs(settings).ih2; }
  /// The time integration's constants for a time step, h and rho (computed once per step
  /// instead of once per body and use).
  struct StepCoefs {
    double dt = -1, rho = -1;
    TimeIntegration integration = TimeIntegration::ImplicitEuler;
    Alpha alpha;
    double bh2 = 0;   ///< beta' h^2 (s^2)
    double ih2 = 0;   ///< 1 / (beta' h^2) (1/s^2)
    /// d_hat = h qdot + bh2 M^{-1} f_ext + c_acc acc + c_qdd qddot (s^2; zero for Euler).
    double c_acc = 0, c_qdd = 0;
    StepCoefs() = default;
    explicit StepCoefs(const WorldSettings& s);
    bool fits(const WorldSettings& s) const {
      return dt == s.dt && rho == s.spectral_radius && integration == s.time_integration;
    }
  };
  /// The constants of the current settings: refreshed (refresh_coefs) before each step's
  /// phases, read by the per-body phases; alpha() and beta_h2() compute them afresh when the
  /// settings changed since (never writing from the phases' threads).
  StepCoefs coefs;
  void refresh_coefs() {
    if (!coefs.fits(settings)) coefs = StepCoefs(settings);
  }

  // Joints.
  std::vector<detail::JointModel> joints;
  detail::NameIndex joint_by_name;  ///< named joints (names in joints[i].name)
  std::optional<std::uint32_t> find_joint(std::string_view name) const {
    return joint_by_name.find(
        name, [this](std::uint32_t i) -> const std::string& { return joints[i].name; });
  }
  std::vector<std::string> warnings;

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
  /// body i's term, or -1. Co-rotated polar bodies (geo_body_frame()): the rotation
  /// directions are E(R), Z = H^{-1} E(R) = D(R) Z0 R^T with the factor's constant Z0, and
  /// the term holds C_b = R^T C R (9 doubles per body). Other modes: E(A), Z kept with C in
  /// the world frame.
  /// The terms, one list per range of bodies body_operators ran in (one range on one
  /// thread), in body order; geo[i] indexes their concatenation (geo_c, geo_z). Each range
  /// keeps its own list: joined into one, the terms of a million-link chain on two threads
  /// took their 72 MB twice.
  struct GeoPart {
    std::vector<Mat3> C;
    std::vector<Mat12x3> Z;
    std::int32_t first = 0;  ///< index of its first term in the concatenation
  };
  std::vector<GeoPart> geo_parts;
  const GeoPart& geo_part(std::int32_t g) const {
    std::size_t k = geo_parts.size() - 1;
    while (k > 0 && geo_parts[k].first > g) --k;
    return geo_parts[k];
  }
  /// C of body i's term (geo[i] >= 0).
  const Mat3& geo_c(std::size_t i) const {
    const GeoPart& part = geo_part(geo[i]);
    return part.C[static_cast<std::size_t>(geo[i] - part.first)];
  }
  /// Z of body i's term (geo[i] >= 0, !geo_body_frame()).
  const Mat12x3& geo_z(std::size_t i) const {
    const GeoPart& part = geo_part(geo[i]);
    return part.Z[static_cast<std::size_t>(geo[i] - part.first)];
  }
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
  // Dual solve (dual.cpp, DESIGN section 3): the rows of every row source at the current
  // iterate, their multipliers, the active-set scratch, and one object per dual solver
  // (src/solvers), each with its own scratch, kept between steps.
  detail::RowSet row_set;
  std::vector<double> lambda;          ///< multipliers of row_set (N), or 3 per item (closed form)
  enum class DualRowState { Active, Inactive, Saturated };
  struct DualScratch {
    std::vector<DualRowState> state;
    std::vector<Vec12> y0;
    std::vector<int> index;
    Eigen::VectorXd sol, rhs;
  };
  DualScratch dual_scratch;
  /// The row sources of the step, in item order (the joints first: item k is joint k).
  /// Calls f(source) for each.
  template <class F>
  void for_each_row_source(F&& f) const {
    const detail::JointRows joint_rows(joints, settings.dt);
    f(static_cast<const detail::RowSource&>(joint_rows));
  }
  // Topology of the items, rebuilt when joints change (topology_dirty).
  bool topology_dirty = true;
  detail::DualTopology topology;
  void update_topology();
  /// Joints with limits or a cone (limit_violation).
  std::vector<std::uint32_t> limited_joints;
  /// Joints whose rows are nonlinear in q: every type but the ball joint (DESIGN section 2).
  std::vector<std::uint32_t> nonlinear_joints;
  /// Those of them without compliance (what project_joints closes).
  std::vector<std::uint32_t> rigid_nonlinear_joints;
  void update_joint_lists();
  bool all_chains = false;        ///< every component is a chain (chain_dual's plan is valid)
  bool tree_prepared = false;     ///< tree_dual's plan is valid
  detail::ChainDual chain_dual;
  detail::BallChainDual ball_chain_dual;
  detail::TreeDual tree_dual;
  detail::CholeskyDual sparse_dual;
  detail::CgDual iterative_dual;
  /// The joint projection's own sparse Cholesky (project_joints): the step's solvers keep
  /// their factors and caches for the next step's solves.
  detail::CholeskyDual projection_dual;
  bool closed_form_dual = false;  ///< the last dual solve was ball_chain_dual (no rows)
  bool iterative_fallback_reported = false;
  /// The iterative solver stalled in this step: the step's later systems, alike, go straight
  /// to the sparse Cholesky instead of iterating to dual_max_iterations again.
  bool iterative_stalled = false;
  /// The dual solver of this step (solver_choice.cpp): the forced one, or under Auto the
  /// chain solver when every component is a chain, the sparse solver when every component has
  /// more than a few loop items, else the tree solver, which then hands those components
  /// (graphs) to its sparse part (TreeDual::set_sparse_components).
  detail::DualSolver& dual_method();
  /// Auto leaves a component to the sparse solver beyond 8 loop items (the Schur complement's
  /// cost grows as loop rows x component rows; beyond, the sparse Cholesky is cheaper).
  static bool auto_sparse(const detail::TreeComponent& c) { return c.loop_joints.size() > 8; }
  /// Auto takes the iterative solver instead of the sparse one when every component is a
  /// graph, with at least kAutoIterativeRows joint rows in all, and no contact or soft body
  /// (whose passes re-solve with updated sparse factors): on net_50 (29.6K rows) and net_100
  /// (119K rows) it took 0.79 and 0.69 of the sparse solver's time a step.
  static constexpr std::size_t kAutoIterativeRows = 24000;
  bool auto_iterative() const {
    return type_rows() >= kAutoIterativeRows && settings.contact.model == ContactModel::None &&
           soft_bodies.empty();
  }
  /// Rows of the joints' own types (their base rows, without limits, springs or drives),
  /// counted again only when joints are added.
  std::size_t type_rows() const {
    if (type_rows_seen != joints.size()) {
      type_rows_count = 0;
      for (const auto& j : joints) type_rows_count += static_cast<std::size_t>(j.base_rows);
      type_rows_seen = joints.size();
    }
    return type_rows_count;
  }
  mutable std::size_t type_rows_count = 0, type_rows_seen = 0;
  /// True when the closed-form ball chains apply: chains of plain ball joints, co-rotated
  /// polar bodies.
  bool ball_chains_apply() const;
  /// Warns once if a solve regularised redundant rows.
  void note_regularised(const detail::DualSolver& solver);
  bool redundancy_reported = false;
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
    /// Points of the normal row (body frames, m): on the body its core point (a sphere's
    /// centre, a capsule's axis; p for other shapes), on the collider pc lifted by as much
    /// along the normal (the same gap). See detect_contacts.
    Vec3 pn = Vec3::Zero(), pcn = Vec3::Zero();
    Vec3 anchor = Vec3::Zero();   ///< friction anchor on the collider, its body frame (m)
    double mu = 0;                ///< friction coefficient of the pair
    /// Penalty: the rigid effective masses (kg) of the normal row (at pn along n) and of the
    /// friction rows (at p along t1, t2), taken at the contact's first step and kept, with the
    /// tangents, while it lasts: each spring keeps its stiffness m / tau^2 and direction. A
    /// stiffness that followed the body's turn, or a tangent basis turned under a stretched
    /// spring, would change the energy a loaded spring holds without work (contact_energy_at).
    double m_eff[3] = {0, 0, 0};
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
    std::uint64_t built = ~0ull;  ///< operator_stamp when V and S_inv were computed
  };
  /// Counts the body operators' computations (body_operators): a contact body's V and S_inv
  /// of the same count and the same rows and compliances are still valid.
  std::uint64_t operator_stamp = 0;
  /// operator_stamp of the iterate row_set was built at (~0: none): the rows depend on q
  /// only, which the passes of one Newton iteration do not change.
  std::uint64_t rows_stamp = ~0ull;
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
  /// The normal row's value n . (x(pn) - x_c(pcn)) of collider contact c with its body at qi,
  /// the collider at its current pose (m; negative: penetration).
  double normal_gap(const Contact& c, const Vec12& qi) const {
    return normal_gap(c, qi, q[c.collider]);
  }
  /// The same with the collider at qc.
  static double normal_gap(const Contact& c, const Vec12& qi, const Vec12& qc) {
    const Vec3 n = detail::affine_A(qc) * c.nc;
    return n.dot(detail::point(qi, c.pn) - detail::point(qc, c.pcn));
  }
  /// Force (N, world) collider contact c applies to its body, from its multipliers and the
  /// collider's current pose: normal plus friction.
  Vec3 contact_force(const Contact& c) const {
    const Mat3 Ac = detail::affine_A(q[c.collider]);
    return -(c.lambda[0] * (Ac * c.nc) + c.lambda[1] * (Ac * c.t1c) + c.lambda[2] * (Ac * c.t2c));
  }
  /// After the dual solve: the contact multipliers from the increments, the active set and
  /// the friction cone. Returns true if a set changed (the caller rebuilds the `dirty` bodies'
  /// operators and solves again).
  bool update_contacts(bool last_pass);
  /// H^{-1} of contact body i's correction blocks: J(p1) V S^{-1} V^T J(p2)^T (world).
  Mat3 contact_point_block(std::size_t i, const Vec3& p1, const Vec3& p2) const;
  bool corrected(std::size_t i) const override {
    return geo[i] >= 0 || (!contact_of.empty() && contact_of[i] >= 0);
  }
  bool geometric_correction(std::size_t i, const Mat3*& C_b) const override {
    C_b = geo[i] >= 0 && geo_body_frame() ? &geo_c(i) : nullptr;
    const bool contact_rows = !contact_of.empty() && contact_of[i] >= 0 &&
                              contact_bodies[contact_of[i]].rows > 0;
    return !contact_rows && (C_b != nullptr || geo[i] < 0);
  }
  /// The body-frame correction block of body i (geometric term and contacts), R^T (...) R.
  Mat3 correction_body_block(std::size_t i, const Vec3& p1, const Vec3& p2) const override;
  /// The geometric term and contact rows of body i subtracted from a body-frame clique.
  void subtract_clique_correction(std::size_t i, int n, const Vec12* vb, const Vec12* const* g,
                                  double* a) const override;

  // Contact between dynamic bodies (pair_contact.cpp, DESIGN section 7). Their rows couple
  // two moving bodies, so they stay out of the joint topology: after the joint solve, each
  // row's response through it (one structured solve per group of rows on disjoint
  // articulations) gives the Schur complement D = G_c M_J^{-1} G_c^T, the complementarity
  // problem on it gives the multipliers (contact_lcp.h), and one more structured solve
  // carries their forces into the increment.
  struct PairContact {
    /// a dynamic; b dynamic (then a < b) or a collider of a body that has contacts with
    /// other dynamic bodies (its collider contacts join the same problem)
    std::uint32_t a = 0, b = 0, feature = 0;
    Vec3 pa = Vec3::Zero(), pb = Vec3::Zero();  ///< points, body frames of a and b (m)
    /// Points of the normal row (body frames of a and b, m) and its offset (m): the core points
    /// of round bodies (a sphere's centre, a capsule's axis; pa, pb for other shapes) and the
    /// sum of their radii, C_n = n . (x_a(pan) - x_b(pbn)) - offset (see add_pair_contact).
    Vec3 pan = Vec3::Zero(), pbn = Vec3::Zero();
    double offset = 0;
    /// C_n at the configurations qa, qb of a and b (m; negative: penetration).
    double normal_gap(const Vec12& qa, const Vec12& qb) const {
      return n.dot(detail::point(qa, pan) - detail::point(qb, pbn)) - offset;
    }
    Vec3 n = Vec3::UnitZ();                    ///< unit normal from b towards a (world, fixed in the step)
    Vec3 t1 = Vec3::UnitX(), t2 = Vec3::UnitY();  ///< tangents (world)
    double mu = 0;     ///< friction coefficient of the pair
    double s0 = 0;     ///< normal row value at the start of the step, when penetrating (m)
    double m_eff = 0;  ///< penalty: reduced rigid effective mass along n (kg)
    double lambda[3] = {0, 0, 0};  ///< multipliers (normal pushes a when < 0), N
  };
  std::vector<PairContact> pair_contacts, pair_contacts_prev;  ///< sorted by (a, b, feature)
  /// Per body (empty without pair contacts): 1 if it has a contact with another dynamic body.
  std::vector<char> paired_body;
  /// Adds the contact point cp (body a = cp.body, b = cp.collider, normal from b towards a)
  /// to pair_contacts, warm-started from the last step's; `dynamic_pair` when b is dynamic. A
  /// point the pair's own approach cannot close within the step is left out (false).
  bool add_pair_contact(const detail::ContactPoint& cp, bool dynamic_pair);
  /// Sorts pair_contacts and sizes pair_force (end of detect_contacts).
  void finish_pair_contacts();
  std::vector<detail::ContactPoint> pair_points;
  /// Per body: its articulation (bodies joined by joints between dynamic bodies share one),
  /// rebuilt when the joints change; joint_pairs: the body pairs that share a joint.
  std::vector<std::uint32_t> articulation;
  std::unordered_set<std::uint64_t> joint_pairs;
  std::size_t articulation_joints_seen = static_cast<std::size_t>(-1);
  void update_articulations();
  /// Some pair contact of the step touches a jointed body: the joint solve keeps its rows.
  bool pairs_on_joints = false;
  /// Whether the dual solve computes the rows' W = H^{-1} G^T for `method`: when the method
  /// reads it, and for the chain solver (which reads it when there) under contacts between
  /// jointed bodies, whose joint responses reuse it (joint_response.cpp) instead of one body
  /// solve per row each.
  bool wants_w(const detail::DualSolver& method) const {
    return method.needs_w(*this) || (&method == &chain_dual && pairs_on_joints);
  }
  std::size_t collidable_dynamic = 0;
  std::vector<char> collidable_body;       ///< per body (up to the last colliding dynamic one)
  std::size_t collidable_articulations = 0;  ///< articulations with a colliding body
  /// Phase 1 (detect_contacts): candidate points between dynamic bodies at q^n, matched with
  /// the last step's (warm start). `margin` as for colliders (m).
  void detect_pair_contacts(double margin);
  /// After the joint solve: the pair contacts' multipliers and their share of y. `loaded`:
  /// the joint solve ran under the forces of the multipliers the contacts hold
  /// (load_pair_forces), which y carries already.
  void solve_pair_contacts(bool loaded);
  /// y = y_free + H^{-1} (the pair contacts' forces): the joint solve's right-hand side under
  /// the contact forces of the last pass; pair_applied keeps their multipliers.
  void load_pair_forces();
  Eigen::VectorXd pair_applied;
  /// True if the pair contacts' forces change the joint solve's active set: an active drive
  /// row beyond its force bound, an active limit row pulling, an inactive one violated.
  bool pair_joint_sets_change() const;
  Eigen::VectorXd response_sol;  ///< multipliers of the last joint_response (active rows)
  detail::ContactRows pair_rows;   ///< its rows (scratch)
  detail::ContactSchur contact_schur;
  std::vector<Vec12> pair_z;  ///< its scratch: M_J^{-1} G_c^T lambda per body
  std::vector<Vec12> y_pairs_before;  ///< y before the pair solve (contact passes)
  /// Per body (empty without pair contacts): the generalized force (N) of the pair contacts
  /// on it in the last solve; update_contacts adds it to a contact body's right-hand side.
  std::vector<Vec12> pair_force;
  /// M_J^{-1} applied to a force whose body solves are z = H^{-1} F: z <- z - H^{-1} G^T lambda
  /// with (S + alpha) lambda = G z on the last dual solve's active rows (no-op without rows).
  /// `touched`: the bodies where z is nonzero; the bodies it changes are appended.
  void joint_response(std::vector<Vec12>& z, std::vector<std::uint32_t>& touched);
  /// The same response's share of D for many contact rows on one articulation at once
  /// (ContactSchur::JointBlock): C = P^T (S + alpha)^{-1} P, P[l, j] = g_l . H^{-1} g_j.
  void joint_block(std::uint32_t art,
                   const std::vector<detail::ContactSchur::BlockColumn>& columns,
                   Eigen::MatrixXd& C);
  /// joint_block bound to this world, for ContactSchur (built per call: a World's Impl is
  /// copied by clone()).
  detail::ContactSchur::JointBlock joint_block_fn() {
    return [this](std::uint32_t art, const std::vector<detail::ContactSchur::BlockColumn>& c,
                  Eigen::MatrixXd& C) { joint_block(art, c, C); };
  }
  // joint_response.cpp: per articulation, its active joint rows' block of S + diag(alpha),
  // factored on first use after each dual solve (response_stamp). `columns` (optional): the
  // contact columns the factor is first built for; a loop-free articulation then orders the
  // rows on their bodies last (short elimination-tree reaches for joint_block).
  struct ArticulationFactor;
  ArticulationFactor& articulation_factor(
      std::uint32_t art, const std::vector<detail::ContactSchur::BlockColumn>* columns = nullptr);
  void order_rows(std::uint32_t art, ArticulationFactor& f,
                  const std::vector<int>& local, std::size_t members,
                  const std::vector<detail::ContactSchur::BlockColumn>* columns);
  std::unordered_map<std::uint32_t, std::shared_ptr<ArticulationFactor>> response_cache;
  /// The last sparse factor of each articulation: the next one of the same pattern (rows,
  /// order and bodies) factors its new values on this one's symbolic analysis.
  std::unordered_map<std::uint32_t, std::shared_ptr<ArticulationFactor>> sparse_factors;
  std::vector<int> row_local;  ///< articulation_factor's scratch: row -> local row (or -1)
  std::uint64_t response_stamp = 0, response_cache_stamp = ~0ull;
  /// The last row order of each articulation (order_rows) and what it was computed from: per
  /// row in the incoming order its id and bodies, then the bodies in order and the member
  /// count; and the slots of the contact columns' bodies, which only the leaves-first order
  /// of a loop-free articulation reads. Equal inputs give the same order (both orders are
  /// deterministic and read nothing else), so a Newton iteration or a step whose rows and
  /// contact bodies did not change reuses it.
  struct RowOrder {
    std::vector<int> key;
    std::vector<int> contact_slots;
    std::vector<int> rows;
    bool amd = false;  ///< minimum degree (loops): the contact slots play no part
  };
  std::unordered_map<std::uint32_t, RowOrder> row_orders;
  /// The joint rows solved with the contacts (add_coupled_joint_rows): their row ids, whether
  /// any coupling applies, per articulation whether a contact touches it, per row 1 (coupled)
  /// or 2 (a limit left out, watched). Responses then run on the equality rows alone
  /// (response_limits false); response_cache_limits is what the cached factors were built with.
  std::vector<int> coupled_rows;
  bool coupled = false;
  std::vector<char> coupled_art, coupled_mark;
  bool response_limits = true, response_cache_limits = true;
  void add_coupled_joint_rows(detail::ContactRows& rows);
  std::vector<std::uint32_t> art_begin, art_members;  ///< bodies of each articulation (CSR)
  std::vector<std::uint32_t> touched_arts;
  std::vector<int> response_written;
  int dual_active = 0;            ///< active rows of the last dual solve
  std::uint64_t dual_pattern = 0; ///< and their hash
  detail::DualSolver* dual_used = nullptr;  ///< the solver that solved it (nullptr: none)
  /// The last full dual solve, which its solver can repeat for a new right-hand side
  /// (DualSolver::resolve) while the rows and the body operators stay as they were: between
  /// the contact passes of one Newton iteration, when a pass only dragged friction anchors
  /// or moved sliding forces (they change y, not H^{-1}). Cleared when a body operator changes
  /// (body_operators, a contact operator rebuilt with other rows or compliances) and in a
  /// copy of the world.
  struct ResolvableSolve {
    detail::DualSolver* solver = nullptr;
    std::uint64_t pattern = 0;  ///< its active rows' hash
    int rows = -1;              ///< and their number
    ResolvableSolve() = default;
    ResolvableSolve(const ResolvableSolve&) {}
    ResolvableSolve& operator=(const ResolvableSolve&) {
      solver = nullptr;
      return *this;
    }
  } resolvable;
  /// Bodies whose operator a contact pass rebuilt since the last dual solve: the next solve at
  /// the same iterate keeps row_set (its rows depend on q alone) and recomputes W on these
  /// bodies' rows only. `valid`: row_set holds this world's rows (a copy builds them anew).
  struct StaleOperators {
    bool valid = false;
    std::vector<std::uint32_t> bodies;
    StaleOperators() = default;
    StaleOperators(const StaleOperators&) {}
    StaleOperators& operator=(const StaleOperators&) {
      valid = false;
      bodies.clear();
      return *this;
    }
  } stale_operators;
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
  Vec12 solve_body(std::size_t i, const Vec12& v) const override;  ///< H_i^{-1} v
  // The rest of BodyOperators (its dynamic flags: topology.movable, set by dual_method).
  bool body_frame() const override { return geo_body_frame(); }
  const Mat3& rotation(std::size_t i) const override { return rot[i]; }
  const detail::BodyHessian& factor(std::size_t i) const override {
    return factors[bodies[i].factor];
  }
  void prefetch(std::size_t i) const override {
    __builtin_prefetch(&bodies[i].factor);
    __builtin_prefetch(&rot[i]);
    __builtin_prefetch(&geo[i]);
  }
  Vec12 solve_body_base(std::size_t i, const Vec12& v) const;  ///< without geometric term
  Vec12 geo_correction(std::size_t i, const Vec12& v) const;   ///< -Z C Z^T v (geo[i] >= 0)
  std::vector<Vec12> y_free;  ///< y before the dual solve (contact passes)
  void contact_stats();       ///< contacts and max_penetration of the step
  Vec12 joint_q(int body) const;  ///< q of a joint side; the world is [I; 0]
  /// One step without timing. A trial step (consistent_start) stops before finish_step: q
  /// holds the end of the step, q_prev the start, u and impact its scratch.
  void advance(bool trial = false);
  double limit_violation() const;
  /// Elastic energy (J) of body i at configuration qi (0 for static and kinematic bodies).
  double elastic(std::size_t i, const Vec12& qi) const;
  /// Contact impacts (advance): the bodies with contacts this step, their elastic energy at
  /// the step's start and the energy the step can give them (J): the kinetic energy of the
  /// bodies of their articulations at the start plus gravity's work on them over the step's
  /// first iterate, a bound no deformation of a converged step exceeds.
  std::vector<std::uint32_t> impact_bodies;
  double impact_elastic0 = 0, impact_budget = 0;
  std::vector<char> impact_reach;  ///< its scratch: per articulation, holds a contact body
  double impact_energy0 = 0;       ///< implicit Euler: impact_energy(true)
  /// Kinetic and gravity energy (J) of the bodies of the contact bodies' articulations and
  /// elastic energy of the contact bodies, at the step's start or at the iterate (velocity
  /// u / h, implicit Euler).
  double impact_energy(bool at_start) const;
  /// Potential of the joint springs, compliant joints and position drives in impact_reach (J).
  double joint_potential(bool at_start) const;
  /// Energy (J) the joints store at the configuration qs (one q per body): springs and
  /// compliant joints (detail::joint_stored_energy), of the joints in impact_reach only with
  /// `reach_only`, and with `drives` the position drives' springs too (clamped at max_force).
  double joint_energy_at(const std::vector<Vec12>& qs, bool reach_only, bool drives) const;
  /// Penalty model: energy (J) the springs of the contacts in impact_reach store
  /// (contact_energy_at), at the step's start configuration or at the iterate. 0 for the
  /// exact model. Implicit Euler minimises the step's incremental potential, these springs'
  /// energy included: without it a spring that gives its energy back looks like a gain, and
  /// one that takes it hides one.
  double penalty_energy(bool at_start) const;
  /// Penalty model: energy (J) of the contacts' springs at the configuration qs (one q per
  /// body), their stiffness k = m_eff / tau^2 (Contact::m_eff, PairContact::m_eff): the
  /// normal rows' 1/2 k min(C, 0)^2 (collider and pair contacts) and the friction rows'
  /// 1/2 k C_t^2 on their anchors (active collider contacts). Of the contacts in
  /// impact_reach only with `reach_only`. 0 for the exact model.
  double contact_energy_at(const std::vector<Vec12>& qs, bool reach_only) const;
  /// Whether the joint belongs to an articulation in impact_reach.
  bool joint_in_reach(const detail::JointModel& j) const;
  /// Effort drives' force (N) and torque (N m) per body (empty when none acts), for predict().
  std::vector<Vec3> effort_force, effort_torque;
  void gather_efforts();
  /// Sets up the step's energy check (energy_excess): the reach (impact_reach), its energy at
  /// the start, and for generalized-alpha the contact bodies' elastic energy and budget.
  void start_energy_check();
  bool energy_check = false;          ///< this step's energy is checked
  std::vector<char> impact_worked;    ///< its scratch: per articulation, work from outside
  /// Energy (J) above what the step allows, positive if the step is not converged: implicit
  /// Euler, the energy in reach (impact_energy) above its start plus the kinematic colliders'
  /// work on it (kinematic_work); generalized-alpha, the contact bodies' elastic energy rise
  /// above the budget. One Newton iteration can leave a hard impact's rotation, a stiff body
  /// crushed by a contact force or a whipped link linearised; the step takes more.
  double energy_excess() const;
  /// Energy (J) the step at the current iterate holds beyond its start plus the kinematic
  /// colliders' work (implicit Euler; 0 without a check or for generalized-alpha).
  double energy_gain() const;
  /// Work (J) the kinematic colliders did on the bodies over the step at the current iterate:
  /// each active contact's force on its body (from its multipliers) times the travel of the
  /// collider's contact point from q_prev to q. Implicit Euler applies the step's end force
  /// over the whole step, and the contact and friction forces' own work on the bodies'
  /// motion relative to the collider is never positive, so the bodies' energy cannot rise by
  /// more than this.
  double kinematic_work() const;
  /// Newton iterations in all that a step whose energy rises (energy_excess) may take while
  /// its increments are still above the tolerance and shrinking.
  static constexpr int kEnergyNewtonCap = 24;
  /// Joint residual (m) below which a step need not iterate on for its joints (while its
  /// iterations shrink it): the paper's joint tolerance.
  static constexpr double kJointHold = 1e-6;
  /// A step ended unconverged with a gain, at kEnergyNewtonCap or with its increments no
  /// longer shrinking (warned once).
  bool energy_cap_reported = false;
  double constraint_residual() const;
  /// The largest residual (m) of the joints with nonlinear rows (a ball joint's rows are
  /// linear: one solve leaves them at round-off).
  double nonlinear_residual() const;
  double rigid_nonlinear_residual() const;  ///< the same over rigid_nonlinear_joints (m)
  /// What project_joints closes (m): the larger of rigid_nonlinear_residual and
  /// limit_violation.
  double projection_residual() const {
    return std::max(rigid_nonlinear_residual(), limit_violation());
  }
  void consistent_start();   ///< initial accelerations of jointed systems
  double newton_iteration();
  void body_operators();
  /// Decides body i's geometric term; when it applies, appends C (and Z) to Cs (and Zs) and
  /// sets geo[i] to its index there.
  void geometric_stiffness(std::size_t i, const Mat3& A, const Mat3& P, std::vector<Mat3>& Cs,
                           std::vector<Mat12x3>& Zs);
  void dual_solve();
  /// Fills row_set with the rows of every row source at the current iterate (phase 4).
  void build_rows();
  /// After the Newton loop (joint_projection.cpp): closes the nonlinear joint rows that its
  /// iterations left open beyond kJointHold by projecting q onto C(q) = 0 in the metric of the
  /// last body operators; the velocities keep the step's increment u.
  void project_joints();
  /// Projections a step may take (each must at least halve the residual).
  static constexpr int kJointProjections = 3;
  /// Set while project_joints solves: build_rows zeroes the right-hand side of compliant and
  /// force-bounded rows (springs, drives: a projection is not a force) and the dual solves
  /// with projection_dual.
  bool projecting = false;
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
  /// Reads save_contacts' output of state version `version`.
  std::vector<Contact> read_contacts(detail::ByteReader& in, std::uint32_t version) const;
  std::vector<PairContact> read_pair_contacts(detail::ByteReader& in) const;

  // Soft bodies (soft_bodies.cpp): FEM solids stepped in lockstep with the Newton loop.
  /// A node held at body point p (body frame: COM origin, principal axes; m).
  struct SoftLink {
    int node = 0;
    std::int32_t body = -1;  ///< -1: the world
    Vec3 p = Vec3::Zero();
  };
  /// A soft body's surface point touching a body (found at the step's start, kept for the
  /// step): a node, or a point of a surface face (its corners weighted) that a body's edge or
  /// corner nears between the nodes.
  struct SoftContact {
    int node = 0;               ///< the node (of a face point: its corner of most weight)
    int corners = 1;            ///< 1: the node alone; 3: a face point
    std::array<int, 3> nodes{};      ///< the face's corners (nodes[0] = node for a node)
    Vec3 weights = Vec3::UnitX();  ///< their weights at the point (sum 1)
    /// A face point's round body: its core, body frame (m): a capsule's axis from core0 to
    /// core1, a sphere's centre (both).
    Vec3 core0 = Vec3::Zero(), core1 = Vec3::Zero();
    std::int32_t body = 0;      ///< the body it touches (any kind)
    Vec3 p = Vec3::Zero();      ///< the touched point, body frame (COM, principal axes; m)
    /// The normal row's point: the core point of a round body (its centre, or on its axis)
    /// under p, body frame (m); p on other shapes.
    Vec3 pn = Vec3::Zero();
    double offset = 0;          ///< the round body's radius (m): the gap is taken less it
    Vec3 n = Vec3::UnitZ();     ///< world: normal from the body towards the node
    Vec3 t1 = Vec3::UnitX(), t2 = Vec3::UnitY();  ///< world tangents
    double mu = 0;              ///< friction coefficient (0 without friction)
    double s0 = 0;              ///< gap at the step's start (m)
    Vec3 x0 = Vec3::Zero();     ///< node position at the step's start (m)
    Vec3 c0 = Vec3::Zero();     ///< the body point at the step's start (m)
    std::array<double, 3> lambda{};  ///< multipliers (N): normal, t1, t2
    /// In the iteration's working set: its rows are solved (soft_iteration). Points far
    /// from touching stay out until the increments would carry them in.
    bool in_set = false;
  };
  /// A coupling row of the soft bodies' iteration: d . x_node - d . x_body(p) (+ offset).
  struct SoftRow {
    std::uint32_t soft = 0;
    int node = 0;               ///< attachments: the node; contacts: as SoftContact
    int corners = 1;            ///< nodes the row's soft point combines (1 or 3)
    std::array<int, 3> nodes{};
    Vec3 weights = Vec3::UnitX();
    Vec3 d = Vec3::Zero();      ///< row direction, world (unit)
    std::int32_t body = -1;     ///< dynamic body of the other side, or -1 (fixed side)
    Vec3 p = Vec3::Zero();      ///< its point, body frame (m)
    double value = 0;           ///< row value at the iterate (m)
    int axis = -1;              ///< contact rows: 0 normal, 1 and 2 tangents; -1 attachment
    double s0 = 0;              ///< contact rows: the gap at the step's start (m)
  };
  /// The point of `corners` nodes with `weights` in the positions (or increments) x (3N).
  static Vec3 soft_point(const Eigen::VectorXd& x, int corners, const std::array<int, 3>& nodes,
                         const Vec3& weights) {
    if (corners == 1) return x.segment<3>(3 * nodes[0]);
    Vec3 p = Vec3::Zero();
    for (int k = 0; k < corners; ++k) p += weights[k] * x.segment<3>(3 * nodes[k]);
    return p;
  }
  struct SoftBody {
    std::string name;
    std::unique_ptr<fem::FemSolid> solid;
    std::vector<int> surface;     ///< nodes on the boundary faces (contact candidates)
    /// The boundary faces, corners ordered so (x1 - x0) x (x2 - x0) points out of the solid.
    std::vector<std::array<int, 3>> faces;
    std::vector<SoftContact> contacts;  ///< contacts of the step
    std::vector<SoftContact> contacts_prev;  ///< the last step's (warm starts)
    double friction = 0;          ///< Coulomb coefficient of its material
    bool face_contacts = true;    ///< faces touch spheres and capsules (SoftBodyDef)
    std::vector<SoftLink> links;  ///< attachments to dynamic bodies (constraint rows)
    std::vector<SoftLink> pins;   ///< attachments to the world, static or kinematic bodies
    Eigen::VectorXd dx;           ///< the Newton increment of the iteration (m, 3N)
    SoftBody() = default;
    SoftBody(SoftBody&&) noexcept = default;
    SoftBody& operator=(SoftBody&&) noexcept = default;
    SoftBody(const SoftBody& o);  ///< deep copy (clone): a new solid in the same state
    SoftBody& operator=(const SoftBody& o);
  };
  std::vector<SoftBody> soft_bodies;
  /// Newton iterations of a step with soft bodies at most: their elasticity is nonlinear at
  /// any step size, so they iterate to settings.tolerance whatever newton_iterations says.
  static constexpr int kSoftNewtonCap = 30;
  double soft_increment = 0;  ///< largest node increment of the last iteration (m)
  bool soft_cap_reported = false;  ///< a step's soft loop ended unconverged (warned once)
  std::size_t soft_links = 0;  ///< attachments to dynamic bodies, all soft bodies
  bool soft_touch_dynamic = false;  ///< a soft body's contact this step is on a dynamic body
  detail::ContactRows soft_rows;     ///< the coupling rows on dynamic bodies (iteration)
  std::vector<SoftRow> soft_row_list;  ///< every coupling row: contact points, attachments
  /// Finds each soft body's contacts at the step's start (soft_begin_step).
  void soft_detect();
  /// Appends the contact points' rows (normal, t1, t2 each) to soft_row_list.
  void soft_contact_rows();
  std::vector<Vec12> soft_dy;        ///< their increment M_J^{-1} G^T lambda per body
  const SoftBody& soft(SoftBodyId id) const;
  /// Pins to their targets at t + h, and each solid's prediction (after move_kinematic).
  void soft_begin_step();
  /// One Newton iteration of every soft body, its attachments solved with the affine
  /// increment y (which they correct): the rows' Schur complement over the joint solve plus
  /// the solids' compliance. Returns the largest node increment (m).
  double soft_iteration();
  /// The coupling rows `list` solved (the first 3 * contacts.size() rows those of the
  /// contact points `contacts`, warm-started from and leaving their multipliers in them, the
  /// rest attachments): lambda per row, soft_dy the affine response (all zero without rows
  /// on dynamic bodies, then has_dy is false). Returns null, or what could not be solved.
  const char* soft_solve(const std::vector<SoftRow>& list,
                         const std::vector<SoftContact*>& contacts, Eigen::VectorXd& lambda,
                         bool& has_dy);
  void soft_end_step();
  /// Largest attachment violation (m) of soft body s now.
  double soft_residual(const SoftBody& s) const;
  /// Pose of body i's user frame at coordinates qi: the polar rotation (identity where A is
  /// degenerate) and the frame origin (m, world).
  Pose user_pose(std::size_t i, const Vec12& qi) const;
  /// jointed_body up to date (contacts and attachments read it).
  void update_jointed();
};

}  // namespace mabd
