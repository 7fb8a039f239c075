#include "io/pdb.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string_view>
#include <utility>
#include <vector>

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

/// One atom record as read, already checked.
struct AtomRecord {
  char chain = ' ';
  int seq = 0;
  char insertion = ' ';
  std::string residue;
  int atom = -1;           ///< backbone index, -1 for other atoms
  bool alternate = false;  ///< has an alternate-location code
  Vec3 x = Vec3::Zero();
  int line = 0;
};

/// Adds `a` to `s`: to the last chain while `chain_open` and the chain identifier is the
/// same, to the last residue while its number and insertion code are the same. The first
/// location of an atom is kept.
void add_atom(PdbStructure& s, bool& chain_open, const AtomRecord& a) {
  if (!chain_open || s.chains.back().id != a.chain) {
    s.chains.push_back(PdbChain{a.chain, {}});
    chain_open = true;
  }
  PdbChain& chain = s.chains.back();
  if (chain.residues.empty() || chain.residues.back().seq != a.seq ||
      chain.residues.back().insertion != a.insertion) {
    PdbResidue r;
    r.name = a.residue;
    r.seq = a.seq;
    r.insertion = a.insertion;
    r.line = a.line;
    chain.residues.push_back(r);
  }
  PdbResidue& r = chain.residues.back();
  if (a.atom < 0) return;
  if (r.present[a.atom]) {
    // An alternate location of an atom already read is dropped silently; a true duplicate
    // (no location code) is noted.
    if (!a.alternate) {
      s.warnings.push_back(s.path + ":" + std::to_string(a.line) + ": residue " +
                           residue_label(chain, r) + ": duplicate atom " +
                           kBackboneAtomNames[a.atom] + " ignored (the first one is kept)");
    }
    return;
  }
  r.atoms[a.atom] = a.x;
  r.present[a.atom] = true;
}

/// Notes the residues missing backbone atoms; throws when no residue is complete.
void finish(PdbStructure& s, const PdbReadOptions& options, const char* model_word) {
  if (options.model != 0 && s.model != options.model) {
    throw InvalidArgument(s.path + ": no " + model_word + " " + std::to_string(options.model) +
                          " in the file");
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
        if (!r.present[k]) {
          missing += std::string(missing.empty() ? "" : ", ") + kBackboneAtomNames[k];
        }
      }
      s.warnings.push_back(s.path + ":" + std::to_string(r.line) + ": residue " +
                           residue_label(chain, r) + " lacks backbone atom(s) " + missing);
    }
  }
  if (!any_backbone) {
    throw InvalidArgument(s.path +
                          ": no residue with all backbone atoms (N, CA, C, O) in ATOM "
                          "records");
  }
}

/// An empty structure read from `name`; throws for a negative model number.
PdbStructure start_structure(const std::string& name, const PdbReadOptions& options,
                             const char* numbers) {
  if (options.model < 0) {
    throw InvalidArgument(name + ": model " + std::to_string(options.model) + " is invalid (" +
                          numbers + " are >= 1; 0 = the first model)");
  }
  PdbStructure s;
  s.path = name;
  return s;
}

}  // namespace

PdbStructure parse_pdb(const std::string& text, const std::string& name,
                       const PdbReadOptions& options) {
  PdbStructure s = start_structure(name, options, "MODEL serials");
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
    AtomRecord rec;
    rec.atom = backbone_index(columns(line, 13, 16));
    rec.alternate = line[16] != ' ';
    rec.residue = std::string(columns(line, 18, 20));
    rec.chain = line[21];
    rec.seq = parse_integer(columns(line, 23, 26), "residue number (columns 23-26)", at);
    rec.insertion = line[26];
    rec.x = Vec3(parse_coordinate(columns(line, 31, 38), "x", "31-38", at),
                 parse_coordinate(columns(line, 39, 46), "y", "39-46", at),
                 parse_coordinate(columns(line, 47, 54), "z", "47-54", at));
    rec.line = line_number;
    add_atom(s, chain_open, rec);
  }
  if (in_model && reading && !done) {
    throw InvalidArgument(name + ":" + std::to_string(line_number) + ": MODEL " +
                          std::to_string(s.model) + " has no ENDMDL record");
  }
  finish(s, options, "MODEL");
  return s;
}

