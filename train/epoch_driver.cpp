// See Note [Resume policy] in epoch_driver.h.
#include "train/epoch_driver.h"

#include <ATen/ATen.h>
#include <spdlog/spdlog.h>

#include <string>

#include "base/digest.h"
#include "train/checkpoint.h"

namespace dgcn {
namespace {

// Collective: throws on every rank unless every rank's digest is rank 0's
// (replicas that drifted apart mean a sync bug, not a result).
void check_replicas_agree(const std::string& digest, ProcessGroup& group) {
  const auto bits = static_cast<int64_t>(std::stoull(digest, nullptr, 16));
  at::Tensor t = at::full({1}, bits, at::TensorOptions().dtype(at::kLong)).to(group.device());
  group.broadcast(t, 0).wait();
  const bool same = t.cpu().item<int64_t>() == bits;
  const std::vector<double> differing = group.sum_over_ranks({same ? 0.0 : 1.0});
  TORCH_CHECK(differing[0] == 0, "run_epochs: the model replicas differ after training: ", differing[0],
              " rank(s) disagree with rank 0's param_digest (this rank: ", digest, ")");
}

}  // namespace

std::string param_digest(const torch::nn::Module& module) {
  Digest digest;
  for (const auto& p : module.parameters()) {
    const at::Tensor t = p.detach().to(at::kCPU).contiguous();
    digest.update(t.data_ptr(), static_cast<size_t>(t.numel()) * t.element_size());
  }
  return digest.hex();
}

EpochRunResult run_epochs(EpochTask& task, const EpochRunOptions& options, ProcessGroup& group,
                          const std::function<void(int64_t epoch)>& after_epoch) {
  TORCH_CHECK(!options.resume || !options.checkpoint_dir.empty(),
              "run_epochs: resume needs a checkpoint_dir to resume from");
  TORCH_CHECK(options.epochs >= 0, "run_epochs: epochs ", options.epochs, " is negative");
  EpochRunResult out;
  if (options.resume) {
    if (auto state = load_checkpoint(options.checkpoint_dir, task.module(), task.optimizer(), group)) {
      TORCH_CHECK(state->seed == static_cast<int64_t>(options.seed), "resume: the checkpoint in ",
                  options.checkpoint_dir, " was trained with seed ", state->seed, ", this run has seed ",
                  options.seed);
      out.first_epoch = state->epoch;
      task.restore_progress(state->epoch, state->extra);
      spdlog::info("resume: continuing after epoch {} (of {}) from {}", state->epoch, options.epochs,
                   options.checkpoint_dir);
    } else {
      spdlog::info("resume: no checkpoint in {}; starting from epoch 0", options.checkpoint_dir);
    }
  }

  for (int64_t epoch = out.first_epoch; epoch < options.epochs; ++epoch) {
    task.train_epoch(epoch);
    if (!options.checkpoint_dir.empty() && group.rank() == 0) {
      CheckpointState state;
      state.epoch = epoch + 1;
      state.seed = static_cast<int64_t>(options.seed);
      state.world_size = group.size();
      state.extra = task.progress();
      save_checkpoint(options.checkpoint_dir, task.module(), task.optimizer(), state);
    }
    if (after_epoch) after_epoch(epoch);
  }
  out.epochs_done = std::max(out.first_epoch, options.epochs);

  out.param_digest = param_digest(task.module());
  spdlog::info("param_digest {}", out.param_digest);
  if (group.size() > 1) check_replicas_agree(out.param_digest, group);
  if (out.first_epoch >= options.epochs) task.evaluate_now();  // a finished run resumed
  return out;
}

}  // namespace dgcn
