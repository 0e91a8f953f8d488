// Encoding and checking of the .gcn header (Note [gcn layout] in
// store_format.h). Shared by the writer, the reader and the shared cache;
// tests use encode_header to build files whose header lies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "graph/store_format.h"

namespace dgcn::detail {

inline constexpr size_t kFixedHeaderBytes = 128;
inline constexpr size_t kSectionEntryBytes = 96;
inline constexpr size_t kFrameEntryBytes = 16;
inline constexpr size_t kMaxSections = 16;
inline constexpr uint64_t kRawAlignment = 4096;  // raw sections start on a page
inline constexpr uint64_t kMaxHeaderBytes = uint64_t{1} << 30;
inline constexpr uint64_t kMaxFrameBytes = uint64_t{1} << 30;
// A zstd block decodes to at most 128 KiB and takes at least 4 bytes (an RLE
// block), so no zstd frame expands by more than this; a header announcing
// more raw bytes than its stored bytes can produce is lying.
inline constexpr uint64_t kMaxZstdRatio = 32768;

// The section names in the order the writer stores them.
inline constexpr std::string_view kSectionNames[] = {"indptr",   "indices",    "features",  "labels",
                                                     "train",    "valid",      "test",      "degree",
                                                     "node_ids", "global_ids", "node_parts"};
// The most parts a partitioned graph has (part_count is 16 bits).
inline constexpr int64_t kMaxParts = 65535;

struct SectionShape {
  StoreDtype dtype;
  uint64_t rows, cols;
  bool any_rows;  // train/valid/test: rows is the split's size, at most num_nodes
};
// The dtype and shape section `name` has in a store with `h`'s scalars.
// Throws for an unknown name or for scalars whose sizes overflow.
SectionShape expected_shape(std::string_view name, const StoreHeader& h, const std::string& what);

// Checks the header scalars on their own (signs, task, id width, classes).
void check_scalars(const StoreHeader& h, const std::string& what);

uint64_t header_size_for(size_t num_sections, size_t num_frames, size_t metadata_bytes);
inline uint64_t align_up(uint64_t x, uint64_t a) {
  return (x + a - 1) / a * a;
}
// Raw bytes of frame i of section s.
inline uint64_t frame_raw_size(const StoreSection& s, uint64_t i) {
  return std::min(s.frame_size, s.raw_size - i * s.frame_size);
}
// XXH3 of the frames' checksums: the section checksum.
uint64_t section_checksum(std::span<const StoreFrame> frames);

// Serializes `h` as header_size_for(...) bytes and fills in the header
// checksum. Does not check `h` (tests use this to write lying headers).
std::vector<std::byte> encode_header(const StoreHeader& h);

// Checks the fixed 128 bytes (magic, version, file size, header size) of a
// file of `file_size` bytes and returns the header size.
uint64_t check_fixed_header(std::span<const std::byte> fixed, uint64_t file_size, const std::string& path);

// Decodes and checks a whole header: checksum, scalars, every section entry
// (known unique name, dtype and shape, sizes, codec, frames, within the file,
// alignment, no overlaps) and the frame table. After this, allocating
// raw_size bytes per section is bounded by what the file can hold.
StoreHeader decode_header(std::span<const std::byte> bytes, uint64_t file_size, const std::string& path);

// check_fixed_header + decode_header on an open file.
StoreHeader read_header(int fd, uint64_t file_size, const std::string& path);

}  // namespace dgcn::detail
