// Front end of SpMM: checks, device dispatch and the autograd function.
#include "models/spmm.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/custom_function.h>

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
  TORCH_CHECK(x.scalar_type() == at::kFloat, op, ": x must be float32 (got ", x.scalar_type(), ")");
  TORCH_CHECK(x.size(0) == x_rows, op, ": x has ", x.size(0), " rows, the sparse matrix needs ", x_rows,
              " (a is ", a.num_rows, " x ", a.num_cols, ")");
  TORCH_CHECK(x.device() == a.device(), op, ": a and x must be on one device (got ", a.device(), ", ",
              x.device(), ")");
}

at::Tensor spmm_cpu(const CsrTensor& a, const at::Tensor& x_in) {
  const at::Tensor x = x_in.stride(1) == 1 ? x_in : x_in.contiguous();
  const int64_t f = x.size(1);
  at::Tensor y = at::empty({a.num_rows, f}, x.options());
  if (a.num_rows == 0 || f == 0) return y;
  const int64_t work = (a.nnz() + a.num_rows) * f;
  const int64_t parts = work < kSerialWork ? 1 : std::min<int64_t>(at::get_num_threads(), a.num_rows);
  const float* xp = x.data_ptr<float>();
  float* yp = y.data_ptr<float>();
  const int64_t ldx = x.stride(0);
  auto run = [&](auto ref) {
    const auto splits = cpu::balanced_row_splits(ref.indptr, ref.num_rows, parts);
    // One part per thread; every row is summed by exactly one thread.
    at::parallel_for(0, parts, 1, [&](int64_t begin, int64_t end) {
      for (int64_t p = begin; p < end; ++p) cpu::spmm_rows(ref, xp, ldx, yp, f, f, splits[p], splits[p + 1]);
    });
  };
  if (a.indices.scalar_type() == at::kInt) {
    run(cpu_ref<int32_t>(a));
  } else {
    run(cpu_ref<int64_t>(a));
  }
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
                            SpmmBackward mode) {
    ctx->saved_data["rows"] = a.num_rows;
    ctx->saved_data["cols"] = a.num_cols;
    ctx->saved_data["indptr"] = a.indptr;
    ctx->saved_data["indices"] = a.indices;
    ctx->saved_data["values"] = a.values;
    ctx->saved_data["mode"] = static_cast<int64_t>(mode);
    return spmm(a, x);
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    if (!ctx->needs_input_grad(0)) return {at::Tensor(), at::Tensor(), at::Tensor()};
    CsrTensor a;
    a.num_rows = ctx->saved_data["rows"].toInt();
    a.num_cols = ctx->saved_data["cols"].toInt();
    a.indptr = ctx->saved_data["indptr"].toTensor();
    a.indices = ctx->saved_data["indices"].toTensor();
    a.values = ctx->saved_data["values"].toTensor();
    const auto mode = static_cast<SpmmBackward>(ctx->saved_data["mode"].toInt());
    const at::Tensor& dy = grads[0];
    at::Tensor dx = mode == SpmmBackward::kTransposedCsr ? spmm(transpose(a), dy) : spmm_transpose_op(a, dy);
    return {dx, at::Tensor(), at::Tensor()};
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

void CsrTensor::check(const char* op) const {
  TORCH_CHECK(indptr.defined() && indices.defined() && values.defined(), op,
              ": the sparse matrix has undefined tensors");
  TORCH_CHECK(num_rows >= 0 && num_cols >= 0, op, ": negative shape ", num_rows, " x ", num_cols);
  TORCH_CHECK(indptr.dim() == 1 && indptr.numel() == num_rows + 1 && indptr.is_contiguous(), op,
              ": indptr must be a contiguous 1-d tensor of num_rows + 1 = ", num_rows + 1, " entries (got ",
              indptr.sizes(), ")");
  TORCH_CHECK(indices.dim() == 1 && indices.is_contiguous() && values.dim() == 1 && values.is_contiguous() &&
                  values.numel() == indices.numel(),
              op, ": indices and values must be contiguous 1-d tensors of one length (got ", indices.sizes(),
              ", ", values.sizes(), ")");
  TORCH_CHECK(values.scalar_type() == at::kFloat, op, ": values must be float32 (got ", values.scalar_type(),
              ")");
  TORCH_CHECK(indptr.device() == values.device() && indices.device() == values.device(), op,
              ": indptr, indices and values must be on one device (got ", indptr.device(), ", ",
              indices.device(), ", ", values.device(), ")");
  if (values.device().is_cpu()) {
    TORCH_CHECK(indptr.scalar_type() == at::kLong, op, " (CPU): indptr must be int64 (got ",
                indptr.scalar_type(), ")");
    TORCH_CHECK(indices.scalar_type() == at::kInt || indices.scalar_type() == at::kLong, op,
                " (CPU): indices must be int32 or int64 (got ", indices.scalar_type(), ")");
    const int64_t* p = indptr.data_ptr<int64_t>();
    TORCH_CHECK(p[0] == 0 && p[num_rows] == nnz(), op, " (CPU): indptr must run from 0 to nnz = ", nnz(),
                " (got ", p[0], " .. ", p[num_rows], ")");
  }
}

at::Tensor spmm(const CsrTensor& a, const at::Tensor& x) {
  a.check("spmm");
  check_x(a, x, a.num_cols, "spmm");
  if (x.device().is_cuda()) {
#ifdef DGCN_WITH_TORCH_CUDA
    return cuda::spmm_cuda(a, x, /*transpose_a=*/false);
#else
    no_cuda("spmm");
#endif
  }
  return spmm_cpu(a, x);
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

at::Tensor spmm_transpose_op(const CsrTensor& a, const at::Tensor& x) {
  a.check("spmm_transpose_op");
  check_x(a, x, a.num_rows, "spmm_transpose_op");
  if (x.device().is_cuda()) {
#ifdef DGCN_WITH_TORCH_CUDA
    return cuda::spmm_cuda(a, x, /*transpose_a=*/true);
#else
    no_cuda("spmm_transpose_op");
#endif
  }
  const at::Tensor xc = x.stride(1) == 1 ? x : x.contiguous();
  const int64_t f = xc.size(1);
  at::Tensor y = at::zeros({a.num_cols, f}, xc.options());
  if (a.indices.scalar_type() == at::kInt) {
    cpu::spmm_transpose_scatter(cpu_ref<int32_t>(a), xc.data_ptr<float>(), xc.stride(0), y.data_ptr<float>(),
                                f, f);
  } else {
    cpu::spmm_transpose_scatter(cpu_ref<int64_t>(a), xc.data_ptr<float>(), xc.stride(0), y.data_ptr<float>(),
                                f, f);
  }
  return y;
}

const char* spmm_backward_name(SpmmBackward mode) {
  return mode == SpmmBackward::kTransposedCsr ? "transposed-csr" : "transpose-op";
}

at::Tensor spmm_autograd(const CsrTensor& a, const at::Tensor& x, SpmmBackward backward) {
  return SpmmFunction::apply(x, a, backward);
}

bool spmm_has_cuda() {
#ifdef DGCN_WITH_TORCH_CUDA
  return true;
#else
  return false;
#endif
}

}  // namespace dgcn
