// One time step as named phases (DESIGN section 6):
//   predict qhat -> Newton iterations (rotation, right-hand side, body solve, update)
//   -> kinematic bodies -> state check -> velocities.
// Implicit Euler as an incremental potential (paper Eq. variation_energy):
//   E(q) = 1/(2h^2) |q - qhat|^2_{M_A} + E_el(q),  qhat = q^n + h qdot^n + h^2 M_A^{-1} f_ext.
#include <algorithm>
#include <cstring>
#include <chrono>

#include <Eigen/Eigenvalues>
#include <cmath>
#include <sstream>

#include "body/affine.h"
#include "body/elasticity.h"
#include "body/rotation.h"
#include "mabd/error.h"
#include "solvers/topology.h"
#include "world/world_impl.h"

namespace mabd {

using detail::block;
using detail::LoopGuard;

namespace {

/// The geometric stiffness of a body's stress (geometric_stiffness) is applied about the
/// principal axes where it reaches this fraction of the rotational inertia / (beta h^2).
constexpr double kGeoRatio = 0.1;

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

/// Generalised mass M_A = diag(sigma, m) (x) I3 applied to v.
Vec12 mass_times(const detail::BodyModel& b, const Vec12& v) {
  Vec12 r;
  for (int k = 0; k < 3; ++k) r.segment<3>(3 * k) = b.sigma()[k] * v.segment<3>(3 * k);
  r.tail<3>() = b.mass() * v.tail<3>();
  return r;
}

/// Upper bound of the displacement (m) of any body point under the increment dq.
double displacement(const detail::BodyModel& b, const Vec12& dq) {
  const double dA = Eigen::Map<const Eigen::Matrix<double, 9, 1>>(dq.data()).norm();
  return dq.tail<3>().norm() + b.info.size * dA;
}

/// q^n moved rigidly by its own twist over h: A <- exp(h [w]) A, t <- t + h v. Starting Newton
/// here keeps the linear extrapolation's O((h w)^2) stretch out of the first iterate, so one
/// iteration already lands near the solution of the step.
/// Returns the displacement q* - q^n.
Vec12 rigid_prediction(const Vec12& q, const Vec12& qdot, double h) {
  const Twist tw = detail::twist_of(q, qdot);
  const double angle = tw.angular.norm() * h;
  Mat3 dR = Mat3::Zero();  // exp(h [w]) - I
  if (angle > 0) dR = Eigen::AngleAxisd(angle, tw.angular.normalized()).toRotationMatrix() - Mat3::Identity();
  return detail::make_q(dR * detail::affine_A(q), h * tw.linear);
}

/// Dynamic bodies of the components whose joints close a loop between bodies (more joints
/// between dynamic bodies than bodies minus one). A chain closed only through the world or a
/// static body (block-tridiagonal dual, the paper's large chains) does not count.
std::vector<std::uint32_t> loop_bodies(const std::vector<detail::BodyModel>& bodies,
                                       const std::vector<detail::JointModel>& joints) {
  std::vector<char> movable(bodies.size());
  for (std::size_t i = 0; i < bodies.size(); ++i) movable[i] = bodies[i].dynamic();
  std::vector<detail::Edge> edges;
  edges.reserve(joints.size());
  for (const auto& j : joints) edges.push_back({j.a, j.b});
  auto moves = [&](int body) { return body >= 0 && movable[body]; };
  std::vector<std::uint32_t> out;
  for (const auto& c : detail::analyse_topology(bodies.size(), movable, edges)) {
    std::size_t internal = 0;
    for (std::uint32_t j : c.joints) internal += moves(edges[j].a) && moves(edges[j].b);
    if (internal >= c.bodies.size()) out.insert(out.end(), c.bodies.begin(), c.bodies.end());
  }
  return out;
}

}  // namespace

void World::step() {
  Impl& w = *impl_;
  const auto start = std::chrono::steady_clock::now();
  if (w.steps == 0 && !w.joints.empty() &&
      w.settings.time_integration == TimeIntegration::GeneralizedAlpha) {
    w.consistent_start();
  }
  w.advance();
  w.stats.wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

void World::Impl::advance(bool trial) {
  auto t_phase = Clock::now();
  if (settings.threads > 1 && !pool) pool.workers = std::make_unique<detail::ThreadPool>(settings.threads);
  refresh_coefs();
  q_prev = q;
  impact.assign(bodies.size(), 0);
  iterative_stalled = false;
  stats.body_ms = stats.rows_ms = stats.dual_ms = stats.check_ms = stats.contact_ms = 0;
  stats.soft_ms = 0;
  detect_contacts();
  stats.detect_ms = ms_since(t_phase);
  t_phase = Clock::now();
  limit_smooth.clear();
  predict();
  move_kinematic();
  if (!soft_bodies.empty()) soft_begin_step();
  LoopGuard& guard = loop_guard;
  if (guard.joints_seen != joints.size() || guard.bodies_seen != bodies.size()) {
    guard.bodies = loop_bodies(bodies, joints);
    guard.joints_seen = joints.size();
    guard.bodies_seen = bodies.size();
  }
  start_energy_check();
  stats.predict_ms = ms_since(t_phase);
  int iterations = 0;
  double residual = 0;
  int slow = 0;  // iterations in a row that did not halve the increment
  int stalled = 0;  // energy checks in a row after such an iteration, the excess repeating
  // The last two energy checks' excess (J): the last, and the one before it.
  double excess_before = NAN, excess_before2 = NAN;
  // On the loop bodies: kinetic energy at the start of the step; largest increment and work
  // sum_i qdot_i . M_i y_i of the last iteration.
  double loop_energy = 0, loop_last = 0, work_last = 0;
  for (std::uint32_t i : guard.bodies) loop_energy += 0.5 * qdot[i].dot(mass_times(bodies[i], qdot[i]));
  // Time of the checks: the loop measures, constraint residuals and limit violations.
  auto checked = [&](auto&& f) {
    const auto t0 = Clock::now();
    const auto result = f();
    stats.check_ms += ms_since(t0);
    return result;
  };
  auto iterate = [&] {
    const double before = residual;
    residual = newton_iteration();
    ++iterations;
    slow = iterations > 1 && residual > 0.5 * before ? slow + 1 : 0;
    checked([&] {
      loop_last = work_last = 0;
      for (std::uint32_t i : guard.bodies) {
        loop_last = std::max(loop_last, displacement(bodies[i], y[i]));
        work_last += qdot[i].dot(mass_times(bodies[i], y[i]));
      }
      return 0;
    });
  };
  bool converged = false;
  while (iterations < settings.newton_iterations) {
    iterate();
    if (iterations < settings.newton_iterations && residual <= settings.tolerance &&
        checked([&] { return constraint_residual(); }) <= settings.tolerance) {
      converged = true;
      break;
    }
  }
  // Soft bodies iterate to the tolerance (their elasticity is nonlinear at any step size: one
  // linearised iteration can gain energy), within kSoftNewtonCap iterations in all.
  while (!soft_bodies.empty() && soft_increment > settings.tolerance &&
         iterations < kSoftNewtonCap) {
    iterate();
  }
  if (!soft_bodies.empty() && soft_increment > settings.tolerance && !trial &&
      !soft_cap_reported) {
    // The step is taken unconverged: it may gain energy. Said once per world.
    std::ostringstream m;
    m << "step " << steps + 1 << ": the soft bodies' Newton loop stopped at " << iterations
      << " iterations with a node increment of " << soft_increment << " m (tolerance "
      << settings.tolerance << " m); such steps may gain energy (a smaller dt converges sooner)";
    warnings.push_back(m.str());
    soft_cap_reported = true;
  }
  // Up to four more iterations: limits hold (a step that still violates one beyond kJointHold,
  // its rows nonlinear in q and linearised once per iteration, iterates again), and joint
  // loops take one more while the remainder of the capped iterations drifts their energy
  // (LoopGuard), or to measure that drift when due. A step whose checked bodies gained energy
  // (energy_excess) iterates on while its increments are above the tolerance and still
  // shrinking, up to kEnergyNewtonCap iterations in all: a fast impact on a jointed net can
  // take ten. Once the increments are within the tolerance the iterate no longer moves, and
  // once two iterations in a row have neither halved them nor moved the gain by 1% from one
  // of the last two checks' (the iterates in a pile can circle a cycle of two) they are at
  // the floor of the step's inner solves (a complementarity problem of thousands of
  // coupled contact rows solved to its own tolerance): in either case more iterations cannot
  // remove the gain.
  // Under implicit Euler the energy check, where it covers every loop body, already iterates
  // on exactly when the step gains energy: the guard's bound (the remainder's work taken in
  // absolute value) would add an iteration to steps that lose it (net_100_cylinder: every
  // step once the net is in contact).
  const bool loops_checked =
      settings.time_integration == TimeIntegration::ImplicitEuler && energy_check &&
      std::all_of(guard.bodies.begin(), guard.bodies.end(),
                  [&](std::uint32_t i) { return impact_reach[articulation[i]] != 0; });
  bool loop_extra = !converged && !guard.bodies.empty() && !loops_checked &&
                    loop_last > settings.tolerance &&
                    (guard.drift > LoopGuard::kDrift || guard.wait <= 0);
  // The joints hold too: hinge, universal, prismatic and fixed rows are nonlinear in q
  // (DESIGN section 2), linearised once per iteration, and an iteration that turns a body
  // leaves them open by about the square of its turn. A step iterates on while they are
  // open beyond kJointHold (or the tolerance, if larger) and each iteration at least halves
  // them: not where a solver's own floor holds them (an iterative dual at its tolerance), nor
  // where contacts switch from one iteration to the next (project_joints closes what is left).
  // A step with contacts between dynamic bodies leaves both to project_joints instead: those
  // contacts switch from one iteration to the next, so the joints do not shrink (in the
  // falling-joints pile an iteration for them left them open as before), and an iteration
  // there costs a complementarity solve over the contacts, the projection a joint solve.
  const bool projected = !pair_contacts.empty() && soft_bodies.empty();
  const double joint_hold = std::max(settings.tolerance, kJointHold);
  double joint_before = INFINITY;
  const auto joints_open = [&] {
    if (converged || nonlinear_joints.empty() || projected) return false;
    const double open = checked([&] { return nonlinear_residual(); });
    const bool shrinking = open <= 0.5 * joint_before;
    joint_before = open;
    return open > joint_hold && shrinking;
  };
  // Limits alike: iterated on while violated beyond the same hold and each iteration at least
  // halves the violation. A complementarity problem of thousands of coupled contact rows
  // solved by sweeps leaves them at its own floor (about 5e-8 m in the falling-joints pile,
  // where the rule of the tolerance took the four extra iterations at every step).
  double limit_before = INFINITY;
  const auto limits_open = [&] {
    if (limited_joints.empty() || projected) return false;
    const double open = checked([&] { return limit_violation(); });
    const bool shrinking = open <= 0.5 * limit_before;
    limit_before = open;
    return open > joint_hold && shrinking;
  };
  for (int extra = 0;; ++extra) {
    // Past the four, a step still violating a limit goes on to the energy check like any other.
    bool more = extra < 4 && (loop_extra || limits_open() || joints_open());
    const double excess = more ? NAN : checked([&] { return energy_excess(); });
    if (excess > 0) {
      const auto repeats = [&](double e) { return std::abs(excess - e) <= 0.01 * excess; };
      stalled = slow > 0 && (repeats(excess_before) || repeats(excess_before2)) ? stalled + 1 : 0;
      more = residual > settings.tolerance && stalled < 2;
      const bool capped = more && iterations >= kEnergyNewtonCap;
      if (capped || (!more && residual > settings.tolerance)) {
        if (!trial && !energy_cap_reported) {
          // The step is taken unconverged with the gain. Said once per world.
          std::ostringstream m;
          m << "step " << steps + 1 << ": the Newton loop stopped at " << iterations
            << " iterations";
          if (!capped) m << " (its increments no longer shrinking, at " << residual << " m)";
          m << " with ";
          if (settings.time_integration == TimeIntegration::ImplicitEuler) {
            m << "its bodies holding " << energy_gain()
              << " J more than at the step's start plus the moving colliders' work";
          } else {
            m << "the contact bodies' elastic energy above what the step can give them";
          }
          m << "; such steps may gain energy (a smaller dt converges sooner)";
          warnings.push_back(m.str());
          energy_cap_reported = true;
        }
        if (capped) break;
      }
    }
    excess_before2 = excess_before;
    excess_before = excess;
    if (!more) break;
    iterate();
    if (!loop_extra) continue;
    loop_extra = false;
    // The increment just taken is the remainder the capped iterations left: stopping before
    // it, its work on the velocities times c / h (c = gamma / beta, 1 for implicit Euler: the
    // velocity changes by c / h times a position remainder) would have stayed in the step's
    // energy. Per second, relative to the loops' kinetic energy, averaged over measurements.
    const Alpha p = alpha();
    const double h = settings.dt;
    if (loop_energy > 0) {
      const double drift = p.gamma / p.beta / (h * h) * std::abs(work_last) / loop_energy;
      guard.drift += 0.125 * (drift - guard.drift);
    }
    guard.interval = guard.drift > LoopGuard::kDrift
                         ? 1
                         : std::min(2 * guard.interval, LoopGuard::kMaxInterval);
    guard.wait = guard.interval;
  }
  if (!trial) --guard.wait;
  t_phase = Clock::now();
  if (!trial && !converged) project_joints();
  try {
    check_state();
  } catch (...) {
    q = q_prev;  // leave the world at the last valid step
    throw;
  }
  stats.check_ms += ms_since(t_phase);
  if (trial) return;
  t_phase = Clock::now();
  contact_stats();
  if (!soft_bodies.empty()) soft_end_step();
  finish_step();
  update_joint_state();
  stats.newton_iterations = iterations;
  stats.residual = residual;
  stats.finish_ms = ms_since(t_phase);
}

void World::Impl::start_energy_check() {
  impact_bodies.clear();
  impact_elastic0 = impact_budget = 0;
  energy_check = false;
  const bool implicit_euler = settings.time_integration == TimeIntegration::ImplicitEuler;
  if (contact_bodies.empty() && pair_contacts.empty() && !implicit_euler) return;
  for (const auto& cb : contact_bodies) impact_bodies.push_back(cb.body);
  for (const auto& c : pair_contacts) {
    impact_bodies.push_back(c.a);
    if (bodies[c.b].dynamic()) impact_bodies.push_back(c.b);
  }
  std::sort(impact_bodies.begin(), impact_bodies.end());
  impact_bodies.erase(std::unique(impact_bodies.begin(), impact_bodies.end()),
                      impact_bodies.end());
  update_articulations();
  // Articulations that work from outside reaches: velocity and effort drives, applied wrenches
  // and wind (no potential accounts for them), and joints to a kinematic body.
  std::vector<char>& worked = impact_worked;
  worked.assign(bodies.size(), 0);
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    if (bodies[i].dynamic() && loaded[i] >= 0) worked[articulation[i]] = 1;
  }
  for (const auto& j : joints) {
    const bool velocity_drive =
        j.ex && j.extras().drive && j.extras().drive->mode == DriveMode::Velocity;
    const bool to_kinematic = (j.a >= 0 && bodies[j.a].info.kind == BodyKind::Kinematic) ||
                              (j.b >= 0 && bodies[j.b].info.kind == BodyKind::Kinematic);
    if (!velocity_drive && !to_kinematic) continue;
    for (int side : {j.a, j.b}) {
      if (side >= 0 && bodies[side].dynamic()) worked[articulation[side]] = 1;
    }
  }
  // The reach: the contact bodies' articulations (what can flow into them through contacts
  // and joints; other bodies reach them only through contacts, which carry their own
  // bodies' energy), unchecked as a whole when outside work reaches one of them. Under
  // implicit Euler, which only removes energy, every other articulation without outside work
  // too: one linearised iteration can gain energy without a contact (a heavy end whipped
  // round on a light chain).
  bool contacts_checked = true;
  for (std::uint32_t i : impact_bodies) contacts_checked &= !worked[articulation[i]];
  if (!contacts_checked) {
    // Outside work reaches the contact reach through its contacts: all of it goes unchecked.
    for (std::uint32_t i : impact_bodies) worked[articulation[i]] = 1;
    impact_bodies.clear();
  }
  std::vector<char>& in_reach = impact_reach;
  in_reach.assign(bodies.size(), 0);
  for (std::uint32_t i : impact_bodies) in_reach[articulation[i]] = 1;
  energy_check = !impact_bodies.empty();
  if (implicit_euler) {
    // (Soft bodies' attachments exchange energy with their bodies: those worlds iterate to
    // the soft bodies' tolerance instead.)
    for (std::size_t i = 0; i < bodies.size() && soft_bodies.empty(); ++i) {
      const std::uint32_t art = articulation[i];
      if (bodies[i].dynamic() && !in_reach[art] && !worked[art]) {
        in_reach[art] = 1;
        energy_check = true;
      }
    }
    if (energy_check) impact_energy0 = impact_energy(true);
    return;
  }
  if (!energy_check) return;
  // Generalized-alpha: the contact bodies' elastic energy may rise by the kinetic energy at the
  // start of the bodies in reach and gravity's work on them up to the first iterate (the
  // inertial prediction), with a margin for that iterate's own motion.
  for (std::uint32_t i : impact_bodies) impact_elastic0 += elastic(i, q_prev[i]);
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    const auto& b = bodies[i];
    if (!b.dynamic() || !in_reach[articulation[i]]) continue;
    const Vec12& qd = qdot[i];
    double e = b.mass() * detail::block(qd, 3).squaredNorm();
    for (int k = 0; k < 3; ++k) e += b.sigma()[k] * detail::block(qd, k).squaredNorm();
    impact_budget += 0.5 * e;
    impact_budget += std::abs(b.mass() * settings.gravity.dot(detail::affine_t(q[i]) -
                                                            detail::affine_t(q_prev[i])));
  }
  impact_budget = 2 * impact_budget + 1e-9;
}

