// The epoch driver that every training run shares (the GCN run and the MNIST
// baseline): the resume policy, a checkpoint after every epoch, the final
// parameter digest and the check that every replica ends with it. A model
// plugs in as an EpochTask; like c10d's Reducer, the gradient sync is called
// by the task's training loop and never owns it.
//
//   MyTask task(...);                                   // implements EpochTask
//   EpochRunResult r = run_epochs(task, {.epochs = 10, .seed = 0, .checkpoint_dir = "ckpt"}, ranks);
//
// Epochs count from 1 in everything a user sees (logs, metrics, checkpoint
// names, summaries): epoch 1 is the first pass, checkpoint-000003.pt holds
// the model after epoch 3, and a run resumed from it starts at epoch 4. The
// driver hands tasks the 0-based index (epoch number - 1) that their random
// streams are keyed by.
//
// Note [Resume policy]
// Every random choice of a run derives from (seed, epoch, batch, rank), so
// the weights and optimizer state after epoch k plus the seed are the whole
// state of the run: resuming from the checkpoint written after epoch k
// continues bit for bit like the uninterrupted run. The checkpoint records
// the run's configuration (train/run_config.h); before any step every rank
// compares it with its own, and a checkpoint of other data, another model,
// optimizer or seed is an error naming each field and both values (Note
// [What a resume may change]). A resume folder that does not exist is an
// error too; an empty one starts the run from epoch 1.
#pragma once

#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "partition/collectives.h"

namespace dgcn {

// Where a resumed epoch starts: after `batches` of its batches, with the
// task's mid_epoch_state() of that moment (Note [In-epoch checkpoints] in
// train/checkpoint.h).
struct EpochStart {
  int64_t batches = 0;
  std::vector<double> state;
};

// Called on every rank after each batch with (batches done, batches of the epoch).
using AfterBatch = std::function<void(int64_t done, int64_t total)>;

// One model's training as the driver sees it. Every method except module()
// and optimizer() is collective: each rank calls it in the same order.
class EpochTask {
 public:
  virtual ~EpochTask() = default;
  // What a checkpoint holds besides the driver's own fields.
  virtual torch::nn::Module& module() = 0;
  virtual torch::optim::Optimizer& optimizer() = 0;
  // Trains epoch index `epoch` (0-based: epoch number epoch + 1) on this
  // rank's share and evaluates when due; from `start` when given (a resumed
  // in-epoch checkpoint), calling `after_batch` after each batch's step.
  virtual void train_epoch(int64_t epoch, const EpochStart* start, const AfterBatch& after_batch) = 0;
  // In-epoch checkpoints: whether train_epoch can start inside an epoch, and
  // (collective, called inside after_batch) what it needs to, as float64s.
  virtual bool resumes_inside_epochs() const { return false; }
  virtual std::vector<double> mid_epoch_state() { return {}; }
  // Whether the epoch just trained has the best validation metric so far
  // (its checkpoint is then also kept as best.pt).
  virtual bool improved() const { return false; }
  // Evaluates the weights as they are: a finished run resumed, nothing left to train.
  virtual void evaluate_now() = 0;
  // Progress worth keeping across a restart (e.g. the best validation
  // record), saved as the checkpoint's extra scalars; restore_progress gets
  // them back with the number of epochs the checkpoint holds, after the
  // weights and optimizer state were restored (e.g. to apply a new lr).
  virtual std::map<std::string, double> progress() const { return {}; }
  virtual void restore_progress(int64_t epochs_done, const std::map<std::string, double>& progress) {}
};

struct EpochRunOptions {
  int64_t epochs = 0;  // in total, counting the epochs before a resume
  uint64_t seed = 0;   // the run's seed (Note [Resume policy])
  // The run's record (train/run_config.h), saved in every checkpoint and
  // compared with a resumed one's.
  nlohmann::json config = nlohmann::json::object();
  std::string checkpoint_dir;  // a checkpoint after every epoch, written by rank 0; empty: none
  bool resume = false;         // continue after the newest checkpoint in checkpoint_dir
  // > 0: also a checkpoint after every this many batches of an epoch (Note
  // [In-epoch checkpoints]); needs checkpoint_dir and a task that resumes
  // inside epochs.
  int64_t checkpoint_every_batches = 0;
};

struct EpochRunResult {
  int64_t epochs_before = 0;     // epochs the resumed checkpoint held (0: a fresh run)
  double checkpoint_wait_s = 0;  // training time spent waiting for checkpoint writes (rank 0)
  int64_t epochs_done = 0;       // in total, counting those before a resume
  std::string param_digest;      // of the final weights, equal on every rank (checked)
};

// Collective over `ranks` (the ranks' one Collectives, as the task's own
// exchanges use; a process group, or one of one process): with
// options.resume, restores the newest
// checkpoint of options.checkpoint_dir on every rank (none there: starts at
// epoch 1); trains the epochs up to options.epochs, each followed by a
// checkpoint (rank 0, written on a background thread: train/checkpoint_writer.h)
// and `after_epoch(epoch index)` on every rank; a
// resumed run with nothing left evaluates once. Ends by comparing every
// rank's param_digest with rank 0's. Throws c10::Error / dgcn::Error on a
// resume without a checkpoint_dir or with a missing one, a checkpoint of
// another run (Note [Resume policy]), replicas that differ, and when a
// collective fails.
EpochRunResult run_epochs(EpochTask& task, const EpochRunOptions& options, Collectives& ranks,
                          const std::function<void(int64_t epoch)>& after_epoch = {});

// A digest (16 hex digits, XXH3) of every parameter's bytes in registration
// order: equal digests mean bit-identical models, e.g. on every rank after
// synchronized training, or before and after a refactor.
std::string param_digest(const torch::nn::Module& module);

}  // namespace dgcn
