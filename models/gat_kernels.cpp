// Front end of the GAT kernels: checks, device dispatch, thread splits and
// the autograd functions.
#include "models/gat_kernels.h"

#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#include <torch/csrc/autograd/custom_function.h>

#include <algorithm>
#include <mutex>

#include "models/cpu/gat_kernel.h"
#ifdef DGCN_WITH_TORCH_CUDA
#include "models/cuda/gat_cuda.h"
#endif

namespace dgcn {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::variable_list;

// Below this many element operations one thread is faster than waking the pool.
constexpr int64_t kSerialWork = int64_t{1} << 15;

template <class Index>
cpu::CsrRef<Index> cpu_ref(const CsrTensor& a) {
  return {a.num_rows, a.num_cols, a.indptr.data_ptr<int64_t>(), a.indices.data_ptr<Index>(), nullptr};
}

// Calls fn(begin, end) on ranges of the `n` rows of `indptr` of about equal
// work, one range per thread: each row is handled by exactly one thread.
template <class F>
void for_row_ranges(const int64_t* indptr, int64_t n, int64_t work_per_entry, F&& fn) {
  if (n <= 0) return;
  const int64_t work = (indptr[n] - indptr[0] + n) * work_per_entry;
  const int64_t parts = work < kSerialWork ? 1 : std::min<int64_t>(at::get_num_threads(), n);
  if (parts == 1) {
    fn(int64_t{0}, n);
    return;
  }
  const auto splits = cpu::balanced_row_splits(indptr, n, parts);
  at::parallel_for(0, parts, 1, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) fn(splits[p], splits[p + 1]);
  });
}

template <class F>
void visit_index(const CsrTensor& a, F&& fn) {
  if (a.indices.scalar_type() == at::kInt) {
    fn(cpu_ref<int32_t>(a));
  } else {
    fn(cpu_ref<int64_t>(a));
  }
}

}  // namespace

// The transposed pattern of a with each entry's id in a (cpu::EdgeTranspose).
// Not in the anonymous namespace: GatTranspose, declared in the header, holds one.
struct EdgeTransposeTensors {
  at::Tensor indptr;  // int64 [num_cols + 1]
  at::Tensor rows;    // a.indices' dtype [nnz]
  at::Tensor edge;    // int64 [nnz]
};

namespace {

EdgeTransposeTensors transpose_edges_cpu(const CsrTensor& a) {
  EdgeTransposeTensors t{at::empty({a.num_cols + 1}, a.indptr.options()),
                         at::empty({a.nnz()}, a.indices.options()), at::empty({a.nnz()}, a.indptr.options())};
  visit_index(a, [&](auto ref) {
    using Index = std::remove_const_t<std::remove_pointer_t<decltype(ref.indices)>>;
    cpu::transpose_edges(ref, t.indptr.data_ptr<int64_t>(), t.rows.data_ptr<Index>(),
                         t.edge.data_ptr<int64_t>());
  });
  return t;
}

template <class Index>
cpu::EdgeTranspose<Index> transpose_ref(const EdgeTransposeTensors& t, int64_t num_cols) {
  return {num_cols, t.indptr.data_ptr<int64_t>(), t.rows.data_ptr<Index>(), t.edge.data_ptr<int64_t>()};
}

}  // namespace

struct GatTranspose {
  std::mutex mutex;
  at::Tensor indices;  // the adjacency's, once built: what a later op is checked against
  EdgeTransposeTensors t;
};

std::shared_ptr<GatTranspose> make_gat_transpose() {
  return std::make_shared<GatTranspose>();
}

