// See Note [Input gather] in batch_tensors.h.
#include "models/batch_tensors.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/torch.h>

#include <algorithm>
#include <limits>
#include <memory>
#include <utility>

#include "models/metrics.h"

namespace dgcn {
namespace {

// Rows [0, n) of the loader's gathered features, without a copy; the tensor
// keeps the batch's memory alive.
at::Tensor wrap_features(const LoadedBatch& batch, int64_t num_features) {
  const auto rows = static_cast<int64_t>(batch.sample.n_id.size());
  auto lease = batch.lease;
  return torch::from_blob(
      batch.features.data(), {rows, num_features}, [lease](void*) {}, at::TensorOptions().dtype(at::kFloat));
}

// The first layer's input when the loader gathered no rows (Note [Input gather]);
// may renumber first_block's columns to global ids.
at::Tensor store_input(const SampledBatch& sample, const GraphStore& store, const at::Tensor& features,
                       const GnnModel& model, CsrTensor& first_block) {
  if (model.reads_input_by_columns(first_block.num_rows, first_block.num_cols, first_block.nnz())) {
    use_global_columns(first_block, sample.n_id, store.num_nodes());
    return features;
  }
  const at::Tensor ids = torch::from_blob(const_cast<int64_t*>(sample.n_id.data()),
                                          {static_cast<int64_t>(sample.n_id.size())}, torch::kLong);
  return features.index_select(0, ids);
}

}  // namespace

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

const ChunkLoop& intra_op_chunks() {
  static const ChunkLoop loop = [](int64_t n, int64_t chunk,
                                   const std::function<void(int64_t, int64_t)>& fn) {
    if (n <= 0) return;
    chunk = std::max<int64_t>(1, chunk);
    const int64_t chunks = (n + chunk - 1) / chunk;
    at::parallel_for(0, chunks, 1, [&](int64_t first, int64_t last) {
      for (int64_t c = first; c < last; ++c) fn(c * chunk, std::min(n, (c + 1) * chunk));
    });
  };
  return loop;
}

BatchTensors batch_tensors(const LoadedBatch& batch, const GraphStore& store,
                           const at::Tensor& store_features, const GnnModel& model,
                           const BatchTensorOptions& options) {
  const bool cuda = options.device.is_cuda();
  const SampledBatch& sample = batch.sample;
  BatchTensors t;
  t.blocks = batch_adjacency(sample, options.norm, store.degrees(), /*pinned=*/cuda);
  if (model.adjacency_values() != AdjacencyValues::kGcnNormalized) {
    for (auto& a : t.blocks) a = adjacency_for(a, model.adjacency_values());
  }
  if (batch.features.empty()) {
    TORCH_CHECK(!cuda, "batch_tensors: a batch without gathered feature rows cannot go to ",
                options.device.str(), " (the loader must gather on CUDA)");
    t.x = store_input(sample, store, store_features, model, t.blocks.front());
  } else {
    t.x = wrap_features(batch, store.num_features);
  }
  t.y = targets_from_rows(store, batch.labels, sample.num_seeds);
  t.labelled = labelled_rows(store.task, t.y);  // on the host, before any copy
  if (cuda) {
    for (auto& a : t.blocks) a = a.to(options.device, /*non_blocking=*/true);
    t.x = t.x.to(options.device, /*non_blocking=*/true);
    t.y = t.y.to(options.device, /*non_blocking=*/true);
  }
  return t;
}

BatchAllocator batch_allocator_for(c10::Device device) {
  if (!device.is_cuda()) return nullptr;
  return [](int64_t rows, int64_t num_features, int64_t num_seeds, int64_t label_bytes) {
    const auto pinned = at::TensorOptions().pinned_memory(true);
    auto holder = std::make_shared<std::pair<at::Tensor, at::Tensor>>(
        at::empty({rows * num_features}, pinned.dtype(at::kFloat)),
        at::empty({std::max<int64_t>(1, num_seeds * label_bytes)}, pinned.dtype(at::kByte)));
    BatchMemory m;
    m.features = {holder->first.data_ptr<float>(), static_cast<size_t>(rows * num_features)};
    m.labels = {reinterpret_cast<std::byte*>(holder->second.data_ptr<uint8_t>()),
                static_cast<size_t>(num_seeds * label_bytes)};
    m.lease = holder;
    return m;
  };
}

CsrTensor block_adjacency(const Block& block, std::span<const int32_t> src_degree, bool pinned) {
  CsrTensor a = empty_csr(block.num_dst, block.num_src, normalized_nnz(block), pinned);
  normalize_block(block, src_degree, spans_of(a), intra_op_chunks());
  return a;
}

std::vector<CsrTensor> batch_adjacency(const SampledBatch& batch, GcnNorm norm,
                                       std::span<const int32_t> full_degree, bool pinned) {
  std::vector<int32_t> degree(batch.n_id.size());
  batch_degrees(batch, norm, full_degree, degree);
  std::vector<CsrTensor> out;
  out.reserve(batch.blocks.size());
  for (const Block& block : batch.blocks) out.push_back(block_adjacency(block, degree, pinned));
  return out;
}

void use_global_columns(CsrTensor& a, std::span<const int64_t> n_id, int64_t num_nodes) {
  TORCH_CHECK(a.indices.device().is_cpu() && a.indices.scalar_type() == at::kInt,
              "use_global_columns: needs int32 column ids on the CPU");
  TORCH_CHECK(static_cast<int64_t>(n_id.size()) == a.num_cols, "use_global_columns: ", n_id.size(),
              " node ids for ", a.num_cols, " columns");
  TORCH_CHECK(num_nodes <= std::numeric_limits<int32_t>::max(), "use_global_columns: ", num_nodes,
              " nodes do not fit 32-bit column ids");
  int32_t* indices = a.indices.data_ptr<int32_t>();
  constexpr int64_t kEntryChunk = int64_t{1} << 16;
  intra_op_chunks()(a.nnz(), kEntryChunk, [&](int64_t begin, int64_t end) {
    for (int64_t e = begin; e < end; ++e)
      indices[e] = static_cast<int32_t>(n_id[static_cast<size_t>(indices[e])]);
  });
  a.num_cols = num_nodes;
}

CsrTensor full_rows_adjacency(const Csr& graph, std::span<const int32_t> degree,
                              std::span<const int64_t> rows) {
  CsrTensor a =
      empty_csr(static_cast<int64_t>(rows.size()), graph.num_cols(), full_rows_nnz(graph, rows), false);
  normalize_full_rows(graph, degree, rows, spans_of(a), intra_op_chunks());
  return a;
}

}  // namespace dgcn
