// The measurements behind dgcn-sampler-bench: sampler throughput per thread
// count (batches side by side in the loader, and threads inside one batch),
// the loader with feature gathering, and this machine's random-access limit
// on an array as large as the graph's CSR indices, to which the sampler's
// rate is compared.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "graph/graph_store.h"

namespace dgcn {

struct SamplerBenchOptions {
  std::vector<int64_t> fanouts = {15, 10, 5};
  bool replace = false;
  int64_t batch_size = 1024;
  std::vector<int> threads = {1, 2};  // one run per entry
  int64_t batches = 50;               // measured batches per run (after warm-up)
  uint64_t seed = 0;
  int queue_depth = 4;
  bool gather = true;          // also run the loader gathering features + labels
  double limit_seconds = 1.0;  // duration of each random-access measurement
};

// Random 4-byte reads from `array` by `threads` threads together, each
// issuing independent reads at uniformly random positions (so the CPU keeps
// many misses in flight), for about `seconds`.
struct ReadRate {
  double per_s = 0;      // reads per wall-clock second, all threads
  double per_cpu_s = 0;  // reads per CPU-second of the reading threads (one thread's rate)
};
ReadRate random_read_rate(std::span<const uint32_t> array, int threads, double seconds);

// Runs every measurement for every thread count; returns
//   {"graph": {...}, "config": {...}, "machine": {...},
//    "runs": [{"threads": 1, "batches_per_s": ..., "sampled_edges_per_s": ...,
//              "nodes_per_batch": ..., "edges_per_batch": ...,
//              "intra_batch_edges_per_s": ..., "cpu_utilization": ...,
//              "sampled_edges_per_cpu_s": ..., "limit_reads_per_cpu_s": ...,
//              "ratio_to_limit_cpu": ..., "page_faults_per_batch": ...,
//              "loader_batches_per_s": ..., "consumer_wait_fraction": ...,
//              "feature_checksum": "...",  (a sum of the gathered feature words)
//              "limit_reads_per_s": ..., "ratio_to_limit": ..., "digest": "..."}, ...]}
// Wall-clock rates are what a user sees; on a shared machine the per-CPU-
// second rates (CPU time of the process, resp. of the reading threads) show
// what each thread does while it runs, and cpu_utilization how much CPU the
// run got. Seeds are the store's training nodes (all nodes when it has no split),
// planned by plan_epoch; `what` names the graph in "graph.file".
// Progress goes to stderr (spdlog).
nlohmann::json run_sampler_bench(const GraphStore& store, const SamplerBenchOptions& options,
                                 const std::string& what);

// The runs as an aligned text table (for stderr).
std::string sampler_bench_table(const nlohmann::json& result);

// What each column of that table means and which JSON field it shows, one
// line per column (for --help and docs/training.md).
std::string sampler_bench_columns();

}  // namespace dgcn