namespace {

// a's transpose: shared's (built now if no op built it yet), or, without a
// shared one, `local` filled. The tensors are not written once built.
const EdgeTransposeTensors& transpose_of(const CsrTensor& a, GatTranspose* shared,
                                         EdgeTransposeTensors& local) {
  if (shared == nullptr) {
    local = transpose_edges_cpu(a);
    return local;
  }
  const std::lock_guard<std::mutex> lock(shared->mutex);
  if (!shared->indices.defined()) {
    shared->t = transpose_edges_cpu(a);
    shared->indices = a.indices;
  }
  TORCH_CHECK(shared->indices.is_same(a.indices) && shared->t.indptr.numel() == a.num_cols + 1,
              "GAT backward: one GatTranspose was given two adjacencies (make one per adjacency)");
  return shared->t;
}

// A GatTranspose as an autograd context keeps it (saved_data holds IValues).
struct TransposeCapsule : torch::CustomClassHolder {
  explicit TransposeCapsule(std::shared_ptr<GatTranspose> t) : transpose(std::move(t)) {}
  std::shared_ptr<GatTranspose> transpose;
};

void save_transpose(AutogradContext* ctx, const std::shared_ptr<GatTranspose>& t) {
  ctx->saved_data["transpose"] = at::IValue::make_capsule(c10::make_intrusive<TransposeCapsule>(t));
}

GatTranspose* load_transpose(AutogradContext* ctx) {
  const auto capsule = ctx->saved_data["transpose"].toCapsule();
  return static_cast<TransposeCapsule*>(capsule.get())->transpose.get();
}

void check_operand(const CsrTensor& a, const at::Tensor& t, const char* op, const char* name, int64_t dims,
                   int64_t rows) {
  TORCH_CHECK(t.defined() && t.dim() == dims, op, ": ", name, " must be a ", dims, "-d tensor (got ",
              t.defined() ? t.sizes() : at::IntArrayRef{}, ")");
  TORCH_CHECK(t.scalar_type() == at::kFloat, op, ": ", name, " must be float32 (got ", t.scalar_type(), ")");
  TORCH_CHECK(t.size(0) == rows, op, ": ", name, " has ", t.size(0), " rows, the ", a.num_rows, " x ",
              a.num_cols, " adjacency with ", a.nnz(), " entries needs ", rows);
  TORCH_CHECK(t.device() == a.device(), op, ": the adjacency and ", name, " must be on one device (got ",
              a.device(), ", ", t.device(), ")");
}

#ifndef DGCN_WITH_TORCH_CUDA
[[noreturn]] void no_cuda(const char* op) {
  TORCH_CHECK(false, op,
              ": CUDA tensors need a build against a CUDA LibTorch (this one has DGCN_HAVE_TORCH_CUDA off)");
}
#endif

void save_adj(AutogradContext* ctx, const CsrTensor& a) {
  ctx->saved_data["rows"] = a.num_rows;
  ctx->saved_data["cols"] = a.num_cols;
  ctx->saved_data["indptr"] = a.indptr;
  ctx->saved_data["indices"] = a.indices;
  ctx->saved_data["values"] = a.values;
}

CsrTensor load_adj(AutogradContext* ctx) {
  CsrTensor a;
  a.num_rows = ctx->saved_data["rows"].toInt();
  a.num_cols = ctx->saved_data["cols"].toInt();
  a.indptr = ctx->saved_data["indptr"].toTensor();
  a.indices = ctx->saved_data["indices"].toTensor();
  a.values = ctx->saved_data["values"].toTensor();
  return a;
}

// ---- (a) edge scores ----

at::Tensor scores_forward(const CsrTensor& a, const at::Tensor& a_src, const at::Tensor& a_dst,
                          double slope) {
  const int64_t heads = a_src.size(1);
  at::Tensor e = at::empty({a.nnz(), heads}, a_src.options());
  if (a.device().is_cuda()) {
#ifdef DGCN_WITH_TORCH_CUDA
    cuda::gat_scores_cuda(a, a_src, a_dst, slope, e);
    return e;
#else
    no_cuda("gat_edge_scores");
#endif
  }
  visit_index(a, [&](auto ref) {
    for_row_ranges(ref.indptr, ref.num_rows, heads, [&](int64_t b, int64_t end) {
      cpu::gat_scores_rows(ref, a_src.data_ptr<float>(), a_dst.data_ptr<float>(), heads,
                           static_cast<float>(slope), e.data_ptr<float>(), b, end);
    });
  });
  return e;
}

class ScoresFunction : public torch::autograd::Function<ScoresFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& a_src, const at::Tensor& a_dst,
                            const CsrTensor& a, double slope,
                            const std::shared_ptr<GatTranspose>& transpose) {
    save_adj(ctx, a);
    save_transpose(ctx, transpose);
    ctx->saved_data["slope"] = slope;
    ctx->save_for_backward({a_src, a_dst});
    return scores_forward(a, a_src, a_dst, slope);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const CsrTensor a = load_adj(ctx);
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& a_src = saved[0];
    const at::Tensor& a_dst = saved[1];
    const double slope = ctx->saved_data["slope"].toDouble();
    const at::Tensor de = grads[0].contiguous();
    const int64_t heads = a_src.size(1);
    at::Tensor ds = at::empty_like(de);
    at::Tensor da_dst = at::empty_like(a_dst);
    at::Tensor da_src;
    if (a.device().is_cuda()) {
#ifdef DGCN_WITH_TORCH_CUDA
      da_src =
          cuda::gat_scores_backward_cuda(a, a_src, a_dst, de, slope, ds, da_dst, ctx->needs_input_grad(0));
#else
      no_cuda("gat_edge_scores backward");
#endif
    } else {
      visit_index(a, [&](auto ref) {
        using Index = std::remove_const_t<std::remove_pointer_t<decltype(ref.indices)>>;
        for_row_ranges(ref.indptr, ref.num_rows, heads, [&](int64_t b, int64_t end) {
          cpu::gat_scores_backward_rows(ref, a_src.data_ptr<float>(), a_dst.data_ptr<float>(),
                                        de.data_ptr<float>(), heads, static_cast<float>(slope),
                                        ds.data_ptr<float>(), da_dst.data_ptr<float>(), b, end);
        });
        if (!ctx->needs_input_grad(0)) return;
        EdgeTransposeTensors local;
        const auto t = transpose_ref<Index>(transpose_of(a, load_transpose(ctx), local), a.num_cols);
        da_src = at::empty_like(a_src);
        for_row_ranges(t.indptr, a.num_cols, heads, [&](int64_t b, int64_t end) {
          cpu::column_sums(t, ds.data_ptr<float>(), heads, da_src.data_ptr<float>(), b, end);
        });
      });
    }
    return {da_src, ctx->needs_input_grad(1) ? da_dst : at::Tensor(), at::Tensor(), at::Tensor(),
            at::Tensor()};
  }
};

