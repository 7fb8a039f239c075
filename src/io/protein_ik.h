// Inverse kinematics of a backbone model: the segments' rigid placements and the phi/psi
// hinge angles that bring selected C-alpha atoms to marker positions.
#pragma once

#include <cstddef>
#include <vector>

#include "io/protein.h"
#include "mabd/math.h"

namespace mabd::io {

/// A C-alpha target: residue `residue` (index into BackboneModel::residues) at `target`
/// (Angstrom, world).
struct Marker {
  std::size_t residue = 0;
  Vec3 target = Vec3::Zero();
};

struct IkOptions {
  int max_iterations = 500;
  /// Stop when the RMS distance (Angstrom) of the markers to their targets is below this.
  double tolerance = 1e-4;
  /// Initial Levenberg-Marquardt damping (Angstrom^2): large values take small, gradient-like
  /// steps, small values Gauss-Newton steps. Adapted as the solve goes.
  double damping = 1e-2;
  /// Stop when an accepted step improves the RMS by less than this fraction.
  double min_improvement = 1e-10;
};

struct IkResult {
  BackboneConfiguration config;
  double rms = 0;      ///< RMS marker distance (Angstrom) at `config`
  int iterations = 0;  ///< accepted steps
};

/// Solves for a configuration whose markers' C-alpha atoms reach their targets, starting
/// from `start`, by damped least squares (Levenberg-Marquardt) over each segment's rigid
/// placement (6 coordinates) and hinge angles, with the analytic Jacobian
/// d x / d theta_j = w_j x (x - p_j) (w_j, p_j: the hinge's current axis and anchor). Each
/// step is the minimum-norm one, dq = J^T (J J^T + lambda I)^-1 r, so the angles no marker
/// constrains stay near `start`; every angle ends within half a turn of its start (whole turns
/// are removed). Segments without markers keep `start`. Throws
/// InvalidArgument for a marker naming no residue or a non-finite target.
IkResult solve_ik(const BackboneModel& model, const std::vector<Marker>& markers,
                  const BackboneConfiguration& start, const IkOptions& options = {});

/// RMS distance (Angstrom) of the markers' C-alpha atoms at `config` to their targets.
double marker_rms(const BackboneModel& model, const std::vector<Marker>& markers,
                  const BackboneConfiguration& config);

}  // namespace mabd::io
