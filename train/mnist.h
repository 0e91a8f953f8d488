// The baseline: PyTorch's classic DDP example in C++. Flatten + Linear(784, 10)
// on MNIST-format images normalized with mean 0.5 / std 0.5, SGD (lr 0.01),
// batch 64, cross-entropy; each rank trains on its own shard of the shuffled
// training set (distributed/shard.h) under the DDP module, a barrier ends
// each epoch, the test set is evaluated split across ranks
// (train/evaluation_split.h) and reduced. The epochs run on the same driver
// as the GCN run (train/epoch_driver.h): resume policy, checkpoints, digest.
#pragma once

#include <torch/nn/modules/container/sequential.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <string>

#include "datasets/mnist_idx.h"
#include "distributed/process_group.h"

namespace dgcn {

struct MnistOptions {
  int64_t epochs = 3;
  int64_t batch_size = 64;
  double lr = 0.01;
  int64_t seed = 0;
  int64_t train_limit = 0;     // train on the first N training images only (0: all)
  std::string data_path;       // where the data came from, for the run's record
  std::string checkpoint_dir;  // save a checkpoint here after every epoch (rank 0)
  bool resume = false;         // continue from the newest checkpoint in checkpoint_dir
};

struct MnistEpoch {
  int64_t epoch = 0;     // 1-based
  double loss = 0;       // mean training loss over every rank's batches
  double test_acc = 0;   // fraction of the test set classified right
  double test_loss = 0;  // mean test cross-entropy
  double seconds = 0;    // training time of the epoch (without evaluation)
};

struct MnistSummary {
  int64_t first_epoch = 1;  // the number of the first epoch this run trained (> 1 after --resume)
  int64_t epochs = 0;
  double test_acc = 0;
  std::string param_digest;  // XXH3 of the final parameters' bytes, in module order
  double train_seconds = 0;
  nlohmann::json config;  // the run's record (train/run_config.h)
};

// Flatten + Linear(pixels, 10), initialized from torch's generator.
torch::nn::Sequential make_mnist_linear(int64_t pixels);

// Collective: trains on every rank of `group` (on group.device()); calls
// on_epoch on every rank after each epoch's evaluation.
MnistSummary train_mnist(const MnistData& data, const MnistOptions& options, ProcessGroup& group,
                         const std::function<void(const MnistEpoch&)>& on_epoch);

}  // namespace dgcn