// ---- (b) softmax over each row ----

at::Tensor softmax_forward(const CsrTensor& a, const at::Tensor& e) {
  at::Tensor alpha = at::empty_like(e);
  if (a.device().is_cuda()) {
#ifdef DGCN_WITH_TORCH_CUDA
    cuda::edge_softmax_cuda(a, e, alpha);
    return alpha;
#else
    no_cuda("edge_softmax");
#endif
  }
  const int64_t heads = e.size(1);
  const int64_t* ptr = a.indptr.data_ptr<int64_t>();
  for_row_ranges(ptr, a.num_rows, heads, [&](int64_t b, int64_t end) {
    cpu::edge_softmax_rows(ptr, e.data_ptr<float>(), heads, alpha.data_ptr<float>(), b, end);
  });
  return alpha;
}

class SoftmaxFunction : public torch::autograd::Function<SoftmaxFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& e, const CsrTensor& a) {
    save_adj(ctx, a);
    at::Tensor alpha = softmax_forward(a, e);
    ctx->save_for_backward({alpha});
    return alpha;
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const CsrTensor a = load_adj(ctx);
    const at::Tensor alpha = ctx->get_saved_variables()[0];
    const at::Tensor dalpha = grads[0].contiguous();
    at::Tensor de = at::empty_like(dalpha);
    if (a.device().is_cuda()) {
#ifdef DGCN_WITH_TORCH_CUDA
      cuda::edge_softmax_backward_cuda(a, alpha, dalpha, de);
#else
      no_cuda("edge_softmax backward");
#endif
    } else {
      const int64_t heads = alpha.size(1);
      const int64_t* ptr = a.indptr.data_ptr<int64_t>();
      for_row_ranges(ptr, a.num_rows, heads, [&](int64_t b, int64_t end) {
        cpu::edge_softmax_backward_rows(ptr, alpha.data_ptr<float>(), dalpha.data_ptr<float>(), heads,
                                        de.data_ptr<float>(), b, end);
      });
    }
    return {de, at::Tensor()};
  }
};

// ---- (c) weighted multi-head SpMM ----

at::Tensor spmm_forward(const CsrTensor& a, const at::Tensor& alpha, const at::Tensor& x) {
  const int64_t heads = x.size(1);
  const int64_t channels = x.size(2);
  at::Tensor out = at::empty({a.num_rows, heads, channels}, x.options());
  if (a.device().is_cuda()) {
#ifdef DGCN_WITH_TORCH_CUDA
    cuda::gat_spmm_cuda(a, alpha, x, out);
    return out;
#else
    no_cuda("gat_spmm");
#endif
  }
  visit_index(a, [&](auto ref) {
    for_row_ranges(ref.indptr, ref.num_rows, heads * channels, [&](int64_t b, int64_t end) {
      cpu::gat_spmm_rows(ref, alpha.data_ptr<float>(), x.data_ptr<float>(), heads, channels,
                         out.data_ptr<float>(), b, end);
    });
  });
  return out;
}

