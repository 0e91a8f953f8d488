// Losses and metrics of node classification, as sums that add up across
// batches and ranks: single-label tasks use cross-entropy and accuracy,
// multi-label tasks (e.g. AmazonProducts) BCE-with-logits and micro-F1
// (a class is predicted when its logit is > 0).
#pragma once

#include <ATen/core/Tensor.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "graph/graph_store.h"

namespace dgcn {

// Note [Unlabelled nodes]
// A single-label node may have no label (-1, as OGB's nan labels become).
// It counts nowhere: not in the loss, not in accuracy's denominator, not in
// the weighting of the epoch's loss, not in the average of the gradients
// over ranks (the trainer takes the union mean over labelled seeds, as one
// process on the union batch would). Multi-label rows are always labelled.

// Mean loss over the labelled rows: cross-entropy against int64 class ids
// [n] (single-label; -1 rows ignored) or BCE-with-logits against float
// {0, 1} [n x C] (multi-label). NaN when no row is labelled: see
// classification_loss_sum.
at::Tensor classification_loss(Task task, const at::Tensor& logits, const at::Tensor& targets);
// The sum of the per-row losses over the labelled rows (0 when none is).
at::Tensor classification_loss_sum(Task task, const at::Tensor& logits, const at::Tensor& targets);
// Rows with a label (single-label: target >= 0; multi-label: every row).
int64_t labelled_rows(Task task, const at::Tensor& targets);

struct MetricSums {
  double count = 0;               // labelled rows seen
  double correct = 0;             // single-label: argmax == label
  double tp = 0, fp = 0, fn = 0;  // multi-label, over every (row, class)
  double loss_sum = 0;            // loss x rows, when accumulated with a loss

  void add(const MetricSums& other);
  // The task's metric: accuracy (single-label) or micro-F1 (multi-label); 0 when empty.
  double value(Task task) const;
  double mean_loss() const { return count > 0 ? loss_sum / count : 0; }
  // Packs into / from doubles for a sum over ranks.
  std::vector<double> pack() const;
  static MetricSums unpack(std::span<const double> v);
};

// The metric counts of one batch (no gradient is recorded).
MetricSums batch_metrics(Task task, const at::Tensor& logits, const at::Tensor& targets);

// "acc" or "f1": the suffix of the metric's JSON keys (valid_acc, test_f1).
std::string metric_name(Task task);

// Targets of `nodes` from the store, in the form classification_loss takes.
at::Tensor targets_of(const GraphStore& store, std::span<const int64_t> nodes);
// Targets from label rows as the loader gathers them: int32 class ids
// (single-label) or label_row_bytes() bit rows (multi-label), one per row.
at::Tensor targets_from_rows(const GraphStore& store, std::span<const std::byte> rows, int64_t n);

}  // namespace dgcn
