#include "train/gcn_trainer.h"

#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "base/error.h"
#include "fixtures.h"
#include "train/epoch_driver.h"

namespace dgcn {
namespace {

using testing::community_store;

TrainOptions small_options() {
  TrainOptions o;
  o.fanouts = {5, 5};
  o.batch_size = 64;
  o.epochs = 15;
  o.hidden = 16;
  o.optimizer.lr = 0.02;
  o.dropout = 0.2;
  o.seed = 1;
  o.compute_threads = 2;
  o.loader_workers = 2;
  return o;
}

TEST(Trainer, LearnsAndBeatsChance) {
  const GraphStore s = community_store();
  Trainer t(s, small_options());
  std::vector<EpochReport> reports;
  for (int64_t e = 0; e < 15; ++e) reports.push_back(t.train_epoch(e));
  EXPECT_LT(reports.back().loss, reports.front().loss * 0.7);
  const TrainSummary sum = t.summary();
  EXPECT_EQ(sum.metric, "acc");
  EXPECT_EQ(sum.epochs, 15);
  EXPECT_GT(sum.test_metric, 0.8) << "4 classes: chance is 0.25";
  EXPECT_EQ(reports.front().batches, 4);  // 200 train nodes / 64
  for (const auto& r : reports) {
    ASSERT_TRUE(r.valid_metric.has_value());
    EXPECT_NEAR(r.epoch_s, r.sampling_wait_s + r.compute_s + r.other_s, 0.05 + 0.05 * r.epoch_s);
  }
  EXPECT_EQ(t.curve().size(), 15u);
}

// The param_digest after training epochs 0 and 1 with `o`.
std::string digest_after_two_epochs(const GraphStore& s, TrainOptions o) {
  o.epochs = 2;
  Trainer t(s, o);
  t.train_epoch(0);
  t.train_epoch(1);
  return t.summary().param_digest;
}

TEST(Trainer, SameSeedSameModelWhateverTheThreads) {
  const GraphStore s = community_store();
  std::vector<std::string> digests;
  for (int threads : {1, 2}) {
    TrainOptions o = small_options();
    o.compute_threads = threads;
    o.loader_workers = threads;
    at::set_num_threads(threads);  // the process's choice (train/process_settings.h), not the trainer's
    digests.push_back(digest_after_two_epochs(s, o));
  }
  at::set_num_threads(2);
  EXPECT_EQ(digests[0], digests[1]);
  TrainOptions o = small_options();
  o.seed = 2;
  EXPECT_NE(digest_after_two_epochs(s, o), digests[0]);
}

// Note [Input gather]: reading the first layer's rows from the store instead
// of the loader's gathered copy changes no bit, whichever order the first
// layer takes (wide features and a tiny hidden layer make it transform first).
TEST(Trainer, StoreInputTrainsTheSameModelAsGatheredRows) {
  const GraphStore s = community_store();
  for (int64_t hidden : {16, 1}) {
    std::vector<std::string> digests;
    for (bool from_store : {false, true}) {
      TrainOptions o = small_options();
      o.hidden = hidden;
      o.input_from_store = from_store;
      digests.push_back(digest_after_two_epochs(s, o));
    }
    EXPECT_EQ(digests[0], digests[1]) << "hidden " << hidden;
  }
}

TEST(Trainer, SampledEvaluationWithEveryNeighbourIsFullNeighbourEvaluation) {
  const GraphStore s = community_store();
  TrainOptions o = small_options();
  o.epochs = 1;
  o.eval_every = 5;  // evaluated only because epoch 0 is the last
  Trainer full(s, o);
  full.train_epoch(0);
  const auto exact = full.evaluate();
  TrainOptions so = o;
  so.eval_mode = EvalMode::kSampled;
  so.eval_fanouts = {-1, -1};
  so.eval_batch_size = 30;
  Trainer sampled(s, so);
  sampled.train_epoch(0);  // same seed: same model
  EXPECT_EQ(full.summary().param_digest, sampled.summary().param_digest);
  const auto approx = sampled.evaluate();
  EXPECT_DOUBLE_EQ(exact.first, approx.first);
  EXPECT_DOUBLE_EQ(exact.second, approx.second);
}

TEST(Trainer, MultiLabelUsesMicroF1AndOtherOptions) {
  const GraphStore s = community_store(Task::kMultiLabel);
  TrainOptions o = small_options();
  o.epochs = 10;
  o.linear_head = true;
  o.optimizer.kind = OptimizerKind::kSgd;
  o.optimizer.lr = 0.5;
  o.optimizer.momentum = 0.9;
  o.norm = GcnNorm::kBlock;
  o.eval_every = 10;
  Trainer t(s, o);
  for (int64_t e = 0; e < 10; ++e) {
    const EpochReport r = t.train_epoch(e);
    EXPECT_EQ(r.valid_metric.has_value(), e == 9);
  }
  const TrainSummary sum = t.summary();
  EXPECT_EQ(sum.metric, "f1");
  EXPECT_GT(sum.test_metric, 0.6);
}

TEST(Trainer, TimingRunsStopEarlyAndSkipEvaluation) {
  const GraphStore s = community_store();
  TrainOptions o = small_options();
  o.epochs = 2;
  o.max_batches = 2;  // of 4
  o.eval_mode = EvalMode::kNone;
  Trainer t(s, o);
  for (int64_t e = 0; e < 2; ++e) {
    const EpochReport r = t.train_epoch(e);  // epoch 1 starts while epoch 0's batches 2, 3 may be in flight
    EXPECT_EQ(r.batches, 2);
    EXPECT_FALSE(r.valid_metric.has_value());
  }
  EXPECT_EQ(t.summary().best_epoch, -1);
  EXPECT_THROW(t.evaluate(), c10::Error);
}

TEST(Trainer, RejectsBadSetups) {
  GraphStore s = community_store();
  TrainOptions o = small_options();
  o.optimizer.lr = 0;
  EXPECT_THROW(Trainer(s, o), c10::Error);
  o = small_options();
  o.eval_fanouts = {5};
  EXPECT_THROW(Trainer(s, o), Error);
  o = small_options();
  o.max_batches = -1;
  EXPECT_THROW(Trainer(s, o), Error);
  s.task = Task::kNone;
  EXPECT_THROW(Trainer(s, small_options()), Error);
}

TEST(Trainer, FirstLayerOnlyWeightDecayLeavesTheOtherLayersUndecayed) {
  // The decayed group is exactly the first GCN layer's parameters (found by
  // identity, not by name), the rest form an undecayed group.
  const GraphStore s = community_store();
  TrainOptions o = small_options();
  o.optimizer.kind = OptimizerKind::kSgd;
  o.optimizer.lr = 1e-3;
  o.optimizer.weight_decay = 100;
  o.weight_decay_first_layer_only = true;
  Trainer t(s, o);
  auto& groups = t.optimizer().param_groups();
  ASSERT_EQ(groups.size(), 2u);
  const auto first = t.model().layer_parameters(0);
  ASSERT_EQ(groups[0].params().size(), first.size());
  for (size_t i = 0; i < first.size(); ++i) EXPECT_TRUE(groups[0].params()[i].is_same(first[i]));
  EXPECT_EQ(static_cast<const torch::optim::SGDOptions&>(groups[0].options()).weight_decay(), 100);
  EXPECT_EQ(static_cast<const torch::optim::SGDOptions&>(groups[1].options()).weight_decay(), 0);
  EXPECT_EQ(groups[0].params().size() + groups[1].params().size(), t.model().parameters().size());
}

}  // namespace
}  // namespace dgcn
