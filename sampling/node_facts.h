// What a Python batch carries for each of its nodes besides the graph: the
// node's degree (for the sampled normalisation), its class (batch.y) and its
// train/val/test membership (the split masks), packed into one entry a node
// of 4 bytes where they fit (products: 15 bits of degree, 6 of class, 3 of
// splits) and 8 otherwise.
//
// Why: a products batch reads ~500k nodes at random places of a 2.4M-node
// table. From three tables (degrees, int32 classes, split bits) that was 4%
// of a training epoch's CPU on 2 ranks (perf), the largest cost the Python
// loader's consumer had over dgcn-train's; the reads are cache misses, and
// each rank's tables did not fit the shared L3 beside the other rank's.
//
// Example: degrees [3, 1], classes [7, -1], split bits [0b001, 0b100] gather
// for n_id [1, 0] degree [1, 3], y [-1, 7], masks (train | val | test rows)
// [0, 1 | 0, 0 | 1, 0].
#pragma once

#include <cstdint>
#include <span>

#include "base/buffer.h"

namespace dgcn {

class NodeFacts {
 public:
  // The splits a node can be in, bit k of split_bits: train, val, test.
  static constexpr int kNumSplits = 3;
  // A class is in [0, kMaxClass], or -1 for an unlabelled node.
  static constexpr int32_t kMaxClass = (1 << 28) - 1;

  // One entry a node in each span; degrees >= 0, split bits below
  // 1 << kNumSplits. Throws dgcn::Error naming the first bad entry.
  NodeFacts(std::span<const int32_t> degrees, std::span<const int32_t> classes,
            std::span<const uint8_t> split_bits);

  int64_t num_nodes() const { return num_nodes_; }
  size_t entry_bytes() const { return wide_ ? 8 : 4; }

  // For each node n_id[i]: degree[i], y[i] (its class, or -1) and
  // masks[k * num + i] (whether it is in split k), num = n_id.size(). Ids
  // must be below num_nodes() (the sampler's are); throws dgcn::Error when a
  // span has another size.
  void gather(std::span<const int64_t> n_id, std::span<int32_t> degree, std::span<int64_t> y,
              std::span<bool> masks) const;

 private:
  int64_t num_nodes_ = 0;
  // An entry: degree << (class_bits_ + kNumSplits) | (class + 1) << kNumSplits
  // | split bits, in uint64_t where that needs more than 32 bits (wide_).
  int class_bits_ = 0;
  bool wide_ = false;
  // On transparent huge pages: random reads over MiBs of 4 KiB pages would
  // also miss the TLB.
  MutableBuffer entries_;
};

}  // namespace dgcn
