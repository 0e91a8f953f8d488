#include "train/predict.h"

#include <spdlog/spdlog.h>
#include <torch/torch.h>

#include <algorithm>
#include <numeric>
#include <set>
#include <unordered_map>

#include "base/error.h"
#include "datasets/npy.h"
#include "models/gcn.h"  // compute_dtype (Note [Mixed precision])
#include "models/gnn.h"
#include "models/inference.h"
#include "models/metrics.h"
#include "train/checkpoint.h"
#include "train/compute_features.h"
#include "train/evaluation_split.h"
#include "train/features.h"
#include "train/model_record.h"

namespace dgcn {
namespace {

template <class T>
T field(const nlohmann::json& config, const char* section, const char* key, const std::string& what) {
  const auto s = config.find(section);
  DGCN_CHECK(s != config.end() && s->is_object() && s->contains(key),
             "predict: checkpoint {} records no {}.{} (not written by dgcn-train?)", what, section, key);
  return (*s)[key].get<T>();
}

// The rows of `local` (this rank's slice [begin, begin + rows) of n) on
// rank 0, bit for bit: every rank adds its rows into zeros as integers.
at::Tensor gather_rows(const at::Tensor& local, int64_t begin, int64_t n, ProcessGroup& group) {
  const int64_t width = local.dim() == 2 ? local.size(1) : 1;
  at::Tensor all = at::zeros({n, width}, at::TensorOptions().dtype(at::kFloat));
  if (local.numel() > 0)
    all.narrow(0, begin, local.size(0)).copy_(local.reshape({local.size(0), width}).cpu());
  at::Tensor bits = all.view(at::kInt).to(group.device());
  group.allreduce_sum(bits).wait();
  at::Tensor out = bits.cpu().view(at::kFloat);
  return local.dim() == 2 ? out : out.reshape({n});
}

}  // namespace

std::vector<int64_t> resolve_nodes(const GraphStore& store, const std::string& spec) {
  const int64_t n = store.num_nodes();
  if (spec == "all") {
    std::vector<int64_t> all(static_cast<size_t>(n));
    std::iota(all.begin(), all.end(), 0);
    return all;
  }
  if (spec == "train") return {store.train_nodes().begin(), store.train_nodes().end()};
  if (spec == "valid") return {store.valid_nodes().begin(), store.valid_nodes().end()};
  if (spec == "test") return {store.test_nodes().begin(), store.test_nodes().end()};
  const NpyArray array = read_npy_file(spec);
  DGCN_CHECK(array.shape().size() == 1, "nodes {}: shape {}, expected a vector of node ids", spec,
             array.header.shape_string());
  const std::vector<int64_t> ids = to_int64(array, "nodes " + spec);
  std::unordered_map<int64_t, int64_t> of_source;
  if (!store.source_ids.empty()) {
    const auto src = store.source_ids.as<int64_t>();
    of_source.reserve(src.size());
    for (int64_t v = 0; v < n; ++v) of_source.emplace(src[static_cast<size_t>(v)], v);
  }
  std::vector<int64_t> out;
  out.reserve(ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    const int64_t id = ids[i];
    if (store.source_ids.empty()) {
      DGCN_CHECK(id >= 0 && id < n, "nodes {}: entry {} is node {}, not in the store's [0, {})", spec, i, id,
                 n);
      out.push_back(id);
    } else {
      auto it = of_source.find(id);
      DGCN_CHECK(it != of_source.end(), "nodes {}: entry {} is node {}, which the store does not hold", spec,
                 i, id);
      out.push_back(it->second);
    }
  }
  return out;
}

nlohmann::json predict(const GraphStore& store, const PredictOptions& o, ProcessGroup& group,
                       int compute_threads) {
  const std::set<std::string> allowed{"class", "probs", "logits", "embeddings"};
  DGCN_CHECK(!o.what.empty(), "predict: nothing to write (what is empty)");
  for (const auto& w : o.what) {
    DGCN_CHECK(allowed.count(w) > 0, "predict: '{}' is not an output (class, probs, logits, embeddings)", w);
  }
  auto wants = [&](const char* w) { return std::find(o.what.begin(), o.what.end(), w) != o.what.end(); };
  DGCN_CHECK(store.task != Task::kMultiLabel || !wants("class"),
             "predict: a multi-label model has no single class per node; ask for probs");

  auto checkpoint = read_checkpoint(o.checkpoint, group, /*prefer_best=*/true);
  TORCH_CHECK(checkpoint.has_value(), "predict: no checkpoint in ", o.checkpoint);
  const nlohmann::json& config = checkpoint->state.config;
  const std::string& what = checkpoint->what;
  // The model the checkpoint names (gcn, sage, gat), as it was trained.
  ModelOptions g = model_options_of_record(config, what);
  // Records from before model.precision were fp32 runs.
  const Precision trained = config["model"].contains("precision")
                                ? parse_precision(field<std::string>(config, "model", "precision", what))
                                : Precision::kFp32;
  g.precision = o.precision.value_or(trained);
  DGCN_CHECK(store.num_features == g.in_features, "predict: the model reads {} features, the store has {}",
             g.in_features, store.num_features);
  DGCN_CHECK(store.task == Task::kNone || store.num_classes == g.num_classes,
             "predict: the model has {} classes, the store {}", g.num_classes, store.num_classes);
  const std::string trained_on = field<std::string>(config, "data", "digest", what);
  const std::string digest = content_digest(store, compute_threads);
  if (trained_on != digest && group.rank() == 0) {
    spdlog::warn("predict: the store (digest {}) is not the one the model was trained on ({}, {})", digest,
                 trained_on, field<std::string>(config, "data", "path", what));
  }
  const int64_t deepest = g.linear_head ? g.num_layers : g.num_layers - 1;
  const int64_t layer = o.layer > 0 ? o.layer : deepest;
  DGCN_CHECK(!wants("embeddings") || (layer >= 1 && layer <= deepest),
             "predict: layer {} has no embeddings: this model's hidden layers are 1..{}{}", layer, deepest,
             deepest < 1 ? " (one layer and no head: none)" : "");

  GnnModelPtr model = make_model(g);
  restore_checkpoint(*checkpoint, *model, nullptr);
  model->to(o.device);

  // The inputs as training saw them.
  GraphStore inputs = store;
  inputs.features =
      input_features(store, field<bool>(config, "model", "normalize_features", what), compute_threads);
  // bf16: converted once, the float32 pages released (Note [Feature pages after conversion]).
  const at::Tensor model_features = compute_features(inputs.features, store.num_nodes(), store.num_features,
                                                     compute_dtype(g.precision), /*release_source=*/true);

  const std::vector<int64_t> nodes = resolve_nodes(store, o.nodes);
  const auto n = static_cast<int64_t>(nodes.size());
  const IndexRange slice = evaluation_slice(n, group.rank(), group.size());
  const std::span<const int64_t> mine = std::span<const int64_t>(nodes).subspan(
      static_cast<size_t>(slice.begin), static_cast<size_t>(slice.size()));
  InferenceOptions io;
  io.chunk_rows = o.chunk_rows;
  io.device = o.device;
  InferenceOutputs local;
  if (!mine.empty()) {
    local = full_neighbour_outputs(*model, inputs, model_features, mine, io, wants("embeddings") ? layer : 0);
  } else {
    local.logits = at::empty({0, g.num_classes});
    if (wants("embeddings")) local.embeddings = at::empty({0, model->layer_out_features(layer - 1)});
  }
  const at::Tensor logits = gather_rows(local.logits.cpu(), slice.begin, n, group);
  at::Tensor embeddings;
  if (wants("embeddings")) embeddings = gather_rows(local.embeddings.cpu(), slice.begin, n, group);
  if (group.rank() != 0) return nullptr;

  // The metric over the chosen nodes that have labels (Note [Unlabelled nodes]).
  nlohmann::json summary = {{"rows", n},
                            {"checkpoint", what},
                            {"epoch", checkpoint->state.epoch},
                            {"nodes", o.nodes},
                            {"precision", precision_name(g.precision)}};
  if (store.task != Task::kNone && n > 0) {
    const at::Tensor targets = targets_of(store, nodes);
    const MetricSums m = batch_metrics(store.task, logits, targets);
    summary[metric_name(store.task)] = m.value(store.task);
    summary["labelled"] = static_cast<int64_t>(m.count);
  }
  nlohmann::json files = nlohmann::json::array();
  auto write = [&](const std::string& name, DType dtype, const at::Tensor& t) {
    const std::string path = o.out + "." + name + ".npy";
    const at::Tensor c = t.contiguous();
    std::vector<int64_t> shape(c.sizes().begin(), c.sizes().end());
    write_npy(path, dtype, shape, c.data_ptr());
    files.push_back(path);
  };
  std::vector<int64_t> source(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) source[i] = store.source_id(nodes[i]);
  write("node_ids", DType::kInt64, torch::tensor(source, torch::kLong));
  if (wants("class")) write("class", DType::kInt64, logits.argmax(1).to(torch::kLong));
  if (wants("probs")) {
    write("probs", DType::kFloat32,
          store.task == Task::kMultiLabel ? torch::sigmoid(logits) : torch::softmax(logits, 1));
  }
  if (wants("logits")) write("logits", DType::kFloat32, logits);
  if (wants("embeddings")) {
    write("embeddings", DType::kFloat32, embeddings);
    summary["embedding_layer"] = layer;
  }
  summary["files"] = files;
  return summary;
}

}  // namespace dgcn
