#include "io/protein_ik.h"

#include <Eigen/Cholesky>
#include <Eigen/Dense>
#include <cmath>
#include <string>

#include "mabd/error.h"

namespace mabd::io {

namespace {

using MatX = Eigen::MatrixXd;
using VecX = Eigen::VectorXd;

/// World position of residue `r`'s C-alpha at body poses `poses`.
Vec3 ca_position(const BackboneModel& model, const std::vector<Pose>& poses, std::size_t r) {
  const AtomSite& site = model.residues[r].atoms[kAtomCA];
  const Pose& p = poses[site.body];
  return p.orientation * site.local + p.position;
}

/// Sum of squared marker distances (Angstrom^2) of the markers `ids` at `config`.
double squared_error(const BackboneModel& model, const std::vector<Marker>& markers,
                     const std::vector<std::size_t>& ids, const BackboneConfiguration& config) {
  const std::vector<Pose> poses = body_poses(model, config);
  double sum = 0;
  for (std::size_t m : ids) {
    sum += (ca_position(model, poses, markers[m].residue) - markers[m].target).squaredNorm();
  }
  return sum;
}

/// Levenberg-Marquardt on segment `s` of `config` (updated in place) for markers `ids`.
int solve_segment(const BackboneModel& model, const std::vector<Marker>& markers,
                  const std::vector<std::size_t>& ids, std::size_t s, const IkOptions& options,
                  BackboneConfiguration& config) {
  const BackboneSegment& seg = model.segments[s];
  const std::size_t nh = seg.body_count - 1;
  const std::size_t n = 6 + nh, rows = 3 * ids.size();
  const double target_sq = options.tolerance * options.tolerance * ids.size();
  double lambda = options.damping;
  double error = squared_error(model, markers, ids, config);
  int accepted = 0;
  MatX J(rows, n);
  VecX r(rows);
  for (int it = 0; it < options.max_iterations && error > target_sq; ++it) {
    // Residuals and Jacobian at the current configuration.
    const std::vector<Pose> poses = body_poses(model, config);
    const Vec3 centre = poses[seg.first_body].position;
    J.setZero();
    for (std::size_t k = 0; k < ids.size(); ++k) {
      const Marker& mk = markers[ids[k]];
      const Vec3 x = ca_position(model, poses, mk.residue);
      r.segment<3>(3 * k) = mk.target - x;
      const Vec3 d = x - centre;
      // Root rotation (left, about the root's CA) and translation.
      J.block<3, 3>(3 * k, 0) << 0, d.z(), -d.y(), -d.z(), 0, d.x(), d.y(), -d.x(), 0;
      J.block<3, 3>(3 * k, 3).setIdentity();
      const std::size_t upto = model.residues[mk.residue].ca_body - seg.first_body;
      for (std::size_t j = 0; j < upto; ++j) {
        // Hinge j turns with its parent body j: its current axis and anchor.
        const BackboneHinge& h = model.hinges[seg.first_hinge + j];
        const BodyDef& ref = model.bodies[seg.first_body + j];
        const Pose& p = poses[seg.first_body + j];
        const Quat rot = p.orientation * ref.orientation.normalized().conjugate();
        const Vec3 anchor = rot * (h.anchor - ref.position) + p.position;
        J.block<3, 1>(3 * k, 6 + j) = (rot * h.axis).cross(x - anchor);
      }
    }
    const MatX JJt = J * J.transpose();
    bool improved = false;
    for (int attempt = 0; attempt < 40 && !improved; ++attempt) {
      MatX A = JJt;
      A.diagonal().array() += lambda;
      const VecX dq = J.transpose() * A.ldlt().solve(r);
      BackboneConfiguration trial = config;
      Pose& root = trial.roots[s];
      const Vec3 dw = dq.head<3>();
      const Quat dr =
          dw.norm() > 0 ? Quat(Eigen::AngleAxisd(dw.norm(), dw.normalized())) : Quat::Identity();
      root.orientation = (dr * root.orientation).normalized();
      root.position = dr * (root.position - centre) + centre + dq.segment<3>(3);
      for (std::size_t j = 0; j < nh; ++j) trial.angles[seg.first_hinge + j] += dq[6 + j];
      const double trial_error = squared_error(model, markers, ids, trial);
      if (trial_error < error) {
        improved = true;
        const double gain = (error - trial_error) / error;
        config = std::move(trial);
        error = trial_error;
        lambda = std::max(lambda * 0.3, 1e-12);
        ++accepted;
        if (gain < options.min_improvement) return accepted;
      } else {
        lambda *= 5;
      }
    }
    if (!improved) break;
  }
  return accepted;
}

}  // namespace

double marker_rms(const BackboneModel& model, const std::vector<Marker>& markers,
                  const BackboneConfiguration& config) {
  if (markers.empty()) return 0;
  std::vector<std::size_t> all(markers.size());
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
  return std::sqrt(squared_error(model, markers, all, config) / markers.size());
}

IkResult solve_ik(const BackboneModel& model, const std::vector<Marker>& markers,
                  const BackboneConfiguration& start, const IkOptions& options) {
  // Markers by segment.
  std::vector<std::vector<std::size_t>> by_segment(model.segments.size());
  for (std::size_t m = 0; m < markers.size(); ++m) {
    if (markers[m].residue >= model.residues.size()) {
      throw InvalidArgument("marker " + std::to_string(m) + ": residue index " +
                            std::to_string(markers[m].residue) + " is out of range (" +
                            std::to_string(model.residues.size()) + " residues)");
    }
    if (!markers[m].target.allFinite()) {
      throw InvalidArgument("marker " + std::to_string(m) + ": target is not finite");
    }
    for (std::size_t s = 0; s < model.segments.size(); ++s) {
      const BackboneSegment& seg = model.segments[s];
      if (markers[m].residue >= seg.first_residue &&
          markers[m].residue < seg.first_residue + seg.residue_count) {
        by_segment[s].push_back(m);
      }
    }
  }
  IkResult result;
  result.config = start;
  body_poses(model, start);  // validates the configuration's shape
  for (std::size_t s = 0; s < model.segments.size(); ++s) {
    if (by_segment[s].empty()) continue;
    result.iterations += solve_segment(model, markers, by_segment[s], s, options, result.config);
  }
  // A hinge turned by a whole number of turns is the same pose: keep every angle within half a
  // turn of its start, so that interpolating from the start takes the short way.
  for (std::size_t j = 0; j < model.hinges.size(); ++j) {
    double& a = result.config.angles[j];
    a = start.angles[j] + std::remainder(a - start.angles[j], 2 * M_PI);
  }
  result.rms = marker_rms(model, markers, result.config);
  return result;
}

}  // namespace mabd::io
