// dgcn-ddp-bench's measurements: what gradient sync costs. Per step:
// training without sync, with the DDP module (all-reduce overlapping
// backward), and with one flat all-reduce after backward; plus a bare c10d
// all-reduce of the same buckets. Two models: a wide MLP (~25M parameters:
// bandwidth-bound sync) and the classic GCN (100 -> 128 -> 128 -> 47, ~35k
// parameters: latency-bound sync) on one products-like sampled batch per
// rank (bench/products_batch.h, seeded by rank).
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "distributed/rank_env.h"

namespace dgcn {

struct DdpBenchOptions {
  std::string model = "mlp";  // "mlp" or "gcn"
  int64_t width = 2048;       // MLP: width of each Linear layer
  int64_t layers = 6;         // MLP: Linear layers
  int64_t batch = 32;         // MLP: rows per rank per step
  // GCN: the classic model's sizes and one sampled batch of `seeds` seeds.
  int64_t features = 100;
  int64_t hidden = 128;
  int64_t classes = 47;
  std::vector<int64_t> fanouts{15, 10, 5};
  int64_t seeds = 1024;
  int steps = 8;   // timed steps per mode (the median counts)
  int warmup = 2;  // untimed steps before them
};

// Collective: joins the job `env` describes over Gloo (collectives time out
// after `timeout`), measures every mode and returns the JSON object rank 0
// prints (null on the other ranks). Throws c10::Error / dgcn::Error.
nlohmann::json run_ddp_bench(const RankEnv& env, std::chrono::milliseconds timeout,
                             const DdpBenchOptions& options);

}  // namespace dgcn