double World::Impl::impact_energy(bool at_start) const {
  // Kinetic, gravity and elastic energy of the bodies in reach: at the start of the step, or
  // at the iterate with the implicit Euler velocity u / h.
  const double h = settings.dt;
  double e = 0;
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    const auto& b = bodies[i];
    if (!b.dynamic() || !impact_reach[articulation[i]]) continue;
    const Vec12 v = at_start ? qdot[i] : Vec12(u[i] / h);
    double k = b.mass() * detail::block(v, 3).squaredNorm();
    for (int c = 0; c < 3; ++c) k += b.sigma()[c] * detail::block(v, c).squaredNorm();
    e += 0.5 * k - b.mass() * settings.gravity.dot(detail::affine_t(at_start ? q_prev[i] : q[i]));
    e += elastic(i, at_start ? q_prev[i] : q[i]);  // the links' strain, contact or not
  }
  return e + joint_potential(at_start) + penalty_energy(at_start);
}

namespace {

/// Potential (J) of a spring of stiffness k whose force is clamped to +-f_max, at extension e:
/// 1/2 k e^2 up to the clamp, then linear (a rigid bounded row, k = inf: f_max |e|).
double clamped_spring(double k, double f_max, double e) {
  const double a = std::abs(e);
  if (!std::isfinite(f_max)) return 0.5 * k * e * e;
  if (k <= 0) return f_max * a;
  const double knee = f_max / k;
  return a <= knee ? 0.5 * k * e * e : f_max * (a - 0.5 * knee);
}

}  // namespace

