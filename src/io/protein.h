// Articulated model of a protein backbone: rigid peptide planes and C-alpha bodies joined by
// hinges about the N-CA (phi) and CA-C (psi) bonds.
//
// Units. The model is built in Angstrom-scaled SI: one model metre is one Angstrom and one
// model kilogram one dalton (unified atomic mass unit); time is the animation's own (model
// seconds), not physical time. Body sizes are then ~1 m and masses ~10-40 kg, the range the
// solver's defaults (Newton tolerance 1e-8 m, materials of 1e6-1e10 Pa) are made for; at true
// scale (1e-10 m, 1e-26 kg) every length tolerance and every elastic modulus of the library
// would have to be rescaled by 1e-10 and the mass matrix would sit near 1e-46, so nothing is
// gained. Positions reported (PDB files, marker targets, RMS figures) are in Angstrom, which
// is also the model's metre.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "io/pdb.h"
#include "mabd/body.h"
#include "mabd/joint.h"
#include "mabd/math.h"
#include "mabd/settings.h"
#include "mabd/world.h"

namespace mabd::io {

/// Shapes and materials of the backbone bodies (model units, see the file comment).
struct BackboneOptions {
  /// Young's modulus (model Pa = Da / (Angstrom s^2)) of every body: how stiff the affine
  /// bodies are. Atoms are placed with the bodies' rigid poses while the hinges hold the
  /// affine bodies together, so the bonds across hinges (N-CA, CA-C) change by the bodies'
  /// strain, ~ load / E: relative changes of 3e-8 (pept) and 4e-7 (1hpv) at 1e14 in the shipped
  /// examples, ten times more per decade less (examples/protein/README.md).
  double youngs_modulus = 1e14;
  double poisson_ratio = 0.3;
  /// Radius (Angstrom) of the C-alpha spheres and the peptide-plane capsules.
  double radius = 0.7;
  /// A residue whose N lies farther than this (Angstrom) from the previous residue's C starts
  /// a new segment (a chain break; a peptide bond is 1.33 Angstrom).
  double max_peptide_bond = 2.0;
};

/// Which dihedral a hinge carries.
enum class DihedralKind { Phi, Psi };

/// One hinge of the model, in the reference (input) configuration.
struct BackboneHinge {
  std::size_t parent = 0;      ///< body towards the N terminus
  std::size_t child = 0;       ///< body towards the C terminus (parent + 1)
  Vec3 anchor = Vec3::Zero();  ///< the residue's CA (Angstrom)
  Vec3 axis = Vec3::UnitZ();   ///< unit: N->CA (phi) or CA->C (psi)
  DihedralKind kind = DihedralKind::Phi;
  std::size_t residue = 0;  ///< index into BackboneModel::residues
};

/// Where a backbone atom sits: a body and the atom's position in the body's own frame.
struct AtomSite {
  std::size_t body = 0;
  Vec3 local = Vec3::Zero();  ///< Angstrom, body frame
};

/// A modelled residue: where its four atoms are, and where it came from.
struct BackboneResidue {
  std::size_t chain = 0;                       ///< index into BackboneModel::structure.chains
  std::size_t index = 0;                       ///< index into that chain's residues
  std::size_t ca_body = 0;                     ///< the residue's C-alpha body
  std::array<AtomSite, kBackboneAtoms> atoms;  ///< N, CA, C, O
};

/// An unbroken stretch of a chain: bodies [first_body, first_body + body_count) joined in a
/// line by hinges [first_hinge, first_hinge + body_count - 1), hinge first_hinge + k joining
/// bodies first_body + k and first_body + k + 1. Its first body (the first residue's CA) is
/// the root.
struct BackboneSegment {
  std::size_t first_body = 0, body_count = 0;
  std::size_t first_hinge = 0;
  std::size_t first_residue = 0, residue_count = 0;  ///< into BackboneModel::residues
};

/// The articulated backbone. Bodies and joints are listed in the order make_backbone_world
/// adds them, so body i has BodyId{i} and hinge i has JointId{i}.
struct BackboneModel {
  /// The residues modelled (those with all four backbone atoms), by chain as in the input.
  PdbStructure structure;
  std::vector<BodyDef> bodies;  ///< reference configuration, model units
  std::vector<BackboneHinge> hinges;
  std::vector<BackboneResidue> residues;  ///< in structure order (chain by chain)
  std::vector<BackboneSegment> segments;
  /// Remarks: the input's warnings, residues left out, chain breaks.
  std::vector<std::string> warnings;

