// See Note [Sampling a hop] and Note [Relabelling map] in neighbor_kernel.h.
#include "sampling/cpu/neighbor_kernel.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <limits>
#include <mutex>
#include <thread>

#include "base/error.h"
#include "sampling/cpu/row_picks.h"

namespace dgcn {

namespace {

using detail::draw_positions;
using detail::hop_key;
using detail::kChunkRows;
using detail::sampled_count;
using detail::takes_whole_row;
using detail::ThreadScratch;

// The work is random reads; each pass issues the prefetches of a whole chunk
// before using the data, so many misses are in flight at once. A row taken
// whole is prefetched up to this many bytes (the hardware prefetcher follows
// on); seeds prefetch their map entries this many ahead.
constexpr int64_t kRowPrefetchBytes = 512;
constexpr int64_t kMapPrefetchEdges = 32;

inline void prefetch(const void* p) {
  __builtin_prefetch(p, 0, 3);
}

inline void prefetch_bytes(const void* p, int64_t bytes) {
  const char* c = static_cast<const char*>(p);
  bytes = std::min(bytes, kRowPrefetchBytes);
  for (int64_t off = 0; off < bytes; off += 64) prefetch(c + off);
}

// Runs fn(chunk, thread) for every chunk in [0, n), handed out dynamically to
// up to `threads` threads, the calling thread being thread 0; inline when one
// thread suffices. The first exception is rethrown after all threads joined.
template <class F>
void for_each_chunk(int64_t n, int threads, F&& fn) {
  if (threads <= 1 || n <= 1) {
    for (int64_t c = 0; c < n; ++c) fn(c, 0);
    return;
  }
  std::atomic<int64_t> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto work = [&](int t) {
    try {
      for (int64_t c = next.fetch_add(1, std::memory_order_relaxed); c < n;
           c = next.fetch_add(1, std::memory_order_relaxed)) {
        fn(c, t);
      }
    } catch (...) {
      next.store(n, std::memory_order_relaxed);  // the others stop taking chunks
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
    }
  };
  const int t_count = static_cast<int>(std::min<int64_t>(threads, n));
  std::vector<std::thread> helpers;
  helpers.reserve(t_count - 1);
  for (int t = 1; t < t_count; ++t) helpers.emplace_back(work, t);
  work(0);
  for (auto& h : helpers) h.join();
  if (error) std::rethrow_exception(error);
}

// resize() that grows capacity with 25% headroom: batches vary a little in
// size, and an exact-fit vector would reallocate (copy, and fault in fresh
// pages) whenever a batch is slightly larger than any before.
template <class T>
void grow_to(std::vector<T>& v, size_t n) {
  if (n > v.capacity()) v.reserve(n + n / 4);
  v.resize(n);
}

template <class Id>
class BatchSampler {
 public:
  BatchSampler(const Csr& graph, std::span<const Id> indices, const SamplerOptions& options,
               const BatchKey& key, SamplerScratch::Impl& s, SampledBatch& out)
      : indptr_(graph.indptr().data()),
        indices_(indices.data()),
        num_nodes_(graph.num_nodes()),
        options_(options),
        key_(key),
        s_(s),
        out_(out) {}

  void run(std::span<const int64_t> seeds) {
    const int num_layers = static_cast<int>(options_.fanouts.size());
    out_.epoch = key_.epoch;
    out_.index = key_.batch;
    out_.num_seeds = static_cast<int64_t>(seeds.size());
    out_.num_nodes_per_hop.assign(1, out_.num_seeds);
    out_.num_edges_per_hop.clear();
    out_.degrees.clear();
    out_.blocks.resize(num_layers);
    Block& full = out_.blocks[0];
    full.indptr.assign(1, 0);
    full.indices.clear();

    const uint64_t window = open_window();
    // However the batch ends, later batches must see its map entries as
    // stale: move the window past everything this batch may have written.
    struct AdvanceBase {
      SamplerScratch::Impl& s;
      uint64_t by;
      ~AdvanceBase() { s.base = static_cast<uint32_t>(s.base + by); }
    } advance{s_, window};

    insert_seeds(seeds);
    bool any_parallel = false;
    int64_t hop_begin = 0;
    for (int h = 0; h < num_layers; ++h) {
      const int64_t hop_end = static_cast<int64_t>(out_.n_id.size());
      any_parallel |= sample_hop(h, hop_begin, hop_end);
      out_.num_nodes_per_hop.push_back(static_cast<int64_t>(out_.n_id.size()) - hop_end);
      hop_begin = hop_end;
    }
    if (!any_parallel) advance.by = out_.n_id.size();
    detail::build_prefix_blocks(out_);
  }