namespace {

std::string read_text_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InvalidArgument(path + ": cannot open");
  std::stringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw InvalidArgument(path + ": read error");
  return ss.str();
}

/// Splits one line of a CIF file into tokens: blank-separated words, quoted strings ('...' or
/// "...", closed by a quote followed by a blank), up to a comment (#).
std::vector<std::string> cif_tokens(std::string_view line, const At& at) {
  std::vector<std::string> tokens;
  std::size_t i = 0;
  while (i < line.size()) {
    const char c = line[i];
    if (c == ' ' || c == '\t') {
      ++i;
      continue;
    }
    if (c == '#') break;
    if (c == '\'' || c == '"') {
      std::size_t j = i + 1;
      while (j < line.size() && !(line[j] == c && (j + 1 == line.size() || line[j + 1] == ' ' ||
                                                   line[j + 1] == '\t'))) {
        ++j;
      }
      if (j >= line.size()) at.fail(std::string("unterminated quoted value starting with ") + c);
      tokens.emplace_back(line.substr(i + 1, j - i - 1));
      i = j + 1;
      continue;
    }
    std::size_t j = i;
    while (j < line.size() && line[j] != ' ' && line[j] != '\t') ++j;
    tokens.emplace_back(line.substr(i, j - i));
    i = j;
  }
  return tokens;
}

/// CIF's unknown (?) and inapplicable (.) values.
bool cif_null(const std::string& v) { return v == "?" || v == "."; }

}  // namespace

