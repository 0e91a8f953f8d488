// Which evaluation items each rank scores: the one rule for the GCN run's
// valid/test nodes and the MNIST baseline's test images. Rank r of w takes
// the contiguous slice [n * r / w, n * (r + 1) / w); the slices partition
// [0, n) (sizes differ by at most one), and the per-rank counts are summed
// afterwards, so the metric is exactly one process's on the same weights.
//
//   n = 5, w = 2: rank 0 -> [0, 2), rank 1 -> [2, 5)
#pragma once

#include <cstdint>

namespace dgcn {

struct IndexRange {
  int64_t begin = 0, end = 0;
  int64_t size() const { return end - begin; }
};

inline IndexRange evaluation_slice(int64_t n, int rank, int world_size) {
  return {n * rank / world_size, n * (rank + 1) / world_size};
}

}  // namespace dgcn
