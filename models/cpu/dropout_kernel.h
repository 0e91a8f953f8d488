// CPU kernels of GCN's activation: ReLU fused with dropout, and plain
// dropout, with masks drawn from a counter-based hash instead of a stored
// random stream.
//
// Note [Counter-based dropout]
// LibTorch's CPU dropout draws its mask element by element from one
// Mersenne-Twister stream (serial, ~30 ns per element here), stores it, and
// takes several passes: ~0.6 s for one 140k x 128 activation of a
// products-sized batch, longer than that layer's math. Here element i of a
// call with key k is kept iff hash32(k, i) >= p * 2^32, where hash32 is a
// bijection of i for each k (multiply by an odd constant, xor the key,
// murmur3's finalizer), so the mask is exactly Bernoulli(1 - p) over the
// elements up to rounding of p, any range of elements can be computed by any
// thread (results do not depend on the thread count), and the backward pass
// recomputes the mask from (k, i) instead of storing it. One key per call
// comes from LibTorch's seeded generator, so runs are reproducible by seed.
#pragma once

#include <cstdint>

#include "models/cpu/spmm_kernel.h"  // Bf16, to_float, to_bf16

namespace dgcn::cpu {

// The keep threshold of drop probability p: p * 2^32, clamped.
uint32_t dropout_threshold(double p);  // p * 2^32, clamped

// y[i] = keep(i) ? max(x[i], 0) * scale : 0 for i in [begin, end).
void relu_dropout_forward(const float* x, float* y, uint64_t key, uint32_t threshold, float scale,
                          int64_t begin, int64_t end);
// dx[i] = y[i] > 0 ? dy[i] * scale : 0 (y > 0 exactly where the ReLU passed and the element was kept).
void relu_dropout_backward(const float* dy, const float* y, float* dx, float scale, int64_t begin,
                           int64_t end);

// y[i] = keep(i) ? x[i] * scale : 0; the backward pass is the same call on dy.
void dropout_apply(const float* x, float* y, uint64_t key, uint32_t threshold, float scale, int64_t begin,
                   int64_t end);

// The same on bf16 activations (Note [Mixed precision] in models/gcn.h):
// each element widened to float, the float kernel's arithmetic and mask
// (the same keep(i) as an fp32 call with this key), rounded once to nearest
// even; half the bytes of the float kernels and no cast passes around them.
void relu_dropout_forward(const Bf16* x, Bf16* y, uint64_t key, uint32_t threshold, float scale,
                          int64_t begin, int64_t end);
void relu_dropout_backward(const Bf16* dy, const Bf16* y, Bf16* dx, float scale, int64_t begin, int64_t end);

// The bias add fused in (Note [Fused bias, ReLU and dropout]), on rows
// [row_begin, row_end) of a row-major [rows x cols] bf16 activation:
// forward, y = relu_dropout(round(x + bias[col])) with bias holding
// bf16-representable floats, the same bits as a bf16 add followed by the
// call above (element i = row * cols + col keeps the same mask); backward,
// dx as above, and bias_grad[col] += dx[row, col] (widened, summed in fp32,
// row after row).
void bias_relu_dropout_forward(const Bf16* x, const float* bias, Bf16* y, int64_t cols, uint64_t key,
                               uint32_t threshold, float scale, int64_t row_begin, int64_t row_end);
void bias_relu_dropout_backward(const Bf16* dy, const Bf16* y, Bf16* dx, float* bias_grad, int64_t cols,
                                float scale, int64_t row_begin, int64_t row_end);

}  // namespace dgcn::cpu
