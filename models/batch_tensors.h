// The bridge from sampled batches to tensors: the one place where a batch of
// the loader (plain C++, sampling/loader.h) becomes LibTorch tensors on the
// training device. Arrays are written straight into tensor memory (the
// normalized adjacency) or wrapped without copying (from_blob over the
// loader's buffers); on CUDA the host side is pinned and copied with
// non_blocking. The training step and the sampled evaluation both call
// batch_tensors().
//
// Note [Input gather]
// A products-scale batch reads ~520k feature rows (210 MB at 100 floats),
// and the first layer, aggregating first, reads each of them once more in its
// SpMM. On the CPU the trainer skips the copy: the loader gathers only the
// seed labels (LoaderOptions::gather_features = false), the first block's
// column ids are renumbered to global node ids (use_global_columns) and the
// SpMM reads the rows straight from the store's feature matrix. The sums are
// the same, entry for entry, so the model is bit-identical to the gathered
// path (tested). When the first layer would rather transform first (a small
// graph with wide features), batch_tensors() gathers the rows itself for that
// batch. The loader's worker, no longer gathering, leaves that core to the
// compute threads: on the products preset the gather was ~35 ms of the
// sampler's ~44 ms per batch. CUDA (the rows travel to the device) and input
// dropout (it masks the gathered rows) keep the loader's gather.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <cstdint>
#include <span>
#include <vector>

#include "base/parallel.h"
#include "graph/graph_store.h"
#include "models/gcn.h"
#include "models/gcn_norm.h"
#include "models/gnn.h"
#include "models/spmm.h"
#include "sampling/loader.h"

namespace dgcn {

// A ChunkLoop over LibTorch's intra-op pool (at::parallel_for), so per-batch
// torch-free kernels (normalization, renumbering) run on the threads the
// rest of the batch runs on (base/parallel.h). Inside a parallel region it
// runs inline, never nesting pools.
const ChunkLoop& intra_op_chunks();

// An uninitialized CPU CSR (int64 indptr, int32 indices, float32 values;
// pinned for a CUDA copy) and its arrays as the torch-free builders'
// output (models/gcn_norm.h): how every adjacency builder (GCN, SAGE, GAT)
// gets the memory it writes into.
CsrTensor empty_csr(int64_t rows, int64_t cols, int64_t nnz, bool pinned);
NormalizedCsrOut spans_of(CsrTensor& a);

// How the batches of one model become tensors.
struct BatchTensorOptions {
  GcnNorm norm = GcnNorm::kFullGraph;
  c10::Device device = c10::Device(c10::DeviceType::CPU);
};

// One batch on the device, ready for GnnModel::forward and the loss.
struct BatchTensors {
  std::vector<CsrTensor> blocks;  // every layer's adjacency as the model values it, forward order
  at::Tensor x;                   // the first layer's input rows (see Note [Input gather])
  at::Tensor y;                   // the seeds' targets (models/metrics.h)
  int64_t labelled = 0;           // seeds with a label (Note [Unlabelled nodes])
};

// `batch` as tensors on options.device, the blocks valued as `model` wants
// them (GnnModel::adjacency_values). With gathered rows, x wraps them;
// without (the loader ran with gather_features = false; CPU only), x is
// `store_features` itself, the first block renumbered to global columns, or
// the rows gathered here when the model's first layer would not read them
// through the block's columns alone (Note [Input gather]). `store_features` is the store's [num_nodes x F]
// float matrix on the CPU (possibly a normalized copy). The tensors keep the batch's memory alive: the batch
// may be recycled once they are dropped.
BatchTensors batch_tensors(const LoadedBatch& batch, const GraphStore& store,
                           const at::Tensor& store_features, const GnnModel& model,
                           const BatchTensorOptions& options);

// The loader's memory for `device`: page-locked tensors from LibTorch's
// caching host allocator on CUDA, so the host-to-device copies can be
// asynchronous; nullptr (the loader's own pool) on the CPU.
BatchAllocator batch_allocator_for(c10::Device device);

// The normalized adjacency (models/gcn_norm.h) of `block` as CPU tensors,
// written in place by normalize_block; src_degree[j] is the degree of the
// block's src node j. `pinned`: page-locked memory, for a non_blocking copy
// to a GPU (needs a CUDA build).
CsrTensor block_adjacency(const Block& block, std::span<const int32_t> src_degree, bool pinned = false);

// Every layer's adjacency of `batch`, in forward order, normalized with
// `norm` (full_degree: the store's degrees, used by GcnNorm::kFullGraph).
std::vector<CsrTensor> batch_adjacency(const SampledBatch& batch, GcnNorm norm,
                                       std::span<const int32_t> full_degree, bool pinned = false);

// Renumbers the columns of `a` (a block's adjacency, columns = local src ids)
// to global node ids, n_id[local], so that it multiplies the store's whole
// feature matrix (num_nodes rows) instead of rows gathered per batch
// (Note [Input gather]). Needs num_nodes < 2^31.
void use_global_columns(CsrTensor& a, std::span<const int64_t> n_id, int64_t num_nodes);

// The rows `rows` of the full graph, normalized, with global column ids
// (num_cols = the graph's node count): one chunk of layer-wise inference.
CsrTensor full_rows_adjacency(const Csr& graph, std::span<const int32_t> degree,
                              std::span<const int64_t> rows);

}  // namespace dgcn