bool World::Impl::joint_in_reach(const detail::JointModel& j) const {
  const int side = j.a >= 0 && bodies[j.a].dynamic() ? j.a : j.b;  // its articulation's body
  return side >= 0 && impact_reach[articulation[side]];
}

double World::Impl::joint_potential(bool at_start) const {
  // Joint springs (ball joints' too), compliant joints and position drives in reach store
  // energy (the drives' targets are fixed within a step): without it, a spring giving its
  // energy back, or a drive doing work on a contact body, would look like an energy gain.
  return joint_energy_at(at_start ? q_prev : q, true, true);
}

double World::Impl::joint_energy_at(const std::vector<Vec12>& qs, bool reach_only,
                                    bool drives) const {
  const Vec12 world_q = detail::make_q(Mat3::Identity(), Vec3::Zero());
  std::vector<detail::Row> scratch;
  double e = 0;
  for (const auto& j : joints) {
    const JointDrive* d = drives && j.ex && j.ex->drive ? &*j.ex->drive : nullptr;
    if (!(j.ex && j.ex->spring) && !d && !(j.compliance > 0)) continue;
    if (reach_only && !joint_in_reach(j)) continue;
    const Vec12& qa = j.a >= 0 ? qs[j.a] : world_q;
    const Vec12& qb = j.b >= 0 ? qs[j.b] : world_q;
    e += detail::joint_stored_energy(j, qa, qb, scratch);
    double theta = 0;
    if (d && d->mode == DriveMode::Position && (d->stiffness > 0 || d->damping <= 0) &&
        detail::joint_coordinate_value(j, qa, qb, j.coord_prev, theta)) {
      e += clamped_spring(d->stiffness, d->max_force, theta - d->target);
    }
  }
  return e;
}

double World::Impl::kinematic_work() const {
  double work = 0;
  for (const auto& c : contacts) {
    if (!c.active || bodies[c.collider].info.kind != BodyKind::Kinematic) continue;
    work += contact_force(c).dot(detail::point(q[c.collider], c.pc) -
                                 detail::point(q_prev[c.collider], c.pc));
  }
  return work;
}

double World::Impl::energy_gain() const {
  if (!energy_check || settings.time_integration != TimeIntegration::ImplicitEuler) return 0;
  return impact_energy(false) - impact_energy0 - kinematic_work();
}

double World::Impl::energy_excess() const {
  if (!energy_check) return 0;
  if (settings.time_integration == TimeIntegration::ImplicitEuler) {
    // Implicit Euler only removes energy: an iterate with more than the step began with, plus
    // what moving colliders put in, is not converged (a hard impact linearised once).
    return energy_gain() - 1e-9 * (std::abs(impact_energy0) + 1.0);
  }
  double e = 0;
  for (std::uint32_t i : impact_bodies) e += elastic(i, q[i]);
  return e - impact_elastic0 - impact_budget;
}

namespace {

/// |C(q)|_inf of the own rows of the joints `ids` lists (every joint when `ids` is null), at
/// the current iterate (m).
template <class Impl>
double worst_type_residual(const Impl& w, const std::vector<std::uint32_t>* ids) {
  double worst = 0;
  std::vector<detail::Row> scratch;
  const std::size_t n = ids ? ids->size() : w.joints.size();
  for (std::size_t k = 0; k < n; ++k) {
    const auto& j = w.joints[ids ? (*ids)[k] : k];
    worst = std::max(worst, detail::type_residual(j, w.joint_q(j.a), w.joint_q(j.b), scratch));
  }
  return worst;
}

}  // namespace

// |C(q)|_inf of the joints' own rows at the current iterate (m); 0 without joints.
double World::Impl::constraint_residual() const { return worst_type_residual(*this, nullptr); }

double World::Impl::nonlinear_residual() const {
  return worst_type_residual(*this, &nonlinear_joints);
}

double World::Impl::rigid_nonlinear_residual() const {
  return worst_type_residual(*this, &rigid_nonlinear_joints);
}