 private:
  // Reserves this batch's window of map values (Note [Relabelling map]).
  uint64_t open_window() {
    if (s_.map.size() != static_cast<size_t>(num_nodes_)) {
      s_.map.assign(static_cast<size_t>(num_nodes_), 0);
      s_.base = 1;
    }
    const uint64_t window = static_cast<uint64_t>(num_nodes_) + 2;
    if (s_.base + window > std::numeric_limits<uint32_t>::max()) {
      std::fill(s_.map.begin(), s_.map.end(), 0u);
      s_.base = 1;
    }
    return window;
  }
  // Parallel relabelling marks a node met in the current hop, before it has
  // an id (Note [Relabelling map]).
  uint32_t seen_value() const { return s_.base + static_cast<uint32_t>(num_nodes_) + 1; }

  void insert_seeds(std::span<const int64_t> seeds) {
    out_.n_id.assign(seeds.begin(), seeds.end());
    uint32_t* map = s_.map.data();
    const uint32_t base = s_.base;
    const auto n = static_cast<int64_t>(seeds.size());
    for (int64_t i = 0; i < n; ++i) {
      if (i + kMapPrefetchEdges < n) prefetch(map + seeds[i + kMapPrefetchEdges]);
      const uint32_t earlier = map[seeds[i]] - base;
      DGCN_CHECK(earlier >= static_cast<uint64_t>(i),
                 "sample_neighbors: seed {} appears twice (seeds[{}] and seeds[{}]); seeds must be distinct",
                 seeds[i], earlier, i);
      map[seeds[i]] = base + static_cast<uint32_t>(i);
    }
  }

  // Samples the rows [begin, end) of n_id (the nodes first reached at hop h);
  // returns whether the relabelling ran in parallel.
  bool sample_hop(int h, int64_t begin, int64_t end) {
    const int64_t rows = end - begin;
    const int64_t fanout = options_.fanouts[h];
    const int64_t num_chunks = (rows + kChunkRows - 1) / kChunkRows;
    const bool parallel = options_.num_threads > 1 && num_chunks > 1;
    const int threads = parallel ? static_cast<int>(std::min<int64_t>(options_.num_threads, num_chunks)) : 1;
    if (s_.threads.size() < static_cast<size_t>(threads)) s_.threads.resize(threads);

    Block& full = out_.blocks[0];
    DGCN_ASSERT(static_cast<int64_t>(full.indptr.size()) == begin + 1);
    grow_to(full.indptr, end + 1);
    grow_to(s_.row_start, rows);
    grow_to(s_.row_degree, rows);
    s_.chunk_edges.assign(num_chunks + 1, 0);

    for_each_chunk(num_chunks, threads,
                   [&](int64_t c, int) { s_.chunk_edges[c + 1] = read_rows(c, begin, rows, fanout); });
    for (int64_t c = 0; c < num_chunks; ++c) s_.chunk_edges[c + 1] += s_.chunk_edges[c];
    const int64_t num_edges = s_.chunk_edges[num_chunks];
    const int64_t edge_base = full.indptr[begin];
    grow_to(s_.neighbours, num_edges);
    grow_to(full.indices, edge_base + num_edges);

    if (parallel) {
      for_each_chunk(num_chunks, threads, [&](int64_t c, int t) {
        pick(h, c, begin, rows, fanout, edge_base, s_.threads[t]);
        resolve(c);
      });
      relabel_parallel(num_chunks, threads, edge_base, end);
    } else {
      // Chunk by chunk, so the map entries resolve() prefetched are still
      // cached when relabel() reads them.
      for (int64_t c = 0; c < num_chunks; ++c) {
        pick(h, c, begin, rows, fanout, edge_base, s_.threads[0]);
        resolve(c);
        relabel(edge_base, s_.chunk_edges[c], s_.chunk_edges[c + 1]);
      }
    }
    out_.num_edges_per_hop.push_back(num_edges);
    return parallel;
  }

  // Pass 1 over chunk c: row starts and degrees, sampled counts into indptr.
  // The chunk's indptr entries are all prefetched first, so their misses overlap.
  int64_t read_rows(int64_t c, int64_t begin, int64_t rows, int64_t fanout) {
    const int64_t* nodes = out_.n_id.data() + begin;
    int64_t* counts = out_.blocks[0].indptr.data() + begin + 1;
    const int64_t r0 = c * kChunkRows, r1 = std::min(rows, r0 + kChunkRows);
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t* p = indptr_ + nodes[r];
      prefetch(p);
      prefetch(p + 1);
    }
    int64_t* row_start = s_.row_start.data();
    int64_t* row_degree = s_.row_degree.data();
    int64_t total = 0;
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t v = nodes[r];
      const int64_t start = indptr_[v], degree = indptr_[v + 1] - start;
      row_start[r] = start;
      row_degree[r] = degree;
      counts[r] = sampled_count(degree, fanout, options_.replace);
      total += counts[r];
    }
    return total;
  }

