#include "io/keyframes.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <utility>

namespace mabd::io {

Pose interpolate_keyframes(const std::vector<Keyframe>& keys, bool loop, double t) {
  if (keys.empty()) return Pose{};
  const Keyframe& first = keys.front();
  const Keyframe& last = keys.back();
  if (!(t > first.time)) return first.pose;  // also NaN
  if (loop && keys.size() >= 2) {
    const double period = last.time - first.time;
    t = first.time + std::fmod(t - first.time, period);
  } else if (t >= last.time) {
    return last.pose;
  }
  // The segment [keys[i - 1].time, keys[i].time) holding t.
  const auto it = std::upper_bound(keys.begin(), keys.end(), t,
                                   [](double value, const Keyframe& k) { return value < k.time; });
  if (it == keys.begin()) return first.pose;
  if (it == keys.end()) return last.pose;
  const Keyframe& a = *(it - 1);
  const Keyframe& b = *it;
  const double s = (t - a.time) / (b.time - a.time);
  Pose pose;
  pose.position = (1 - s) * a.pose.position + s * b.pose.position;
  pose.orientation = a.pose.orientation.slerp(s, b.pose.orientation).normalized();
  return pose;
}

MotionFunction keyframe_motion(std::vector<Keyframe> keys, bool loop) {
  auto shared = std::make_shared<const std::vector<Keyframe>>(std::move(keys));
  return [shared, loop](double t) { return interpolate_keyframes(*shared, loop, t); };
}

}  // namespace mabd::io
