// See Note [Resume policy] in epoch_driver.h.
#include "train/epoch_driver.h"

#include <ATen/ATen.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>

#include "base/digest.h"
#include "train/checkpoint.h"
#include "train/checkpoint_writer.h"
#include "train/run_config.h"

namespace dgcn {
namespace {

// Collective: throws on every rank unless every rank's digest is rank 0's
// (replicas that drifted apart mean a sync bug, not a result).
void check_replicas_agree(const std::string& digest, Collectives& ranks) {
  const std::vector<std::string> digests = all_gather_text(ranks, digest);
  const auto differing = std::count_if(digests.begin(), digests.end(),
                                       [&](const std::string& d) { return d != digests.front(); });
  TORCH_CHECK(differing == 0, "run_epochs: the model replicas differ after training: ", differing,
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

EpochRunResult run_epochs(EpochTask& task, const EpochRunOptions& options, Collectives& ranks,
                          const std::function<void(int64_t epoch)>& after_epoch) {
  TORCH_CHECK(!options.resume || !options.checkpoint_dir.empty(),
              "run_epochs: resume needs a checkpoint_dir to resume from");
  TORCH_CHECK(options.epochs >= 0, "run_epochs: epochs ", options.epochs, " is negative");
  const int64_t every = options.checkpoint_every_batches;
  TORCH_CHECK(every >= 0, "run_epochs: checkpoint_every_batches ", every, " is negative");
  TORCH_CHECK(every == 0 || !options.checkpoint_dir.empty(),
              "run_epochs: checkpoints inside epochs need a checkpoint_dir");
  TORCH_CHECK(every == 0 || task.resumes_inside_epochs(),
              "run_epochs: this training cannot resume inside an epoch, so it takes no in-epoch checkpoints");
  EpochRunResult out;
  std::optional<EpochStart> start;
  if (options.resume) {
    if (auto checkpoint = read_checkpoint(options.checkpoint_dir, ranks)) {
      const ConfigComparison diff = compare_configs(checkpoint->state.config, options.config);
      TORCH_CHECK(diff.forbidden.empty(), "resume: ", checkpoint->what,
                  " belongs to another run: ", describe_changes(diff.forbidden),
                  " (resume with the same settings, or train into a new checkpoint folder)");
      if (!diff.allowed.empty())
        spdlog::info("resume: changed since the checkpoint: {}", describe_changes(diff.allowed));
      const CheckpointState& state = checkpoint->state;
      TORCH_CHECK(state.batch == 0 || task.resumes_inside_epochs(), "resume: ", checkpoint->what,
                  " was written inside an epoch, which this training cannot resume");
      TORCH_CHECK(state.epoch <= options.epochs, "resume: ", checkpoint->what, " has finished epoch ",
                  state.epoch, ", past the ", options.epochs,
                  " epochs this run asks for; nothing is left to train (ask for ", state.epoch + 1,
                  " epochs or more to go on, or ", state.epoch, " to evaluate it)");
      restore_checkpoint(*checkpoint, task.module(), &task.optimizer());
      out.epochs_before = state.epoch;
      task.restore_progress(state.epoch, state.extra);
      TORCH_CHECK(state.batch == 0 || state.epoch < options.epochs, "resume: ", checkpoint->what, " is ",
                  state.batch, " batches into epoch ", state.epoch + 1, ", past the ", options.epochs,
                  " epochs this run trains");
      if (state.batch > 0) {
        start = EpochStart{state.batch, state.mid_epoch};
        spdlog::info("resume: continuing after batch {} of epoch {} (of {}) from {}", state.batch,
                     state.epoch + 1, options.epochs, checkpoint->what);
      } else {
        spdlog::info("resume: continuing after epoch {} (of {}) from {}", state.epoch, options.epochs,
                     checkpoint->what);
      }
    } else {
      spdlog::info("resume: no checkpoint in {}; starting at epoch 1", options.checkpoint_dir);
    }
  }

  // Rank 0 writes; the files are written while training goes on.
  std::unique_ptr<CheckpointWriter> writer;
  if (!options.checkpoint_dir.empty() && ranks.rank() == 0) {
    writer = std::make_unique<CheckpointWriter>(options.checkpoint_dir);
  }
  auto checkpoint = [&](int64_t epochs_done, int64_t batch, std::vector<double> mid, bool best) {
    if (!writer) return;
    CheckpointState state;
    state.epoch = epochs_done;
    state.batch = batch;
    state.mid_epoch = std::move(mid);
    state.seed = static_cast<int64_t>(options.seed);
    state.world_size = ranks.size();
    state.config = options.config;
    state.extra = task.progress();
    writer->save(state, encode_checkpoint(task.module(), task.optimizer(), state), best);
  };

  for (int64_t epoch = out.epochs_before; epoch < options.epochs; ++epoch) {
    const EpochStart* from = epoch == out.epochs_before && start ? &*start : nullptr;
    task.train_epoch(epoch, from, [&](int64_t done, int64_t total) {
      if (every == 0 || done % every != 0 || done == total) return;
      std::vector<double> mid = task.mid_epoch_state();  // collective
      checkpoint(epoch, done, std::move(mid), false);
    });
    checkpoint(epoch + 1, 0, {}, task.improved());
    if (after_epoch) after_epoch(epoch);
  }
  out.epochs_done = std::max(out.epochs_before, options.epochs);
  if (writer) {
    writer->flush();
    out.checkpoint_wait_s = writer->waited_seconds();
  }

  out.param_digest = param_digest(task.module());
  spdlog::info("param_digest {}", out.param_digest);
  if (ranks.size() > 1) check_replicas_agree(out.param_digest, ranks);
  if (out.epochs_before >= options.epochs) task.evaluate_now();  // a finished run resumed
  return out;
}

}  // namespace dgcn