// Largest violation (m) of the limit rows (hinge / prismatic ranges, cone and twist) at
// the current iterate; 0 without limits.
double World::Impl::limit_violation() const {
  double worst = 0;
  std::vector<detail::Row> tmp;
  for (std::uint32_t ji : limited_joints) {
    const auto& j = joints[ji];
    tmp.clear();
    detail::extra_rows(j, joint_q(j.a), joint_q(j.b), settings.dt, tmp);
    for (const auto& r : tmp) {
      if (r.kind == detail::RowKind::Lower) worst = std::max(worst, -r.c);
    }
  }
  return worst;
}

// The initial accelerations of jointed bodies are not known consistently: the free rigid
// motion's acceleration ignores the joint forces, and generalized-alpha would carry that
// error as a decaying ringing of the joint forces. Trial first steps measure the part of the
// end-of-step acceleration that the free rigid motion does not explain (the joint forces)
// and add it to the initial acceleration; a relaxed fixed-point iteration.
void World::Impl::consistent_start() {
  // Trial steps change only q, the step scratch and qddot (advance(true) skips finish_step):
  // velocities, loads, targets and joint state need no copies; q^n comes back from q_prev.
  // acc = qddot at the start of every pass (the relaxed fixed point below). They are equal
  // before the first step too (as add_body sets them), and then qddot's own array keeps the
  // initial acc meanwhile (qddot_of reads acc): no copy of it.
  const std::size_t n = bodies.size();
  const bool equal = n == 0 || std::memcmp(acc.data(), qddot.data(), n * sizeof(Vec12)) == 0;
  std::vector<Vec12> acc_copy;
  if (!equal) acc_copy = acc;
  const std::vector<Vec12>& acc0 = equal ? qddot : acc_copy;
  struct Restore {
    bool& flag;
    ~Restore() { flag = false; }
  } restore{qddot_is_acc};
  qddot_is_acc = equal;
  for (int pass = 0; pass < 4; ++pass) {
    advance(/*trial=*/true);
    for (std::size_t i = 0; i < n; ++i) {
      if (!bodies[i].dynamic()) continue;
      // End-of-step acceleration and velocity as finish_step would set them (before the
      // impact projection: the acceleration is the smooth one either way).
      Vec12 qdd_new, a_new, v_new;
      alpha_update(i, qdd_new, a_new, v_new);
      const Vec3 w1 = detail::twist_of(q[i], v_new).angular;
      const Vec12 joint_part =
          qdd_new - detail::rigid_acceleration(q[i], bodies[i].sigma(), w1, minv_fext(i).tail<3>());
      acc[i] = 0.5 * (acc[i] + acc0[i] + joint_part);
      if (!equal) qddot[i] = acc[i];
    }
    std::swap(q, q_prev);  // back to q^n
  }
  if (equal) qddot = acc;
}

// Phase 1: the inertial target qhat (as d_hat = qhat - q^n) and the first Newton iterate,
// the current motion continued rigidly.
//   generalized-alpha: qhat = q + h qdot + h^2 (1/2 - beta) a
//                             + beta' h^2 (af qddot - am a) / (1 - af) + beta' h^2 M^{-1} f_ext
//   implicit Euler:    qhat = q + h qdot + h^2 M^{-1} f_ext
// qhat - q^n of body i (its inputs qdot, acc, qddot and the loads change only in finish_step,
// so it is recomputed where needed rather than stored).
World::Impl::StepCoefs::StepCoefs(const WorldSettings& s)
    : dt(s.dt), rho(s.spectral_radius), integration(s.time_integration) {
  const double h = s.dt;
  if (integration == TimeIntegration::ImplicitEuler) {
    bh2 = h * h;
  } else {
    const double r = s.spectral_radius;
    Alpha& p = alpha;
    p.am = (2 * r - 1) / (r + 1);
    p.af = r / (r + 1);
    p.gamma = 0.5 + p.af - p.am;
    p.beta = 0.25 * (p.gamma + 0.5) * (p.gamma + 0.5);
    bh2 = (1 - p.af) * p.beta * h * h / (1 - p.am);
    c_acc = h * h * (0.5 - p.beta) - bh2 * p.am / (1 - p.af);
    c_qdd = bh2 * p.af / (1 - p.af);
  }
  ih2 = 1.0 / bh2;
}

Vec12 World::Impl::d_hat(std::size_t i) const {
  const bool current = coefs.fits(settings);
  const StepCoefs fresh = current ? StepCoefs() : StepCoefs(settings);
  const StepCoefs& c = current ? coefs : fresh;
  Vec12 d = c.dt * qdot[i] + c.bh2 * minv_fext(i);
  if (c.integration == TimeIntegration::GeneralizedAlpha) {
    d += c.c_acc * acc[i] + c.c_qdd * qddot_of(i);
  }
  return d;
}

// Effort drives, at the configuration the step starts from: a hinge's torque tau about its
// axis on body b and -tau on body a (wrench_force: the rigid response, no strain); a
// prismatic joint's force f along its axis at b's anchor point and -f at a's.
void World::Impl::gather_efforts() {
  effort_force.clear();
  effort_torque.clear();
  for (const auto& j : joints) {
    if (!j.ex || !j.extras().drive || j.extras().drive->mode != DriveMode::Effort) continue;
    if (j.type != JointType::Hinge && j.type != JointType::Prismatic) continue;
    const JointDrive& d = *j.extras().drive;
    const double tau = std::clamp(d.target, -d.max_force, d.max_force);
    if (tau == 0) continue;
    if (effort_force.empty()) {
      effort_force.assign(bodies.size(), Vec3::Zero());
      effort_torque.assign(bodies.size(), Vec3::Zero());
    }
    const Vec3 n = (detail::affine_A(joint_q(j.a)) * j.ax->na).normalized();
    auto load = [&](int body, const Vec3& anchor, double sign) {
      if (body < 0 || !bodies[body].dynamic()) return;
      if (j.type == JointType::Hinge) {
        effort_torque[body] += sign * tau * n;
      } else {
        const Vec3 f = sign * tau * n;
        effort_force[body] += f;
        effort_torque[body] += (detail::point(q[body], anchor) - detail::affine_t(q[body])).cross(f);
      }
    };
    load(j.a, j.pa, -1.0);
    load(j.b, j.pb, 1.0);
  }
}

void World::Impl::predict() {
  const double h = settings.dt;
  const std::size_t n = bodies.size();
  u.resize(q.size());
  loaded.assign(q.size(), -1);
  loaded_minv_fext.clear();
  const bool wind = !settings.wind.velocity.isZero(0);
  gather_efforts();
  // M^-1 f_ext of the bodies under loads, gathered per range and joined in body order.
  const int parts = range_count(n);
  std::vector<std::vector<std::pair<std::uint32_t, Vec12>>> loads(static_cast<std::size_t>(parts));
  for_ranges(n, parts, [&](int part, std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      const auto& b = bodies[i];
      if (!b.dynamic()) continue;
      const Vec3 f0 = pending_force(i);
      Vec3 f_i = wind ? Vec3(f0 + wind_force(i)) : f0;
      Vec3 t_i = pending_torque(i);
      if (!effort_force.empty()) {
        f_i += effort_force[i];
        t_i += effort_torque[i];
      }
      if (!f_i.isZero(0) || !t_i.isZero(0)) {
        Vec12 minv_f = Vec12::Zero();
        minv_f.tail<3>() = settings.gravity;
        const Vec12 f_ext = detail::wrench_force(q[i], t_i, f_i);
        for (int k = 0; k < 3; ++k) minv_f.segment<3>(3 * k) = f_ext.segment<3>(3 * k) / b.sigma()[k];
        minv_f.tail<3>() += f_ext.tail<3>() / b.mass();
        loads[part].emplace_back(static_cast<std::uint32_t>(i), minv_f);
      }
      u[i] = rigid_prediction(q[i], qdot[i], h);
      q[i] += u[i];
    }
  });
  for (const auto& list : loads) {
    for (const auto& [i, minv_f] : list) {
      loaded[i] = static_cast<std::int32_t>(loaded_minv_fext.size());
      loaded_minv_fext.push_back(minv_f);
    }
  }
}

