// Where each node of a partitioned graph lives: its owner (the part's
// node_parts, graph/graph_store.h GraphPart) and its row inside the
// owner's part, which is its rank among that part's nodes in id order.
// Built once per rank in O(nodes); every rank's map is the same.
//
//   PartMap map(part.part);
//   if (map.owner(v) == rank) features_of(map.row(v));
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "graph/graph_store.h"

namespace dgcn {

class PartMap {
 public:
  // Throws dgcn::Error when `part` is a whole graph, not a part.
  explicit PartMap(const GraphPart& part);
  int owner(int64_t v) const { return owners_[static_cast<size_t>(v)]; }
  int64_t row(int64_t v) const { return rows_[static_cast<size_t>(v)]; }
  int64_t num_nodes() const { return static_cast<int64_t>(rows_.size()); }
  int parts() const { return parts_; }
  // Whether v is a node id that part `p` owns.
  bool owns(int p, int64_t v) const { return v >= 0 && v < num_nodes() && owner(v) == p; }

 private:
  std::span<const int32_t> owners_;
  std::vector<int32_t> rows_;
  int parts_ = 0;
};

}  // namespace dgcn
