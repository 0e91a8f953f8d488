// The cuSPARSE side of SpMM, in plain CUDA (no LibTorch headers), so it
// compiles with nvcc wherever the toolkit is installed, GPU or not. The
// torch-facing glue (spmm_cuda.cpp) hands it raw device pointers and the
// current stream.
//
// Each call goes handle -> set stream -> descriptors -> buffer-size query ->
// workspace (from the caller's allocator) -> call; the handle and
// descriptors are RAII types and every status is checked (a failure throws
// dgcn::Error, the one error type of torch-free code, naming the status and
// the call, e.g.
// "cuSPARSE error CUSPARSE_STATUS_INVALID_VALUE: ... in cusparseSpMM(...)").
#pragma once

#include <cuda_runtime_api.h>
#include <cusparse.h>

#include <cstddef>
#include <cstdint>
#include <functional>

namespace dgcn::cuda {

[[noreturn]] void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line);
[[noreturn]] void throw_cusparse_error(cusparseStatus_t status, const char* call, const char* file, int line);

}  // namespace dgcn::cuda

#define DGCN_CUDA_CHECK(call)                                                  \
  do {                                                                         \
    cudaError_t dgcn_status_ = (call);                                         \
    if (dgcn_status_ != cudaSuccess)                                           \
      ::dgcn::cuda::throw_cuda_error(dgcn_status_, #call, __FILE__, __LINE__); \
  } while (0)
#define DGCN_CUSPARSE_CHECK(call)                                                  \
  do {                                                                             \
    cusparseStatus_t dgcn_status_ = (call);                                        \
    if (dgcn_status_ != CUSPARSE_STATUS_SUCCESS)                                   \
      ::dgcn::cuda::throw_cusparse_error(dgcn_status_, #call, __FILE__, __LINE__); \
  } while (0)

namespace dgcn::cuda {

// A CSR matrix in device memory with 32-bit ids (borrowed pointers).
struct DeviceCsr {
  int64_t num_rows = 0;
  int64_t num_cols = 0;
  int64_t nnz = 0;
  const int32_t* indptr = nullptr;   // [num_rows + 1]
  const int32_t* indices = nullptr;  // [nnz]
  const float* values = nullptr;     // [nnz]
};

// Owns one cusparseHandle_t, created on the device current at construction.
class SparseHandle {
 public:
  SparseHandle();
  ~SparseHandle();
  SparseHandle(const SparseHandle&) = delete;
  SparseHandle& operator=(const SparseHandle&) = delete;
  cusparseHandle_t get() const { return handle_; }

 private:
  cusparseHandle_t handle_ = nullptr;
};

// Device scratch for one cuSPARSE call: returns at least `bytes` bytes that
// the work queued on the call's stream may use until the call returns (or
// nullptr for 0 bytes). The torch glue hands out blocks of torch's caching
// allocator, which orders their reuse on the stream: no cudaMalloc/cudaFree
// (each a device-wide synchronisation, which can deadlock against NCCL
// kernels of other ranks) on the training path.
using WorkspaceFn = std::function<void*(size_t bytes)>;

// SpMM and transposition for one device, holding its cuSPARSE handle.
// Not thread-safe: use one per (thread, device); every call runs
// asynchronously on the given stream.
class CusparseSpmm {
 public:
  CusparseSpmm() = default;

  // y = op(a) · x with op = identity or transpose; x [rows(op a)... cols x n]
  // and y row-major with leading dimensions ldx, ldy (in floats). y is
  // overwritten. The identity form uses CUSPARSE_SPMM_CSR_ALG3, the one CSR
  // algorithm cuSPARSE documents as bit-reproducible run to run (Note [SpMM
  // backward]); where this cuSPARSE refuses it, the default algorithm runs
  // instead, for this and every later call, and deterministic() turns false.
  // The transpose form is never bit-reproducible (cuSPARSE sums with atomics).
  void spmm(cudaStream_t stream, const DeviceCsr& a, bool transpose_a, const float* x, int64_t ldx, int64_t n,
            float* y, int64_t ldy, const WorkspaceFn& workspace);

  // The CSR of aᵀ into t_indptr [num_cols + 1], t_indices / t_values [nnz]
  // (cusparseCsr2cscEx2: entries of each row in increasing column order).
  void transpose(cudaStream_t stream, const DeviceCsr& a, int32_t* t_indptr, int32_t* t_indices,
                 float* t_values, const WorkspaceFn& workspace);

  // False once cuSPARSE refused CSR_ALG3 (then every identity-form call
  // runs the default algorithm).
  bool deterministic() const { return deterministic_; }

 private:
  SparseHandle handle_;
  bool deterministic_ = true;
};

}  // namespace dgcn::cuda