// Phase 2-3: rotation, right-hand side f = -grad E and y = H^{-1} f for every body.
//   co-rotated: H^{-1} = D(R) Hb^{-1} D(R)^T (paper Eq. abd_final; Alg. 1 when normalized);
//   vanilla ABD: H = M_A/(beta h^2) + Hessian of k |A A^T - I|^2, assembled and inverted.
void World::Impl::body_operators() {
  ++operator_stamp;  // every contact operator and dual matrix is built again
  resolvable.solver = nullptr;
  const double ih2 = inv_beta_h2();
  const bool polar = settings.rotation == RotationMode::Polar;
  const bool vanilla = settings.integrator == IntegratorMode::Vanilla;
  const std::size_t n = bodies.size();
  rot.resize(n);
  y.resize(n);
  geo.assign(n, -1);
  if (vanilla) vanilla_inv.resize(n);
  // With several ranges the geometric terms are gathered per range, numbered in body order
  // (as one range numbers them), then the bodies are solved; with one, in one sweep.
  const int parts = range_count(n);
  geo_parts.resize(static_cast<std::size_t>(parts));
  for (auto& g : geo_parts) g.C.clear(), g.Z.clear(), g.first = 0;
  for_ranges(n, parts, [&](int part, std::size_t begin, std::size_t end) {
    auto& Cs = geo_parts[part].C;
    auto& Zs = geo_parts[part].Z;
    for (std::size_t i = begin; i < end; ++i) {
      const auto& b = bodies[i];
      if (!b.dynamic()) continue;
      const Mat3 A = detail::affine_A(q[i]);
      Vec12 f = -ih2 * mass_times(b, u[i] - d_hat(i));
      Mat3 P;  // dE_el/dA
      if (vanilla) {
        detail::Mat12 H = detail::Mat12::Zero();
        H.topLeftCorner<9, 9>() = detail::orthogonality_hessian(A, b.k_vanilla());
        for (int k = 0; k < 3; ++k) H.block<3, 3>(3 * k, 3 * k).diagonal().array() += b.sigma()[k] * ih2;
        H.bottomRightCorner<3, 3>().diagonal().array() += b.mass() * ih2;
        vanilla_inv[i] = Eigen::LDLT<detail::Mat12>(H).solve(detail::Mat12::Identity());
        P = detail::orthogonality_gradient(A, b.k_vanilla());
      } else if (polar) {
        Mat3& R = rot[i];
        if (!detail::polar_rotation(A, R)) R = Mat3::Identity();  // caught by check_state
        P = b.volume() * detail::corotated_stress(A, R, b.mu(), b.lambda());
      } else {
        rot[i] = A;
        P = b.volume() * detail::stvk_stress(A, b.mu(), b.lambda());
      }
      f.head<9>() -= Eigen::Map<const Eigen::Matrix<double, 9, 1>>(P.data());
      // Vanilla's exact Hessian already holds the stress term: no geometric correction.
      if (!vanilla) geometric_stiffness(i, A, P, Cs, Zs);
      if (!contact_of.empty() && contact_of[i] >= 0) contact_bodies[contact_of[i]].f = f;
      y[i] = parts == 1 ? solve_body(i, f) : f;
    }
  });
  if (parts == 1) return;
  for (int k = 1; k < parts; ++k) {
    geo_parts[k].first =
        geo_parts[k - 1].first + static_cast<std::int32_t>(geo_parts[k - 1].C.size());
  }
  for_ranges(n, parts, [&](int part, std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      if (!bodies[i].dynamic()) continue;
      if (geo[i] >= 0) geo[i] += geo_parts[part].first;
      y[i] = solve_body(i, y[i]);
    }
  });
}

// The co-rotated Hb drops the stress-dependent (geometric) part of the elastic Hessian. On
// the linear rotation directions dq = E(A) theta (da_k = theta x a_k) a stress tau = P A^T
// (Kirchhoff, J) stiffens the body by K3 = tr(tau) I - tau. For light, slender bodies under
// large joint forces K3 exceeds the rotational inertia / h^2 and Newton with Hb alone
// diverges (seen on long light chains at h = 1e-2); the rank-3 Woodbury correction keeps
// the constant factor:
//   (H + E K3 E^T)^{-1} = H^{-1} - Z (I + K3 E^T Z)^{-1} K3 Z^T,  Z = H^{-1} E.
// K3 is clamped to its positive part (compression would make H indefinite).
// Implicit Euler with polar rotations takes the exact term instead (corotated_twist_stiffness):
// with K3 Newton fails to converge on stiff slender links at large h (a free net of 0.1 m
// links, E = 1e9, h = 1/30 diverges at step 12 even with 20 iterations), with the exact term
// it converges. Generalized-alpha keeps K3, which on the rotation directions E(R) is about
// four times the exact curvature: with one Newton iteration that excess is what keeps it
// stable on long light chains (the heavy-end chain at h = 1e-2 diverges at 1.66 s with the
// exact term and runs with K3).
void World::Impl::geometric_stiffness(std::size_t i, const Mat3& A, const Mat3& P,
                                      std::vector<Mat3>& Cs, std::vector<Mat12x3>& Zs) {
  geo[i] = -1;
  const Mat3 PAt = P * A.transpose();
  const Mat3 tau = 0.5 * (PAt + PAt.transpose());  // (P A^T + A P^T) / 2
  const auto& body = bodies[i];
  const double ih2 = inv_beta_h2();
  const Vec3& sigma = body.sigma();
  const double sigma_sum = sigma.sum();
  // Cheap exit: every eigenvalue of K3 is below 2 |tau|_F.
  const double min_inertia = (sigma_sum - sigma.maxCoeff()) * ih2;
  if (2 * tau.norm() < kGeoRatio * min_inertia) return;
  Mat3 K3 = tau.trace() * Mat3::Identity() - tau;
  // Only where the dropped term is not small against the rotational inertia / (beta h^2)
  // that Hb keeps on the same directions: there Newton converges without it, and adding it
  // to a single iteration would only slow the rotation down. Compared axis by axis in the
  // body's principal frame (inertia about axis i: sigma_j + sigma_k): the diagonal of
  // R^T K3 R, all that is used of it below.
  const Mat3& R = geo_body_frame() ? rot[i] : A;
  const auto body_diagonal = [&R](const Mat3& K) {
    Vec3 d;
    for (int ax = 0; ax < 3; ++ax) d[ax] = R.col(ax).dot(K * R.col(ax));
    return d;
  };
  Vec3 k_body = body_diagonal(K3);
  double ratio = 0;
  for (int ax = 0; ax < 3; ++ax) {
    const double inertia = (sigma_sum - sigma[ax]) * ih2;
    ratio = std::max(ratio, k_body[ax] / inertia);
  }
  if (ratio < kGeoRatio) return;
  // Positive part of K3. Its eigenvalues are real, so all are >= 0 iff the coefficients of
  // its characteristic polynomial (trace, sum of 2x2 principal minors, determinant) are: the
  // common case under tension (tau positive semidefinite), which needs no eigen-decomposition.
  // The tolerances admit round-off on singular K3 (uniaxial tension) and negative eigenvalues
  // below 1e-7 tr K3.
  const double s = K3.trace();
  const double e2 = K3(0, 0) * K3(1, 1) - K3(0, 1) * K3(0, 1) + K3(0, 0) * K3(2, 2) -
                    K3(0, 2) * K3(0, 2) + K3(1, 1) * K3(2, 2) - K3(1, 2) * K3(1, 2);
  if (geo_body_frame() && settings.time_integration == TimeIntegration::ImplicitEuler) {
    k_body = body.volume() *
             detail::corotated_twist_stiffness(A, rot[i], body.mu(), body.lambda()).diagonal();
  } else if (!(s > 0) || !(e2 >= -1e-14 * s * s) || !(K3.determinant() >= -1e-14 * s * s * s)) {
    Eigen::SelfAdjointEigenSolver<Mat3> eig;
    eig.computeDirect(K3);
    K3 = eig.eigenvectors() * eig.eigenvalues().cwiseMax(0.0).asDiagonal() *
         eig.eigenvectors().transpose();
    k_body = body_diagonal(K3);
  }
  // Its diagonal in the principal frame, on the axes where it is not small against the
  // inertia. The couplings between principal axes (a stress whose axes are tilted from the
  // body's: a sheared link) carry a rotation about one axis into the others, and into the
  // least inertia most: a slender link's turn about its own axis, about 9 times lighter than
  // its swing, which nothing else resists (its joints and contact rows act on the axis). A
  // net of 3 cm links (E = 1e9) dropped on a sphere at h = 1e-2 spun its links at 12.8 rad/s
  // (a draped 63 x 63 net at up to 100 rad/s: one linearised turn of 1 rad stretched them
  // by 100%, and the net diverged); diagonal, below 1 rad/s, in fewer Newton iterations.
  Mat3 K_body = Mat3::Zero();
  for (int ax = 0; ax < 3; ++ax) {
    const double inertia = (sigma_sum - sigma[ax]) * ih2;
    if (k_body[ax] >= kGeoRatio * inertia) K_body(ax, ax) = k_body[ax];
  }
  geo[i] = static_cast<std::int32_t>(Cs.size());
  Mat3 C;
  if (geo_body_frame()) {  // in the body frame: C_b = R^T C R = (I + K3b W0)^{-1} K3b
    C = (Mat3::Identity() + K_body * factors[body.factor].W0).inverse() * K_body;
  } else {
    K3 = R * K_body * R.transpose();
    Eigen::Matrix<double, 12, 3> Z;
    for (int c = 0; c < 3; ++c) {
      Vec12 e = Vec12::Zero();
      for (int k = 0; k < 3; ++k) e.segment<3>(3 * k) = Vec3::Unit(c).cross(A.col(k));
      Z.col(c) = solve_body_base(i, e);
    }
    // E^T Z: apply E^T (theta-components of a q-vector: sum_k a_k x v_k).
    Mat3 EtZ;
    for (int c = 0; c < 3; ++c) {
      Vec3 t = Vec3::Zero();
      for (int k = 0; k < 3; ++k) t += A.col(k).cross(Vec3(Z.col(c).segment<3>(3 * k)));
      EtZ.col(c) = t;
    }
    C = (Mat3::Identity() + K3 * EtZ).inverse() * K3;
    Zs.push_back(Z);
  }
  // Symmetric in exact arithmetic; made symmetric to the bit so that H^{-1} and S are, and
  // every dual solver (each reads its own triangle of S) returns the same multipliers.
  Cs.push_back(0.5 * (C + C.transpose()));
}

