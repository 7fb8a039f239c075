#include "io/protein.h"

#include <algorithm>
#include <cmath>

#include "mabd/error.h"

namespace mabd::io {

namespace {

// Atomic masses (Da = model kg).
constexpr double kMassH = 1.008, kMassC = 12.011, kMassN = 14.007, kMassO = 15.999;

/// x -> a(b(x)).
Pose compose(const Pose& a, const Pose& b) {
  Pose p;
  p.orientation = a.orientation * b.orientation;
  p.position = a.orientation * b.position + a.position;
  return p;
}

Vec3 apply(const Pose& a, const Vec3& x) { return a.orientation * x + a.position; }

/// Rotation by `angle` about the line through `anchor` along unit `axis`.
Pose rotation_about(const Vec3& anchor, const Vec3& axis, double angle) {
  Pose p;
  p.orientation = Quat(Eigen::AngleAxisd(angle, axis));
  p.position = anchor - p.orientation * anchor;
  return p;
}

/// Frame with origin `origin`, z along `z_dir` and x towards `x_hint` (projected off z).
Pose frame_of_points(const Vec3& origin, const Vec3& z_dir, const Vec3& x_hint) {
  const Vec3 z = z_dir.normalized();
  Vec3 x = x_hint - x_hint.dot(z) * z;
  if (x.norm() < 1e-9 * (1 + x_hint.norm())) x = z.unitOrthogonal();
  x.normalize();
  Mat3 r;
  r.col(0) = x;
  r.col(1) = z.cross(x);
  r.col(2) = z;
  Pose p;
  p.position = origin;
  p.orientation = Quat(r);
  return p;
}

std::string residue_tag(const PdbChain& chain, const PdbResidue& r) {
  std::string tag = std::string(1, chain.id) + " " + std::to_string(r.seq);
  if (r.insertion != ' ') tag += r.insertion;
  return tag;
}

}  // namespace

std::size_t BackboneModel::find_residue(char chain, int seq) const {
  std::size_t c = 0;
  while (c < structure.chains.size() && structure.chains[c].id != chain) ++c;
  for (std::size_t i = 0; i < residues.size() && c < structure.chains.size(); ++i) {
    if (residues[i].chain == c && structure.chains[c].residues[residues[i].index].seq == seq) {
      return i;
    }
  }
  throw InvalidArgument("no modelled residue " + std::to_string(seq) + " in chain '" +
                        std::string(1, chain) + "' of " + structure.path);
}

BackboneModel build_backbone(const PdbStructure& structure, const BackboneOptions& options) {
  if (!(options.radius > 0) || !std::isfinite(options.radius)) {
    throw InvalidArgument("backbone options: radius must be positive and finite");
  }
  if (!(options.max_peptide_bond > 0)) {
    throw InvalidArgument("backbone options: max_peptide_bond must be positive");
  }
  BackboneModel m;
  m.warnings = structure.warnings;
  m.structure.path = structure.path;
  m.structure.model = structure.model;
  // Keep the complete residues; note where a chain breaks.
  std::vector<std::vector<bool>> starts;  // per kept chain, per residue: starts a segment
  for (const PdbChain& chain : structure.chains) {
    PdbChain kept{chain.id, {}};
    std::vector<bool> start;
    bool after_gap = true;
    for (const PdbResidue& r : chain.residues) {
      if (!r.complete()) {
        m.warnings.push_back(structure.path + ":" + std::to_string(r.line) + ": residue " + r.name +
                             " " + residue_tag(chain, r) +
                             " is left out (missing backbone atoms); the chain is split there");
        after_gap = true;
        continue;
      }
      bool breaks = after_gap;
      if (!breaks) {
        const double bond = (r.atoms[kAtomN] - kept.residues.back().atoms[kAtomC]).norm();
        if (bond > options.max_peptide_bond) {
          breaks = true;
          m.warnings.push_back(structure.path + ":" + std::to_string(r.line) + ": chain break " +
                               "before residue " + r.name + " " + residue_tag(chain, r) + " (C-N " +
                               std::to_string(bond) + " Angstrom); a new segment " +
                               "starts there");
        }
      }
      kept.residues.push_back(r);
      start.push_back(breaks);
      after_gap = false;
    }
    if (!kept.residues.empty()) {
      m.structure.chains.push_back(std::move(kept));
      starts.push_back(std::move(start));
    }
  }
  if (m.structure.chains.empty()) {
    throw InvalidArgument(structure.path + ": no residue with all four backbone atoms to model");
  }

  Material material;
  material.youngs_modulus = options.youngs_modulus;
  material.poisson_ratio = options.poisson_ratio;
  const double radius = options.radius;
  auto add_body = [&](std::string name, const ShapeDef& shape, double mass, const Pose& frame) {
    BodyDef b;
    b.name = std::move(name);
    b.shape = shape;
    b.material = material;
    b.mass = mass;
    b.position = frame.position;
    b.orientation = frame.orientation;
    b.collision.enabled = false;
    m.bodies.push_back(std::move(b));
    return m.bodies.size() - 1;
  };
  auto local = [&](std::size_t body, const Vec3& x) {
    const BodyDef& b = m.bodies[body];
    return AtomSite{body, b.orientation.conjugate() * (x - b.position)};
  };
  auto add_hinge = [&](DihedralKind kind, std::size_t residue, const Vec3& from, const Vec3& to) {
    BackboneHinge h;
    h.parent = m.bodies.size() - 2;
    h.child = m.bodies.size() - 1;
    h.kind = kind;
    h.residue = residue;
    h.anchor = kind == DihedralKind::Phi ? to : from;  // the CA
    h.axis = (to - from).normalized();
    m.hinges.push_back(h);
  };

  AtomSite pending_n;  // the next residue's N, on the peptide body just added
  ShapeDef sphere;
  sphere.type = ShapeType::Sphere;
  sphere.radius = radius;
  for (std::size_t c = 0; c < m.structure.chains.size(); ++c) {
    const PdbChain& chain = m.structure.chains[c];
    const std::size_t n = chain.residues.size();
    for (std::size_t i = 0; i < n; ++i) {
      const PdbResidue& r = chain.residues[i];
      const bool first = starts[c][i];
      const bool last = i + 1 == n || starts[c][i + 1];
      const std::string tag = residue_tag(chain, r);
      if (first) {
        BackboneSegment s;
        s.first_body = m.bodies.size();
        s.first_hinge = m.hinges.size();
        s.first_residue = m.residues.size();
        m.segments.push_back(s);
      }
      BackboneResidue res;
      res.chain = c;
      res.index = i;
      // C-alpha body (and, at a segment's start, its N).
      Pose ca_frame;
      ca_frame.position = r.atoms[kAtomCA];
      const double ca_mass = kMassC + kMassH + (first ? kMassN + 2 * kMassH : 0.0);
      res.ca_body = add_body("CA " + tag, sphere, ca_mass, ca_frame);
      if (!first) {
        // phi: the previous peptide body turns this CA body about N->CA.
        add_hinge(DihedralKind::Phi, m.residues.size(), r.atoms[kAtomN], r.atoms[kAtomCA]);
        res.atoms[kAtomN] = pending_n;  // on the previous peptide body
      }
      res.atoms[kAtomCA] = local(res.ca_body, r.atoms[kAtomCA]);
      if (first) res.atoms[kAtomN] = local(res.ca_body, r.atoms[kAtomN]);
      // The body after the CA: a peptide plane up to the next CA, or the terminal C=O.
      std::size_t next;
      if (!last) {
        const PdbResidue& r2 = chain.residues[i + 1];
        const Vec3 a = r.atoms[kAtomCA], b = r2.atoms[kAtomCA];
        ShapeDef capsule;
        capsule.type = ShapeType::Capsule;
        capsule.radius = radius;
        capsule.length = std::max((b - a).norm() - 2 * radius, 0.1 * radius);
        const Pose frame = frame_of_points(0.5 * (a + b), b - a, r.atoms[kAtomO] - 0.5 * (a + b));
        next = add_body("peptide " + tag, capsule, kMassC + kMassO + kMassN + kMassH, frame);
        pending_n = local(next, r2.atoms[kAtomN]);
      } else {
        const Vec3 a = r.atoms[kAtomC], b = r.atoms[kAtomO];
        ShapeDef capsule;
        capsule.type = ShapeType::Capsule;
        capsule.radius = 0.5 * radius;
        capsule.length = std::max((b - a).norm(), 0.1 * radius);
        const Pose frame = frame_of_points(0.5 * (a + b), b - a, r.atoms[kAtomCA] - 0.5 * (a + b));
        next = add_body("carbonyl " + tag, capsule, kMassC + kMassO, frame);
      }
      // psi: this CA body turns the next body about CA->C.
      add_hinge(DihedralKind::Psi, m.residues.size(), r.atoms[kAtomCA], r.atoms[kAtomC]);
      res.atoms[kAtomC] = local(next, r.atoms[kAtomC]);
      res.atoms[kAtomO] = local(next, r.atoms[kAtomO]);
      m.residues.push_back(res);
      BackboneSegment& s = m.segments.back();
      s.residue_count = m.residues.size() - s.first_residue;
      s.body_count = m.bodies.size() - s.first_body;
    }
  }
  return m;
}

BackboneConfiguration reference_configuration(const BackboneModel& model) {
  BackboneConfiguration config;
  config.roots.assign(model.segments.size(), Pose{});
  config.angles.assign(model.hinges.size(), 0.0);
  return config;
}

std::vector<Pose> body_poses(const BackboneModel& model, const BackboneConfiguration& config) {
  if (config.roots.size() != model.segments.size() || config.angles.size() != model.hinges.size()) {
    throw InvalidArgument("backbone configuration: " + std::to_string(config.roots.size()) +
                          " roots and " + std::to_string(config.angles.size()) +
                          " angles for a model of " + std::to_string(model.segments.size()) +
                          " segments and " + std::to_string(model.hinges.size()) + " hinges");
  }
  std::vector<Pose> poses(model.bodies.size());
  for (std::size_t s = 0; s < model.segments.size(); ++s) {
    const BackboneSegment& seg = model.segments[s];
    Pose g = config.roots[s];
    for (std::size_t k = 0; k < seg.body_count; ++k) {
      if (k > 0) {
        const BackboneHinge& h = model.hinges[seg.first_hinge + k - 1];
        g = compose(g, rotation_about(h.anchor, h.axis, config.angles[seg.first_hinge + k - 1]));
      }
      const BodyDef& b = model.bodies[seg.first_body + k];
      poses[seg.first_body + k] = compose(g, Pose{b.position, b.orientation.normalized()});
    }
  }
  return poses;
}

BackboneFrame place_atoms(const BackboneModel& model, const std::vector<Pose>& poses) {
  BackboneFrame frame(model.structure.chains.size());
  for (std::size_t c = 0; c < frame.size(); ++c) {
    frame[c].resize(model.structure.chains[c].residues.size());
  }
  for (const BackboneResidue& r : model.residues) {
    for (int k = 0; k < kBackboneAtoms; ++k) {
      frame[r.chain][r.index][k] = apply(poses[r.atoms[k].body], r.atoms[k].local);
    }
  }
  return frame;
}

std::vector<Pose> world_poses(const World& world, const BackboneModel& model) {
  std::vector<Pose> poses(model.bodies.size());
  for (std::size_t i = 0; i < poses.size(); ++i) {
    poses[i] = world.pose(BodyId{static_cast<std::uint32_t>(i)});
  }
  return poses;
}

World make_backbone_world(const BackboneModel& model, const BackboneWorldOptions& options) {
  if (!options.root_motion.empty() && options.root_motion.size() != model.segments.size()) {
    throw InvalidArgument("backbone world: " + std::to_string(options.root_motion.size()) +
                          " root motions for " + std::to_string(model.segments.size()) +
                          " segments");
  }
  World world(options.settings);
  world.reserve(model.bodies.size(), model.hinges.size());
  std::vector<const MotionFunction*> motion(model.bodies.size(), nullptr);
  for (std::size_t s = 0; s < options.root_motion.size(); ++s) {
    motion[model.segments[s].first_body] = &options.root_motion[s];
  }
  for (std::size_t i = 0; i < model.bodies.size(); ++i) {
    if (motion[i] == nullptr) {
      world.add_body(model.bodies[i]);
      continue;
    }
    BodyDef b = model.bodies[i];
    b.kind = BodyKind::Kinematic;
    b.motion = *motion[i];
    world.add_body(b);
  }
  for (const BackboneHinge& h : model.hinges) {
    const BackboneResidue& r = model.residues[h.residue];
    const PdbChain& chain = model.structure.chains[r.chain];
    JointDef j;
    j.name = std::string(h.kind == DihedralKind::Phi ? "phi " : "psi ") +
             residue_tag(chain, chain.residues[r.index]);
    j.type = JointType::Hinge;
    j.body_a = BodyId{static_cast<std::uint32_t>(h.parent)};
    j.body_b = BodyId{static_cast<std::uint32_t>(h.child)};
    j.anchor = h.anchor;
    j.axis = h.axis;
    j.drive = options.drive;
    world.add_joint(j);
  }
  return world;
}

std::vector<double> downstream_inertia(const BackboneModel& model) {
  std::vector<double> inertia(model.hinges.size(), 0.0);
  for (const BackboneSegment& seg : model.segments) {
    // Suffix sums of m, m c and m c c^T over the bodies after each hinge.
    double m = 0;
    Vec3 first = Vec3::Zero();
    Mat3 second = Mat3::Zero();
    for (std::size_t k = seg.body_count - 1; k >= 1; --k) {
      const BodyDef& b = model.bodies[seg.first_body + k];
      const double mass = b.mass.value_or(0.0);
      m += mass;
      first += mass * b.position;
      second += mass * b.position * b.position.transpose();
      const BackboneHinge& h = model.hinges[seg.first_hinge + k - 1];
      // sum m |d|^2 - (a . d)^2 with d = c - p.
      const Vec3& p = h.anchor;
      const Mat3 dd =
          second - p * first.transpose() - first * p.transpose() + m * p * p.transpose();
      inertia[seg.first_hinge + k - 1] = dd.trace() - h.axis.dot(dd * h.axis);
    }
  }
  return inertia;
}

double dihedral(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d) {
  const Vec3 axis = (c - b).normalized();
  const Vec3 v = (a - b) - (a - b).dot(axis) * axis;
  const Vec3 w = (d - c) - (d - c).dot(axis) * axis;
  return std::atan2(axis.cross(v).dot(w), v.dot(w));
}

std::vector<double> bond_lengths(const BackboneModel& model, const BackboneFrame& frame) {
  std::vector<double> lengths;
  lengths.reserve(4 * model.residues.size());
  for (const BackboneSegment& seg : model.segments) {
    for (std::size_t i = seg.first_residue; i < seg.first_residue + seg.residue_count; ++i) {
      const BackboneResidue& r = model.residues[i];
      const auto& a = frame[r.chain][r.index];
      lengths.push_back((a[kAtomCA] - a[kAtomN]).norm());
      lengths.push_back((a[kAtomC] - a[kAtomCA]).norm());
      lengths.push_back((a[kAtomO] - a[kAtomC]).norm());
      if (i + 1 < seg.first_residue + seg.residue_count) {
        const BackboneResidue& r2 = model.residues[i + 1];
        lengths.push_back((frame[r2.chain][r2.index][kAtomN] - a[kAtomC]).norm());
      }
    }
  }
  return lengths;
}

namespace {

/// The point D with |CD| = length, angle BCD = angle and dihedral ABCD = torsion (rad)
/// (natural extension reference frame).
Vec3 place(const Vec3& a, const Vec3& b, const Vec3& c, double length, double angle,
           double torsion) {
  const Vec3 bc = (c - b).normalized();
  const Vec3 n = (b - a).cross(bc).normalized();
  const Vec3 m = n.cross(bc);
  const Vec3 d(-length * std::cos(angle), length * std::sin(angle) * std::cos(torsion),
               length * std::sin(angle) * std::sin(torsion));
  return c + d.x() * bc + d.y() * m + d.z() * n;
}

}  // namespace

PdbStructure ideal_backbone(const std::vector<PhiPsi>& dihedrals, char chain) {
  // Engh & Huber (1991) backbone geometry.
  constexpr double kNCa = 1.458, kCaC = 1.525, kCN = 1.329, kCO = 1.231;
  constexpr double kDeg = M_PI / 180;
  constexpr double kNCaC = 111.2 * kDeg, kCaCN = 116.2 * kDeg, kCNCa = 121.7 * kDeg,
                   kCaCO = 120.1 * kDeg, kOmega = M_PI;
  PdbStructure s;
  s.path = "ideal backbone";
  s.chains.push_back(PdbChain{chain, {}});
  std::vector<PdbResidue>& res = s.chains[0].residues;
  res.resize(dihedrals.size());
  for (std::size_t i = 0; i < res.size(); ++i) {
    PdbResidue& r = res[i];
    r.name = "ALA";
    r.seq = static_cast<int>(i + 1);
    r.present = {true, true, true, true};
    if (i == 0) {
      r.atoms[kAtomN] = Vec3::Zero();
      r.atoms[kAtomCA] = Vec3(kNCa, 0, 0);
      r.atoms[kAtomC] = r.atoms[kAtomCA] + kCaC * Vec3(-std::cos(kNCaC), std::sin(kNCaC), 0);
    } else {
      const PdbResidue& p = res[i - 1];
      r.atoms[kAtomN] = place(p.atoms[kAtomN], p.atoms[kAtomCA], p.atoms[kAtomC], kCN, kCaCN,
                              dihedrals[i - 1].psi);
      r.atoms[kAtomCA] =
          place(p.atoms[kAtomCA], p.atoms[kAtomC], r.atoms[kAtomN], kNCa, kCNCa, kOmega);
      r.atoms[kAtomC] =
          place(p.atoms[kAtomC], r.atoms[kAtomN], r.atoms[kAtomCA], kCaC, kNCaC, dihedrals[i].phi);
    }
    // O trans to the next N about CA-C.
    r.atoms[kAtomO] = place(r.atoms[kAtomN], r.atoms[kAtomCA], r.atoms[kAtomC], kCO, kCaCO,
                            dihedrals[i].psi + M_PI);
  }
  return s;
}

}  // namespace mabd::io
