// Keyframed motion of kinematic bodies (a body's "keyframes" in scene files): poses at given
// times, interpolated into a MotionFunction.
#pragma once

#include <vector>

#include "mabd/body.h"
#include "mabd/math.h"

namespace mabd::io {

/// The pose of a body's own frame at `time` (s).
struct Keyframe {
  double time = 0;
  Pose pose;
};

/// Motion through `keys` (at least one, times strictly increasing, unit quaternions):
/// position linear and orientation slerp (the short way round) between consecutive keys,
/// held at the first key before its time and at the last key after its time. With `loop`
/// (at least two keys) the motion instead repeats with period last.time - first.time after
/// the first key's time. The keys are copied into the function.
MotionFunction keyframe_motion(std::vector<Keyframe> keys, bool loop);

/// The pose of `keys` at time t (see keyframe_motion); `keys` as above.
Pose interpolate_keyframes(const std::vector<Keyframe>& keys, bool loop, double t);

}  // namespace mabd::io
