// The front end of dropout (models/dropout.h): checks, the dispatch between
// the counter-based CPU kernel (cpu/dropout_kernel.h) and LibTorch, and the
// autograd functions.
#include "models/dropout.h"

#include <ATen/Parallel.h>
#include <torch/csrc/autograd/custom_function.h>
#include <torch/torch.h>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "models/cpu/dropout_kernel.h"

namespace dgcn {
namespace {

constexpr int64_t kElementGrain = int64_t{1} << 15;

// One dropout key per call from LibTorch's seeded generator (reproducible by seed).
uint64_t draw_dropout_key() {
  return static_cast<uint64_t>(
      torch::randint(std::numeric_limits<int64_t>::max(), {1}, torch::TensorOptions().dtype(torch::kLong))
          .item<int64_t>());
}

// The mask hashes 32-bit element indices: larger tensors go to LibTorch.
bool fused_cpu(const at::Tensor& x) {
  return x.device().is_cpu() && x.scalar_type() == at::kFloat && x.numel() <= int64_t{UINT32_MAX};
}

// bf16 activations (Note [Mixed precision] in models/gcn.h) take the
// counter-based masks too: those of an fp32 run and, as there, independent
// of the thread count (LibTorch's bernoulli is not). Input dropout casts
// around the fp32 kernel (it runs on gathered rows, not the hot path).
bool bf16_cpu(const at::Tensor& x) {
  return x.device().is_cpu() && x.scalar_type() == at::kBFloat16 && x.numel() <= int64_t{UINT32_MAX};
}

const cpu::Bf16* bf16_data(const at::Tensor& t) {
  return reinterpret_cast<const cpu::Bf16*>(t.data_ptr<c10::BFloat16>());
}
cpu::Bf16* bf16_data(at::Tensor& t) {
  return reinterpret_cast<cpu::Bf16*>(t.data_ptr<c10::BFloat16>());
}

// ReluDropoutFunction on bf16 activations: the same masks and float
// arithmetic, read and written in bf16 (cpu::relu_dropout_forward's bf16
// overload), so no cast passes around the fp32 kernel.
class ReluDropoutBf16Function : public torch::autograd::Function<ReluDropoutBf16Function> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x_in, double p) {
    const at::Tensor x = x_in.contiguous();
    at::Tensor y = at::empty_like(x);
    const uint64_t key = draw_dropout_key();
    const uint32_t threshold = cpu::dropout_threshold(p);
    const auto scale = static_cast<float>(1.0 / (1.0 - p));
    const cpu::Bf16* xp = bf16_data(x);
    cpu::Bf16* yp = bf16_data(y);
    at::parallel_for(0, x.numel(), kElementGrain, [&](int64_t b, int64_t e) {
      cpu::relu_dropout_forward(xp, yp, key, threshold, scale, b, e);
    });
    ctx->save_for_backward({y});
    ctx->saved_data["scale"] = static_cast<double>(scale);
    return y;
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const at::Tensor y = ctx->get_saved_variables()[0];
    const at::Tensor dy = grads[0].to(at::kBFloat16).contiguous();
    at::Tensor dx = at::empty_like(dy);
    const auto scale = static_cast<float>(ctx->saved_data["scale"].toDouble());
    const cpu::Bf16* dyp = bf16_data(dy);
    const cpu::Bf16* yp = bf16_data(y);
    cpu::Bf16* dxp = bf16_data(dx);
    at::parallel_for(0, dy.numel(), kElementGrain,
                     [&](int64_t b, int64_t e) { cpu::relu_dropout_backward(dyp, yp, dxp, scale, b, e); });
    return {dx, at::Tensor()};
  }
};

// Rows per block of the fused bias gradient: a block's partial sum is
// computed by one thread, the blocks' sums added in order (deterministic).
constexpr int64_t kBiasGradRows = 256;

