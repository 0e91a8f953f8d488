// Front end of SpMM: checks, device dispatch and the autograd function.
#include "models/spmm.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <type_traits>
#include <vector>

#include "models/cpu/spmm_kernel.h"
#ifdef DGCN_WITH_TORCH_CUDA
#include "models/cuda/spmm_cuda.h"
#endif

namespace dgcn {
namespace {

// Below this many multiply-adds one thread is faster than waking the pool.
constexpr int64_t kSerialWork = int64_t{1} << 16;

template <class Index>
cpu::CsrRef<Index> cpu_ref(const CsrTensor& a) {
  return {a.num_rows, a.num_cols, a.indptr.data_ptr<int64_t>(), a.indices.data_ptr<Index>(),
          a.values.data_ptr<float>()};
}

void check_x(const CsrTensor& a, const at::Tensor& x, int64_t x_rows, const char* op) {
  TORCH_CHECK(x.defined() && x.dim() == 2, op, ": x must be a 2-d tensor (got ", x.defined() ? x.dim() : -1,
              " dims)");
  TORCH_CHECK(x.scalar_type() == at::kFloat || x.scalar_type() == at::kBFloat16, op,
              ": x must be float32 or bfloat16 (got ", x.scalar_type(), ")");
  TORCH_CHECK(x.size(0) == x_rows, op, ": x has ", x.size(0), " rows, the sparse matrix needs ", x_rows,
              " (a is ", a.num_rows, " x ", a.num_cols, ")");
  TORCH_CHECK(x.device() == a.device(), op, ": a and x must be on one device (got ", a.device(), ", ",
              x.device(), ")");
}

at::ScalarType out_dtype_of(const at::Tensor& x, std::optional<at::ScalarType> out_dtype, const char* op) {
  const at::ScalarType t = out_dtype.value_or(x.scalar_type());
  TORCH_CHECK(t == at::kFloat || t == at::kBFloat16, op, ": out_dtype must be float32 or bfloat16 (got ", t,
              ")");
  return t;
}

// The kernel's element types: c10::BFloat16 is a uint16_t like cpu::Bf16.
static_assert(sizeof(c10::BFloat16) == sizeof(cpu::Bf16) && alignof(c10::BFloat16) == alignof(cpu::Bf16));
template <class T>
const T* elements(const at::Tensor& t) {
  if constexpr (std::is_same_v<T, float>) {
    return t.data_ptr<float>();
  } else {
    return reinterpret_cast<const cpu::Bf16*>(t.data_ptr<c10::BFloat16>());
  }
}
template <class T>
T* mutable_elements(at::Tensor& t) {
  return const_cast<T*>(elements<T>(t));
}

// Calls fn(x_type*, y_type*) with the kernel's element types of x and y.
template <class Fn>
void with_types(const at::Tensor& x, at::Tensor& y, Fn&& fn) {
  const bool x_bf16 = x.scalar_type() == at::kBFloat16;
  const bool y_bf16 = y.scalar_type() == at::kBFloat16;
  if (x_bf16 && y_bf16) {
    fn(elements<cpu::Bf16>(x), mutable_elements<cpu::Bf16>(y));
  } else if (x_bf16) {
    fn(elements<cpu::Bf16>(x), mutable_elements<float>(y));
  } else if (y_bf16) {
    fn(elements<float>(x), mutable_elements<cpu::Bf16>(y));
  } else {
    fn(elements<float>(x), mutable_elements<float>(y));
  }
}

at::Tensor spmm_cpu(const CsrTensor& a, const at::Tensor& x_in, at::ScalarType out_dtype) {
  const at::Tensor x = x_in.stride(1) == 1 ? x_in : x_in.contiguous();
  const int64_t f = x.size(1);
  at::Tensor y = at::empty({a.num_rows, f}, x.options().dtype(out_dtype));
  if (a.num_rows == 0 || f == 0) return y;
  const int64_t work = (a.nnz() + a.num_rows) * f;
  const int64_t parts = work < kSerialWork ? 1 : std::min<int64_t>(at::get_num_threads(), a.num_rows);
  const int64_t ldx = x.stride(0);
  with_types(x, y, [&](const auto* xp, auto* yp) {
    auto run = [&](auto ref) {
      const auto splits = cpu::balanced_row_splits(ref.indptr, ref.num_rows, parts);
      // One part per thread; every row is summed by exactly one thread.
      at::parallel_for(0, parts, 1, [&](int64_t begin, int64_t end) {
        for (int64_t p = begin; p < end; ++p)
          cpu::spmm_rows(ref, xp, ldx, yp, f, f, splits[p], splits[p + 1]);
      });
    };
    if (a.indices.scalar_type() == at::kInt) {
      run(cpu_ref<int32_t>(a));
    } else {
      run(cpu_ref<int64_t>(a));
    }
  });
  return y;
}

CsrTensor transpose_cpu(const CsrTensor& a) {
  CsrTensor t = a.empty_transpose();
  if (a.indices.scalar_type() == at::kInt) {
    cpu::transpose(cpu_ref<int32_t>(a), t.indptr.data_ptr<int64_t>(), t.indices.data_ptr<int32_t>(),
                   t.values.data_ptr<float>());
  } else {
    cpu::transpose(cpu_ref<int64_t>(a), t.indptr.data_ptr<int64_t>(), t.indices.data_ptr<int64_t>(),
                   t.values.data_ptr<float>());
  }
  return t;
}

#ifndef DGCN_WITH_TORCH_CUDA
[[noreturn]] void no_cuda(const char* op) {
  TORCH_CHECK(false, op,
              ": CUDA tensors need a build against a CUDA LibTorch with cuSPARSE "
              "(this one has DGCN_HAVE_TORCH_CUDA off)");
}
#endif

// Note [SpMM backward]: the matrix is saved as its tensors; the transpose is
// built in backward, which runs once per block, so it is built once per block.
class SpmmFunction : public torch::autograd::Function<SpmmFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x, const CsrTensor& a,
                            SpmmBackward mode, std::optional<at::ScalarType> out_dtype) {
    ctx->saved_data["rows"] = a.num_rows;
    ctx->saved_data["cols"] = a.num_cols;
    ctx->saved_data["indptr"] = a.indptr;
    ctx->saved_data["indices"] = a.indices;
    ctx->saved_data["values"] = a.values;
    ctx->saved_data["mode"] = static_cast<int64_t>(mode);
    ctx->saved_data["x_dtype"] = x.scalar_type();
    return spmm(a, x, out_dtype);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    if (!ctx->needs_input_grad(0)) return {at::Tensor(), at::Tensor(), at::Tensor(), at::Tensor()};
    CsrTensor a;
    a.num_rows = ctx->saved_data["rows"].toInt();
    a.num_cols = ctx->saved_data["cols"].toInt();
    a.indptr = ctx->saved_data["indptr"].toTensor();
    a.indices = ctx->saved_data["indices"].toTensor();
    a.values = ctx->saved_data["values"].toTensor();
    const auto mode = static_cast<SpmmBackward>(ctx->saved_data["mode"].toInt());
    const at::ScalarType x_dtype = ctx->saved_data["x_dtype"].toScalarType();
    // dy may be float32 or bf16; the gradient takes x's dtype, summed in float32.
    const at::Tensor& dy = grads[0];
    at::Tensor dx = mode == SpmmBackward::kTransposedCsr ? spmm(transpose(a), dy, x_dtype)
                                                         : spmm_transpose_op(a, dy, x_dtype);
    return {dx, at::Tensor(), at::Tensor(), at::Tensor()};
  }
};

}  // namespace

