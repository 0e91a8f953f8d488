// dgcn-train --model sage|gat through every path --model gcn takes: one and
// two ranks, a partitioned graph with --seeds global equal to the
// replicated run bit for bit, --resume equal to the uninterrupted run,
// dgcn-predict rebuilding the model from its checkpoint, a checkpoint of
// another model refused, and flags a model lacks refused.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "fixtures.h"
#include "json_output.h"
#include "partition/partition_files.h"
#include "run_command.h"
#include "train_runs.h"

namespace dgcn {
namespace {

using nlohmann::json;
using testing::summary_of;

const std::string kPredict = DGCN_PREDICT_BIN;

class DgcnTrainModels : public testing::DgcnTrainRuns {
 protected:
  // The model's flags: GAT with 2 heads and attention dropout, so both reach
  // the record and every path.
  static std::string model_flags(const std::string& model) {
    return model == "gat" ? " --model gat --heads 2 --hidden 8 --attention-dropout 0.1" : " --model " + model;
  }
  json succeeded(const testing::CommandResult& r) {
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return summary_of(r);
  }
};

TEST_F(DgcnTrainModels, SageAndGatLearnOnOneAndTwoRanks) {
  for (const std::string model : {"sage", "gat"}) {
    SCOPED_TRACE(model);
    // GAT's 2 heads of 8 features learn slower than SAGE's 16 at this learning rate.
    const std::string epochs = model == "gat" ? "--epochs 8" : "--epochs 4";
    const json one = succeeded(train(epochs + model_flags(model)));
    EXPECT_EQ(one["config"]["model"]["kind"], model);
    EXPECT_GT(one["test_acc"].get<double>(), 0.6) << "4 classes: chance is 0.25";
    const json two = succeeded(train(epochs + " --nproc-per-node 2" + model_flags(model)));
    EXPECT_EQ(two["world_size"], 2);
    EXPECT_GT(two["test_acc"].get<double>(), 0.6);
    EXPECT_NE(one["param_digest"], two["param_digest"]) << "two ranks train on other batches";
  }
  const json gat = succeeded(train("--epochs 1" + model_flags("gat")));
  EXPECT_EQ(gat["config"]["model"]["heads"], 2);
  EXPECT_EQ(gat["config"]["model"]["attention_dropout"], 0.1);
  EXPECT_FALSE(gat["config"]["model"].contains("norm")) << "the GCN normalization is GCN's";
}

TEST_F(DgcnTrainModels, PartitionedGlobalSeedsGiveTheReplicatedRunBitForBit) {
  const std::string dir = scratch_.file("parts");
  WritePartitionOptions p;
  p.partition = {.parts = 2, .method = PartitionMethod::kMetis, .seed = 1, .threads = 1};
  write_partition(load_store(data_), dir, p);
  for (const std::string model : {"sage", "gat"}) {
    SCOPED_TRACE(model);
    const std::string flags = " --epochs 2 --nproc-per-node 2" + model_flags(model);
    const json replicated = succeeded(train(flags));
    const json partitioned = succeeded(train(flags + " --data " + dir + " --seeds global"));
    EXPECT_EQ(replicated["param_digest"], partitioned["param_digest"]);
    EXPECT_EQ(replicated["valid_acc"], partitioned["valid_acc"]) << "layer-wise inference over the parts";
    EXPECT_EQ(replicated["test_acc"], partitioned["test_acc"]);
  }
}

TEST_F(DgcnTrainModels, ResumeContinuesBitForBitAndPredictRebuildsTheModel) {
  for (const std::string model : {"sage", "gat"}) {
    SCOPED_TRACE(model);
    const std::string ckpt = scratch_.file("ckpt-" + model);
    const json full = succeeded(train("--epochs 3" + model_flags(model)));
    succeeded(train("--epochs 2 --checkpoint " + ckpt + model_flags(model)));
    const json rest = succeeded(train("--epochs 3 --checkpoint " + ckpt + " --resume" + model_flags(model)));
    EXPECT_EQ(rest["first_epoch"], 3);
    EXPECT_EQ(rest["param_digest"], full["param_digest"]);
    EXPECT_EQ(rest["test_acc"], full["test_acc"]);

    // dgcn-predict reads the model from the checkpoint: no --model flag.
    auto p = testing::run_command(kPredict + " --threads 1 --timeout 30 --checkpoint " + ckpt +
                                      "/checkpoint-000003.pt --data " + data_ + " --out " +
                                      scratch_.file("p-" + model) + " --nodes test --what class,embeddings",
                                  scratch_);
    const json s = succeeded(p);
    EXPECT_EQ(s["acc"], full["test_acc"]) << "the same layer-wise inference as dgcn-train's evaluation";
  }
}

TEST_F(DgcnTrainModels, ACheckpointOfAnotherModelIsRefused) {
  const std::string ckpt = scratch_.file("ckpt");
  succeeded(train("--epochs 1 --checkpoint " + ckpt));
  auto r = train("--epochs 2 --checkpoint " + ckpt + " --resume --model sage");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("model.kind was \"gcn\", this run has \"sage\""), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("model.norm"), std::string::npos)
      << "the kind is the change, not GCN's settings: " << r.err;
}

TEST_F(DgcnTrainModels, FlagsAModelLacksAreRefused) {
  const struct {
    std::string flags, message;
  } cases[] = {
      {"--heads 4", "--heads is a GAT (--model gat) setting; --model gcn does not have it"},
      {"--model sage --attention-dropout 0.5",
       "--attention-dropout is a GAT (--model gat) setting; --model sage does not have it"},
      {"--model gat --norm block", "--norm is a GCN (--model gcn) setting; --model gat does not have it"},
      {"--model mlp", "--model"},
  };
  for (const auto& c : cases) {
    auto r = train("--epochs 1 " + c.flags);
    EXPECT_EQ(r.exit_code, 2) << c.flags << ": " << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.flags << ": " << r.err;
  }
}

}  // namespace
}  // namespace dgcn
