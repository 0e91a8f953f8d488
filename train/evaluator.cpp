#include "train/evaluator.h"

#include <torch/torch.h>

#include "models/batch_tensors.h"
#include "models/inference.h"
#include "sampling/seed_partition.h"
#include "train/evaluation_split.h"

namespace dgcn {
namespace {

// The metric sums of rows [0, num_valid) and of the rest.
std::pair<MetricSums, MetricSums> valid_and_test(Task task, const at::Tensor& logits,
                                                 const at::Tensor& targets_cpu, int64_t num_valid) {
  const at::Tensor targets = targets_cpu.to(logits.device());
  const int64_t num_test = logits.size(0) - num_valid;
  return {batch_metrics(task, logits.narrow(0, 0, num_valid), targets.narrow(0, 0, num_valid)),
          batch_metrics(task, logits.narrow(0, num_valid, num_test), targets.narrow(0, num_valid, num_test))};
}

// The valid nodes, then the test nodes: one inference pass scores both
// (their lower layers overlap).
std::vector<int64_t> valid_then_test(std::span<const int64_t> valid, std::span<const int64_t> test) {
  std::vector<int64_t> both(valid.begin(), valid.end());
  both.insert(both.end(), test.begin(), test.end());
  return both;
}

}  // namespace

Evaluator::Evaluator(const GraphStore& store, at::Tensor features, const TrainOptions& options,
                     Collectives* ranks, const PartMap* parts)
    : store_(store), features_(std::move(features)), options_(options), ranks_(ranks), parts_(parts) {}

Evaluator::~Evaluator() = default;

std::pair<MetricSums, MetricSums> Evaluator::evaluate(GnnModel& model) {
  TORCH_CHECK(options_.eval_mode != EvalMode::kNone, "evaluate: evaluation is off (EvalMode::kNone)");
  if (parts_) return over_parts(model);
  if (options_.eval_mode == EvalMode::kFullNeighbour) return full_neighbour(model);
  return {sampled(model, slice(store_.valid_nodes())), sampled(model, slice(store_.test_nodes()))};
}

std::vector<int64_t> Evaluator::slice(std::span<const int64_t> nodes) const {
  const IndexRange r = evaluation_slice(static_cast<int64_t>(nodes.size()), ranks_ ? ranks_->rank() : 0,
                                        ranks_ ? ranks_->size() : 1);
  return {nodes.begin() + r.begin, nodes.begin() + r.end};
}

InferenceOptions Evaluator::inference_options() const {
  InferenceOptions io;
  io.chunk_rows = options_.eval_chunk_rows;
  io.device = options_.device;
  return io;
}

std::pair<MetricSums, MetricSums> Evaluator::full_neighbour(GnnModel& model) {
  const std::vector<int64_t> valid = slice(store_.valid_nodes());
  const std::vector<int64_t> both = valid_then_test(valid, slice(store_.test_nodes()));
  if (both.empty()) return {};
  const at::Tensor logits = full_neighbour_logits(model, store_, features_, both, inference_options());
  return valid_and_test(store_.task, logits, targets_of(store_, both), static_cast<int64_t>(valid.size()));
}

std::pair<MetricSums, MetricSums> Evaluator::over_parts(GnnModel& model) {
  // Each rank scores the valid and test nodes its part owns (collective:
  // every rank runs the inference, with or without nodes of its own).
  const auto valid = store_.valid_nodes();
  const std::vector<int64_t> both = valid_then_test(valid, store_.test_nodes());
  const at::Tensor logits = partitioned_full_neighbour_outputs(model, store_, *parts_, *ranks_, features_,
                                                               both, inference_options(), 0)
                                .logits;
  std::vector<int64_t> rows;
  rows.reserve(both.size());
  for (int64_t v : both) rows.push_back(parts_->row(v));
  return valid_and_test(store_.task, logits, targets_of(store_, rows), static_cast<int64_t>(valid.size()));
}

MetricSums Evaluator::sampled(GnnModel& model, std::span<const int64_t> nodes) {
  const TrainOptions& o = options_;
  if (!loader_) {
    loader_ = std::make_unique<NeighborLoader>(
        store_, loader_options(o.eval_fanouts.empty() ? o.fanouts : o.eval_fanouts, o),
        batch_allocator_for(o.device));
  }
  MetricSums sums;
  if (nodes.empty()) return sums;
  ShardOptions s;  // the caller already took this rank's share
  s.seed = o.seed;
  s.batch_size = o.eval_batch_size;
  s.shuffle = false;
  loader_->start_epoch(plan_epoch(nodes, s));
  torch::NoGradGuard no_grad;
  const bool was_training = model.is_training();
  model.eval();
  const BatchTensorOptions tensor_options{o.norm, o.device};
  while (auto batch = loader_->next()) {
    BatchTensors in = batch_tensors(*batch, store_, features_, model, tensor_options);
    sums.add(batch_metrics(store_.task, model.forward(in.blocks, in.x), in.y));
    loader_->recycle(std::move(*batch));
  }
  model.train(was_training);
  return sums;
}

}  // namespace dgcn
