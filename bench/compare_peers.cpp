// Peer comparison: the same chain in mabd, Bullet's Featherstone multibody (btMultiBody, double
// precision, Debian libbullet-dev) and MuJoCo (Debian libmujoco-dev, when found at build time).
//
// The system: N capsule links (radius 0.01 m, 0.1 m between joint centres, density
// 1000 kg/m^3) joined end to end by ball joints, the first one pinned to the world at the
// origin, the last one carrying a heavy 0.2 m cube (density 1000 kg/m^3, 8 kg) welded to its
// end. Released straight along +x, horizontal, under gravity; no contact, no damping.
//
// For every engine the run is repeated at decreasing step sizes h (from 1e-2 s) until one is
// stable over the simulated time: every coordinate finite and the total energy never above
// its initial value by more than 10% of the energy the chain releases by hanging straight down
// (damping is allowed, a gain is not). The table reports that largest stable h and the
// wall-clock time of the whole run, and the time relative to mabd's.
//
// Usage: compare_peers [--links 1000,10000] [--seconds 2] [--engines mabd,bullet,mujoco]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <btBulletDynamicsCommon.h>
#include <BulletDynamics/Featherstone/btMultiBody.h>
#include <BulletDynamics/Featherstone/btMultiBodyConstraintSolver.h>
#include <BulletDynamics/Featherstone/btMultiBodyDynamicsWorld.h>
#include <BulletDynamics/Featherstone/btMultiBodyLink.h>

#ifdef MABD_HAVE_MUJOCO
#include <mujoco/mujoco.h>
#endif

#include "mabd/mabd.h"

namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr double kG = 9.81;

/// The chain, its mass properties computed once (mabd's own formulas) and handed to every
/// engine, so that all three integrate the same system.
struct Chain {
  int links = 1000;
  double spacing = 0.1;   ///< m between joint centres
  double radius = 0.01;   ///< m
  double end_size = 0.2;  ///< m, cube edge
  double density = 1000;  ///< kg/m^3
  double link_mass = 0, end_mass = 0;
  double link_axial = 0, link_transverse = 0, end_inertia = 0;  ///< kg m^2 about the COM

  void compute() {
    mabd::ShapeDef capsule;
    capsule.type = mabd::ShapeType::Capsule;
    capsule.radius = radius;
    capsule.length = spacing - 2 * radius;
    const mabd::MassProperties mp = mabd::compute_mass_properties(capsule, density);
    link_mass = mp.mass;
    const mabd::Mat3 I = mp.second_moment.trace() * mabd::Mat3::Identity() - mp.second_moment;
    link_axial = I(2, 2);  // capsule axis: the shape's z
    link_transverse = I(0, 0);
    end_mass = density * end_size * end_size * end_size;
    end_inertia = end_mass * end_size * end_size / 6;
  }
  double total_mass() const { return links * link_mass + end_mass; }
  double length() const { return links * spacing; }
  /// Energy released from horizontal to hanging straight down (J): the stability scale.
  double released() const {
    return kG * (links * link_mass * 0.5 * length() + end_mass * (length() + 0.5 * end_size));
  }
};

struct Run {
  bool stable = false;
  double wall_s = 0;
  double energy_change = 0;  ///< final minus initial energy, relative to Chain::released()
  std::string why;  ///< why it is not stable
};

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

/// Tracks the energy criterion of a run.
struct EnergyWatch {
  double e0 = 0, limit = 0;
  bool have_e0 = false;
  std::string why;
  double last = 0;
  bool ok(double e, double t) {
    last = e;
    if (!std::isfinite(e)) {
      why = "not finite at t = " + std::to_string(t) + " s";
      return false;
    }
    if (!have_e0) {
      e0 = e;
      have_e0 = true;
    }
    if (e - e0 > limit) {
      std::ostringstream s;
      s << "energy gain " << e - e0 << " J at t = " << t << " s";
      why = s.str();
      return false;
    }
    return true;
  }
};

