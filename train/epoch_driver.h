// The epoch driver that every training run shares (the GCN run and the MNIST
// baseline): the resume policy, a checkpoint after every epoch, the final
// parameter digest and the check that every replica ends with it. A model
// plugs in as an EpochTask; like c10d's Reducer, the gradient sync is called
// by the task's training loop and never owns it.
//
//   MyTask task(...);                                   // implements EpochTask
//   EpochRunResult r = run_epochs(task, {.epochs = 10, .seed = 0, .checkpoint_dir = "ckpt"}, *group);
//
// Note [Resume policy]
// Every random choice of a run derives from (seed, epoch, batch, rank), so
// the weights and optimizer state after epoch k plus the seed are the whole
// state of the run: resuming from the checkpoint written after epoch k
// continues bit for bit like the uninterrupted run. A checkpoint of another
// seed would continue a different run, so resuming it is an error naming both
// seeds. The world size may change (the weights do not depend on it), which
// continues a different but valid run.
#pragma once

#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "distributed/process_group.h"

namespace dgcn {

// One model's training as the driver sees it. Every method except module()
// and optimizer() is collective: each rank calls it in the same order.
class EpochTask {
 public:
  virtual ~EpochTask() = default;
  // What a checkpoint holds besides the driver's own fields.
  virtual torch::nn::Module& module() = 0;
  virtual torch::optim::Optimizer& optimizer() = 0;
  // Trains epoch `epoch` (0-based) on this rank's share and evaluates when due.
  virtual void train_epoch(int64_t epoch) = 0;
  // Evaluates the weights as they are: a finished run resumed, nothing left to train.
  virtual void evaluate_now() = 0;
  // Progress worth keeping across a restart (e.g. the best validation
  // record), saved as the checkpoint's extra scalars; restore_progress gets
  // them back with the number of epochs the checkpoint holds.
  virtual std::map<std::string, double> progress() const { return {}; }
  virtual void restore_progress(int64_t epochs_done, const std::map<std::string, double>& progress) {}
};

struct EpochRunOptions {
  int64_t epochs = 0;          // in total, counting the epochs before a resume
  uint64_t seed = 0;           // the run's seed (Note [Resume policy])
  std::string checkpoint_dir;  // a checkpoint after every epoch, written by rank 0; empty: none
  bool resume = false;         // continue after the newest checkpoint in checkpoint_dir
};

struct EpochRunResult {
  int64_t first_epoch = 0;   // the first epoch this run trained (0-based; > 0 after a resume)
  int64_t epochs_done = 0;   // in total, counting those before a resume
  std::string param_digest;  // of the final weights, equal on every rank (checked)
};

// Collective over `group`: with options.resume, restores the newest
// checkpoint of options.checkpoint_dir on every rank (none there: starts at
// epoch 0); trains the epochs up to options.epochs, each followed by a
// checkpoint (rank 0) and `after_epoch(epoch)` on every rank; a resumed run
// with nothing left evaluates once. Ends by comparing every rank's
// param_digest with rank 0's. Throws c10::Error / dgcn::Error on a resume
// without a checkpoint_dir, a checkpoint of another seed or model, replicas
// that differ, and when a collective fails.
EpochRunResult run_epochs(EpochTask& task, const EpochRunOptions& options, ProcessGroup& group,
                          const std::function<void(int64_t epoch)>& after_epoch = {});

// A digest (16 hex digits, XXH3) of every parameter's bytes in registration
// order: equal digests mean bit-identical models, e.g. on every rank after
// synchronized training, or before and after a refactor.
std::string param_digest(const torch::nn::Module& module);

}  // namespace dgcn
