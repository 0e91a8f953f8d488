// What a GCN training run is told: the model, the optimizer, the sampling,
// the evaluation and the threads (train/gcn_trainer.h trains with them; the
// rank and the number of ranks are its Collectives'), and what a rank on one
// part of a partitioned graph needs besides its part.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <vector>

#include "models/gcn_norm.h"
#include "models/model_options.h"
#include "models/precision.h"
#include "partition/collectives.h"
#include "partition/part_map.h"
#include "sampling/loader.h"
#include "train/optimizer.h"
#include "train/training_seeds.h"

namespace dgcn {

enum class EvalMode {
  kFullNeighbour,  // layer-wise inference over every neighbour (exact)
  kSampled,        // the sampled forward pass over batches of eval nodes
  kNone,           // no evaluation (timing runs)
};

struct TrainOptions {
  ModelKind model = ModelKind::kGcn;        // models/model_options.h
  std::vector<int64_t> fanouts{15, 10, 5};  // one per layer, hop 0 first; -1 = all neighbours
  int64_t batch_size = 1024;
  int64_t max_batches = 0;  // > 0: train only the first max_batches batches of each epoch (timing runs)
  int64_t epochs = 10;
  int64_t hidden = 128;
  bool linear_head = false;
  int64_t heads = 1;               // GAT only: attention heads (hidden counts features per head)
  double attention_dropout = 0.0;  // GAT only
  double dropout = 0.5;
  double input_dropout = 0.0;
  OptimizerOptions optimizer;                  // Adam, lr 0.01, no weight decay
  bool weight_decay_first_layer_only = false;  // Kipf & Welling's (and PyG's gcn.py) Cora setup
  GcnNorm norm = GcnNorm::kFullGraph;
  bool normalize_features = false;  // PyG's NormalizeFeatures (normalized_features below)
  c10::Device device = c10::Device(c10::DeviceType::CPU);
  // bf16: mixed precision (Note [Mixed precision] in models/gcn.h); the
  // features are converted to bf16 once, when the trainer starts.
  Precision precision = Precision::kFp32;
  uint64_t seed = 0;
  int compute_threads = 0;  // threads of our CPU kernels and loads (0: LibTorch's count); the caller sets
                            // LibTorch's own (apps/cli/process_settings.h)
  int loader_workers = 1;   // sampling threads working ahead of the trainer
  int loader_queue = 4;     // batches sampled ahead
  // CPU: the first layer reads the store's rows, no per-batch gather
  // (Note [Input gather] in models/batch_tensors.h).
  bool input_from_store = true;
  EvalMode eval_mode = EvalMode::kFullNeighbour;
  std::vector<int64_t> eval_fanouts;  // sampled evaluation (empty: the training fanouts)
  int64_t eval_batch_size = 4096;
  int64_t eval_every = 1;  // epochs between evaluations (the last epoch is always evaluated)
  int64_t eval_chunk_rows = 1 << 16;
  SeedMode seeds = SeedMode::kGlobal;  // partitioned graphs only
};

// What a rank training on one part of a partitioned graph needs besides its
// part and the trainer's Collectives (train/gcn_run.cpp makes it): where
// every node lives, and the loader's exchange.
//
// The training thread reaches the other ranks through one Collectives (the
// trainer's `ranks`: set-up, evaluation, metric sums). The loader cannot
// share it: it samples and fetches rows on a thread of its own, ahead of the
// training step, and collectives are matched by their order on each rank,
// so two threads issuing on one group would pair one rank's all-to-all with
// another's all-reduce. It gets a second group of the same ranks, used by
// nothing else (Note [Partitioned training] in train/gcn_trainer.h).
struct PartitionedGraph {
  const PartMap* map = nullptr;
  Collectives* loader_exchange = nullptr;
};

// The loader settings of `o` for `fanouts`, with or without the feature
// rows (Note [Input gather] in models/batch_tensors.h).
LoaderOptions loader_options(const std::vector<int64_t>& fanouts, const TrainOptions& o,
                             bool gather_features = true);

// The intra-op threads of `o`: compute_threads, or LibTorch's current count.
int compute_threads_of(const TrainOptions& o);

}  // namespace dgcn
