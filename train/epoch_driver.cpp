// See Note [Resume policy] in epoch_driver.h.
#include "train/epoch_driver.h"

#include <ATen/ATen.h>
#include <spdlog/spdlog.h>

#include <string>

#include "base/digest.h"
#include "train/checkpoint.h"
#include "train/run_config.h"

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
    if (auto checkpoint = read_checkpoint(options.checkpoint_dir, group)) {
      const ConfigComparison diff = compare_configs(checkpoint->state.config, options.config);
      TORCH_CHECK(diff.forbidden.empty(), "resume: ", checkpoint->what,
                  " belongs to another run: ", describe_changes(diff.forbidden),
                  " (resume with the same settings, or train into a new checkpoint folder)");
      if (!diff.allowed.empty())
        spdlog::info("resume: changed since the checkpoint: {}", describe_changes(diff.allowed));
      restore_checkpoint(*checkpoint, task.module(), &task.optimizer());
      out.epochs_before = checkpoint->state.epoch;
      task.restore_progress(checkpoint->state.epoch, checkpoint->state.extra);
      spdlog::info("resume: continuing after epoch {} (of {}) from {}", checkpoint->state.epoch,
                   options.epochs, checkpoint->what);
    } else {
      spdlog::info("resume: no checkpoint in {}; starting at epoch 1", options.checkpoint_dir);
    }
  }

  for (int64_t epoch = out.epochs_before; epoch < options.epochs; ++epoch) {
    task.train_epoch(epoch);
    if (!options.checkpoint_dir.empty() && group.rank() == 0) {
      CheckpointState state;
      state.epoch = epoch + 1;
      state.seed = static_cast<int64_t>(options.seed);
      state.world_size = group.size();
      state.config = options.config;
      state.extra = task.progress();
      save_checkpoint(options.checkpoint_dir, task.module(), task.optimizer(), state, task.improved());
    }
    if (after_epoch) after_epoch(epoch);
  }
  out.epochs_done = std::max(out.epochs_before, options.epochs);

  out.param_digest = param_digest(task.module());
  spdlog::info("param_digest {}", out.param_digest);
  if (group.size() > 1) check_replicas_agree(out.param_digest, group);
  if (out.epochs_before >= options.epochs) task.evaluate_now();  // a finished run resumed
  return out;
}

}  // namespace dgcn
