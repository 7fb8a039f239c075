// Binary glTF 2.0 (.glb) export of a simulated trajectory: one mesh per distinct body
// shape, one node per body, and one animation (translation + rotation per body).
#pragma once

#include <cstddef>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "mabd/body.h"
#include "mabd/world.h"

namespace mabd::io {

/// Samples every K steps giving about 60 frames per simulated second:
/// round(1 / (60 dt)), at least 1.
std::int64_t default_frame_every(double dt);

/// The surface of a soft body as the export draws it (see SoftTrack).
struct SoftSurfaceSize {
  std::size_t nodes = 0;      ///< surface nodes (vertices of its mesh)
  std::size_t triangles = 0;  ///< boundary triangles
};

/// Size of an export, known before the run.
struct GltfEstimate {
  std::size_t bodies = 0;
  std::size_t frames = 0;
  std::size_t samples = 0;  ///< bodies x frames
  std::size_t soft_bodies = 0;
  /// Part of `bytes` for the soft bodies: morph targets (12 bytes per surface node and
  /// frame), their accessors, and the weights animation (4 bytes per frame squared).
  std::size_t soft_bytes = 0;
  std::size_t bytes = 0;    ///< approximate size of the .glb (and of the memory it needs)
};

/// Estimate for `bodies` bodies and the soft bodies of surfaces `soft` sampled `frames` times.
GltfEstimate estimate_gltf(std::size_t bodies, std::size_t frames,
                           const std::vector<SoftSurfaceSize>& soft = {});

/// The surfaces of `world`'s soft bodies, soft-body id order (what the export draws).
std::vector<SoftSurfaceSize> soft_surface_sizes(const World& world);

/// Half the side (m) of the square a plane is drawn as: at least 10 m, and twice the extent
/// of the other bodies' initial bounding spheres seen in the plane.
inline constexpr double kMinPlaneHalfSize = 10.0;

/// A soft body's surface over time, for the glTF export: the boundary faces of its tets.
struct SoftTrack {
  std::string name;
  std::vector<std::uint32_t> nodes;      ///< surface nodes (indices of the soft body's nodes)
  std::vector<std::uint32_t> triangles;  ///< 3 per outward-facing triangle, into `nodes`
  std::vector<float> positions;          ///< per frame, per surface node: x, y, z (m, world)
};

/// The surface of soft body `id` of `world` (no frames yet).
SoftTrack soft_track(const World& world, SoftBodyId id);

/// Records body poses of a World over time and writes them as one binary glTF file.
/// Soft bodies are meshes of their surface whose node positions are morph targets, one per
/// frame (x_f - x_0), animated by their weights (one-hot per frame, linear in between): 12
/// bytes per surface node and frame, and 4 per frame squared.
///
/// The recorder keeps, per frame, the time and every exported body's pose as floats
/// (28 bytes per body and frame). Meshes are built when the file is written. A plane is drawn
/// as a finite square centred under the other bodies (see kMinPlaneHalfSize); planes and
/// open meshes use double-sided materials.
class TrajectoryRecorder {
 public:
  /// `bodies` are the definitions the world was built from, in body-id order (their shapes
  /// are not queryable from the World). Only the first `max_bodies` bodies are exported
  /// (0 = all). Throws InvalidArgument if `bodies` is shorter than the exported count.
  TrajectoryRecorder(const World& world, const std::vector<BodyDef>& bodies,
                     std::size_t max_bodies = 0);

  /// Without a World: names, kinds and initial poses from the definitions (a kinematic
  /// body's motion at t = 0); frames are recorded with record(time, poses).
  explicit TrajectoryRecorder(const std::vector<BodyDef>& bodies);

  /// Reserves memory for `frames` frames (optional; avoids regrowing during a long run).
  void reserve(std::size_t frames);

  /// Appends one frame: world.time() and the pose of every exported body.
  void record(const World& world);
  /// Appends one frame: `time` (s) and the pose of every exported body (poses.size() must be
  /// body_count(); throws InvalidArgument otherwise).
  void record(double time, const std::vector<Pose>& poses);

  std::size_t body_count() const { return kinds_.size(); }
  std::size_t frame_count() const { return times_.size(); }
  /// Number of distinct meshes (shape and body kind).
  std::size_t mesh_count() const { return mesh_shapes_.size(); }
  /// The square a plane body is drawn as, in its own frame: centre (x, y) and half side (m).
  /// Throws InvalidArgument if body `index` is not an exported plane.
  std::array<double, 3> plane_square(std::size_t index) const;

  /// Writes the .glb to `path`. Throws std::runtime_error naming the file on failure.
  void write_glb(const std::string& path) const;
  /// Writes the .glb to a byte string.
  std::string to_glb() const;

 private:
  std::vector<std::string> names_;
  std::vector<BodyKind> kinds_;
  std::vector<std::uint32_t> body_mesh_;  ///< mesh index per body
  std::vector<ShapeDef> mesh_shapes_;     ///< one shape per mesh
  std::vector<BodyKind> mesh_kinds_;      ///< material of each mesh
  /// Planes: the drawn square (centre x, y and half side, m) per mesh (zeros otherwise).
  std::vector<std::array<double, 3>> mesh_squares_;
  std::vector<float> times_;              ///< s, per frame
  /// Per frame, per body: x, y, z, qx, qy, qz, qw.
  std::vector<float> poses_;
  std::vector<SoftTrack> soft_;           ///< the world's soft bodies (World constructor)

  /// Names, kinds and meshes of the exported bodies, `poses` their initial poses.
  void init(const std::vector<std::string>& names, const std::vector<BodyKind>& kinds,
            const std::vector<BodyDef>& bodies, const std::vector<Pose>& poses);
  /// Appends the pose of body `index` for the frame being recorded.
  void push_pose(std::size_t index, const Pose& pose);
};

}  // namespace mabd::io
