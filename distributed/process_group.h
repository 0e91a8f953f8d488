// Collectives over the ranks of a job: one small interface returning async
// handles, implemented by c10d's ProcessGroupGloo (CPU tensors) and
// ProcessGroupNCCL (CUDA tensors, one GPU per local rank). Nothing outside
// process_group.cpp sees c10d or knows which backends exist.
//
// Every collective must be issued in the same order on every rank (c10d
// matches them by order); the DDP module guarantees that for its buckets.
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/core/Device.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "distributed/rank_env.h"
#include "partition/collectives.h"

namespace dgcn {

enum class CommBackend { kGloo, kNccl };
const char* backend_name(CommBackend backend);  // "gloo", "nccl"

// "gloo", "nccl", or "auto" (nccl when `device` is CUDA, gloo otherwise).
// Throws c10::Error on another name, and for nccl in a build without it.
CommBackend parse_backend(const std::string& name, const c10::Device& device);

struct ProcessGroupOptions {
  CommBackend backend = CommBackend::kGloo;
  // Rendezvous and per-collective timeout; a collective that waits longer
  // fails with an error naming the operation and the rank.
  std::chrono::milliseconds timeout{std::chrono::seconds(60)};
};

// An in-flight collective. Default-constructed: already complete.
class Work {
 public:
  Work();
  ~Work();
  Work(Work&&) noexcept;
  Work& operator=(Work&&) noexcept;

  // Blocks until the collective has finished (NCCL: until the current CUDA
  // stream is ordered after it). Throws c10::Error naming the operation,
  // backend and rank when it failed or timed out. Later calls return at once.
  void wait();
  bool pending() const;

 private:
  friend class ProcessGroup;
  struct State;
  std::unique_ptr<State> state_;
};

// A process group is also the partitioned graph's Collectives
// (partition/collectives.h): exchange() moves byte messages in two
// all-to-alls (sizes, then bytes; through the GPU for NCCL).
class ProcessGroup final : public Collectives {
 public:
  // Collective: every rank of `env` must call it. Rendezvous is c10d's
  // TCPStore at env.master_addr:master_port, hosted by rank 0 (or by torchrun's
  // agent, see RankEnv::use_agent_store); a single process with no rank
  // environment uses an in-process store and opens no port. For NCCL, selects
  // cuda:LOCAL_RANK as this process's current device.
  static std::unique_ptr<ProcessGroup> create(const RankEnv& env, const ProcessGroupOptions& options);
  // Without shutdown(): aborts the backend (no wait for peers); call
  // shutdown() for a clean end.
  ~ProcessGroup();

  int rank() const override;
  int size() const override;
  CommBackend backend() const;
  // Where tensors handed to the collectives must live: CPU for Gloo,
  // cuda:LOCAL_RANK for NCCL.
  c10::Device device() const;

  // Async, in place: every rank's `tensor` becomes the element-wise sum over
  // ranks. `tensor` must be dense, contiguous and on device(), and must stay
  // alive and untouched until wait() returns.
  Work allreduce_sum(at::Tensor tensor);
  // Async, in place: every rank's `tensor` becomes root's.
  Work broadcast(at::Tensor tensor, int root);
  // Async all-to-all of 1-D tensors on device(): rank q receives
  // input[sum(input_splits[:q]) .. + input_splits[q]) into its output slice
  // for this rank (output_splits[r] elements from rank r). Both tensors
  // must stay alive and untouched until wait() returns.
  Work alltoall(at::Tensor output, at::Tensor input, std::vector<int64_t> output_splits,
                std::vector<int64_t> input_splits);
  // Blocks until every rank has reached it.
  void barrier() override;
  // Blocking: element-wise sums of `values` over ranks (float64), e.g. metric
  // counters. Every rank must pass the same number of values.
  std::vector<double> sum(std::vector<double> values) override;
  // Blocking: every rank's message to every rank (Collectives::exchange).
  // Throws dgcn::Error naming the collective and the rank when it fails.
  void exchange(const Messages& send, Messages& received) override;

  // Collective: waits for every rank (barrier), then releases the backend and
  // the store. Idempotent; no collective may follow.
  void shutdown();

  // Collective: another group of the same ranks and backend over this
  // group's rendezvous store (keys under `name`), with its own connections
  // and collective order, for a second thread that issues collectives of its
  // own (the partitioned loader's exchanges run beside the training step's
  // all-reduces). Shut it down before this one.
  std::unique_ptr<ProcessGroup> another(const std::string& name);

 private:
  struct Impl;
  explicit ProcessGroup(std::unique_ptr<Impl> impl);
  static std::unique_ptr<ProcessGroup> over_store(std::unique_ptr<Impl> impl, const RankEnv& env,
                                                  const ProcessGroupOptions& options);
  std::unique_ptr<Impl> impl_;
};

}  // namespace dgcn
