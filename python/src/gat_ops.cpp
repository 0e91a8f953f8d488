// torch.ops.dgcn's GAT op: the multi-head weighted SpMM of
// models/gat_kernels.h, registered as python/src/ops.cpp registers the SpMM
// (schema, a kernel for the CPU and CUDA keys; the fake kernel and the
// autograd formula in python/dgcn/_ops.py), in its own translation unit so
// that the GCN ops and these build and change apart.
//
//   out = torch.ops.dgcn.gat_spmm(rowptr, col, alpha, x)
//       out[i, h*C:(h+1)*C] = sum over i's entries k of alpha[k, h] * x[col[k], h*C:(h+1)*C]
//   dalpha, dx = torch.ops.dgcn.gat_spmm_backward(rowptr, col, alpha, x, dout)
//
// rowptr int64 [rows + 1] and col int32/int64 [E] are the pattern (a layer's
// edges as CSR rows by target), alpha float32 [E, H] the coefficients, x
// float32 [N, H*C] the features, head-major in a row (PyG's GATConv layout).
#include <ATen/ATen.h>
#include <ATen/autocast_mode.h>
#include <c10/core/GradMode.h>
#include <c10/core/impl/LocalDispatchKeySet.h>
#include <torch/library.h>

#include <tuple>

#include "models/gat_kernels.h"
#include "models/spmm.h"

