#include "distributed/gcn_train.h"

#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include "distributed/checkpoint.h"

namespace dgcn {
namespace {

// CheckpointState::extra keys: the best-validation record, so a resumed run
// reports the best epoch over the whole run.
constexpr const char* kBestValid = "best_valid_metric";
constexpr const char* kTestAtBest = "test_at_best_valid";
constexpr const char* kBestEpoch = "best_epoch";

double extra_or(const CheckpointState& state, const char* key, double fallback) {
  auto it = state.extra.find(key);
  return it == state.extra.end() ? fallback : it->second;
}

// Collective: throws on every rank unless every rank's digest is rank 0's
// (replicas that drifted apart mean a sync bug, not a result).
void check_replicas_agree(const std::string& digest, ProcessGroup& group) {
  const auto bits = static_cast<int64_t>(std::stoull(digest, nullptr, 16));
  at::Tensor t = at::full({1}, bits, at::TensorOptions().dtype(at::kLong)).to(group.device());
  group.broadcast(t, 0).wait();
  const bool same = t.cpu().item<int64_t>() == bits;
  const std::vector<double> differing = group.sum_over_ranks({same ? 0.0 : 1.0});
  TORCH_CHECK(differing[0] == 0, "train_gcn: the model replicas differ after training: ", differing[0],
              " rank(s) disagree with rank 0's param_digest (this rank: ", digest, ")");
}

}  // namespace

DdpGradSync::DdpGradSync(ProcessGroup& group, DdpOptions options) : group_(group), options_(options) {}

DdpGradSync::~DdpGradSync() = default;

void DdpGradSync::attach(torch::nn::Module& model) {
  TORCH_CHECK(!ddp_, "DdpGradSync::attach: already attached to a model");
  ddp_ = std::make_unique<DistributedDataParallel>(model, group_, options_);
}

void DdpGradSync::finish_backward() {
  TORCH_CHECK(ddp_, "DdpGradSync::finish_backward: attach() a model first");
  ddp_->finish_backward();
}

void DdpGradSync::all_reduce_sum(std::vector<double>& values) {
  values = group_.sum_over_ranks(std::move(values));
}

void DdpGradSync::barrier() {
  group_.barrier();
}

GcnRunSummary train_gcn(const GraphStore& store, TrainOptions options, const GcnRunOptions& run,
                        ProcessGroup& group, const GcnEpochCallback& on_epoch) {
  TORCH_CHECK(!run.resume || !run.checkpoint_dir.empty(), "train_gcn: --resume needs --checkpoint DIR");
  options.rank = group.rank();
  options.world_size = group.size();
  // One process needs no gradient sync; the group still serves the checkpoints.
  const bool distributed = group.size() > 1;
  TORCH_CHECK(!distributed || options.device == group.device(), "train_gcn: the ",
              backend_name(group.backend()), " backend all-reduces tensors on ", group.device().str(),
              ", but training runs on ", options.device.str(),
              " (use --backend nccl with --device cuda, gloo with --device cpu)");

  DdpGradSync sync(group);
  Trainer trainer(store, options, distributed ? &sync : nullptr);
  GcnRunSummary out;
  out.world_size = group.size();
  if (run.resume) {
    if (auto state = load_checkpoint(run.checkpoint_dir, *trainer.model(), trainer.optimizer(), group)) {
      // Note [Trainer randomness]: the seed is part of the state; another
      // seed would continue a different run.
      TORCH_CHECK(state->seed == static_cast<int64_t>(options.seed), "resume: the checkpoint in ",
                  run.checkpoint_dir, " was trained with --seed ", state->seed, ", this run has --seed ",
                  options.seed);
      out.first_epoch = state->epoch;
      trainer.restore_progress(state->epoch, extra_or(*state, kBestValid, 0),
                               extra_or(*state, kTestAtBest, 0),
                               static_cast<int64_t>(extra_or(*state, kBestEpoch, -1)));
      spdlog::info("resume: continuing after epoch {} (of {}) from {}", state->epoch, options.epochs,
                   run.checkpoint_dir);
    } else {
      spdlog::info("resume: no checkpoint in {}; starting from epoch 0", run.checkpoint_dir);
    }
  }

  for (int64_t epoch = out.first_epoch; epoch < options.epochs; ++epoch) {
    const EpochReport r = trainer.train_epoch(epoch, [&](int64_t b, int64_t n) {
      if (group.rank() == 0) spdlog::info("epoch {:>3}  batch {}/{}", epoch, b, n);
    });
    if (!run.checkpoint_dir.empty() && group.rank() == 0) {
      const TrainSummary s = trainer.summary();
      CheckpointState state;
      state.epoch = epoch + 1;
      state.seed = static_cast<int64_t>(options.seed);
      state.world_size = group.size();
      state.extra = {{kBestValid, s.best_valid_metric},
                     {kTestAtBest, s.test_at_best_valid},
                     {kBestEpoch, static_cast<double>(s.best_epoch)}};
      save_checkpoint(run.checkpoint_dir, *trainer.model(), trainer.optimizer(), state);
    }
    if (on_epoch) on_epoch(r, trainer);
  }

  out.train = trainer.summary();
  spdlog::info("param_digest {}", out.train.param_digest);
  if (distributed) check_replicas_agree(out.train.param_digest, group);
  if (out.first_epoch >= options.epochs && options.eval_mode != EvalMode::kNone) {
    // Nothing left to train (a finished run resumed): report the model as it is.
    auto [valid, test] = trainer.evaluate();
    out.train.valid_metric = valid;
    out.train.test_metric = test;
  }
  return out;
}

}  // namespace dgcn
