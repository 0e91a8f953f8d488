// What the LibTorch mains (dgcn-train, dgcn-predict, dgcn-mnist, the
// benches) share beyond apps/cli/cli.h: c10's messages without their C++
// backtrace, and --device / --backend turned into LibTorch's terms with the
// same checks and words in every binary. Header-only: each main is one
// translation unit that sees LibTorch anyway.
#pragma once

#include <c10/core/Device.h>
#include <c10/util/Exception.h>
#include <torch/cuda.h>

#include <exception>
#include <string>

#include "apps/cli/cli.h"
#include "distributed/process_group.h"
#include "distributed/rank_env.h"
#include "models/spmm.h"

namespace dgcn::cli {

inline std::string torch_message(const std::exception& e) {
  if (const auto* c = dynamic_cast<const c10::Error*>(&e)) return c->what_without_backtrace();
  return e.what();
}

// --device cpu|cuda|cuda:N for rank `env`: cuda puts local rank r on GPU r;
// cuda:N needs one rank per node. Throws UsageError when this build or
// machine has no GPU, naming what to do. `sparse`: the job runs our SpMM,
// which needs dgcn's CUDA glue too, not only a CUDA LibTorch.
inline c10::Device device_for_rank(const std::string& device, const RankEnv& env, bool sparse = true) {
  const int gpu = device_index(device, env.local_rank);
  if (gpu < 0) return c10::Device(c10::DeviceType::CPU);
  if (device != "cuda" && env.local_world_size > 1) {
    throw UsageError(
        fmt::format("--device {}: one GPU for {} ranks on this node; use --device cuda (rank r on "
                    "cuda:r)",
                    device, env.local_world_size));
  }
  if (!torch::cuda::is_available() || (sparse && !spmm_has_cuda())) {
    throw UsageError(fmt::format(
        "--device {}: needs a GPU and a build against a CUDA LibTorch, and {} (--version says what this "
        "build "
        "has; docs/building.md says how to build for CUDA)",
        device,
        torch::cuda::is_available() ? "this build's SpMM has no CUDA kernels" : "LibTorch sees no GPU here"));
  }
  return c10::Device(c10::DeviceType::CUDA, static_cast<c10::DeviceIndex>(gpu));
}

// --backend auto|gloo|nccl for `device`.
inline CommBackend backend_flag(const std::string& backend, const c10::Device& device) {
  try {
    return parse_backend(backend, device);
  } catch (const c10::Error& e) {
    throw UsageError(fmt::format("--backend {}: {}", backend, e.what_without_backtrace()));
  }
}

}  // namespace dgcn::cli
