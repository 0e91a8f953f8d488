// The dropout op (models/dropout.h): the mask's rate and scale, its
// independence from the thread count, and gradients through the same mask.
#include "models/dropout.h"

#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

namespace dgcn {
namespace {

TEST(Dropout, KeepsTheRightFractionAndScales) {
  torch::manual_seed(11);
  const auto x = torch::rand({1000, 1000}) + 0.5;  // all positive: ReLU passes everything
  const auto y = relu_dropout(x, 0.3, true);
  const double kept = (y > 0).to(torch::kDouble).mean().item<double>();
  EXPECT_NEAR(kept, 0.7, 0.003);
  const auto k = y > 0;
  EXPECT_TRUE(torch::allclose(y.masked_select(k), x.masked_select(k) / 0.7));
  // Rows and columns are not correlated with the mask: every row keeps ~70%.
  const auto per_row = k.to(torch::kDouble).mean(1);
  EXPECT_GT(per_row.min().item<double>(), 0.6);
  EXPECT_LT(per_row.max().item<double>(), 0.8);
  // Not training (or p = 0): ReLU only.
  const auto z = torch::randn({50, 7});
  EXPECT_TRUE(torch::equal(relu_dropout(z, 0.3, false), torch::relu(z)));
  EXPECT_TRUE(torch::equal(dropout_features(z, 0.3, false), z));
}

TEST(Dropout, SameSeedSameMaskForAnyThreadCount) {
  const auto x = torch::randn({300, 257});
  const int saved = at::get_num_threads();
  at::set_num_threads(1);
  torch::manual_seed(5);
  const auto one = relu_dropout(x, 0.5, true);
  const auto one_in = dropout_features(x, 0.5, true);
  at::set_num_threads(2);
  torch::manual_seed(5);
  const auto two = relu_dropout(x, 0.5, true);
  const auto two_in = dropout_features(x, 0.5, true);
  at::set_num_threads(saved);
  EXPECT_TRUE(torch::equal(one, two));
  EXPECT_TRUE(torch::equal(one_in, two_in));
  torch::manual_seed(6);
  EXPECT_FALSE(torch::equal(one, relu_dropout(x, 0.5, true)));
}

TEST(Dropout, GradientsUseTheForwardMask) {
  torch::manual_seed(8);
  const auto x = torch::randn({40, 30}).requires_grad_(true);
  const auto dy = torch::randn({40, 30});
  const auto y = relu_dropout(x, 0.4, true);
  y.backward(dy);
  // Kept and positive: dy / (1 - p); else 0.
  EXPECT_TRUE(torch::allclose(x.grad(), torch::where(y > 0, dy / 0.6, torch::zeros_like(dy))));
  const auto x2 = torch::randn({40, 30}).requires_grad_(true);
  const auto y2 = dropout_features(x2, 0.4, true);
  y2.backward(dy);
  const auto kept = y2 != 0;
  EXPECT_TRUE(torch::allclose(x2.grad(), torch::where(kept, dy / 0.6, torch::zeros_like(dy))));
  EXPECT_NEAR(kept.to(torch::kDouble).mean().item<double>(), 0.6, 0.05);
}

}  // namespace
}  // namespace dgcn
