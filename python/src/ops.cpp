// torch.ops.dgcn: the functions on tensors of the `dgcn` Python package
// (dgcn.nn), registered as PyTorch's custom-op guide and pyg-lib do: a schema
// per op, a kernel per dispatch key (CPU, CUDA, autocast to bfloat16), and, in
// python/dgcn/_ops.py, a fake (Meta) kernel and the autograd formula, so that
// autograd, torch.compile, torch.library.opcheck and TorchScript see them as
// ordinary operators.
//
//   rowptr, col, value = torch.ops.dgcn.gcn_norm(edge_index, num_nodes, deg, num_dst)
//   rowptr, col, value = torch.ops.dgcn.gcn_norm_csc(colptr, row, num_nodes, deg, num_dst)
//   out = torch.ops.dgcn.spmm(rowptr, col, value, x)      # Â · x
//   dx = torch.ops.dgcn.spmm_transposed(rowptr, col, value, dy, num_cols)  # Âᵀ · dy
//   y = torch.ops.dgcn.relu_dropout(x, p, training)       # dropout(relu(x)), fused
//   dx = torch.ops.dgcn.relu_dropout_backward(y, dy, scale)  # its gradient, one pass
//
// All are thin: the normalization is models/gcn_norm.h's normalize_block
// over the edges as one block, the products models/spmm.h's spmm, the
// dropout models/dropout.h's (one pass; the mask from a key drawn from
// torch's generator, so torch.manual_seed seeds it). Every op checks its
// arguments before reading through them.
#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <ATen/core/dispatch/Dispatcher.h>
#include <c10/core/GradMode.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/library.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <tuple>
#include <vector>

#include "models/batch_tensors.h"
#include "models/dropout.h"
#include "models/spmm.h"
#include "sampling/sampled_batch.h"

