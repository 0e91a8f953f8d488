// SpMM: y = A · x for a sparse A in CSR form and a dense row-major x, the
// aggregation step of every GCN layer. One front end (spmm.cpp) checks the
// inputs and dispatches on the device: a multithreaded, vectorized CPU kernel
// (cpu/spmm_kernel.h) or cuSPARSE (cuda/). With autograd, the backward pass
// multiplies by Aᵀ, built once as its own CSR (Note [SpMM backward]).
//
// Example (A is 2 x 3 with 3 entries):
//   indptr = [0, 1, 3], indices = [1, 0, 2], values = [2, 1, 3]
//   x = [[1, 1], [2, 2], [3, 3]]   ->   spmm(A, x) = [[4, 4], [10, 10]]
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>
#include <c10/core/ScalarType.h>

#include <cstdint>
#include <optional>
#include <string>

namespace dgcn {

// What CsrTensor's checks call its three tensors (an op's argument names).
struct CsrNames {
  const char* indptr = "indptr";
  const char* indices = "indices";
  const char* values = "values";
};

// A sparse matrix in CSR form held in tensors on one device.
//   CPU:  indptr int64 [num_rows + 1], indices int32 or int64 [nnz]
//   CUDA: indptr and indices int32 (cuSPARSE's transpose needs 32-bit ids;
//         to() converts, and checks the sizes fit)
//   values float32 [nnz] on both.
// indptr[0] is 0 and indptr[num_rows] == nnz.
struct CsrTensor {
  int64_t num_rows = 0;
  int64_t num_cols = 0;
  at::Tensor indptr;
  at::Tensor indices;
  at::Tensor values;

  int64_t nnz() const { return indices.defined() ? indices.numel() : 0; }
  c10::Device device() const { return values.device(); }
  // A copy on `device` (CPU <-> CUDA), converting the id types as above.
  // non_blocking: asynchronous host-to-device copy when the CPU tensors are pinned.
  CsrTensor to(c10::Device device, bool non_blocking = false) const;
  // The tensors of this matrix's transpose (num_cols x num_rows: indptr
  // [num_cols + 1], indices and values [nnz]) with its dtypes on its device,
  // uninitialized: what every backend's transpose fills.
  CsrTensor empty_transpose() const;
  // Checks shapes, dtypes, one device and, on the CPU, the endpoints of
  // indptr (O(1): every id is trusted to be in range, as built by
  // normalize_block). The errors are c10's typed ones, naming `op`, the
  // tensor and the value seen: TypeError for a dtype, ValueError for a shape,
  // a device or indptr's endpoints (Python's exceptions of those names).
  void check(const char* op, const CsrNames& names = {}) const;
  // For a matrix from outside (a Python op's arguments), after check():
  // indptr runs from 0 to nnz without decreasing (ValueError) and every index
  // is in [0, num_cols) (IndexError; `cols_are` says what a column is, e.g.
  // "a row of x"). One pass over indptr and indices on their device, and on
  // CUDA one device-to-host read of the few numbers it compares.
  void check_ids(const char* op, const char* cols_are = "a column", const CsrNames& names = {}) const;
};

// y = a · x. x: float32 or bfloat16 [a.num_cols x f] on a's device (rows may
// be strided, columns contiguous), y: [a.num_rows x f] in `out_dtype`
// (float32 or bfloat16; default: x's dtype). No autograd.
// Deterministic: each output row is summed in entry order by one thread.
// bf16 (Note [bf16 SpMM] in cpu/spmm_kernel.h): a's values stay float32 and
// every sum runs in float32 in the float32 kernel's order, so a bf16 y is the
// float32 result on x's values, rounded once; a float32 out_dtype skips the
// rounding (e.g. for a layer that adds a float32 bias next). On CUDA,
// cuSPARSE needs a's values in x's dtype: bf16 x multiplies a bf16 copy of
// them (Note [bf16 SpMM on CUDA] in cuda/cusparse_spmm.h).
// The first layer's input gather (Note [Input gather] in batch_tensors.h) is
// this call with a's columns renumbered to global ids and x the store's whole
// feature matrix: bf16 store rows are read as they are, by id.
at::Tensor spmm(const CsrTensor& a, const at::Tensor& x,
                std::optional<at::ScalarType> out_dtype = std::nullopt);

// The CSR of aᵀ (a.num_cols x a.num_rows), entries of each row in increasing
// column order of a, on a's device.
CsrTensor transpose(const CsrTensor& a);

// Note [SpMM backward]
// dx = aᵀ · dy. Two ways: build aᵀ once (a counting sort on CPU,
// cusparseCsr2cscEx2 on CUDA) and run the same gather kernel over it, or
// multiply by the transpose without building it (a scatter on CPU,
// CUSPARSE_OPERATION_TRANSPOSE on CUDA). The scatter needs atomics or
// per-thread copies to run in parallel, so its summation order depends on the
// threads (cuSPARSE documents its transpose op as not bit-reproducible);
// building aᵀ costs one pass over the entries and keeps results identical
// run to run. The SpMM benchmark measures both; kTransposedCsr is the default.
enum class SpmmBackward { kTransposedCsr, kTransposeOp };
const char* spmm_backward_name(SpmmBackward mode);  // "transposed-csr", "transpose-op"

// y = aᵀ · x without building aᵀ (see the note; for the benchmark and for
// SpmmBackward::kTransposeOp). CPU: a serial scatter, summed in float32.
// dtypes as spmm's.
at::Tensor spmm_transpose_op(const CsrTensor& a, const at::Tensor& x,
                             std::optional<at::ScalarType> out_dtype = std::nullopt);

// y = a · x recorded for autograd: x may require grad (a's values never do).
// The backward pass computes aᵀ · dy with `backward` and skips it when x
// does not require grad (e.g. the input features of the first layer).
// dtypes as spmm's; the gradient has x's dtype whatever dy's is (a bf16 x
// with a float32 y gets a bf16 gradient, summed in float32 from dy).
at::Tensor spmm_autograd(const CsrTensor& a, const at::Tensor& x,
                         SpmmBackward backward = SpmmBackward::kTransposedCsr,
                         std::optional<at::ScalarType> out_dtype = std::nullopt);

// Whether spmm can run on CUDA tensors in this build (CUDA LibTorch + cuSPARSE glue).
bool spmm_has_cuda();

}  // namespace dgcn