// ---- mabd ---------------------------------------------------------------------------------
Run run_mabd(const Chain& c, double h, double seconds) {
  mabd::WorldSettings s;
  s.dt = h;
  s.newton_iterations = 1;
  mabd::World w(s);
  w.reserve(c.links + 1, c.links + 1);
  mabd::Material m;
  m.density = c.density;
  m.youngs_modulus = 1e8;  // the paper's chains
  const mabd::Quat along_x(Eigen::AngleAxisd(kPi / 2, mabd::Vec3::UnitY()));  // z -> x
  std::vector<mabd::BodyId> ids;
  for (int i = 0; i < c.links; ++i) {
    mabd::BodyDef b;
    b.shape.type = mabd::ShapeType::Capsule;
    b.shape.radius = c.radius;
    b.shape.length = c.spacing - 2 * c.radius;
    b.material = m;
    b.position = mabd::Vec3((i + 0.5) * c.spacing, 0, 0);
    b.orientation = along_x;
    ids.push_back(w.add_body(b));
  }
  mabd::BodyDef end;
  end.shape.type = mabd::ShapeType::Box;
  end.shape.size = mabd::Vec3::Constant(c.end_size);
  end.material = m;
  end.position = mabd::Vec3(c.length() + 0.5 * c.end_size, 0, 0);
  const mabd::BodyId end_id = w.add_body(end);
  for (int i = 0; i <= c.links; ++i) {
    mabd::JointDef j;
    j.type = i < c.links ? mabd::JointType::Ball : mabd::JointType::Fixed;
    j.body_a = i == 0 ? mabd::BodyId{} : ids[i - 1];
    j.body_b = i < c.links ? ids[i] : end_id;
    j.anchor = mabd::Vec3(i * c.spacing, 0, 0);
    w.add_joint(j);
  }
  EnergyWatch watch{0, 0.1 * c.released()};
  Run r;
  const int steps = static_cast<int>(std::lround(seconds / h));
  const auto t0 = Clock::now();
  try {
    if (!watch.ok(w.kinetic_energy() + w.potential_energy(), 0)) return r;
    for (int k = 0; k < steps; ++k) {
      w.step();
      if (!watch.ok(w.kinetic_energy() + w.potential_energy(), w.time())) {
        r.why = watch.why;
        return r;
      }
    }
  } catch (const std::exception& e) {
    r.why = e.what();
    return r;
  }
  r.wall_s = seconds_since(t0);
  r.stable = true;
  r.energy_change = (watch.last - watch.e0) / c.released();
  return r;
}

// ---- Bullet (Featherstone) ----------------------------------------------------------------
Run run_bullet(const Chain& c, double h, double seconds) {
  btDefaultCollisionConfiguration config;
  btCollisionDispatcher dispatcher(&config);
  btDbvtBroadphase broadphase;
  btMultiBodyConstraintSolver solver;
  btMultiBodyDynamicsWorld world(&dispatcher, &broadphase, &solver, &config);
  world.setGravity(btVector3(0, 0, -kG));
  const int n = c.links + 1;  // the end cube is a fixed link
  btMultiBody mb(n, 0, btVector3(0, 0, 0), /*fixedBase=*/true, /*canSleep=*/false);
  const btVector3 link_inertia(c.link_axial, c.link_transverse, c.link_transverse);
  const btVector3 half(0.5 * c.spacing, 0, 0);
  const btQuaternion identity(0, 0, 0, 1);
  for (int i = 0; i < c.links; ++i) {
    mb.setupSpherical(i, c.link_mass, link_inertia, i - 1, identity,
                      i == 0 ? btVector3(0, 0, 0) : half, half, true);
  }
  mb.setupFixed(c.links, c.end_mass, btVector3(c.end_inertia, c.end_inertia, c.end_inertia),
                c.links - 1, identity, half, btVector3(0.5 * c.end_size, 0, 0), true);
  mb.setLinearDamping(0);
  mb.setAngularDamping(0);
  mb.finalizeMultiDof();
  world.addMultiBody(&mb);
  btAlignedObjectArray<btQuaternion> scratch_q;
  btAlignedObjectArray<btVector3> scratch_m;
  // Energy: potential from the links' COM heights, kinetic from their spatial velocities
  // (link frames sit at the COM; velocities in the link frame, where the inertia is diagonal).
  auto energy = [&] {
    mb.forwardKinematics(scratch_q, scratch_m);
    double e = 0;
    for (int i = 0; i < n; ++i) {
      const btMultibodyLink& l = mb.getLink(i);
      const btVector3 v = l.m_absFrameTotVelocity.getLinear();
      const btVector3 om = l.m_absFrameTotVelocity.getAngular();
      e += l.m_mass * kG * l.m_cachedWorldTransform.getOrigin().z() +
           0.5 * l.m_mass * v.length2() +
           0.5 * (l.m_inertiaLocal.x() * om.x() * om.x() + l.m_inertiaLocal.y() * om.y() * om.y() +
                  l.m_inertiaLocal.z() * om.z() * om.z());
    }
    return e;
  };
  EnergyWatch watch{0, 0.1 * c.released()};
  Run r;
  const int steps = static_cast<int>(std::lround(seconds / h));
  const int every = std::max(1, steps / 200);  // the check is O(N); ~200 samples a run
  const auto t0 = Clock::now();
  double check_s = 0;
  for (int k = 0; k <= steps; ++k) {
    if (k > 0) world.stepSimulation(h, 0);  // maxSubSteps = 0: one fixed step of h
    if (k % every == 0 || k == steps) {
      const auto c0 = Clock::now();
      const bool ok = watch.ok(energy(), k * h);
      check_s += seconds_since(c0);
      if (!ok) {
        r.why = watch.why;
        world.removeMultiBody(&mb);
        return r;
      }
    }
  }
  r.wall_s = seconds_since(t0) - check_s;
  r.stable = true;
  r.energy_change = (watch.last - watch.e0) / c.released();
  world.removeMultiBody(&mb);
  return r;
}