CsrTensor CsrTensor::to(c10::Device device, bool non_blocking) const {
  CsrTensor out = *this;
  if (device.is_cuda()) {
    TORCH_CHECK(nnz() <= INT32_MAX && num_rows < INT32_MAX && num_cols <= INT32_MAX, "CsrTensor::to(", device,
                "): ", num_rows, " x ", num_cols, " with ", nnz(),
                " entries does not fit the int32 ids the CUDA backend uses");
    out.indptr = indptr.to(device, at::kInt, non_blocking);
    out.indices = indices.to(device, at::kInt, non_blocking);
  } else {
    out.indptr = indptr.to(device, at::kLong, non_blocking);
    out.indices = indices.to(device, non_blocking);
  }
  out.values = values.to(device, at::kFloat, non_blocking);
  return out;
}

CsrTensor CsrTensor::empty_transpose() const {
  CsrTensor t;
  t.num_rows = num_cols;
  t.num_cols = num_rows;
  t.indptr = at::empty({num_cols + 1}, indptr.options());
  t.indices = at::empty({nnz()}, indices.options());
  t.values = at::empty({nnz()}, values.options());
  return t;
}

void CsrTensor::check(const char* op, const CsrNames& names) const {
  TORCH_CHECK_VALUE(indptr.defined() && indices.defined() && values.defined(), op,
                    ": the sparse matrix has undefined tensors");
  TORCH_CHECK_VALUE(num_rows >= 0 && num_cols >= 0, op, ": negative shape ", num_rows, " x ", num_cols, " (",
                    names.indptr, " has ", indptr.numel(), " entries)");
  TORCH_CHECK_VALUE(indptr.dim() == 1 && indptr.numel() == num_rows + 1 && indptr.is_contiguous(), op, ": ",
                    names.indptr, " must be a contiguous 1-D tensor of num_rows + 1 = ", num_rows + 1,
                    " entries (got ", indptr.sizes(), ")");
  TORCH_CHECK_VALUE(indices.dim() == 1 && indices.is_contiguous(), op, ": ", names.indices,
                    " must be a contiguous 1-D tensor (got ", indices.sizes(), ")");
  TORCH_CHECK_VALUE(values.dim() == 1 && values.is_contiguous() && values.numel() == indices.numel(), op,
                    ": ", names.values, " must be 1-D, one per ", names.indices, " entry (got ",
                    values.sizes(), " for ", names.indices, " ", indices.sizes(), ")");
  TORCH_CHECK_TYPE(values.scalar_type() == at::kFloat, op, ": ", names.values, " must be float32 (got ",
                   values.scalar_type(), ")");
  TORCH_CHECK_VALUE(indptr.device() == values.device() && indices.device() == values.device(), op, ": ",
                    names.indptr, ", ", names.indices, " and ", names.values, " must be on one device (got ",
                    indptr.device(), ", ", indices.device(), ", ", values.device(), ")");
  // int32 ids on CUDA are what to() makes; an op's int64 arguments are converted by it.
  const bool cuda = values.device().is_cuda();
  TORCH_CHECK_TYPE(indptr.scalar_type() == at::kLong || (cuda && indptr.scalar_type() == at::kInt), op, ": ",
                   names.indptr, " must be int64 (got ", indptr.scalar_type(), ")");
  TORCH_CHECK_TYPE(indices.scalar_type() == at::kInt || indices.scalar_type() == at::kLong, op, ": ",
                   names.indices, " must be int32 or int64 (got ", indices.scalar_type(), ")");
  if (values.device().is_cpu()) {  // (elsewhere a read waits on the device: check_ids reads them)
    const int64_t* p = indptr.data_ptr<int64_t>();
    TORCH_CHECK_VALUE(p[0] == 0 && p[num_rows] == nnz(), op, ": ", names.indptr,
                      " must run from 0 to nnz = ", nnz(), " (got ", p[0], " .. ", p[num_rows], ")");
  }
}

