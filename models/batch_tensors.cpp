#include "models/batch_tensors.h"

#include <ATen/ATen.h>

#include <limits>

#include "graph/parallel.h"

namespace dgcn {
namespace {

CsrTensor empty_csr(int64_t rows, int64_t cols, int64_t nnz, bool pinned) {
  const auto opts = at::TensorOptions().device(at::kCPU).pinned_memory(pinned);
  CsrTensor a;
  a.num_rows = rows;
  a.num_cols = cols;
  a.indptr = at::empty({rows + 1}, opts.dtype(at::kLong));
  a.indices = at::empty({nnz}, opts.dtype(at::kInt));
  a.values = at::empty({nnz}, opts.dtype(at::kFloat));
  return a;
}

NormalizedCsrOut spans_of(CsrTensor& a) {
  return {{a.indptr.data_ptr<int64_t>(), static_cast<size_t>(a.indptr.numel())},
          {a.indices.data_ptr<int32_t>(), static_cast<size_t>(a.indices.numel())},
          {a.values.data_ptr<float>(), static_cast<size_t>(a.values.numel())}};
}

}  // namespace

CsrTensor block_adjacency(const Block& block, std::span<const int32_t> src_degree, int num_threads,
                          bool pinned) {
  CsrTensor a = empty_csr(block.num_dst, block.num_src, normalized_nnz(block), pinned);
  normalize_block(block, src_degree, spans_of(a), num_threads);
  return a;
}

std::vector<CsrTensor> batch_adjacency(const SampledBatch& batch, GcnNorm norm,
                                       std::span<const int32_t> full_degree, int num_threads, bool pinned) {
  std::vector<int32_t> degree(batch.n_id.size());
  batch_degrees(batch, norm, full_degree, degree);
  std::vector<CsrTensor> out;
  out.reserve(batch.blocks.size());
  for (const Block& block : batch.blocks) out.push_back(block_adjacency(block, degree, num_threads, pinned));
  return out;
}

void use_global_columns(CsrTensor& a, std::span<const int64_t> n_id, int64_t num_nodes, int num_threads) {
  TORCH_CHECK(a.indices.device().is_cpu() && a.indices.scalar_type() == at::kInt,
              "use_global_columns: needs int32 column ids on the CPU");
  TORCH_CHECK(static_cast<int64_t>(n_id.size()) == a.num_cols, "use_global_columns: ", n_id.size(),
              " node ids for ", a.num_cols, " columns");
  TORCH_CHECK(num_nodes <= std::numeric_limits<int32_t>::max(), "use_global_columns: ", num_nodes,
              " nodes do not fit 32-bit column ids");
  int32_t* indices = a.indices.data_ptr<int32_t>();
  parallel_for(a.nnz(), num_threads, [&](int64_t begin, int64_t end, int) {
    for (int64_t e = begin; e < end; ++e)
      indices[e] = static_cast<int32_t>(n_id[static_cast<size_t>(indices[e])]);
  });
  a.num_cols = num_nodes;
}

CsrTensor full_rows_adjacency(const Csr& graph, std::span<const int32_t> degree,
                              std::span<const int64_t> rows, int num_threads) {
  CsrTensor a =
      empty_csr(static_cast<int64_t>(rows.size()), graph.num_nodes(), full_rows_nnz(graph, rows), false);
  normalize_full_rows(graph, degree, rows, spans_of(a), num_threads);
  return a;
}

}  // namespace dgcn
