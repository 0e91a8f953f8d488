#include "graph/csr_builder.h"

#include <algorithm>
#include <atomic>
#include <vector>

#include "base/parallel.h"

namespace dgcn {

namespace {

void check_ids(std::span<const int64_t> ids, int64_t num_nodes, const char* name, const std::string& what,
               int num_threads) {
  std::atomic<int64_t> first{INT64_MAX};
  parallel_for_chunks(static_cast<int64_t>(ids.size()), int64_t{1} << 20, num_threads,
                      [&](int64_t begin, int64_t end) {
                        for (int64_t i = begin; i < end; ++i) {
                          if (ids[i] < 0 || ids[i] >= num_nodes) {
                            int64_t cur = first.load();
                            while (i < cur && !first.compare_exchange_weak(cur, i)) {
                            }
                            return;
                          }
                        }
                      });
  int64_t i = first.load();
  DGCN_CHECK(i == INT64_MAX, "{}: {} id of edge {} is {}, not a node id in [0, {})", what, name, i,
             i == INT64_MAX ? 0 : ids[i], num_nodes);
}

template <class Id>
Csr build(int64_t n, std::span<const int64_t> src, std::span<const int64_t> dst, const EdgeOptions& opt,
          int threads, const std::string& what, EdgeStats* stats) {
  const int64_t m = static_cast<int64_t>(src.size());
  // 1. Row lengths, counting each kept edge once per direction.
  std::vector<int64_t> cursor(static_cast<size_t>(n) + 1, 0);
  std::atomic<int64_t> self_loops{0};
  parallel_for(m, threads, [&](int64_t begin, int64_t end, int) {
    int64_t loops = 0;
    for (int64_t i = begin; i < end; ++i) {
      if (src[i] == dst[i]) {
        ++loops;
        if (opt.drop_self_loops) continue;
      }
      std::atomic_ref<int64_t>(cursor[src[i]]).fetch_add(1, std::memory_order_relaxed);
      if (opt.symmetrize && src[i] != dst[i]) {
        std::atomic_ref<int64_t>(cursor[dst[i]]).fetch_add(1, std::memory_order_relaxed);
      }
    }
    self_loops += loops;
  });
  // Exclusive prefix sum: cursor[v] becomes the start of row v.
  std::vector<int64_t> row_start(static_cast<size_t>(n) + 1);
  int64_t total = 0;
  for (int64_t v = 0; v < n; ++v) {
    row_start[v] = total;
    total += cursor[v];
  }
  row_start[n] = total;
  std::copy(row_start.begin(), row_start.end(), cursor.begin());

  // 2. Scatter (order within a row is arbitrary here; step 3 sorts it).
  MutableBuffer scattered = Buffer::allocate(static_cast<size_t>(total) * sizeof(Id));
  auto out = scattered.as_mutable<Id>();
  parallel_for(m, threads, [&](int64_t begin, int64_t end, int) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t s = src[i], d = dst[i];
      if (s == d && opt.drop_self_loops) continue;
      out[std::atomic_ref<int64_t>(cursor[s]).fetch_add(1, std::memory_order_relaxed)] = static_cast<Id>(d);
      if (opt.symmetrize && s != d) {
        out[std::atomic_ref<int64_t>(cursor[d]).fetch_add(1, std::memory_order_relaxed)] = static_cast<Id>(s);
      }
    }
  });

  // 3. Sort each row and (optionally) squeeze out repeats; kept[v] = new length.
  std::vector<int64_t>& kept = cursor;
  parallel_for_chunks(n, 4096, threads, [&](int64_t begin, int64_t end) {
    for (int64_t v = begin; v < end; ++v) {
      Id* first = out.data() + row_start[v];
      Id* last = out.data() + row_start[v + 1];
      std::sort(first, last);
      kept[v] = opt.drop_duplicates ? std::unique(first, last) - first : last - first;
    }
  });

  // 4. Compact into the final arrays.
  MutableBuffer indptr = Buffer::allocate(static_cast<size_t>(n + 1) * sizeof(int64_t));
  auto p = indptr.as_mutable<int64_t>();
  p[0] = 0;
  for (int64_t v = 0; v < n; ++v) p[v + 1] = p[v] + kept[v];
  const int64_t final_total = p[n];
  MutableBuffer indices = scattered;
  if (final_total != total) {
    indices = Buffer::allocate(static_cast<size_t>(final_total) * sizeof(Id));
    auto dst_ids = indices.as_mutable<Id>();
    parallel_for_chunks(n, 4096, threads, [&](int64_t begin, int64_t end) {
      for (int64_t v = begin; v < end; ++v) {
        std::copy_n(out.data() + row_start[v], kept[v], dst_ids.data() + p[v]);
      }
    });
  }
  if (stats != nullptr) {
    stats->input_edges = m;
    stats->self_loops_dropped = opt.drop_self_loops ? self_loops.load() : 0;
    stats->duplicates_dropped = total - final_total;
    stats->output_entries = final_total;
  }
  return Csr(n, std::move(indptr), std::move(indices), id_width_of<Id>(), what);
}

}  // namespace

Csr build_csr(int64_t num_nodes, std::span<const int64_t> src, std::span<const int64_t> dst,
              const EdgeOptions& options, int num_threads, const std::string& what, EdgeStats* stats) {
  DGCN_CHECK(num_nodes >= 0, "{}: negative node count {}", what, num_nodes);
  DGCN_CHECK(src.size() == dst.size(), "{}: {} source ids but {} destination ids", what, src.size(),
             dst.size());
  check_ids(src, num_nodes, "source", what, num_threads);
  check_ids(dst, num_nodes, "destination", what, num_threads);
  if (id_width_for(num_nodes) == IdWidth::k32) {
    return build<int32_t>(num_nodes, src, dst, options, num_threads, what, stats);
  }
  return build<int64_t>(num_nodes, src, dst, options, num_threads, what, stats);
}

}  // namespace dgcn