namespace {

// What check_ids bounds: indptr's endpoints, its smallest step (0 if none is
// negative), the smallest and largest index (0 and -1 when there is none).
struct CsrExtremes {
  int64_t first = 0, last = 0, worst_step = 0, low = 0, high = -1;
};

// One serial pass over each on the CPU (a few ms for a products batch, less
// than torch's reductions cost in dispatch and threads).
template <class Id>
CsrExtremes csr_extremes_cpu(const CsrTensor& a) {
  CsrExtremes e;
  const int64_t* p = a.indptr.data_ptr<int64_t>();
  e.first = p[0];
  e.last = p[a.num_rows];
  for (int64_t i = 1; i <= a.num_rows; ++i) e.worst_step = std::min(e.worst_step, p[i] - p[i - 1]);
  const Id* c = a.indices.data_ptr<Id>();
  const int64_t n = a.nnz();
  Id low = n > 0 ? c[0] : 0, high = n > 0 ? c[0] : -1;
  for (int64_t k = 0; k < n; ++k) {
    low = std::min(low, c[k]);
    high = std::max(high, c[k]);
  }
  e.low = low;
  e.high = high;
  return e;
}

// torch's reductions on the device, stacked into one small tensor and read
// back once: each read waits for the device's queue to drain.
CsrExtremes csr_extremes_device(const CsrTensor& a) {
  const auto as_long = [](const at::Tensor& t) { return t.to(at::kLong).reshape({1}); };
  std::vector<at::Tensor> parts = {as_long(a.indptr.select(0, 0)), as_long(a.indptr.select(0, a.num_rows))};
  if (a.num_rows > 0) parts.push_back(as_long(a.indptr.diff().min()).clamp_max(0));
  if (a.nnz() > 0) {
    const auto [low, high] = at::aminmax(a.indices);
    parts.push_back(as_long(low));
    parts.push_back(as_long(high));
  }
  const at::Tensor host = at::cat(parts).to(at::kCPU);  // the one device-to-host read
  const int64_t* v = host.data_ptr<int64_t>();
  CsrExtremes e;
  e.first = v[0];
  e.last = v[1];
  size_t k = 2;
  if (a.num_rows > 0) e.worst_step = v[k++];
  if (a.nnz() > 0) {
    e.low = v[k];
    e.high = v[k + 1];
  }
  return e;
}

}  // namespace

