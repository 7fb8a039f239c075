// Warnings for likely unit slips in a loaded scene: angles in degrees, sizes in millimetres,
// masses or densities no solid has. The loader adds them to Scene::warnings.
#pragma once

#include <string>
#include <vector>

#include "mabd/scene.h"

namespace mabd::io {

/// Plausible ranges (SI) outside which a value is reported as a likely unit slip.
inline constexpr double kMinPlausibleSize = 1e-4;     ///< m: a tenth of a millimetre
inline constexpr double kMaxPlausibleSize = 1e3;      ///< m: a kilometre
inline constexpr double kMinPlausibleDensity = 1;     ///< kg/m^3: about an aerogel
inline constexpr double kMaxPlausibleDensity = 3e4;   ///< kg/m^3: above osmium (22590)
/// Size ratio to the scene's median body above which a body looks scaled by 1000.
inline constexpr double kMaxSizeRatio = 100;
/// Largest plausible hinge angle (rad): a limit beyond a full turn is likely in degrees.
inline constexpr double kMaxPlausibleAngle = 6.3;
/// Most warnings of one kind listed; further ones are counted in the last.
inline constexpr std::size_t kMaxWarningsPerKind = 5;

/// Checks the bodies and joints of `scene` (labelled as in loader messages, e.g.
/// "bodies[2] 'rod'") and returns one line per likely unit slip, naming the item, the value
/// and the unit it should be in.
std::vector<std::string> unit_warnings(const Scene& scene, std::size_t explicit_bodies,
                                       std::size_t explicit_joints);

}  // namespace mabd::io
