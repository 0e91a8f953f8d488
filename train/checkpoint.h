// Training checkpoints: model, optimizer state, epoch and seed, written by
// rank 0 at the end of an epoch and restored on every rank.
//
// A checkpoint is DIR/checkpoint-<epoch, 6 digits>.pt, the output of
// torch::pickle_save of a c10::Dict<std::string, at::Tensor>, which Python's
// torch.load reads as a plain dict:
//   "format"        int64 scalar, 1
//   "epoch"         int64 scalar, epochs completed
//   "seed"          int64 scalar, the run's seed (every random choice derives
//                   from (seed, epoch, batch), so this and "epoch" are the whole
//                   RNG state)
//   "world_size"    int64 scalar, ranks of the run that wrote it (information)
//   "extra.<name>"  float64 scalars the caller adds (CheckpointState::extra),
//                   e.g. dgcn-train's best validation metric so far
//   "model.<name>"  every parameter and buffer, on CPU, named as in the
//                   module (the same names a Python state_dict would use)
//   "optimizer"     uint8 tensor: the optimizer's torch::serialize archive
//                   (C++ only; Python can ignore it)
// In Python:
//   d = torch.load("checkpoint-000003.pt")
//   state = {k[len("model."):]: v for k, v in d.items() if k.startswith("model.")}
#pragma once

#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "distributed/process_group.h"

namespace dgcn {

struct CheckpointState {
  int64_t epoch = 0;  // epochs completed
  int64_t seed = 0;
  int64_t world_size = 1;
  std::map<std::string, double> extra;  // saved as "extra.<name>", restored as read
};

// Writes the checkpoint for state.epoch into `dir` (created if missing)
// atomically (base/atomic_file.h: a temporary file, fsync, rename, fsync of
// the directory). Then
// removes older checkpoints except the newest previous one. Returns the path.
// Not a collective: call it on rank 0 only.
std::string save_checkpoint(const std::string& dir, const torch::nn::Module& model,
                            const torch::optim::Optimizer& optimizer, const CheckpointState& state);

// The path of the checkpoint with the highest epoch in `dir`, or nullopt when
// there is none (or `dir` does not exist).
std::optional<std::string> newest_checkpoint(const std::string& dir);

// Collective. Rank 0 reads the newest checkpoint in `dir` and broadcasts its
// bytes, so other machines need no shared file system; every rank then
// restores the model's parameters and buffers and the optimizer state (onto
// group.device()). Returns the restored state, or nullopt on every rank when
// `dir` holds no checkpoint. Throws c10::Error naming the file and the key on
// a missing or mis-shaped tensor, on every rank (rank 0's read errors are
// reported to the other ranks as well, so none of them hangs).
std::optional<CheckpointState> load_checkpoint(const std::string& dir, torch::nn::Module& model,
                                               torch::optim::Optimizer& optimizer, ProcessGroup& group);

}  // namespace dgcn