// ---- MuJoCo -------------------------------------------------------------------------------
#ifdef MABD_HAVE_MUJOCO
/// MJCF of the chain: nested bodies (each link a child of the previous), a ball joint at each
/// link's start, explicit inertials, no geoms (no contact), energy computed by MuJoCo.
std::string chain_mjcf(const Chain& c, double h) {
  std::ostringstream x;
  x.precision(17);
  x << "<mujoco model=\"chain\">\n<option timestep=\"" << h << "\" gravity=\"0 0 " << -kG
    << "\"><flag contact=\"disable\" energy=\"enable\"/></option>\n<worldbody>\n";
  for (int i = 0; i < c.links; ++i) {
    x << "<body pos=\"" << (i == 0 ? 0.0 : c.spacing) << " 0 0\"><joint type=\"ball\"/>"
      << "<inertial pos=\"" << 0.5 * c.spacing << " 0 0\" mass=\"" << c.link_mass
      << "\" diaginertia=\"" << c.link_axial << " " << c.link_transverse << " "
      << c.link_transverse << "\"/>\n";
  }
  x << "<body pos=\"" << c.spacing << " 0 0\"><inertial pos=\"" << 0.5 * c.end_size
    << " 0 0\" mass=\"" << c.end_mass << "\" diaginertia=\"" << c.end_inertia << " "
    << c.end_inertia << " " << c.end_inertia << "\"/></body>\n";
  for (int i = 0; i < c.links; ++i) x << "</body>";
  x << "\n</worldbody>\n</mujoco>\n";
  return x.str();
}

Run run_mujoco(const Chain& c, double h, double seconds) {
  Run r;
  // Its joint-space mass matrix is dense along a chain: 3N dofs, (3N)^2 / 2 entries.
  const double dofs = 3.0 * c.links;
  if (dofs * dofs / 2 * 8 > 2e9) {
    r.why = "skipped: its chain mass matrix would take " +
            std::to_string(static_cast<long>(dofs * dofs / 2 * 8 / 1e9)) + " GB";
    return r;
  }
  const std::string path = "compare_peers_chain.xml";
  {
    std::ofstream f(path);
    f << chain_mjcf(c, h);
  }
  char error[1000] = "";
  mjModel* m = mj_loadXML(path.c_str(), nullptr, error, sizeof error);
  std::remove(path.c_str());
  if (!m) {
    const std::string e = error;
    // MuJoCo 2.2 reads MJCF with tinyxml2, which stops at 100 nested elements: a chain of
    // more than about 98 bodies cannot be written as nested bodies.
    r.why = e.find("DEPTH_EXCEEDED") != std::string::npos
                ? "skipped: MJCF nests one body per link, and MuJoCo 2.2's XML reader stops at "
                  "100 nested elements"
                : "MJCF not loaded: " + e.substr(0, e.find('\n'));
    return r;
  }
  mjData* d = mj_makeData(m);
  mj_forward(m, d);
  EnergyWatch watch{0, 0.1 * c.released()};
  const int steps = static_cast<int>(std::lround(seconds / h));
  const auto t0 = Clock::now();
  bool ok = watch.ok(d->energy[0] + d->energy[1], 0);
  for (int k = 0; ok && k < steps; ++k) {
    mj_step(m, d);
    ok = watch.ok(d->energy[0] + d->energy[1], d->time);
  }
  r.wall_s = seconds_since(t0);
  r.stable = ok;
  r.energy_change = (watch.last - watch.e0) / c.released();
  if (!ok) r.why = watch.why;
  mj_deleteData(d);
  mj_deleteModel(m);
  return r;
}
#endif

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) out.push_back(item);
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes = {1000, 10000};
  double seconds = 2;
  std::vector<std::string> engines = {"mabd", "bullet"};
