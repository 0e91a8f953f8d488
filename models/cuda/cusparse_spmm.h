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

// Note [bf16 SpMM on CUDA]
// cusparseSpMM computes in float32 (computeType CUDA_R_32F) for bfloat16
// dense matrices: its mixed-precision table pairs A and X of one type,
// CUDA_R_16BF, with Y in CUDA_R_16BF or CUDA_R_32F. So a bf16 x multiplies a
// bf16 copy of a's values (the glue rounds them once per call), unlike the
// CPU kernel, which keeps them float32: CUDA and CPU bf16 results agree to
// bf16 tolerance, not bit for bit. A float32 x with a bf16 y is not in the
// table; the glue computes a float32 y and rounds it.

// A CSR matrix in device memory with 32-bit ids (borrowed pointers).
struct DeviceCsr {
  int64_t num_rows = 0;
  int64_t num_cols = 0;
  int64_t nnz = 0;
  const int32_t* indptr = nullptr;       // [num_rows + 1]
  const int32_t* indices = nullptr;      // [nnz]
  const void* values = nullptr;          // [nnz] of value_type
  cudaDataType value_type = CUDA_R_32F;  // CUDA_R_32F, or CUDA_R_16BF with a bf16 x
};

// A dense row-major matrix in device memory (borrowed): rows x n with
// leading dimension ld (in elements), of type CUDA_R_32F or CUDA_R_16BF.
struct DeviceDense {
  const void* data = nullptr;
  int64_t ld = 0;
  cudaDataType type = CUDA_R_32F;
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

  // y = op(a) · x with op = identity or transpose; x [cols(op a) x n] and y
  // [rows(op a) x n] row-major. y is overwritten (y.data is written through).
  // Types: all CUDA_R_32F, or a's values and x CUDA_R_16BF with y
  // CUDA_R_16BF or CUDA_R_32F (Note [bf16 SpMM on CUDA]); sums in float32. The identity form uses
  // CUSPARSE_SPMM_CSR_ALG3, the one CSR algorithm cuSPARSE documents as bit-reproducible run to run (Note
  // [SpMM backward]); where this cuSPARSE refuses it, the default algorithm runs instead, for this and every
  // later call, and deterministic() turns false. The transpose form is never bit-reproducible (cuSPARSE sums
  // with atomics).
  void spmm(cudaStream_t stream, const DeviceCsr& a, bool transpose_a, const DeviceDense& x, int64_t n,
            const DeviceDense& y, const WorkspaceFn& workspace);

  // The CSR of aᵀ into t_indptr [num_cols + 1], t_indices / t_values [nnz]
  // (cusparseCsr2cscEx2: entries of each row in increasing column order).
  // a's values must be float32.
  void transpose(cudaStream_t stream, const DeviceCsr& a, int32_t* t_indptr, int32_t* t_indices,
                 float* t_values, const WorkspaceFn& workspace);

  // False once cuSPARSE refused CSR_ALG3 for x of this type (then every
  // identity-form call with such an x runs the default algorithm).
  bool deterministic(cudaDataType x_type) const { return !alg3_refused_[x_type == CUDA_R_16BF]; }

 private:
  SparseHandle handle_;
  bool alg3_refused_[2] = {false, false};  // [x is bf16]: one type's refusal leaves the other's choice
};

}  // namespace dgcn::cuda
