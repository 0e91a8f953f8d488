// See Note [Counter-based dropout] in dropout_kernel.h.
#include "models/cpu/dropout_kernel.h"

#include "base/simd_clones.h"

#include <cmath>

namespace dgcn::cpu {
namespace {

__attribute__((always_inline)) inline uint32_t hash32(uint32_t i, uint32_t k0, uint32_t k1) {
  uint32_t h = (i * 0x9E3779B1u) ^ k0;
  h ^= h >> 16;
  h *= 0x85EBCA6Bu;
  h ^= h >> 13;
  h *= 0xC2B2AE35u;
  h ^= h >> 16;
  return h ^ k1;
}

DGCN_SIMD_CLONES void relu_dropout_loop(const float* __restrict x, float* __restrict y, uint32_t k0,
                                        uint32_t k1, uint32_t threshold, float scale, int64_t begin,
                                        int64_t end) {
  for (int64_t i = begin; i < end; ++i) {
    const bool keep = hash32(static_cast<uint32_t>(i), k0, k1) >= threshold;
    const float v = x[i] > 0.0f ? x[i] * scale : 0.0f;
    y[i] = keep ? v : 0.0f;
  }
}

DGCN_SIMD_CLONES void dropout_loop(const float* __restrict x, float* __restrict y, uint32_t k0, uint32_t k1,
                                   uint32_t threshold, float scale, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) {
    const bool keep = hash32(static_cast<uint32_t>(i), k0, k1) >= threshold;
    y[i] = keep ? x[i] * scale : 0.0f;
  }
}

DGCN_SIMD_CLONES void relu_dropout_backward_loop(const float* __restrict dy, const float* __restrict y,
                                                 float* __restrict dx, float scale, int64_t begin,
                                                 int64_t end) {
  for (int64_t i = begin; i < end; ++i) dx[i] = y[i] > 0.0f ? dy[i] * scale : 0.0f;
}

DGCN_SIMD_CLONES void relu_dropout_loop_bf16(const Bf16* __restrict x, Bf16* __restrict y, uint32_t k0,
                                             uint32_t k1, uint32_t threshold, float scale, int64_t begin,
                                             int64_t end) {
  for (int64_t i = begin; i < end; ++i) {
    const bool keep = hash32(static_cast<uint32_t>(i), k0, k1) >= threshold;
    const float xi = to_float(x[i]);
    const float v = xi > 0.0f ? xi * scale : 0.0f;
    y[i] = to_bf16(keep ? v : 0.0f);
  }
}

DGCN_SIMD_CLONES void relu_dropout_backward_loop_bf16(const Bf16* __restrict dy, const Bf16* __restrict y,
                                                      Bf16* __restrict dx, float scale, int64_t begin,
                                                      int64_t end) {
  for (int64_t i = begin; i < end; ++i)
    dx[i] = to_bf16(to_float(y[i]) > 0.0f ? to_float(dy[i]) * scale : 0.0f);
}

DGCN_SIMD_CLONES void bias_relu_dropout_row_bf16(const Bf16* __restrict x, const float* __restrict bias,
                                                 Bf16* __restrict y, uint32_t first, int64_t cols,
                                                 uint32_t k0, uint32_t k1, uint32_t threshold, float scale) {
  for (int64_t c = 0; c < cols; ++c) {
    const bool keep = hash32(first + static_cast<uint32_t>(c), k0, k1) >= threshold;
    const float t = to_float(to_bf16(to_float(x[c]) + bias[c]));  // the bf16 add's rounding
    const float v = t > 0.0f ? t * scale : 0.0f;
    y[c] = to_bf16(keep ? v : 0.0f);
  }
}

DGCN_SIMD_CLONES void bias_relu_dropout_backward_row_bf16(const Bf16* __restrict dy, const Bf16* __restrict y,
                                                          Bf16* __restrict dx, float* __restrict bias_grad,
                                                          int64_t cols, float scale) {
  for (int64_t c = 0; c < cols; ++c) {
    const float g = to_float(y[c]) > 0.0f ? to_float(dy[c]) * scale : 0.0f;
    // Rounded twice, not kept in a Bf16 variable: gcc 12 leaves a loop that
    // copies such a struct variable scalar ("more than one data ref").
    dx[c] = to_bf16(g);
    bias_grad[c] += to_float(to_bf16(g));
  }
}

}  // namespace

void bias_relu_dropout_forward(const Bf16* x, const float* bias, Bf16* y, int64_t cols, uint64_t key,
                               uint32_t threshold, float scale, int64_t row_begin, int64_t row_end) {
  for (int64_t r = row_begin; r < row_end; ++r) {
    const int64_t first = r * cols;
    bias_relu_dropout_row_bf16(x + first, bias, y + first, static_cast<uint32_t>(first), cols,
                               static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32), threshold,
                               scale);
  }
}

void bias_relu_dropout_backward(const Bf16* dy, const Bf16* y, Bf16* dx, float* bias_grad, int64_t cols,
                                float scale, int64_t row_begin, int64_t row_end) {
  for (int64_t r = row_begin; r < row_end; ++r) {
    const int64_t first = r * cols;
    bias_relu_dropout_backward_row_bf16(dy + first, y + first, dx + first, bias_grad, cols, scale);
  }
}

void relu_dropout_forward(const Bf16* x, Bf16* y, uint64_t key, uint32_t threshold, float scale,
                          int64_t begin, int64_t end) {
  relu_dropout_loop_bf16(x, y, static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32), threshold, scale,
                         begin, end);
}

void relu_dropout_backward(const Bf16* dy, const Bf16* y, Bf16* dx, float scale, int64_t begin, int64_t end) {
  relu_dropout_backward_loop_bf16(dy, y, dx, scale, begin, end);
}

uint32_t dropout_threshold(double p) {
  if (p <= 0) return 0;
  const double t = std::ldexp(p, 32);
  return t >= 4294967295.0 ? 0xFFFFFFFFu : static_cast<uint32_t>(t);
}

void relu_dropout_forward(const float* x, float* y, uint64_t key, uint32_t threshold, float scale,
                          int64_t begin, int64_t end) {
  relu_dropout_loop(x, y, static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32), threshold, scale,
                    begin, end);
}

void relu_dropout_backward(const float* dy, const float* y, float* dx, float scale, int64_t begin,
                           int64_t end) {
  relu_dropout_backward_loop(dy, y, dx, scale, begin, end);
}

void dropout_apply(const float* x, float* y, uint64_t key, uint32_t threshold, float scale, int64_t begin,
                   int64_t end) {
  dropout_loop(x, y, static_cast<uint32_t>(key), static_cast<uint32_t>(key >> 32), threshold, scale, begin,
               end);
}

}  // namespace dgcn::cpu
