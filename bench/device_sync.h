// The benches' clock stop: a CUDA kernel launch returns before the kernel ends.
#pragma once

#include <torch/cuda.h>
#include <torch/torch.h>

namespace dgcn::bench {

// Waits for the device's queued work, so a timer read after it counts it.
inline void sync(const torch::Device& device) {
  if (device.is_cuda()) torch::cuda::synchronize();
}

}  // namespace dgcn::bench
