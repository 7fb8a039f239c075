// Checkpoint files (docs/output-formats.md, "Checkpoint files"): a world state framed by a
// magic, a format version, its length and a checksum.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "mabd/world.h"

namespace mabd::io {

inline constexpr char kCheckpointMagic[8] = {'M', 'A', 'B', 'D', 'C', 'K', 'P', 'T'};
inline constexpr std::uint32_t kCheckpointVersion = 1;

/// The bytes of a checkpoint file holding `state`.
std::vector<std::uint8_t> encode_checkpoint(const WorldState& state);

/// The state held by the bytes of checkpoint file `path`. Throws InvalidArgument
/// "`path`: what is wrong" if they are not a complete, intact checkpoint of a version this
/// build reads.
WorldState decode_checkpoint(const std::vector<std::uint8_t>& bytes, const std::string& path);

}  // namespace mabd::io