namespace dgcn {
namespace {

// The edges src -> dst of edge_index [2, E] (row 0 the source, row 1 the
// target: PyG's flow "source_to_target") as one block of `num_dst` rows over
// `num_nodes` columns (the targets are the first num_dst nodes, as in a
// sampled batch's layer: sampling/sampled_batch.h) whose row i lists the
// sources of i's incoming edges in input order; self-loops are dropped
// (normalize_block adds one per row, as PyG's add_remaining_self_loops does
// for unweighted graphs).
Block block_of_edges(const at::Tensor& edge_index, int64_t num_nodes, int64_t num_dst) {
  TORCH_CHECK_VALUE(edge_index.dim() == 2 && edge_index.size(0) == 2,
                    "gcn_norm: edge_index must be [2, E] (got ", edge_index.sizes(), ")");
  TORCH_CHECK_TYPE(edge_index.scalar_type() == at::kLong, "gcn_norm: edge_index must be int64 (got ",
                   edge_index.scalar_type(), ")");
  TORCH_CHECK_VALUE(num_nodes >= 0 && num_nodes <= std::numeric_limits<int32_t>::max(),
                    "gcn_norm: num_nodes = ", num_nodes, " is not in [0, 2^31)");
  TORCH_CHECK_VALUE(num_dst >= 0 && num_dst <= num_nodes, "gcn_norm: num_dst = ", num_dst,
                    " is not in [0, num_nodes = ", num_nodes, "]");
  const at::Tensor e = edge_index.to(at::kCPU).contiguous();
  const int64_t m = e.size(1);
  const int64_t* src = e.data_ptr<int64_t>();
  const int64_t* dst = src + m;
  Block block;
  block.num_dst = num_dst;
  block.num_src = num_nodes;
  block.indptr.assign(static_cast<size_t>(num_dst) + 1, 0);
  for (int64_t k = 0; k < m; ++k) {
    TORCH_CHECK_INDEX(src[k] >= 0 && src[k] < num_nodes && dst[k] >= 0 && dst[k] < num_nodes,
                      "gcn_norm: edge_index[:, ", k, "] = (", src[k], ", ", dst[k],
                      ") is not a pair of node ids in [0, ", num_nodes, ")");
    TORCH_CHECK_INDEX(dst[k] < num_dst, "gcn_norm: edge_index[:, ", k, "] = (", src[k], ", ", dst[k],
                      ") targets node ", dst[k], ", past the num_dst = ", num_dst, " rows computed");
    if (src[k] != dst[k]) ++block.indptr[static_cast<size_t>(dst[k]) + 1];
  }
  for (int64_t i = 0; i < num_dst; ++i) block.indptr[i + 1] += block.indptr[i];
  block.indices.resize(static_cast<size_t>(block.indptr.back()));
  std::vector<int64_t> next(block.indptr.begin(), block.indptr.end() - 1);
  for (int64_t k = 0; k < m; ++k) {
    if (src[k] != dst[k]) block.indices[next[dst[k]]++] = static_cast<int32_t>(src[k]);
  }
  return block;
}

// The same block from a CSC form of the edges (PyG's EdgeIndex sorted by
// target, as NeighborLoader batches carry it): `colptr` [>= num_dst + 1]
// int64, whose entries colptr[i] .. colptr[i + 1] of `row` are the sources
// of i's incoming edges. Only the first num_dst targets are read, so a
// layer's rows are a prefix of the batch's; no sort, one pass.
Block block_of_csc(const at::Tensor& colptr, const at::Tensor& row, int64_t num_nodes, int64_t num_dst) {
  TORCH_CHECK_VALUE(num_nodes >= 0 && num_nodes <= std::numeric_limits<int32_t>::max(),
                    "gcn_norm_csc: num_nodes = ", num_nodes, " is not in [0, 2^31)");
  TORCH_CHECK_VALUE(num_dst >= 0 && num_dst <= num_nodes, "gcn_norm_csc: num_dst = ", num_dst,
                    " is not in [0, num_nodes = ", num_nodes, "]");
  TORCH_CHECK_VALUE(colptr.dim() == 1 && colptr.numel() >= num_dst + 1,
                    "gcn_norm_csc: colptr must be 1-D with ", "at least num_dst + 1 = ", num_dst + 1,
                    " entries (got ", colptr.sizes(), ")");
  TORCH_CHECK_TYPE(colptr.scalar_type() == at::kLong, "gcn_norm_csc: colptr must be int64 (got ",
                   colptr.scalar_type(), ")");
  TORCH_CHECK_VALUE(row.dim() == 1, "gcn_norm_csc: row must be 1-D (got ", row.sizes(), ")");
  TORCH_CHECK_TYPE(row.scalar_type() == at::kLong, "gcn_norm_csc: row must be int64 (got ", row.scalar_type(),
                   ")");
  const at::Tensor ptr = colptr.narrow(0, 0, num_dst + 1).to(at::kCPU).contiguous();
  const int64_t* p = ptr.data_ptr<int64_t>();
  TORCH_CHECK_VALUE(p[0] == 0 && p[num_dst] <= row.numel(),
                    "gcn_norm_csc: colptr must run from 0 to at most ", "row.numel() = ", row.numel(),
                    " (got ", p[0], " .. ", p[num_dst], ")");
  const at::Tensor r = row.narrow(0, 0, p[num_dst]).to(at::kCPU).contiguous();
  const int64_t* src = r.data_ptr<int64_t>();
  Block block;
  block.num_dst = num_dst;
  block.num_src = num_nodes;
  block.indptr.assign(static_cast<size_t>(num_dst) + 1, 0);
  block.indices.reserve(static_cast<size_t>(p[num_dst]));
  for (int64_t i = 0; i < num_dst; ++i) {
    TORCH_CHECK_VALUE(p[i + 1] >= p[i], "gcn_norm_csc: colptr must not decrease (colptr[", i + 1,
                      "] = ", p[i + 1], " < ", p[i], ")");
    for (int64_t k = p[i]; k < p[i + 1]; ++k) {
      TORCH_CHECK_INDEX(src[k] >= 0 && src[k] < num_nodes, "gcn_norm_csc: row[", k, "] = ", src[k],
                        " is not a node id in [0, ", num_nodes, ")");
      if (src[k] != i) block.indices.push_back(static_cast<int32_t>(src[k]));
    }
    block.indptr[i + 1] = static_cast<int64_t>(block.indices.size());
  }
  return block;
}

// Â of `edge_index` (models/gcn_norm.h, Note [GCN normalization of a sampled
// block]) as (rowptr int64, col int32, value float32) on the CPU. Without
// `deg`, every node's degree is its in-degree in edge_index: PyG's gcn_norm
// (self-loops, symmetric normalization). With `deg` (each node's degree in
// the full graph, e.g. a NeighborLoader batch's `deg`), sampled rows are
// rescaled by d / k: dgcn's unbiased estimate of the full-graph layer.
// `num_dst` rows (default: num_nodes) skip the nodes a layer only reads.
std::tuple<at::Tensor, at::Tensor, at::Tensor> normalized(const Block& block, int64_t num_nodes,
                                                          const std::optional<at::Tensor>& deg) {
  std::vector<int32_t> made;  // the degrees, unless deg holds them as they are
  std::span<const int32_t> degree;
  if (deg.has_value() && deg->defined()) {
    TORCH_CHECK_VALUE(deg->dim() == 1 && deg->size(0) == num_nodes,
                      "gcn_norm: deg must be [num_nodes = ", num_nodes, "] (got ", deg->sizes(), ")");
    TORCH_CHECK_TYPE(at::isIntegralType(deg->scalar_type(), /*includeBool=*/false),
                     "gcn_norm: deg must hold integers (got ", deg->scalar_type(), ")");
    if (deg->device().is_cpu() && deg->scalar_type() == at::kInt && deg->is_contiguous()) {
      // A batch's deg: read in place, not copied twice (~6 MB a products
      // batch, fresh heap pages in the first epoch).
      const int32_t* p = deg->data_ptr<int32_t>();
      for (int64_t i = 0; i < num_nodes; ++i) {
        TORCH_CHECK_VALUE(p[i] >= 0, "gcn_norm: deg[", i, "] = ", p[i], " is not a degree");
      }
      degree = {p, static_cast<size_t>(num_nodes)};
    } else {
      const at::Tensor d = deg->to(at::kCPU, at::kLong).contiguous();
      const int64_t* p = d.data_ptr<int64_t>();
      made.resize(static_cast<size_t>(num_nodes));
      for (int64_t i = 0; i < num_nodes; ++i) {
        TORCH_CHECK_VALUE(p[i] >= 0 && p[i] <= std::numeric_limits<int32_t>::max(), "gcn_norm: deg[", i,
                          "] = ", p[i], " is not a degree");
        made[i] = static_cast<int32_t>(p[i]);
      }
      degree = made;
    }
  } else {
    made.assign(static_cast<size_t>(num_nodes), 0);
    for (int64_t i = 0; i < block.num_dst; ++i) {
      made[i] = static_cast<int32_t>(block.indptr[i + 1] - block.indptr[i]);
    }  // the nodes past num_dst have no incoming edge: in-degree 0
    degree = made;
  }
  CsrTensor a = block_adjacency(block, degree);
  return {a.indptr, a.indices, a.values};
}

std::tuple<at::Tensor, at::Tensor, at::Tensor> gcn_norm_op(const at::Tensor& edge_index, int64_t num_nodes,
                                                           const std::optional<at::Tensor>& deg,
                                                           std::optional<int64_t> num_dst) {
  return normalized(block_of_edges(edge_index, num_nodes, num_dst.value_or(num_nodes)), num_nodes, deg);
}

// gcn_norm of the edges given as CSC (block_of_csc): the same result as
// gcn_norm of the COO edges, without sorting them again.
std::tuple<at::Tensor, at::Tensor, at::Tensor> gcn_norm_csc_op(const at::Tensor& colptr,
                                                               const at::Tensor& row, int64_t num_nodes,
                                                               const std::optional<at::Tensor>& deg,
                                                               std::optional<int64_t> num_dst) {
  return normalized(block_of_csc(colptr, row, num_nodes, num_dst.value_or(num_nodes)), num_nodes, deg);
}

void check_dense(const at::Tensor& x, const char* name) {
  TORCH_CHECK_VALUE(x.dim() == 2, "spmm: ", name, " must be 2-D (got ", x.sizes(), ")");
  TORCH_CHECK_TYPE(x.scalar_type() == at::kFloat || x.scalar_type() == at::kBFloat16, "spmm: ", name,
                   " must be float32 or bfloat16 (got ", x.scalar_type(), ")");
}

// (rowptr, col, value) as a CSR matrix with `num_cols` columns on `device`
// (a CPU matrix multiplies a CUDA x on x's device; to() gives CUDA its int32
// ids), checked before any kernel reads through it: every id is an address.
// CsrTensor's checks raise typed errors (IndexError / ValueError / TypeError
// in Python) naming the argument and the value seen.
CsrTensor checked_csr(const char* op, const at::Tensor& rowptr, const at::Tensor& col,
                      const at::Tensor& value, int64_t num_cols, const char* cols_are, c10::Device device) {
  CsrTensor a;
  a.num_rows = rowptr.numel() - 1;
  a.num_cols = num_cols;
  a.indptr = rowptr.contiguous();
  a.indices = col.contiguous();
  a.values = value.contiguous();
  const CsrNames names{"rowptr", "col", "value"};
  a.check(op, names);
  a.check_ids(op, cols_are, names);
  return a.to(device);
}

// Â · x for Â = (rowptr, col, value) with x.size(0) columns: the forward
// kernel (CPU and CUDA keys); the gradient is registered in Python
// (python/dgcn/_ops.py) as spmm_transposed, so that torch.compile traces it.
at::Tensor spmm_op(const at::Tensor& rowptr, const at::Tensor& col, const at::Tensor& value,
                   const at::Tensor& x) {
  check_dense(x, "x");
  const CsrTensor a = checked_csr("spmm", rowptr, col, value, x.size(0), "a row of x", x.device());
  return spmm(a, x.stride(1) == 1 ? x : x.contiguous());
}

// Âᵀ · dy for Â = (rowptr, col, value) with num_cols columns: spmm's
// backward, through Âᵀ built once (models/spmm.h, Note [SpMM backward]).
at::Tensor spmm_transposed_op(const at::Tensor& rowptr, const at::Tensor& col, const at::Tensor& value,
                              const at::Tensor& dy, int64_t num_cols) {
  check_dense(dy, "dy");
  TORCH_CHECK_VALUE(num_cols >= 0, "spmm_transposed: num_cols = ", num_cols, " is negative");
  TORCH_CHECK_VALUE(dy.size(0) == rowptr.numel() - 1, "spmm_transposed: dy has ", dy.size(0),
                    " rows for a matrix of ", rowptr.numel() - 1);
  const CsrTensor a =
      checked_csr("spmm_transposed", rowptr, col, value, num_cols, "a column below num_cols", dy.device());
  return spmm(transpose(a), dy.contiguous());
}

// dropout(relu(x)), forward only (the gradient is registered in Python:
// dy * scale where the output is positive); the kernel reads float32 CPU
// tensors, anything else goes to LibTorch's own ops (models/dropout.cpp).
at::Tensor relu_dropout_op(const at::Tensor& x, double p, bool training) {
  TORCH_CHECK_VALUE(p >= 0 && p < 1, "relu_dropout: p = ", p, " is not in [0, 1)");
  TORCH_CHECK_TYPE(at::isFloatingType(x.scalar_type()), "relu_dropout: x must be floating point (got ",
                   x.scalar_type(), ")");
  const c10::AutoGradMode no_grad(false);  // models/dropout.h records its own backward otherwise
  return relu_dropout(x, p, training);
}

// relu_dropout's gradient from its output (models/dropout.h): registered in
// Python as its backward, one pass where torch's where/gt/mul take four.
at::Tensor relu_dropout_backward_op(const at::Tensor& y, const at::Tensor& dy, double scale) {
  TORCH_CHECK_VALUE(y.sizes() == dy.sizes(), "relu_dropout_backward: y ", y.sizes(), " and dy ", dy.sizes(),
                    " differ in shape");
  TORCH_CHECK_TYPE(at::isFloatingType(y.scalar_type()) && at::isFloatingType(dy.scalar_type()),
                   "relu_dropout_backward: y and dy must be floating point (got ", y.scalar_type(), ", ",
                   dy.scalar_type(), ")");
  TORCH_CHECK_VALUE(y.device() == dy.device(), "relu_dropout_backward: y and dy must be on one device (got ",
                    y.device(), ", ", dy.device(), ")");
  return relu_dropout_backward(y, dy, scale);
}

// Under autocast the SpMM is a matrix product like mm and linear, which
// autocast runs in its lower precision: with dtype=torch.bfloat16, a float32
// x is cast to bf16 (a differentiable cast: x's gradient stays float32) and
// the result is bf16, its sums float32 all the same (Note [bf16 SpMM] in
// models/cpu/spmm_kernel.h). value stays float32 (the normalization weights;
// the kernel reads them so). Autocast to float16 has no kernel here: there
// x is cast to float32 instead. Non-float32 x (float64) passes through
// unchanged, as autocast leaves it, and the kernel names its dtype.
at::Tensor autocast_dense(const at::Tensor& x, c10::DeviceType device_type) {
  if (x.scalar_type() != at::kFloat && x.scalar_type() != at::kBFloat16 && x.scalar_type() != at::kHalf) {
    return x;
  }
  const bool bf16 = at::autocast::get_autocast_dtype(device_type) == at::kBFloat16;
  return x.to(bf16 ? at::kBFloat16 : at::kFloat);
}

template <c10::DeviceType kDevice>
at::Tensor spmm_autocast(const at::Tensor& rowptr, const at::Tensor& col, const at::Tensor& value,
                         const at::Tensor& x) {
  const c10::impl::ExcludeDispatchKeyGuard no_autocast(
      c10::DispatchKeySet({c10::DispatchKey::AutocastCPU, c10::DispatchKey::AutocastCUDA}));
  static const auto op =
      c10::Dispatcher::singleton()
          .findSchemaOrThrow("dgcn::spmm", "")
          .typed<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&)>();
  return op.call(rowptr, col, value.to(at::kFloat), autocast_dense(x, kDevice));
}

template <c10::DeviceType kDevice>
at::Tensor spmm_transposed_autocast(const at::Tensor& rowptr, const at::Tensor& col, const at::Tensor& value,
                                    const at::Tensor& dy, int64_t num_cols) {
  const c10::impl::ExcludeDispatchKeyGuard no_autocast(
      c10::DispatchKeySet({c10::DispatchKey::AutocastCPU, c10::DispatchKey::AutocastCUDA}));
  static const auto op = c10::Dispatcher::singleton()
                             .findSchemaOrThrow("dgcn::spmm_transposed", "")
                             .typed<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&,
                                               const at::Tensor&, int64_t)>();
  return op.call(rowptr, col, value.to(at::kFloat), autocast_dense(dy, kDevice), num_cols);
}

}  // namespace
}  // namespace dgcn

