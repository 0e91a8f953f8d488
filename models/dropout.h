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

// Dropout alone (input features), same scheme; not training or p == 0: x itself.
at::Tensor dropout_features(const at::Tensor& x, double p, bool training);

}  // namespace dgcn
