// The optimizers: names, and the parameter groups of first-layer-only decay.
#include "train/optimizer.h"

#include <gtest/gtest.h>
#include <torch/torch.h>

#include "base/error.h"

namespace dgcn {
namespace {

TEST(Optimizer, NamesParseBackAndOthersAreErrors) {
  for (OptimizerKind k : {OptimizerKind::kAdam, OptimizerKind::kSgd}) {
    EXPECT_EQ(parse_optimizer(optimizer_name(k)), k);
  }
  try {
    parse_optimizer("lbfgs");
    FAIL() << "lbfgs parsed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'lbfgs'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("'adam' or 'sgd'"), std::string::npos) << e.what();
  }
}

TEST(Optimizer, DecayingOnlySomeParametersMakesADecayedAndAnUndecayedGroupInParameterOrder) {
  torch::nn::Linear a(3, 2), b(2, 2);
  std::vector<at::Tensor> all = a->parameters();
  for (const auto& p : b->parameters()) all.push_back(p);
  OptimizerOptions o;
  o.kind = OptimizerKind::kSgd;
  o.weight_decay = 7;
  auto one_group = make_optimizer_decaying(o, all, {});
  ASSERT_EQ(one_group->param_groups().size(), 1u);
  EXPECT_EQ(one_group->param_groups()[0].params().size(), all.size());
  auto two = make_optimizer_decaying(o, all, b->parameters());
  auto& groups = two->param_groups();
  ASSERT_EQ(groups.size(), 2u);
  const auto decayed = b->parameters(), rest = a->parameters();
  ASSERT_EQ(groups[0].params().size(), decayed.size());
  ASSERT_EQ(groups[1].params().size(), rest.size());
  for (size_t i = 0; i < decayed.size(); ++i) EXPECT_TRUE(groups[0].params()[i].is_same(decayed[i]));
  for (size_t i = 0; i < rest.size(); ++i) EXPECT_TRUE(groups[1].params()[i].is_same(rest[i]));
  EXPECT_EQ(static_cast<const torch::optim::SGDOptions&>(groups[0].options()).weight_decay(), 7);
  EXPECT_EQ(static_cast<const torch::optim::SGDOptions&>(groups[1].options()).weight_decay(), 0);
}

}  // namespace
}  // namespace dgcn
