// Output files of `mabd run`: body poses (CSV, streamed, or binary glTF, written at the end)
// and per-step statistics (JSONL).
#pragma once

#include <chrono>
#include <cstdio>
#include <initializer_list>
#include <string>
#include <vector>

#include "io/gltf_export.h"
#include "mabd/body.h"
#include "mabd/world.h"

namespace mabd::cli {

/// Checks that `path` ends in one of `extensions` (e.g. {".csv"}; case-insensitive). Throws
/// UsageError "OPTION: unsupported extension '.xyz' (supported: .csv)" otherwise.
void check_extension(const char* option, const std::string& path,
                     std::initializer_list<const char*> extensions);

/// A buffered output file. Every write() holds whole rows (a step's, or a sample's), and the
/// buffer goes to the file only between two writes, in one piece: a run killed at any moment
/// leaves a file that ends with a whole row. The buffer is written when it holds
/// kFlushBytes or when kFlushSeconds have passed since the last write to the file. Errors
/// throw OutputError naming `option`.
class OutputFile {
 public:
  OutputFile(const char* option, std::string path);  ///< creates/truncates the file
  ~OutputFile();                                      ///< closes without reporting errors
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  /// Appends `text` (whole rows).
  void write(const std::string& text);
  /// Writes the buffered rows to the file.
  void flush();
  /// Flushes and closes; throws OutputError if anything failed to be written.
  void close();
  /// Closes and deletes the file (used when a later setup step fails).
  void discard();

  const std::string& path() const { return path_; }

 private:
  const char* option_;
  std::string path_;
  std::FILE* file_ = nullptr;  ///< unbuffered: each flush() is one write to the file
  std::string pending_;        ///< whole rows not written yet
  std::chrono::steady_clock::time_point last_flush_;
};

/// CSV of body poses: header "step,time,body,x,y,z,qw,qx,qy,qz", one row per body per
/// sample. Position and orientation are World::pose() (the body's own frame).
class PoseCsvWriter {
 public:
  PoseCsvWriter(const std::string& path, const World& world);
  /// Writes one row per body for the world's current state.
  void write(const World& world);
  void flush() { file_.flush(); }
  void close() { file_.close(); }
  void discard() { file_.discard(); }

 private:
  OutputFile file_;
  std::vector<std::string> names_;  ///< CSV-escaped body names
  std::string buffer_;
};

/// Animated binary glTF (.glb) of the body poses (see io::TrajectoryRecorder). The file is
/// created (empty) at construction, so that an unwritable path fails before the run; the
/// frames are kept in memory and written by close(), also after a diverged or interrupted
/// run.
class GlbWriter {
 public:
  /// `bodies` are the scene's body definitions (for the shapes); `max_bodies` limits the
  /// export to the first bodies (0 = all).
  GlbWriter(const std::string& path, const World& world, const std::vector<BodyDef>& bodies,
            std::size_t max_bodies);
  /// Records one animation frame for the world's current state.
  void write(const World& world) { recorder_.record(world); }
  /// Reserves memory for `frames` frames.
  void reserve(std::size_t frames) { recorder_.reserve(frames); }
  /// Writes the file; throws OutputError if it cannot be written.
  void close();
  void discard();

  const io::TrajectoryRecorder& recorder() const { return recorder_; }

 private:
  OutputFile file_;
  io::TrajectoryRecorder recorder_;
  bool done_ = false;
};

/// CSV of joint wrenches: header "step,time,joint,fx,fy,fz,tx,ty,tz", one row per joint per
/// sample. The values are World::joint_wrench() of the last step (N, N m, world frame).
class JointForceCsvWriter {
 public:
  JointForceCsvWriter(const std::string& path, const World& world);
  /// Writes one row per joint for the step just taken.
  void write(const World& world);
  void flush() { file_.flush(); }
  void close() { file_.close(); }
  void discard() { file_.discard(); }

 private:
  OutputFile file_;
  std::vector<std::string> names_;  ///< CSV-escaped joint names
  std::string buffer_;
};

/// JSON Lines: one object per call with step, time, newton_iterations, residual,
/// joint_residual, solver (and dual_iterations, dual_residual with the iterative solver),
/// contacts, max_penetration, kinetic_energy, potential_energy, linear_momentum[3],
/// angular_momentum[3], wall_ms and the phase times detect_ms, body_ms, dual_ms
/// (docs/output-formats.md).
class StatsJsonlWriter {
 public:
  explicit StatsJsonlWriter(const std::string& path);
  void write(const World& world);
  void flush() { file_.flush(); }
  void close() { file_.close(); }
  void discard() { file_.discard(); }

 private:
  OutputFile file_;
  std::string buffer_;
};

/// Escapes a CSV field (RFC 4180): quoted when it contains a comma, quote or line break.
std::string csv_escape(const std::string& field);

/// Appends `value` printed with the printf format `format` (e.g. "%.12g").
void append_number(std::string& out, double value, const char* format);

}  // namespace mabd::cli
