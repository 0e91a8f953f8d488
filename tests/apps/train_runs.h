// The dgcn-train runs the app tests share: a small community store in a
// scratch folder and the flags that keep a run quick.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "fixtures.h"
#include "graph/store_format.h"
#include "run_command.h"

namespace dgcn::testing {

inline const std::string kTrain = DGCN_TRAIN_BIN;

class DgcnTrainRuns : public ::testing::Test {
 protected:
  void SetUp() override {
    data_ = scratch_.file("community.gcn");
    save_store(community_store(), data_);
  }
  // dgcn-train on the community store (200 training nodes: 4 batches of 32
  // per rank with 2 ranks), small and quick; `flags` come last, so they
  // override these (the last of a repeated flag counts).
  std::string command(const std::string& flags) const {
    return kTrain + " --data " + data_ +
           " --num-neighbors 5,5 --batch-size 32 --hidden 16 --lr 0.02 --threads 1 --workers 1 "
           "--cpu-cache-gb 0 "
           "--seed 1 --timeout 30 " +
           flags;
  }
  CommandResult train(const std::string& flags, const std::string& env = "") {
    return run_command(env + command(flags), scratch_);
  }
  ScratchDir scratch_;
  std::string data_;
};

}  // namespace dgcn::testing
