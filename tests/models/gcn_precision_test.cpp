// Note [Mixed precision] (models/gcn.h): a bf16 GCN computes in bfloat16,
// keeps fp32 parameters and hands fp32 gradients back, and stays close to
// the fp32 model; fp32 takes no cast at all.
#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "models/dropout.h"
#include "models/gcn.h"

namespace dgcn {
namespace {

// A random 40 x 60 block with 5 entries a row, values like Â's.
CsrTensor random_block(int64_t rows, int64_t cols) {
  std::vector<int64_t> indptr{0};
  std::vector<int32_t> indices;
  std::vector<float> values;
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t k = 0; k < 5; ++k) {
      indices.push_back(static_cast<int32_t>((i * 7 + k * 13) % cols));
      values.push_back(0.2f);
    }
    indptr.push_back(static_cast<int64_t>(indices.size()));
  }
  CsrTensor a;
  a.num_rows = rows;
  a.num_cols = cols;
  a.indptr = torch::tensor(indptr, torch::kLong);
  a.indices = torch::tensor(indices, torch::kInt);
  a.values = torch::tensor(values, torch::kFloat);
  return a;
}

GcnOptions options(Precision p, bool linear_head) {
  GcnOptions o;
  o.in_features = 12;
  o.hidden = 8;
  o.num_classes = 3;
  o.num_layers = 2;
  o.dropout = 0.3;
  o.linear_head = linear_head;
  o.precision = p;
  return o;
}

TEST(MixedPrecision, Bf16ModelKeepsFp32ParametersAndGradientsAndMatchesFp32) {
  for (bool linear_head : {false, true}) {
    torch::manual_seed(3);
    Gcn fp32(options(Precision::kFp32, linear_head));
    Gcn bf16(options(Precision::kBf16, linear_head));
    {
      torch::NoGradGuard no_grad;
      for (size_t i = 0; i < fp32->parameters().size(); ++i)
        bf16->parameters()[i].copy_(fp32->parameters()[i]);
    }
    const std::vector<CsrTensor> blocks{random_block(40, 60), random_block(10, 40)};
    const at::Tensor x = torch::rand({60, 12});
    for (Gcn* m : {&fp32, &bf16}) (*m)->eval();
    const at::Tensor a = fp32->forward(blocks, x);
    const at::Tensor b = bf16->forward(blocks, x.to(torch::kBFloat16));
    EXPECT_EQ(a.scalar_type(), torch::kFloat);
    EXPECT_EQ(b.scalar_type(), torch::kFloat) << "bf16 logits are cast back to fp32 for the loss";
    EXPECT_TRUE(torch::allclose(a, b, /*rtol=*/0.03, /*atol=*/0.03)) << (a - b).abs().max();
    EXPECT_FALSE(torch::equal(a, b)) << "the bf16 model computed in fp32";

    bf16->train();
    bf16->forward(blocks, x.to(torch::kBFloat16)).sum().backward();
    for (const at::Tensor& p : bf16->parameters()) {
      EXPECT_EQ(p.scalar_type(), torch::kFloat);
      ASSERT_TRUE(p.grad().defined());
      EXPECT_EQ(p.grad().scalar_type(), torch::kFloat) << "the optimizer updates fp32 master weights";
    }
  }
}

TEST(MixedPrecision, LayersComputeInTheirDtype) {
  GCNConv conv(12, 8);
  EXPECT_EQ(conv->compute_dtype(), torch::kFloat);
  const at::Tensor x = torch::rand({60, 12});
  EXPECT_TRUE(conv->to_compute(x).is_same(x)) << "fp32 casts nothing";
  const at::Tensor y32 = conv->forward(random_block(40, 60), x);
  conv->set_precision(Precision::kBf16);
  EXPECT_EQ(conv->compute_dtype(), torch::kBFloat16);
  // fp32 rows are cast on the way in; the output is bf16 either way.
  const at::Tensor y16 = conv->forward(random_block(40, 60), x);
  EXPECT_EQ(y16.scalar_type(), torch::kBFloat16);
  EXPECT_EQ(conv->forward(random_block(40, 60), x.to(torch::kBFloat16)).scalar_type(), torch::kBFloat16);
  EXPECT_TRUE(torch::allclose(y32, y16.to(torch::kFloat), 0.03, 0.03));
  EXPECT_EQ(compute_dtype(Precision::kBf16), torch::kBFloat16);
  EXPECT_EQ(parse_precision(precision_name(Precision::kBf16)), Precision::kBf16);
  EXPECT_THROW(parse_precision("fp16"), std::exception);
}

