#include "models/metrics.h"

#include <ATen/ATen.h>

#include <algorithm>
#include <cstring>

namespace dgcn {
namespace {

// Bit rows (LSB first, row_bytes per row) -> float {0, 1} [n x classes].
at::Tensor unpack_bits(const uint8_t* bits, int64_t n, int64_t classes, int64_t row_bytes) {
  at::Tensor out = at::empty({n, classes}, at::kFloat);
  float* p = out.data_ptr<float>();
  for (int64_t i = 0; i < n; ++i) {
    for (int64_t c = 0; c < classes; ++c) p[i * classes + c] = (bits[i * row_bytes + c / 8] >> (c % 8)) & 1;
  }
  return out;
}

}  // namespace

at::Tensor classification_loss(Task task, const at::Tensor& logits, const at::Tensor& targets) {
  TORCH_CHECK(task != Task::kNone, "loss: the store has no labels (task none)");
  // Unlabelled nodes (-1) carry no loss.
  if (task == Task::kSingleLabel) return at::cross_entropy_loss(logits, targets, {}, at::Reduction::Mean, -1);
  return at::binary_cross_entropy_with_logits(logits, targets);
}

at::Tensor classification_loss_sum(Task task, const at::Tensor& logits, const at::Tensor& targets) {
  TORCH_CHECK(task != Task::kNone, "loss: the store has no labels (task none)");
  if (task == Task::kSingleLabel) return at::cross_entropy_loss(logits, targets, {}, at::Reduction::Sum, -1);
  // Per row: the mean over its classes, as the mean loss counts it.
  return at::binary_cross_entropy_with_logits(logits, targets, {}, {}, at::Reduction::Sum) /
         static_cast<double>(std::max<int64_t>(1, logits.size(1)));
}

int64_t labelled_rows(Task task, const at::Tensor& targets) {
  if (task != Task::kSingleLabel) return targets.size(0);
  return targets.ge(0).sum().item<int64_t>();
}

void MetricSums::add(const MetricSums& o) {
  count += o.count;
  correct += o.correct;
  tp += o.tp;
  fp += o.fp;
  fn += o.fn;
  loss_sum += o.loss_sum;
}

double MetricSums::value(Task task) const {
  if (task == Task::kMultiLabel) {
    const double denom = 2 * tp + fp + fn;
    return denom > 0 ? 2 * tp / denom : 0;
  }
  return count > 0 ? correct / count : 0;
}

std::vector<double> MetricSums::pack() const {
  return {count, correct, tp, fp, fn, loss_sum};
}

MetricSums MetricSums::unpack(std::span<const double> v) {
  TORCH_CHECK(v.size() == 6, "metrics: expected 6 packed values, got ", v.size());
  MetricSums m;
  m.count = v[0], m.correct = v[1], m.tp = v[2], m.fp = v[3], m.fn = v[4], m.loss_sum = v[5];
  return m;
}

MetricSums batch_metrics(Task task, const at::Tensor& logits_in, const at::Tensor& targets_in) {
  at::NoGradGuard no_grad;
  const at::Tensor logits = logits_in.detach();
  MetricSums m;
  if (task == Task::kMultiLabel) {
    m.count = static_cast<double>(logits.size(0));
    const at::Tensor pred = logits > 0;
    const at::Tensor truth = targets_in.to(logits.device()) > 0.5;
    m.tp = static_cast<double>((pred & truth).sum().item<int64_t>());
    m.fp = static_cast<double>((pred & ~truth).sum().item<int64_t>());
    m.fn = static_cast<double>((~pred & truth).sum().item<int64_t>());
  } else {
    // Note [Unlabelled nodes]: rows labelled -1 count nowhere.
    const at::Tensor targets = targets_in.to(logits.device());
    const at::Tensor labelled = targets.ge(0);
    m.count = static_cast<double>(labelled.sum().item<int64_t>());
    m.correct = static_cast<double>(((logits.argmax(1) == targets) & labelled).sum().item<int64_t>());
  }
  return m;
}

std::string metric_name(Task task) {
  return task == Task::kMultiLabel ? "f1" : "acc";
}

at::Tensor targets_of(const GraphStore& store, std::span<const int64_t> nodes) {
  const auto n = static_cast<int64_t>(nodes.size());
  if (store.task == Task::kSingleLabel) {
    at::Tensor t = at::empty({n}, at::kLong);
    int64_t* p = t.data_ptr<int64_t>();
    for (int64_t i = 0; i < n; ++i) p[i] = store.label(nodes[static_cast<size_t>(i)]);
    return t;
  }
  TORCH_CHECK(store.task == Task::kMultiLabel, "targets: the store has no labels (task none)");
  const int64_t rb = store.label_row_bytes();
  std::vector<uint8_t> rows(static_cast<size_t>(n * rb));
  const auto all = store.labels.as<uint8_t>();
  for (int64_t i = 0; i < n; ++i) {
    std::copy_n(all.begin() + nodes[static_cast<size_t>(i)] * rb, rb, rows.begin() + i * rb);
  }
  return unpack_bits(rows.data(), n, store.num_classes, rb);
}

at::Tensor targets_from_rows(const GraphStore& store, std::span<const std::byte> rows, int64_t n) {
  if (store.task == Task::kSingleLabel) {
    TORCH_CHECK(static_cast<int64_t>(rows.size()) >= 4 * n, "targets: ", rows.size(), " label bytes for ", n,
                " rows");
    at::Tensor t = at::empty({n}, at::kLong);
    int64_t* p = t.data_ptr<int64_t>();
    for (int64_t i = 0; i < n; ++i) {
      int32_t label = 0;
      std::memcpy(&label, rows.data() + i * 4, 4);
      p[i] = label;
    }
    return t;
  }
  TORCH_CHECK(store.task == Task::kMultiLabel, "targets: the store has no labels (task none)");
  const int64_t rb = store.label_row_bytes();
  TORCH_CHECK(static_cast<int64_t>(rows.size()) >= rb * n, "targets: ", rows.size(), " label bytes for ", n,
              " rows of ", rb);
  return unpack_bits(reinterpret_cast<const uint8_t*>(rows.data()), n, store.num_classes, rb);
}

}  // namespace dgcn
