// The draws of one frontier row: which of a node's neighbours one hop of a
// batch samples. The sampler over a whole graph (neighbor_kernel.cpp) and the
// owner side of partitioned sampling (partitioned_sampler.cpp) both call
// these, so a node's picks are the same wherever its row is stored.
//
// Note [Per-node draws]
// Node v, reached at hop h of batch (seed, epoch, batch), draws from its own
// stream node_key(hop_key(key, h), v). The picks depend on nothing else: not
// on the thread, not on the chunk of the frontier v falls into, not on which
// rank holds v's row. That is what lets a partitioned graph (each rank owning
// some rows) reproduce the batches of a replicated one bit for bit.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "base/random.h"
#include "sampling/neighbor_sampler.h"

namespace dgcn::detail {

inline uint64_t hop_key(const BatchKey& key, int64_t hop) {
  return stream_key(key.seed, {static_cast<uint64_t>(key.epoch), static_cast<uint64_t>(key.batch),
                               static_cast<uint64_t>(hop)});
}

inline uint64_t node_key(uint64_t hop, int64_t node) {
  return derive_key(hop, static_cast<uint64_t>(node));
}

// How many neighbours a row of `degree` gives with `fanout` (-1: all).
inline int64_t sampled_count(int64_t degree, int64_t fanout, bool replace) {
  if (fanout < 0) return degree;
  if (replace) return degree > 0 ? fanout : 0;
  return std::min(fanout, degree);
}

// Whether a row is taken whole (no draws): every neighbour, in row order.
inline bool takes_whole_row(int64_t degree, int64_t count, int64_t fanout, bool replace) {
  return fanout < 0 || (!replace && count == degree);
}

// Floyd's algorithm checks earlier picks by a linear scan up to this k, and
// through a stamped mark per row position above it.
inline constexpr int64_t kFloydScanMax = 32;

// Per-thread marks of Floyd's algorithm with large k: position -> stamp.
struct RowMarks {
  std::vector<uint32_t> marks;
  uint32_t stamp = 0;
};

// Floyd's algorithm: k distinct positions of [0, degree), uniformly, with k
// draws; for j = degree-k .. degree-1 pick t in [0, j], take j if t was
// already taken, else t. Earlier picks are found by scanning `out`.
inline void floyd_scan(Rng& rng, int64_t degree, int64_t k, int64_t* out) {
  for (int64_t n = 0, j = degree - k; j < degree; ++j, ++n) {
    auto t = static_cast<int64_t>(rng.below(static_cast<uint64_t>(j + 1)));
    for (int64_t i = 0; i < n; ++i) {
      if (out[i] == t) {
        t = j;
        break;
      }
    }
    out[n] = t;
  }
}

// The same draws, with earlier picks marked in `m`.
inline void floyd_marked(Rng& rng, int64_t degree, int64_t k, int64_t* out, RowMarks& m) {
  if (m.marks.size() < static_cast<size_t>(degree)) m.marks.resize(degree, 0);
  if (++m.stamp == 0) {
    std::fill(m.marks.begin(), m.marks.end(), 0u);
    m.stamp = 1;
  }
  for (int64_t n = 0, j = degree - k; j < degree; ++j, ++n) {
    auto t = static_cast<int64_t>(rng.below(static_cast<uint64_t>(j + 1)));
    if (m.marks[t] == m.stamp) t = j;
    m.marks[t] = m.stamp;
    out[n] = t;
  }
}

// The `count` positions in [0, degree) a row that is not taken whole draws
// from its node's stream (Note [Per-node draws]), into out[0 .. count).
inline void draw_positions(uint64_t hop, int64_t node, int64_t degree, int64_t count, bool replace,
                           int64_t* out, RowMarks& marks) {
  Rng rng(node_key(hop, node));
  if (replace) {
    for (int64_t j = 0; j < count; ++j)
      out[j] = static_cast<int64_t>(rng.below(static_cast<uint64_t>(degree)));
  } else if (count <= kFloydScanMax) {
    floyd_scan(rng, degree, count, out);
  } else {
    floyd_marked(rng, degree, count, out, marks);
  }
}

// The `count` (= sampled_count) positions in [0, degree) that node `node`
// samples at this hop, into out[0 .. count): every position in order for a
// row taken whole, else draw_positions.
inline void pick_positions(uint64_t hop, int64_t node, int64_t degree, int64_t count, int64_t fanout,
                           bool replace, int64_t* out, RowMarks& marks) {
  if (takes_whole_row(degree, count, fanout, replace)) {
    for (int64_t j = 0; j < degree; ++j) out[j] = j;
  } else {
    draw_positions(hop, node, degree, count, replace, out, marks);
  }
}

}  // namespace dgcn::detail