Vec12 World::Impl::solve_body(std::size_t i, const Vec12& v) const {
  Vec12 x = solve_body_base(i, v);
  if (geo[i] >= 0) x += geo_correction(i, v);
  if (!contact_of.empty() && contact_of[i] >= 0) {  // contact rows: - V S_c^{-1} V^T v
    const ContactBody& cb = contact_bodies[contact_of[i]];
    if (cb.rows > 0) x -= cb.V * (cb.S_inv * (cb.V.transpose() * v));
  }
  return x;
}

// - Z C Z^T v, the geometric-stiffness term of H^{-1} v (geo[i] >= 0).
Vec12 World::Impl::geo_correction(std::size_t i, const Vec12& v) const {
  Vec12 x = Vec12::Zero();
  const Mat3& C = geo_c(i);
  if (geo_body_frame()) {  // Z C Z^T v = D(R) Z0 C_b Z0^T D(R)^T v
    const Mat3& R = rot[i];
    const auto& Z0 = factors[bodies[i].factor].Z0;
    Vec3 w = Vec3::Zero();
    for (int k = 0; k < 3; ++k) {
      w.noalias() += Z0.block<3, 3>(3 * k, 0).transpose() * (R.transpose() * block(v, k));
    }
    const Vec3 cw = C * w;
    for (int k = 0; k < 3; ++k) x.segment<3>(3 * k) -= R * (Z0.block<3, 3>(3 * k, 0) * cw);
  } else {
    const auto& Z = geo_z(i);
    x -= Z * (C * (Z.transpose() * v));
  }
  return x;
}

Mat3 World::Impl::geo_body_block(std::size_t i, const Vec3& p1, const Vec3& p2) const {
  // J(p) D(R) Z0 R^T = R Y(p) R^T
  const auto& Z0 = factors[bodies[i].factor].Z0;
  auto Y = [&](const Vec3& p) {
    return Mat3(p[0] * Z0.block<3, 3>(0, 0) + p[1] * Z0.block<3, 3>(3, 0) +
                p[2] * Z0.block<3, 3>(6, 0));
  };
  const Mat3 y1 = Y(p1);
  return y1 * geo_c(i) * (&p1 == &p2 ? y1 : Y(p2)).transpose();
}

Mat3 World::Impl::geo_point_block(std::size_t i, const Vec3& p1, const Vec3& p2) const {
  if (geo_body_frame()) {
    const Mat3& R = rot[i];
    return R * geo_body_block(i, p1, p2) * R.transpose();
  }
  const Mat3& C = geo_c(i);
  const auto& Z = geo_z(i);
  Mat3 z1, z2;
  for (int c = 0; c < 3; ++c) {
    z1.col(c) = detail::point(Z.col(c), p1);
    z2.col(c) = detail::point(Z.col(c), p2);
  }
  return z1 * C * z2.transpose();
}

Vec12 World::Impl::solve_body_base(std::size_t i, const Vec12& v) const {
  if (settings.integrator == IntegratorMode::Vanilla) return vanilla_inv[i] * v;
  const Mat3& R = rot[i];
  const bool polar = settings.rotation == RotationMode::Polar;
  // D(R) acts trivially on t: Hb is isotropic there (m/(beta h^2) I3).
  Vec12 x;  // D(R)^T v
  x.tail<3>() = v.tail<3>();
  for (int k = 0; k < 3; ++k) {
    x.segment<3>(3 * k) = polar ? Vec3(R.transpose() * block(v, k))
                                : detail::rotate_back_normalized(R, block(v, k));
  }
  const Vec12 z = factors[bodies[i].factor].solve(x);
  Vec12 out;  // D(R) z
  out.tail<3>() = z.tail<3>();
  for (int k = 0; k < 3; ++k) {
    out.segment<3>(3 * k) = polar ? Vec3(R * block(z, k)) : detail::rotate_normalized(R, block(z, k));
  }
  return out;
}