  // Pass 2a over chunk c: draw the picked CSR positions of every row (in row
  // order, each row from its node's stream, Note [Per-node draws]) into the
  // hop's edge slots, prefetching each picked entry; turns the counts in
  // indptr into offsets.
  void pick(int h, int64_t c, int64_t begin, int64_t rows, int64_t fanout, int64_t edge_base,
            ThreadScratch& ts) {
    const uint64_t hop = hop_key(key_, h);
    const int64_t* nodes = out_.n_id.data() + begin;
    int64_t* offsets = out_.blocks[0].indptr.data() + begin + 1;
    int64_t* slots = s_.neighbours.data();
    const int64_t* row_start = s_.row_start.data();
    const int64_t* row_degree = s_.row_degree.data();
    int64_t e = s_.chunk_edges[c];
    const int64_t r0 = c * kChunkRows, r1 = std::min(rows, r0 + kChunkRows);
    const bool replace = options_.replace;
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t start = row_start[r];
      const int64_t degree = row_degree[r];
      const int64_t count = offsets[r];
      int64_t* out = slots + e;
      if (takes_whole_row(degree, count, fanout, replace)) {
        for (int64_t j = 0; j < degree; ++j) out[j] = start + j;
        prefetch_bytes(indices_ + start, degree * static_cast<int64_t>(sizeof(Id)));
      } else {
        draw_positions(hop, nodes[r], degree, count, replace, out, ts.marks);
        for (int64_t j = 0; j < count; ++j) {
          out[j] += start;
          prefetch(indices_ + out[j]);
        }
      }
      e += count;
      offsets[r] = edge_base + e;
    }
  }

  // Pass 2b over chunk c: CSR positions -> global neighbour ids (cached by
  // now), prefetching each neighbour's map entry for the relabelling.
  void resolve(int64_t c) {
    int64_t* slots = s_.neighbours.data();
    const uint32_t* map = s_.map.data();
    for (int64_t e = s_.chunk_edges[c]; e < s_.chunk_edges[c + 1]; ++e) {
      const int64_t u = indices_[slots[e]];
      slots[e] = u;
      prefetch(map + u);
    }
  }

  // Pass 3, sequentially over the hop's edges [e0, e1): the first
  // appearance of a node in edge order gets the next local id.
  void relabel(int64_t edge_base, int64_t e0, int64_t e1) {
    uint32_t* map = s_.map.data();
    const uint32_t base = s_.base;
    const int64_t* nbr = s_.neighbours.data();
    int32_t* dst = out_.blocks[0].indices.data() + edge_base;
    auto assigned = static_cast<uint32_t>(out_.n_id.size());
    for (int64_t j = e0; j < e1; ++j) {
      const int64_t u = nbr[j];
      uint32_t local = map[u] - base;
      if (local >= assigned) {
        local = assigned++;
        map[u] = base + local;
        out_.n_id.push_back(u);
      }
      dst[j] = static_cast<int32_t>(local);
    }
  }

  // Pass 3 in parallel (Note [Relabelling map]): the same numbering as
  // relabel(), without atomics. Edge marks in dst: kRepeat = -1 (a node met
  // earlier in this hop), kFirst = -2 (its first appearance).
  static constexpr int32_t kRepeat = -1, kFirst = -2;

  void relabel_parallel(int64_t num_chunks, int threads, int64_t edge_base, int64_t assigned) {
    uint32_t* map = s_.map.data();
    const uint32_t base = s_.base, seen = seen_value();
    const int64_t* nbr = s_.neighbours.data();
    int32_t* dst = out_.blocks[0].indices.data() + edge_base;
    const int64_t num_edges = s_.chunk_edges[num_chunks];
    // find: thread t owns the map entries of nodes [n t / T, n (t+1) / T) and
    // walks all edges in order, so it sees each of its nodes' first
    // appearance first. Nobody else touches those entries.
    for_each_chunk(threads, threads, [&](int64_t t, int) {
      const int64_t lo = num_nodes_ * t / threads, hi = num_nodes_ * (t + 1) / threads;
      for (int64_t e = 0; e < num_edges; ++e) {
        if (e + kMapPrefetchEdges < num_edges) {
          const int64_t ahead = nbr[e + kMapPrefetchEdges];
          if (ahead >= lo && ahead < hi) prefetch(map + ahead);
        }
        const int64_t u = nbr[e];
        if (u < lo || u >= hi) continue;
        const uint32_t m = map[u];
        if (m - base < static_cast<uint64_t>(assigned)) {
          dst[e] = static_cast<int32_t>(m - base);
        } else if (m == seen) {
          dst[e] = kRepeat;
        } else {
          map[u] = seen;
          dst[e] = kFirst;
        }
      }
    });
    // count first appearances per chunk; their prefix sum numbers them.
    grow_to(s_.chunk_firsts, num_chunks + 1);
    s_.chunk_firsts[0] = 0;
    for_each_chunk(num_chunks, threads, [&](int64_t c, int) {
      int64_t n = 0;
      for (int64_t e = s_.chunk_edges[c]; e < s_.chunk_edges[c + 1]; ++e) n += dst[e] == kFirst;
      s_.chunk_firsts[c + 1] = n;
    });
    for (int64_t c = 0; c < num_chunks; ++c) s_.chunk_firsts[c + 1] += s_.chunk_firsts[c];
    grow_to(out_.n_id, assigned + s_.chunk_firsts[num_chunks]);
    // assign: ids in edge order; each node has one first appearance.
    for_each_chunk(num_chunks, threads, [&](int64_t c, int) {
      int64_t id = assigned + s_.chunk_firsts[c];
      for (int64_t e = s_.chunk_edges[c]; e < s_.chunk_edges[c + 1]; ++e) {
        if (dst[e] != kFirst) continue;
        map[nbr[e]] = base + static_cast<uint32_t>(id);
        out_.n_id[id] = nbr[e];
        dst[e] = static_cast<int32_t>(id++);
      }
    });
    // repeats read the id their node got.
    for_each_chunk(num_chunks, threads, [&](int64_t c, int) {
      const int64_t e1 = s_.chunk_edges[c + 1];
      for (int64_t e = s_.chunk_edges[c]; e < e1; ++e) {
        if (e + kMapPrefetchEdges < e1 && dst[e + kMapPrefetchEdges] == kRepeat) {
          prefetch(map + nbr[e + kMapPrefetchEdges]);
        }
        if (dst[e] == kRepeat) dst[e] = static_cast<int32_t>(map[nbr[e]] - base);
      }
    });
  }

  const int64_t* indptr_;
  const Id* indices_;
  int64_t num_nodes_;
  const SamplerOptions& options_;
  const BatchKey& key_;
  SamplerScratch::Impl& s_;
  SampledBatch& out_;
};

}  // namespace