PdbStructure parse_mmcif(const std::string& text, const std::string& name,
                         const PdbReadOptions& options) {
  PdbStructure s = start_structure(name, options, "model numbers");
  std::istringstream in(text);
  std::string raw;
  int line_number = 0;
  enum class State { Outside, LoopStart, Header, Rows } state = State::Outside;
  std::vector<std::string> columns_of;  // _atom_site column names, in order
  std::vector<std::string> row;
  int row_line = 0;
  bool chain_open = false, seen_loop = false;
  auto column = [&](std::initializer_list<const char*> names) -> int {
    for (const char* n : names) {
      for (std::size_t k = 0; k < columns_of.size(); ++k) {
        if (columns_of[k] == n) return static_cast<int>(k);
      }
    }
    return -1;
  };
  int c_group = -1, c_atom = -1, c_alt = -1, c_comp = -1, c_chain = -1, c_seq = -1, c_ins = -1,
      c_x = -1, c_y = -1, c_z = -1, c_model = -1;
  auto use_row = [&]() {
    const At at{name, row_line};
    if (c_group >= 0 && row[c_group] != "ATOM") return;
    if (c_model >= 0) {
      const int model = parse_integer(row[c_model], "pdbx_PDB_model_num", at);
      if (s.model == 0 && (options.model == 0 || model == options.model)) s.model = model;
      if (model != s.model) return;
    }
    AtomRecord rec;
    rec.line = row_line;
    rec.atom = backbone_index(row[c_atom]);
    rec.alternate = c_alt >= 0 && !cif_null(row[c_alt]);
    rec.residue = c_comp >= 0 ? row[c_comp] : "UNK";
    const std::string& chain = row[c_chain];
    if (chain.size() != 1) {
      at.fail("chain identifier '" + chain + "' is not one character (not supported)");
    }
    rec.chain = chain[0];
    rec.seq = parse_integer(row[c_seq], "residue number (" + columns_of[c_seq] + ")", at);
    rec.insertion = c_ins >= 0 && !cif_null(row[c_ins]) ? row[c_ins][0] : ' ';
    rec.x = Vec3(parse_coordinate(row[c_x], "x", "Cartn_x", at),
                 parse_coordinate(row[c_y], "y", "Cartn_y", at),
                 parse_coordinate(row[c_z], "z", "Cartn_z", at));
    add_atom(s, chain_open, rec);
  };
  while (std::getline(in, raw)) {
    ++line_number;
    if (!raw.empty() && raw.back() == '\r') raw.pop_back();
    const At at{name, line_number};
    if (!raw.empty() && raw[0] == ';') {
      if (state == State::Rows) at.fail("multi-line text values in _atom_site are not supported");
      // A text field elsewhere: skip to its closing ';' line.
      while (std::getline(in, raw)) {
        ++line_number;
        if (!raw.empty() && raw[0] == ';') break;
      }
      continue;
    }
    const std::vector<std::string> tokens = cif_tokens(raw, at);
    if (tokens.empty()) continue;
    const std::string& first = tokens[0];
    if (state == State::Rows &&
        (first == "loop_" || first[0] == '_' || first.rfind("data_", 0) == 0)) {
      if (!row.empty()) {
        at.fail("_atom_site row of line " + std::to_string(row_line) + " has " +
                std::to_string(row.size()) + " values, the loop has " +
                std::to_string(columns_of.size()) + " columns");
      }
      state = State::Outside;
      break;  // one _atom_site loop per data block
    }
    if (state == State::Outside || state == State::LoopStart) {
      if (first == "loop_") {
        state = State::LoopStart;
        continue;
      }
      if (state == State::LoopStart && first.rfind("_atom_site.", 0) == 0) {
        state = State::Header;
        seen_loop = true;
      } else {
        state = State::Outside;
        continue;
      }
    }
    if (state == State::Header) {
      if (first.rfind("_atom_site.", 0) == 0) {
        columns_of.push_back(first.substr(11));
        continue;
      }
      if (first[0] == '_') at.fail("item " + first + " inside the _atom_site loop header");
      c_group = column({"group_PDB"});
      c_atom = column({"auth_atom_id", "label_atom_id"});
      c_alt = column({"label_alt_id"});
      c_comp = column({"auth_comp_id", "label_comp_id"});
      c_chain = column({"auth_asym_id", "label_asym_id"});
      c_seq = column({"auth_seq_id", "label_seq_id"});
      c_ins = column({"pdbx_PDB_ins_code"});
      c_x = column({"Cartn_x"});
      c_y = column({"Cartn_y"});
      c_z = column({"Cartn_z"});
      c_model = column({"pdbx_PDB_model_num"});
      const std::pair<int, const char*> required[] = {{c_atom, "auth_atom_id or label_atom_id"},
                                                      {c_chain, "auth_asym_id or label_asym_id"},
                                                      {c_seq, "auth_seq_id or label_seq_id"},
                                                      {c_x, "Cartn_x"},
                                                      {c_y, "Cartn_y"},
                                                      {c_z, "Cartn_z"}};
      for (const auto& [index, what] : required) {
        if (index < 0) at.fail(std::string("the _atom_site loop has no ") + what + " column");
      }
      state = State::Rows;
    }
    for (const std::string& t : tokens) {
      if (row.empty()) row_line = line_number;
      row.push_back(t);
      if (row.size() == columns_of.size()) {
        use_row();
        row.clear();
      }
    }
  }
  if (!row.empty()) {
    throw InvalidArgument(name + ":" + std::to_string(row_line) + ": _atom_site row has " +
                          std::to_string(row.size()) + " values, the loop has " +
                          std::to_string(columns_of.size()) + " columns");
  }
  if (!seen_loop) throw InvalidArgument(name + ": no _atom_site loop");
  finish(s, options, "model");
  return s;
}

PdbStructure read_pdb(const std::string& path, const PdbReadOptions& options) {
  return parse_pdb(read_text_file(path), path, options);
}

PdbStructure read_structure(const std::string& path, const PdbReadOptions& options) {
  std::string lower = path;
  for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto ends_with = [&](const std::string& suffix) {
    return lower.size() >= suffix.size() &&
           lower.compare(lower.size() - suffix.size(), suffix.size(), suffix) == 0;
  };
  if (ends_with(".cif") || ends_with(".mmcif")) {
    return parse_mmcif(read_text_file(path), path, options);
  }
  return read_pdb(path, options);
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
