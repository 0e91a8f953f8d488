// The graph store: a CSR adjacency plus everything a node-classification job
// needs of its nodes (features, labels, train/valid/test splits, degrees).
// Built by the readers in datasets/, saved to and loaded from `.gcn` files
// (graph/store_format.h); its arrays may live in memory or in a read-only map.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "base/buffer.h"
#include "graph/csr.h"

namespace dgcn {

enum class Task : uint8_t {
  kNone = 0,         // graph only (e.g. an edge list): no labels
  kSingleLabel = 1,  // one class per node: int32 labels, -1 = unlabelled
  kMultiLabel = 2,   // any set of classes per node: one bit per class
};
const char* task_name(Task task);  // "none", "single-label", "multi-label"

// Which part of a partitioned graph a store holds (dgcn-prep partition,
// partition/partition.h), or none: count == 0 for a whole graph.
//
// A part owns some nodes of the whole graph and holds everything of them:
// their complete CSR rows (neighbour ids are ids of the whole graph), feature
// rows, labels, degrees, split membership. Row i of the part is node
// global_ids[i] of the whole graph; every other node id a part names (CSR
// indices, train/valid/test) is an id of the whole graph too.
//
//   whole graph 0-1-2-3 (a path), node_parts = [0, 0, 1, 1]
//   part 1: global_ids = [2, 3], indptr = [0, 2, 3], indices = [1, 3 | 2]
struct GraphPart {
  int32_t index = 0;
  int32_t count = 0;             // parts of the whole graph; 0: the store is a whole graph
  int64_t num_global_nodes = 0;  // nodes of the whole graph
  Buffer global_ids;             // int64 [num_nodes], strictly increasing
  Buffer node_parts;             // int32 [num_global_nodes]: the part that owns each node

  bool is_part() const { return count > 0; }
  std::span<const int64_t> ids() const { return global_ids.as<int64_t>(); }
  std::span<const int32_t> owners() const { return node_parts.as<int32_t>(); }
  // The row of global node `v` in this part, or -1 when another part owns it.
  int64_t row_of(int64_t v) const;
};

struct GraphStore {
  Csr graph;

  // float32 [num_nodes x num_features], row-major. Empty when num_features == 0.
  int64_t num_features = 0;
  Buffer features;

  // kSingleLabel: int32 [num_nodes], values in [0, num_classes) or -1 (unlabelled).
  // kMultiLabel:  uint8 [num_nodes x label_row_bytes()], class c of node v is
  //               bit (c % 8) of byte v * label_row_bytes() + c / 8 (LSB first).
  Task task = Task::kNone;
  int64_t num_classes = 0;
  Buffer labels;

  // Node ids (int64), each strictly increasing, pairwise disjoint.
  Buffer train, valid, test;

  // int32 [num_nodes]: the node's degree in the full graph (== its CSR row
  // length). GCN normalization uses it, also for nodes seen through a sample.
  Buffer degree;

  // int64 [num_nodes]: each node's id in the source dataset, kept through
  // reordering (dgcn-prep --reorder); empty when the ids are the source's own.
  Buffer source_ids;

  // Set when the store is one part of a partitioned graph.
  GraphPart part;

  // Free-form JSON object describing where the store came from (reader,
  // options, seed); kept verbatim in the file.
  std::string metadata_json = "{}";

  int64_t num_nodes() const { return graph.num_nodes(); }
  int64_t num_edges() const { return graph.num_edges(); }
  int64_t label_row_bytes() const { return task == Task::kMultiLabel ? (num_classes + 7) / 8 : 0; }
  // Bytes of one node's label: an int32 class, a multi-label bit row, or none.
  int64_t label_bytes() const {
    return task == Task::kSingleLabel  ? int64_t{sizeof(int32_t)}
           : task == Task::kMultiLabel ? label_row_bytes()
                                       : 0;
  }

  std::span<const float> features_of(int64_t v) const {
    return features.as<float>().subspan(v * num_features, num_features);
  }
  int32_t label(int64_t v) const { return labels.as<int32_t>()[v]; }
  bool has_label(int64_t v, int64_t c) const {
    auto row = labels.as<uint8_t>().subspan(v * label_row_bytes(), label_row_bytes());
    return (row[c / 8] >> (c % 8)) & 1;
  }
  std::span<const int64_t> train_nodes() const { return train.as<int64_t>(); }
  std::span<const int64_t> valid_nodes() const { return valid.as<int64_t>(); }
  std::span<const int64_t> test_nodes() const { return test.as<int64_t>(); }
  std::span<const int32_t> degrees() const { return degree.as<int32_t>(); }
  int64_t source_id(int64_t v) const { return source_ids.empty() ? v : source_ids.as<int64_t>()[v]; }

  // Bytes of every array the store holds (CSR, node data, a part's ids and
  // owner map): what a rank holds of the graph, mapped or in memory.
  uint64_t bytes() const;

  // Nodes of the whole graph this store is (a part of).
  int64_t num_global_nodes() const { return part.is_part() ? part.num_global_nodes : num_nodes(); }

  // Checks every invariant across the arrays (sizes, finite features, labels
  // in range, splits in range / increasing / disjoint, degree == row length;
  // for a part also its ids, its owner map and that it owns its split nodes)
  // and throws dgcn::Error naming `what` and the first offending value.
  // Runs on `num_threads` threads; O(nodes * features + edges).
  void validate(const std::string& what, int num_threads) const;
};

// Rows `rows` of a row-major array of `row_bytes`-byte rows, as a new
// buffer (out row i = row rows[i]); an empty array stays empty. Used to carry
// node data along when nodes are renumbered or split into parts.
Buffer gather_rows(const Buffer& array, size_t row_bytes, std::span<const int64_t> rows, int num_threads);

// Sets `to`'s node data (features, task, classes, labels, degrees) to the
// rows `rows` of `from`'s: node i of `to` is node rows[i] of `from`.
void copy_node_rows(const GraphStore& from, std::span<const int64_t> rows, GraphStore& to, int num_threads);

// Fills `degree` from the CSR row lengths (int32; checks they fit).
Buffer degrees_of(const Csr& graph, int num_threads);

// A digest (16 hex digits, XXH3) of everything the store holds for training
// (CSR, features, labels, splits, task and sizes, a part's ids and owner map;
// not its metadata or source ids): equal digests mean the same data, whatever
// the file's encoding or path. The same for any `num_threads`.
std::string content_digest(const GraphStore& store, int num_threads);

}  // namespace dgcn
