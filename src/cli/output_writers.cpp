#include "cli/output_writers.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string_view>
#include <system_error>
#include <utility>

#include <nlohmann/json.hpp>

#include "cli/commands.h"

namespace mabd::cli {

namespace {

/// Rows kept in memory before they are written (bytes), and longest time they wait (s).
constexpr std::size_t kFlushBytes = 1 << 20;
constexpr double kFlushSeconds = 1.0;

std::string lowercase(std::string text) {
  for (char& c : text) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return text;
}

}  // namespace

void check_extension(const char* option, const std::string& path,
                     std::initializer_list<const char*> extensions) {
  const std::string extension = lowercase(std::filesystem::path(path).extension().string());
  for (const char* allowed : extensions) {
    if (extension == allowed) return;
  }
  std::string supported;
  for (const char* allowed : extensions) {
    if (!supported.empty()) supported += ", ";
    supported += allowed;
  }
  const std::string shown = std::filesystem::path(path).extension().string();
  throw UsageError(std::string(option) + ": unsupported extension '" + shown +
                   "' (supported: " + supported + ")");
}

// ---- OutputFile -----------------------------------------------------------------------

OutputFile::OutputFile(const char* option, std::string path)
    : option_(option), path_(std::move(path)) {
  file_ = std::fopen(path_.c_str(), "wb");
  if (file_ == nullptr) {
    throw UsageError(std::string(option_) + ": cannot open '" + path_ +
                     "' for writing: " + std::strerror(errno));
  }
  // The rows are buffered here, whole; the stream's own buffer would pass them on in pieces
  // of its size, cut anywhere.
  std::setvbuf(file_, nullptr, _IONBF, 0);
  pending_.reserve(kFlushBytes);
  last_flush_ = std::chrono::steady_clock::now();
}

OutputFile::~OutputFile() {
  if (file_ == nullptr) return;
  if (!pending_.empty()) {
    const std::size_t ignored = std::fwrite(pending_.data(), 1, pending_.size(), file_);
    (void)ignored;
  }
  std::fclose(file_);
}

void OutputFile::write(const std::string& text) {
  if (file_ == nullptr) return;
  pending_ += text;
  if (pending_.size() >= kFlushBytes) {
    flush();
  } else {
    const auto now = std::chrono::steady_clock::now();
    if (std::chrono::duration<double>(now - last_flush_).count() >= kFlushSeconds) flush();
  }
}

void OutputFile::flush() {
  if (file_ == nullptr) return;
  last_flush_ = std::chrono::steady_clock::now();
  if (pending_.empty()) return;
  const bool written = std::fwrite(pending_.data(), 1, pending_.size(), file_) == pending_.size();
  pending_.clear();
  if (!written) {
    throw OutputError(std::string(option_) + ": error writing '" + path_ +
                      "': " + std::strerror(errno));
  }
}

void OutputFile::close() {
  if (file_ == nullptr) return;
  try {
    flush();
  } catch (const OutputError&) {
    std::fclose(file_);
    file_ = nullptr;
    throw;
  }
  const bool failed = std::ferror(file_) != 0;
  const bool close_failed = std::fclose(file_) != 0;
  const int error = errno;
  file_ = nullptr;
  if (failed || close_failed) {
    throw OutputError(std::string(option_) + ": error writing '" + path_ +
                      "': " + std::strerror(error));
  }
}

void OutputFile::discard() {
  pending_.clear();
  if (file_ != nullptr) {
    std::fclose(file_);
    file_ = nullptr;
  }
  std::error_code ignored;
  std::filesystem::remove(path_, ignored);
}

// ---- formatting -------------------------------------------------------------------------

std::string csv_escape(const std::string& field) {
  if (field.find_first_of(",\"\r\n") == std::string::npos) return field;
  std::string quoted = "\"";
  for (char c : field) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  quoted += '"';
  return quoted;
}

void append_number(std::string& out, double value, const char* format) {
  char text[40];
  const int n = std::snprintf(text, sizeof text, format, value);
  if (n > 0) out.append(text, static_cast<std::size_t>(std::min<int>(n, sizeof text - 1)));
}

// ---- PoseCsvWriter ----------------------------------------------------------------------

/// "step,time," of the world's current state, the start of every CSV row.
static std::string row_prefix(const World& world) {
  std::string prefix = std::to_string(world.step_count());
  prefix += ',';
  append_number(prefix, world.time(), "%.12g");
  prefix += ',';
  return prefix;
}

PoseCsvWriter::PoseCsvWriter(const std::string& path, const World& world)
    : file_("--out", path) {
  const std::size_t n = world.body_count();
  names_.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::string& name = world.body_info(BodyId{static_cast<std::uint32_t>(i)}).name;
    names_.push_back(csv_escape(name.empty() ? std::to_string(i) : name));
  }
  file_.write("step,time,body,x,y,z,qw,qx,qy,qz\n");
  file_.flush();
}

