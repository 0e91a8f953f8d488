// One rank's part of a partitioned graph: the folder's manifest and the part
// the rank loads (rank r loads part r), checked on every rank together.
//
//   PartitionedData data = load_partition_part(dir, comm, load);   // collective
#pragma once

#include <string>

#include "graph/graph_store.h"
#include "graph/store_format.h"
#include "partition/collectives.h"
#include "partition/partition_files.h"

namespace dgcn {

// This rank's part of a partitioned graph, and the partition's manifest.
struct PartitionedData {
  PartitionManifest manifest;
  GraphStore part;
};

// Collective: the manifest of the partitioned graph in `dir` and this
// rank's part of it, loaded and checked against the manifest
// (partition_files.h). When any rank fails (no or a bad manifest, a
// missing, damaged or foreign part, another number of ranks), every rank
// throws dgcn::Error naming each failed rank and why, instead of some ranks
// waiting for the others until a collective times out.
PartitionedData load_partition_part(const std::string& dir, Collectives& comm, const LoadOptions& load);

}  // namespace dgcn