namespace detail {

void build_prefix_blocks(SampledBatch& out) {
  const int num_layers = static_cast<int>(out.blocks.size());
  const int64_t total = static_cast<int64_t>(out.n_id.size());
  Block& full = out.blocks[0];
  full.num_src = total;
  full.num_dst = out.nodes_within(num_layers - 1);
  DGCN_ASSERT(static_cast<int64_t>(full.indptr.size()) == full.num_dst + 1);
  for (int l = 1; l < num_layers; ++l) {
    Block& b = out.blocks[l];
    b.num_dst = out.nodes_within(num_layers - 1 - l);
    b.num_src = out.nodes_within(num_layers - l);
    b.indptr.assign(full.indptr.begin(), full.indptr.begin() + b.num_dst + 1);
    b.indices.assign(full.indices.begin(), full.indices.begin() + b.indptr.back());
  }
}

}  // namespace detail

template <class Id>
void sample_neighbors_kernel(const Csr& graph, std::span<const Id> indices, std::span<const int64_t> seeds,
                             const SamplerOptions& options, const BatchKey& key,
                             SamplerScratch::Impl& scratch, SampledBatch& out) {
  BatchSampler<Id>(graph, indices, options, key, scratch, out).run(seeds);
}

template void sample_neighbors_kernel<int32_t>(const Csr&, std::span<const int32_t>, std::span<const int64_t>,
                                               const SamplerOptions&, const BatchKey&, SamplerScratch::Impl&,
                                               SampledBatch&);
template void sample_neighbors_kernel<int64_t>(const Csr&, std::span<const int64_t>, std::span<const int64_t>,
                                               const SamplerOptions&, const BatchKey&, SamplerScratch::Impl&,
                                               SampledBatch&);

}  // namespace dgcn
