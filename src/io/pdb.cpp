#include "io/pdb.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string_view>

#include "mabd/error.h"

namespace mabd::io {

const std::array<const char*, kBackboneAtoms> kBackboneAtomNames = {"N", "CA", "C", "O"};

namespace {

/// Where a record is, for messages.
struct At {
  const std::string& file;
  int line;
  [[noreturn]] void fail(const std::string& what) const {
    throw InvalidArgument(file + ":" + std::to_string(line) + ": " + what);
  }
};

/// Columns [first, last] (1-based, inclusive, as in the PDB format description) of `line`,
/// without surrounding blanks; "" past the end of the line.
std::string_view columns(std::string_view line, std::size_t first, std::size_t last) {
  if (line.size() < first) return {};
  std::string_view s = line.substr(first - 1, last - first + 1);
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

double parse_coordinate(std::string_view field, const char* name, const char* cols, const At& at) {
  const std::string text(field);
  char* end = nullptr;
  errno = 0;
  const double value = text.empty() ? 0.0 : std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size()) {
    at.fail(std::string(name) + " coordinate (columns " + cols + ") '" + text +
            "' is not a number");
  }
  if (!std::isfinite(value) || errno == ERANGE) {
    at.fail(std::string(name) + " coordinate (columns " + cols + ") '" + text + "' is not finite");
  }
  return value;
}

int parse_integer(std::string_view field, const std::string& what, const At& at) {
  const std::string text(field);
  char* end = nullptr;
  errno = 0;
  const long value = text.empty() ? 0 : std::strtol(text.c_str(), &end, 10);
  if (text.empty() || end != text.c_str() + text.size() || errno == ERANGE) {
    at.fail(what + " '" + text + "' is not an integer");
  }
  return static_cast<int>(value);
}

int backbone_index(std::string_view atom_name) {
  for (int k = 0; k < kBackboneAtoms; ++k) {
    if (atom_name == kBackboneAtomNames[k]) return k;
  }
  return -1;
}

std::string residue_label(const PdbChain& chain, const PdbResidue& r) {
  std::string label = r.name + " " + std::string(1, chain.id) + " " + std::to_string(r.seq);
  if (r.insertion != ' ') label += r.insertion;
  return label;
}

}  // namespace

PdbStructure parse_pdb(const std::string& text, const std::string& name,
                       const PdbReadOptions& options) {
  if (options.model < 0) {
    throw InvalidArgument(name + ": model " + std::to_string(options.model) +
                          " is invalid (MODEL serials are >= 1; 0 = the first model)");
  }
  PdbStructure s;
  s.path = name;
  std::istringstream in(text);
  std::string raw;
  int line_number = 0;
  bool in_model = false;    // inside a MODEL block
  bool reading = true;      // records of the wanted model (or of a file without MODEL)
  bool done = false;        // the wanted model has ended
  bool chain_open = false;  // the last chain may still take residues (no TER since)
  bool saw_model = false;
  while (!done && std::getline(in, raw)) {
    ++line_number;
    if (!raw.empty() && raw.back() == '\r') raw.pop_back();
    const std::string_view line(raw);
    const At at{name, line_number};
    const std::string_view record = columns(line, 1, 6);
    if (record == "MODEL") {
      if (in_model) at.fail("MODEL record inside another MODEL (missing ENDMDL)");
      const int serial = parse_integer(columns(line, 11, 14), "MODEL serial (columns 11-14)", at);
      in_model = true;
      saw_model = true;
      reading = options.model == 0 ? s.chains.empty() : serial == options.model;
      if (reading) s.model = serial;
      chain_open = false;
      continue;
    }
    if (record == "ENDMDL") {
      if (!in_model) at.fail("ENDMDL record without a MODEL record");
      in_model = false;
      if (reading && !s.chains.empty()) done = true;
      reading = false;
      continue;
    }
    if (record == "TER") {
      chain_open = false;
      continue;
    }
    if (record != "ATOM" || !reading) continue;
    if (saw_model && !in_model) at.fail("ATOM record outside MODEL ... ENDMDL");
    if (line.size() < 54) {
      at.fail("ATOM record is " + std::to_string(line.size()) +
              " characters long; coordinates need columns 31-54");
    }
    const int atom = backbone_index(columns(line, 13, 16));
    const char altloc = line[16];
    const std::string residue_name(columns(line, 18, 20));
    const char chain_id = line[21];
    const int seq = parse_integer(columns(line, 23, 26), "residue number (columns 23-26)", at);
    const char insertion = line[26];
    const Vec3 x(parse_coordinate(columns(line, 31, 38), "x", "31-38", at),
                 parse_coordinate(columns(line, 39, 46), "y", "39-46", at),
                 parse_coordinate(columns(line, 47, 54), "z", "47-54", at));
    if (!chain_open || s.chains.back().id != chain_id) {
      s.chains.push_back(PdbChain{chain_id, {}});
      chain_open = true;
    }
    PdbChain& chain = s.chains.back();
    if (chain.residues.empty() || chain.residues.back().seq != seq ||
        chain.residues.back().insertion != insertion) {
      PdbResidue r;
      r.name = residue_name;
      r.seq = seq;
      r.insertion = insertion;
      r.line = line_number;
      chain.residues.push_back(r);
    }
    PdbResidue& r = chain.residues.back();
    if (atom < 0) continue;
    if (r.present[atom]) {
      // An alternate location of an atom already read is dropped silently; a true duplicate
      // (same or blank location) is noted.
      if (altloc == ' ') {
        s.warnings.push_back(name + ":" + std::to_string(line_number) + ": residue " +
                             residue_label(chain, r) + ": duplicate atom " +
                             kBackboneAtomNames[atom] + " ignored (the first one is kept)");
      }
      continue;
    }
    r.atoms[atom] = x;
    r.present[atom] = true;
  }
  if (in_model && reading && !done) {
    throw InvalidArgument(name + ":" + std::to_string(line_number) + ": MODEL " +
                          std::to_string(s.model) + " has no ENDMDL record");
  }
  if (options.model != 0 && s.model != options.model) {
    throw InvalidArgument(name + ": no MODEL " + std::to_string(options.model) + " in the file");
  }
  bool any_backbone = false;
  for (const PdbChain& chain : s.chains) {
    for (const PdbResidue& r : chain.residues) {
      if (r.complete()) {
        any_backbone = true;
        continue;
      }
      std::string missing;
      for (int k = 0; k < kBackboneAtoms; ++k) {
        if (!r.present[k])
          missing += std::string(missing.empty() ? "" : ", ") + kBackboneAtomNames[k];
      }
      s.warnings.push_back(name + ":" + std::to_string(r.line) + ": residue " +
                           residue_label(chain, r) + " lacks backbone atom(s) " + missing);
    }
  }
  if (!any_backbone) {
    throw InvalidArgument(name +
                          ": no residue with all backbone atoms (N, CA, C, O) in ATOM "
                          "records");
  }
  return s;
}

PdbStructure read_pdb(const std::string& path, const PdbReadOptions& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InvalidArgument(path + ": cannot open");
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw InvalidArgument(path + ": read error");
  return parse_pdb(ss.str(), path, options);
}

BackboneFrame frame_of(const PdbStructure& structure) {
  BackboneFrame frame(structure.chains.size());
  for (std::size_t c = 0; c < structure.chains.size(); ++c) {
    for (const PdbResidue& r : structure.chains[c].residues) frame[c].push_back(r.atoms);
  }
  return frame;
}

void write_pdb_model(std::ostream& out, const PdbStructure& structure, const BackboneFrame& frame,
                     int model) {
  static const std::array<const char*, kBackboneAtoms> kPadded = {" N  ", " CA ", " C  ", " O  "};
  static const std::array<char, kBackboneAtoms> kElement = {'N', 'C', 'C', 'O'};
  char buffer[128];
  std::snprintf(buffer, sizeof buffer, "MODEL     %4d\n", model);
  out << buffer;
  int serial = 0;
  for (std::size_t c = 0; c < structure.chains.size(); ++c) {
    const PdbChain& chain = structure.chains[c];
    const PdbResidue* last = nullptr;
    for (std::size_t i = 0; i < chain.residues.size(); ++i) {
      const PdbResidue& r = chain.residues[i];
      for (int k = 0; k < kBackboneAtoms; ++k) {
        if (!r.present[k]) continue;
        const Vec3& x = frame[c][i][k];
        std::snprintf(buffer, sizeof buffer,
                      "ATOM  %5d %s %3.3s %c%4d%c   %8.3f%8.3f%8.3f%6.2f%6.2f          %2c\n",
                      (++serial) % 100000, kPadded[k], r.name.c_str(), chain.id, r.seq % 10000,
                      r.insertion, x.x(), x.y(), x.z(), 1.0, 0.0, kElement[k]);
        out << buffer;
        last = &r;
      }
    }
    if (last != nullptr) {
      std::snprintf(buffer, sizeof buffer, "TER   %5d      %3.3s %c%4d%c\n", (++serial) % 100000,
                    last->name.c_str(), chain.id, last->seq % 10000, last->insertion);
      out << buffer;
    }
  }
  out << "ENDMDL\n";
}

}  // namespace mabd::io