// Phases 2-6: one Newton iteration. Without joints dq = H^{-1} f body by body; with joints
// the dual solve couples them. Returns the largest point displacement of the increment (m).
double World::Impl::newton_iteration() {
  auto t0 = Clock::now();
  for (auto& cb : contact_bodies) cb.rows = 0;
  body_operators();
  if (!contact_bodies.empty()) contact_operators();
  stats.body_ms += ms_since(t0);
  // The dual phase without its row building (rows_ms, measured inside).
  auto timed_dual_solve = [&] {
    const auto t_dual = Clock::now();
    const double rows_before = stats.rows_ms;
    dual_solve();  // y <- H^{-1} (f - G^T lambda)
    stats.dual_ms += ms_since(t_dual) - (stats.rows_ms - rows_before);
  };
  // Contacts between dynamic bodies, on the Schur complement over the joint solve.
  auto timed_pair_solve = [&](bool loaded) {
    const auto t_pairs = Clock::now();
    solve_pair_contacts(loaded);
    stats.contact_ms += ms_since(t_pairs);
  };
  const bool pairs = !pair_contacts.empty();
  if (contact_bodies.empty() && !pairs) {
    if (!joints.empty()) timed_dual_solve();
  } else {
    // Contact active sets and friction cones: solve, test, and solve again while they change.
    // Only contact bodies that carry joint rows need the joint solve again after a pass:
    // the others (free bodies on the ground) take their corrected body solve alone. Contacts
    // between dynamic bodies act on the joint solve's active set (a drive saturated, a limit
    // released by a contact's push): when they would change it, the next pass solves the
    // joints under the contact forces of this one (reload) and the contacts on top.
    bool jointed = false;
    for (const auto& cb : contact_bodies) jointed |= contact_jointed(cb.body);
    const bool pair_loads = pairs && pairs_on_joints && !joints.empty();
    if (!joints.empty()) y_free = y;
    bool reload = false;
    constexpr int kContactPasses = 8;
    for (int pass = 0;; ++pass) {
      if (!joints.empty() && (pass == 0 || jointed || reload)) {
        if (reload) load_pair_forces();
        timed_dual_solve();
      }
      if (pairs) {
        y_pairs_before = y;
        timed_pair_solve(reload);
      }
      t0 = Clock::now();
      const bool changed = !contact_bodies.empty() && update_contacts(pass + 1 == kContactPasses);
      reload = pair_loads && pass + 1 < kContactPasses && pair_joint_sets_change();
      if (changed) {
        if (pairs) y.swap(y_pairs_before);  // without the pair contacts' share
        if (!joints.empty() && jointed) y = y_free;
        for (auto& cb : contact_bodies) {
          if (!cb.dirty) continue;
          contact_operator(cb);
          if (!joints.empty()) y_free[cb.body] = y[cb.body];
        }
      } else if (reload && pairs) {
        y.swap(y_pairs_before);
      }
      stats.body_ms += ms_since(t0);
      if (!changed && !reload) break;
      if (pass + 1 >= kContactPasses) {  // the operators just rebuilt still need their solves
        if (!joints.empty() && jointed) timed_dual_solve();
        if (pairs) timed_pair_solve(false);
        break;
      }
    }
    // A new contact needs no impact projection: the penalty rows' spring-damper stops the
    // approach (a force of the second-order scheme like any other), and the exact model's
    // implicit Euler velocity (q' - q) / h is inelastic by itself.
  }
  // Soft bodies: their own Newton iteration, attachments correcting y.
  double soft_dx = 0;
  if (!soft_bodies.empty()) {
    const auto t_soft = Clock::now();
    soft_dx = soft_iteration();
    soft_increment = soft_dx;
    stats.soft_ms += ms_since(t_soft);
  }
  t0 = Clock::now();
  const int parts = range_count(bodies.size());
  std::vector<double> part_residual(static_cast<std::size_t>(parts), 0.0);
  for_ranges(bodies.size(), parts, [&](int part, std::size_t begin, std::size_t end) {
    double r = 0;
    for (std::size_t i = begin; i < end; ++i) {
      if (!bodies[i].dynamic()) continue;
      q[i] += y[i];
      u[i] += y[i];
      r = std::max(r, displacement(bodies[i], y[i]));
    }
    part_residual[part] = r;
  });
  stats.body_ms += ms_since(t0);
  return std::max(soft_dx, *std::max_element(part_residual.begin(), part_residual.end()));
}

// Kinematic bodies take their prescribed pose at t + h; static bodies stay.
void World::Impl::move_kinematic() {
  const double h = settings.dt, t1 = time + h;
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    const auto& b = bodies[i];
    if (b.info.kind != BodyKind::Kinematic) continue;
    if (auto target = kin_target.find(static_cast<std::uint32_t>(i)); target != kin_target.end()) {
      q[i] = q_from_pose(b, target->second);
    } else if (b.kinematics->motion) {
      q[i] = q_from_pose(b, b.kinematics->motion(t1));
    } else {
      // Constant twist: rotate about the COM by w h, translate by v h.
      const Vec3& w = b.kinematics->w;
      const double angle = w.norm() * h;
      const Mat3 dR = angle > 0 ? Mat3(Eigen::AngleAxisd(angle, w.normalized())) : Mat3::Identity();
      q[i] = detail::make_q(dR * detail::affine_A(q[i]), detail::affine_t(q[i]) + h * b.kinematics->v);
    }
  }
}

namespace {

std::string short_number(double v) {
  std::ostringstream m;
  m.precision(3);
  m << v;
  return m.str();
}

/// Generalized-alpha's nonlinear instability, as advice: it grows on fast-turning slender
/// bodies at any dt and any number of Newton iterations (README, method notes).
const char* const kAlphaAdvice =
    "time_integration \"implicit_euler\" (generalized-alpha can grow unstable on fast-turning "
    "slender bodies, at any dt and with any number of Newton iterations)";

/// The likeliest cause of body i's divergence in step `step` (1 = the first), as advice for
/// the message: a speed no step can follow (an initial velocity in the wrong units in the
/// first steps), a spring too stiff for the step, or a material too soft for the weight its
/// joint component hangs on it; else the generic remedies.
std::string divergence_advice(const std::vector<detail::BodyModel>& bodies,
                              const std::vector<detail::JointModel>& joints, const Vec12& q,
                              const Vec12& qdot, const WorldSettings& settings, std::size_t i,
                              std::int64_t step) {
  const detail::BodyModel& b = bodies[i];
  const double h = settings.dt;
  const double size = std::max(b.info.size, 1e-12);
  const double speed = detail::block(qdot, 3).stableNorm();
  const bool alpha = settings.time_integration == TimeIntegration::GeneralizedAlpha;
  if (!(speed * h <= size)) {
    const std::string moved = "it moved " + short_number(speed * h) +
                              " m in the last step, more than its own size (" +
                              short_number(size) + " m): ";
    // A run that went well for a while did not start too fast: under generalized-alpha a
    // whip that speeds up step by step is its instability (the heavy-end chain's).
    constexpr std::int64_t kStartSteps = 5;
    if (step <= kStartSteps) {
      return moved + "check its initial velocity and units, or use a smaller dt";
    }
    return moved + (alpha ? std::string("try ") + kAlphaAdvice + " or a smaller dt"
                          : std::string("use a smaller dt"));
  }
  // Stiffest spring or position drive on this body against its largest moment of inertia
  // (the least it can turn about; an axis through its centre: an estimate).
  const double inertia = std::max(b.principal_inertia().maxCoeff(), 1e-300);
  double stiffest = 0;
  std::string spring_name;
  for (const auto& j : joints) {
    if (j.a != static_cast<int>(i) && j.b != static_cast<int>(i)) continue;
    const detail::JointExtras& ex = j.extras();
    double k = ex.spring ? ex.spring->stiffness : 0;
    if (ex.drive && ex.drive->mode == DriveMode::Position) k = std::max(k, ex.drive->stiffness);
    if (k > stiffest) {
      stiffest = k;
      spring_name = j.name;
    }
  }
  const double omega = std::sqrt(stiffest / inertia);
  if (omega * h > 2) {
    return "step too large for the stiffness of joint '" + spring_name + "' (" +
           short_number(stiffest) + " N m/rad on a body of moment of inertia up to " +
           short_number(inertia) + " kg m^2: period about " +
           short_number(2 * 3.14159265358979 / omega) + " s against dt = " + short_number(h) +
           " s); use a smaller dt or a softer spring";
  }
  // Material: the load of the body's joint component (an upper bound of what it carries:
  // its mass under gravity plus the body's centripetal acceleration) against its stretch
  // stiffness E V / L^2 (strain = W L / (E V)).
  const double E = b.mu() * (3 * b.lambda() + 2 * b.mu()) / (b.lambda() + b.mu());
  double carried = 0;
  {
    std::vector<std::vector<std::uint32_t>> joints_of(bodies.size());
    for (std::uint32_t j = 0; j < joints.size(); ++j) {
      for (int body : {joints[j].a, joints[j].b}) {
        if (body >= 0) joints_of[static_cast<std::size_t>(body)].push_back(j);
      }
    }
    std::vector<char> seen(bodies.size(), 0);
    std::vector<std::size_t> todo = {i};
    seen[i] = 1;
    while (!todo.empty()) {
      const std::size_t k = todo.back();
      todo.pop_back();
      carried += bodies[k].mass();
      for (std::uint32_t j : joints_of[k]) {
        for (int other : {joints[j].a, joints[j].b}) {
          if (other < 0 || seen[static_cast<std::size_t>(other)]) continue;
          if (!bodies[static_cast<std::size_t>(other)].dynamic()) continue;
          seen[static_cast<std::size_t>(other)] = 1;
          todo.push_back(static_cast<std::size_t>(other));
        }
      }
    }
  }
  const double spin = detail::twist_of(q, qdot).angular.norm();
  const double acceleration = settings.gravity.norm() + spin * spin * size;
  const double load = carried * acceleration;
  const double strain = load * size / (E * std::max(b.volume(), 1e-300));
  if (strain > 0.05) {
    return "material too soft for its load: youngs_modulus " + short_number(E) +
           " Pa under up to " + short_number(load) + " N (" + short_number(carried) +
           " kg of jointed bodies at " + short_number(acceleration) +
           " m/s^2, gravity plus spin) strains it by about " + short_number(strain) +
           "; use a youngs_modulus of at least " + short_number(E * strain / 0.01) + " Pa";
  }
  // Slender bodies turning fast (links and nets whipping, spin about a thin axis) can make
  // generalized-alpha unstable at any dt and Newton iteration count (its known nonlinear
  // instability on stiff rotating systems); implicit Euler dissipates instead.
  if (alpha) return std::string("try ") + kAlphaAdvice + " or a smaller dt";
  return "try a smaller dt or more Newton iterations";
}

}  // namespace

