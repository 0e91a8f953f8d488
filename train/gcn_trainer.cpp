// See Note [Training step] in trainer.h.
#include "train/gcn_trainer.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <optional>

#include "base/error.h"
#include "base/random.h"
#include "base/timing.h"
#include "models/batch_tensors.h"
#include "sampling/loader.h"
#include "train/compute_features.h"
#include "train/evaluator.h"
#include "train/features.h"
#include "train/model_record.h"
#include "train/training_seeds.h"

namespace dgcn {
namespace {

// Note [Input gather]: whether training batches come without feature rows.
bool input_from_store(const TrainOptions& o) {
  return o.input_from_store && !o.device.is_cuda() && o.input_dropout == 0;
}

// Separates the dropout generator's seeds from the sampler's streams.
constexpr uint64_t kDropoutStream = 0xd209047ULL;

// Whether epoch index `epoch` ends with an evaluation: every eval_every
// epochs and the last one.
bool evaluation_due(const TrainOptions& o, int64_t epoch) {
  return o.eval_mode != EvalMode::kNone && ((epoch + 1) % o.eval_every == 0 || epoch + 1 == o.epochs);
}

// What the loader exchanged between two readings of its counters, as
// float64s to sum over ranks (exchanged_between), and back (exchange_of).
std::vector<double> exchanged_between(const ExchangeCounters& before, const ExchangeCounters& after) {
  return {static_cast<double>(after.id_bytes - before.id_bytes),
          static_cast<double>(after.pick_bytes - before.pick_bytes),
          static_cast<double>(after.feature_bytes - before.feature_bytes),
          static_cast<double>(after.exchanges - before.exchanges), after.seconds - before.seconds};
}
ExchangeCounters exchange_of(const std::vector<double>& x) {
  return {static_cast<int64_t>(x[0]), static_cast<int64_t>(x[1]), static_cast<int64_t>(x[2]),
          static_cast<int64_t>(x[3]), x[4]};
}

}  // namespace

struct Trainer::Impl {
  std::optional<TrainingSeeds> seeds;
  std::unique_ptr<PartitionedBatchProducer>
      producer;  // a partitioned graph's batches; before the loader using it
  std::unique_ptr<NeighborLoader> loader;
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  at::Tensor features;  // the input features (no copy): evaluation, Note [Input gather]
  std::unique_ptr<Evaluator> evaluator;
};

Trainer::Trainer(const GraphStore& store, TrainOptions options, GradSync* sync, Collectives* ranks,
                 const PartitionedGraph* partitioned)
    : options_(std::move(options)),
      store_(store),
      sync_(sync),
      ranks_(ranks),
      impl_(std::make_unique<Impl>()) {
  const TrainOptions& o = options_;
  partitioned_ = partitioned;
  DGCN_CHECK(
      store.part.is_part() == (partitioned != nullptr), "train: {}",
      store.part.is_part()
          ? fmt::format("the store is part {} of {} of a partitioned graph: train on the partition's folder "
                        "(--data DIR, one rank per part), not on one part file",
                        store.part.index, store.part.count)
          : std::string("exchanges are for a part of a partitioned graph"));
  DGCN_CHECK(store.task != Task::kNone, "train: the store has no labels (task none); nothing to train on");
  DGCN_CHECK(store.num_features > 0, "train: the store has no features");
  DGCN_CHECK(!o.fanouts.empty(), "train: needs at least one fanout (one per GCN layer)");
  DGCN_CHECK(
      o.epochs >= 0 && o.batch_size >= 1 && o.max_batches >= 0 && o.eval_every >= 1 && o.eval_batch_size >= 1,
      "train: epochs {}, batch size {}, max batches {}, eval every {}, eval batch size {}: expected >= 0, >= "
      "1, "
      ">= 0, >= 1, >= 1",
      o.epochs, o.batch_size, o.max_batches, o.eval_every, o.eval_batch_size);
  ShardOptions shard;
  shard.seed = o.seed;
  shard.rank = rank();
  shard.world_size = world_size();
  shard.batch_size = o.batch_size;
  if (!partitioned) impl_->seeds = TrainingSeeds::of_store(store, shard);
  DGCN_CHECK(o.eval_fanouts.empty() || o.eval_fanouts.size() == o.fanouts.size(),
             "train: {} evaluation fanouts for {} layers", o.eval_fanouts.size(), o.fanouts.size());
  torch::manual_seed(o.seed);
  model_ = make_model(model_options(o, store_));
  model_->to(o.device);
  if (sync_) sync_->attach(*model_);
  // After attach: its replica check has made sure every rank agrees on the
  // settings before the ranks' first collectives of their own.
  if (partitioned) {
    DGCN_CHECK(partitioned->map != nullptr && partitioned->loader_exchange != nullptr && ranks_ != nullptr,
               "train: a partitioned graph needs the owner map, the loader's exchange and the ranks' "
               "Collectives");
    DGCN_CHECK(world_size() == store_.part.count && rank() == store_.part.index,
               "train: rank {} of {} holds part {} of {}; a partitioned graph trains with one rank per part",
               rank(), world_size(), store_.part.index, store_.part.count);
    DGCN_CHECK(
        o.eval_mode != EvalMode::kSampled,
        "train: --eval sampled is not available on a partitioned graph; use --eval full (layer-wise over the "
        "parts) or none");
    impl_->seeds = TrainingSeeds::of_parts(store_, *partitioned->map, *ranks_, o.seeds, shard);
  }
  store_.features =
      input_features(store, o.normalize_features, compute_threads_of(o), partitioned ? ranks_ : nullptr);
  // Note [Mixed precision]: the rows the first layer and evaluation read,
  // converted once (half the bytes every batch reads from the store). The
  // float32 pages are released when nothing else reads them (Note [Feature
  // pages after conversion]): the loader gathers from the store only
  // without input_from_store, a partitioned producer always.
  impl_->features =
      compute_features(store_.features, store_.num_nodes(), store_.num_features, compute_dtype(o.precision),
                       /*release_source=*/!partitioned && input_from_store(o));
  impl_->optimizer = make_optimizer_decaying(
      o.optimizer, model_->parameters(),
      o.weight_decay_first_layer_only ? model_->layer_parameters(0) : std::vector<at::Tensor>{});
  impl_->evaluator = std::make_unique<Evaluator>(store_, impl_->features, options_, ranks_,
                                                 partitioned ? partitioned->map : nullptr);
  if (partitioned) {
    // Note [Partitioned training]: one worker, so this rank's exchanges run in plan order.
    impl_->producer = std::make_unique<PartitionedBatchProducer>(
        store_, *partitioned->map, *partitioned->loader_exchange, loader_options(o.fanouts, o).sampler,
        /*gather_features=*/true);
    LoaderOptions l = loader_options(o.fanouts, o);
    l.num_workers = 1;
    impl_->loader =
        std::make_unique<NeighborLoader>(store_, l, batch_allocator_for(o.device), impl_->producer.get());
  } else {
    impl_->loader = std::make_unique<NeighborLoader>(
        store_, loader_options(o.fanouts, o, !input_from_store(o)), batch_allocator_for(o.device));
  }
  summary_.metric = metric_name(store_.task);
}

Trainer::~Trainer() = default;

std::vector<double> Trainer::sum_over_ranks(std::vector<double> values) {
  return ranks_ ? ranks_->sum(std::move(values)) : values;
}

std::vector<std::vector<double>> Trainer::gather_over_ranks(const std::vector<double>& values) {
  return ranks_ ? all_gather(*ranks_, values) : std::vector<std::vector<double>>{values};
}

std::vector<double> Trainer::mid_epoch_state() {
  std::vector<double> all;
  for (const auto& theirs : gather_over_ranks(epoch_sums_.pack()))
    all.insert(all.end(), theirs.begin(), theirs.end());
  return all;
}

EpochReport Trainer::train_epoch(int64_t epoch, const std::function<void(int64_t, int64_t)>& progress,
                                 const EpochStart* start, const AfterBatch& after_batch) {
  const TrainOptions& o = options_;
  const BatchTensorOptions tensor_options{o.norm, o.device};
  model_->train();
  EpochPlan plan = impl_->seeds->plan(epoch);
  const int64_t num_batches =
      o.max_batches > 0 ? std::min(plan.num_batches, o.max_batches) : plan.num_batches;
  // The partitioned loader samples with the other ranks: it must make
  // exactly the batches every rank trains, no more.
  if (partitioned_) plan.num_batches = num_batches;
  const ExchangeCounters exchange_before = impl_->producer ? impl_->producer->counters() : ExchangeCounters{};
  EpochReport r;
  r.epoch = epoch + 1;
  MetricSums sums;
  if (start) {
    sums = resumed_sums(*start, epoch, num_batches);
    r.batches = start->batches;
  }
  impl_->loader->start_epoch(std::move(plan), r.batches);
  const auto epoch_start = Clock::now();
  const ProcessUsage usage_start = process_usage();
  auto last_progress = epoch_start;
  for (;;) {
    if (r.batches == num_batches) break;  // with max_batches, the next start_epoch drops the rest
    auto t = Clock::now();
    std::optional<LoadedBatch> batch = impl_->loader->next();
    r.sampling_wait_s += seconds_since(t);
    if (!batch) break;

    t = Clock::now();
    BatchTensors in = batch_tensors(*batch, store_, impl_->features, *model_, tensor_options);
    r.other_s += seconds_since(t);

    t = Clock::now();
    // Note [Trainer randomness]: the dropout masks of this batch and rank.
    torch::manual_seed(stream_key(o.seed, {kDropoutStream, static_cast<uint64_t>(epoch),
                                           static_cast<uint64_t>(r.batches), static_cast<uint64_t>(rank())}));
    impl_->optimizer->zero_grad();
    at::Tensor logits = model_->forward(in.blocks, in.x);
    auto [loss, loss_value] = batch_loss(logits, in);
    DGCN_CHECK(
        std::isfinite(loss_value),
        "training: the loss became {} in epoch {}, batch {} of {} (diverged: a lower learning rate may "
        "help); stopping before the step, so the checkpoints written so far stay good",
        loss_value, epoch + 1, r.batches + 1, num_batches);
    loss.backward();
    if (sync_) sync_->finish_backward();
    impl_->optimizer->step();
    r.compute_s += seconds_since(t);

    t = Clock::now();
    MetricSums m = batch_metrics(store_.task, logits, in.y);
    m.loss_sum = loss_value * m.count;
    sums.add(m);
    ++r.batches;
    impl_->loader->recycle(std::move(*batch));  // its vectors are reused; x keeps the rows alive while needed
    batch.reset();
    if (after_batch) {
      epoch_sums_ = sums;
      after_batch(r.batches, num_batches);  // e.g. an in-epoch checkpoint: its time counts as other
    }
    if (progress && seconds_since(last_progress) >= 2.0) {
      progress(r.batches, num_batches);
      last_progress = Clock::now();
    }
    r.other_s += seconds_since(t);
  }
  r.epoch_s = seconds_since(epoch_start);
  r.usage = process_usage() - usage_start;
  r.end_time = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  if (ranks_) sums = MetricSums::unpack(sum_over_ranks(sums.pack()));
  r.loss = sums.mean_loss();
  r.train_metric = sums.value(store_.task);
  if (impl_->producer) {
    r.partitioned = true;
    r.exchange = exchange_of(sum_over_ranks(exchanged_between(exchange_before, impl_->producer->counters())));
  }
  if (evaluation_due(o, epoch)) evaluate_epoch(r);
  record_epoch(r);
  return r;
}

MetricSums Trainer::resumed_sums(const EpochStart& start, int64_t epoch, int64_t num_batches) const {
  // Note [In-epoch checkpoints]: this rank's sums so far, then the next batch.
  const size_t per_rank = MetricSums{}.pack().size();
  DGCN_CHECK(start.state.size() % per_rank == 0 &&
                 start.state.size() / per_rank == static_cast<size_t>(world_size()),
             "train: the in-epoch checkpoint was written by a run on {} rank(s); it resumes only on as many "
             "(this run has {})",
             start.state.size() / per_rank, world_size());
  DGCN_CHECK(start.batches >= 0 && start.batches <= num_batches,
             "train: the in-epoch checkpoint is after batch {}, but epoch {} has {} batches per rank",
             start.batches, epoch + 1, num_batches);
  return MetricSums::unpack(std::span<const double>(start.state).subspan(per_rank * rank(), per_rank));
}

std::pair<at::Tensor, double> Trainer::batch_loss(const at::Tensor& logits, const BatchTensors& in) {
  if (!impl_->seeds->union_mean_loss()) {
    at::Tensor loss = classification_loss(store_.task, logits, in.y);
    return {loss, loss.item<double>()};
  }
  // Note [Unlabelled nodes]: the union mean over the labelled seeds of
  // every rank. DDP averages the ranks' gradients, so each rank's loss is
  // its sum scaled by world_size / (labelled seeds on all ranks).
  const std::vector<double> labelled = sum_over_ranks({static_cast<double>(in.labelled)});
  const at::Tensor sum = classification_loss_sum(store_.task, logits, in.y);
  return {labelled[0] > 0 ? sum * (world_size() / labelled[0]) : logits.sum() * 0.0,
          in.labelled > 0 ? sum.item<double>() / static_cast<double>(in.labelled) : 0.0};
}

void Trainer::evaluate_epoch(EpochReport& r) {
  if (ranks_) ranks_->barrier();  // every rank has finished training the epoch
  const auto t = Clock::now();
  std::tie(r.valid_metric, r.test_metric) = evaluate();
  r.eval_s = seconds_since(t);
}

void Trainer::record_epoch(const EpochReport& r) {
  improved_ = false;
  CurvePoint point{r.epoch, r.loss, r.train_metric, 0, 0, false};
  if (r.valid_metric) {
    const double valid = *r.valid_metric, test = *r.test_metric;
    point.valid = valid, point.test = test, point.evaluated = true;
    summary_.valid_metric = valid;
    summary_.test_metric = test;
    if (summary_.best_epoch < 0 || valid > summary_.best_valid_metric) {
      summary_.best_valid_metric = valid;
      summary_.test_at_best_valid = test;
      summary_.best_epoch = r.epoch;
      improved_ = true;
    }
  }
  curve_.push_back(point);
  summary_.epochs = r.epoch;  // epochs done
  summary_.train_s += r.epoch_s;
  summary_.eval_s += r.eval_s;
}

std::pair<double, double> Trainer::evaluate() {
  auto [v, t] = impl_->evaluator->evaluate(*model_);
  if (ranks_) {
    std::vector<double> packed = v.pack();
    const std::vector<double> pt = t.pack();
    packed.insert(packed.end(), pt.begin(), pt.end());
    packed = sum_over_ranks(std::move(packed));
    v = MetricSums::unpack(std::span<const double>(packed).first(6));
    t = MetricSums::unpack(std::span<const double>(packed).subspan(6));
  }
  return {v.value(store_.task), t.value(store_.task)};
}

torch::optim::Optimizer& Trainer::optimizer() {
  return *impl_->optimizer;
}

void Trainer::restore_progress(int64_t epochs_done, double best_valid_metric, double test_at_best_valid,
                               int64_t best_epoch) {
  TORCH_CHECK(epochs_done >= 0 && (best_epoch < 0 || (best_epoch >= 1 && best_epoch <= epochs_done)),
              "restore_progress: best epoch ", best_epoch, " of ", epochs_done, " epochs done");
  summary_.epochs = epochs_done;
  summary_.best_epoch = best_epoch;
  summary_.best_valid_metric = best_epoch >= 0 ? best_valid_metric : 0;
  summary_.test_at_best_valid = best_epoch >= 0 ? test_at_best_valid : 0;
}

TrainSummary Trainer::summary() const {
  TrainSummary s = summary_;
  s.param_digest = param_digest(*model_);
  return s;
}

}  // namespace dgcn