void PoseCsvWriter::write(const World& world) {
  buffer_.clear();
  const std::string prefix = row_prefix(world);
  for (std::size_t i = 0; i < names_.size(); ++i) {
    const Pose pose = world.pose(BodyId{static_cast<std::uint32_t>(i)});
    buffer_ += prefix;
    buffer_ += names_[i];
    for (int k = 0; k < 3; ++k) {
      buffer_ += ',';
      append_number(buffer_, pose.position[k], "%.12g");
    }
    const Quat& q = pose.orientation;
    for (double c : {q.w(), q.x(), q.y(), q.z()}) {
      buffer_ += ',';
      append_number(buffer_, c, "%.12g");
    }
    buffer_ += '\n';
  }
  file_.write(buffer_);
}

// ---- GlbWriter ---------------------------------------------------------------------------

GlbWriter::GlbWriter(const std::string& path, const World& world,
                     const std::vector<BodyDef>& bodies, std::size_t max_bodies)
    : file_("--out", path), recorder_(world, bodies, max_bodies) {}

void GlbWriter::close() {
  if (done_) return;
  done_ = true;
  file_.close();
  try {
    recorder_.write_glb(file_.path());
  } catch (const std::runtime_error&) {
    throw OutputError(std::string("--out: error writing '") + file_.path() + "'");
  }
}

void GlbWriter::discard() {
  done_ = true;
  file_.discard();
}

// ---- JointForceCsvWriter -----------------------------------------------------------------

JointForceCsvWriter::JointForceCsvWriter(const std::string& path, const World& world)
    : file_("--joint-forces", path) {
  const std::size_t n = world.joint_count();
  names_.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::string& name = world.joint_name(JointId{static_cast<std::uint32_t>(i)});
    names_.push_back(csv_escape(name.empty() ? std::to_string(i) : name));
  }
  file_.write("step,time,joint,fx,fy,fz,tx,ty,tz\n");
  file_.flush();
}

void JointForceCsvWriter::write(const World& world) {
  if (names_.empty()) return;
  buffer_.clear();
  const std::string prefix = row_prefix(world);
  for (std::size_t i = 0; i < names_.size(); ++i) {
    const JointWrench wrench = world.joint_wrench(JointId{static_cast<std::uint32_t>(i)});
    buffer_ += prefix;
    buffer_ += names_[i];
    for (const Vec3* v : {&wrench.force, &wrench.torque}) {
      for (int k = 0; k < 3; ++k) {
        buffer_ += ',';
        append_number(buffer_, (*v)[k], "%.12g");
      }
    }
    buffer_ += '\n';
  }
  file_.write(buffer_);
}

// ---- StatsJsonlWriter -------------------------------------------------------------------

StatsJsonlWriter::StatsJsonlWriter(const std::string& path) : file_("--stats", path) {}

void StatsJsonlWriter::write(const World& world) {
  const StepStats& stats = world.last_step();
  const auto vector = [](const Vec3& v) { return nlohmann::ordered_json::array({v[0], v[1], v[2]}); };
  nlohmann::ordered_json line;
  line["step"] = world.step_count();
  line["time"] = world.time();
  line["newton_iterations"] = stats.newton_iterations;
  line["residual"] = stats.residual;
  line["joint_residual"] = stats.joint_residual;
  line["solver"] = stats.solver;
  if (std::string_view(stats.solver) == "iterative") {
    line["dual_iterations"] = stats.dual_iterations;
    line["dual_residual"] = stats.dual_residual;
  }
  line["contacts"] = stats.contacts;
  line["max_penetration"] = stats.max_penetration;
  line["kinetic_energy"] = world.kinetic_energy();
  line["potential_energy"] = world.potential_energy();
  line["linear_momentum"] = vector(world.linear_momentum());
  line["angular_momentum"] = vector(world.angular_momentum());
  line["wall_ms"] = stats.wall_ms;
  line["detect_ms"] = stats.detect_ms;
  line["body_ms"] = stats.body_ms;
  line["dual_ms"] = stats.dual_ms;
  line["contact_ms"] = stats.contact_ms;
  line["body_contacts"] = stats.body_contacts;
  if (stats.contact_sweeps > 0 || stats.contact_pivots > 0) {
    line["contact_sweeps"] = stats.contact_sweeps;
    line["contact_pivots"] = stats.contact_pivots;
  }
  line["predict_ms"] = stats.predict_ms;
  line["rows_ms"] = stats.rows_ms;
  line["check_ms"] = stats.check_ms;
  line["finish_ms"] = stats.finish_ms;
  if (world.soft_body_count() > 0) {
    line["soft_ms"] = stats.soft_ms;
    line["attachment_residual"] = stats.attachment_residual;
  }
  buffer_ = line.dump();
  buffer_ += '\n';
  file_.write(buffer_);
}

}  // namespace mabd::cli
