// The evaluation strategies: sampled evaluation with every neighbour is the
// exact layer-wise one, and the ranks' slices add up to one process's sums.
#include "train/evaluator.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "fixtures.h"
#include "in_process_collectives.h"
#include "models/gcn.h"
#include "models/random_parameters.h"

namespace dgcn {
namespace {

struct ModelAndStore {
  GraphStore store = testing::community_store();
  at::Tensor features = torch::from_blob(const_cast<float*>(store.features.as<float>().data()),
                                         {store.num_nodes(), store.num_features}, torch::kFloat);
  Gcn model{nullptr};
  ModelAndStore() {
    torch::manual_seed(4);
    GcnOptions g;
    g.in_features = store.num_features, g.hidden = 16, g.num_classes = store.num_classes, g.num_layers = 2;
    model = Gcn(g);
    testing::randomize_parameters(*model);  // non-zero biases: both evaluations must add them
  }
};

TrainOptions options(EvalMode mode) {
  TrainOptions o;
  o.fanouts = {5, 5};
  o.eval_mode = mode;
  o.eval_fanouts = {-1, -1};
  o.eval_batch_size = 30;
  return o;
}

void expect_same(const MetricSums& a, const MetricSums& b) {
  const auto pa = a.pack(), pb = b.pack();
  ASSERT_EQ(pa.size(), pb.size());
  EXPECT_EQ(pa[0], pb[0]);  // rows and correct predictions are exact counts
  EXPECT_EQ(pa[1], pb[1]);
  for (size_t i = 0; i < pa.size(); ++i) EXPECT_NEAR(pa[i], pb[i], 1e-6 * (1 + std::abs(pa[i]))) << i;
}

TEST(Evaluator, SampledWithEveryNeighbourIsTheLayerWiseEvaluation) {
  ModelAndStore s;
  const TrainOptions full_o = options(EvalMode::kFullNeighbour), sampled_o = options(EvalMode::kSampled);
  Evaluator full(s.store, s.features, full_o, nullptr, nullptr),
      sampled(s.store, s.features, sampled_o, nullptr, nullptr);
  const auto [fv, ft] = full.evaluate(*s.model);
  const auto [sv, st] = sampled.evaluate(*s.model);
  EXPECT_EQ(fv.count, static_cast<double>(s.store.valid_nodes().size()));
  EXPECT_EQ(ft.count, static_cast<double>(s.store.test_nodes().size()));
  expect_same(fv, sv);
  expect_same(ft, st);
  EXPECT_TRUE(s.model->is_training()) << "the model's mode is restored";
}

TEST(Evaluator, TheRanksSlicesAddUpToOneProcesssSums) {
  ModelAndStore s;
  // Off a partitioned graph the evaluator only asks the ranks who it is, so
  // one thread can play both ranks.
  testing::InProcessGroup two(2);
  for (EvalMode mode : {EvalMode::kFullNeighbour, EvalMode::kSampled}) {
    const TrainOptions o = options(mode);
    auto [v, t] = Evaluator(s.store, s.features, o, nullptr, nullptr).evaluate(*s.model);
    auto [v0, t0] = Evaluator(s.store, s.features, o, &two.at(0), nullptr).evaluate(*s.model);
    auto [v1, t1] = Evaluator(s.store, s.features, o, &two.at(1), nullptr).evaluate(*s.model);
    EXPECT_GT(v0.count, 0);
    EXPECT_GT(v1.count, 0);
    v0.add(v1);
    t0.add(t1);
    expect_same(v, v0);
    expect_same(t, t0);
  }
}

TEST(Evaluator, EvaluationOffIsAnError) {
  ModelAndStore s;
  const TrainOptions o = options(EvalMode::kNone);
  Evaluator e(s.store, s.features, o, nullptr, nullptr);
  EXPECT_THROW(e.evaluate(*s.model), c10::Error);
}

}  // namespace
}  // namespace dgcn
