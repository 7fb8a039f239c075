// FEM model construction, mass matrix and energy queries (see fem_model.h).
#include "fem/fem_model.h"

#include <cmath>
#include <string>

#include "mabd/error.h"

namespace mabd::fem {

FemModel::FemModel(TetMesh mesh, const FemMaterial& material, MassType mass,
                   const std::vector<int>& pinned)
    : mesh_(std::move(mesh)),
      material_(material),
      snh_(StableNeoHookean::from_young_poisson(material.young, material.poisson)),
      mass_type_(mass) {
  if (!(material.density > 0) || !std::isfinite(material.density)) {
    throw InvalidArgument("FemModel: density " + std::to_string(material.density) +
                          " kg/m^3 must be positive");
  }
  const int n = mesh_.num_nodes();
  pinned_.assign(n, 0);
  for (int i : pinned) {
    if (i < 0 || i >= n) {
      throw InvalidArgument("FemModel: pinned node " + std::to_string(i) + " out of range [0, " +
                            std::to_string(n) + ")");
    }
    pinned_[i] = 1;
  }
  node_mass_.assign(n, 0.0);
  b_.reserve(mesh_.num_tets());
  for (int e = 0; e < mesh_.num_tets(); ++e) {
    const double m = material.density * mesh_.volume[e];
    for (int a : mesh_.tets[e]) node_mass_[a] += m / 4;
    total_mass_ += m;
    b_.push_back(fem::shape_gradients(mesh_.Dm_inv[e]));
  }
}

Mat12 FemModel::tet_mass(int e) const {
  const double m = material_.density * mesh_.volume[e];
  if (mass_type_ == MassType::lumped) return Mat12::Identity() * (m / 4);
  Mat12 M;
  for (int a = 0; a < 4; ++a) {
    for (int b = 0; b < 4; ++b) {
      M.block<3, 3>(3 * a, 3 * b) = Mat3::Identity() * (m / 20 * (a == b ? 2 : 1));
    }
  }
  return M;
}

Eigen::VectorXd FemModel::mass_times(const Eigen::VectorXd& v) const {
  Eigen::VectorXd Mv(v.size());
  if (mass_type_ == MassType::lumped) {
    for (int i = 0; i < num_nodes(); ++i)
      Mv.segment<3>(3 * i) = node_mass_[i] * v.segment<3>(3 * i);
    return Mv;
  }
  // (M_e v)_a = rho V / 20 (v_a + sum_b v_b).
  Mv.setZero();
  for (int e = 0; e < mesh_.num_tets(); ++e) {
    const Tet& t = mesh_.tets[e];
    const double m = material_.density * mesh_.volume[e];
    Vec3 sum = Vec3::Zero();
    for (int a : t) sum += v.segment<3>(3 * a);
    for (int a : t) Mv.segment<3>(3 * a) += m / 20 * (v.segment<3>(3 * a) + sum);
  }
  return Mv;
}

FemState rest_state(const FemModel& model) {
  FemState s;
  const int n = model.num_nodes();
  s.x.resize(3 * n);
  for (int i = 0; i < n; ++i) s.x.segment<3>(3 * i) = model.mesh().rest[i];
  s.v = Eigen::VectorXd::Zero(3 * n);
  return s;
}

double kinetic_energy(const FemModel& model, const FemState& state) {
  return 0.5 * state.v.dot(model.mass_times(state.v));
}

double gravitational_energy(const FemModel& model, const FemState& state, const Vec3& g) {
  double e = 0;
  for (int i = 0; i < model.num_nodes(); ++i) {
    e -= model.node_mass()[i] * g.dot(state.x.segment<3>(3 * i));
  }
  return e;
}

double elastic_energy(const FemModel& model, const Eigen::VectorXd& x) {
  double e = 0;
  for (int t = 0; t < model.mesh().num_tets(); ++t) {
    e += model.mesh().volume[t] *
         model.neo_hookean().energy_density(deformation_gradient(model.mesh(), t, x));
  }
  return e;
}

Eigen::VectorXd elastic_gradient(const FemModel& model, const Eigen::VectorXd& x) {
  Eigen::VectorXd g = Eigen::VectorXd::Zero(x.size());
  for (int e = 0; e < model.mesh().num_tets(); ++e) {
    const Mat3 P = model.neo_hookean().stress(deformation_gradient(model.mesh(), e, x));
    const Vec12 ge = tet_gradient(model.shape_gradients(e), model.mesh().volume[e], P);
    const Tet& t = model.mesh().tets[e];
    for (int a = 0; a < 4; ++a) g.segment<3>(3 * t[a]) += ge.segment<3>(3 * a);
  }
  return g;
}

Vec3 linear_momentum(const FemModel& model, const FemState& state) {
  const Eigen::VectorXd p = model.mass_times(state.v);
  Vec3 sum = Vec3::Zero();
  for (int i = 0; i < model.num_nodes(); ++i) sum += p.segment<3>(3 * i);
  return sum;
}

Vec3 angular_momentum(const FemModel& model, const FemState& state) {
  const Eigen::VectorXd p = model.mass_times(state.v);
  Vec3 sum = Vec3::Zero();
  for (int i = 0; i < model.num_nodes(); ++i) {
    sum += Vec3(state.x.segment<3>(3 * i)).cross(Vec3(p.segment<3>(3 * i)));
  }
  return sum;
}

}  // namespace mabd::fem
