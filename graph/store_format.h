// The `.gcn` file: a GraphStore on disk. Sections are zstd-compressed in
// independent frames (compact; compressed and decompressed on all cores) or
// stored raw and page-aligned (mappable in place). Every frame carries an
// XXH3 checksum of its uncompressed bytes, and the header is checked in full
// before anything is allocated, so a truncated, corrupted or lying file is a
// clear error, never a crash or a huge allocation.
//
// Note [gcn layout] (version 1; all integers little-endian)
//
//   fixed header, 128 bytes
//   off  size  field
//     0     8  magic 89 47 43 4E 0D 0A 1A 0A ("\x89GCN\r\n\x1a\n": catches text-mode mangling)
//     8     4  version (u32) = 1
//    12     4  num_sections S (u32, at most 16)
//    16     8  header_size H (u64) = 128 + 96 S + 16 F + M
//    24     8  header_checksum: XXH3-64 of bytes [0, H) with these 8 bytes read as zero
//    32     8  file_size (u64): the whole file; a shorter or longer file is rejected
//    40     8  num_nodes (i64)
//    48     8  num_edges (i64): directed CSR entries
//    56     8  num_features (i64)
//    64     8  num_classes (i64)
//    72     1  task (u8): 0 none, 1 single-label, 2 multi-label
//    73     1  id_width (u8): 4 or 8, the byte width of `indices`
//    74     2  part_index (u16)  \  a part of a partitioned graph (GraphPart):
//    76     2  part_count (u16)   > zero in a whole graph; see "Parts" below
//    78     2  reserved, zero
//    80     8  num_frames F (u64): entries of the frame table
//    88     8  metadata_size M (u64)
//    96     8  source_file_size (u64)   \  only in a shared-cache file (see LoadMode):
//   104     8  source_mtime_ns (i64)     > the source .gcn it was expanded from;
//   112     8  source_header_checksum   /  zero in an ordinary file
//   120     8  num_global_nodes (i64): the whole graph's nodes, in a part; zero otherwise
//
//   section table, S entries of 96 bytes
//     0    16  name, ASCII, NUL-padded: indptr indices features labels train valid test degree
//              node_ids global_ids node_parts
//    16     1  dtype (u8): 1 int32, 2 int64, 3 float32, 4 uint8
//    17     1  codec (u8): 0 raw, 1 zstd
//    18     6  reserved, zero
//    24     8  rows (u64)         \ shape; a vector has cols = 1.
//    32     8  cols (u64)         / raw_size == rows * cols * sizeof(dtype)
//    40     8  offset (u64): file offset of the stored bytes (raw: a multiple of 4096)
//    48     8  stored_size (u64): bytes in the file
//    56     8  raw_size (u64): bytes once decoded
//    64     8  frame_size (u64): raw bytes per frame; the last frame holds the rest
//    72     8  first_frame (u64): index of the section's first frame-table entry
//    80     8  num_frames (u64) = ceil(raw_size / frame_size)
//    88     8  checksum (u64): XXH3-64 of the section's frame checksums (u64 array)
//
//   frame table, F entries of 16 bytes, sections' frames in table order
//     0     8  stored_size (u64): the frame's bytes in the file; frames of a
//              section are contiguous from its offset (offsets = prefix sums)
//     8     8  checksum (u64): XXH3-64 of the frame's raw (decoded) bytes
//
//   metadata: M bytes of JSON text (GraphStore::metadata_json, verbatim)
//
//   section data, at the offsets of the table; sections never overlap and lie
//   after the header; bytes between sections are zero.
//
// A raw frame is the raw bytes themselves; a zstd frame is one complete zstd
// frame (content size set) that decodes to exactly the frame's raw size.
// Section shapes follow the header scalars (n = num_nodes):
//   indptr int64 [n+1]; indices int32|int64 [num_edges]; features float32
//   [n, num_features]; labels int32 [n] (single-label) or uint8 [n, ceil(C/8)]
//   (multi-label); train/valid/test int64 [k]; degree int32 [n]; node_ids int64
//   [n], the source dataset's id of each node (written by a reordering).
// Empty sections are not stored; a reader treats a missing section as empty.
//
// Parts (part_count >= 1, written by dgcn-prep partition): the store holds
// the n = num_nodes rows its part owns of a graph of N = num_global_nodes
// nodes. indices and train/valid/test are node ids of the whole graph, in
// [0, N) (id_width fits N); two more sections are required: global_ids
// int64 [n] (row i is node global_ids[i], strictly increasing) and
// node_parts int32 [N] (the part owning each node). Readers before parts
// existed stop at the unknown section names.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "graph/graph_store.h"

namespace dgcn {

inline constexpr uint32_t kStoreVersion = 1;

enum class StoreDtype : uint8_t { kInt32 = 1, kInt64 = 2, kFloat32 = 3, kUint8 = 4 };
enum class StoreCodec : uint8_t { kRaw = 0, kZstd = 1 };
const char* dtype_name(StoreDtype dtype);  // "int32", "int64", "float32", "uint8"
const char* codec_name(StoreCodec codec);  // "raw", "zstd"
size_t dtype_size(StoreDtype dtype);

struct StoreSection {
  std::string name;
  StoreDtype dtype = StoreDtype::kUint8;
  StoreCodec codec = StoreCodec::kRaw;
  uint64_t rows = 0, cols = 1;
  uint64_t offset = 0, stored_size = 0, raw_size = 0;
  uint64_t frame_size = 0, first_frame = 0, num_frames = 0;
  uint64_t checksum = 0;
};

struct StoreFrame {
  uint64_t stored_size = 0;
  uint64_t checksum = 0;
};

// Which source file a shared-cache file was expanded from (all zero otherwise).
struct StoreCacheSource {
  uint64_t file_size = 0;
  int64_t mtime_ns = 0;
  uint64_t header_checksum = 0;
  bool operator==(const StoreCacheSource&) const = default;
};

// Everything before the section data, decoded.
struct StoreHeader {
  uint32_t version = kStoreVersion;
  uint64_t header_size = 0, header_checksum = 0, file_size = 0;
  int64_t num_nodes = 0, num_edges = 0, num_features = 0, num_classes = 0;
  Task task = Task::kNone;
  IdWidth id_width = IdWidth::k32;
  int32_t part_index = 0, part_count = 0;  // GraphPart; zero for a whole graph
  int64_t num_global_nodes = 0;
  StoreCacheSource source;
  std::vector<StoreSection> sections;
  std::vector<StoreFrame> frames;
  std::string metadata_json = "{}";

