#include "models/cuda/cusparse_spmm.h"

#include <string>

#include "base/error.h"

namespace dgcn::cuda {
namespace {

std::string where(const char* call, const char* file, int line) {
  return std::string(call) + " (" + file + ":" + std::to_string(line) + ")";
}

// Descriptors live for one call; RAII so an error path cannot leak them.
class SpMatDescr {
 public:
  explicit SpMatDescr(const DeviceCsr& a) {
    // cuSPARSE takes non-const pointers but does not write through them here.
    DGCN_CUSPARSE_CHECK(cusparseCreateCsr(&descr_, a.num_rows, a.num_cols, a.nnz,
                                          const_cast<int32_t*>(a.indptr), const_cast<int32_t*>(a.indices),
                                          const_cast<void*>(a.values), CUSPARSE_INDEX_32I, CUSPARSE_INDEX_32I,
                                          CUSPARSE_INDEX_BASE_ZERO, a.value_type));
  }
  ~SpMatDescr() { cusparseDestroySpMat(descr_); }
  SpMatDescr(const SpMatDescr&) = delete;
  SpMatDescr& operator=(const SpMatDescr&) = delete;
  cusparseSpMatDescr_t get() const { return descr_; }

 private:
  cusparseSpMatDescr_t descr_ = nullptr;
};

class DnMatDescr {
 public:
  DnMatDescr(int64_t rows, int64_t cols, const DeviceDense& m) {
    DGCN_CUSPARSE_CHECK(cusparseCreateDnMat(&descr_, rows, cols, m.ld, const_cast<void*>(m.data), m.type,
                                            CUSPARSE_ORDER_ROW));
  }
  ~DnMatDescr() { cusparseDestroyDnMat(descr_); }
  DnMatDescr(const DnMatDescr&) = delete;
  DnMatDescr& operator=(const DnMatDescr&) = delete;
  cusparseDnMatDescr_t get() const { return descr_; }

 private:
  cusparseDnMatDescr_t descr_ = nullptr;
};

size_t element_bytes(cudaDataType type) {
  return type == CUDA_R_16BF ? 2 : 4;
}

// The combinations of Note [bf16 SpMM on CUDA]; anything else is a caller's bug.
void check_types(const DeviceCsr& a, const DeviceDense& x, const DeviceDense& y) {
  const bool fp32 = a.value_type == CUDA_R_32F && x.type == CUDA_R_32F && y.type == CUDA_R_32F;
  const bool bf16 =
      a.value_type == CUDA_R_16BF && x.type == CUDA_R_16BF && (y.type == CUDA_R_16BF || y.type == CUDA_R_32F);
  if (!fp32 && !bf16) {
    throw Error("CusparseSpmm::spmm: unsupported types (values " + std::to_string(a.value_type) + ", x " +
                std::to_string(x.type) + ", y " + std::to_string(y.type) +
                "): all float32, or bf16 values and x with a bf16 or float32 y");
  }
}

}  // namespace

void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line) {
  throw Error(std::string("CUDA error ") + cudaGetErrorName(status) + ": " + cudaGetErrorString(status) +
              " in " + where(call, file, line));
}

void throw_cusparse_error(cusparseStatus_t status, const char* call, const char* file, int line) {
  throw Error(std::string("cuSPARSE error ") + cusparseGetErrorName(status) + ": " +
              cusparseGetErrorString(status) + " in " + where(call, file, line));
}

SparseHandle::SparseHandle() {
  DGCN_CUSPARSE_CHECK(cusparseCreate(&handle_));
}
SparseHandle::~SparseHandle() {
  if (handle_) cusparseDestroy(handle_);
}

