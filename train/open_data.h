// The one rule every binary uses to open the data a job names (the Python
// package does not link train/: dgcn.data opens stores and partitions with
// graph/ and partition/ directly): a .gcn store, a partitioned graph's folder (from dgcn-prep
// partition), or, with no path, a synthetic preset generated in memory.
//
//   DataSource src{.path = "data/cora.gcn"};
//   OpenedData data = open_data(src, group, {.threads = 4});   // collective
#pragma once

#include <optional>
#include <string>

#include "graph/graph_store.h"
#include "graph/store_format.h"
#include "partition/collectives.h"
#include "partition/partition_files.h"

namespace dgcn {

// How ranks of one machine read a store: each its own copy, or one mapped
// decompressed cache (LoadMode::kSharedCache); kAuto shares when the machine
// runs more than one rank. A partition's parts are private unless kShared.
enum class LoadPolicy { kAuto, kPrivate, kShared };
LoadPolicy parse_load_policy(const std::string& name);  // auto | private | shared

struct DataSource {
  std::string path;              // a .gcn store or a partition folder; empty: `preset`
  std::string preset = "small";  // datasets/synthetic.h's presets, when `path` is empty
  LoadPolicy load = LoadPolicy::kAuto;
  std::string cache_dir;  // kShared's cache folder (empty: next to the store)
};

// What the job needs the data for: training takes a partition folder part by
// part (rank r its part r); whole-graph work (dgcn-predict) reads the store
// the partition was made from, which has the same digest, so a checkpoint of
// a partitioned run fits it.
enum class DataUse { kTraining, kWholeGraph };

struct OpenSettings {
  int threads = 1;           // decompression and generation threads
  int local_world_size = 1;  // ranks on this machine (LoadPolicy::kAuto)
  DataUse use = DataUse::kTraining;
};

struct OpenedData {
  GraphStore store;                            // the whole graph, or this rank's part
  std::optional<PartitionManifest> partition;  // set when `store` is a part of it
  std::string path;                            // for the record: the path, or "synthetic:<preset>"
};

// Collective on a partition folder used for training (every rank loads its
// part and the ranks check them together, partition/part_loading.h); local
// otherwise. Throws dgcn::Error naming the path and what is wrong: a missing
// or damaged file, a part file given where the whole store is needed, a
// partition whose source store is gone.
OpenedData open_data(const DataSource& source, Collectives& comm, const OpenSettings& settings);

}  // namespace dgcn