class BiasReluDropoutBf16Function : public torch::autograd::Function<BiasReluDropoutBf16Function> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& y_in,
                            const at::Tensor& bias, double p) {
    const at::Tensor x = y_in.contiguous();
    const int64_t rows = x.size(0), cols = x.size(1);
    // The bias as the unfused add sees it: rounded to bf16 (then widened).
    const at::Tensor b = bias.detach().to(at::kBFloat16).to(at::kFloat).contiguous();
    at::Tensor out = at::empty_like(x);
    const uint64_t key = draw_dropout_key();
    const uint32_t threshold = cpu::dropout_threshold(p);
    const auto scale = static_cast<float>(1.0 / (1.0 - p));
    const cpu::Bf16* xp = bf16_data(x);
    const float* bp = b.data_ptr<float>();
    cpu::Bf16* op = bf16_data(out);
    at::parallel_for(0, rows, std::max<int64_t>(1, kElementGrain / std::max<int64_t>(cols, 1)),
                     [&](int64_t r0, int64_t r1) {
                       cpu::bias_relu_dropout_forward(xp, bp, op, cols, key, threshold, scale, r0, r1);
                     });
    ctx->save_for_backward({out});
    ctx->saved_data["scale"] = static_cast<double>(scale);
    ctx->saved_data["bias_dtype"] = bias.scalar_type();
    return out;
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    const at::Tensor y = ctx->get_saved_variables()[0];
    const at::Tensor dy = grads[0].to(at::kBFloat16).contiguous();
    const int64_t rows = y.size(0), cols = y.size(1);
    const int64_t blocks = (rows + kBiasGradRows - 1) / kBiasGradRows;
    at::Tensor dx = at::empty_like(dy);
    at::Tensor partial = at::zeros({std::max<int64_t>(blocks, 1), cols}, y.options().dtype(at::kFloat));
    const auto scale = static_cast<float>(ctx->saved_data["scale"].toDouble());
    const cpu::Bf16* dyp = bf16_data(dy);
    const cpu::Bf16* yp = bf16_data(y);
    cpu::Bf16* dxp = bf16_data(dx);
    float* pp = partial.data_ptr<float>();
    at::parallel_for(0, blocks, 1, [&](int64_t b0, int64_t b1) {
      for (int64_t blk = b0; blk < b1; ++blk) {
        const int64_t r0 = blk * kBiasGradRows;
        cpu::bias_relu_dropout_backward(dyp, yp, dxp, pp + blk * cols, cols, scale, r0,
                                        std::min(rows, r0 + kBiasGradRows));
      }
    });
    at::Tensor dbias = at::zeros({cols}, partial.options());
    float* db = dbias.data_ptr<float>();
    for (int64_t blk = 0; blk < blocks; ++blk)
      for (int64_t c = 0; c < cols; ++c) db[c] += pp[blk * cols + c];
    return {dx, dbias.to(ctx->saved_data["bias_dtype"].toScalarType()), at::Tensor()};
  }
};

class ReluDropoutFunction : public torch::autograd::Function<ReluDropoutFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x_in, double p) {
    const at::Tensor x = x_in.contiguous();
    at::Tensor y = at::empty_like(x);
    const uint64_t key = p > 0 ? draw_dropout_key() : 0;
    const uint32_t threshold = cpu::dropout_threshold(p);
    const auto scale = static_cast<float>(1.0 / (1.0 - p));
    const float* xp = x.data_ptr<float>();
    float* yp = y.data_ptr<float>();
    at::parallel_for(0, x.numel(), kElementGrain, [&](int64_t b, int64_t e) {
      cpu::relu_dropout_forward(xp, yp, key, threshold, scale, b, e);
    });
    ctx->save_for_backward({y});
    ctx->saved_data["scale"] = static_cast<double>(scale);
    return y;
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    return {
        relu_dropout_backward(ctx->get_saved_variables()[0], grads[0], ctx->saved_data["scale"].toDouble()),
        at::Tensor()};
  }
};

