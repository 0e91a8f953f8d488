// The CPU kernel of sample_neighbors (front end: sampling/neighbor_sampler.cpp),
// compiled once per index width.
//
// Note [Sampling a hop]
// The frontier of hop h (the nodes first reached at hop h) is split into
// fixed chunks of kChunkRows rows, the unit of work of a thread. Every row
// draws from its node's own stream (Note [Per-node draws] in row_picks.h), so
// the draws depend neither on which thread runs a chunk nor on the chunking.
// A hop runs in these passes over chunks:
//   1. rows:     prefetch indptr of the chunk's frontier nodes, then store
//                each row's (start, degree); the sampled count per row gives
//                the block's indptr after a prefix sum over chunks.
//   2a. pick:    draw each row's picks (all, Floyd's algorithm without
//                replacement, or independent draws) as CSR positions, in row
//                order, prefetching every picked entry: only the cache lines
//                actually sampled are fetched, however long the row.
//   2b. resolve: positions -> global neighbour ids (cached by now),
//                prefetching each neighbour's map entry.
//   3. relabel:  global -> local ids, new nodes appended to n_id in order of
//                first appearance in the hop's edge list (chunk order, then row
//                order). Sequentially this runs right after 2b of the same
//                chunk; in parallel it is find / count / assign / repeats
//                (below), which yields the same numbering.
//
// Note [Relabelling map]
// A dense uint32 array over all graph nodes maps a global id to its local id
// in the current batch. Instead of clearing it (or a hash map) per batch, each
// batch owns a fresh window of values [base, base + window): entry m means
// "local id m - base" when base <= m < base + assigned, and anything below
// base is stale from an earlier batch. The next batch starts at base +
// window, so no clearing is needed until the 32-bit values run out (then one
// memset, every ~1000 batches at products scale). A hash map would be smaller
// but costs several dependent reads per lookup; the dense map costs one
// random read, which prefetching hides. Memory: 4 bytes x nodes per scratch.
//
// Parallel relabelling marks nodes met in the current hop with one more value,
// seen = base + num_nodes + 1 (so the window is num_nodes + 2). Per hop:
//   find:    thread t owns the map entries of node ids [n t / T, n (t+1) / T)
//            and walks the hop's edges in order; an edge to one of its nodes
//            gets the node's local id (from an earlier hop), or kFirst when the
//            entry was stale (first appearance; the entry becomes `seen`), or
//            kRepeat when it was already `seen`. Every entry has one writer,
//            so there are no atomics (a locked read-modify-write per edge
//            would serialize the cache misses that prefetching overlaps).
//   count:   first appearances per chunk, then a prefix sum over chunks;
//   assign:  each chunk numbers its first appearances in edge order (map and
//            n_id), so ids follow first appearance exactly as sequentially;
//   repeats: every kRepeat edge reads its node's new id.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "graph/csr.h"
#include "sampling/cpu/row_picks.h"
#include "sampling/neighbor_sampler.h"

namespace dgcn {

namespace detail {

// Rows per chunk of a hop's frontier (the draws do not depend on it).
inline constexpr int64_t kChunkRows = 256;

// Working memory of one thread inside a batch.
struct ThreadScratch {
  RowMarks marks;  // Floyd with large k
};

// blocks[0] holds every hop's rows (the whole batch, built in place hop by
// hop); fills in its num_src/num_dst and the later layers' blocks as its row
// prefixes (sampled_batch.h).
void build_prefix_blocks(SampledBatch& out);

}  // namespace detail

struct SamplerScratch::Impl {
  // Note [Relabelling map]
  std::vector<uint32_t> map;
  uint32_t base = 1;

  // One hop: per frontier row, the CSR row start and degree (pass 1), and the
  // global ids of the sampled edges (pass 2).
  std::vector<int64_t> row_start;
  std::vector<int64_t> row_degree;
  std::vector<int64_t> neighbours;
  // Per chunk: first edge (relative to the hop), and, in parallel mode, the
  // prefix sum of first appearances.
  std::vector<int64_t> chunk_edges;
  std::vector<int64_t> chunk_firsts;

  std::vector<detail::ThreadScratch> threads;
};

template <class Id>
void sample_neighbors_kernel(const Csr& graph, std::span<const Id> indices, std::span<const int64_t> seeds,
                             const SamplerOptions& options, const BatchKey& key,
                             SamplerScratch::Impl& scratch, SampledBatch& out);

}  // namespace dgcn
