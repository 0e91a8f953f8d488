// The epoch driver's rules that need no run: the parameter digest.
#include "train/epoch_driver.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "models/gcn.h"

namespace dgcn {
namespace {

TEST(ParamDigest, EqualExactlyForBitIdenticalParameters) {
  GcnOptions g;
  g.in_features = 10, g.hidden = 8, g.num_classes = 3, g.num_layers = 2;
  torch::manual_seed(5);
  Gcn a(g);
  torch::manual_seed(5);
  Gcn b(g);
  EXPECT_EQ(param_digest(*a), param_digest(*b));
  EXPECT_EQ(param_digest(*a).size(), 16u);
  {
    torch::NoGradGuard no_grad;
    b->named_parameters()["conv2.bias"][1] += 1e-6f;
  }
  EXPECT_NE(param_digest(*a), param_digest(*b));
}

}  // namespace
}  // namespace dgcn
