#include "distributed/ddp.h"

#include <ATen/ATen.h>
#include <c10/util/strides.h>
#include <torch/csrc/autograd/utils/lambda_post_hook.h>
#include <torch/csrc/autograd/variable.h>

#include <chrono>
#include <map>

#include "base/timing.h"

namespace dgcn {
namespace {

// Broadcasts `tensors` from rank 0 in place, one flat tensor per dtype.
void broadcast_from_rank0(ProcessGroup& group, const std::vector<at::Tensor>& tensors) {
  std::map<c10::ScalarType, std::vector<at::Tensor>> by_dtype;
  for (const auto& t : tensors) by_dtype[t.scalar_type()].push_back(t);
  for (auto& [dtype, group_tensors] : by_dtype) {
    std::vector<at::Tensor> flat_parts;
    for (const auto& t : group_tensors) flat_parts.push_back(t.reshape(-1));
    at::Tensor flat = at::cat(flat_parts).contiguous();
    group.broadcast(flat, 0).wait();
    int64_t offset = 0;
    for (auto& t : group_tensors) {
      t.copy_(flat.narrow(0, offset, t.numel()).view_as(t));
      offset += t.numel();
    }
  }
}

// "[32, 8] Float": what the replica check compares of a tensor.
std::string shape_and_dtype(const at::Tensor& t) {
  return c10::str(t.sizes(), " ", t.scalar_type());
}

// A tensor shaped like `like` over flat[offset ...], sharing its storage but
// not an autograd view (Note [DDP gradient sync]).
at::Tensor alias_into(const at::Tensor& flat, int64_t offset, const at::Tensor& like) {
  at::Tensor alias = at::empty({0}, flat.options());
  alias.set_(flat.storage(), flat.storage_offset() + offset, like.sizes(),
             c10::contiguous_strides(like.sizes()));
  return alias;
}

}  // namespace

DistributedDataParallel::DistributedDataParallel(torch::nn::Module& module, ProcessGroup& group,
                                                 DdpOptions options)
    : group_(group) {
  for (auto& item : module.named_parameters(/*recurse=*/true)) {
    if (!item.value().requires_grad()) continue;
    names_.push_back(item.key());
    params_.push_back(item.value());
  }
  TORCH_CHECK(!params_.empty(), "DistributedDataParallel: the module has no parameter that requires grad");
  for (size_t i = 0; i < params_.size(); ++i) {
    const at::Tensor& p = params_[i];
    TORCH_CHECK(p.device() == group.device(), "DistributedDataParallel: parameter '", names_[i], "' is on ",
                p.device().str(), " but the ", backend_name(group.backend()), " process group works on ",
                group.device().str());
    TORCH_CHECK(p.scalar_type() == params_[0].scalar_type(), "DistributedDataParallel: parameter '",
                names_[i], "' is ", p.scalar_type(), " but '", names_[0], "' is ", params_[0].scalar_type(),
                "; all synchronized parameters must share one dtype");
    TORCH_CHECK(p.layout() == c10::kStrided, "DistributedDataParallel: parameter '", names_[i],
                "' is not dense");
  }

  if (group.size() > 1) {
    std::vector<ReplicaField> fields = options.replica_settings;
    for (size_t i = 0; i < params_.size(); ++i)
      fields.push_back({"param " + names_[i], shape_and_dtype(params_[i])});
    for (const auto& b : module.named_buffers(/*recurse=*/true)) {
      fields.push_back({"buffer " + b.key(), shape_and_dtype(b.value())});
    }
    const std::string differences = check_replicas(group, fields);
    TORCH_CHECK(differences.empty(), differences);
  }

  at::NoGradGuard no_grad;
  {
    std::vector<at::Tensor> state = params_;
    for (auto& b : module.buffers(/*recurse=*/true)) state.push_back(b);
    broadcast_from_rank0(group, state);
  }

  std::vector<int64_t> bytes;
  for (const auto& p : params_) bytes.push_back(p.numel() * static_cast<int64_t>(p.element_size()));
  assignment_ = assign_buckets(bytes, options.caps);
  bucket_of_.assign(params_.size(), -1);
  offset_of_.assign(params_.size(), 0);
  slots_.resize(params_.size());
  for (size_t b = 0; b < assignment_.size(); ++b) {
    Bucket bucket;
    bucket.params = assignment_[b];
    int64_t elements = 0;
    for (int64_t i : bucket.params) {
      bucket_of_[i] = static_cast<int64_t>(b);
      offset_of_[i] = elements;
      elements += params_[i].numel();
    }
    if (b + 1 == assignment_.size()) {
      used_offset_ = elements;
      elements += static_cast<int64_t>(params_.size());
    }
    bucket.flat = at::zeros({elements}, params_[0].options().requires_grad(false));
    for (int64_t i : bucket.params) slots_[i] = alias_into(bucket.flat, offset_of_[i], params_[i]);
    buckets_.push_back(std::move(bucket));
  }
  for (size_t i = 0; i < params_.size(); ++i) {
    if (params_[i].grad().defined()) adopt_grad(static_cast<int64_t>(i));
  }
  ready_.assign(params_.size(), 0);
  reset_step();

  for (size_t i = 0; i < params_.size(); ++i) {
    auto index = static_cast<int64_t>(i);
    std::shared_ptr<torch::autograd::Node> accumulator = torch::autograd::impl::grad_accumulator(params_[i]);
    TORCH_INTERNAL_ASSERT(accumulator, "no gradient accumulator for parameter ", names_[i]);
    hook_keys_.push_back(accumulator->add_post_hook(std::make_unique<torch::autograd::utils::LambdaPostHook>(
        [this, index](const torch::autograd::variable_list& outputs, const torch::autograd::variable_list&) {
          on_gradient_accumulated(index);
          return outputs;
        })));
    accumulators_.push_back(std::move(accumulator));
  }
}

DistributedDataParallel::~DistributedDataParallel() {
  for (size_t i = 0; i < accumulators_.size(); ++i) accumulators_[i]->del_post_hook(hook_keys_[i]);
}

bool DistributedDataParallel::grad_is_slot(int64_t index) const {
  const at::Tensor& grad = params_[index].grad();
  const at::Tensor& slot = slots_[index];
  return grad.defined() && grad.data_ptr() == slot.data_ptr() && grad.sizes() == slot.sizes() &&
         grad.strides() == slot.strides();
}

void DistributedDataParallel::adopt_grad(int64_t index) {
  if (grad_is_slot(index)) return;
  at::NoGradGuard no_grad;
  at::Tensor& param = params_[index];
  TORCH_CHECK(param.grad().layout() == c10::kStrided, "DistributedDataParallel: parameter '", names_[index],
              "' has a sparse gradient; only dense gradients are synchronized");
  slots_[index].copy_(param.grad());
  param.mutable_grad() = slots_[index];
}

void DistributedDataParallel::reset_step() {
  std::fill(ready_.begin(), ready_.end(), 0);
  for (auto& b : buckets_) b.pending = static_cast<int64_t>(b.params.size());
  buckets_.back().flat.narrow(0, used_offset_, static_cast<int64_t>(params_.size())).zero_();
  next_launch_ = 0;
}

void DistributedDataParallel::on_gradient_accumulated(int64_t index) {
  MutexLock lock(&mutex_);
  if (!sync_enabled_) return;  // Note [Accumulation and no_sync]
  TORCH_CHECK(!ready_[index], "DistributedDataParallel: parameter '", names_[index],
              "' got a second gradient before finish_backward(); call finish_backward() after every "
              "backward pass, or accumulate inside no_sync()");
  adopt_grad(index);
  ready_[index] = 1;
  buckets_.back().flat[used_offset_ + index].fill_(1);
  if (--buckets_[bucket_of_[index]].pending == 0) launch_ready_buckets(/*during_backward=*/true);
}

void DistributedDataParallel::launch_ready_buckets(bool during_backward) {
  while (next_launch_ < static_cast<int64_t>(buckets_.size()) && buckets_[next_launch_].pending == 0) {
    launch(next_launch_++, during_backward);
  }
}

void DistributedDataParallel::launch(int64_t index, bool during_backward) {
  Bucket& bucket = buckets_[index];
  if (bucket.pending > 0) {
    // Called from finish_backward(): these parameters got no gradient here
    // this step (Note [Unused parameters]); their slot is their .grad, or 0.
    at::NoGradGuard no_grad;
    for (int64_t i : bucket.params) {
      if (ready_[i]) continue;
      if (params_[i].grad().defined()) {
        adopt_grad(i);
      } else {
        slots_[i].zero_();
      }
    }
    bucket.pending = 0;
  }
  bucket.work = group_.allreduce_sum(bucket.flat);
  stats_.buckets_launched++;
  stats_.launched_during_backward += during_backward ? 1 : 0;
  stats_.bytes_reduced += bucket.flat.numel() * static_cast<int64_t>(bucket.flat.element_size());
}

void DistributedDataParallel::finish_backward() {
  MutexLock lock(&mutex_);
  if (!sync_enabled_) return;
  while (next_launch_ < static_cast<int64_t>(buckets_.size()))
    launch(next_launch_++, /*during_backward=*/false);

  auto start = std::chrono::steady_clock::now();
  for (auto& b : buckets_) b.work.wait();
  stats_.wait_seconds += seconds_since(start);

  at::NoGradGuard no_grad;
  const double world = static_cast<double>(group_.size());
  if (group_.size() > 1) {
    for (auto& b : buckets_) b.flat.div_(world);  // every .grad is its slot: averaged in place
  }
  at::Tensor used = buckets_.back()
                        .flat.narrow(0, used_offset_, static_cast<int64_t>(params_.size()))
                        .to(at::kCPU, at::kDouble);
  const double* used_on = used.data_ptr<double>();
  for (size_t i = 0; i < params_.size(); ++i) {
    // Used on some rank but not here, with no .grad of its own: it gets the average.
    if (used_on[i] > 0 && !params_[i].grad().defined()) params_[i].mutable_grad() = slots_[i];
  }
  stats_.syncs++;
  reset_step();
}

void DistributedDataParallel::backward(const at::Tensor& loss) {
  loss.backward();
  finish_backward();
}

DistributedDataParallel::Stats DistributedDataParallel::stats() const {
  MutexLock lock(&mutex_);
  return stats_;
}

DistributedDataParallel::NoSync::NoSync(DistributedDataParallel& ddp) : ddp_(ddp) {
  MutexLock lock(&ddp_.mutex_);
  TORCH_CHECK(
      std::none_of(ddp_.ready_.begin(), ddp_.ready_.end(), [](char r) { return r != 0; }),
      "DistributedDataParallel::no_sync(): entered between a backward pass and its finish_backward()");
  previous_ = ddp_.sync_enabled_;
  ddp_.sync_enabled_ = false;
}

DistributedDataParallel::NoSync::~NoSync() {
  MutexLock lock(&ddp_.mutex_);
  ddp_.sync_enabled_ = previous_;
}

}  // namespace dgcn