// Divergence check: every body finite, not inverted and near rigid, with finite velocities and
// energies at the end of the step (computed as finish_step will).
void World::Impl::check_state() const {
  constexpr double kMaxDeviation = 1.0;  // |A^T A - I|_F; near-rigid bodies stay far below
  const bool euler = settings.time_integration == TimeIntegration::ImplicitEuler;
  // Ranges on several threads: each throws at its first bad body, and the pool rethrows the
  // lowest range's, so the message names the same body as one range would.
  for_ranges(bodies.size(), range_count(bodies.size()), [&](int, std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      const auto& b = bodies[i];
      const Mat3 A = detail::affine_A(q[i]);
      const double dev = (A.transpose() * A - Mat3::Identity()).norm();
      std::string what;
      if (!q[i].allFinite()) {
        what = "coordinates are not finite";
      } else if (A.determinant() <= 0) {
        what = "body is inverted (det A <= 0)";
      } else if (dev > kMaxDeviation) {
        std::ostringstream m;
        m << "deformation |A^T A - I| = " << dev << " exceeds " << kMaxDeviation;
        what = m.str();
      } else if (b.dynamic()) {
        // The end-of-step velocity combines the displacement, the start-of-step velocity and
        // accelerations and M^-1 f_ext with coefficients below 16 / h (generalized-alpha with a
        // spectral radius in [0, 1]; 1 / h for implicit Euler). It is computed, as finish_step
        // will, only when a bound of its kinetic energy overflows: the check costs next to
        // nothing on a sound step.
        const double h = settings.dt;
        const auto inf_norm = [](const Vec12& x) { return x.lpNorm<Eigen::Infinity>(); };
        double scale = inf_norm(u[i]) + h * inf_norm(qdot[i]) +
                       h * h * (inf_norm(acc[i]) + inf_norm(qddot_of(i)) + inf_norm(minv_fext(i)));
        if (!limit_smooth.empty()) scale += inf_norm(limit_smooth[i]);
        const double speed_bound = 64 * scale / h;
        const double energy_bound =  // 1/2 sum over 12 components of weight * speed^2
            6 * std::max(b.mass(), b.sigma().maxCoeff()) * speed_bound * speed_bound;
        if (!std::isfinite(energy_bound)) {
          Vec12 v;
          if (euler) {
            v = u[i] / h;
          } else {
            Vec12 qdd, a;
            alpha_update(i, qdd, a, v);
          }
          const double kinetic = 0.5 * v.dot(mass_times(b, v));
          if (!v.allFinite()) {
            what = "velocities are not finite";
          } else if (!std::isfinite(kinetic)) {
            what = "kinetic energy is not finite (speed " +
                   short_number(detail::block(v, 3).stableNorm()) + " m/s)";
          }
        }
        if (what.empty() &&
            !std::isfinite(b.mass() * settings.gravity.dot(detail::affine_t(q[i])))) {
          what = "potential energy is not finite";
        }
      }
      if (!what.empty()) {
        std::string name = "'" + b.info.name + "'";
        if (b.info.name.empty()) name = "#" + std::to_string(i);
        throw SimulationError("simulation diverged at step " + std::to_string(steps + 1) +
                              " (t = " + std::to_string(time + settings.dt) + " s): body " + name +
                              ": " + what + "; " +
                              divergence_advice(bodies, joints, q[i], qdot[i], settings, i,
                                                steps + 1));
      }
    }
  });
}

// Phase 7: velocities (and accelerations), clear per-step inputs, advance time.
//   generalized-alpha: qddot' = (q' - qhat) / (beta' h^2) + M^{-1} f_ext,
//     (1 - am) a' + am a = (1 - af) qddot' + af qddot,
//     qdot' = qdot + h ((1 - gamma) a + gamma a');
//   implicit Euler: qdot' = (q' - q) / h.
// Limits (nonsmooth generalized-alpha, Chen, Acary, Virlez and Bruls 2013): a limit force
// is an impulse, not an acceleration. The step's positions keep it (the limit holds), but
// qddot' and a' are those of the step without it (limit_smooth: the same step with the limit
// rows released, so without the joint forces that carried their push through the component
// either; see dual.cpp), and the rigid motion of the components held by a limit is then
// projected onto the joints and the active limits in the metric of the rigid inertia
// (impact_projection): an inelastic impact, which can only remove kinetic energy. Fed to
// the second-order update, the
// impulse would bounce the body back at up to its approach speed (gamma / beta ~ 2). Taken
// as an implicit Euler velocity (q' - q) / h of the impacted bodies with their acceleration
// memory reset (the former treatment), it weighted every other force on them by beta' ~ 0.26
// in their velocities (their elasticity 4 times softer than in their positions) and broke
// the momentum balance with their generalized-alpha neighbours: energy came and went with
// the step size.
void World::Impl::alpha_update(std::size_t i, Vec12& qdd, Vec12& a, Vec12& v) const {
  const double h = settings.dt;
  const Alpha p = alpha();
  const Vec12& u_smooth = limit_smooth.empty() ? u[i] : limit_smooth[i];
  qdd = (u_smooth - d_hat(i)) * inv_beta_h2() + minv_fext(i);
  a = ((1 - p.af) * qdd + p.af * qddot_of(i) - p.am * acc[i]) / (1 - p.am);
  v = qdot[i] + h * ((1 - p.gamma) * acc[i] + p.gamma * a);
}

void World::Impl::finish_step() {
  const double h = settings.dt;
  const bool euler = settings.time_integration == TimeIntegration::ImplicitEuler;
  for_ranges(bodies.size(), range_count(bodies.size()), [&](int, std::size_t begin, std::size_t end) {
    for (std::size_t i = begin; i < end; ++i) {
      const auto& b = bodies[i];
      if (b.dynamic() && euler) {  // a limit impact is inelastic by itself
        const Vec12 v_new = u[i] / h;
        qddot[i] = acc[i] = (v_new - qdot[i]) / h;
        qdot[i] = v_new;
      } else if (b.dynamic()) {
        Vec12 qdd_new, a_new, v_new;
        alpha_update(i, qdd_new, a_new, v_new);
        qdot[i] = v_new;
        acc[i] = a_new;
        qddot[i] = qdd_new;
      } else if (b.info.kind == BodyKind::Kinematic) {
        qdot[i] = (q[i] - q_prev[i]) / h;
      }
    }
  });
  force.clear();  // the loads applied for this step are spent
  torque.clear();
  if (!euler && !limit_smooth.empty()) impact_projection();
  kin_target.clear();
  ++steps;
  time = static_cast<double>(steps) * settings.dt;  // no accumulated round-off
}

}  // namespace mabd
