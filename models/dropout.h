// Dropout for the GCN model: ReLU fused with dropout after every hidden
// layer, and dropout alone on the input features, recorded for autograd. On
// the CPU one pass with a counter-based mask that the backward pass
// recomputes instead of storing (Note [Counter-based dropout] in
// cpu/dropout_kernel.h); elsewhere LibTorch's relu and dropout. The mask's
// key comes from LibTorch's generator, so runs are reproducible by seed.
#pragma once

#include <ATen/core/Tensor.h>

namespace dgcn {

// ReLU followed by dropout with drop probability p (kept elements scaled by
// 1 / (1 - p)). Not training, or p == 0: ReLU only.
at::Tensor relu_dropout(const at::Tensor& x, double p, bool training);

// The gradient of relu_dropout from its output y: dy * scale where y > 0,
// else 0 (the output is positive exactly where x was and the mask kept it;
// scale 1 / (1 - p), or 1 not training). One pass on float32 CPU tensors
// (what relu_dropout's own backward runs); LibTorch's ops elsewhere.
at::Tensor relu_dropout_backward(const at::Tensor& y, const at::Tensor& dy, double scale);

// relu_dropout(y + bias), with y bf16 [rows x cols] and bias a float32
// [cols] parameter: on the CPU, training, with p > 0, one pass forward and
// one backward (Note [Fused bias, ReLU and dropout]); elsewhere the unfused
// ops, the bias cast to y's dtype.
at::Tensor bias_relu_dropout(const at::Tensor& y, const at::Tensor& bias, double p, bool training);

// Note [Fused bias, ReLU and dropout]
// A bf16 GCN layer's output y gets its bias, then ReLU and dropout. Unfused,
// the bias add is a pass over the activation forward (or rides in addmm),
// and its gradient, LibTorch's bf16 sum over the rows, a pass backward: on a
// products batch the largest hidden activation is ~140k x 128, and those
// passes cost about as much as ReLU + dropout itself (docs/training.md). The
// fused op reads y once forward, rounds y + bias to bf16 exactly as the add
// did (so its output has the bits of the unfused ops), and backward writes
// dx and sums it into the bias gradient in the same pass: in fp32, rows in
// fixed blocks whose partial sums are added in block order, so the result
// does not depend on the thread count. Only bf16 takes it: an fp32 model's
// bias gradient keeps LibTorch's summation, and with it its bits.

// Dropout alone (input features), same scheme; not training or p == 0: x itself.
at::Tensor dropout_features(const at::Tensor& x, double p, bool training);

}  // namespace dgcn