// Schemas here, one kernel per dispatch key below (as pyg-lib and PyTorch's
// custom-op guide register them); the fake (Meta) kernels and the autograd
// formulas are python/dgcn/_ops.py's. gcn_norm returns CPU tensors whatever
// the device of edge_index.
TORCH_LIBRARY(dgcn, m) {
  m.def(
      "gcn_norm(Tensor edge_index, int num_nodes, Tensor? deg=None, int? num_dst=None) -> (Tensor, Tensor, "
      "Tensor)");
  m.def(
      "gcn_norm_csc(Tensor colptr, Tensor row, int num_nodes, Tensor? deg=None, int? num_dst=None) -> "
      "(Tensor, "
      "Tensor, Tensor)");
  m.def("spmm(Tensor rowptr, Tensor col, Tensor value, Tensor x) -> Tensor");
  m.def("spmm_transposed(Tensor rowptr, Tensor col, Tensor value, Tensor dy, int num_cols) -> Tensor");
  m.def("relu_dropout(Tensor x, float p, bool training) -> Tensor");
  m.def("relu_dropout_backward(Tensor y, Tensor dy, float scale) -> Tensor");
}

namespace {
// One set of kernels for the CPU and CUDA keys: they move what runs on the
// CPU (the normalization) or on x's device themselves; a build without
// CUDA raises naming the op.
void impl_device_kernels(torch::Library& m) {
  m.impl("gcn_norm", &dgcn::gcn_norm_op);
  m.impl("gcn_norm_csc", &dgcn::gcn_norm_csc_op);
  m.impl("spmm", &dgcn::spmm_op);
  m.impl("spmm_transposed", &dgcn::spmm_transposed_op);
  m.impl("relu_dropout", &dgcn::relu_dropout_op);
  m.impl("relu_dropout_backward", &dgcn::relu_dropout_backward_op);
}
}  // namespace

TORCH_LIBRARY_IMPL(dgcn, CPU, m) {
  impl_device_kernels(m);
}
TORCH_LIBRARY_IMPL(dgcn, CUDA, m) {
  impl_device_kernels(m);
}

TORCH_LIBRARY_IMPL(dgcn, AutocastCPU, m) {
  m.impl("spmm", &dgcn::spmm_autocast<c10::DeviceType::CPU>);
  m.impl("spmm_transposed", &dgcn::spmm_transposed_autocast<c10::DeviceType::CPU>);
}
TORCH_LIBRARY_IMPL(dgcn, AutocastCUDA, m) {
  m.impl("spmm", &dgcn::spmm_autocast<c10::DeviceType::CUDA>);
  m.impl("spmm_transposed", &dgcn::spmm_transposed_autocast<c10::DeviceType::CUDA>);
}
