// The compressed-sparse-row adjacency of a graph: row v's neighbours are
// indices[indptr[v] .. indptr[v+1]). indptr is int64; indices are int32 when
// the node count allows (halving the largest array), else int64, behind one
// typed view.
//
//   0 --- 1       indptr  = [0, 2, 4, 7, 8]
//    \   /        indices = [1, 2 | 0, 2 | 0, 1, 3 | 2]
//      2 --- 3    (an undirected edge is two CSR entries, one per direction)
#pragma once

#include <cstdint>
#include <span>

#include "base/buffer.h"

namespace dgcn {

enum class IdWidth : uint8_t { k32 = 4, k64 = 8 };

// The narrowest id width that can hold ids in [0, num_nodes).
inline IdWidth id_width_for(int64_t num_nodes) {
  return num_nodes <= INT32_MAX ? IdWidth::k32 : IdWidth::k64;
}

template <class Id>
constexpr IdWidth id_width_of() {
  static_assert(std::is_same_v<Id, int32_t> || std::is_same_v<Id, int64_t>);
  return sizeof(Id) == 4 ? IdWidth::k32 : IdWidth::k64;
}

class Csr {
 public:
  Csr() = default;
  // Checks the invariants (sizes, indptr[0] == 0, monotone, last == number of
  // indices, every index in [0, num_nodes)) and throws dgcn::Error naming
  // `what` (e.g. the file) otherwise.
  Csr(int64_t num_nodes, Buffer indptr, Buffer indices, IdWidth width, const std::string& what = "csr");
  // The rows of some nodes of a larger graph (one part of a partitioned
  // graph, partition/partition.h): `num_rows` rows whose indices are node ids of
  // the whole graph, in [0, num_cols).
  Csr(int64_t num_rows, int64_t num_cols, Buffer indptr, Buffer indices, IdWidth width,
      const std::string& what = "csr");

  // Rows. For a whole graph also the number of nodes (num_cols() == num_nodes()).
  int64_t num_nodes() const { return num_nodes_; }
  int64_t num_cols() const { return num_cols_; }
  bool square() const { return num_cols_ == num_nodes_; }
  int64_t num_edges() const { return num_edges_; }
  IdWidth id_width() const { return width_; }

  std::span<const int64_t> indptr() const { return indptr_.as<int64_t>(); }
  template <class Id>
  std::span<const Id> indices() const {
    DGCN_CHECK(width_ == id_width_of<Id>(), "csr: indices are {}-bit, asked for {}-bit",
               8 * static_cast<int>(width_), 8 * sizeof(Id));
    return indices_.as<Id>();
  }
  // Calls f(std::span<const int32_t>) or f(std::span<const int64_t>) with
  // the indices, so hot loops are compiled once per id width.
  template <class F>
  decltype(auto) visit_indices(F&& f) const {
    if (width_ == IdWidth::k32) return f(indices_.as<int32_t>());
    return f(indices_.as<int64_t>());
  }

  int64_t degree(int64_t v) const {
    auto p = indptr();
    return p[v + 1] - p[v];
  }

  const Buffer& indptr_buffer() const { return indptr_; }
  const Buffer& indices_buffer() const { return indices_; }

 private:
  int64_t num_nodes_ = 0;
  int64_t num_cols_ = 0;
  int64_t num_edges_ = 0;
  IdWidth width_ = IdWidth::k32;
  Buffer indptr_;
  Buffer indices_;
};

// Throws dgcn::Error unless `g` is a whole graph (not the rows of one part
// of a partitioned graph, whose neighbour ids reach beyond its rows): for
// the algorithms that index per-node arrays by neighbour id.
inline void require_whole_graph(const Csr& g, const char* what) {
  DGCN_CHECK(g.square(),
             "{}: needs a whole graph, but this holds {} rows of a graph of {} nodes (one part of a "
             "partitioned graph; "
             "use the store it was made from)",
             what, g.num_nodes(), g.num_cols());
}

}  // namespace dgcn
