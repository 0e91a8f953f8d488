// The folder of a partitioned graph (dgcn-prep partition; dgcn-train
// --data DIR): one .gcn store per part and a small manifest.
//
//   DIR/partition.json   the manifest: parts, method, seed, the source
//                        store's digest, the partition's id and each part's
//                        file and content digest, the partition's quality
//   DIR/part-000.gcn     part 0 (GraphPart: its nodes' rows, data and ids,
//   DIR/part-001.gcn     with the owner of every node), ...
//
// The partition id is a digest of the source's digest and the node -> part
// map: every part records it, so a part from another partition run is told
// apart from a damaged one.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "graph/store_format.h"
#include "partition/partition.h"

namespace dgcn {

inline constexpr const char* kPartitionManifest = "partition.json";

struct PartFileEntry {
  std::string file;    // relative to the folder, "part-000.gcn"
  std::string digest;  // content_digest of the part
  int64_t nodes = 0, entries = 0, train = 0;
};

struct PartitionManifest {
  int parts = 0;
  std::string method;  // "metis" or "random"
  uint64_t seed = 0;
  std::string partition_id;
  std::string source_path, source_digest;
  int64_t num_nodes = 0, num_edges = 0;  // of the whole graph
  std::vector<PartFileEntry> files;
  nlohmann::json quality;  // cut and balance, as dgcn-prep partition reports them
};

// "part-000.gcn": the file of part `index` (three digits at least).
std::string part_file_name(int index);

// Whether `path` is a folder holding a partition manifest.
bool is_partition_dir(const std::string& path);

// Reads and checks DIR/partition.json: its fields, types and ranges, one
// file per part named as part_file_name gives it. Throws dgcn::Error naming
// the file and the field.
PartitionManifest read_partition_manifest(const std::string& dir);

// The path of part `index` of the partition in `dir`.
std::string part_path(const std::string& dir, const PartitionManifest& m, int index);

// Checks that `part`, loaded from part_path(dir, m, index), is that part of
// that partition: its part index and count, the partition id it records,
// and its content digest against the manifest's. Throws dgcn::Error saying
// which (another partition run, a part file put in the wrong place, damaged
// or replaced data).
void check_part(const GraphStore& part, const PartitionManifest& m, int index, const std::string& path,
                int threads);

struct WritePartitionOptions {
  PartitionOptions partition;
  SaveOptions save;
  std::string source_path;  // recorded in the manifest
  std::function<void(const std::string&)> progress;
};

struct WritePartitionResult {
  PartitionManifest manifest;
  PartitionQuality quality;
  double assign_seconds = 0;  // choosing the parts (METIS or the shuffle)
  double write_seconds = 0;   // building and saving the parts
  uint64_t file_bytes = 0;    // all part files together
};

// Partitions `whole` into `dir`, which must not exist or be empty. Parts
// are built and saved one at a time (memory: the whole store plus one part
// and METIS's working set) into a temporary sibling folder, the manifest
// last, and the folder is renamed onto `dir` at the end (AtomicFolder): a
// failure, or SIGINT/SIGTERM in a program that called
// remove_temporary_files_on_signals(), leaves `dir` as it was.
WritePartitionResult write_partition(const GraphStore& whole, const std::string& dir,
                                     const WritePartitionOptions& options);

}  // namespace dgcn
