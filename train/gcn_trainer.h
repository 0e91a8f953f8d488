// Mini-batch GCN training on sampled blocks (single process, CPU or CUDA):
// the loop. What it trains on is TrainingSeeds' (train/training_seeds.h),
// how it scores the Evaluator's (train/evaluator.h), the input features
// input_features' (train/features.h), shared with prediction.
//
//   Trainer trainer(store, options);
//   for (int64_t e = 0; e < options.epochs; ++e) {
//     EpochReport r = trainer.train_epoch(e);   // + evaluation when due
//   }
//   TrainSummary s = trainer.summary();
//
// Note [Training step]
// The loader's workers sample batch i+1 (and, on CUDA, gather its feature
// rows into pinned memory) while the trainer computes batch i; the trainer
// turns the batch into tensors (models/batch_tensors.h: the normalized
// adjacency of every block written straight into tensor memory, the feature
// rows wrapped without a copy or read from the store, Note [Input gather];
// on CUDA copied non_blocking), runs forward / backward and steps the
// optimizer. The time of an epoch is split into waiting for the sampler,
// compute (forward, loss, backward, gradient sync, step) and other (the
// batch's tensors, metrics).
//
// Distributed training plugs in through GradSync (the trainer knows no
// process group; train/gcn_run.h implements it over the DDP module) and
// the ranks' Collectives, whose rank and size shard the seeds of every
// epoch (equal batch counts on every rank) and the evaluation nodes
// (train/evaluation_split.h).
//
// Note [Partitioned training]
// On a partitioned graph each rank holds one part (partition/partition.h); its
// loader samples over all ranks (sampling/partitioned_sampler.h: frontier
// ids to their owners, picks and rows back) on one worker thread with a
// process group of its own, ahead of the trainer as usual. Seeds:
// SeedMode::kGlobal plans every epoch over the training nodes of all parts
// (gathered once) exactly as a replicated run does, so with the per-node
// draws the batches, losses and weights are the replicated run's bit for bit.
// SeedMode::kLocal plans each rank over its own part's training nodes, in
// as many batches on every rank as the largest part needs at --batch-size
// (so the collectives stay in step), and takes the loss as the mean over
// all ranks' labelled seeds, since batch sizes then differ. Evaluation is
// layer-wise inference over the parts (models/inference.h), each rank
// scoring the valid/test nodes it owns.
//
// Note [Trainer randomness]
// Every random choice derives from (seed, epoch, batch, rank): the shuffle and
// the sampling through the loader's batch keys, the dropout masks from
// LibTorch's generator reseeded before every batch with (seed, epoch, batch,
// rank). So a batch's step depends only on the weights and optimizer state
// it starts from, and a run resumed from a checkpoint after epoch k, or after
// batch b of an epoch (Note [In-epoch checkpoints] in train/checkpoint.h),
// continues bit for bit like the uninterrupted one.
#pragma once

#include <c10/core/Device.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <torch/optim/optimizer.h>

#include "base/timing.h"
#include "graph/graph_store.h"
#include "models/gnn.h"
#include "models/metrics.h"
#include "partition/collectives.h"
#include "sampling/partitioned_sampler.h"
#include "train/epoch_driver.h"
#include "train/train_options.h"
#include "train/training_plot.h"

