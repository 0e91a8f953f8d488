// Builds a CSR from an edge list, with the clean-ups graph learning expects:
// symmetrize, drop self-loops, drop duplicate edges (each can be turned off).
// Rows come out sorted by neighbour id, so the result does not depend on the
// input order of the edges or on the thread count.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "graph/csr.h"

namespace dgcn {

struct EdgeOptions {
  bool symmetrize = true;       // add dst -> src for every src -> dst
  bool drop_self_loops = true;  // drop v -> v
  bool drop_duplicates = true;  // keep one copy of a repeated (src, dst)
};

struct EdgeStats {
  int64_t input_edges = 0;
  int64_t self_loops_dropped = 0;  // input edges v -> v that were dropped
  int64_t duplicates_dropped = 0;  // CSR entries removed as repeats
  int64_t output_entries = 0;      // directed CSR entries of the result
};

// Edges src[i] -> dst[i]; every id must be in [0, num_nodes), else a
// dgcn::Error names `what`, the position and the value.
Csr build_csr(int64_t num_nodes, std::span<const int64_t> src, std::span<const int64_t> dst,
              const EdgeOptions& options, int num_threads, const std::string& what = "edges",
              EdgeStats* stats = nullptr);

}  // namespace dgcn
