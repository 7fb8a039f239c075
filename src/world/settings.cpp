// Validation of WorldSettings.
#include <cmath>
#include <sstream>

#include "mabd/error.h"
#include "mabd/settings.h"

namespace mabd {

const std::vector<std::string>& dual_solver_names() {
  static const std::vector<std::string> names{"auto", "sparse", "chain", "tree", "iterative"};
  return names;
}

const char* dual_solver_name(DualSolverKind kind) {
  return dual_solver_names()[static_cast<std::size_t>(kind)].c_str();
}

const char* contact_model_name(ContactModel model) {
  switch (model) {
    case ContactModel::None: return "none";
    case ContactModel::Penalty: return "penalty";
    case ContactModel::Exact: return "exact";
  }
  return "unknown";
}

void validate_settings(const WorldSettings& s) {
  auto fail = [](const std::string& what) { throw InvalidArgument("settings." + what); };
  if (!std::isfinite(s.dt) || s.dt <= 0) {
    std::ostringstream m;
    m << "dt: must be positive and finite (got " << s.dt << ")";
    fail(m.str());
  }
  if (!s.gravity.allFinite()) fail("gravity: must be finite");
  if (s.newton_iterations < 1) {
    fail("newton_iterations: must be >= 1 (got " + std::to_string(s.newton_iterations) + ")");
  }
  if (!(s.spectral_radius >= 0 && s.spectral_radius <= 1)) {
    std::ostringstream m;
    m << "spectral_radius: must be in [0, 1] (got " << s.spectral_radius << ")";
    fail(m.str());
  }
  if (!std::isfinite(s.dual_tolerance) || s.dual_tolerance <= 0) {
    std::ostringstream m;
    m << "dual_tolerance: must be positive and finite (got " << s.dual_tolerance << ")";
    fail(m.str());
  }
  if (s.threads < 1 || s.threads > 256) {
    fail("threads: must be in [1, 256] (got " + std::to_string(s.threads) + ")");
  }
  if (s.dual_max_iterations < 1) {
    fail("dual_max_iterations: must be >= 1 (got " + std::to_string(s.dual_max_iterations) + ")");
  }
  if (!std::isfinite(s.tolerance) || s.tolerance <= 0) {
    std::ostringstream m;
    m << "tolerance: must be positive and finite (got " << s.tolerance << ")";
    fail(m.str());
  }
  const Wind& w = s.wind;
  if (!w.velocity.allFinite()) fail("wind.velocity: must be finite");
  auto non_negative = [&](double v, const char* name) {
    if (!std::isfinite(v) || v < 0) {
      std::ostringstream m;
      m << name << ": must be >= 0 and finite (got " << v << ")";
      fail(m.str());
    }
  };
  non_negative(w.density, "wind.density");
  non_negative(w.drag_coefficient, "wind.drag_coefficient");
  non_negative(w.gust, "wind.gust");
  if (!std::isfinite(w.gust_period) || w.gust_period <= 0) {
    std::ostringstream m;
    m << "wind.gust_period: must be positive and finite (got " << w.gust_period << ")";
    fail(m.str());
  }
  const ContactSettings& c = s.contact;
  non_negative(c.time_constant, "contact.time_constant");
  non_negative(c.damping_ratio, "contact.damping_ratio");
  non_negative(c.margin, "contact.margin");
  if (c.model == ContactModel::Exact && s.time_integration == TimeIntegration::GeneralizedAlpha) {
    fail("contact.model: 'exact' needs time_integration 'implicit_euler' (generalized-alpha "
         "would turn the contact impulses into a rebound; use 'penalty' to keep it)");
  }
  // Generalized-alpha's velocity update (gamma / beta ~ 2 times the step's mean velocity
  // change) returns the impulse of a contact spring faster than the step: a sphere dropped on
  // the ground at h = 10 ms bounced back with up to 1.2 times its impact energy at
  // tau = 0.7 h and 5 times at tau = h / 2, against at most 0.43 at tau = h (spectral radius
  // 0, 0.8 and 1; tests/world/penalty_rebound_test.cpp).
  const bool alpha = s.time_integration == TimeIntegration::GeneralizedAlpha;
  if (c.model == ContactModel::Penalty && alpha && c.time_constant > 0 && c.time_constant < s.dt) {
    std::ostringstream m;
    m << "contact.time_constant: " << c.time_constant << " s is below dt = " << s.dt
      << " s: under time_integration 'generalized_alpha' a penalty contact stiffer than the "
         "step returns impacts with more energy than they brought; use 'implicit_euler' or a "
         "time_constant >= dt";
    fail(m.str());
  }
}

}  // namespace mabd
