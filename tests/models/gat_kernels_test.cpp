#include "models/gat_kernels.h"

#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "models/gat.h"
#include "models/gat_reference.h"
#include "require_gpu.h"

namespace dgcn {
namespace {

using testing::dense_attention;

struct Grads {
  torch::Tensor out, a_src, a_dst, x;
};

// The three kernels chained (what GATConv runs), with gradients of a random
// linear function of the output; `transpose` shared by the scores and the SpMM
// as GATConv shares it, or none (each op builds its own).
Grads run_sparse(const CsrTensor& adj, const torch::Tensor& a_src0, const torch::Tensor& a_dst0,
                 const torch::Tensor& x0, const torch::Tensor& r,
                 const std::shared_ptr<GatTranspose>& transpose = nullptr) {
  auto a_src = a_src0.clone().requires_grad_(true);
  auto a_dst = a_dst0.clone().requires_grad_(true);
  auto x = x0.clone().requires_grad_(true);
  auto out =
      gat_spmm(adj, edge_softmax(adj, gat_edge_scores(adj, a_src, a_dst, 0.2, transpose)), x, transpose);
  (out * r).sum().backward();
  return {out.detach(), a_src.grad(), a_dst.grad(), x.grad()};
}

// The same in double on the dense formulation, by torch's autograd.
Grads run_dense(const CsrTensor& adj, const torch::Tensor& a_src0, const torch::Tensor& a_dst0,
                const torch::Tensor& x0, const torch::Tensor& r) {
  auto a_src = a_src0.to(torch::kDouble).requires_grad_(true);
  auto a_dst = a_dst0.to(torch::kDouble).requires_grad_(true);
  auto x = x0.to(torch::kDouble).requires_grad_(true);
  auto alpha = dense_attention(adj, a_src, a_dst);
  auto out = torch::einsum("ijh,jhc->ihc", {alpha, x});
  (out * r.to(torch::kDouble)).sum().backward();
  return {out.detach(), a_src.grad(), a_dst.grad(), x.grad()};
}

void expect_close(const torch::Tensor& got, const torch::Tensor& want, const char* what) {
  ASSERT_EQ(got.sizes(), want.sizes()) << what;
  EXPECT_TRUE(torch::allclose(got.to(torch::kDouble), want, 1e-4, 1e-5))
      << what << ": max abs error " << (got.to(torch::kDouble) - want).abs().max().item<double>();
}

CsrTensor small_adjacency() {
  // Rows with 1 (self only) to 7 entries; row 2 of the block holds its own id.
  Block b = testing::random_block(6, 11, 6, 7);
  b.indices[b.indptr[2]] = 2;
  return gat_block_adjacency(b);
}

TEST(GatKernels, ChainMatchesTheDenseFormulation) {
  torch::manual_seed(3);
  const CsrTensor adj = small_adjacency();
  const int64_t h = 3;
  const int64_t c = 4;
  const auto a_src = torch::randn({adj.num_cols, h});
  const auto a_dst = torch::randn({adj.num_rows, h});
  const auto x = torch::randn({adj.num_cols, h, c});
  const auto r = torch::randn({adj.num_rows, h, c});
  const Grads s = run_sparse(adj, a_src, a_dst, x, r);
  const Grads d = run_dense(adj, a_src, a_dst, x, r);
  expect_close(s.out, d.out, "out");
  expect_close(s.a_src, d.a_src, "d a_src");
  expect_close(s.a_dst, d.a_dst, "d a_dst");
  expect_close(s.x, d.x, "d x");
}

TEST(GatKernels, ASharedTransposeGivesTheSameGradientsAndServesOneAdjacency) {
  torch::manual_seed(11);
  const CsrTensor adj = small_adjacency();
  const auto a_src = torch::randn({adj.num_cols, 2});
  const auto a_dst = torch::randn({adj.num_rows, 2});
  const auto x = torch::randn({adj.num_cols, 2, 3});
  const auto r = torch::randn({adj.num_rows, 2, 3});
  const auto shared = make_gat_transpose();
  const Grads own = run_sparse(adj, a_src, a_dst, x, r);
  const Grads one = run_sparse(adj, a_src, a_dst, x, r, shared);
  EXPECT_TRUE(torch::equal(one.out, own.out));
  EXPECT_TRUE(torch::equal(one.a_src, own.a_src));
  EXPECT_TRUE(torch::equal(one.a_dst, own.a_dst));
  EXPECT_TRUE(torch::equal(one.x, own.x));
  // It kept the transpose of adj: another adjacency's backward refuses it.
  const CsrTensor other = gat_block_adjacency(testing::random_block(6, 11, 6, 8));
  EXPECT_THROW(run_sparse(other, torch::randn({other.num_cols, 2}), torch::randn({other.num_rows, 2}),
                          torch::randn({other.num_cols, 2, 3}), torch::randn({other.num_rows, 2, 3}), shared),
               c10::Error);
}

TEST(GatKernels, ScoresAreLeakyReluOfTheSum) {
  const CsrTensor adj = small_adjacency();
  const auto a_src = torch::randn({adj.num_cols, 2});
  const auto a_dst = torch::randn({adj.num_rows, 2});
  const auto e = gat_edge_scores(adj, a_src, a_dst, 0.1);
  const auto want = torch::leaky_relu(
      a_dst.index_select(0, testing::entry_rows(adj)) + a_src.index_select(0, adj.indices.to(torch::kLong)),
      0.1);
  EXPECT_TRUE(torch::equal(e, want));
}

TEST(GatKernels, SoftmaxAndSpmmEachMatchDenseWithGradients) {
  torch::manual_seed(4);
  const CsrTensor adj = small_adjacency();
  const int64_t nnz = adj.nnz();
  // edge_softmax alone, on raw scores (large ones: the max is subtracted).
  auto e = (torch::randn({nnz, 2}) * 30).requires_grad_(true);
  auto alpha = edge_softmax(adj, e);
  const auto ra = torch::randn({nnz, 2});
  (alpha * ra).sum().backward();
  auto ed = e.detach().to(torch::kDouble).requires_grad_(true);
  auto dense =
      torch::full({adj.num_rows, adj.num_cols, 2}, -std::numeric_limits<double>::infinity(), torch::kDouble);
  dense = dense.index_put({testing::entry_rows(adj), adj.indices.to(torch::kLong)}, ed);
  const auto alpha_d = testing::at_entries(adj, torch::softmax(dense, 1));
  (alpha_d * ra.to(torch::kDouble)).sum().backward();
  expect_close(alpha.detach(), alpha_d.detach(), "alpha");
  expect_close(e.grad(), ed.grad(), "d e");

  // gat_spmm alone, with weights that are not a softmax (the alpha gradient is an SDDMM).
  auto w = torch::randn({nnz, 2}).requires_grad_(true);
  auto x = torch::randn({adj.num_cols, 2, 5}).requires_grad_(true);
  const auto r = torch::randn({adj.num_rows, 2, 5});
  (gat_spmm(adj, w, x) * r).sum().backward();
  auto wd = w.detach().to(torch::kDouble).requires_grad_(true);
  auto xd = x.detach().to(torch::kDouble).requires_grad_(true);
  auto wdense = torch::zeros({adj.num_rows, adj.num_cols, 2}, torch::kDouble)
                    .index_put({testing::entry_rows(adj), adj.indices.to(torch::kLong)}, wd);
  auto out_d = torch::einsum("ijh,jhc->ihc", {wdense, xd});
  (out_d * r.to(torch::kDouble)).sum().backward();
  expect_close(gat_spmm(adj, w, x).detach(), out_d.detach(), "weighted spmm");
  expect_close(w.grad(), wd.grad(), "d weights");
  expect_close(x.grad(), xd.grad(), "d x");
}

TEST(GatKernels, SpmmBackwardWithoutAutogradEqualsTheAutogradOne) {
  torch::manual_seed(10);
  const CsrTensor adj = small_adjacency();
  auto w = torch::randn({adj.nnz(), 3}).requires_grad_(true);
  auto x = torch::randn({adj.num_cols, 3, 4}).requires_grad_(true);
  const auto dout = torch::randn({adj.num_rows, 3, 4});
  gat_spmm(adj, w, x).backward(dout);
  const auto [dw, dx] = gat_spmm_backward(adj, w.detach(), x.detach(), dout);
  EXPECT_TRUE(torch::equal(dw, w.grad()));
  EXPECT_TRUE(torch::equal(dx, x.grad()));
  const auto [none, dx_only] = gat_spmm_backward(adj, w.detach(), x.detach(), dout, false, true);
  EXPECT_FALSE(none.defined());
  EXPECT_TRUE(torch::equal(dx_only, x.grad()));
  EXPECT_THROW(gat_spmm_backward(adj, w.detach(), x.detach(), torch::randn({adj.num_rows, 3, 5})),
               c10::Error);
}

TEST(GatKernels, Int64IndicesGiveTheSameResult) {
  torch::manual_seed(5);
  CsrTensor adj = small_adjacency();
  const auto a_src = torch::randn({adj.num_cols, 2});
  const auto a_dst = torch::randn({adj.num_rows, 2});
  const auto x = torch::randn({adj.num_cols, 2, 3});
  const auto r = torch::randn({adj.num_rows, 2, 3});
  const Grads g32 = run_sparse(adj, a_src, a_dst, x, r);
  adj.indices = adj.indices.to(torch::kLong);
  const Grads g64 = run_sparse(adj, a_src, a_dst, x, r);
  EXPECT_TRUE(torch::equal(g32.out, g64.out));
  EXPECT_TRUE(torch::equal(g32.a_src, g64.a_src));
  EXPECT_TRUE(torch::equal(g32.x, g64.x));
}

TEST(GatKernels, BitIdenticalForOneAndTwoThreads) {
  torch::manual_seed(6);
  // Large enough that every kernel splits its rows across threads.
  const CsrTensor adj = gat_block_adjacency(testing::random_block(3000, 7000, 12, 11));
  const auto a_src = torch::randn({adj.num_cols, 4});
  const auto a_dst = torch::randn({adj.num_rows, 4});
  const auto x = torch::randn({adj.num_cols, 4, 8});
  const auto r = torch::randn({adj.num_rows, 4, 8});
  const int before = at::get_num_threads();
  at::set_num_threads(1);
  const Grads one = run_sparse(adj, a_src, a_dst, x, r);
  at::set_num_threads(2);
  const Grads two = run_sparse(adj, a_src, a_dst, x, r);
  at::set_num_threads(before);
  EXPECT_TRUE(torch::equal(one.out, two.out));
  EXPECT_TRUE(torch::equal(one.a_src, two.a_src));
  EXPECT_TRUE(torch::equal(one.a_dst, two.a_dst));
  EXPECT_TRUE(torch::equal(one.x, two.x));
}

TEST(GatKernels, BadShapesAreRefusedByName) {
  const CsrTensor adj = small_adjacency();
  const auto a_dst = torch::randn({adj.num_rows, 2});
  try {
    gat_edge_scores(adj, torch::randn({adj.num_cols + 1, 2}), a_dst);
    FAIL() << "expected an error";
  } catch (const c10::Error& e) {
    EXPECT_NE(std::string(e.what()).find("gat_edge_scores: a_src has"), std::string::npos) << e.what();
  }
  EXPECT_THROW(gat_edge_scores(adj, torch::randn({adj.num_cols, 3}), a_dst), c10::Error);
  EXPECT_THROW(edge_softmax(adj, torch::randn({adj.nnz() + 1, 2})), c10::Error);
  EXPECT_THROW(gat_spmm(adj, torch::randn({adj.nnz(), 2}), torch::randn({adj.num_cols, 3, 4})), c10::Error);
  EXPECT_THROW(gat_spmm(adj, torch::randn({adj.nnz(), 2}), torch::randn({adj.num_cols, 8})), c10::Error);
}

TEST(GatKernelsCuda, MatchTheCpuKernels) {
  DGCN_SKIP_WITHOUT_GPU();
  ASSERT_TRUE(gat_has_cuda());
  torch::manual_seed(8);
  const CsrTensor adj = gat_block_adjacency(testing::random_block(500, 1200, 12, 13));
  const auto a_src = torch::randn({adj.num_cols, 4});
  const auto a_dst = torch::randn({adj.num_rows, 4});
  const auto x = torch::randn({adj.num_cols, 4, 8});
  const auto r = torch::randn({adj.num_rows, 4, 8});
  const Grads cpu = run_sparse(adj, a_src, a_dst, x, r);
  const auto dev = torch::Device(torch::kCUDA);
  const Grads gpu = run_sparse(adj.to(dev), a_src.to(dev), a_dst.to(dev), x.to(dev), r.to(dev));
  const Grads again = run_sparse(adj.to(dev), a_src.to(dev), a_dst.to(dev), x.to(dev), r.to(dev));
  for (auto [got, want, name] :
       {std::tuple{gpu.out, cpu.out, "out"}, std::tuple{gpu.a_src, cpu.a_src, "d a_src"},
        std::tuple{gpu.a_dst, cpu.a_dst, "d a_dst"}, std::tuple{gpu.x, cpu.x, "d x"}}) {
    EXPECT_TRUE(torch::allclose(got.cpu(), want, 1e-4, 1e-5)) << name;
  }
  // Deterministic: a second run on the GPU is bit-identical.
  EXPECT_TRUE(torch::equal(gpu.out, again.out));
  EXPECT_TRUE(torch::equal(gpu.a_src, again.a_src));
  EXPECT_TRUE(torch::equal(gpu.x, again.x));
}

}  // namespace
}  // namespace dgcn
