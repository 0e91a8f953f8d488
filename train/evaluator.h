// How a run scores its model on the valid and test nodes
// (TrainOptions::eval_mode), each rank its share:
//   - kFullNeighbour: layer-wise full-neighbour inference (exact,
//     models/inference.h) over one pass for both sets; each rank scores its
//     slice of them (train/evaluation_split.h);
//   - kSampled: the sampled forward pass over batches of each rank's slice;
//   - on a partitioned graph: layer-wise inference over the parts, each rank
//     scoring the valid and test nodes its part owns (collective).
// The caller sums the ranks' MetricSums; the metric is then exactly one
// process's on the same weights.
//
//   Evaluator evaluator(store, features, options, ranks, parts);
//   auto [valid, test] = evaluator.evaluate(model);     // this rank's sums
#pragma once

#include <ATen/core/Tensor.h>

#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "graph/graph_store.h"
#include "models/gnn.h"
#include "models/inference.h"
#include "models/metrics.h"
#include "sampling/loader.h"
#include "train/train_options.h"

namespace dgcn {

class Evaluator {
 public:
  // `store` (the model's input store) and `features` (its [nodes x F]
  // float32 features as a tensor) must outlive the evaluator; so must
  // `ranks` (whose rank and size choose this rank's slice; nullptr: one
  // process) and `parts`, the owner map, given on a part of a partitioned
  // graph (evaluated over `ranks`).
  Evaluator(const GraphStore& store, at::Tensor features, const TrainOptions& options, Collectives* ranks,
            const PartMap* parts);
  ~Evaluator();

  // This rank's metric sums of the valid and the test nodes under `model`
  // as it is (eval mode, no gradients; the model's mode is restored).
  // Collective on a partitioned graph. Throws c10::Error with kNone.
  std::pair<MetricSums, MetricSums> evaluate(GnnModel& model);

 private:
  std::vector<int64_t> slice(std::span<const int64_t> nodes) const;
  InferenceOptions inference_options() const;
  std::pair<MetricSums, MetricSums> full_neighbour(GnnModel& model);
  std::pair<MetricSums, MetricSums> over_parts(GnnModel& model);
  MetricSums sampled(GnnModel& model, std::span<const int64_t> nodes);

  const GraphStore& store_;
  const at::Tensor features_;
  const TrainOptions& options_;
  Collectives* ranks_;
  const PartMap* parts_;
  std::unique_ptr<NeighborLoader> loader_;  // kSampled, built on first use
};

}  // namespace dgcn
