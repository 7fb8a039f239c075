// Checkpoint files: framing, atomic writing and validated reading of world states.
#include "io/checkpoint.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include <unistd.h>

#include "io/byte_codec.h"
#include "mabd/error.h"

namespace mabd {

namespace io {

namespace {

constexpr std::size_t kHeaderBytes = 24;  ///< magic, version, flags, payload length
constexpr std::size_t kChecksumBytes = 8;

}  // namespace

std::vector<std::uint8_t> encode_checkpoint(const WorldState& state) {
  detail::ByteWriter out;
  for (char c : kCheckpointMagic) out.u8(static_cast<std::uint8_t>(c));
  out.u32(kCheckpointVersion);
  out.u32(0);  // flags, reserved
  out.u64(state.data.size());
  std::vector<std::uint8_t>& bytes = out.bytes();
  bytes.insert(bytes.end(), state.data.begin(), state.data.end());
  out.u64(detail::fnv1a(bytes.data(), bytes.size()));
  return std::move(bytes);
}

WorldState decode_checkpoint(const std::vector<std::uint8_t>& bytes, const std::string& path) {
  detail::ByteReader in(bytes.data(), bytes.size(), path);
  if (bytes.size() < sizeof kCheckpointMagic ||
      std::memcmp(bytes.data(), kCheckpointMagic, sizeof kCheckpointMagic) != 0) {
    in.fail("not a mabd checkpoint file (it does not start with \"MABDCKPT\")");
  }
  if (bytes.size() < kHeaderBytes + kChecksumBytes) {
    in.fail("truncated checkpoint: " + std::to_string(bytes.size()) + " bytes, less than its " +
            std::to_string(kHeaderBytes + kChecksumBytes) + "-byte frame");
  }
  for (std::size_t k = 0; k < sizeof kCheckpointMagic; ++k) in.u8("magic");
  const std::uint32_t version = in.u32("format version");
  if (version == 0 || version > kCheckpointVersion) {
    in.fail("checkpoint format version " + std::to_string(version) +
            " is not supported (this build reads version " + std::to_string(kCheckpointVersion) +
            ")");
  }
  const std::uint32_t flags = in.u32("flags");
  if (flags != 0) in.fail("unknown flags " + std::to_string(flags) + " in the header");
  const std::uint64_t length = in.u64("payload length");
  const std::uint64_t expected = kHeaderBytes + length + kChecksumBytes;
  if (length > bytes.size() || expected != bytes.size()) {
    in.fail("truncated or extended checkpoint: the header announces " + std::to_string(expected) +
            " bytes, the file has " + std::to_string(bytes.size()));
  }
  const std::size_t body = kHeaderBytes + static_cast<std::size_t>(length);
  detail::ByteReader tail(bytes.data() + body, kChecksumBytes, path);
  const std::uint64_t stored = tail.u64("checksum");
  if (stored != detail::fnv1a(bytes.data(), body)) {
    in.fail("checksum mismatch: the checkpoint is corrupt");
  }
  return WorldState{std::vector<std::uint8_t>(bytes.begin() + kHeaderBytes, bytes.begin() + body)};
}

}  // namespace io

void write_checkpoint(const World& world, const std::string& path) {
  const std::vector<std::uint8_t> bytes = io::encode_checkpoint(world.save_state());
  const std::string tmp = path + ".tmp";
  bool created = false;
  auto fail = [&](const std::string& what) {
    std::error_code ignored;
    if (created) std::filesystem::remove(tmp, ignored);
    throw Error(path + ": cannot write checkpoint: " + what);
  };
  std::FILE* f = std::fopen(tmp.c_str(), "wb");
  if (!f) fail(tmp + ": " + std::strerror(errno));
  created = true;
  bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
  ok = std::fflush(f) == 0 && ok;
  ok = ::fsync(::fileno(f)) == 0 && ok;  // on disk before it replaces the last checkpoint
  const int saved = errno;
  ok = std::fclose(f) == 0 && ok;
  if (!ok) fail(tmp + ": " + std::strerror(saved ? saved : errno));
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) fail("renaming " + tmp + ": " + ec.message());
}

void read_checkpoint(World& world, const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw InvalidArgument(path + ": cannot open checkpoint: " + std::strerror(errno));
  const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(file)),
                                        std::istreambuf_iterator<char>());
  if (file.bad()) throw InvalidArgument(path + ": cannot read checkpoint");
  const WorldState state = io::decode_checkpoint(bytes, path);
  try {
    world.restore_state(state);
  } catch (const InvalidArgument& e) {
    // restore_state names itself; the reader names the file.
    std::string what = e.what();
    const std::string prefix = "restore_state: ";
    if (what.compare(0, prefix.size(), prefix) == 0) what.erase(0, prefix.size());
    throw InvalidArgument(path + ": " + what);
  }
}

}  // namespace mabd