at::Tensor apply_dropout(const at::Tensor& x_in, uint64_t key, double p) {
  const at::Tensor x = x_in.contiguous();
  at::Tensor y = at::empty_like(x);
  const uint32_t threshold = cpu::dropout_threshold(p);
  const auto scale = static_cast<float>(1.0 / (1.0 - p));
  const float* xp = x.data_ptr<float>();
  float* yp = y.data_ptr<float>();
  at::parallel_for(0, x.numel(), kElementGrain,
                   [&](int64_t b, int64_t e) { cpu::dropout_apply(xp, yp, key, threshold, scale, b, e); });
  return y;
}

class DropoutFunction : public torch::autograd::Function<DropoutFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& x, double p) {
    const uint64_t key = draw_dropout_key();
    ctx->saved_data["key"] = static_cast<int64_t>(key);
    ctx->saved_data["p"] = p;
    return apply_dropout(x, key, p);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grads) {
    // The mask is recomputed from the key: dropout is its own derivative.
    const auto key = static_cast<uint64_t>(ctx->saved_data["key"].toInt());
    return {apply_dropout(grads[0], key, ctx->saved_data["p"].toDouble()), at::Tensor()};
  }
};

}  // namespace

at::Tensor relu_dropout_backward(const at::Tensor& y_in, const at::Tensor& dy_in, double scale) {
  TORCH_CHECK(y_in.sizes() == dy_in.sizes(), "relu_dropout_backward: y ", y_in.sizes(), " and dy ",
              dy_in.sizes(), " differ in shape");
  if (!(fused_cpu(y_in) && fused_cpu(dy_in))) {
    return at::where(y_in > 0, dy_in * scale, at::zeros({}, dy_in.options()));
  }
  const at::Tensor y = y_in.contiguous(), dy = dy_in.contiguous();
  at::Tensor dx = at::empty_like(dy);
  const auto s = static_cast<float>(scale);
  const float* dyp = dy.data_ptr<float>();
  const float* yp = y.data_ptr<float>();
  float* dxp = dx.data_ptr<float>();
  at::parallel_for(0, dy.numel(), kElementGrain,
                   [&](int64_t b, int64_t e) { cpu::relu_dropout_backward(dyp, yp, dxp, s, b, e); });
  return dx;
}

at::Tensor relu_dropout(const at::Tensor& x, double p, bool training) {
  TORCH_CHECK(p >= 0 && p < 1, "relu_dropout: p must be in [0, 1) (got ", p, ")");
  if (!training) p = 0;
  if (p > 0 && bf16_cpu(x)) return ReluDropoutBf16Function::apply(x, p);
  if (!fused_cpu(x)) return p > 0 ? torch::dropout(torch::relu(x), p, true) : torch::relu(x);
  return ReluDropoutFunction::apply(x, p);
}

at::Tensor bias_relu_dropout(const at::Tensor& y, const at::Tensor& bias, double p, bool training) {
  TORCH_CHECK(y.dim() == 2 && bias.dim() == 1 && bias.size(0) == y.size(1), "bias_relu_dropout: y ",
              y.sizes(), " and bias ", bias.sizes(), " do not match");
  TORCH_CHECK(p >= 0 && p < 1, "bias_relu_dropout: p must be in [0, 1) (got ", p, ")");
  if (training && p > 0 && bf16_cpu(y) && bias.device().is_cpu() && bias.is_floating_point())
    return BiasReluDropoutBf16Function::apply(y, bias, p);
  return relu_dropout(y + bias.to(y.scalar_type()), p, training);
}

at::Tensor dropout_features(const at::Tensor& x, double p, bool training) {
  TORCH_CHECK(p >= 0 && p < 1, "dropout_features: p must be in [0, 1) (got ", p, ")");
  if (!training || p == 0) return x;
  if (bf16_cpu(x)) return dropout_features(x.to(at::kFloat), p, training).to(at::kBFloat16);
  if (!fused_cpu(x)) return torch::dropout(x, p, true);
  return DropoutFunction::apply(x, p);
}

}  // namespace dgcn