  const StoreSection* find(std::string_view name) const;  // nullptr when not stored
  bool all_raw() const;
  uint64_t raw_bytes() const;  // sum of the sections' raw sizes
};

// Reads and checks the header of `path` (magic, version, sizes, checksum,
// section and frame tables) without reading section data.
StoreHeader read_store_header(const std::string& path);

struct SaveOptions {
  int zstd_level = 3;
  int threads = 0;                               // 0 = default_num_threads()
  bool all_raw = false;                          // store every section raw (mappable in place)
  uint64_t frame_bytes = uint64_t{4} << 20;      // raw bytes per frame
  uint64_t zstd_min_bytes = uint64_t{64} << 10;  // smaller sections stay raw
  // Called after each section is written, with a line for a progress log.
  std::function<void(const std::string&)> progress;
};

struct SaveResult {
  uint64_t file_bytes = 0;
  uint64_t raw_bytes = 0;  // sum of the sections' uncompressed sizes
  double seconds = 0;
};

// Writes `store` to `path` atomically: a temporary file in the same
// directory, fsync, rename. On any failure the temporary file is removed and
// an existing file at `path` is left untouched. Checks that the arrays'
// sizes agree with the store's scalars; their contents are the caller's to
// validate (GraphStore::validate). The bytes written depend only on the
// store and on zstd_level / all_raw / frame_bytes / zstd_min_bytes, never on
// the thread count.
SaveResult save_store(const GraphStore& store, const std::string& path, const SaveOptions& options = {});

// Note [shared cache]
// Ranks on one host must not each hold a private copy of a big graph. In
// kSharedCache mode every process maps one raw (uncompressed, page-aligned)
// .gcn read-only, so the page cache holds the graph once for all of them:
// - a source that is already all raw is mapped directly;
// - otherwise the first process to get the lock file "<cache>.lock" (flock)
//   expands the source into shared_cache_path() (temp name, fsync, rename),
//   verifying every source checksum on the way; processes that arrive
//   meanwhile block on the lock, then map the finished cache. The cache
//   records the source's size, mtime and header checksum, and carries the
//   source's frame checksums; a cache that does not match its source (stale),
//   or fails its own checks (truncated, corrupt), is rebuilt.
enum class LoadMode { kPrivate, kSharedCache };

struct LoadOptions {
  LoadMode mode = LoadMode::kPrivate;
  std::string cache_dir;         // kSharedCache: where caches go; empty = next to the file
  int threads = 0;               // 0 = default_num_threads()
  bool verify_checksums = true;  // check every frame's checksum (in every mode)
  bool validate = true;          // run GraphStore::validate on the result
};

struct LoadStats {
  double seconds = 0;                 // the whole load_store call
  double frames_seconds = 0;          // wall time of the read/decompress/checksum phase
  double decompress_cpu_seconds = 0;  // summed over threads
  double checksum_cpu_seconds = 0;    // summed over threads
  double validate_seconds = 0;
  uint64_t file_bytes = 0;
  uint64_t raw_bytes = 0;           // decoded bytes of all sections
  uint64_t decompressed_bytes = 0;  // raw bytes produced by zstd in this call
  uint64_t checksummed_bytes = 0;
  int threads = 0;
  bool mapped = false;       // arrays are views of a read-only mapping
  bool built_cache = false;  // this call expanded the source into the cache
  std::string mapped_path;   // the file mapped (source or cache), if mapped
  std::string cache_note;    // why an existing cache was not used, if it was not
};

// Loads a store. Checks the header in full before allocating, checks every
// checksum (unless told not to), builds the Csr (which checks its
// invariants) and validates the store. Errors name the file, the section or
// field and the values seen.
GraphStore load_store(const std::string& path, const LoadOptions& options = {}, LoadStats* stats = nullptr);

// Where kSharedCache keeps the expanded copy of `path`: "<path>.cache" next
// to it, or "<cache_dir>/<file name>.<hash of the absolute path>.cache".
std::string shared_cache_path(const std::string& path, const std::string& cache_dir);

struct SectionCheck {
  std::string name;
  StoreCodec codec = StoreCodec::kRaw;
  uint64_t stored_bytes = 0, raw_bytes = 0, frames = 0;
  uint64_t bad_frames = 0;
  std::string first_error;  // the first bad frame's message, empty when all are good
  bool ok() const { return bad_frames == 0; }
};

struct VerifyReport {
  std::string path;
  uint64_t file_bytes = 0;
  double seconds = 0;
  std::vector<SectionCheck> sections;
  bool ok() const;
};

// Decodes every frame and checks its checksum, in parallel, with memory
// bounded by threads x frame size. A damaged frame is reported (not thrown);
// a damaged header is thrown as dgcn::Error.
VerifyReport verify_store(const std::string& path, int threads = 0);

}  // namespace dgcn
