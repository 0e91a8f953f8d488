// dgcn-spmm-bench's measurements: the SpMM kernel on a products-like
// sampled block (bench/products_batch.h) against this machine's memory
// bandwidth (a STREAM-like copy and triad measured in the same run,
// interleaved with the SpMM repetitions so both see the same load), the same
// SpMM on bf16 x and y (Note [bf16 SpMM]) in the same repetitions, the two
// ways of the backward pass (Note [SpMM backward]), the dense transform that
// the aggregation-order cost model weighs it against, and one training step
// of the classic model on the batch's nested blocks.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "bench/products_batch.h"

namespace dgcn {

struct SpmmBenchOptions {
  ProductsBatchSpec batch;     // the modelled batch (new_fraction: one value per fanout)
  int64_t features = 100;      // width of x: features aggregated per entry
  int64_t out_features = 128;  // output width of the dense transform (and the model's hidden width)
  int64_t classes = 47;        // classes of the training-step model
  int threads = 0;             // LibTorch threads (0: its default)
  int reps = 10;               // repetitions; the best time counts
  int64_t stream_mb = 256;     // size of each STREAM array in MiB
  std::string device = "cpu";  // "cpu", "cuda" or "cuda:N"
};

// Runs every measurement; returns the JSON object dgcn-spmm-bench prints
// ({"benchmark": "spmm", "block": {...}, "stream": {...}, "forward": {...},
// "forward_bf16": {...},
// "backward": {...}, "gemm": {...}, "train_step": {...}}). Throws
// dgcn::Error / c10::Error on invalid options or a missing CUDA device.
nlohmann::json run_spmm_bench(const SpmmBenchOptions& options);

}  // namespace dgcn