void CsrTensor::check_ids(const char* op, const char* cols_are, const CsrNames& names) const {
  const CsrExtremes e = !values.device().is_cpu()           ? csr_extremes_device(*this)
                        : indices.scalar_type() == at::kInt ? csr_extremes_cpu<int32_t>(*this)
                                                            : csr_extremes_cpu<int64_t>(*this);
  TORCH_CHECK_VALUE(e.first == 0 && e.last == nnz(), op, ": ", names.indptr,
                    " must run from 0 to nnz = ", nnz(), " (got ", e.first, " .. ", e.last, ")");
  TORCH_CHECK_VALUE(e.worst_step >= 0, op, ": ", names.indptr, " must not decrease (a step of ", e.worst_step,
                    ")");
  TORCH_CHECK_INDEX(nnz() == 0 || (e.low >= 0 && e.high < num_cols), op, ": ", names.indices, " holds ",
                    e.low < 0 ? e.low : e.high, ", not ", cols_are, " in [0, ", num_cols, ")");
}

at::Tensor spmm(const CsrTensor& a, const at::Tensor& x, std::optional<at::ScalarType> out_dtype) {
  a.check("spmm");
  check_x(a, x, a.num_cols, "spmm");
  const at::ScalarType y_dtype = out_dtype_of(x, out_dtype, "spmm");
  if (x.device().is_cuda()) {
#ifdef DGCN_WITH_TORCH_CUDA
    return cuda::spmm_cuda(a, x, /*transpose_a=*/false, y_dtype);
#else
    no_cuda("spmm");
#endif
  }
  return spmm_cpu(a, x, y_dtype);
}

CsrTensor transpose(const CsrTensor& a) {
  a.check("transpose");
  if (a.device().is_cuda()) {
#ifdef DGCN_WITH_TORCH_CUDA
    return cuda::transpose_cuda(a);
#else
    no_cuda("transpose");
#endif
  }
  return transpose_cpu(a);
}

at::Tensor spmm_transpose_op(const CsrTensor& a, const at::Tensor& x,
                             std::optional<at::ScalarType> out_dtype) {
  a.check("spmm_transpose_op");
  check_x(a, x, a.num_rows, "spmm_transpose_op");
  const at::ScalarType y_dtype = out_dtype_of(x, out_dtype, "spmm_transpose_op");
  if (x.device().is_cuda()) {
#ifdef DGCN_WITH_TORCH_CUDA
    return cuda::spmm_cuda(a, x, /*transpose_a=*/true, y_dtype);
#else
    no_cuda("spmm_transpose_op");
#endif
  }
  const at::Tensor xc = x.stride(1) == 1 ? x : x.contiguous();
  const int64_t f = xc.size(1);
  // The scatter adds into y: float32 sums, rounded once at the end for bf16.
  at::Tensor y = at::zeros({a.num_cols, f}, xc.options().dtype(at::kFloat));
  auto scatter = [&](const auto* xp) {
    if (a.indices.scalar_type() == at::kInt) {
      cpu::spmm_transpose_scatter(cpu_ref<int32_t>(a), xp, xc.stride(0), y.data_ptr<float>(), f, f);
    } else {
      cpu::spmm_transpose_scatter(cpu_ref<int64_t>(a), xp, xc.stride(0), y.data_ptr<float>(), f, f);
    }
  };
  if (xc.scalar_type() == at::kBFloat16) {
    scatter(elements<cpu::Bf16>(xc));
  } else {
    scatter(elements<float>(xc));
  }
  return y_dtype == at::kFloat ? y : y.to(y_dtype);
}

const char* spmm_backward_name(SpmmBackward mode) {
  return mode == SpmmBackward::kTransposedCsr ? "transposed-csr" : "transpose-op";
}

at::Tensor spmm_autograd(const CsrTensor& a, const at::Tensor& x, SpmmBackward backward,
                         std::optional<at::ScalarType> out_dtype) {
  return SpmmFunction::apply(x, a, backward, out_dtype);
}

bool spmm_has_cuda() {
#ifdef DGCN_WITH_TORCH_CUDA
  return true;
#else
  return false;
#endif
}

}  // namespace dgcn