  /// Index into `residues` of residue `seq` (first insertion code) of the first chain named
  /// `chain`; throws InvalidArgument naming both when there is none.
  std::size_t find_residue(char chain, int seq) const;
};

/// Builds the model of `structure`'s backbone. One C-alpha body per residue (a sphere at CA,
/// mass C + H; the first residue of a segment also carries its N + 2 H), one peptide body per
/// peptide plane (C, O and the next N + H; a capsule from CA to CA), one terminal body per
/// segment (the last C and O; a capsule along C-O). Residues lacking a backbone atom are left
/// out and split their chain. Throws InvalidArgument when no residue can be modelled.
BackboneModel build_backbone(const PdbStructure& structure, const BackboneOptions& options = {});

/// A configuration of the model: per segment the rigid transform applied to the reference
/// (x -> R x + t), per hinge its rotation (rad, right-handed about the hinge axis, the child
/// side turning) away from the reference.
struct BackboneConfiguration {
  std::vector<Pose> roots;     ///< per segment
  std::vector<double> angles;  ///< per hinge
};

/// The reference configuration (identity roots, zero angles).
BackboneConfiguration reference_configuration(const BackboneModel& model);

/// Body poses (model units) of `config` (forward kinematics).
std::vector<Pose> body_poses(const BackboneModel& model, const BackboneConfiguration& config);

/// Backbone atom positions (Angstrom) of the bodies at `poses` (body order), shaped like
/// model.structure.
BackboneFrame place_atoms(const BackboneModel& model, const std::vector<Pose>& poses);

/// The bodies' poses in `world` (built by make_backbone_world).
std::vector<Pose> world_poses(const World& world, const BackboneModel& model);

/// How make_backbone_world sets up the world.
struct BackboneWorldOptions {
  WorldSettings settings;  ///< gravity is usually zero for a molecule
  /// Position drive on every hinge (target 0 = the reference angle), or none.
  std::optional<JointDrive> drive;
  /// Per segment: a prescribed motion of its root body, which is then kinematic; empty: every
  /// body dynamic.
  std::vector<MotionFunction> root_motion;
};

/// A World with the model's bodies and hinges (body i = BodyId{i}, hinge i = JointId{i}).
/// Collisions are off (neighbouring atoms overlap).
World make_backbone_world(const BackboneModel& model, const BackboneWorldOptions& options);

/// Per hinge: the moment of inertia (model kg m^2 = Da Angstrom^2) about its axis of the bodies
/// on its child side, in the reference configuration, counting each body as a point mass at
/// its centre (the bodies' own inertia is small next to the chain's lever arms).
std::vector<double> downstream_inertia(const BackboneModel& model);

/// Dihedral angle (rad, IUPAC sign) of the points a-b-c-d.
double dihedral(const Vec3& a, const Vec3& b, const Vec3& c, const Vec3& d);

/// Backbone dihedrals of one residue (rad): phi (C-N-CA-C) and psi (N-CA-C-N).
struct PhiPsi {
  double phi = 0;
  double psi = 0;
};

/// A single-chain backbone (chain `chain`, residues ALA 1, 2, ...) with Engh-Huber bond lengths
/// and angles, trans peptide bonds (omega = 180 degrees) and the given dihedrals (the first
/// residue's phi and the last one's psi place no backbone atom and are ignored; the last O
/// is placed as if the next N followed). Angstrom, first N at the origin.
PdbStructure ideal_backbone(const std::vector<PhiPsi>& dihedrals, char chain = 'A');

/// Bond lengths (Angstrom) of `frame`: per residue N-CA, CA-C, C-O, then C-N to the next
/// residue of the same segment. Used to check that a motion keeps the covalent geometry.
std::vector<double> bond_lengths(const BackboneModel& model, const BackboneFrame& frame);

}  // namespace mabd::io
