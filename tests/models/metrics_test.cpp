#include "models/metrics.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "fixtures.h"

namespace dgcn {
namespace {

TEST(Metrics, AccuracyAndCrossEntropy) {
  const auto logits = torch::tensor({{2.0f, 0.0f, 0.0f}, {0.0f, 1.0f, 3.0f}, {0.0f, 5.0f, 0.0f}});
  const auto y = torch::tensor({0, 1, 1}, torch::kLong);
  const MetricSums m = batch_metrics(Task::kSingleLabel, logits, y);
  EXPECT_EQ(m.count, 3);
  EXPECT_EQ(m.correct, 2);
  EXPECT_DOUBLE_EQ(m.value(Task::kSingleLabel), 2.0 / 3.0);
  // Row 0: -log(e^2 / (e^2 + 2)).
  const double row0 = -std::log(std::exp(2.0) / (std::exp(2.0) + 2));
  const auto one = classification_loss(Task::kSingleLabel, logits.narrow(0, 0, 1), y.narrow(0, 0, 1));
  EXPECT_NEAR(one.item<double>(), row0, 1e-6);
  // Unlabelled rows (-1) carry no loss.
  const auto masked = classification_loss(Task::kSingleLabel, logits.narrow(0, 0, 2), torch::tensor({0, -1}));
  EXPECT_NEAR(masked.item<double>(), row0, 1e-6);
  EXPECT_EQ(metric_name(Task::kSingleLabel), "acc");
}

TEST(Metrics, MicroF1) {
  // Predictions (logit > 0) vs truth over 2 rows x 3 classes:
  //   row 0: pred {0, 2}, truth {0, 1}  -> tp 1, fp 1, fn 1
  //   row 1: pred {1},    truth {1}     -> tp 1
  const auto logits = torch::tensor({{1.0f, -1.0f, 2.0f}, {-3.0f, 0.5f, -0.5f}});
  const auto truth = torch::tensor({{1.0f, 1.0f, 0.0f}, {0.0f, 1.0f, 0.0f}});
  MetricSums m = batch_metrics(Task::kMultiLabel, logits, truth);
  EXPECT_EQ(m.tp, 2);
  EXPECT_EQ(m.fp, 1);
  EXPECT_EQ(m.fn, 1);
  EXPECT_DOUBLE_EQ(m.value(Task::kMultiLabel), 4.0 / 6.0);
  // Sums add up (batches, ranks) and survive packing.
  m.loss_sum = 3;
  MetricSums total = MetricSums::unpack(m.pack());
  total.add(m);
  EXPECT_EQ(total.tp, 4);
  EXPECT_EQ(total.count, 4);
  EXPECT_DOUBLE_EQ(total.mean_loss(), 1.5);
  EXPECT_EQ(metric_name(Task::kMultiLabel), "f1");
}

TEST(Metrics, TargetsFromStoreAndRows) {
  GraphStore s = testing::make_store(testing::cycle_edges(6), 2, 3);
  const std::vector<int64_t> nodes{4, 1};
  EXPECT_TRUE(torch::equal(targets_of(s, nodes), torch::tensor({1, 1}, torch::kLong)));
  std::vector<int32_t> rows{2, 0};
  const auto t = targets_from_rows(s, std::as_bytes(std::span<const int32_t>(rows)), 2);
  EXPECT_TRUE(torch::equal(t, torch::tensor({2, 0}, torch::kLong)));
  // Multi-label: 10 classes, 2 bytes per row; node v has classes v and 9.
  s.task = Task::kMultiLabel;
  s.num_classes = 10;
  std::vector<uint8_t> bits(6 * 2, 0);
  for (int v = 0; v < 6; ++v) {
    bits[v * 2 + v / 8] |= static_cast<uint8_t>(1 << (v % 8));
    bits[v * 2 + 1] |= 1 << 1;
  }
  s.labels = Buffer::from_vector(std::vector<uint8_t>(bits));
  const auto m = targets_of(s, nodes);
  ASSERT_EQ(m.sizes(), (std::vector<int64_t>{2, 10}));
  EXPECT_EQ(m[0][4].item<float>(), 1.0f);
  EXPECT_EQ(m[0][9].item<float>(), 1.0f);
  EXPECT_EQ(m.sum().item<float>(), 4.0f);
  const auto r = targets_from_rows(s, std::as_bytes(std::span<const uint8_t>(bits).subspan(2, 2)), 1);
  EXPECT_TRUE(torch::equal(r, m.narrow(0, 1, 1)));
  s.task = Task::kNone;
  EXPECT_THROW(targets_of(s, nodes), c10::Error);
}

}  // namespace
}  // namespace dgcn
