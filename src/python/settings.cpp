// World settings (time step, gravity, solvers, wind, contact) and the step statistics.
#include "python/bindings.h"

namespace mabd::python {

void bind_settings(py::module_& m) {
  py::enum_<RotationMode>(m, "RotationMode")
      .value("Polar", RotationMode::Polar)
      .value("Normalized", RotationMode::Normalized);
  py::enum_<IntegratorMode>(m, "IntegratorMode")
      .value("CoRotated", IntegratorMode::CoRotated)
      .value("Vanilla", IntegratorMode::Vanilla);
  py::enum_<TimeIntegration>(m, "TimeIntegration")
      .value("GeneralizedAlpha", TimeIntegration::GeneralizedAlpha)
      .value("ImplicitEuler", TimeIntegration::ImplicitEuler);
  py::enum_<DualSolverKind>(m, "DualSolverKind")
      .value("Auto", DualSolverKind::Auto)
      .value("Sparse", DualSolverKind::Sparse)
      .value("Chain", DualSolverKind::Chain)
      .value("Tree", DualSolverKind::Tree)
      .value("Iterative", DualSolverKind::Iterative);
  py::enum_<ContactModel>(m, "ContactModel")
      .value("None_", ContactModel::None, "no collision detection")
      .value("Penalty", ContactModel::Penalty, "implicit penalty springs")
      .value("Exact", ContactModel::Exact, "no penetration (implicit Euler only)");

  StructBinder<Wind> wind(m, "Wind",
                          "Prescribed wind: drag on every dynamic body (off while velocity is "
                          "zero).");
  wind.field("velocity", &Wind::velocity, "mean air velocity (m/s, world)")
      .field("density", &Wind::density, "air density (kg/m^3)")
      .field("drag_coefficient", &Wind::drag_coefficient, "dimensionless")
      .field("gust", &Wind::gust, "relative gust amplitude")
      .field("gust_period", &Wind::gust_period, "s")
      .finish();

  StructBinder<ContactSettings> contact(m, "ContactSettings",
                                        "Contact with colliders and between dynamic bodies.");
  contact.field("model", &ContactSettings::model, "ContactModel (None_ by default)")
      .field("time_constant", &ContactSettings::time_constant,
             "penalty spring time constant (s); 0: dt / 4 in implicit Euler, 2 dt under "
             "generalized-alpha (which needs >= dt)")
      .field("damping_ratio", &ContactSettings::damping_ratio, "penalty damping ratio")
      .field("margin", &ContactSettings::margin, "speculative margin (m)")
      .field("friction", &ContactSettings::friction, "Coulomb friction on/off")
      .field("bodies", &ContactSettings::bodies,
             "contact between dynamic bodies of different articulations")
      .field("self_collision", &ContactSettings::self_collision,
             "contact between dynamic bodies of one articulation (not sharing a joint)")
      .finish();

  StructBinder<WorldSettings> settings(m, "WorldSettings", "Simulation settings.");
  settings.field("dt", &WorldSettings::dt, "time step (s), > 0")
      .field("gravity", &WorldSettings::gravity, "m/s^2, world")
      .field("newton_iterations", &WorldSettings::newton_iterations, "cap per step, >= 1")
      .field("tolerance", &WorldSettings::tolerance, "Newton displacement tolerance (m)")
      .field("rotation", &WorldSettings::rotation, "RotationMode")
      .field("integrator", &WorldSettings::integrator, "IntegratorMode")
      .field("time_integration", &WorldSettings::time_integration, "TimeIntegration")
      .field("spectral_radius", &WorldSettings::spectral_radius,
             "generalized-alpha spectral radius at infinite frequency, [0, 1]")
      .field("solver", &WorldSettings::solver, "DualSolverKind")
      .field("dual_tolerance", &WorldSettings::dual_tolerance, "iterative solver, relative")
      .field("dual_max_iterations", &WorldSettings::dual_max_iterations,
             "iterative solver iteration cap")
      .field("threads", &WorldSettings::threads,
             "threads of the per-body phases, [1, 256]; bit-identical results for any count")
      .field("wind", &WorldSettings::wind, "Wind")
      .field("contact", &WorldSettings::contact, "ContactSettings")
      .finish();
  m.def("validate_settings", &validate_settings, py::arg("settings"),
        "Raises ValueError naming the field when a setting is out of range.");

  py::class_<StepStats>(m, "StepStats", "What the last step did.")
      .def_readonly("newton_iterations", &StepStats::newton_iterations)
      .def_readonly("residual", &StepStats::residual,
                    "largest point displacement of the last Newton increment (m)")
      .def_readonly("wall_ms", &StepStats::wall_ms, "wall-clock time of the step (ms)")
      .def_readonly("joint_residual", &StepStats::joint_residual,
                    "largest joint violation after the step (m)")
      .def_property_readonly(
          "solver", [](const StepStats& s) { return std::string(s.solver); },
          "dual solver used: chain, tree, sparse, iterative, ... or none")
      .def_readonly("dual_iterations", &StepStats::dual_iterations)
      .def_readonly("dual_residual", &StepStats::dual_residual)
      .def_readonly("contacts", &StepStats::contacts, "active contact points")
      .def_readonly("max_penetration", &StepStats::max_penetration, "m")
      .def_readonly("detect_ms", &StepStats::detect_ms, "collision detection (ms)")
      .def_readonly("predict_ms", &StepStats::predict_ms,
                    "prediction: inertial target, first iterate, kinematic bodies (ms)")
      .def_readonly("body_ms", &StepStats::body_ms, "body operators and updates (ms)")
      .def_readonly("rows_ms", &StepStats::rows_ms, "building the dual's rows (ms)")
      .def_readonly("dual_ms", &StepStats::dual_ms, "dual (joint) solves without the rows (ms)")
      .def_readonly("contact_ms", &StepStats::contact_ms,
                    "contact solve between dynamic bodies (ms)")
      .def_readonly("check_ms", &StepStats::check_ms, "convergence and state checks (ms)")
      .def_readonly("finish_ms", &StepStats::finish_ms,
                    "finish: velocities, limit impacts, joint state (ms)")
      .def_readonly("soft_ms", &StepStats::soft_ms,
                    "soft bodies' Newton iterations and attachment rows (ms)")
      .def_readonly("attachment_residual", &StepStats::attachment_residual,
                    "largest soft body attachment violation after the step (m)")
      .def_readonly("body_contacts", &StepStats::body_contacts,
                    "pushing contact points between dynamic bodies")
      .def_readonly("contact_sweeps", &StepStats::contact_sweeps,
                    "projected Gauss-Seidel sweeps of the last contact solve between dynamic "
                    "bodies, all friction rounds")
      .def_readonly("contact_pivots", &StepStats::contact_pivots,
                    "active-set solves of the last contact solve between dynamic bodies, all "
                    "friction rounds")
      .def("__repr__", [](const StepStats& s) {
        return "StepStats(newton_iterations=" + std::to_string(s.newton_iterations) +
               ", residual=" + std::to_string(s.residual) + ", solver='" + s.solver +
               "', contacts=" + std::to_string(s.contacts) + ")";
      });

  py::class_<ComponentSummary>(m, "ComponentSummary", "A connected component of the joint graph.")
      .def_readonly("kind", &ComponentSummary::kind,
                    "single body, chain, tree, tree with loops or graph")
      .def_readonly("bodies", &ComponentSummary::bodies)
      .def_readonly("joints", &ComponentSummary::joints)
      .def_readonly("rows", &ComponentSummary::rows)
      .def_readonly("loops", &ComponentSummary::loops)
      .def_readonly("solver", &ComponentSummary::solver)
      .def("__repr__", [](const ComponentSummary& c) {
        return "ComponentSummary(kind='" + c.kind + "', bodies=" + std::to_string(c.bodies) +
               ", joints=" + std::to_string(c.joints) + ", solver='" + c.solver + "')";
      });
}

}  // namespace mabd::python
