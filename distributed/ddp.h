// Data-parallel gradient sync (the counterpart of PyTorch's
// DistributedDataParallel): every rank holds a full replica of the model,
// trains on its own shard, and after each backward pass every parameter's
// gradient is the average over ranks, so all replicas take the same step.
//
// Use:
//   DistributedDataParallel ddp(*model, group);   // broadcasts rank 0's weights
//   for (batch : my_shard) {
//     optimizer.zero_grad();
//     ddp.backward(loss_of(batch));   // = loss.backward(); ddp.finish_backward();
//     optimizer.step();
//   }
//
// Note [DDP gradient sync]
// Parameters are grouped into buckets by assign_buckets() (reverse
// registration order, ~1 MiB first bucket then ~25 MiB); each parameter has a
// slot in its bucket's flat tensor. Every .grad is an alias of its slot
// (gradient as bucket view), so autograd accumulates straight into the bucket.
// A post-hook on each parameter's gradient accumulator fires once autograd has
// accumulated that .grad and marks the slot ready (when .grad is a tensor of
// its own - the first step, or after zero_grad() set it to none - the hook
// copies it into the slot once and makes .grad the alias again). When a
// bucket's last slot is ready, its async all-reduce starts at once, while
// backward goes on computing earlier layers. Buckets are launched strictly in
// bucket order (a full bucket waits for the ones before it), so every rank
// issues the same collectives in the same order whatever order its gradients
// arrive in. finish_backward() launches what is left, waits, and divides each
// bucket by the world size, which averages every .grad in place.
//
// The aliases are made with set_() on the bucket's storage, not with narrow():
// optimizer.zero_grad(/*set_to_none=*/false) calls detach_() on every .grad,
// which autograd refuses for views. With LibTorch 2.x's default
// zero_grad() (set_to_none) a .grad is undefined at the next backward, and
// the hook adopts the fresh one into its slot (one copy).
//
// Note [Unused parameters]
// A parameter may get no gradient on some ranks (a branch not taken). Its
// slot holds its current .grad there (zero after zero_grad(), zeroed when
// .grad is none), so the average is what one process would compute on the
// union of the shards. Whether it was used anywhere travels in the last
// bucket (one extra element per parameter, 1 = used here), which costs no
// extra collective: the last bucket is launched only after all others, when
// every parameter's status is known. A parameter used on no rank keeps an
// undefined .grad undefined, as it would in one process.
//
// Note [Accumulation and no_sync]
// Inside no_sync() the hooks do nothing and autograd keeps accumulating into
// .grad, that is into the slots; the next synchronized backward averages
// everything accumulated since the last optimizer step.
#pragma once

#include <torch/csrc/autograd/function.h>
#include <torch/nn/module.h>

#include <string>
#include <vector>

#include "base/mutex.h"
#include "distributed/buckets.h"
#include "distributed/process_group.h"
#include "distributed/replica_check.h"

namespace dgcn {

struct DdpOptions {
  BucketCaps caps;
  // Settings every rank must share (dataset digest, model and sampling
  // settings), checked with the parameters before the first broadcast.
  std::vector<ReplicaField> replica_settings;
};

class DistributedDataParallel {
 public:
  // Collective. Takes the parameters of `module` that require grad (all on
  // group.device(), one dtype) and its buffers, checks that every rank holds
  // the same names, shapes and dtypes and options.replica_settings (a
  // difference is a c10::Error on every rank naming the rank, the field and
  // both values: distributed/replica_check.h), broadcasts them from rank 0,
  // builds the buckets and registers the gradient hooks. `module` and `group`
  // must outlive this object.
  DistributedDataParallel(torch::nn::Module& module, ProcessGroup& group, DdpOptions options = {});
  // Removes the hooks. Not during a backward pass.
  ~DistributedDataParallel();
  DistributedDataParallel(const DistributedDataParallel&) = delete;
  DistributedDataParallel& operator=(const DistributedDataParallel&) = delete;

  // Collective, once after each backward pass (and before optimizer.step()):
  // completes the gradient sync of that pass (Note [DDP gradient sync]).
  // Inside no_sync() it does nothing. A second backward pass before this call
  // is an error (a parameter would get two gradients).
  void finish_backward();
  // loss.backward(), then finish_backward().
  void backward(const at::Tensor& loss);

  // While the returned guard lives, backward passes accumulate gradients
  // locally without communication (Note [Accumulation and no_sync]). Enter it
  // between steps, not during backward.
  class NoSync {
   public:
    explicit NoSync(DistributedDataParallel& ddp);
    ~NoSync();
    NoSync(const NoSync&) = delete;
    NoSync& operator=(const NoSync&) = delete;

   private:
    DistributedDataParallel& ddp_;
    bool previous_;
  };
  [[nodiscard]] NoSync no_sync() { return NoSync(*this); }

  // The bucket assignment (indices into parameter_names()), in launch order.
  const std::vector<std::vector<int64_t>>& buckets() const { return assignment_; }
  const std::vector<std::string>& parameter_names() const { return names_; }

  struct Stats {
    int64_t syncs = 0;                     // finish_backward() calls that communicated
    int64_t buckets_launched = 0;          // all-reduces started
    int64_t launched_during_backward = 0;  // of those, started by a hook, before finish_backward()
    int64_t bytes_reduced = 0;             // payload of those all-reduces
    double wait_seconds = 0;               // time finish_backward() spent waiting for them
  };
  Stats stats() const;

 private:
  struct Bucket {
    at::Tensor flat;              // gradient slots (+ one used-flag per parameter in the last bucket)
    std::vector<int64_t> params;  // parameter indices
    int64_t pending = 0;          // slots not ready yet this step
    Work work;
  };

  void on_gradient_accumulated(int64_t index);
  // Makes params_[index].grad() the alias of its slot, copying a .grad of its own in.
  void adopt_grad(int64_t index);
  bool grad_is_slot(int64_t index) const;
  void launch_ready_buckets(bool during_backward) EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  void launch(int64_t bucket, bool during_backward) EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  void reset_step() EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  ProcessGroup& group_;
  std::vector<at::Tensor> params_;
  std::vector<std::string> names_;
  std::vector<std::vector<int64_t>> assignment_;
  std::vector<int64_t> bucket_of_;  // per parameter
  std::vector<int64_t> offset_of_;  // per parameter: first element of its slot
  std::vector<at::Tensor> slots_;   // per parameter: alias of its slot, shaped like the parameter
  // The gradient accumulators carrying our post-hooks, held so autograd keeps
  // them (it only holds them weakly), and the hooks' keys.
  std::vector<std::shared_ptr<torch::autograd::Node>> accumulators_;
  std::vector<uintptr_t> hook_keys_;
  int64_t used_offset_ = 0;  // where the used flags start in the last bucket

  // Gradient hooks may run on autograd's threads.
  mutable Mutex mutex_;
  std::vector<Bucket> buckets_ GUARDED_BY(mutex_);
  std::vector<char> ready_ GUARDED_BY(mutex_);  // per parameter: gradient accumulated this step
  int64_t next_launch_ GUARDED_BY(mutex_) = 0;
  bool sync_enabled_ GUARDED_BY(mutex_) = true;
  Stats stats_ GUARDED_BY(mutex_);
};

}  // namespace dgcn
