// A GCN training run, on one process or every rank of a process group: the
// trainer (train/gcn_trainer.h) on every rank, joined by the DDP module
// (distributed/ddp.h) through DdpGradSync, driven epoch by epoch by
// run_epochs (train/epoch_driver.h: resume policy, checkpoints, the checked
// param_digest). Each rank trains on its shard of every epoch's seeds
// (sampling/seed_partition.h: equal batch counts), evaluates its slice of
// the valid/test nodes and the counts are summed.
//
//   auto group = ProcessGroup::create(rank_env_from_process(), {});
//   GcnRunSummary s = train_gcn(store, options, run, *group, on_epoch);
//   group->shutdown();
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "distributed/ddp.h"
#include "distributed/process_group.h"
#include "graph/store_format.h"
#include "partition/part_loading.h"
#include "train/gcn_trainer.h"

namespace dgcn {

// The trainer's GradSync over a process group: gradients through the DDP
// module (Note [DDP gradient sync]); the trainer's other exchanges go
// through the group itself (partition/collectives.h).
class DdpGradSync final : public GradSync {
 public:
  // `group` must outlive this object.
  explicit DdpGradSync(ProcessGroup& group, DdpOptions options = {});
  ~DdpGradSync() override;

  // Collective (the DDP constructor broadcasts rank 0's weights). Once.
  void attach(torch::nn::Module& model) override;
  void finish_backward() override;

  // The DDP module, after attach() (nullptr before).
  const DistributedDataParallel* ddp() const { return ddp_.get(); }

 private:
  ProcessGroup& group_;
  DdpOptions options_;
  std::unique_ptr<DistributedDataParallel> ddp_;
};

struct GcnRunOptions {
  std::string checkpoint_dir;            // save a checkpoint here after every epoch (rank 0); empty: none
  bool resume = false;                   // continue from the newest checkpoint in checkpoint_dir
  int64_t checkpoint_every_batches = 0;  // > 0: also inside epochs (Note [In-epoch checkpoints])
  std::string data_path;  // the store's path as given (or "synthetic:<preset>"), for the record
  nlohmann::json config;  // the run's record when the caller made it already (else made here)
  // Set when the store is this rank's part of that partition (Note
  // [Partitioned training]); the caller loaded and checked it
  // (load_partition_part).
  const PartitionManifest* partition = nullptr;
  // Every rank waits here once its trainer is built, right before the first
  // epoch (train/start_gate.h); empty: no gate.
  std::string start_gate;
};

struct GcnRunSummary {
  TrainSummary train;            // over every epoch, also those before a resume (best_*)
  int64_t first_epoch = 1;       // the number of the first epoch this run trained (> 1 after a resume)
  double checkpoint_wait_s = 0;  // training time rank 0 spent waiting for checkpoint writes
  int world_size = 1;
  nlohmann::json config;  // the run's record (gcn_run_config)
};

// The run's record (train/run_config.h) for these options on `store`: model,
// optimizer, run settings, the data's identity (content_digest) and version.
// For a part of `partition`: the whole graph's identity (the source's digest,
// so a partitioned run and a replicated one on the same data share it) and
// run.seeds / run.partition.
nlohmann::json gcn_run_config(const TrainOptions& options, const GraphStore& store,
                              const std::string& data_path, int world_size,
                              const PartitionManifest* partition = nullptr);

// Called on every rank after each epoch (and its checkpoint).
using GcnEpochCallback = std::function<void(const EpochReport&, const Trainer&)>;

// Collective: trains options.epochs epochs in total on every rank of `group`
// (the group's rank and size shard the work; options.device must match
// group.device() for NCCL). With run.resume, restores the newest
// checkpoint in run.checkpoint_dir on every rank and trains the epochs after
// it; a checkpoint at or past options.epochs trains nothing and only
// evaluates. Throws c10::Error / dgcn::Error on invalid options, on a
// checkpoint of another seed or model, and when a collective fails.
GcnRunSummary train_gcn(const GraphStore& store, TrainOptions options, const GcnRunOptions& run,
                        ProcessGroup& group, const GcnEpochCallback& on_epoch = {});

}  // namespace dgcn