// The gradients of gat_spmm (gat_kernels.h), either one skipped when not wanted.
std::pair<at::Tensor, at::Tensor> spmm_backward(const CsrTensor& a, const at::Tensor& alpha,
                                                const at::Tensor& x, const at::Tensor& dout_in,
                                                bool want_alpha, bool want_x,
                                                GatTranspose* transpose = nullptr) {
  const at::Tensor dout = dout_in.contiguous();
  const int64_t heads = x.size(1);
  const int64_t channels = x.size(2);
  at::Tensor dalpha;
  at::Tensor dx;
  if (want_alpha) dalpha = at::empty_like(alpha);
  if (want_x) dx = at::empty_like(x);
  if (a.device().is_cuda()) {
#ifdef DGCN_WITH_TORCH_CUDA
    cuda::gat_spmm_backward_cuda(a, alpha, x, dout, dalpha, dx);
#else
    no_cuda("gat_spmm backward");
#endif
  } else {
    visit_index(a, [&](auto ref) {
      using Index = std::remove_const_t<std::remove_pointer_t<decltype(ref.indices)>>;
      if (dalpha.defined()) {
        for_row_ranges(ref.indptr, ref.num_rows, heads * channels, [&](int64_t b, int64_t end) {
          cpu::gat_spmm_alpha_grad_rows(ref, dout.data_ptr<float>(), x.data_ptr<float>(), heads, channels,
                                        dalpha.data_ptr<float>(), b, end);
        });
      }
      if (dx.defined()) {
        EdgeTransposeTensors local;
        const auto t = transpose_ref<Index>(transpose_of(a, transpose, local), a.num_cols);
        for_row_ranges(t.indptr, a.num_cols, heads * channels, [&](int64_t b, int64_t end) {
          cpu::gat_spmm_x_grad_cols(t, alpha.data_ptr<float>(), dout.data_ptr<float>(), heads, channels,
                                    dx.data_ptr<float>(), b, end);
        });
      }
    });
  }
  return {dalpha, dx};
}

class GatSpmmFunction : public torch::autograd::Function<GatSpmmFunction> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& alpha, const at::Tensor& x,
                            const CsrTensor& a, const std::shared_ptr<GatTranspose>& transpose) {
    save_adj(ctx, a);
    save_transpose(ctx, transpose);
    ctx->save_for_backward({alpha, x});
    return spmm_forward(a, alpha, x);
  }

  static variable_list backward(AutogradContext* ctx, variable_list grads) {
    const CsrTensor a = load_adj(ctx);
    const auto saved = ctx->get_saved_variables();
    auto [dalpha, dx] = spmm_backward(a, saved[0], saved[1], grads[0], ctx->needs_input_grad(0),
                                      ctx->needs_input_grad(1), load_transpose(ctx));
    return {dalpha, dx, at::Tensor(), at::Tensor()};
  }
};

}  // namespace

at::Tensor gat_edge_scores(const CsrTensor& adj, const at::Tensor& a_src, const at::Tensor& a_dst,
                           double negative_slope, const std::shared_ptr<GatTranspose>& transpose) {
  adj.check("gat_edge_scores");
  check_operand(adj, a_src, "gat_edge_scores", "a_src", 2, adj.num_cols);
  check_operand(adj, a_dst, "gat_edge_scores", "a_dst", 2, adj.num_rows);
  TORCH_CHECK(a_src.size(1) == a_dst.size(1), "gat_edge_scores: a_src has ", a_src.size(1),
              " heads and a_dst ", a_dst.size(1));
  return ScoresFunction::apply(a_src.contiguous(), a_dst.contiguous(), adj, negative_slope, transpose);
}

at::Tensor edge_softmax(const CsrTensor& adj, const at::Tensor& e) {
  adj.check("edge_softmax");
  check_operand(adj, e, "edge_softmax", "e", 2, adj.nnz());
  return SoftmaxFunction::apply(e.contiguous(), adj);
}

at::Tensor gat_spmm(const CsrTensor& adj, const at::Tensor& alpha, const at::Tensor& x,
                    const std::shared_ptr<GatTranspose>& transpose) {
  adj.check("gat_spmm");
  check_operand(adj, alpha, "gat_spmm", "alpha", 2, adj.nnz());
  check_operand(adj, x, "gat_spmm", "x", 3, adj.num_cols);
  TORCH_CHECK(alpha.size(1) == x.size(1), "gat_spmm: alpha has ", alpha.size(1), " heads and x ", x.size(1));
  return GatSpmmFunction::apply(alpha.contiguous(), x.contiguous(), adj, transpose);
}

std::pair<at::Tensor, at::Tensor> gat_spmm_backward(const CsrTensor& adj, const at::Tensor& alpha,
                                                    const at::Tensor& x, const at::Tensor& dout,
                                                    bool want_alpha, bool want_x) {
  adj.check("gat_spmm_backward");
  check_operand(adj, alpha, "gat_spmm_backward", "alpha", 2, adj.nnz());
  check_operand(adj, x, "gat_spmm_backward", "x", 3, adj.num_cols);
  check_operand(adj, dout, "gat_spmm_backward", "dout", 3, adj.num_rows);
  TORCH_CHECK(alpha.size(1) == x.size(1) && dout.size(1) == x.size(1) && dout.size(2) == x.size(2),
              "gat_spmm_backward: alpha ", alpha.sizes(), ", x ", x.sizes(), " and dout ", dout.sizes(),
              " disagree on heads or features");
  at::NoGradGuard no_grad;
  return spmm_backward(adj, alpha.contiguous(), x.contiguous(), dout, want_alpha, want_x);
}

bool gat_has_cuda() {
#ifdef DGCN_WITH_TORCH_CUDA
  return true;
#else
  return false;
#endif
}

}  // namespace dgcn
