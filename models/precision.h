// The arithmetic a model runs in (--precision). fp32: everything in float32.
// bf16 (mixed precision, as torch.autocast): features, activations and the
// matrix products in bfloat16, the SpMM's sums in float32; the master
// weights, the optimizer state, the loss and the gradient all-reduce stay
// float32 (each layer casts its fp32 weight to bf16 in its forward, so
// autograd hands fp32 gradients to the optimizer). Note [Mixed precision]
// in models/gcn.h.
#pragma once

#include <string>

namespace dgcn {

enum class Precision { kFp32, kBf16 };

const char* precision_name(Precision p);          // "fp32", "bf16"
Precision parse_precision(const std::string& s);  // inverse; throws dgcn::Error on other names

// compute_dtype (models/gcn.h) is its LibTorch dtype.

}  // namespace dgcn