namespace dgcn {
namespace {

// The pattern as the CsrTensor the kernels take, on `device`, checked before
// any kernel reads through it (typed errors naming the argument). The GAT
// kernels do not read the values: an uninitialized buffer fills the slot.
CsrTensor gat_pattern(const char* op, const at::Tensor& rowptr, const at::Tensor& col, int64_t num_cols,
                      c10::Device device) {
  TORCH_CHECK_VALUE(rowptr.dim() == 1 && rowptr.numel() >= 1, op,
                    ": rowptr must be 1-D with num_rows + 1 entries (got ", rowptr.sizes(), ")");
  CsrTensor a;
  a.num_rows = rowptr.numel() - 1;
  a.num_cols = num_cols;
  a.indptr = rowptr.contiguous();
  a.indices = col.contiguous();
  a.values = at::empty({col.numel()}, col.options().dtype(at::kFloat));
  const CsrNames names{"rowptr", "col", "(pattern values)"};
  a.check(op, names);
  a.check_ids(op, "a row of x", names);
  return a.to(device);
}

// alpha [nnz, H] and x [num_src, H*C] (and dout [rows, H*C]): float32, one
// device, widths that agree. Returns H.
int64_t check_operands(const char* op, const at::Tensor& col, const at::Tensor& alpha, const at::Tensor& x) {
  TORCH_CHECK_VALUE(alpha.dim() == 2 && alpha.size(0) == col.numel() && alpha.size(1) >= 1, op,
                    ": alpha must be [E = ", col.numel(), ", heads] (got ", alpha.sizes(), ")");
  TORCH_CHECK_VALUE(x.dim() == 2 && x.size(1) % alpha.size(1) == 0, op,
                    ": x must be [N, heads * C] with heads = ", alpha.size(1), " (got ", x.sizes(), ")");
  TORCH_CHECK_TYPE(alpha.scalar_type() == at::kFloat && x.scalar_type() == at::kFloat, op,
                   ": alpha and x must be float32 (got ", alpha.scalar_type(), ", ", x.scalar_type(), ")");
  TORCH_CHECK_VALUE(alpha.device() == x.device(), op, ": alpha and x must be on one device (got ",
                    alpha.device(), ", ", x.device(), ")");
  return alpha.size(1);
}

at::Tensor gat_spmm_op(const at::Tensor& rowptr, const at::Tensor& col, const at::Tensor& alpha,
                       const at::Tensor& x) {
  const int64_t heads = check_operands("gat_spmm", col, alpha, x);
  const CsrTensor a = gat_pattern("gat_spmm", rowptr, col, x.size(0), x.device());
  const c10::AutoGradMode no_grad(false);  // the kernels record their own backward otherwise
  const at::Tensor out = gat_spmm(a, alpha, x.reshape({x.size(0), heads, -1}));
  return out.reshape({a.num_rows, x.size(1)});
}

// gat_spmm's gradients (models/gat_kernels.h's gat_spmm_backward: the
// kernels' own deterministic backward on the CPU or CUDA), as an op that
// the autograd formula in python/dgcn/_ops.py calls, so torch.compile
// traces it.
std::tuple<at::Tensor, at::Tensor> gat_spmm_backward_op(const at::Tensor& rowptr, const at::Tensor& col,
                                                        const at::Tensor& alpha, const at::Tensor& x,
                                                        const at::Tensor& dout) {
  const int64_t heads = check_operands("gat_spmm_backward", col, alpha, x);
  const CsrTensor a = gat_pattern("gat_spmm_backward", rowptr, col, x.size(0), x.device());
  TORCH_CHECK_VALUE(dout.dim() == 2 && dout.size(0) == a.num_rows && dout.size(1) == x.size(1),
                    "gat_spmm_backward: dout must be [", a.num_rows, ", ", x.size(1), "] (got ", dout.sizes(),
                    ")");
  TORCH_CHECK_TYPE(dout.scalar_type() == at::kFloat, "gat_spmm_backward: dout must be float32 (got ",
                   dout.scalar_type(), ")");
  const c10::AutoGradMode no_grad(false);
  auto [dalpha, dx] = gat_spmm_backward(a, alpha.contiguous(), x.reshape({x.size(0), heads, -1}).contiguous(),
                                        dout.reshape({a.num_rows, heads, -1}).contiguous());
  return {dalpha, dx.reshape(x.sizes())};
}

// Under autocast the weighted SpMM runs in float32, as autocast runs the ops
// it lists in float32 (its "fp32" policy): the kernels have no bfloat16 path,
// and GATConv's products before it (lin, the attention terms) come out in
// bfloat16. alpha and x are cast up (differentiable casts: their gradients
// return in their own dtypes); the result is float32. float64 passes through
// unchanged, and the kernel names its dtype.
at::Tensor float32_under_autocast(const at::Tensor& t) {
  return t.scalar_type() == at::kBFloat16 || t.scalar_type() == at::kHalf ? t.to(at::kFloat) : t;
}

at::Tensor gat_spmm_autocast(const at::Tensor& rowptr, const at::Tensor& col, const at::Tensor& alpha,
                             const at::Tensor& x) {
  const c10::impl::ExcludeDispatchKeyGuard no_autocast(
      c10::DispatchKeySet({c10::DispatchKey::AutocastCPU, c10::DispatchKey::AutocastCUDA}));
  static const auto op =
      c10::Dispatcher::singleton()
          .findSchemaOrThrow("dgcn::gat_spmm", "")
          .typed<at::Tensor(const at::Tensor&, const at::Tensor&, const at::Tensor&, const at::Tensor&)>();
  return op.call(rowptr, col, float32_under_autocast(alpha), float32_under_autocast(x));
}

}  // namespace
}  // namespace dgcn

TORCH_LIBRARY_FRAGMENT(dgcn, m) {
  m.def("gat_spmm(Tensor rowptr, Tensor col, Tensor alpha, Tensor x) -> Tensor");
  m.def(
      "gat_spmm_backward(Tensor rowptr, Tensor col, Tensor alpha, Tensor x, Tensor dout) -> (Tensor, "
      "Tensor)");
}

TORCH_LIBRARY_IMPL(dgcn, CPU, m) {
  m.impl("gat_spmm", &dgcn::gat_spmm_op);
  m.impl("gat_spmm_backward", &dgcn::gat_spmm_backward_op);
}
TORCH_LIBRARY_IMPL(dgcn, CUDA, m) {
  m.impl("gat_spmm", &dgcn::gat_spmm_op);
  m.impl("gat_spmm_backward", &dgcn::gat_spmm_backward_op);
}
TORCH_LIBRARY_IMPL(dgcn, AutocastCPU, m) {
  m.impl("gat_spmm", &dgcn::gat_spmm_autocast);
}
TORCH_LIBRARY_IMPL(dgcn, AutocastCUDA, m) {
  m.impl("gat_spmm", &dgcn::gat_spmm_autocast);
}
