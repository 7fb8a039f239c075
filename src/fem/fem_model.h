// Compiled description of a tetrahedral FEM solid (mesh, stable Neo-Hookean material, mass
// matrix, pinned nodes), its mutable state (x, v) and the energy and momentum queries.
// All vectors over nodes are 3N long, node i at [3i, 3i + 3), world frame, SI units.
// Mass matrix per tet e of rest volume V_e and density rho (kg):
//   lumped      M_e = rho V_e / 4 I_12,
//   consistent  M_e = rho V_e / 20 (1 + delta_ab) I_3 on the node pair (a, b).
// Both have the same row sums (node masses m_i = sum over its tets of rho V_e / 4), so the
// weight M (1 (x) g) and the linear momentum are the same for both.
#pragma once

#include <vector>

#include <Eigen/Core>

#include "fem/neo_hookean.h"
#include "fem/tet_element.h"
#include "fem/tet_mesh.h"

namespace mabd::fem {

/// Material of a solid.
struct FemMaterial {
  double density = 1000;  ///< rho (kg/m^3)
  double young = 1e6;     ///< Young's modulus E (Pa)
  double poisson = 0.3;   ///< Poisson ratio nu (-1 < nu < 0.5)
};

enum class MassType { lumped, consistent };

class FemModel {
 public:
  /// Throws mabd::InvalidArgument on a non-positive density, an (E, nu) out of range or a
  /// pinned node index out of range (the message names it).
  FemModel(TetMesh mesh, const FemMaterial& material, MassType mass = MassType::lumped,
           const std::vector<int>& pinned = {});

  const TetMesh& mesh() const { return mesh_; }
  const FemMaterial& material() const { return material_; }
  const StableNeoHookean& neo_hookean() const { return snh_; }
  MassType mass_type() const { return mass_type_; }
  int num_nodes() const { return mesh_.num_nodes(); }

  /// Node masses m_i (kg), the row sums of M.
  const std::vector<double>& node_mass() const { return node_mass_; }
  double total_mass() const { return total_mass_; }  ///< (kg)

  bool pinned(int i) const { return pinned_[i] != 0; }
  /// Shape-function gradients b_a (1/m) of tet e (see tet_element.h).
  const Mat34& shape_gradients(int e) const { return b_[e]; }

  /// Element mass matrix M_e (kg) on the tet's 12 node coordinates.
  Mat12 tet_mass(int e) const;
  /// M v for a 3N vector v (kg v).
  Eigen::VectorXd mass_times(const Eigen::VectorXd& v) const;

 private:
  TetMesh mesh_;
  FemMaterial material_;
  StableNeoHookean snh_;
  MassType mass_type_;
  std::vector<double> node_mass_;
  double total_mass_ = 0;
  std::vector<char> pinned_;
  std::vector<Mat34> b_;
};

/// Positions x (m) and velocities v (m/s) of all nodes, world frame, 3N each.
struct FemState {
  Eigen::VectorXd x;
  Eigen::VectorXd v;
};

/// The rest state: x = rest positions, v = 0.
FemState rest_state(const FemModel& model);

/// Kinetic energy 1/2 v^T M v (J).
double kinetic_energy(const FemModel& model, const FemState& state);
/// Gravitational potential energy -sum_i m_i g . x_i (J), zero at the world origin; g is the
/// gravitational acceleration (m/s^2).
double gravitational_energy(const FemModel& model, const FemState& state, const Vec3& g);
/// Elastic energy sum_e V_e Psi(F_e) (J) of positions x (m); zero at the rest shape.
double elastic_energy(const FemModel& model, const Eigen::VectorXd& x);
/// Gradient of the elastic energy on x (N), the negated internal elastic forces; its sum
/// over nodes and its moment sum_i x_i x grad_i vanish (translation and rotation invariance).
Eigen::VectorXd elastic_gradient(const FemModel& model, const Eigen::VectorXd& x);
/// Linear momentum sum_i (M v)_i (kg m/s).
Vec3 linear_momentum(const FemModel& model, const FemState& state);
/// Angular momentum about the world origin sum_i x_i x (M v)_i (kg m^2/s).
Vec3 angular_momentum(const FemModel& model, const FemState& state);

}  // namespace mabd::fem