#ifdef MABD_HAVE_MUJOCO
  engines.push_back("mujoco");
#endif
  auto fail = [](const std::string& what) {
    std::fprintf(stderr, "compare_peers: %s\n", what.c_str());
    return 2;
  };
  /// A number from the whole of `text`, or nullopt.
  auto number = [](const std::string& text) -> std::optional<double> {
    std::size_t used = 0;
    try {
      const double v = std::stod(text, &used);
      if (used == text.size() && std::isfinite(v)) return v;
    } catch (const std::exception&) {
    }
    return std::nullopt;
  };
  if (argc % 2 == 0) return fail(std::string("option ") + argv[argc - 1] + " needs a value");
  for (int a = 1; a + 1 < argc; a += 2) {
    const std::string key = argv[a], value = argv[a + 1];
    if (key == "--links") {
      sizes.clear();
      for (const auto& v : split(value)) {
        const auto n = number(v);
        if (!n || *n < 1 || *n != std::floor(*n) || *n > 1e8) {
          return fail("--links: '" + v + "' is not a whole number of links from 1 to 1e8");
        }
        sizes.push_back(static_cast<int>(*n));
      }
      if (sizes.empty()) return fail("--links: no sizes given");
    } else if (key == "--seconds") {
      const auto t = number(value);
      if (!t || *t <= 0) return fail("--seconds: '" + value + "' is not a positive number");
      seconds = *t;
    } else if (key == "--engines") {
      engines = split(value);
      for (const auto& e : engines) {
        if (e != "mabd" && e != "bullet" && e != "mujoco") {
          return fail("--engines: unknown engine '" + e + "' (known: mabd, bullet, mujoco)");
        }
      }
    } else {
      return fail("unknown option " + key + " (known: --links, --seconds, --engines)");
    }
  }
  const std::vector<double> steps = {1e-2, 5e-3, 2e-3, 1e-3, 5e-4, 2e-4, 1e-4};
  std::printf("Chain of N capsule links (0.1 m, %s) pinned at one end, an 8 kg cube welded to the "
              "other, released horizontal; %g s simulated, single thread.\n",
              "ball joints", seconds);
  std::printf("Largest stable h from {1e-2, 5e-3, 2e-3, 1e-3, 5e-4, 2e-4, 1e-4} s (finite, no "
              "energy gain above 10%% of the hanging energy E_hang);\ndE/E_hang: the energy "
              "change at the end of the run.\n\n");
  std::printf("%-8s %7s %9s %8s %10s %10s %9s %9s\n", "engine", "links", "h (s)", "steps",
              "wall (s)", "ms/step", "dE/E_hang", "vs mabd");
  for (int n : sizes) {
    Chain c;
    c.links = n;
    c.compute();
    double mabd_wall = 0;
    for (const auto& engine : engines) {
      std::function<Run(const Chain&, double, double)> run;
      if (engine == "mabd") run = run_mabd;
      if (engine == "bullet") run = run_bullet;
#ifdef MABD_HAVE_MUJOCO
      if (engine == "mujoco") run = run_mujoco;
#endif
      if (!run) {
        std::printf("%-8s %7d  not available in this build\n", engine.c_str(), n);
        continue;
      }
      Run r;
      double h_ok = 0;
      std::string last_why;
      for (double h : steps) {
        r = run(c, h, seconds);
        if (r.stable) {
          h_ok = h;
          break;
        }
        last_why = r.why;
        if (r.why.rfind("skipped", 0) == 0) break;
      }
      if (!r.stable) {
        const bool skipped = last_why.rfind("skipped: ", 0) == 0;
        std::printf("%-8s %7d  %s (%s)\n", engine.c_str(), n,
                    skipped ? "skipped" : "no stable step",
                    (skipped ? last_why.substr(9) : last_why).c_str());
        continue;
      }
      const long nsteps = std::lround(seconds / h_ok);
      if (engine == "mabd") mabd_wall = r.wall_s;
      std::printf("%-8s %7d %9.0e %8ld %10.3f %10.3f %+8.1f%%", engine.c_str(), n, h_ok, nsteps,
                  r.wall_s, 1e3 * r.wall_s / nsteps, 100 * r.energy_change);
      if (mabd_wall > 0) {
        std::printf(" %8.1fx\n", r.wall_s / mabd_wall);
      } else {
        std::printf("\n");
      }
      std::fflush(stdout);
    }
  }
  return 0;
}
