// Protein Data Bank (PDB) files: reading the backbone atoms (N, CA, C, O) of each residue and
// writing multi-model backbone trajectories. Coordinates are in Angstrom, as in the files.
#pragma once

#include <array>
#include <ostream>
#include <string>
#include <vector>

#include "mabd/math.h"

namespace mabd::io {

/// The four backbone atoms, in this order everywhere (PDB atom names " N  ", " CA ", " C  ",
/// " O  ").
enum BackboneAtomIndex { kAtomN = 0, kAtomCA = 1, kAtomC = 2, kAtomO = 3 };
inline constexpr int kBackboneAtoms = 4;
/// PDB atom name of each backbone atom ("N", "CA", "C", "O").
extern const std::array<const char*, kBackboneAtoms> kBackboneAtomNames;

/// One residue of a chain: its backbone atoms as read (Angstrom, file frame).
struct PdbResidue {
  std::string name;                            ///< residue name, e.g. "ALA"
  int seq = 0;                                 ///< residue sequence number (resSeq)
  char insertion = ' ';                        ///< insertion code (iCode)
  std::array<Vec3, kBackboneAtoms> atoms{};    ///< N, CA, C, O (Angstrom)
  std::array<bool, kBackboneAtoms> present{};  ///< which of them the file has
  int line = 0;                                ///< line of the residue's first ATOM record
  /// True when all four backbone atoms are present.
  bool complete() const { return present[0] && present[1] && present[2] && present[3]; }
};

/// One chain, in file order. A chain identifier that reappears after a TER record (or after
/// another chain) starts a new chain: chains are kept apart.
struct PdbChain {
  char id = ' ';
  std::vector<PdbResidue> residues;
};

/// The backbone of one model of a PDB file.
struct PdbStructure {
  std::string path;  ///< file it was read from (or the name given to parse_pdb)
  int model = 0;     ///< MODEL serial read (0: the file has no MODEL records)
  std::vector<PdbChain> chains;
  /// Remarks on valid input, one line each naming file, line and residue: residues missing
  /// backbone atoms, duplicate atoms ignored.
  std::vector<std::string> warnings;
};

struct PdbReadOptions {
  /// MODEL serial number to read; 0 = the first model (or the whole file without MODEL).
  int model = 0;
};

/// Reads the backbone atoms of ATOM records (HETATM records are ignored) of one model.
/// Alternate locations: the first one met for each atom is kept. Throws InvalidArgument
/// "FILE:LINE: what is wrong" on a malformed ATOM/MODEL record (short line, a coordinate or
/// residue number that is not a number), "FILE: what is wrong" when the file cannot be read,
/// has no backbone atoms or lacks the requested model.
PdbStructure read_pdb(const std::string& path, const PdbReadOptions& options = {});

/// As read_pdb, from the text of a file; `name` stands for the file in messages.
PdbStructure parse_pdb(const std::string& text, const std::string& name,
                       const PdbReadOptions& options = {});

/// Reads the backbone atoms of an mmCIF file's `_atom_site` loop (PDBx/mmCIF as the PDB
/// distributes it): group_PDB ATOM rows (HETATM ignored), author chain, residue numbers, names
/// and atom names where given (else the label ones), insertion codes, the first alternate
/// location, the first model (pdbx_PDB_model_num) unless `options.model` names one. Chain
/// identifiers must be one character (they are written back to PDB files). Throws
/// InvalidArgument "FILE:LINE: what is wrong" as read_pdb does (a missing column, a value that
/// is not a number, a row cut short, a multi-character chain identifier).
PdbStructure parse_mmcif(const std::string& text, const std::string& name,
                         const PdbReadOptions& options = {});

/// read_pdb, or the mmCIF reader for a file name ending in .cif or .mmcif (any case).
PdbStructure read_structure(const std::string& path, const PdbReadOptions& options = {});

/// Backbone atom positions of one frame: per chain, per residue, N CA C O (Angstrom).
using BackboneFrame = std::vector<std::vector<std::array<Vec3, kBackboneAtoms>>>;

/// Writes one MODEL ... ENDMDL block of the backbone atoms of `structure`'s residues (names,
/// numbers and chains from `structure`, positions from `frame`, which has its shape), with a TER
/// record after each chain. Atoms a residue lacks in `structure` are left out. `model` is the
/// MODEL serial (>= 1).
void write_pdb_model(std::ostream& out, const PdbStructure& structure, const BackboneFrame& frame,
                     int model);

/// The atoms of `structure` itself as a frame.
BackboneFrame frame_of(const PdbStructure& structure);

}  // namespace mabd::io