// The bf16 ReLU + dropout kernel keeps exactly the fp32 kernel's elements
// and values (rounded once), forward and backward.
TEST(MixedPrecision, Bf16ReluDropoutIsTheFp32KernelRounded) {
  const at::Tensor x = torch::randn({300, 70}).to(torch::kBFloat16);
  const at::Tensor dy = torch::randn({300, 70}).to(torch::kBFloat16);
  at::Tensor a = x.clone().requires_grad_(true);
  at::Tensor b = x.to(torch::kFloat).requires_grad_(true);
  torch::manual_seed(5);
  const at::Tensor ya = relu_dropout(a, 0.3, /*training=*/true);
  torch::manual_seed(5);
  const at::Tensor yb = relu_dropout(b, 0.3, /*training=*/true);
  EXPECT_EQ(ya.scalar_type(), torch::kBFloat16);
  EXPECT_TRUE(torch::equal(ya, yb.to(torch::kBFloat16)));
  ya.backward(dy);
  yb.backward(dy.to(torch::kFloat));
  EXPECT_EQ(a.grad().scalar_type(), torch::kBFloat16);
  EXPECT_TRUE(torch::equal(a.grad(), b.grad().to(torch::kBFloat16)));
  const double kept = (ya != 0).sum().item<double>() / static_cast<double>(x.numel());
  EXPECT_NEAR(kept, 0.7 * 0.5, 0.03) << "ReLU passes half, dropout keeps 70% of those";
}

// Note [Fused bias, ReLU and dropout]: the fused op gives the unfused ops'
// output and activation gradient bit for bit, the bias gradient as the fp32
// sum of that gradient, and the same bits for 1 and 2 threads.
TEST(MixedPrecision, FusedBiasReluDropoutEqualsTheUnfusedOps) {
  torch::manual_seed(3);
  // 700 rows: three blocks of the bias gradient; 130 columns: vector tails.
  const at::Tensor y = torch::randn({700, 130}).to(torch::kBFloat16);
  const at::Tensor bias = torch::randn({130});
  const at::Tensor dy = torch::randn({700, 130}).to(torch::kBFloat16);
  struct Run {
    at::Tensor out, dx, dbias;
  };
  auto run = [&](bool fused, int threads) {
    const int saved = at::get_num_threads();
    at::set_num_threads(threads);
    at::Tensor a = y.clone().requires_grad_(true);
    at::Tensor b = bias.clone().requires_grad_(true);
    torch::manual_seed(5);
    at::Tensor out = fused ? bias_relu_dropout(a, b, 0.3, /*training=*/true)
                           : relu_dropout(a + b.to(torch::kBFloat16), 0.3, /*training=*/true);
    out.backward(dy);
    at::set_num_threads(saved);
    return Run{out, a.grad(), b.grad()};
  };
  const Run fused = run(true, 2), unfused = run(false, 2), one_thread = run(true, 1);
  EXPECT_EQ(fused.out.scalar_type(), torch::kBFloat16);
  EXPECT_TRUE(torch::equal(fused.out, unfused.out));
  EXPECT_TRUE(torch::equal(fused.dx, unfused.dx));
  ASSERT_EQ(fused.dbias.scalar_type(), torch::kFloat);
  const at::Tensor exact = fused.dx.to(torch::kDouble).sum(0);
  EXPECT_TRUE(torch::allclose(fused.dbias.to(torch::kDouble), exact, 1e-5, 1e-5));
  // The unfused gradient was summed into bf16: equal up to its rounding.
  EXPECT_TRUE(torch::allclose(unfused.dbias.to(torch::kDouble), exact, 1e-2, 1e-2));
  EXPECT_TRUE(torch::equal(fused.out, one_thread.out));
  EXPECT_TRUE(torch::equal(fused.dx, one_thread.dx));
  EXPECT_TRUE(torch::equal(fused.dbias, one_thread.dbias));
  // Not training: ReLU of the biased input, no dropout.
  EXPECT_TRUE(
      torch::equal(bias_relu_dropout(y, bias, 0.3, false), torch::relu(y + bias.to(torch::kBFloat16))));
}

}  // namespace
}  // namespace dgcn
