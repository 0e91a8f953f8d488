// Training checkpoints: model, optimizer state, epoch, seed and the run's
// configuration, written by rank 0 at the end of an epoch and restored on
// every rank.
//
// A checkpoint is DIR/checkpoint-<epochs done, 6 digits>.pt (and DIR/best.pt,
// a copy of the one with the best validation metric so far), or, inside an
// epoch (Note [In-epoch checkpoints]), DIR/checkpoint-<epoch>-b<batches>.pt:
// checkpoint-000003-b000040.pt holds the model after 40 batches of epoch 3
// (it sorts after checkpoint-000002.pt and before checkpoint-000003.pt). The
// file is the output of torch::pickle_save of a dict, which Python's
// torch.load reads as a plain dict:
//   "format"        int64 scalar, 2
//   "epoch"         int64 scalar, epochs completed (epochs count from 1:
//                   checkpoint-000003.pt holds the model after epoch 3)
//   "seed"          int64 scalar, the run's seed (every random choice derives
//                   from (seed, epoch, batch), so this and "epoch" are the whole
//                   RNG state)
//   "batch"         int64 scalar, batches done of epoch "epoch" + 1 (0: the
//                   checkpoint is at an epoch's end; absent in older files)
//   "mid_epoch"     float64 vector, the run's state inside that epoch (only
//                   when "batch" > 0)
//   "world_size"    int64 scalar, ranks of the run that wrote it
//   "config"        str: JSON of the run's configuration (model, optimizer,
//                   run settings, the dataset's identity, dgcn's version;
//                   train/run_config.h), which --resume checks and
//                   dgcn-predict builds the model from
//   "extra.<name>"  float64 scalars the caller adds (CheckpointState::extra),
//                   e.g. dgcn-train's best validation metric so far
//   "model.<name>"  every parameter and buffer, on CPU, named as in the
//                   module (the same names a Python state_dict would use)
//   "optimizer"     uint8 tensor: the optimizer's torch::serialize archive
//                   (C++ only; Python can ignore it)
// In Python:
//   d = torch.load("checkpoint-000003.pt")
//   state = {k[len("model."):]: v for k, v in d.items() if k.startswith("model.")}
//   config = json.loads(d["config"])
#pragma once

#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "partition/collectives.h"

namespace dgcn {

// The file name of the best-validation copy in a checkpoint folder.
inline constexpr const char* kBestCheckpoint = "best.pt";

// Note [In-epoch checkpoints]
// With --checkpoint-every-batches K, a checkpoint is also written after every
// K-th batch of an epoch. Every random choice of a batch is keyed by (seed,
// epoch, batch, rank) (Note [Trainer randomness]), so the weights, the
// optimizer state and the position (epoch, batches done) are the whole state
// of the model; what the epoch has summed so far on each rank (loss and
// metric counters: the epoch's report) travels in "mid_epoch". A run
// resumed from it continues with the next batch, bit for bit like the
// uninterrupted one; it must run on the same number of ranks (the epoch's
// seeds were cut into that many shards).
struct CheckpointState {
  int64_t epoch = 0;              // epochs completed
  int64_t batch = 0;              // batches done of epoch `epoch` + 1 (0: at an epoch's end)
  std::vector<double> mid_epoch;  // the task's state inside that epoch (batch > 0)
  int64_t seed = 0;
  int64_t world_size = 1;
  nlohmann::json config = nlohmann::json::object();
  std::map<std::string, double> extra;  // saved as "extra.<name>", restored as read
};

// The checkpoint's bytes: a copy of the weights and optimizer state as they
// are now (the caller may go on training while they are written).
std::vector<char> encode_checkpoint(const torch::nn::Module& model, const torch::optim::Optimizer& optimizer,
                                    const CheckpointState& state);

// Writes encoded checkpoint bytes for `state` into `dir` (created if
// missing) atomically (base/atomic_file.h: a temporary file, fsync, rename,
// fsync of the directory); with `best`, the same bytes also as DIR/best.pt.
// Then removes older numbered checkpoints except the newest previous one.
// Returns the path. Not a collective: call it on rank 0 only.
std::string write_checkpoint(const std::string& dir, const CheckpointState& state,
                             const std::vector<char>& bytes, bool best = false);

// encode_checkpoint, then write_checkpoint.
std::string save_checkpoint(const std::string& dir, const torch::nn::Module& model,
                            const torch::optim::Optimizer& optimizer, const CheckpointState& state,
                            bool best = false);

// The path of the numbered checkpoint furthest along in `dir`, or
// nullopt when there is none (or `dir` does not exist).
std::optional<std::string> newest_checkpoint(const std::string& dir);

// Every checkpoint file of `dir` (numbered ones and best.pt), oldest first;
// empty when there is none. A fresh run refuses a folder where this is not
// empty unless told to replace them (remove_checkpoints).
std::vector<std::string> checkpoint_files(const std::string& dir);
void remove_checkpoints(const std::string& dir);

// A checkpoint's bytes and header, read but not yet applied to a model, so
// the caller can check its configuration first.
struct LoadedCheckpoint {
  std::string what;  // the file, for messages
  CheckpointState state;
  c10::IValue dict;  // the whole pickled dict
};

// Collective. Rank 0 reads `path` (a checkpoint file, or a folder: its
// newest numbered checkpoint, or best.pt with prefer_best when there is one)
// and broadcasts its bytes, so other machines need no shared file system.
// Returns nullopt on every rank when the folder holds no checkpoint. Throws
// c10::Error on every rank (rank 0's errors reach the others, so none hangs)
// when the folder does not exist, the file cannot be read, or it is not a
// dgcn checkpoint.
std::optional<LoadedCheckpoint> read_checkpoint(const std::string& path, Collectives& ranks,
                                                bool prefer_best = false);

// Restores the model's parameters and buffers (every one must be there with
// its shape and dtype, nothing else) and, when given, the optimizer state
// (onto the parameters' device). Throws c10::Error naming the file and key.
void restore_checkpoint(const LoadedCheckpoint& checkpoint, torch::nn::Module& model,
                        torch::optim::Optimizer* optimizer);

}  // namespace dgcn
