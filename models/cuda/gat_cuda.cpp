// Binds tensors, the current device and stream to the plain CUDA kernels of
// gat_kernels.cuh (Note [GAT kernels on CUDA]).
#include "models/cuda/gat_cuda.h"

#include <ATen/ATen.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include "models/cuda/gat_kernels.cuh"

namespace dgcn::cuda {
namespace {

GatCsr device_csr(const CsrTensor& a, const char* op) {
  TORCH_CHECK(a.indptr.scalar_type() == at::kInt && a.indices.scalar_type() == at::kInt, op,
              " (CUDA): indptr and indices must be int32 (got ", a.indptr.scalar_type(), ", ",
              a.indices.scalar_type(), "); CsrTensor::to(cuda) converts them");
  return {a.num_rows, a.num_cols, a.indptr.data_ptr<int32_t>(), a.indices.data_ptr<int32_t>()};
}

// The transposed pattern with entry ids: a stable sort of the column ids
// keeps each column's entries in increasing row order, so the sums over it
// have one fixed order (Note [GAT kernels on CUDA]).
struct TransposeTensors {
  at::Tensor indptr, rows, edge;
  GatTranspose view(int64_t num_cols) const {
    return {num_cols, indptr.data_ptr<int32_t>(), rows.data_ptr<int32_t>(), edge.data_ptr<int32_t>()};
  }
};

TransposeTensors transpose_pattern(const CsrTensor& a) {
  const auto cols = a.indices.to(at::kLong);
  const auto sorted = at::sort(cols, /*stable=*/true, /*dim=*/0, /*descending=*/false);
  const at::Tensor& perm = std::get<1>(sorted);
  const auto lengths = a.indptr.to(at::kLong).diff();
  const auto row_of_entry = at::repeat_interleave(at::arange(a.num_rows, cols.options()), lengths, /*dim=*/0,
                                                  /*output_size=*/a.nnz());
  // Column j's entries start where the sorted ids first reach j.
  const auto starts = at::searchsorted(std::get<0>(sorted), at::arange(a.num_cols + 1, cols.options()));
  TransposeTensors t;
  t.indptr = starts.to(at::kInt);
  t.rows = row_of_entry.index_select(0, perm).to(at::kInt);
  t.edge = perm.to(at::kInt);
  return t;
}

cudaStream_t stream() {
  return c10::cuda::getCurrentCUDAStream().stream();
}

}  // namespace

void gat_scores_cuda(const CsrTensor& a, const at::Tensor& a_src, const at::Tensor& a_dst, double slope,
                     at::Tensor& e) {
  const c10::cuda::CUDAGuard guard(a.device());
  gat_scores(device_csr(a, "gat_edge_scores"), a_src.data_ptr<float>(), a_dst.data_ptr<float>(),
             a_src.size(1), static_cast<float>(slope), e.data_ptr<float>(), stream());
}

at::Tensor gat_scores_backward_cuda(const CsrTensor& a, const at::Tensor& a_src, const at::Tensor& a_dst,
                                    const at::Tensor& de, double slope, at::Tensor& ds, at::Tensor& da_dst,
                                    bool want_src) {
  const c10::cuda::CUDAGuard guard(a.device());
  const int64_t heads = a_src.size(1);
  gat_scores_backward(device_csr(a, "gat_edge_scores backward"), a_src.data_ptr<float>(),
                      a_dst.data_ptr<float>(), de.data_ptr<float>(), heads, static_cast<float>(slope),
                      ds.data_ptr<float>(), da_dst.data_ptr<float>(), stream());
  if (!want_src) return {};
  at::Tensor da_src = at::empty_like(a_src);
  const TransposeTensors t = transpose_pattern(a);
  column_sums(t.view(a.num_cols), ds.data_ptr<float>(), heads, da_src.data_ptr<float>(), stream());
  return da_src;
}

void edge_softmax_cuda(const CsrTensor& a, const at::Tensor& e, at::Tensor& alpha) {
  const c10::cuda::CUDAGuard guard(a.device());
  edge_softmax(device_csr(a, "edge_softmax"), e.data_ptr<float>(), e.size(1), alpha.data_ptr<float>(),
               stream());
}

void edge_softmax_backward_cuda(const CsrTensor& a, const at::Tensor& alpha, const at::Tensor& dalpha,
                                at::Tensor& de) {
  const c10::cuda::CUDAGuard guard(a.device());
  edge_softmax_backward(device_csr(a, "edge_softmax backward"), alpha.data_ptr<float>(),
                        dalpha.data_ptr<float>(), alpha.size(1), de.data_ptr<float>(), stream());
}

void gat_spmm_cuda(const CsrTensor& a, const at::Tensor& alpha, const at::Tensor& x, at::Tensor& out) {
  const c10::cuda::CUDAGuard guard(a.device());
  gat_spmm(device_csr(a, "gat_spmm"), alpha.data_ptr<float>(), x.data_ptr<float>(), x.size(1), x.size(2),
           out.data_ptr<float>(), stream());
}

void gat_spmm_backward_cuda(const CsrTensor& a, const at::Tensor& alpha, const at::Tensor& x,
                            const at::Tensor& dout, at::Tensor& dalpha, at::Tensor& dx) {
  const c10::cuda::CUDAGuard guard(a.device());
  const int64_t heads = x.size(1);
  const int64_t channels = x.size(2);
  const GatCsr csr = device_csr(a, "gat_spmm backward");
  if (dalpha.defined())
    gat_spmm_alpha_grad(csr, dout.data_ptr<float>(), x.data_ptr<float>(), heads, channels,
                        dalpha.data_ptr<float>(), stream());
  if (dx.defined()) {
    const TransposeTensors t = transpose_pattern(a);
    gat_spmm_x_grad(t.view(a.num_cols), alpha.data_ptr<float>(), dout.data_ptr<float>(), heads, channels,
                    dx.data_ptr<float>(), stream());
  }
}

}  // namespace dgcn::cuda
