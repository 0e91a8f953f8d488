// dgcn-gnn-bench's measurements: one products-like sampled batch
// (bench/products_batch.h) through a stack of our SAGEConv and GATConv
// layers, forward + backward, per batch; plus the GAT attention kernels
// alone (scores, softmax, weighted SpMM and their backward) on the widest
// block, so a change in either shows where it came from.
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "bench/products_batch.h"

namespace dgcn {

struct GnnBenchOptions {
  ProductsBatchSpec batch;     // the modelled batch
  int64_t features = 100;      // input width (ogbn-products: 100)
  int64_t sage_hidden = 256;   // SAGE hidden width (OGB's products SAGE: 256)
  int64_t gat_heads = 4;       // GAT heads of the hidden layers
  int64_t gat_hidden = 32;     // GAT features per head (concatenated: heads x hidden)
  int64_t classes = 47;        // output width (ogbn-products: 47)
  int threads = 0;             // LibTorch threads (0: its default)
  int reps = 5;                // repetitions; best and median reported
  std::string device = "cpu";  // "cpu", "cuda" or "cuda:N"
};

// Returns {"benchmark": "gnn", "batch": {...}, "sage": {...}, "gat": {...},
// "gat_kernels": {...}} with times in ms. Throws on invalid options.
nlohmann::json run_gnn_bench(const GnnBenchOptions& options);

}  // namespace dgcn