namespace dgcn {

struct BatchTensors;  // models/batch_tensors.h

// Gradient synchronization across ranks, and nothing else (as c10d's
// Reducer): every other exchange of the trainer (metric sums, gathers,
// barriers) goes through the ranks' Collectives (partition/collectives.h).
// Implemented in train/gcn_run.h over distributed/; a single process passes none.
class GradSync {
 public:
  virtual ~GradSync() = default;
  // Once, after the model is built and before training: e.g. broadcast the
  // parameters from rank 0 and register gradient hooks.
  virtual void attach(torch::nn::Module& model) = 0;
  // After loss.backward() of every batch, before the optimizer step: when it
  // returns, every gradient is the average over ranks.
  virtual void finish_backward() = 0;
};

struct EpochReport {
  int64_t epoch = 0;  // its number, from 1 (train_epoch(e) reports e + 1)
  int64_t batches = 0;
  double loss = 0;
  double train_metric = 0;
  std::optional<double> valid_metric, test_metric;  // when evaluated this epoch
  double epoch_s = 0;                               // training part of the epoch, = the three below
  double sampling_wait_s = 0;                       // trainer blocked on the loader
  double compute_s = 0;                             // to-device, forward, backward, sync, step
  double other_s = 0;                               // adjacency building, labels, metrics, logging
  double eval_s = 0;                                // evaluation after the epoch
  // When the training part ended, seconds since the Unix epoch: with epoch_s
  // it places the epoch in time, e.g. beside another program's epochs
  // (bench/python_epoch_bench.py --side-by-side).
  double end_time = 0;
  // What the whole process (every thread: the trainer's, the sampler's)
  // used during the training part: its cost, which a busy host's stolen
  // time does not stretch as it does epoch_s (base/timing.h).
  ProcessUsage usage;
  // Partitioned graphs: what this epoch's batches exchanged, summed over
  // ranks (bytes each rank sent to the others; seconds the loaders spent in
  // the all-to-alls, which run ahead of compute like the sampling).
  bool partitioned = false;
  ExchangeCounters exchange;
};

struct TrainSummary {
  std::string metric;                        // "acc" or "f1"
  double valid_metric = 0, test_metric = 0;  // of the last evaluation
  double best_valid_metric = 0, test_at_best_valid = 0;
  int64_t best_epoch = -1;  // its number (from 1); -1: never evaluated
  int64_t epochs = 0;
  double train_s = 0;  // sum of epoch_s
  double eval_s = 0;
  std::string param_digest;
};

class Trainer {
 public:
  // Builds the model (seeded by options.seed, identical on every rank) and
  // the loader. `store` must outlive the trainer; with normalize_features
  // the trainer keeps its own normalized copy of the features. Throws
  // dgcn::Error / c10::Error on invalid options or a store without labels.
  // `ranks` is the training thread's one handle to the other ranks (nullptr:
  // one process, rank 0 of 1): their number and this rank's, and every
  // exchange but the gradients', which go through `sync` (several ranks
  // pass both): metric sums, gathers, the barrier before evaluation, and on
  // a partitioned graph the set-up and the evaluation. A part of a
  // partitioned graph needs `partitioned` and `ranks` (its rank / size = the
  // part's index / the part count); construction is then collective (the
  // ranks agree on the training nodes). All three outlive the trainer.
  Trainer(const GraphStore& store, TrainOptions options, GradSync* sync = nullptr,
          Collectives* ranks = nullptr, const PartitionedGraph* partitioned = nullptr);
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  // Trains epoch index `epoch` (0-based; its number is epoch + 1) over this
  // rank's shard of the training nodes, then evaluates when due (every
  // eval_every epochs and at the last epoch). `progress` (optional) is called
  // every few seconds with (batch, batches). From `start` (an in-epoch
  // checkpoint's position and mid_epoch_state()) the epoch goes on with the
  // next batch; `after_batch` (optional) is called after every step. Throws
  // dgcn::Error naming the epoch and batch when the loss stops being finite,
  // before that step, and on a `start` from another number of ranks.
  EpochReport train_epoch(int64_t epoch, const std::function<void(int64_t, int64_t)>& progress = {},
                          const EpochStart* start = nullptr, const AfterBatch& after_batch = {});
  // Collective with a GradSync, inside after_batch: every rank's sums of the
  // epoch so far (loss, metric counters), rank after rank, as train_epoch's
  // `start` takes them back.
  std::vector<double> mid_epoch_state();

  // Valid and test metric of the current model (options.eval_mode). With a
  // GradSync, collective: each rank scores its slice of the nodes and the
  // counts are summed over ranks.
  std::pair<double, double> evaluate();

  // After the weights and the optimizer state were restored from a
  // checkpoint written after `epochs_done` epochs: carries the best-validation
  // record of those epochs into summary() (best_epoch: its number; < 0: none).
  void restore_progress(int64_t epochs_done, double best_valid_metric, double test_at_best_valid,
                        int64_t best_epoch);

  TrainSummary summary() const;
  // Whether the last train_epoch() evaluated a new best validation metric.
  bool improved() const { return improved_; }
  const std::vector<CurvePoint>& curve() const { return curve_; }
  GnnModel& model() { return *model_; }  // options.model's kind (models/gnn.h)
  torch::optim::Optimizer& optimizer();  // for checkpoints
  const TrainOptions& options() const { return options_; }
  Task task() const { return store_.task; }

 private:
  struct Impl;
  std::vector<double> sum_over_ranks(std::vector<double> values);
  std::vector<std::vector<double>> gather_over_ranks(const std::vector<double>& values);
  // The pieces of train_epoch: this rank's sums from an in-epoch checkpoint
  // (checked against this run); a batch's loss to step on and its value
  // (the mean over its labelled seeds); the evaluation after an epoch; the
  // epoch in the summary, best-validation record and curve.
  MetricSums resumed_sums(const EpochStart& start, int64_t epoch, int64_t num_batches) const;
  std::pair<at::Tensor, double> batch_loss(const at::Tensor& logits, const BatchTensors& in);
  void evaluate_epoch(EpochReport& r);
  void record_epoch(const EpochReport& r);
  // Asked of ranks_ (one process: rank 0 of 1).
  int rank() const { return ranks_ ? ranks_->rank() : 0; }
  int world_size() const { return ranks_ ? ranks_->size() : 1; }

  TrainOptions options_;
  GraphStore store_;  // shares the caller's buffers (features replaced when normalized)
  GradSync* sync_;
  Collectives* ranks_;  // nullptr: one process
  const PartitionedGraph* partitioned_ = nullptr;
  bool improved_ = false;
  GnnModelPtr model_;
  std::unique_ptr<Impl> impl_;  // seeds, loader, optimizer, feature tensor, evaluator
  std::vector<CurvePoint> curve_;
  TrainSummary summary_;
  MetricSums epoch_sums_;  // this rank's sums of the epoch in progress (mid_epoch_state)
};

}  // namespace dgcn
