#include "train/gcn_run.h"

#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include <map>
#include <string>
#include <tuple>

#include "base/version.h"
#include "train/epoch_driver.h"
#include "train/model_record.h"
#include "train/optimizer.h"
#include "train/run_config.h"
#include "train/start_gate.h"

namespace dgcn {
namespace {

// The trainer's progress kept in a checkpoint's extra scalars: the
// best-validation record, so a resumed run reports the best epoch over the
// whole run.
constexpr const char* kBestValid = "best_valid_metric";
constexpr const char* kTestAtBest = "test_at_best_valid";
constexpr const char* kBestEpoch = "best_epoch";

double value_or(const std::map<std::string, double>& values, const char* key, double fallback) {
  auto it = values.find(key);
  return it == values.end() ? fallback : it->second;
}

class GcnEpochTask final : public EpochTask {
 public:
  GcnEpochTask(Trainer& trainer, const ProcessGroup& group, const GcnEpochCallback& on_epoch)
      : trainer_(trainer), group_(group), on_epoch_(on_epoch) {}

  torch::nn::Module& module() override { return trainer_.model(); }
  torch::optim::Optimizer& optimizer() override { return trainer_.optimizer(); }

  void train_epoch(int64_t epoch, const EpochStart* start, const AfterBatch& after_batch) override {
    last_ = trainer_.train_epoch(
        epoch,
        [&](int64_t b, int64_t n) {
          if (group_.rank() == 0) spdlog::info("epoch {:>3}  batch {}/{}", epoch + 1, b, n);
        },
        start, after_batch);
  }
  bool resumes_inside_epochs() const override { return true; }
  std::vector<double> mid_epoch_state() override { return trainer_.mid_epoch_state(); }
  bool improved() const override { return trainer_.improved(); }
  void evaluate_now() override {
    if (trainer_.options().eval_mode == EvalMode::kNone) return;
    std::tie(final_valid_, final_test_) = trainer_.evaluate();
    evaluated_now_ = true;
  }
  std::map<std::string, double> progress() const override {
    const TrainSummary s = trainer_.summary();
    return {{kBestValid, s.best_valid_metric},
            {kTestAtBest, s.test_at_best_valid},
            {kBestEpoch, static_cast<double>(s.best_epoch)}};
  }
  void restore_progress(int64_t epochs_done, const std::map<std::string, double>& p) override {
    // Note [What a resume may change]: this run's learning rate, not the checkpoint's.
    set_learning_rate(trainer_.optimizer(), trainer_.options().optimizer.lr);
    trainer_.restore_progress(epochs_done, value_or(p, kBestValid, 0), value_or(p, kTestAtBest, 0),
                              static_cast<int64_t>(value_or(p, kBestEpoch, -1)));
  }

  // After each epoch, once its checkpoint is written.
  void report() const {
    if (on_epoch_) on_epoch_(last_, trainer_);
  }
  // The summary, with evaluate_now()'s metrics when it ran.
  TrainSummary summary() const {
    TrainSummary s = trainer_.summary();
    if (evaluated_now_) s.valid_metric = final_valid_, s.test_metric = final_test_;
    return s;
  }

