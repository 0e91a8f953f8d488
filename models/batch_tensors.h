// The bridge from sampled batches to tensors: the one place where a
// SampledBatch (plain C++, sampling/sampled_batch.h) becomes LibTorch
// tensors. Arrays are written straight into tensor memory (the normalized
// adjacency) or wrapped without copying (from_blob over the loader's
// buffers); on CUDA the host side is pinned and copied with non_blocking.
#pragma once

#include <ATen/core/Tensor.h>

#include <cstdint>
#include <span>
#include <vector>

#include "models/gcn_norm.h"
#include "models/spmm.h"
#include "sampling/sampled_batch.h"

namespace dgcn {

// The normalized adjacency (models/gcn_norm.h) of `block` as CPU tensors,
// written in place by normalize_block; src_degree[j] is the degree of the
// block's src node j. `pinned`: page-locked memory, for a non_blocking copy
// to a GPU (needs a CUDA build).
CsrTensor block_adjacency(const Block& block, std::span<const int32_t> src_degree, int num_threads,
                          bool pinned = false);

// Every layer's adjacency of `batch`, in forward order, normalized with
// `norm` (full_degree: the store's degrees, used by GcnNorm::kFullGraph).
std::vector<CsrTensor> batch_adjacency(const SampledBatch& batch, GcnNorm norm,
                                       std::span<const int32_t> full_degree, int num_threads,
                                       bool pinned = false);

// Renumbers the columns of `a` (a block's adjacency, columns = local src ids)
// to global node ids, n_id[local], so that it multiplies the store's whole
// feature matrix (num_nodes rows) instead of rows gathered per batch
// (Note [Input gather] in models/trainer.h). Needs num_nodes < 2^31.
void use_global_columns(CsrTensor& a, std::span<const int64_t> n_id, int64_t num_nodes, int num_threads);

// The rows `rows` of the full graph, normalized, with global column ids
// (num_cols = the graph's node count): one chunk of layer-wise inference.
CsrTensor full_rows_adjacency(const Csr& graph, std::span<const int32_t> degree,
                              std::span<const int64_t> rows, int num_threads);

}  // namespace dgcn
