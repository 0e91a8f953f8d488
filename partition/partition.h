// Partitioning a graph store into parts, for training a graph no single
// machine holds: each rank loads one part (GraphPart in graph_store.h) and
// fetches what it needs of the others (sampling/partitioned_sampler.h).
//
//   std::vector<int32_t> owner = assign_parts(store, {.parts = 4});
//   for (int p = 0; p < 4; ++p) save_store(extract_part(store, owner, p, 4, id), file_of(p));
//
// Node ids stay those of the whole graph: a part lists the ids of the nodes
// it owns and everything it names uses them, so sampling a partitioned graph
// can reproduce the batches of the whole one exactly (Note [Per-node draws]).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "base/buffer.h"
#include "graph/graph_store.h"

namespace dgcn {

enum class PartitionMethod {
  kMetis,   // METIS k-way, balancing nodes, training nodes and edges (as DistDGL does)
  kRandom,  // a seeded shuffle of the nodes cut into equal slices
};
const char* partition_method_name(PartitionMethod m);          // "metis", "random"
PartitionMethod parse_partition_method(const std::string& s);  // inverse; dgcn::Error otherwise

struct PartitionOptions {
  int parts = 2;
  PartitionMethod method = PartitionMethod::kMetis;
  uint64_t seed = 0;
  int threads = 0;  // 0: default_num_threads()
};

// The part of every node, int32 [num_nodes] with values in [0, parts).
// METIS runs on the undirected graph without self-loops (a directed store is
// symmetrized first) with three vertex weights per node: 1, 1 if it is a
// training node, and its degree; so every part gets about as many nodes,
// training nodes and CSR entries (each within METIS's default 3% tolerance
// where the graph allows). Throws dgcn::Error for parts < 1, more parts than
// nodes, a part store, or a graph beyond METIS's 32-bit indices.
std::vector<int32_t> assign_parts(const GraphStore& whole, const PartitionOptions& options);

// How good an assignment is.
struct PartitionQuality {
  int64_t cut_entries = 0;  // CSR entries u -> v with u and v in different parts
  double cut_fraction = 0;  // of all CSR entries
  // Per part: nodes, training nodes and CSR entries (the row lengths of its nodes).
  std::vector<int64_t> nodes, train_nodes, entries;
  // Per constraint: the largest part's weight over the mean part's (1 = perfect).
  double node_balance = 1, train_balance = 1, entry_balance = 1;
};
PartitionQuality partition_quality(const GraphStore& whole, std::span<const int32_t> owner, int parts,
                                   int threads);

// The store of part `index` of `count` (GraphPart): the rows, features,
// labels, degrees, source ids and split membership of the nodes `owner`
// gives to it, with node ids of the whole graph. `owner` (int32 [num_nodes])
// becomes the part's node_parts as is (one buffer may serve every part).
// `metadata_json` is the part's metadata.
GraphStore extract_part(const GraphStore& whole, const Buffer& owner, int index, int count,
                        const std::string& metadata_json, int threads);

}  // namespace dgcn