 private:
  Trainer& trainer_;
  const ProcessGroup& group_;
  const GcnEpochCallback& on_epoch_;
  EpochReport last_;
  bool evaluated_now_ = false;
  double final_valid_ = 0, final_test_ = 0;
};

}  // namespace

nlohmann::json gcn_run_config(const TrainOptions& o, const GraphStore& store, const std::string& data_path,
                              int world_size, const PartitionManifest* partition) {
  nlohmann::json optimizer = optimizer_record(o.optimizer);
  optimizer["weight_decay_first_layer_only"] = o.weight_decay_first_layer_only;
  nlohmann::json config = {{"version", dgcn_version()},
                           {"seed", o.seed},
                           {"model",
                            {{"kind", "gcn"},  // complete_model_record names o.model
                             {"layers", o.fanouts.size()},
                             {"fanouts", o.fanouts},
                             {"hidden", o.hidden},
                             {"head", o.linear_head ? "linear" : "none"},
                             {"norm", gcn_norm_name(o.norm)},
                             {"dropout", o.dropout},
                             {"input_dropout", o.input_dropout},
                             {"normalize_features", o.normalize_features},
                             {"in_features", store.num_features},
                             {"num_classes", store.num_classes},
                             {"task", task_name(store.task)},
                             {"precision", precision_name(o.precision)}}},
                           {"optimizer", optimizer},
                           {"run",
                            {{"batch_size", o.batch_size},
                             {"world_size", world_size},
                             {"threads", o.compute_threads},
                             {"device", o.device.str()}}},
                           {"data",
                            {{"path", data_path},
                             {"digest", partition ? partition->source_digest
                                                  : content_digest(store, std::max(1, o.compute_threads))},
                             {"num_nodes", partition ? partition->num_nodes : store.num_nodes()}}}};
  complete_model_record(config["model"], o);
  if (partition) {
    // Under run.: how the run goes on may change on a resume (Note [What a resume may change]).
    config["run"]["seeds"] = seed_mode_name(o.seeds);
    config["run"]["partition"] = {
        {"id", partition->partition_id}, {"parts", partition->parts}, {"method", partition->method}};
  }
  return config;
}

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

GcnRunSummary train_gcn(const GraphStore& store, TrainOptions options, const GcnRunOptions& run,
                        ProcessGroup& group, const GcnEpochCallback& on_epoch) {
  // One process needs no gradient sync; the group still serves the checkpoints.
  const bool distributed = group.size() > 1;
  TORCH_CHECK(!distributed || options.device == group.device(), "train_gcn: the ",
              backend_name(group.backend()), " backend all-reduces tensors on ", group.device().str(),
              ", but training runs on ", options.device.str(),
              " (the nccl backend goes with a CUDA device, gloo with the CPU)");

  EpochRunOptions epochs;
  epochs.epochs = options.epochs;
  epochs.seed = options.seed;
  epochs.config = run.config.is_null()
                      ? gcn_run_config(options, store, run.data_path, group.size(), run.partition)
                      : run.config;
  DdpOptions ddp;
  ddp.replica_settings = replica_settings(epochs.config);
  epochs.checkpoint_dir = run.checkpoint_dir;
  epochs.resume = run.resume;
  epochs.checkpoint_every_batches = run.checkpoint_every_batches;

  // Note [Partitioned training]: the loader's exchanges get a process group
  // of their own (they run on its thread beside the training step's
  // all-reduces, see PartitionedGraph); the trainer's others use this one.
  std::unique_ptr<PartMap> map;
  std::unique_ptr<ProcessGroup> loader_group;
  PartitionedGraph parts;
  if (store.part.is_part()) {
    map = std::make_unique<PartMap>(store.part);
    loader_group = group.another("partitioned-loader");
    parts = {map.get(), loader_group.get()};
  }
  GcnRunSummary out;
  {
    DdpGradSync sync(group, ddp);
    // The group is the trainer's one handle to the other ranks, also for one
    // process (a group of one: rank 0 of 1, sums unchanged).
    Trainer trainer(store, options, distributed ? &sync : nullptr, &group, map ? &parts : nullptr);
    GcnEpochTask task(trainer, group, on_epoch);
    if (!run.start_gate.empty()) wait_at_start_gate(run.start_gate);
    const EpochRunResult result = run_epochs(task, epochs, group, [&](int64_t) { task.report(); });
    out.world_size = group.size();
    out.first_epoch = result.epochs_before + 1;
    out.checkpoint_wait_s = result.checkpoint_wait_s;
    out.config = epochs.config;
    out.train = task.summary();
  }  // the trainer's loader, which uses loader_group, has stopped
  if (loader_group) loader_group->shutdown();
  return out;
}

}  // namespace dgcn