void CusparseSpmm::spmm(cudaStream_t stream, const DeviceCsr& a, bool transpose_a, const DeviceDense& x,
                        int64_t n, const DeviceDense& y, const WorkspaceFn& workspace) {
  check_types(a, x, y);
  const int64_t x_rows = transpose_a ? a.num_rows : a.num_cols;
  const int64_t y_rows = transpose_a ? a.num_cols : a.num_rows;
  if (y_rows == 0 || n == 0) return;
  if (a.nnz == 0 || x_rows == 0) {
    // All-zero bits are +0 in float32 and bf16 alike.
    const size_t bytes = element_bytes(y.type);
    DGCN_CUDA_CHECK(cudaMemset2DAsync(const_cast<void*>(y.data), static_cast<size_t>(y.ld) * bytes, 0,
                                      static_cast<size_t>(n) * bytes, static_cast<size_t>(y_rows), stream));
    return;
  }
  DGCN_CUSPARSE_CHECK(cusparseSetStream(handle_.get(), stream));
  SpMatDescr mat_a(a);
  DnMatDescr mat_x(x_rows, n, x);
  DnMatDescr mat_y(y_rows, n, y);
  bool& refused = alg3_refused_[x.type == CUDA_R_16BF];
  const float alpha = 1.0f;
  const float beta = 0.0f;
  const cusparseOperation_t op =
      transpose_a ? CUSPARSE_OPERATION_TRANSPOSE : CUSPARSE_OPERATION_NON_TRANSPOSE;
  // The identity form asks for CSR_ALG3 (deterministic, Note [SpMM backward]);
  // the transpose form has no deterministic algorithm and takes the default.
  // Once refused, the default from then on: no failing query on every call.
  cusparseSpMMAlg_t alg = transpose_a || refused ? CUSPARSE_SPMM_ALG_DEFAULT : CUSPARSE_SPMM_CSR_ALG3;
  size_t bytes = 0;
  cusparseStatus_t status =
      cusparseSpMM_bufferSize(handle_.get(), op, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, mat_a.get(),
                              mat_x.get(), &beta, mat_y.get(), CUDA_R_32F, alg, &bytes);
  if (status == CUSPARSE_STATUS_NOT_SUPPORTED && alg != CUSPARSE_SPMM_ALG_DEFAULT) {
    // deterministic() tells the caller (the glue warns once).
    alg = CUSPARSE_SPMM_ALG_DEFAULT;
    refused = true;
    status = cusparseSpMM_bufferSize(handle_.get(), op, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, mat_a.get(),
                                     mat_x.get(), &beta, mat_y.get(), CUDA_R_32F, alg, &bytes);
  }
  DGCN_CUSPARSE_CHECK(status);
  void* work = workspace(bytes);
  DGCN_CUSPARSE_CHECK(cusparseSpMM(handle_.get(), op, CUSPARSE_OPERATION_NON_TRANSPOSE, &alpha, mat_a.get(),
                                   mat_x.get(), &beta, mat_y.get(), CUDA_R_32F, alg, work));
}

void CusparseSpmm::transpose(cudaStream_t stream, const DeviceCsr& a, int32_t* t_indptr, int32_t* t_indices,
                             float* t_values, const WorkspaceFn& workspace) {
  if (a.value_type != CUDA_R_32F) throw Error("CusparseSpmm::transpose: the values must be float32");
  if (a.nnz == 0) {
    DGCN_CUDA_CHECK(
        cudaMemsetAsync(t_indptr, 0, static_cast<size_t>(a.num_cols + 1) * sizeof(int32_t), stream));
    return;
  }
  DGCN_CUSPARSE_CHECK(cusparseSetStream(handle_.get(), stream));
  // The CSC of a is the CSR of aᵀ.
  size_t bytes = 0;
  DGCN_CUSPARSE_CHECK(cusparseCsr2cscEx2_bufferSize(
      handle_.get(), static_cast<int>(a.num_rows), static_cast<int>(a.num_cols), static_cast<int>(a.nnz),
      a.values, a.indptr, a.indices, t_values, t_indptr, t_indices, CUDA_R_32F, CUSPARSE_ACTION_NUMERIC,
      CUSPARSE_INDEX_BASE_ZERO, CUSPARSE_CSR2CSC_ALG1, &bytes));
  void* work = workspace(bytes);
  DGCN_CUSPARSE_CHECK(cusparseCsr2cscEx2(
      handle_.get(), static_cast<int>(a.num_rows), static_cast<int>(a.num_cols), static_cast<int>(a.nnz),
      a.values, a.indptr, a.indices, t_values, t_indptr, t_indices, CUDA_R_32F, CUSPARSE_ACTION_NUMERIC,
      CUSPARSE_INDEX_BASE_ZERO, CUSPARSE_CSR2CSC_ALG1, work));
}

}  // namespace dgcn::cuda
